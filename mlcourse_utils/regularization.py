"""Ridge and LASSO: least squares with an L2 or an L1 penalty on the weights.

Both fit y ~ w^T x + b with an intercept b that is never penalised, so the data are centred
first: b = mean(y) - w^T mean(X), and the weights solve a problem on the centred data X_c, y_c.

* Ridge minimises ||y - X w - b||^2 + lam ||w||^2 (sums, scikit-learn's ``Ridge(alpha=lam)``);
  its minimiser solves (X_c^T X_c + lam I) w = X_c^T y_c, a symmetric positive definite system
  for lam > 0 (solved by Cholesky; with N < D the equivalent N x N system is solved instead).
* The LASSO minimises (1/2N) ||y - X w - b||^2 + lam ||w||_1 (scikit-learn's
  ``Lasso(alpha=lam)``). It has no closed form; cyclic coordinate descent solves it one weight
  at a time, each step a soft thresholding. The updates use the Gram matrix G = X_c^T X_c / N,
  formed once, so that a step costs O(D) instead of O(N).

Note the two scalings: ridge's lam multiplies a penalty added to a *sum* of squares, the
LASSO's lam one added to half a *mean* of squares (the conventions of scikit-learn).

See the chapter "Ridge and LASSO".
"""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np
from numpy.typing import ArrayLike
from scipy import linalg

from ._validation import FloatArray, as_1d_float_array, as_float, as_float_array, row_blocks
from .mle import _regression_inputs, linear_regression_mle

__all__ = [
    "ridge_fit",
    "soft_threshold",
    "lasso_objective",
    "lasso_fit",
    "lasso_path",
    "lasso_lambda_max",
    "ridge_map_lambda",
    "lasso_map_lambda",
]


# ---------------------------------------------------------------------------------------------
# Shared pieces: centred cross products and a positive definite solve
# ---------------------------------------------------------------------------------------------


def _centred_cross_products(X, y):
    """Means and the centred cross products X_c^T X_c (D, D) and X_c^T y_c (D,).

    The centred targets are written next to the centred features, Z = [X_c, y_c], so that one
    product Z^T Z (a symmetric rank-N update in BLAS) gives both in a single pass over the
    data. Centring before multiplying avoids the cancellation of X^T X - N mean mean^T. Z is
    formed and multiplied block by block of rows, in one buffer that stays in cache, so no
    copy of X is made.
    """
    n, d = X.shape
    x_mean, y_mean = X.mean(axis=0), float(y.mean())
    ZtZ = np.zeros((d + 1, d + 1))
    blocks = row_blocks((n, d + 1))
    buffer = np.empty((blocks[0].stop - blocks[0].start if blocks else 0, d + 1))
    for rows in blocks:
        Z = buffer[: X[rows].shape[0]]
        np.subtract(X[rows], x_mean, out=Z[:, :d])
        np.subtract(y[rows], y_mean, out=Z[:, d])
        ZtZ += Z.T @ Z
    return x_mean, y_mean, ZtZ[:d, :d], ZtZ[:d, d]


def _solve_positive_definite(A, b):
    """Solve A x = b for a symmetric positive definite A by Cholesky (no explicit inverse).

    When rounding makes A numerically indefinite (a penalty far below the scale of the data),
    fall back to a least-squares solve, which still returns a sensible solution.
    """
    try:
        return linalg.cho_solve(linalg.cho_factor(A, check_finite=False), b, check_finite=False)
    except linalg.LinAlgError:
        return linalg.lstsq(A, b, check_finite=False)[0]


def _check_lam(lam):
    return as_float(lam, "lam", low=0.0)


def _check_tol_max_iter(tol, max_iter):
    tol = as_float(tol, "tol", low=0.0)
    if isinstance(max_iter, bool) or not isinstance(max_iter, numbers.Integral):
        raise TypeError(f"max_iter must be an integer, got {max_iter!r}")
    if max_iter < 1:
        raise ValueError(f"max_iter must be >= 1, got {max_iter}")
    return tol, int(max_iter)


