"""Floating-point tolerances derived from error bounds, so that a test passes on every machine.

Two correct computations of the same quantity agree only up to their rounding errors, and those
depend on the order of the operations, which a BLAS chooses by CPU kernel, thread count and load
(tests/test_blas_setups.py runs the reference tests under several). A tolerance of one unit in
the last place passes on the machine it was written on and fails on the next one. So every
tolerance below 1e-12 in the suite comes from here, with the bound it rests on (Higham,
*Accuracy and Stability of Numerical Algorithms*, 2nd ed., SIAM 2002, chapters 3 and 4):

- ``U``: the unit roundoff of float64, 2^-53 (half of numpy's ``eps``). One correctly rounded
  operation (+, -, *, /, sqrt) has relative error at most U; libm's exp, log, log1p, expm1 on
  glibc, macOS and Windows are within 1 ulp (2U).
- ``few_ops(k)``: a closed form evaluated in at most k such operations on exact or correctly
  rounded inputs has relative error at most about k * 2U (first order, no cancellation). Used
  where a test compares with a value derived by hand from a small example.
- ``sum_rtol(n)``: any summation order of n terms (recursive, pairwise, blocked as in a BLAS)
  has absolute error at most gamma_{n-1} * sum |x_i|, gamma_k = k U / (1 - k U) (Higham 4.3);
  two different orders therefore differ by at most twice that. Relative to the result, this is
  the tolerance when all terms have one sign (sum |x_i| = |sum x_i|); otherwise compare with
  ``atol = sum_atol(n, magnitude)``.
- ``exact_sum`` / ``exact_mean``: correctly rounded references (``math.fsum``), for claims such as
  "accurate far from zero", where the computation under test is judged against the true value
  rather than against another rounded computation.
"""

from __future__ import annotations

import math

import numpy as np

#: The test modules of the reference implementations: run with one and two BLAS threads
#: (conftest.py) and under other CPU kernels (test_blas_setups.py).
REFERENCE_TEST_MODULES = frozenset({
    "test_base", "test_bayes", "test_gda", "test_information", "test_logistic", "test_mle",
    "test_naive_bayes", "test_regularization", "test_validation",
})

#: Unit roundoff of float64: 2**-53 (numpy's eps is 2**-52 = 2 U).
U = float(np.finfo(np.float64).eps) / 2


def gamma(k: int) -> float:
    """Higham's gamma_k = k U / (1 - k U): the bound of k successive roundings."""
    return k * U / (1 - k * U)


def few_ops(k: int = 8) -> float:
    """Relative tolerance for a value computed in at most ``k`` rounded operations (or libm
    calls, each within 1 ulp) from exact inputs, against its exact value: 2 * gamma(k), i.e.
    each operation is allowed a whole ulp. The default, 8 operations, is about 1.8e-15."""
    return 2 * gamma(k)


def sum_rtol(n: int) -> float:
    """Relative tolerance between two summations of the same ``n`` same-signed terms in
    different orders: 2 * gamma(n - 1), e.g. 4.4e-13 for n = 2 000."""
    return 2 * gamma(max(n - 1, 1))


def sum_atol(n: int, magnitude: float) -> float:
    """Absolute tolerance between two summations of ``n`` terms whose absolute values add up
    to ``magnitude`` (sum |x_i|): 2 * gamma(n - 1) * magnitude."""
    return sum_rtol(n) * magnitude


def exact_sum(x, axis: int = 0) -> np.ndarray:
    """The correctly rounded sum along ``axis`` (math.fsum of each slice)."""
    x = np.asarray(x, dtype=float)
    return np.apply_along_axis(math.fsum, axis, x)


def exact_mean(x, axis: int = 0) -> np.ndarray:
    """The mean along ``axis`` from the correctly rounded sum: one more rounding (the
    division), so within U of the true mean."""
    x = np.asarray(x, dtype=float)
    return exact_sum(x, axis) / x.shape[axis]
