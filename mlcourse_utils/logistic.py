"""Logistic and softmax regression: discriminative linear classifiers fitted by maximum likelihood.

Binary logistic regression models p(y = 1 | x) = sigma(w^T x + b) with the logistic sigmoid
sigma(a) = 1 / (1 + e^{-a}); softmax regression models p(y = c | x) = softmax(x^T W + b)_c for
C classes. Both are fitted by minimising the negative log-likelihood (the log loss) plus an L2
penalty (l2 / 2) ||w||^2 on the weights; the bias b is never penalised, which is the objective
of scikit-learn's ``LogisticRegression(C=1 / l2)``.

The losses are summed over samples (not averaged), so ``l2`` is the lambda of a Gaussian prior
w ~ N(0, I / lambda) and its effect weakens as N grows. Every loss is computed from the scores
a = w^T x + b without forming probabilities that could round to 0 or 1: -log sigma(a) is
``logaddexp(0, -a)`` and the softmax is normalised with log-sum-exp, so scores of any magnitude
give finite losses and no overflow warnings.

Two ways of fitting are offered. With a step size ``lr`` the ``fit_*`` functions run the plain
gradient descent the chapter teaches (:func:`gradient_descent`). With ``lr=None`` the method
follows the shape of X (:func:`_solve_binary`, :func:`_solve_softmax`):

* up to 200 parameters ((D + 1) C) and 20,000 samples: Newton's method with a backtracking
  line search (the Hessian is (D + 1) x (D + 1) for two classes, (D + 1) C x (D + 1) C for C
  classes, and solved by Cholesky);
* more parameters or samples: L-BFGS (:func:`_lbfgs`), which needs only gradients, finished
  by a few Newton steps with one Hessian when forming it costs less than the L-BFGS steps it
  saves (for more than 20,000 samples the first one from 20,000 evenly spaced rows, the exact
  one as soon as that proves too rough);
* more than twice as many features as samples: the same fit on N features, the coordinates
  of w in the span of the N rows of X (:func:`_row_space`), so that no Hessian or step is
  ever larger than (N + 1) C.

The loss and gradient are accumulated over blocks of rows that stay in cache. Every Hessian
is a sum of weighted outer products formed as symmetric matrix products (BLAS syrk). All stop
when the largest absolute entry of the gradient is at most ``tol``.

See the chapter "Logistic regression".
"""

from __future__ import annotations

import functools
import numbers
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import linalg

from ._base import ProbabilisticClassifier
from ._validation import (
    FloatArray,
    as_2d_float_array,
    as_binary_array,
    as_float,
    as_float_array,
    as_labels,
    check_X_y,
    row_blocks,
)

__all__ = [
    "sigmoid",
    "logistic_nll",
    "logistic_nll_grad",
    "fit_logistic_regression",
    "softmax",
    "softmax_nll",
    "softmax_nll_grad",
    "fit_softmax_regression",
    "gradient_descent",
    "least_squares_classifier",
    "reliability_curve",
    "expected_calibration_error",
    "ConvergenceWarning",
    "LogisticRegression",
    "SoftmaxRegression",
]


class ConvergenceWarning(UserWarning):
    """A fit stopped at ``max_iter`` before the gradient reached ``tol``."""


# ---------------------------------------------------------------------------------------------
# The sigmoid and the binary log loss
# ---------------------------------------------------------------------------------------------