# ---------------------------------------------------------------------------------------------
# Ridge
# ---------------------------------------------------------------------------------------------


def ridge_fit(X: ArrayLike, y: ArrayLike, lam: float) -> tuple[FloatArray, float]:
    """Ridge regression: minimise ||y - X w - b||^2 + lam ||w||^2 over w and b.

    The intercept b is not penalised. Setting the derivative with respect to b to zero gives
    b = mean(y) - w^T mean(X); substituting it leaves a ridge problem on the centred data, with
    normal equations (X_c^T X_c + lam I) w = X_c^T y_c. For lam > 0 the matrix is positive
    definite, so w is unique and is found by a Cholesky solve. When N < D the D x D system is
    replaced by the N x N one of w = X_c^T (X_c X_c^T + lam I)^{-1} y_c (the same w). lam = 0
    is ordinary least squares, solved by :func:`mlcourse_utils.mle.linear_regression_mle`
    (minimum-norm w when X_c^T X_c is singular). Equals scikit-learn's ``Ridge(alpha=lam)``.

    Parameters
    ----------
    X : array_like, shape (N, D)
    y : array_like, shape (N,)
    lam : float
        The penalty strength, >= 0 (multiplies the penalty added to the *sum* of squares).

    Returns
    -------
    w : ndarray, shape (D,)
    b : float

    See the chapter "Ridge and LASSO", section "Ridge regression".
    """
    X, y = _regression_inputs(X, y)
    lam = _check_lam(lam)
    if lam == 0.0:
        w, b, _ = linear_regression_mle(X, y)
        return w, b
    n, d = X.shape
    if n >= d:
        x_mean, y_mean, XtX, Xty = _centred_cross_products(X, y)
        XtX[np.diag_indices(d)] += lam                      # X_c^T X_c + lam I
        w = _solve_positive_definite(XtX, Xty)
    else:
        x_mean, y_mean = X.mean(axis=0), float(y.mean())
        Xc = X - x_mean
        K = Xc @ Xc.T
        K[np.diag_indices(n)] += lam                        # X_c X_c^T + lam I
        w = Xc.T @ _solve_positive_definite(K, y - y_mean)
    return w, float(y_mean - x_mean @ w)


def ridge_map_lambda(sigma2: float, tau2: float) -> float:
    """The ridge penalty for which ridge regression is the MAP estimate: lam = sigma2 / tau2.

    Model y_n = w^T x_n + b + eps_n with eps_n ~ N(0, sigma2), prior w ~ N(0, tau2 I) and a flat
    prior on b. The negative log posterior is ||y - X w - b||^2 / (2 sigma2) + ||w||^2 / (2 tau2)
    plus a constant; multiplied by 2 sigma2 it is the ridge objective of :func:`ridge_fit` with
    lam = sigma2 / tau2.

    Parameters
    ----------
    sigma2 : float
        Noise variance, > 0.
    tau2 : float
        Prior variance of each weight, > 0.

    Returns
    -------
    float

    See the chapter "Ridge and LASSO", section "Penalties as priors".
    """
    sigma2 = as_float(sigma2, "sigma2", low=0.0, low_open=True)
    tau2 = as_float(tau2, "tau2", low=0.0, low_open=True)
    return sigma2 / tau2


