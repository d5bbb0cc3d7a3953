"""Maximum-likelihood estimation: coins, Gaussians and linear regression.

Reference implementations for the chapter "Maximum likelihood". Every estimate here is the
maximiser of a likelihood, so variances and covariances divide by N (not N - 1) and the
Laplace scale is the mean absolute residual.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike
from scipy import optimize, sparse
from scipy.special import xlog1py, xlogy

from ._validation import (
    FloatArray,
    as_1d_float_array,
    as_2d_float_array,
    as_binary_array,
    as_float,
    check_same_length,
)

__all__ = [
    "sequence_likelihood",
    "bernoulli_mle",
    "bernoulli_log_likelihood",
    "gaussian_mle",
    "gaussian_log_likelihood",
    "mvn_mle",
    "linear_regression_mle",
    "laplace_regression_mle",
]


def _count_flips(flips):
    """Return (N_H, N_T) of a string or list of 'H'/'T', rejecting anything else."""
    if isinstance(flips, bytes):
        raise TypeError("flips must be a str or a list of 'H'/'T', got bytes")
    if isinstance(flips, str):
        symbols = list(flips)
    else:
        try:
            symbols = list(flips)
        except TypeError:
            raise TypeError(
                f"flips must be a str or a list of 'H'/'T', got {type(flips).__name__}"
            ) from None
    bad = [s for s in symbols if not (isinstance(s, str) and s in ("H", "T"))]
    if bad:
        raise ValueError(f"flips may contain only 'H' and 'T', found {bad[0]!r}")
    n_heads = sum(1 for s in symbols if s == "H")
    return n_heads, len(symbols) - n_heads


def sequence_likelihood(flips: str | Sequence[str], p_heads: float) -> float:
    """Probability of a sequence of coin flips under i.i.d. Bernoulli(p_heads).

    p(flips) = p_heads^N_H (1 - p_heads)^N_T, where N_H and N_T count the heads and tails.
    The flips are independent, so the order does not matter, only the counts. The empty
    sequence has probability 1.

    Parameters
    ----------
    flips : str or list of str
        A string such as ``"HTHH"`` or a list such as ``["H", "T"]``; only 'H' and 'T'.
    p_heads : float
        Probability of heads, in [0, 1].

    Returns
    -------
    float

    See the chapter "Maximum likelihood", section "Two coins".
    """
    n_heads, n_tails = _count_flips(flips)
    p = as_float(p_heads, "p_heads", low=0.0, high=1.0)
    # Python's 0.0 ** 0 == 1.0, which is the 0 log 0 = 0 convention in product form.
    return float(p**n_heads * (1.0 - p) ** n_tails)


def bernoulli_mle(x: ArrayLike) -> float:
    """Maximum-likelihood estimate of a Bernoulli parameter.

    theta_hat = N_H / N = (1/N) sum_i x_i, the fraction of ones.

    Parameters
    ----------
    x : array_like, shape (N,)
        Binary data (0/1 or booleans), N >= 1.

    Returns
    -------
    theta : float

    See the chapter "Maximum likelihood", section "The Bernoulli maximum-likelihood estimate".
    """
    x = as_binary_array(x, "x", ndim=1, min_size=1)
    return float(x.mean())


def bernoulli_log_likelihood(theta: float, x: ArrayLike) -> float:
    """Log-likelihood of binary data under Bernoulli(theta).

    l(theta) = N_H log(theta) + N_T log(1 - theta), with the convention 0 log 0 = 0:
    theta = 1 and no tails gives 0.0, theta = 1 with a tail gives -inf (likewise for
    theta = 0 and heads). Computed with ``scipy.special.xlogy``/``xlog1py``, which implement
    that convention.

    Parameters
    ----------
    theta : float
        In [0, 1].
    x : array_like, shape (N,)
        Binary data (0/1 or booleans). Empty data gives 0.0.

    Returns
    -------
    float

    See the chapter "Maximum likelihood", section "The Bernoulli maximum-likelihood estimate".
    """
    theta = as_float(theta, "theta", low=0.0, high=1.0)
    x = as_binary_array(x, "x", ndim=1)
    n_heads = float(x.sum())
    n_tails = float(x.size) - n_heads
    with np.errstate(divide="ignore"):
        return float(xlogy(n_heads, theta) + xlog1py(n_tails, -theta))


def gaussian_mle(x: ArrayLike) -> tuple[float, float]:
    """Maximum-likelihood mean and variance of a univariate Gaussian.

    mu = (1/N) sum_i x_i and sigma2 = (1/N) sum_i (x_i - mu)^2. The variance divides by N,
    not N - 1: it maximises the likelihood and is biased (its expectation is
    (N - 1)/N times the true variance). One sample gives variance 0.

    Parameters
    ----------
    x : array_like, shape (N,)
        N >= 1 finite values.

    Returns
    -------
    mu, sigma2 : float

    See the chapter "Maximum likelihood", section "The Gaussian".
    """
    x = as_1d_float_array(x, "x", min_size=1)
    mu = float(x.mean())
    return mu, float(np.mean((x - mu) ** 2))


def gaussian_log_likelihood(x: ArrayLike, mu: float, sigma2: float) -> float:
    """Total log density of the data under N(mu, sigma2).

    sum_i log N(x_i | mu, sigma2) = -(N/2) log(2 pi sigma2) - sum_i (x_i - mu)^2 / (2 sigma2).

    Parameters
    ----------
    x : array_like, shape (N,)
    mu : float
    sigma2 : float
        The variance (not the standard deviation), > 0.

    Returns
    -------
    float

    See the chapter "Maximum likelihood", section "The Gaussian".
    """
    x = as_1d_float_array(x, "x")
    mu = as_float(mu, "mu")
    sigma2 = as_float(sigma2, "sigma2", low=0.0, low_open=True)
    n = x.size
    return float(-0.5 * n * np.log(2.0 * np.pi * sigma2) - np.sum((x - mu) ** 2) / (2.0 * sigma2))


def mvn_mle(X: ArrayLike) -> tuple[FloatArray, FloatArray]:
    """Maximum-likelihood mean and covariance of a multivariate Gaussian.

    mu = (1/N) sum_i x_i and Sigma = (1/N) sum_i (x_i - mu)(x_i - mu)^T: the empirical
    covariance, dividing by N (``np.cov(X, rowvar=False, bias=True)``), not N - 1.

    Parameters
    ----------
    X : array_like, shape (N, D)
        N >= 1 rows.

    Returns
    -------
    mu : ndarray, shape (D,)
    Sigma : ndarray, shape (D, D)
        Symmetric positive semi-definite (singular when N <= D).

    See the chapter "Maximum likelihood", section "The multivariate Gaussian".
    """
    X = as_2d_float_array(X, "X", min_rows=1)
    mu = X.mean(axis=0)
    Xc = X - mu
    Sigma = Xc.T @ Xc / X.shape[0]
    return mu, 0.5 * (Sigma + Sigma.T)


def _regression_inputs(X, y):
    X = as_2d_float_array(X, "X", min_rows=1)
    y = as_1d_float_array(y, "y", min_size=1)
    check_same_length(X, y)
    return X, y


def linear_regression_mle(X: ArrayLike, y: ArrayLike) -> tuple[FloatArray, float, float]:
    """Linear regression with an intercept by maximum likelihood under Gaussian noise.

    Model y_i = w^T x_i + b + eps_i, eps_i ~ N(0, sigma2). Maximising the likelihood over
    (w, b) minimises the sum of squared residuals; then sigma2 = (1/N) sum_i r_i^2, the mean
    squared residual (divides by N). Solved by least squares (``numpy.linalg.lstsq``) on
    centred data, so b = mean(y) - w^T mean(X); when X^T X is singular, w is the
    minimum-norm solution.

    Parameters
    ----------
    X : array_like, shape (N, D)
    y : array_like, shape (N,)

    Returns
    -------
    w : ndarray, shape (D,)
    b : float
    sigma2 : float

    See the chapter "Maximum likelihood", section "Linear regression".
    """
    X, y = _regression_inputs(X, y)
    x_mean = X.mean(axis=0)
    y_mean = y.mean()
    w = np.linalg.lstsq(X - x_mean, y - y_mean, rcond=None)[0]
    b = float(y_mean - x_mean @ w)
    residuals = y - X @ w - b
    return w.astype(np.float64), b, float(np.mean(residuals**2))


def laplace_regression_mle(X: ArrayLike, y: ArrayLike) -> tuple[FloatArray, float, float]:
    """Linear regression with an intercept by maximum likelihood under Laplace noise.

    Model y_i = w^T x_i + b + eps_i, eps_i ~ Laplace(0, s) with density exp(-|e|/s)/(2s).
    Maximising over (w, b) minimises sum_i |y_i - w^T x_i - b| (least absolute deviations);
    then s = (1/N) sum_i |r_i|, the mean absolute residual. The minimisation is solved
    exactly as the linear program

        minimise sum_i u_i  subject to  -u_i <= y_i - w^T x_i - b <= u_i,

    with ``scipy.optimize.linprog(method="highs")``. The minimiser (w, b) need not be unique;
    the objective value is.

    Parameters
    ----------
    X : array_like, shape (N, D)
    y : array_like, shape (N,)

    Returns
    -------
    w : ndarray, shape (D,)
    b : float
    scale : float

    See the chapter "Maximum likelihood", section "Laplace noise".
    """
    X, y = _regression_inputs(X, y)
    n, d = X.shape
    # Variables: [w (D), b, u (N)]; two blocks of inequalities, A_ub z <= b_ub.
    design = sparse.hstack([sparse.csr_matrix(X), sparse.csr_matrix(np.ones((n, 1)))])
    eye = sparse.identity(n, format="csr")
    A_ub = sparse.vstack([sparse.hstack([design, -eye]), sparse.hstack([-design, -eye])])
    b_ub = np.concatenate([y, -y])
    cost = np.concatenate([np.zeros(d + 1), np.ones(n)])
    bounds = [(None, None)] * (d + 1) + [(0.0, None)] * n
    result = optimize.linprog(cost, A_ub=A_ub.tocsr(), b_ub=b_ub, bounds=bounds, method="highs")
    if not result.success:  # pragma: no cover - the LP is always feasible and bounded
        raise RuntimeError(f"linear program failed: {result.message}")
    w = np.asarray(result.x[:d], dtype=np.float64)
    b = float(result.x[d])
    scale = float(np.mean(np.abs(y - X @ w - b)))
    return w, b, scale