def _sigmoid(a):
    """sigma(a) for a float array without NaN; no overflow for any a (see :func:`sigmoid`)."""
    e = np.exp(-np.abs(a))  # in (0, 1]: never overflows (it may underflow to 0, harmlessly)
    return np.where(a >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def sigmoid(t: ArrayLike) -> float | FloatArray:
    """The logistic sigmoid sigma(t) = 1 / (1 + e^{-t}) = e^t / (1 + e^t), elementwise.

    Each form is evaluated where it cannot overflow: 1 / (1 + e^{-t}) for t >= 0 and
    e^t / (1 + e^t) for t < 0, so only e^{-|t|} <= 1 is ever computed. The result is exact
    at t = +-inf (1 and 0), has no overflow warning for any t, and satisfies
    sigma(-t) = 1 - sigma(t) to rounding error.

    Parameters
    ----------
    t : float or array_like
        Any real numbers, including +-inf. NaN is rejected.

    Returns
    -------
    float for a scalar input, otherwise an ndarray of the input's shape.

    See the chapter "Logistic regression", section "The logistic sigmoid".
    """
    arr = as_float_array(t, "t", allow_nonfinite=True)
    if np.any(np.isnan(arr)):
        raise ValueError("t contains NaN; the sigmoid is defined for real numbers and +-inf")
    with np.errstate(under="ignore"):
        out = _sigmoid(arr)
    return float(out) if out.ndim == 0 else out


def _check_binary_problem(w, b, X, y):
    X = as_2d_float_array(X, "X")
    w = as_float_array(w, "w", ndim=1)
    if w.shape[0] != X.shape[1]:
        raise ValueError(f"w has {w.shape[0]} entries but X has {X.shape[1]} columns (features)")
    b = as_float(b, "b")
    y = as_binary_array(y, "y", ndim=1)
    if y.shape[0] != X.shape[0]:
        raise ValueError(f"X has {X.shape[0]} rows but y has {y.shape[0]} entries")
    return w, b, X, y


def _binary_nll_and_grad(w, b, X, y, l2):
    """Penalised binary log loss and its gradient, from one pass of scores (no input checks).

    With scores a_n = w^T x_n + b, the score of the true class is z_n = a_n (y_n = 1) or
    -a_n (y_n = 0), and -log p(y_n | x_n) = log(1 + e^{-z_n}) = max(-z_n, 0) + log(1 + e^{-|z_n|}):
    only e^{-|a_n|} <= 1 is computed, so the loss is finite for any score. The gradient is
    sum_n (sigma(a_n) - y_n) x_n + l2 w and, for b, sum_n (sigma(a_n) - y_n).
    """
    a = X @ w + b                                   # scores a_n = w^T x_n + b
    z = np.where(y == 1, a, -a)                     # score of the true class
    with np.errstate(under="ignore"):
        e = np.exp(-np.abs(a))                      # shared by the loss and the sigmoid
        loss = np.sum(np.maximum(-z, 0.0) + np.log1p(e)) + 0.5 * l2 * (w @ w)
        p = np.where(a >= 0, 1.0 / (1.0 + e), e / (1.0 + e))   # sigma(a_n)
    r = p - y                                       # residuals sigma(a_n) - y_n
    grad_w = r @ X + l2 * w                         # = X^T r + l2 w
    grad_b = np.sum(r)
    return float(loss), grad_w, float(grad_b)


def logistic_nll(
    w: ArrayLike, b: float, X: ArrayLike, y: ArrayLike, l2: float = 0.0
) -> float:
    """Penalised negative log-likelihood of binary logistic regression.

    L(w, b) = sum_n -log p(y_n | x_n) + (l2 / 2) ||w||^2
            = -sum_n [y_n log sigma(a_n) + (1 - y_n) log(1 - sigma(a_n))] + (l2 / 2) ||w||^2,

    with scores a_n = w^T x_n + b. The loss is a sum over samples, not a mean, and the bias b
    is not penalised. Each term is computed as logaddexp(0, -a_n) (y_n = 1) or
    logaddexp(0, a_n) (y_n = 0), so it stays finite and accurate for scores of any size.

    Parameters
    ----------
    w : array_like, shape (D,)
    b : float
    X : array_like, shape (N, D)
    y : array_like, shape (N,)
        Labels 0 or 1.
    l2 : float, default 0
        Penalty strength lambda >= 0.

    Returns
    -------
    float

    See the chapter "Logistic regression", section "The log loss from maximum likelihood".
    """
    w, b, X, y = _check_binary_problem(w, b, X, y)
    l2 = as_float(l2, "l2", low=0.0)
    return _binary_nll_and_grad(w, b, X, y, l2)[0]


def logistic_nll_grad(
    w: ArrayLike, b: float, X: ArrayLike, y: ArrayLike, l2: float = 0.0
) -> tuple[FloatArray, float]:
    """Gradient of :func:`logistic_nll` with respect to w and b.

    grad_w = sum_n (sigma(w^T x_n + b) - y_n) x_n + l2 w  and
    grad_b = sum_n (sigma(w^T x_n + b) - y_n):
    every sample pushes the weights along its features, in proportion to its residual
    (predicted probability of class 1 minus the label).

    Parameters
    ----------
    w, b, X, y, l2
        As in :func:`logistic_nll`.

    Returns
    -------
    grad_w : ndarray, shape (D,)
    grad_b : float

    See the chapter "Logistic regression", section "The gradient".
    """
    w, b, X, y = _check_binary_problem(w, b, X, y)
    l2 = as_float(l2, "l2", low=0.0)
    _, grad_w, grad_b = _binary_nll_and_grad(w, b, X, y, l2)
    return grad_w, grad_b


# ---------------------------------------------------------------------------------------------
# Gradient descent, the method the chapter teaches
# ---------------------------------------------------------------------------------------------


def gradient_descent(
    loss_and_grad: Callable[..., tuple[Any, ...]],
    params: Sequence[ArrayLike],
    lr: float,
    max_iter: int = 10000,
    tol: float = 1e-8,
) -> tuple[list[Any], FloatArray, bool]:
    """Plain gradient descent theta <- theta - lr * grad L(theta) with a fixed step size.

    Starting from ``params``, it evaluates the loss and gradient, stops as soon as the largest
    absolute entry of the gradient is at most ``tol`` (a stopping rule that works whether or
    not the loss can reach zero), and otherwise takes a step. At most ``max_iter`` steps are
    taken.

    Parameters
    ----------
    loss_and_grad : callable
        ``loss_and_grad(*params)`` returns ``(loss, grad_1, grad_2, ...)``, one gradient per
        parameter array.
    params : sequence of arrays or floats
        Starting values.
    lr : float
        The step size (learning rate) eta > 0.
    max_iter : int
    tol : float

    Returns
    -------
    params : list
        The final values (floats stay floats).
    losses : ndarray
        The loss before every step and after the last one.
    converged : bool
        Whether the gradient reached ``tol``.

    See the chapter "Logistic regression", section "Gradient descent".
    """
    params = [np.array(p, dtype=float) for p in params]
    losses = []
    for step in range(max_iter + 1):
        loss, *grads = loss_and_grad(*params)
        losses.append(loss)
        if max(np.max(np.abs(g)) for g in grads) <= tol:
            return _unwrap(params), np.array(losses), True
        if step == max_iter:
            break
        params = [p - lr * g for p, g in zip(params, grads, strict=True)]
    return _unwrap(params), np.array(losses), False


def _unwrap(params):
    return [float(p) if p.ndim == 0 else p for p in params]


# ---------------------------------------------------------------------------------------------
# Fitting binary logistic regression
# ---------------------------------------------------------------------------------------------


def _check_fit_options(l2, lr, max_iter, tol):
    l2 = as_float(l2, "l2", low=0.0)
    if lr is not None:
        lr = as_float(lr, "lr", low=0.0, low_open=True)
    if isinstance(max_iter, bool) or not isinstance(max_iter, numbers.Integral):
        raise TypeError(f"max_iter must be an integer, got {max_iter!r}")
    if max_iter < 0:
        raise ValueError(f"max_iter must be >= 0, got {max_iter}")
    tol = as_float(tol, "tol", low=0.0)
    return l2, lr, int(max_iter), tol


def _check_X(X):
    X = as_2d_float_array(X, "X", min_rows=1)
    if X.shape[1] == 0:
        raise ValueError("X has no columns; at least one feature is needed")
    return X


def _warn_not_converged(what, max_iter, gmax, tol):
    warnings.warn(
        f"{what} stopped after max_iter={max_iter} iterations with largest gradient entry "
        f"{gmax:.3g} > tol={tol:g}; increase max_iter (or lr), or use lr=None",
        ConvergenceWarning,
        stacklevel=3,
    )


#: Above this many samples the first Hessian is formed from evenly spaced rows only (see
#: :func:`_newton_steps`), and the fits start with L-BFGS (:func:`_quasi_newton`).
_HESSIAN_ROWS = 20000


def _minimise(loss_grad, hessian, theta, n_samples, X, max_iter, tol):
    """Minimise a smooth convex loss by Newton's method; returns (theta, n_iter, converged).

    ``loss_grad(theta)`` gives (loss, gradient) and ``hessian(theta, max_rows)`` the Hessian
    (from at most ``max_rows`` evenly spaced rows, ``None`` for all of them). Newton steps
    theta <- theta - t H^{-1} g with a backtracking line search follow until the largest
    gradient entry is at most ``tol``. Close to the minimum the loss
    stops decreasing measurably (its rounding error is about 1e-16 times the loss), so a step
    is also accepted when it does not increase the loss beyond rounding and shrinks the
    gradient: convergence is judged by the gradient, never by the loss.

    The fits use it for small problems (at most ``_NEWTON_PARAMS`` parameters and
    ``_HESSIAN_ROWS`` samples), where it is plain Newton's method with the exact Hessian at
    every step. For more than ``_HESSIAN_ROWS`` samples the first Hessian is formed from a
    subsample of rows and kept while every step shrinks the gradient four-fold. A subsample
    can miss most of the curvature (nearly separable classes, where few samples have
    probabilities far from 0 and 1), and Newton's method then converges slowly; so the first
    step that fails to shrink the gradient four-fold switches to the exact Hessian, from all
    rows, at every later step: quadratic convergence, a few steps.
    """
    return _newton_steps(loss_grad, hessian, theta, 0, X, max_iter, tol,
                         n_samples <= _HESSIAN_ROWS, False)


def _newton_steps(loss_grad, hessian, theta, n_iter, X, max_iter, tol, exact, keep):
    """Newton steps with a line search from theta (see :func:`_minimise`); (theta, n_iter, ok).

    ``exact`` says whether the first Hessian uses all rows. With ``keep``, a Hessian is reused
    as long as every step shrinks the largest gradient entry four-fold (a Newton method with
    an old Hessian converges fast close to the minimum and saves forming it again); otherwise
    it is formed again at every step from the first step that does not.
    """
    loss, g = loss_grad(theta)
    H = None
    while True:
        gmax = np.max(np.abs(g))
        if gmax <= tol:
            return theta, n_iter, True
        if n_iter >= max_iter:
            return theta, n_iter, False
        if H is None:
            H = hessian(theta, None if exact else _HESSIAN_ROWS)
            solve = _psd_solver(H)                  # factorised once per Hessian
        step = solve(g)
        decrement = g @ step                        # the Newton decrement squared, >= 0
        t = 1.0
        while True:
            theta_new = theta - t * step
            loss_new, g_new = loss_grad(theta_new)
            gmax_new = np.max(np.abs(g_new))
            if loss_new <= loss - 1e-4 * t * decrement or (
                    loss_new <= loss + 1e-13 * abs(loss) and gmax_new < gmax):
                break
            t *= 0.5
            if t < 1e-12:
                # No progress is possible in floating point: the gradient is as small as
                # rounding allows at this scale.
                return theta, n_iter, _at_precision(gmax, X, tol)
        n_iter += 1
        if gmax_new > 0.25 * gmax or (exact and not keep):
            exact = True                            # from now on, the exact Hessian
            H = None                                # a new Hessian at the next point
        theta, loss, g = theta_new, loss_new, g_new


#: Fits with at most this many parameters ((D + 1) C) take Newton steps from the start.
_NEWTON_PARAMS = 200
#: Otherwise L-BFGS runs until the largest gradient entry has fallen by this factor, and
#: Newton steps finish when a Hessian costs little against the L-BFGS steps it saves.
_POLISH_FROM = 1e-5


def _lbfgs(loss_grad, theta, max_iter, tol, relative=0.0, memory=10):
    """L-BFGS until the largest gradient entry is at most ``tol`` (or ``relative`` times its
    value at the start); returns (theta, n_iter, largest gradient entry, reached).

    The limited-memory BFGS method (Nocedal and Wright, *Numerical Optimization*, algorithm
    7.4) keeps the last ``memory`` steps s_k and gradient changes y_k; the two-loop recursion
    applies the inverse of the quasi-Newton Hessian they define to the gradient in
    O(memory P) operations for P parameters, so a step costs about one loss-and-gradient
    evaluation and never a P x P matrix. Steps are accepted by backtracking (Armijo's
    condition, quadratic interpolation); like :func:`_newton_steps` it tolerates an increase
    of the loss within rounding (1e-13 of the loss), because near the minimum the loss no
    longer changes measurably while the gradient, which decides convergence, still does.
    It gives up (reached = False) after ``max_iter`` steps, when backtracking finds no step,
    or when 50 steps in a row do not reduce the smallest gradient seen so far.
    """
    loss, g = loss_grad(theta)
    goal = max(tol, relative * np.max(np.abs(g)))
    steps, changes, inverse_curvatures = [], [], []
    n_iter, best, since_best = 0, np.inf, 0
    while True:
        gmax = np.max(np.abs(g))
        if gmax <= goal:
            return theta, n_iter, gmax, True
        if gmax < best:
            best, since_best = gmax, 0
        else:
            since_best += 1
        if n_iter >= max_iter or since_best > 50:
            return theta, n_iter, gmax, False
        q = g.copy()                                # two-loop recursion: q <- H_k g
        alphas = []
        for s, y, rho in zip(reversed(steps), reversed(changes), reversed(inverse_curvatures),
                             strict=True):
            alphas.append(rho * (s @ q))
            q -= alphas[-1] * y
        if steps:                                   # initial matrix gamma I, gamma = s.y / y.y
            q *= 1.0 / (inverse_curvatures[-1] * (changes[-1] @ changes[-1]))
        else:                                       # first step: of length 1
            q /= np.sqrt(g @ g)
        for s, y, rho, alpha in zip(steps, changes, inverse_curvatures, reversed(alphas),
                                    strict=True):
            q += (alpha - rho * (y @ q)) * s
        slope = -(g @ q)                            # directional derivative along -q, < 0
        t = 1.0
        while True:
            theta_new = theta - t * q
            loss_new, g_new = loss_grad(theta_new)
            excess = loss_new - loss - t * slope
            if loss_new <= loss + 1e-4 * t * slope + 1e-13 * abs(loss):
                break
            # the minimiser of the parabola through loss, slope and loss_new, kept in
            # [t / 10, t / 2]
            t = min(max(-slope * t * t / (2.0 * excess), 0.1 * t), 0.5 * t) if excess > 0 \
                else 0.5 * t
            if t < 1e-10:
                return theta, n_iter, gmax, False
        s, y = theta_new - theta, g_new - g
        sy = s @ y
        if sy > 1e-12 * np.sqrt((s @ s) * (y @ y)):  # positive curvature: keep the pair
            steps.append(s)
            changes.append(y)
            inverse_curvatures.append(1.0 / sy)
            if len(steps) > memory:
                del steps[0], changes[0], inverse_curvatures[0]
        theta, loss, g = theta_new, loss_new, g_new
        n_iter += 1


def _newton_pays(N, D, C):
    """Whether a Hessian, formed once or twice, costs little against the L-BFGS steps it saves.

    Forming it takes about N (D + 1)^2 C (C + 1) / 4 multiply-adds (C (C + 1) / 2 symmetric
    products, on at most _HESSIAN_ROWS rows) and factorising it ((D + 1) C)^3 / 3, at the
    speed of matrix products; a gradient
    takes 2 N D C, at the speed of matrix-vector products, about ten times slower per
    operation. Newton steps save about 30 L-BFGS steps: worth 20 gradients or fewer.
    """
    P = (D + 1) * C
    hessian = min(N, _HESSIAN_ROWS) * (D + 1) ** 2 * C * (C + 1) / 4 + P ** 3 / 3
    return hessian <= 200 * (2 * N * D * C)


def _quasi_newton(loss_grad, hessian, theta, X, max_iter, tol, polish):
    """L-BFGS, then Newton steps if ``polish``; (theta, n_iter, converged).

    For fits with many parameters or samples, where Newton steps from the start would form
    many large Hessians: L-BFGS (:func:`_lbfgs`) brings the largest gradient entry down by the
    factor ``_POLISH_FROM`` (or all the way to ``tol`` without ``polish``); then Newton steps
    with one Hessian, formed again only when a step fails to shrink the gradient four-fold
    (:func:`_newton_steps`; above ``_HESSIAN_ROWS`` samples the first from a subsample of
    rows), converge in two or three steps. Should L-BFGS stall above ``tol``, Newton steps take over
    as long as the Hessian is of a size that fits in memory.
    """
    theta, n_iter, gmax, _ = _lbfgs(loss_grad, theta, max_iter, tol,
                                    _POLISH_FROM if polish else 0.0)
    if gmax <= tol:
        return theta, n_iter, True
    if n_iter >= max_iter:
        return theta, n_iter, False
    if polish or theta.shape[0] <= 4000:
        return _newton_steps(loss_grad, hessian, theta, n_iter, X, max_iter, tol,
                             X.shape[0] <= _HESSIAN_ROWS, True)
    return theta, n_iter, _at_precision(gmax, X, tol)


def _row_space(X):
    """(Z, back) for a fit with D > N: the fit on Z (N x N) gives v, and w = back(v).

    The weights that minimise a penalised loss of the scores X w + b lie in the span of the
    rows of X (the gradient X^T r + l2 w = 0 gives w = -X^T r / l2). A constant feature s 1
    added to X changes nothing (the unpenalised b takes its part, so its weight is 0 at the
    optimum) and makes the rows independent even when X is centred: X_a = [X, s 1] = Z Q with
    Q of orthonormal rows. Writing (w, u) = Q^T v, the scores are Z v + b and
    ||(w, u)|| = ||v||, so the fit on Z with the same penalty gives v, and its gradient g_v
    gives ||g_(w, u)|| = ||g_v||. Z comes from K = X_a X_a^T = X X^T + s^2 1 1^T: its Cholesky
    factor L (Z = L, Q = L^{-1} X_a), or when K is singular to rounding (repeated rows) its
    eigendecomposition K = U diag(e) U^T (Z = U diag(sqrt(e)), Q = diag(e^{-1/2}) U^T X_a,
    over the eigenvalues above rounding). Forming K costs N^2 D / 2 multiply-adds, once.
    """
    N = X.shape[0]
    K = X @ X.T
    K += max(np.trace(K) / N ** 2, np.finfo(float).tiny)       # s^2 = mean(diag(X X^T)) / N
    scale = float(np.max(np.diag(K)))
    try:
        L = linalg.cholesky(K, lower=True, check_finite=False)
        if np.min(np.diag(L)) ** 2 > 1e-12 * scale:
            return L, lambda V: X.T @ linalg.solve_triangular(L, V, lower=True, trans="T",
                                                              check_finite=False)
    except linalg.LinAlgError:
        pass
    e, U = linalg.eigh(K, check_finite=False)
    keep = e > 1e-13 * e[-1]
    U, root = U[:, keep], np.sqrt(e[keep])
    return U * root, lambda V: X.T @ (U @ (V.T / root).T)


def _in_blocks(nll_and_grad, W, b, X, y, l2, rows=4096):
    """``nll_and_grad(W, b, X, y, l2)`` accumulated over blocks of ``rows`` samples.

    The loss and its gradient are sums over samples, so they can be added up block by block
    (the penalty is added once at the end). A block of X stays in the processor's cache
    between its two uses (the scores X W and the gradient X^T R), so X is read from memory
    once instead of twice, which makes large problems about 1.5 times faster.
    """
    if X.shape[0] <= rows:
        return nll_and_grad(W, b, X, y, l2)
    loss, grad_W, grad_b = 0.0, 0.0, 0.0
    for start in range(0, X.shape[0], rows):        # a loop over blocks of rows
        block = slice(start, start + rows)
        part = nll_and_grad(W, b, X[block], y[block], 0.0)
        loss, grad_W, grad_b = loss + part[0], grad_W + part[1], grad_b + part[2]
    return loss + 0.5 * l2 * np.sum(W * W), grad_W + l2 * W, grad_b


def _row_subsample(X, max_rows):
    """Evenly spaced rows of X (all of them if max_rows is None or at least N) and N / rows."""
    if max_rows is None or X.shape[0] <= max_rows:
        return X, 1.0
    step = -(-X.shape[0] // max_rows)               # ceil(N / max_rows)
    Xs = np.ascontiguousarray(X[::step])            # contiguous rows multiply faster
    return Xs, X.shape[0] / Xs.shape[0]


def _weighted_gram(X, s):
    """sum_n s_n x~_n x~_n^T with x~_n = (x_n, 1), for weights s_n >= 0: (D + 1, D + 1).

    Written as Z^T Z with rows z_n = sqrt(s_n) x~_n, a symmetric product (BLAS syrk, half the
    work of a general one), formed block by block of rows so that Z stays in cache.
    """
    G = np.zeros((X.shape[1] + 1, X.shape[1] + 1))
    for rows in row_blocks(X.shape):
        r = np.sqrt(s[rows])[:, None]
        Z = np.hstack([X[rows] * r, r])             # rows sqrt(s_n) (x_n, 1)
        G += Z.T @ Z
    return G


def _binary_hessian(X, w, b, l2, max_rows=None):
    """Hessian of the penalised binary log loss in theta = (w, b).

    [X 1]^T S [X 1] + l2 diag(1, ..., 1, 0) with S = diag(sigma(a_n)(1 - sigma(a_n))), a
    (D + 1) x (D + 1) matrix; with ``max_rows`` < N the sum runs over evenly spaced rows and
    is scaled up.
    """
    Xs, scale = _row_subsample(X, max_rows)
    D = X.shape[1]
    with np.errstate(under="ignore"):
        p = _sigmoid(Xs @ w + b)
    H = _weighted_gram(Xs, scale * p * (1.0 - p))
    H[np.arange(D), np.arange(D)] += l2
    return H


def _newton_binary(X, y, l2, max_iter, tol):
    """The minimiser of the penalised binary log loss by :func:`_minimise`; (w, b, n_iter, ok)."""
    D = X.shape[1]

    def loss_grad(theta):
        loss, gw, gb = _in_blocks(_binary_nll_and_grad, theta[:D], theta[D], X, y, l2)
        return loss, np.append(gw, gb)

    theta, n_iter, converged = _minimise(
        loss_grad, lambda t, rows: _binary_hessian(X, t[:D], t[D], l2, rows), np.zeros(D + 1),
        X.shape[0], X, max_iter, tol)
    return theta[:D], float(theta[D]), n_iter, converged


def _solve_binary(X, y, l2, max_iter, tol):
    """The minimiser of the penalised binary log loss, by a method chosen from the shape of X.

    Returns (w, b, n_iter, converged). With D >= 2N the fit runs on N features instead
    (:func:`_row_space`), to ``tol / sqrt(N)`` so that the largest entry of the gradient in w,
    at most its length, is within ``tol``. Up to ``_NEWTON_PARAMS`` parameters and
    ``_HESSIAN_ROWS`` samples: Newton's method (:func:`_newton_binary`); otherwise L-BFGS,
    finished by Newton steps when a Hessian is cheap enough (:func:`_quasi_newton`,
    :func:`_newton_pays`). Never a Hessian of more than (N + 1)^2 entries when D > N.
    """
    N, D = X.shape
    if D >= 2 * N:
        Z, back = _row_space(X)
        v, b, n_iter, converged = _solve_binary(Z, y, l2, max_iter, tol / np.sqrt(Z.shape[1]))
        return back(v), b, n_iter, converged
    if D + 1 <= _NEWTON_PARAMS and N <= _HESSIAN_ROWS:
        return _newton_binary(X, y, l2, max_iter, tol)

    def loss_grad(theta):
        loss, gw, gb = _in_blocks(_binary_nll_and_grad, theta[:D], theta[D], X, y, l2)
        return loss, np.append(gw, gb)

    theta, n_iter, converged = _quasi_newton(
        loss_grad, lambda t, rows: _binary_hessian(X, t[:D], t[D], l2, rows), np.zeros(D + 1),
        X, max_iter, tol, _newton_pays(N, D, 1))
    return theta[:D], float(theta[D]), n_iter, converged


def _at_precision(gmax, X, tol):
    """Whether a gradient that can no longer be reduced is at the rounding level of the data."""
    scale = np.abs(X).sum(axis=0).max() + X.shape[0]
    return gmax <= max(tol, 1e3 * np.finfo(float).eps * scale)


def _psd_solver(H):
    """g -> H^{-1} g for a symmetric positive semi-definite H, factorised once by Cholesky
    (no explicit inverse); if H is singular, it is shifted by a small multiple of I first."""
    shift = 0.0
    scale = max(np.max(np.abs(np.diag(H))), 1e-300)
    for _ in range(30):
        try:
            c = linalg.cho_factor(H + shift * np.eye(len(H)), lower=True, check_finite=False)
            return lambda g: linalg.cho_solve(c, g, check_finite=False)
        except linalg.LinAlgError:
            shift = max(10.0 * shift, 1e-12 * scale)
    raise RuntimeError("the Hessian could not be factorised")  # pragma: no cover


def _fit_binary(X, y, l2, lr, max_iter, tol):
    """(w, b, info) for checked X and 0/1 float y; info has losses, n_iter, converged."""
    D = X.shape[1]
    if lr is None:
        w, b, n_iter, converged = _solve_binary(X, y, l2, max_iter, tol)
        info = {"n_iter": n_iter, "converged": converged, "losses": None}
    else:
        (w, b), losses, converged = gradient_descent(
            lambda w, b: _binary_nll_and_grad(w, b, X, y, l2), [np.zeros(D), 0.0],
            lr, max_iter, tol)
        info = {"n_iter": len(losses) - 1, "converged": converged, "losses": losses}
    if not converged:
        _, gw, gb = _binary_nll_and_grad(w, b, X, y, l2)
        _warn_not_converged("fit_logistic_regression", max_iter,
                            max(np.max(np.abs(gw)), abs(gb)), tol)
    return w, float(b), info


def fit_logistic_regression(
    X: ArrayLike,
    y: ArrayLike,
    l2: float = 1.0,
    lr: float | None = None,
    max_iter: int = 10000,
    tol: float = 1e-8,
) -> tuple[FloatArray, float]:
    """Fit binary logistic regression: the minimiser (w, b) of :func:`logistic_nll`.

    Minimises sum_n -log p(y_n | x_n) + (l2 / 2) ||w||^2 with p(y = 1 | x) = sigma(w^T x + b),
    the bias unpenalised: the optimum of scikit-learn's ``LogisticRegression(C=1 / l2)``. The
    loss is convex (strictly so in w when l2 > 0), so there is one minimum, but the gradient
    equation has no closed-form solution.

    With ``lr`` given, this is plain gradient descent w <- w - lr grad_w, b <- b - lr grad_b
    from w = 0, b = 0, at most ``max_iter`` steps (see :func:`gradient_descent`); a step below
    2 / L, where L = lambda_max([X 1]^T [X 1]) / 4 + l2 bounds the curvature everywhere,
    decreases the loss at every step from any start; larger steps may still converge, since
    near the minimiser the step need only be below 2 / L*, with L* the largest eigenvalue of
    the Hessian there (usually much smaller than L).
    With ``lr=None`` the method follows the shape of X (see the module docstring): Newton's
    method with a line search for up to 200 parameters and 20,000 samples, L-BFGS finished by
    Newton steps for more, and the fit in the span of the samples when D >= 2N; ``max_iter``
    then counts L-BFGS iterations and Newton steps (usually fewer than 30 and 60). Either way
    it stops when the largest absolute gradient entry is at most ``tol``, and issues a
    :class:`ConvergenceWarning` if ``max_iter`` is reached first.
    With l2 = 0 and linearly separable data no minimiser exists: the weights grow until the
    gradient falls below ``tol``.

    Parameters
    ----------
    X : array_like, shape (N, D)
    y : array_like, shape (N,)
        Labels 0 or 1, both present.
    l2 : float, default 1
        Penalty strength lambda >= 0 (scikit-learn's 1 / C).
    lr : float or None
        Gradient-descent step size, or None for the fast solver.
    max_iter : int
    tol : float

    Returns
    -------
    w : ndarray, shape (D,)
    b : float

    See the chapter "Logistic regression", sections "Gradient descent" and
    "Regularisation".
    """
    X = _check_X(X)
    y = as_binary_array(y, "y", ndim=1)
    if y.shape[0] != X.shape[0]:
        raise ValueError(f"X has {X.shape[0]} rows but y has {y.shape[0]} entries")
    if y.min() == y.max():
        raise ValueError(f"y holds only the label {int(y[0])}; both classes 0 and 1 are needed")
    l2, lr, max_iter, tol = _check_fit_options(l2, lr, max_iter, tol)
    w, b, _ = _fit_binary(X, y, l2, lr, max_iter, tol)
    return w, b


# ---------------------------------------------------------------------------------------------
# Softmax regression
# ---------------------------------------------------------------------------------------------


def _log_softmax_rows(A):
    """(log-softmax, softmax) of the rows of a 2-D float array without NaN or +inf."""
    # The row maximum, taken as an elementwise maximum of the C columns (much faster than
    # a reduction along short rows when N is large).
    m = functools.reduce(np.maximum, A.T)[:, None]
    Z = A - m                                       # the largest entry of each row is 0
    with np.errstate(under="ignore"):
        E = np.exp(Z)
    s = E.sum(axis=1, keepdims=True)                # >= 1: no underflow to 0, no division by 0
    return Z - np.log(s), E / s


def softmax(A: ArrayLike) -> FloatArray:
    """Row-wise softmax: softmax(a)_c = e^{a_c} / sum_{c'} e^{a_{c'}}.

    The largest entry of each row is subtracted before exponentiating (the softmax does not
    change when a constant is added to a row), so no exponent exceeds 0 and nothing
    overflows; the denominator is then at least 1. An entry of -inf gets probability 0.

    Parameters
    ----------
    A : array_like, shape (C,) or (N, C)
        Scores; a 1-D input is one row. NaN and +inf are rejected, as is a row of only -inf.

    Returns
    -------
    ndarray of the input's shape, every row summing to 1.

    See the chapter "Logistic regression", section "More than two classes: softmax
    regression".
    """
    A = as_float_array(A, "A", allow_nonfinite=True)
    if A.ndim not in (1, 2) or A.shape[-1] == 0:
        raise ValueError(f"A must be a non-empty 1-D or 2-D array of scores, got shape {A.shape}")
    if np.any(np.isnan(A)) or np.any(A == np.inf):
        raise ValueError("A contains NaN or +inf; scores must be real numbers (or -inf)")
    A2 = np.atleast_2d(A)
    if np.any(np.all(A2 == -np.inf, axis=1)):
        raise ValueError("A has a row of only -inf scores; its softmax is undefined")
    return _log_softmax_rows(A2)[1].reshape(A.shape)


def _check_integer_labels(y, name, n_samples, n_classes):
    arr = np.asarray(y)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {arr.shape}")
    if arr.shape[0] != n_samples:
        raise ValueError(f"X has {n_samples} rows but {name} has {arr.shape[0]} entries")
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.number):
        raise TypeError(f"{name} must hold integer class indices 0..C-1, got dtype {arr.dtype}")
    if not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr)):
        raise ValueError(f"{name} must hold integer class indices 0..C-1")
    if arr.size and (arr.min() < 0 or arr.max() >= n_classes):
        raise ValueError(
            f"{name} must hold class indices in 0..{n_classes - 1} (W has {n_classes} columns), "
            f"found {int(arr.min()) if arr.min() < 0 else int(arr.max())}"
        )
    return arr.astype(np.intp)