def lasso_map_lambda(sigma2: float, scale: float, n_samples: int) -> float:
    """The LASSO penalty for which the LASSO is the MAP estimate: lam = sigma2 / (N scale).

    Model y_n = w^T x_n + b + eps_n with eps_n ~ N(0, sigma2), independent Laplace priors
    p(w_d) = exp(-|w_d| / scale) / (2 scale) and a flat prior on b. The negative log posterior
    is ||y - X w - b||^2 / (2 sigma2) + ||w||_1 / scale plus a constant; multiplied by
    sigma2 / N it is the LASSO objective of :func:`lasso_objective` with
    lam = sigma2 / (N scale).

    Parameters
    ----------
    sigma2 : float
        Noise variance, > 0.
    scale : float
        Scale of the Laplace prior, > 0 (its variance is 2 scale^2).
    n_samples : int
        N, the number of training samples, >= 1.

    Returns
    -------
    float

    See the chapter "Ridge and LASSO", section "Penalties as priors".
    """
    sigma2 = as_float(sigma2, "sigma2", low=0.0, low_open=True)
    scale = as_float(scale, "scale", low=0.0, low_open=True)
    if isinstance(n_samples, bool) or not isinstance(n_samples, numbers.Integral):
        raise TypeError(f"n_samples must be an integer, got {n_samples!r}")
    if n_samples < 1:
        raise ValueError(f"n_samples must be >= 1, got {n_samples}")
    return sigma2 / (int(n_samples) * scale)


# ---------------------------------------------------------------------------------------------
# LASSO
# ---------------------------------------------------------------------------------------------


def soft_threshold(z: ArrayLike, t: float) -> float | FloatArray:
    """The soft-thresholding operator S(z, t) = sign(z) max(|z| - t, 0), elementwise.

    It shrinks z towards 0 by t and sets it to exactly 0 when |z| <= t. It is the minimiser of
    (1/2)(v - z)^2 + t |v| over v, the one-dimensional LASSO problem.

    Parameters
    ----------
    z : float or array_like
    t : float
        The threshold, >= 0.

    Returns
    -------
    float (for a scalar z) or ndarray of z's shape

    See the chapter "Ridge and LASSO", section "Soft thresholding".
    """
    z = as_float_array(z, "z")
    t = as_float(t, "t", low=0.0)
    out = np.sign(z) * np.maximum(np.abs(z) - t, 0.0) + 0.0     # + 0.0 turns -0.0 into 0.0
    return float(out) if out.ndim == 0 else out


def lasso_objective(X: ArrayLike, y: ArrayLike, w: ArrayLike, b: float, lam: float) -> float:
    """The LASSO objective (1/2N) ||y - X w - b||^2 + lam ||w||_1 (b is not penalised).

    This is the objective scikit-learn's ``Lasso(alpha=lam)`` minimises.

    Parameters
    ----------
    X : array_like, shape (N, D)
    y : array_like, shape (N,)
    w : array_like, shape (D,)
    b : float
    lam : float
        >= 0.

    Returns
    -------
    float

    See the chapter "Ridge and LASSO", section "The LASSO".
    """
    X, y = _regression_inputs(X, y)
    w = as_1d_float_array(w, "w")
    if w.shape[0] != X.shape[1]:
        raise ValueError(f"w has {w.shape[0]} entries but X has {X.shape[1]} columns")
    b = as_float(b, "b")
    lam = _check_lam(lam)
    residuals = y - X @ w - b
    return float(residuals @ residuals / (2 * X.shape[0]) + lam * np.abs(w).sum())


def lasso_lambda_max(X: ArrayLike, y: ArrayLike) -> float:
    """The smallest lam for which the LASSO solution is w = 0: max_d |x_d^T (y - mean(y))| / N.

    At w = 0 (and b = mean(y)) the subgradient condition of coordinate d reads
    |x_d^T (y - mean(y))| / N <= lam; it holds for every d exactly when lam is at least this
    value.

    Parameters
    ----------
    X : array_like, shape (N, D)
    y : array_like, shape (N,)

    Returns
    -------
    float

    See the chapter "Ridge and LASSO", section "Regularisation paths and choosing lambda".
    """
    X, y = _regression_inputs(X, y)
    return float(np.max(np.abs(X.T @ (y - y.mean())), initial=0.0) / X.shape[0])