def _check_softmax_problem(W, b, X, y):
    X = as_2d_float_array(X, "X")
    W = as_float_array(W, "W", ndim=2)
    if W.shape[0] != X.shape[1]:
        raise ValueError(f"W has {W.shape[0]} rows but X has {X.shape[1]} columns (features)")
    if W.shape[1] == 0:
        raise ValueError("W has no columns; it must have shape (D, C) with C >= 1")
    b = as_float_array(b, "b", ndim=1)
    if b.shape[0] != W.shape[1]:
        raise ValueError(f"b has {b.shape[0]} entries but W has {W.shape[1]} columns (classes)")
    y = _check_integer_labels(y, "y", X.shape[0], W.shape[1])
    return W, b, X, y


def _softmax_nll_and_grad(W, b, X, y, l2):
    """Penalised softmax log loss and its gradient (no input checks).

    With scores A = X W + b (row n holds a_nc = w_c^T x_n + b_c) and P = softmax(A) row-wise,
    the loss is sum_n [log sum_c e^{a_nc} - a_{n, y_n}] + (l2 / 2) ||W||_F^2 and the gradient
    is X^T (P - T) + l2 W for W and the column sums of P - T for b, where T is the one-hot
    matrix of the labels. The log-sum-exp subtracts each row's maximum m_n first.
    """
    N, C = X.shape[0], W.shape[1]
    A = X @ W + b                                   # (N, C) scores
    A -= functools.reduce(np.maximum, A.T)[:, None]  # shift each row: the largest score is 0
    true = np.arange(N) * C + y                     # flat positions of a_{n, y_n}
    with np.errstate(under="ignore"):
        P = np.exp(A)
    s = P @ np.ones(C)                              # row sums, each >= 1
    loss = np.sum(np.log(s)) - np.sum(A.ravel()[true]) + 0.5 * l2 * np.sum(W * W)
    P /= s[:, None]                                 # P = softmax(A)
    P.ravel()[true] -= 1.0                          # residuals P - T, in place
    grad_W = (P.T @ X).T + l2 * W                   # = X^T (P - T); faster in this order
    grad_b = np.ones(N) @ P
    return float(loss), grad_W, grad_b


def softmax_nll(
    W: ArrayLike, b: ArrayLike, X: ArrayLike, y: ArrayLike, l2: float = 0.0
) -> float:
    """Penalised negative log-likelihood of softmax (multinomial logistic) regression.

    L(W, b) = sum_n -log softmax(x_n^T W + b)_{y_n} + (l2 / 2) ||W||_F^2,

    computed with log-sum-exp, so scores of any magnitude give a finite loss. The bias b is
    not penalised.

    Parameters
    ----------
    W : array_like, shape (D, C)
        Column c is the weight vector w_c of class c.
    b : array_like, shape (C,)
    X : array_like, shape (N, D)
    y : array_like of int, shape (N,)
        Class indices 0..C-1.
    l2 : float, default 0

    Returns
    -------
    float

    See the chapter "Logistic regression", section "More than two classes: softmax
    regression".
    """
    W, b, X, y = _check_softmax_problem(W, b, X, y)
    l2 = as_float(l2, "l2", low=0.0)
    return _softmax_nll_and_grad(W, b, X, y, l2)[0]


def softmax_nll_grad(
    W: ArrayLike, b: ArrayLike, X: ArrayLike, y: ArrayLike, l2: float = 0.0
) -> tuple[FloatArray, FloatArray]:
    """Gradient of :func:`softmax_nll`: ``(X^T (P - T) + l2 W, sum_n (p_n - t_n))``.

    P holds the predicted class probabilities (N, C) and T the one-hot labels; with two
    classes and w = w_1 - w_0 this reduces to the binary gradient of
    :func:`logistic_nll_grad`.

    Returns
    -------
    grad_W : ndarray, shape (D, C)
    grad_b : ndarray, shape (C,)
        Its entries sum to 0: adding a constant to every b_c does not change the loss.

    See the chapter "Logistic regression", section "More than two classes: softmax
    regression".
    """
    W, b, X, y = _check_softmax_problem(W, b, X, y)
    l2 = as_float(l2, "l2", low=0.0)
    _, grad_W, grad_b = _softmax_nll_and_grad(W, b, X, y, l2)
    return grad_W, grad_b