def _cd_sweep(G, c, lam, w, q, coords):
    """One sweep of cyclic coordinate descent over ``coords``; returns the largest change.

    For f(w) = (1/2) w^T G w - c^T w + lam ||w||_1, the best w_j with the other weights fixed is
    S(rho_j, lam) / G_jj with rho_j = c_j - sum_{k != j} G_jk w_k = c_j - (G w)_j + G_jj w_j.
    ``w`` (a list) and ``q`` = G w (an array) are updated in place: O(D) per coordinate.
    """
    largest = 0.0
    for j in coords:
        rho = c[j] - q[j] + G[j, j] * w[j]
        new = math.copysign(max(abs(rho) - lam, 0.0), rho) / G[j, j]   # S(rho_j, lam) / G_jj
        if new != w[j]:
            largest = max(largest, abs(new - w[j]))
            q += (new - w[j]) * G[j]            # G is symmetric: row j is column j
            w[j] = new
    return largest


def _exact_on_active_set(G, c, lam, w, active):
    """A better point on the current face of f: the minimiser for these nonzero weights and signs.

    With the active set A and the signs s of w_A fixed, f is a quadratic whose minimiser solves
    the linear system G_AA v = c_A - lam s (and v = 0 outside A). If some entry of v has the
    wrong sign, the step from w_A towards v stops where the first weight reaches zero (f
    decreases all along it); that weight is set to 0. Returns the new w, or None when the
    system cannot be solved or f would not decrease.
    """
    w_active = np.array([w[j] for j in active])
    signs = np.sign(w_active)
    try:
        target = np.linalg.solve(G[np.ix_(active, active)], c[active] - lam * signs)
    except np.linalg.LinAlgError:                   # singular: leave it to the sweeps
        return None
    flips = np.flatnonzero(np.sign(target) != signs)
    if flips.size:                      # stop where the first weight reaches zero
        fractions = w_active[flips] / (w_active[flips] - target[flips])
        target = w_active + fractions.min() * (target - w_active)
        target[flips[np.argmin(fractions)]] = 0.0
    candidate = np.zeros(len(w))
    candidate[active] = target

    def f(v):
        return 0.5 * v @ (G @ v) - c @ v + lam * np.abs(v).sum()

    return candidate if f(candidate) <= f(np.array(w)) else None


def _coordinate_descent(G, c, lam, w, tol, max_iter):
    """Minimise f(w) = (1/2) w^T G w - c^T w + lam ||w||_1 by cyclic coordinate descent from w.

    With G = X_c^T X_c / N and c = X_c^T y_c / N, f is the LASSO objective on centred data up
    to a constant. :func:`_cd_sweep` is the algorithm; this function decides what to sweep,
    with two standard accelerations. After a sweep over all coordinates, only the nonzero
    weights (the active set) are swept until they settle. And when two sweeps in a row leave
    the active set and its signs unchanged, the exact minimiser for them (a linear system,
    :func:`_exact_on_active_set`) is tried. The search stops after a sweep over *all*
    coordinates in which no weight changes by more than tol. Returns ``(w, sweeps)``.
    """
    c_list = c.tolist()
    everything = [j for j in range(len(c_list)) if G[j, j] > 0.0]   # constant features keep 0
    w = [float(v) for v in w]
    q = G @ np.array(w)
    coords, signs = everything, None
    for sweep in range(1, max_iter + 1):
        largest = _cd_sweep(G, c_list, lam, w, q, coords)
        if coords is everything:
            if largest <= tol:
                return np.array(w) + 0.0, sweep      # + 0.0 turns -0.0 into 0.0
            coords, signs = [j for j in everything if w[j] != 0.0], None   # the active set
            continue
        previous, signs = signs, np.sign([w[j] for j in coords])
        if largest > tol and np.array_equal(signs, previous) and np.all(signs != 0):
            exact = _exact_on_active_set(G, c, lam, w, coords)
            if exact is not None:
                w[:], q[:], largest = exact.tolist(), G @ exact, 0.0
        if largest <= tol:
            coords = everything          # settled on the active set: check every coordinate
    warnings.warn(f"coordinate descent did not converge in {max_iter} sweeps (the last changed "
                  f"a weight by {largest:.3g} > tol = {tol:g}); increase max_iter or tol",
                  RuntimeWarning, stacklevel=3)
    return np.array(w) + 0.0, max_iter