def _softmax_hessian(X, W, b, l2, max_rows=None):
    """Hessian of the penalised softmax loss in theta = [W; b] flattened in C order.

    Writing x~_n = (x_n, 1), theta is the (D + 1) x C matrix [W; b] and the Hessian is
    sum_n (x~_n x~_n^T) kron (diag(p_n) - p_n p_n^T), plus l2 on the entries of W. Forming it
    costs C (C + 1) / 2 symmetric products of size N x (D + 1)^2 (block (c, c') has weights
    p_nc (1 - p_nc) >= 0 on the diagonal and -p_nc p_nc' <= 0 off it), so with ``max_rows`` < N
    the sum runs over evenly spaced rows and is scaled up: usually a close approximation
    (the gradient, which decides convergence, is always exact). The loss
    does not change when one constant is added to every b_c, so the Hessian is singular along
    u = (0, ..., 0, 1, ..., 1), a direction in which the gradient is always zero; adding
    u u^T makes it invertible without changing a Newton step in any other direction.
    """
    D, C = W.shape
    X, scale = _row_subsample(X, max_rows)
    _, P = _log_softmax_rows(X @ W + b)
    H = np.empty((D + 1, C, D + 1, C))
    for c in range(C):                              # a loop over pairs of classes
        for c2 in range(c, C):
            s = scale * P[:, c] * (float(c == c2) - P[:, c2])
            block = _weighted_gram(X, s) if c == c2 else -_weighted_gram(X, -s)
            H[:, c, :, c2] = block
            H[:, c2, :, c] = block                  # each block is symmetric
    H = H.reshape((D + 1) * C, (D + 1) * C)
    idx = np.arange(D * C)
    H[idx, idx] += l2
    u = np.zeros((D + 1) * C)
    u[D * C:] = 1.0
    return H + np.outer(u, u)


def _softmax_fast(X, y, C, l2, max_iter, tol):
    """The minimiser of the penalised softmax loss by :func:`_minimise`; (W, b, n_iter, ok)."""
    N, D = X.shape

    def unpack(theta):
        return theta[: D * C].reshape(D, C), theta[D * C:]

    def loss_grad(theta):
        loss, gW, gb = _in_blocks(_softmax_nll_and_grad, *unpack(theta), X, y, l2)
        return loss, np.concatenate([gW.ravel(), np.asarray(gb, dtype=float)])

    theta, n_iter, converged = _minimise(
        loss_grad, lambda t, rows: _softmax_hessian(X, *unpack(t), l2, rows),
        np.zeros((D + 1) * C),
        N, X, max_iter, tol)
    W, b = unpack(theta)
    return W, b, n_iter, converged


def _solve_softmax(X, y, C, l2, max_iter, tol):
    """The minimiser of the penalised softmax loss, by a method chosen from the shape of X.

    Returns (W, b, n_iter, converged); the choice is that of :func:`_solve_binary` with
    (D + 1) C parameters: the fit on N features when D >= 2N, Newton's method
    (:func:`_softmax_fast`) up to ``_NEWTON_PARAMS`` parameters and ``_HESSIAN_ROWS`` samples,
    L-BFGS otherwise.
    """
    N, D = X.shape
    if D >= 2 * N:
        Z, back = _row_space(X)
        V, b, n_iter, converged = _solve_softmax(Z, y, C, l2, max_iter,
                                                 tol / np.sqrt(Z.shape[1]))
        return back(V), b, n_iter, converged
    if (D + 1) * C <= _NEWTON_PARAMS and N <= _HESSIAN_ROWS:
        return _softmax_fast(X, y, C, l2, max_iter, tol)

    def unpack(theta):
        return theta[: D * C].reshape(D, C), theta[D * C:]

    rows = min(max(2 ** 18 // D, 256), 4096)        # blocks of about 2 MB: X read once

    def loss_grad(theta):
        loss, gW, gb = _in_blocks(_softmax_nll_and_grad, *unpack(theta), X, y, l2, rows)
        return loss, np.concatenate([gW.ravel(), np.asarray(gb, dtype=float)])

    theta, n_iter, converged = _quasi_newton(
        loss_grad, lambda t, rows: _softmax_hessian(X, *unpack(t), l2, rows),
        np.zeros((D + 1) * C), X, max_iter, tol, _newton_pays(N, D, C))
    W, b = unpack(theta)
    return W, b, n_iter, converged


def _fit_softmax(X, index, C, l2, lr, max_iter, tol):
    """(W, b, info) for checked X and integer labels 0..C-1; b is centred."""
    D = X.shape[1]
    if lr is None:
        W, b, n_iter, converged = _solve_softmax(X, index, C, l2, max_iter, tol)
        info = {"n_iter": n_iter, "converged": converged, "losses": None}
    else:
        (W, b), losses, converged = gradient_descent(
            lambda W, b: _softmax_nll_and_grad(W, b, X, index, l2),
            [np.zeros((D, C)), np.zeros(C)], lr, max_iter, tol)
        info = {"n_iter": len(losses) - 1, "converged": converged, "losses": losses}
    if not converged:
        _, gW, gb = _softmax_nll_and_grad(W, b, X, index, l2)
        _warn_not_converged("fit_softmax_regression", max_iter,
                            max(np.max(np.abs(gW)), np.max(np.abs(gb))), tol)
    return W, b - b.mean(), info


def fit_softmax_regression(
    X: ArrayLike,
    y: ArrayLike,
    l2: float = 1.0,
    lr: float | None = None,
    max_iter: int = 10000,
    tol: float = 1e-8,
) -> tuple[NDArray[Any], FloatArray, FloatArray]:
    """Fit softmax (multinomial logistic) regression by minimising :func:`softmax_nll`.

    The labels are mapped to 0..C-1 in the order of ``classes = np.unique(y)``; the result is
    the optimum of scikit-learn's multinomial ``LogisticRegression(C=1 / l2)``. Adding the
    same constant to every b_c leaves every probability unchanged, so b is only determined up
    to a constant; it is returned centred (summing to 0). (With l2 > 0 the weights are unique:
    adding a vector to every column of W changes the penalty.)

    With ``lr`` given, plain gradient descent from W = 0, b = 0 with that step, at most
    ``max_iter`` steps; with ``lr=None``, the method chosen from the shape of X as in
    :func:`fit_logistic_regression`, with (D + 1) C parameters. Both stop when the largest
    absolute gradient entry is at most ``tol`` and issue a :class:`ConvergenceWarning` when
    ``max_iter`` is reached first.

    Parameters
    ----------
    X : array_like, shape (N, D)
    y : array_like, shape (N,)
        Labels of any sortable type, at least two distinct values.
    l2, lr, max_iter, tol
        As in :func:`fit_logistic_regression`.

    Returns
    -------
    classes : ndarray, shape (C,)
    W : ndarray, shape (D, C)
    b : ndarray, shape (C,)

    See the chapter "Logistic regression", section "More than two classes: softmax
    regression".
    """
    X = _check_X(X)
    _, classes, index = as_labels(y, "y", n_samples=X.shape[0])
    if classes.shape[0] < 2:
        raise ValueError(f"y holds only the label {classes[0]!r}; at least two classes are needed")
    l2, lr, max_iter, tol = _check_fit_options(l2, lr, max_iter, tol)
    W, b, _ = _fit_softmax(X, index, classes.shape[0], l2, lr, max_iter, tol)
    return classes, W, b


# ---------------------------------------------------------------------------------------------
# The least-squares classifier (the chapter's starting point)
# ---------------------------------------------------------------------------------------------


def least_squares_classifier(X: ArrayLike, y: ArrayLike) -> tuple[FloatArray, float]:
    """Fit a linear function to 0/1 labels by least squares: (w, b) minimising
    sum_n (w^T x_n + b - y_n)^2.

    Predicting class 1 where w^T x + b > 1/2 gives the least-squares classifier that the
    chapter starts from (and shows failing when far-away points are added). Solved with
    ``numpy.linalg.lstsq`` on [X 1].

    Returns
    -------
    w : ndarray, shape (D,)
    b : float

    See the chapter "Logistic regression", section "Why not least squares?".
    """
    X = _check_X(X)
    y = as_binary_array(y, "y", ndim=1)
    if y.shape[0] != X.shape[0]:
        raise ValueError(f"X has {X.shape[0]} rows but y has {y.shape[0]} entries")
    A = np.column_stack([X, np.ones(X.shape[0])])
    coef = np.linalg.lstsq(A, y, rcond=None)[0]
    return coef[:-1], float(coef[-1])


# ---------------------------------------------------------------------------------------------
# Calibration
# ---------------------------------------------------------------------------------------------


def reliability_curve(
    y: ArrayLike, p: ArrayLike, n_bins: int = 10
) -> tuple[FloatArray, FloatArray, NDArray[np.intp]]:
    """Calibration of predicted probabilities: per bin of p, the mean p and the fraction of 1s.

    The interval [0, 1] is cut into ``n_bins`` bins of equal width (a probability on an inner
    edge goes to the lower bin, as in scikit-learn's ``calibration_curve``). For every
    non-empty bin k the function returns the mean predicted probability, the observed
    fraction of labels 1 and the number of samples. A calibrated classifier has the two equal:
    of the samples given probability 0.8, about 80 % belong to class 1.

    Parameters
    ----------
    y : array_like, shape (N,)
        Labels 0 or 1.
    p : array_like, shape (N,)
        Predicted probabilities of class 1, in [0, 1].
    n_bins : int

    Returns
    -------
    mean_predicted, fraction_positive : ndarray, shape (K,)
    counts : ndarray of int, shape (K,)
        K <= n_bins is the number of non-empty bins.

    See the chapter "Logistic regression", section "Over-confident or well calibrated?".
    """
    y = as_binary_array(y, "y", ndim=1, min_size=1)
    p = as_float_array(p, "p", ndim=1)
    if p.shape != y.shape:
        raise ValueError(f"p has {p.shape[0]} entries but y has {y.shape[0]}")
    if np.any((p < 0) | (p > 1)):
        raise ValueError("p must hold probabilities in [0, 1]")
    if isinstance(n_bins, bool) or not isinstance(n_bins, numbers.Integral) or n_bins < 1:
        raise ValueError(f"n_bins must be a positive integer, got {n_bins!r}")
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    index = np.searchsorted(edges[1:-1], p)
    counts = np.bincount(index, minlength=n_bins)
    keep = counts > 0
    mean_p = np.bincount(index, weights=p, minlength=n_bins)[keep] / counts[keep]
    frac = np.bincount(index, weights=y, minlength=n_bins)[keep] / counts[keep]
    return mean_p, frac, counts[keep]


def expected_calibration_error(y: ArrayLike, p: ArrayLike, n_bins: int = 10) -> float:
    """sum_k (N_k / N) |mean predicted probability in bin k - fraction of 1s in bin k|.

    The bins are those of :func:`reliability_curve`; 0 means calibrated (at this
    resolution). Returns a float.

    See the chapter "Logistic regression", section "Over-confident or well calibrated?".
    """
    mean_p, frac, counts = reliability_curve(y, p, n_bins)
    return float(np.sum(counts * np.abs(mean_p - frac)) / np.sum(counts))


# ---------------------------------------------------------------------------------------------
# Estimators in the scikit-learn style
# ---------------------------------------------------------------------------------------------


class _LinearClassifier(ProbabilisticClassifier):
    """Shared by the two estimators: options, ``decision_function`` (the scores X W + b)."""

    coef_: FloatArray

    def __init__(
        self, l2: float = 1.0, lr: float | None = None, max_iter: int = 10000, tol: float = 1e-8
    ) -> None:
        self.l2, self.lr, self.max_iter, self.tol = _check_fit_options(l2, lr, max_iter, tol)

    def decision_function(self, X: ArrayLike) -> FloatArray:
        """Scores: (N,) for two classes (the log-odds of classes_[1]), (N, C) otherwise."""
        self._check_fitted()
        X = as_2d_float_array(X, "X")
        if X.shape[1] != self.coef_.shape[0]:
            raise ValueError(f"X has {X.shape[1]} columns but the model was fitted on "
                             f"{self.coef_.shape[0]}")
        return X @ self.coef_ + self.intercept_


class LogisticRegression(_LinearClassifier):
    """Binary logistic regression with an L2 penalty, in the scikit-learn style.

    ``fit(X, y)`` accepts any two labels (``classes_[1]`` is the positive class) and calls the
    fitting code of :func:`fit_logistic_regression`. Attributes: ``classes_``, ``coef_`` (D,),
    ``intercept_`` (float), ``n_iter_``, ``converged_`` and, for gradient descent
    (``lr`` given), ``loss_history_`` (the loss before every step). ``predict_proba``,
    ``predict_log_proba``, ``predict`` and ``score`` come from
    :class:`~mlcourse_utils._base.ProbabilisticClassifier`.

    See the chapter "Logistic regression".
    """

    def _fit(self, X: ArrayLike, y: ArrayLike) -> None:
        X, classes, index = check_X_y(X, y)
        if classes.shape[0] != 2:
            raise ValueError(f"y must hold exactly two classes, got {classes.shape[0]}")
        w, b, info = _fit_binary(X, index.astype(float), self.l2, self.lr, self.max_iter,
                                 self.tol)
        self.classes_, self.coef_, self.intercept_ = classes, w, b
        self.n_iter_, self.converged_ = info["n_iter"], info["converged"]
        self.loss_history_ = info["losses"]

    def _class_scores(self, X: ArrayLike) -> FloatArray:
        # log p(c_1 | x) - log p(c_0 | x) = a, so the scores (0, a) are the log posteriors
        # up to a term common to both classes.
        a = self.decision_function(X)
        return np.column_stack([np.zeros_like(a), a])


class SoftmaxRegression(_LinearClassifier):
    """Softmax regression with an L2 penalty, in the scikit-learn style.

    ``fit(X, y)`` calls the fitting code of :func:`fit_softmax_regression`. Attributes:
    ``classes_``, ``coef_`` (D, C), ``intercept_`` (C,, centred), ``n_iter_``,
    ``converged_`` and ``loss_history_`` (gradient descent only).

    See the chapter "Logistic regression".
    """

    def _fit(self, X: ArrayLike, y: ArrayLike) -> None:
        X, classes, index = check_X_y(X, y)
        if classes.shape[0] < 2:
            raise ValueError("y must hold at least two classes")
        W, b, info = _fit_softmax(X, index, classes.shape[0], self.l2, self.lr,
                                  self.max_iter, self.tol)
        self.classes_, self.coef_, self.intercept_ = classes, W, b
        self.n_iter_, self.converged_ = info["n_iter"], info["converged"]
        self.loss_history_ = info["losses"]

    def _class_scores(self, X: ArrayLike) -> FloatArray:
        return self.decision_function(X)            # log p(c | x) + log-sum-exp of the row


# ---------------------------------------------------------------------------------------------
# Evaluating classifiers, non-linear features, stochastic gradient descent and the softmax
# Hessian. (Kept apart from the fitting code above; every function here checks its own inputs.)
# ---------------------------------------------------------------------------------------------

__all__ += [
    "confusion_matrix",
    "precision_recall_f1",
    "roc_curve",
    "roc_auc",
    "polynomial_features",
    "sgd_logistic_regression",
    "softmax_nll_hessian",
]


def _check_label_pair(y_true, y_pred, pred_name="y_pred"):
    """Two 1-D label arrays of one kind (numbers or strings) and the same non-zero length."""
    arrays = []
    for name, y in (("y_true", y_true), (pred_name, y_pred)):
        if isinstance(y, (str, bytes)):
            raise TypeError(f"{name} must be an array of labels, got a single string")
        arr = np.asarray(y)
        if arr.ndim != 1:
            raise ValueError(f"{name} must be 1-D, got shape {arr.shape}")
        if arr.size == 0:
            raise ValueError(f"{name} is empty; at least one sample is needed")
        if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
            raise ValueError(f"{name} contains NaN or inf")
        if arr.dtype.kind not in "biufUS":
            raise TypeError(f"{name} must hold numbers or strings, got dtype {arr.dtype}")
        arrays.append(arr)
    a, p = arrays
    if a.shape[0] != p.shape[0]:
        raise ValueError(f"y_true has {a.shape[0]} entries but {pred_name} has {p.shape[0]}")
    if (a.dtype.kind in "US") != (p.dtype.kind in "US"):
        raise TypeError(f"y_true and {pred_name} must both hold numbers or both strings, got "
                        f"dtypes {a.dtype} and {p.dtype}")
    return a, p


def confusion_matrix(
    y_true: ArrayLike, y_pred: ArrayLike, labels: ArrayLike | None = None
) -> NDArray[np.int64]:
    """Counts of (true class, predicted class) pairs: M[i, j] = #{n : y_n = l_i, yhat_n = l_j}.

    Rows are the true classes and columns the predicted ones, in the order of ``labels``
    (default: ``np.unique`` of both arrays together), as in scikit-learn's
    ``confusion_matrix``. For two classes 0 and 1 it is [[TN, FP], [FN, TP]]: the diagonal
    holds the correct predictions, row sums are the class sizes and column sums the numbers
    of predictions per class. With ``labels`` given, samples whose true or predicted label is
    not among them are left out (a way to look at a subset of classes).

    Parameters
    ----------
    y_true, y_pred : array_like, shape (N,)
        Labels of one kind (numbers or strings).
    labels : array_like, shape (C,), optional
        Distinct labels, in the order of the rows and columns.

    Returns
    -------
    ndarray of int, shape (C, C)

    See the chapter "Logistic regression", section "Evaluating a classifier".
    """
    a, p = _check_label_pair(y_true, y_pred)
    if labels is None:
        try:
            labels = np.unique(np.concatenate([a, p]))
        except TypeError as exc:
            raise TypeError(f"y_true and y_pred must hold sortable labels: {exc}") from None
    else:
        if isinstance(labels, (str, bytes)):
            raise TypeError("labels must be an array of labels, got a single string")
        labels = np.asarray(labels)
        if labels.ndim != 1 or labels.size == 0:
            raise ValueError(f"labels must be a non-empty 1-D array, got shape {labels.shape}")
        if (labels.dtype.kind in "US") != (a.dtype.kind in "US"):
            raise TypeError(f"labels must be of the same kind as y_true (numbers or strings), "
                            f"got dtypes {labels.dtype} and {a.dtype}")
        if np.unique(labels).size != labels.size:
            raise ValueError("labels must be distinct")
    order = np.argsort(labels, kind="stable")
    ordered = labels[order]
    C = labels.shape[0]

    def codes(y):
        # position of every label in `labels`, or -1 for a label that is not there
        at = np.clip(np.searchsorted(ordered, y), 0, C - 1)
        return np.where(ordered[at] == y, order[at], -1)

    ca, cp = codes(a), codes(p)
    both = (ca >= 0) & (cp >= 0)
    counts = np.bincount(ca[both] * C + cp[both], minlength=C * C)
    return counts.reshape(C, C).astype(np.int64)


def precision_recall_f1(y_true: ArrayLike, y_pred: ArrayLike) -> tuple[float, float, float]:
    """Precision, recall and F1 score of the positive class 1 of a binary classifier.

    With TP, FP and FN the numbers of true positives, false positives and false negatives,
    precision = TP / (TP + FP) (of the points predicted positive, the fraction that is
    positive), recall = TP / (TP + FN) (of the positive points, the fraction found) and
    F1 = 2 TP / (2 TP + FP + FN), the harmonic mean of precision and recall when both are
    defined. A ratio 0/0 is returned as NaN: precision when nothing is predicted positive,
    recall when no point is positive, F1 only when both happen (scikit-learn's
    ``precision_recall_fscore_support(..., average="binary", zero_division=np.nan)``).

    Parameters
    ----------
    y_true, y_pred : array_like, shape (N,)
        Labels 0 or 1 (booleans accepted).

    Returns
    -------
    precision, recall, f1 : float

    See the chapter "Logistic regression", section "Evaluating a classifier".
    """
    a = as_binary_array(y_true, "y_true", ndim=1, min_size=1)
    p = as_binary_array(y_pred, "y_pred", ndim=1, min_size=1)
    if a.shape != p.shape:
        raise ValueError(f"y_true has {a.shape[0]} entries but y_pred has {p.shape[0]}")
    tp = float(np.sum(a * p))
    fp = float(np.sum(p)) - tp
    fn = float(np.sum(a)) - tp

    def ratio(num, den):
        return num / den if den > 0 else float("nan")

    return ratio(tp, tp + fp), ratio(tp, tp + fn), ratio(2 * tp, 2 * tp + fp + fn)


def _check_scores(y_true, scores):
    y = as_binary_array(y_true, "y_true", ndim=1, min_size=1)
    s = as_float_array(scores, "scores", ndim=1)
    if s.shape != y.shape:
        raise ValueError(f"y_true has {y.shape[0]} entries but scores has {s.shape[0]}")
    n_pos = int(y.sum())
    if n_pos == 0 or n_pos == y.shape[0]:
        raise ValueError(f"y_true holds only the label {int(y[0])}; the ROC curve needs "
                         "both positive (1) and negative (0) samples")
    return y, s


def roc_curve(y_true: ArrayLike, scores: ArrayLike) -> tuple[FloatArray, FloatArray, FloatArray]:
    """The ROC curve: false and true positive rates of "positive when score >= t" for every t.

    Predicting class 1 for the points whose score is at least a threshold t gives the
    true positive rate TPR(t) = #{positives with s >= t} / N_+ and the false positive rate
    FPR(t) = #{negatives with s >= t} / N_-. As t decreases past each distinct score, both
    rates jump up (by the points that have that score), so the curve is the polyline through
    (FPR(t), TPR(t)) for t = +inf (nothing predicted positive: (0, 0)) and then every
    distinct score from the largest to the smallest (everything positive: (1, 1)). Tied
    scores give one point, so a tie between a positive and a negative is a diagonal segment.
    This is scikit-learn's ``roc_curve(..., drop_intermediate=False)``.

    Parameters
    ----------
    y_true : array_like, shape (N,)
        Labels 0 or 1, both present.
    scores : array_like, shape (N,)
        Finite scores; larger means "more likely positive" (probabilities, log-odds, ...).

    Returns
    -------
    fpr, tpr : ndarray, shape (K + 1,)
        Increasing, from 0 to 1; K is the number of distinct scores.
    thresholds : ndarray, shape (K + 1,)
        +inf, then the distinct scores in decreasing order.

    See the chapter "Logistic regression", section "Evaluating a classifier".
    """
    y, s = _check_scores(y_true, scores)
    order = np.argsort(-s, kind="stable")
    s, y = s[order], y[order]
    last = np.flatnonzero(np.append(s[1:] != s[:-1], True))  # last index of each distinct score
    tp = np.cumsum(y)[last]
    fp = (last + 1) - tp
    fpr = np.concatenate([[0.0], fp / fp[-1]])
    tpr = np.concatenate([[0.0], tp / tp[-1]])
    return fpr, tpr, np.concatenate([[np.inf], s[last]])


def roc_auc(y_true: ArrayLike, scores: ArrayLike) -> float:
    """Area under the ROC curve: the probability that a random positive outranks a random negative.

    AUC = P(s_+ > s_-) + (1/2) P(s_+ = s_-) for a positive and a negative drawn independently
    and uniformly from the data: the fraction of the N_+ N_- (positive, negative) pairs that
    are ordered correctly, ties counting one half. It equals the area under the polyline of
    :func:`roc_curve` (the Mann–Whitney statistic divided by N_+ N_-), and is computed from
    the ranks of the scores (ties get the mean of their ranks): with R_+ the sum of the ranks
    of the positives, AUC = (R_+ - N_+ (N_+ + 1) / 2) / (N_+ N_-). 1 means every positive
    scores above every negative, 1/2 is what random scores give on average, and reversing
    the scores turns AUC into 1 - AUC.

    Parameters
    ----------
    y_true : array_like, shape (N,)
        Labels 0 or 1, both present.
    scores : array_like, shape (N,)
        Finite scores; larger means "more likely positive".

    Returns
    -------
    float

    See the chapter "Logistic regression", section "Evaluating a classifier".
    """
    from scipy.stats import rankdata

    y, s = _check_scores(y_true, scores)
    n_pos = float(y.sum())
    n_neg = y.shape[0] - n_pos
    ranks = rankdata(s)                             # 1..N, ties get their mean rank
    return float((ranks @ y - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def polynomial_features(X: ArrayLike, degree: int) -> FloatArray:
    """All products of the features of total degree 1 to ``degree`` (no constant column).

    For features x_1..x_D the columns are the monomials x_{i_1} x_{i_2} ... x_{i_k} with
    i_1 <= ... <= i_k and 1 <= k <= degree, grouped by degree and, within a degree, in
    lexicographic order of (i_1, ..., i_k): for D = 2 and degree 2, x_1, x_2, x_1^2,
    x_1 x_2, x_2^2. That is scikit-learn's ``PolynomialFeatures(degree,
    include_bias=False)``; the constant is left out because the models have a bias b.
    There are C(D + degree, degree) - 1 columns. A linear classifier on these features has
    a decision boundary that is a polynomial curve of that degree in the original features.

    Parameters
    ----------
    X : array_like, shape (N, D)
    degree : int
        At least 1 (degree 1 returns a copy of X).

    Returns
    -------
    ndarray, shape (N, C(D + degree, degree) - 1)

    See the chapter "Logistic regression", section "Curved boundaries from non-linear
    features".
    """
    X = _check_X(X)
    if isinstance(degree, bool) or not isinstance(degree, numbers.Integral) or degree < 1:
        raise ValueError(f"degree must be a positive integer, got {degree!r}")
    D = X.shape[1]
    # In lexicographic order, the monomials of degree k with first index d are x_d times the
    # monomials of degree k - 1 whose first index is at least d, and those form a contiguous
    # run at the end of degree k - 1: from position first[d] of that degree on.
    columns = [X[:, d] for d in range(D)]
    first, start = list(range(D)), 0                # degree 1: monomial d is at position d
    for _ in range(2, int(degree) + 1):
        end = len(columns)
        new_first = []
        for d in range(D):                          # a loop over features, not samples
            new_first.append(len(columns) - end)
            columns.extend(X[:, d] * columns[c] for c in range(start + first[d], end))
        first, start = new_first, end
    return np.column_stack(columns)


def _positive_int(value, name):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def sgd_logistic_regression(
    X: ArrayLike,
    y: ArrayLike,
    l2: float = 1.0,
    batch_size: int = 16,
    lr: float = 0.5,
    decay: float = 1.0,
    n_epochs: int = 20,
    seed: int | np.random.Generator = 0,
) -> tuple[FloatArray, float, FloatArray]:
    """Minibatch stochastic gradient descent on the penalised log loss of :func:`logistic_nll`.

    The objective is the one of :func:`fit_logistic_regression`, divided by N so that a step
    size does not depend on the size of the data: F(w, b) = L(w, b) / N =
    (1/N) sum_n -log p(y_n | x_n) + (l2 / 2N) ||w||^2. Every epoch visits the samples in a new
    random order, in minibatches B of ``batch_size`` samples (the last one may be smaller).
    Each minibatch gives an unbiased estimate of the gradient of F,

        g_w = (1/|B|) sum_{n in B} (sigma(a_n) - y_n) x_n + (l2 / N) w,
        g_b = (1/|B|) sum_{n in B} (sigma(a_n) - y_n),

    and one step w <- w - eta_t g_w, b <- b - eta_t g_b, with the decreasing step size
    eta_t = lr / (1 + decay t / T) after t steps, where T is the number of steps per epoch:
    the step falls to lr / (1 + decay) after one epoch and to lr / (1 + k decay) after k.
    With decay > 0 the steps satisfy the conditions of Robbins and Monro (1951),
    sum_t eta_t = inf and sum_t eta_t^2 < inf, under which the iterates converge to the
    minimiser; with decay = 0 the step is constant and the iterates only reach a region
    around the minimiser whose size grows with lr. Starts from w = 0, b = 0.

    Parameters
    ----------
    X : array_like, shape (N, D)
    y : array_like, shape (N,)
        Labels 0 or 1.
    l2 : float, default 1
        Penalty strength lambda >= 0 of the summed loss, as in :func:`fit_logistic_regression`.
    batch_size : int, default 16
        Samples per step (N gives full-batch gradient descent on F).
    lr : float, default 0.5
        The first step size, > 0.
    decay : float, default 1
        How fast the step size decreases, >= 0 (0: a constant step).
    n_epochs : int, default 20
        Passes over the data.
    seed : int or numpy Generator, default 0
        The random order of the samples.

    Returns
    -------
    w : ndarray, shape (D,)
    b : float
    losses : ndarray, shape (n_epochs + 1,)
        The penalised loss L(w, b) (summed, as :func:`logistic_nll` with ``l2``) at the start
        and after every epoch.

    See the chapter "Logistic regression", section "Stochastic gradient descent".
    """
    X = _check_X(X)
    y = as_binary_array(y, "y", ndim=1)
    if y.shape[0] != X.shape[0]:
        raise ValueError(f"X has {X.shape[0]} rows but y has {y.shape[0]} entries")
    l2 = as_float(l2, "l2", low=0.0)
    batch_size = _positive_int(batch_size, "batch_size")
    lr = as_float(lr, "lr", low=0.0, low_open=True)
    decay = as_float(decay, "decay", low=0.0)
    n_epochs = _positive_int(n_epochs, "n_epochs")
    if isinstance(seed, np.random.Generator):
        rng = seed
    elif isinstance(seed, numbers.Integral) and not isinstance(seed, bool) and seed >= 0:
        rng = np.random.default_rng(int(seed))
    else:
        raise ValueError(f"seed must be a non-negative integer or a numpy Generator, got {seed!r}")
    return _sgd(X, y, l2, batch_size, lr, decay, n_epochs, rng)


def _sgd(X, y, l2, batch_size, lr, decay, n_epochs, rng):
    """Minibatch SGD on L(w, b) / N for checked inputs; see :func:`sgd_logistic_regression`."""
    N, D = X.shape
    steps_per_epoch = -(-N // batch_size)           # T = ceil(N / batch_size)
    w, b, t = np.zeros(D), 0.0, 0
    losses = [_binary_nll_and_grad(w, b, X, y, l2)[0]]
    for _ in range(n_epochs):
        order = rng.permutation(N)                  # a new random order every epoch
        for start in range(0, N, batch_size):       # a loop over minibatches
            batch = order[start:start + batch_size]
            Xb = X[batch]
            with np.errstate(under="ignore"):
                r = _sigmoid(Xb @ w + b) - y[batch]  # residuals sigma(a_n) - y_n
            eta = lr / (1.0 + decay * t / steps_per_epoch)
            w = w - eta * (r @ Xb / len(batch) + (l2 / N) * w)
            b = b - eta * float(np.mean(r))
            t += 1
        losses.append(_binary_nll_and_grad(w, b, X, y, l2)[0])
    return w, float(b), np.array(losses)


def softmax_nll_hessian(
    W: ArrayLike, b: ArrayLike, X: ArrayLike, l2: float = 0.0
) -> FloatArray:
    """Hessian of :func:`softmax_nll` with respect to all weights and biases.

    The parameters are ordered class by class, theta = (w~_1, ..., w~_C) with
    w~_c = (w_c, b_c) (the D weights of class c followed by its bias), and with
    x~_n = (x_n, 1) and p_n = softmax(x_n^T W + b) the Hessian is the sum of Kronecker
    products

        H = sum_n (diag(p_n) - p_n p_n^T) kron (x~_n x~_n^T) + l2 * (I_C kron diag(1, ..., 1, 0)),

    a ((D + 1) C, (D + 1) C) matrix; block (c, c') is sum_n (delta_cc' p_nc - p_nc p_nc')
    x~_n x~_n^T. It does not depend on the labels. Each term is positive semi-definite (a
    covariance matrix of the one-hot class vector, times an outer product), so the loss is
    convex. It is singular when l2 = 0: adding the same vector to every w~_c changes no
    probability, and H (1_C kron v) = 0 for every v in R^(D + 1).

    Parameters
    ----------
    W : array_like, shape (D, C)
    b : array_like, shape (C,)
    X : array_like, shape (N, D)
    l2 : float, default 0

    Returns
    -------
    ndarray, shape ((D + 1) C, (D + 1) C)

    See the chapter "Logistic regression", section "More than two classes: softmax
    regression".
    """
    X = as_2d_float_array(X, "X", min_rows=1)
    W = as_float_array(W, "W", ndim=2)
    b = as_float_array(b, "b", ndim=1)
    if W.shape[0] != X.shape[1]:
        raise ValueError(f"W has {W.shape[0]} rows but X has {X.shape[1]} columns (features)")
    if b.shape[0] != W.shape[1]:
        raise ValueError(f"b has {b.shape[0]} entries but W has {W.shape[1]} columns (classes)")
    l2 = as_float(l2, "l2", low=0.0)
    (N, D), C = X.shape, W.shape[1]
    Xt = np.column_stack([X, np.ones(N)])           # rows x~_n = (x_n, 1)
    _, P = _log_softmax_rows(X @ W + b)
    # sum_n diag(p_n) kron x~_n x~_n^T: block c on the diagonal is X~^T diag(p_.c) X~
    H = np.zeros((C, D + 1, C, D + 1))
    for c in range(C):                              # a loop over classes
        H[c, :, c, :] = (Xt * P[:, c:c + 1]).T @ Xt
    # minus sum_n (p_n kron x~_n)(p_n kron x~_n)^T
    Z = (P[:, :, None] * Xt[:, None, :]).reshape(N, C * (D + 1))
    H = H.reshape(C * (D + 1), C * (D + 1)) - Z.T @ Z
    penalised = np.tile(np.append(np.ones(D), 0.0), C)
    H[np.diag_indices_from(H)] += l2 * penalised
    return 0.5 * (H + H.T)                          # exactly symmetric