def _lasso_gram(X, y):
    """Means, G = X_c^T X_c / N and c = X_c^T y_c / N for :func:`_coordinate_descent`."""
    x_mean, y_mean, XtX, Xty = _centred_cross_products(X, y)
    n = X.shape[0]
    return x_mean, y_mean, XtX / n, Xty / n


def lasso_fit(
    X: ArrayLike, y: ArrayLike, lam: float, tol: float = 1e-8, max_iter: int = 10000
) -> tuple[FloatArray, float]:
    """The LASSO: minimise (1/2N) ||y - X w - b||^2 + lam ||w||_1 by cyclic coordinate descent.

    The intercept is not penalised: b = mean(y) - w^T mean(X), and w solves the problem on
    centred data. Coordinate descent starts from w = 0 and updates one weight at a time to its
    exact minimiser given the others, w_j = S(rho_j, lam) / (x_j^T x_j / N) with rho_j the
    correlation of feature j with the residual that leaves j out (see
    :func:`_coordinate_descent`); it stops when the largest change of a weight in a sweep over
    all coordinates is <= tol (sweeps over the active set and exact steps on it speed this up,
    see :func:`_coordinate_descent`). The Gram matrix X_c^T X_c / N is formed once, so a sweep
    costs O(D^2) whatever N. On standardised data the weights are within 1e-6 of scikit-learn's
    ``Lasso(alpha=lam, tol=1e-12)``.

    Parameters
    ----------
    X : array_like, shape (N, D)
    y : array_like, shape (N,)
    lam : float
        The penalty strength, >= 0 (multiplies the penalty added to half the *mean* of squares).
    tol : float
        Stop when no weight changes by more than tol in a sweep.
    max_iter : int
        The largest number of sweeps (a ``RuntimeWarning`` when reached).

    Returns
    -------
    w : ndarray, shape (D,)
    b : float

    See the chapter "Ridge and LASSO", section "Coordinate descent".
    """
    X, y = _regression_inputs(X, y)
    lam = _check_lam(lam)
    tol, max_iter = _check_tol_max_iter(tol, max_iter)
    x_mean, y_mean, G, c = _lasso_gram(X, y)
    w, _ = _coordinate_descent(G, c, lam, np.zeros(X.shape[1]), tol, max_iter)
    return w, float(y_mean - x_mean @ w)


def lasso_path(
    X: ArrayLike, y: ArrayLike, lams: ArrayLike, tol: float = 1e-8, max_iter: int = 10000
) -> FloatArray:
    """LASSO weights for every penalty in ``lams``: an array of shape (len(lams), D).

    Row i holds the weights for lams[i], whatever the order of ``lams``. The fits run from the
    largest penalty down, each coordinate descent starting from the previous solution (a warm
    start): neighbouring penalties have nearby solutions, so every fit after the first takes
    only a few sweeps. The Gram matrix is formed once for the whole path. The intercepts are
    mean(y) - w^T mean(X) for each row w.

    Parameters
    ----------
    X : array_like, shape (N, D)
    y : array_like, shape (N,)
    lams : array_like, shape (L,)
        Penalties >= 0, in any order, L >= 1.
    tol, max_iter
        As in :func:`lasso_fit`, for each penalty.

    Returns
    -------
    ndarray, shape (L, D)

    See the chapter "Ridge and LASSO", section "Regularisation paths and choosing lambda".
    """
    X, y = _regression_inputs(X, y)
    lams = as_1d_float_array(lams, "lams", min_size=1)
    if np.any(lams < 0):
        raise ValueError(f"lams must be >= 0, found {lams[lams < 0][0]!r}")
    tol, max_iter = _check_tol_max_iter(tol, max_iter)
    _, _, G, c = _lasso_gram(X, y)
    W = np.empty((lams.shape[0], X.shape[1]))
    w = np.zeros(X.shape[1])
    for i in np.argsort(-lams, kind="stable"):          # largest penalty first
        w, _ = _coordinate_descent(G, c, float(lams[i]), w, tol, max_iter)
        W[i] = w
    return W
