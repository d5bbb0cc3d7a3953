"""Ridge and LASSO: least squares with an L2 or an L1 penalty on the weights.

Both fit y ~ w^T x + b with an intercept b that is never penalised, so the data are centred
first: b = mean(y) - w^T mean(X), and the weights solve a problem on the centred data X_c, y_c.

* Ridge minimises ||y - X w - b||^2 + lam ||w||^2 (sums, scikit-learn's ``Ridge(alpha=lam)``);
  its minimiser solves (X_c^T X_c + lam I) w = X_c^T y_c, a symmetric positive definite system
  for lam > 0 (solved by Cholesky; with N < D the equivalent N x N system is solved instead).
* The LASSO minimises (1/2N) ||y - X w - b||^2 + lam ||w||_1 (scikit-learn's
  ``Lasso(alpha=lam)``). It has no closed form; cyclic coordinate descent solves it one weight
  at a time, each step a soft thresholding. The updates use the Gram matrix G = X_c^T X_c / N,
  formed once, so that a step costs O(D) instead of O(N); when N < 10 D, only the Gram matrix
  of a working set of features (the strong rule, checked against all features).

Note the two scalings: ridge's lam multiplies a penalty added to a *sum* of squares, the
LASSO's lam one added to half a *mean* of squares (the conventions of scikit-learn).

See the chapter "Ridge and LASSO".
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike
from scipy import linalg

from ._validation import (
    FloatArray,
    as_1d_float_array,
    as_2d_float_array,
    as_float,
    as_float_array,
    check_same_length,
    row_blocks,
)
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


#: With at least this many samples per feature (N >> D) the LASSO works on the whole Gram
#: matrix (:func:`_lasso_gram`); with fewer, on working sets (:func:`_lasso_working_set`).
_GRAM_SAMPLES_PER_FEATURE = 10
#: At most this many features enter the working set at once (those most correlated with the
#: residual first).
_WORKING_SET_STEP = 64


class _WorkingSet:
    """The features coordinate descent works on, with their Gram matrix; for D not << N.

    Holds the centred columns X_c[:, W] of the features in the working set W (in the order
    they entered), G_W = X_c[:, W]^T X_c[:, W] / N and c_W = X_c[:, W]^T y_c / N, grown by
    :meth:`add` at a cost of O(N |W|) per new feature. :meth:`correlations` gives
    X_c^T r / N for all D features from one product r^T X (X is never centred or copied: the
    mean is subtracted from the product). No D x D matrix is formed.
    """

    def __init__(self, X, y):
        self.X, self.n = X, X.shape[0]
        self.x_mean, self.y_mean = X.mean(axis=0), float(y.mean())
        self.yc = y - self.y_mean
        self.position = np.full(X.shape[1], -1)     # index in W, -1 outside, -2 constant
        self.features = np.empty(0, dtype=np.intp)
        self.columns = np.empty((self.n, 0), order="F")
        self.G, self.c = np.empty((0, 0)), np.empty(0)

    def correlations(self, r):
        """X_c^T r / N for a residual r (X_c^T r = X^T r - mean(X) sum(r))."""
        return (r @ self.X - self.x_mean * r.sum()) / self.n

    def residual(self, w):
        """y_c - X_c[:, W] w for weights w on W."""
        return self.yc - self.columns[:, : len(w)] @ w

    def add(self, candidates):
        """Add the candidates not yet in W (constant features never enter: their weight is 0)."""
        new = np.asarray(candidates, dtype=np.intp)
        new = new[self.position[new] == -1]
        if new.size == 0:
            return
        block = self.X[:, new] - self.x_mean[new]
        constant = np.ptp(self.X[:, new], axis=0) == 0
        self.position[new[constant]] = -2
        new, block = new[~constant], block[:, ~constant]
        m, k = len(self.features), len(new)
        if k == 0:
            return
        if m + k > self.columns.shape[1]:           # grow the buffers (doubling)
            size = max(2 * self.columns.shape[1], m + k, 16)
            columns = np.empty((self.n, size), order="F")
            columns[:, :m] = self.columns[:, :m]
            G = np.empty((size, size))
            G[:m, :m] = self.G[:m, :m]
            self.columns, self.G_buffer = columns, G
        else:
            G = self.G_buffer
        self.columns[:, m: m + k] = block
        cross = self.columns[:, :m].T @ block / self.n
        G[:m, m: m + k] = cross
        G[m: m + k, :m] = cross.T
        G[m: m + k, m: m + k] = block.T @ block / self.n
        self.G = G[: m + k, : m + k]
        self.c = np.concatenate([self.c, block.T @ self.yc / self.n])
        self.position[new] = np.arange(m, m + k)
        self.features = np.concatenate([self.features, new])


def _cd_active_first(G, c, lam, w, tol, max_iter, factor):
    """Coordinate descent on f(w) = (1/2) w^T G w - c^T w + lam ||w||_1 from w, sweeping the
    nonzero weights one by one and the zero ones all at once; returns (w, sweeps, converged).

    A sweep first updates the nonzero weights with :func:`_cd_sweep`. A zero weight j stays
    zero under its update exactly when |rho_j| = |c_j - (G w)_j| <= lam, so the zero weights
    are then checked together, in one vectorised comparison, and only those that fail it are
    updated (one by one, :func:`_cd_sweep`): a sweep over every coordinate, in the order
    nonzero, unchanged zero, updated zero, at the cost of the nonzero ones. Before each sweep,
    exact steps on the nonzero weights (:func:`_exact_steps`, with the Cholesky factor kept in
    ``factor``) jump to the minimiser for their current signs, so after a warm start one step
    and one sweep usually suffice. Stops after a sweep in which no weight changes by more than
    ``tol``.
    """
    c_list = c.tolist()
    w = [float(v) for v in w]
    q = G @ np.array(w)
    usable = np.diag(G) > 0.0                       # constant features keep 0
    for sweep in range(1, max_iter + 1):
        active = [j for j, v in enumerate(w) if v != 0.0]
        if active and _exact_steps(G, c, lam, w, active, factor):
            q = G @ np.array(w)
            active = [j for j in active if w[j] != 0.0]
        largest = _cd_sweep(G, c_list, lam, w, q, active)
        zero = np.flatnonzero((np.array(w) == 0.0) & usable)
        moving = zero[np.abs(c[zero] - q[zero]) > lam]
        if moving.size:
            largest = max(largest, _cd_sweep(G, c_list, lam, w, q, moving.tolist()))
        if largest <= tol:
            return np.array(w) + 0.0, sweep, True   # + 0.0 turns -0.0 into 0.0
    return np.array(w) + 0.0, max_iter, False


class _FaceFactor:
    """A Cholesky factor L L^T = G_SS for a set S of features that holds the active set A.

    Coordinate descent along a path of penalties changes the active set by a few features
    at a time. When features join A they are appended to S and L grows by a block (one
    triangular solve: O(|S|^2) per new feature instead of O(|S|^3) for a new factorisation).
    When features leave A they stay in S and :meth:`solve` holds their weights at zero
    instead; once more than ``stale`` of them have gathered, L is formed again on A alone.
    ``order`` lists S in the order of L's rows.
    """

    stale = 16

    def __init__(self):
        self.order, self.L = [], np.empty((0, 0))

    def update(self, G, active):
        """Make S hold ``active``; raises LinAlgError if G_SS is singular to rounding."""
        known = set(self.order)
        if len(known) - len(known.intersection(active)) > self.stale:
            self.order, self.L, known = [], np.empty((0, 0)), set()
        new = [j for j in active if j not in known]
        if not new:
            return
        m, k = len(self.order), len(new)
        Y = linalg.solve_triangular(self.L, G[np.ix_(self.order, new)], lower=True,
                                    check_finite=False) if m else np.empty((0, k))
        corner = linalg.cholesky(G[np.ix_(new, new)] - Y.T @ Y, lower=True, check_finite=False)
        L = np.zeros((m + k, m + k))
        L[:m, :m], L[m:, :m], L[m:, m:] = self.L, Y.T, corner
        self.order, self.L = self.order + new, L

    def solve(self, rhs, fixed):
        """v with G_SS v = rhs + (multipliers on ``fixed``) and v = 0 on ``fixed`` (positions in
        S): the minimiser of (1/2) v^T G_SS v - rhs^T v with those weights held at zero."""
        v = linalg.cho_solve((self.L, True), rhs, check_finite=False)
        if len(fixed):
            E = np.zeros((len(self.order), len(fixed)))
            E[fixed, np.arange(len(fixed))] = 1.0
            Z = linalg.cho_solve((self.L, True), E, check_finite=False)   # G_SS^{-1} E
            v = v - Z @ np.linalg.solve(Z[fixed], v[fixed])
            v[fixed] = 0.0
        return v


def _exact_steps(G, c, lam, w, active, factor):
    """Exact steps on the active set, as in :func:`_exact_on_active_set`; w (a list) in place.

    The minimiser for the nonzero weights A and their signs s solves G_AA v = c_A - lam s,
    with the Cholesky factor kept up to date in ``factor`` (a :class:`_FaceFactor`). If a
    weight would change sign on the way from w_A to v, the step stops where the first one
    reaches zero, that weight leaves A and the step is taken again for the smaller set: the
    active-set method for this quadratic program, each step lowering f. Returns whether w
    changed (not when G_AA is singular to rounding, as when A holds more features than there
    are samples).
    """
    changed = False
    try:
        factor.update(G, active)
    except linalg.LinAlgError:
        factor.__init__()
        return changed
    order, L = factor.order, factor.L
    c_order = c[order]
    while True:
        w_order = np.array([w[j] for j in order])
        signs = np.sign(w_order)
        fixed = np.flatnonzero(signs == 0)
        try:
            target = factor.solve(c_order - lam * signs, fixed)
        except np.linalg.LinAlgError:
            return changed
        flips = np.flatnonzero(np.sign(target) != signs)
        if flips.size:                              # stop where the first weight reaches zero
            fractions = w_order[flips] / (w_order[flips] - target[flips])
            target = w_order + fractions.min() * (target - w_order)
            target[flips[np.argmin(fractions)]] = 0.0
            target[fixed] = 0.0

        def f(v):                                   # f on S (0 outside), G_SS = L L^T
            u = L.T @ v
            return 0.5 * (u @ u) - c_order @ v + lam * np.abs(v).sum()

        if not f(target) <= f(w_order):             # rounding (nearly singular G_AA)
            return changed
        for j, v in zip(order, target.tolist(), strict=True):
            w[j] = v
        changed = True
        if not flips.size or not np.any(target):
            return changed


def _lasso_working_set(X, y, lams, tol, max_iter):
    """LASSO weights for every penalty in ``lams`` when N is not >> D; (W, x_mean, y_mean).

    Covariance-free in all D features: coordinate descent (:func:`_cd_active_first`) runs on
    a working set of features, with the Gram matrix of those only (:class:`_WorkingSet`), and
    one product X_c^T r checks every other feature. A feature outside the set keeps its zero
    weight under coordinate descent exactly when |x_j^T r| / N <= lam (r the residual); the
    features that fail this check join the set (at most ``_WORKING_SET_STEP`` at a time, the
    most correlated first) and the set is solved again. When none fails, the last sweep over
    the set, followed by the unchanged zeros outside it, is a sweep over all coordinates in
    which no weight moved by more than tol: the stopping rule of :func:`lasso_fit`.
    The penalties run from the largest down, each fit starting from the previous one (warm
    starts); before each, the sequential strong rule (Tibshirani et al., 2012) adds the
    features with |x_j^T r| / N >= 2 lam - lam_previous, which usually are all that will be
    needed. So a sweep costs O(|active|) Python steps and the set stays near the active set,
    even with D = 5 000 features.
    """
    lams = np.asarray(lams, dtype=float)
    ws = _WorkingSet(X, y)
    rho = ws.correlations(ws.yc)                    # correlations at w = 0
    lam_previous = float(np.max(np.abs(rho), initial=0.0))
    out = np.zeros((lams.shape[0], X.shape[1]))
    w, factor = np.zeros(0), _FaceFactor()
    for i in np.argsort(-lams, kind="stable"):      # largest penalty first
        lam = float(lams[i])
        strong = np.flatnonzero((np.abs(rho) >= 2 * lam - lam_previous) & (ws.position == -1))
        ws.add(strong[np.argsort(-np.abs(rho[strong]))][:_WORKING_SET_STEP])
        sweeps = 0
        while True:
            w = np.concatenate([w, np.zeros(len(ws.features) - len(w))])
            w, used, converged = _cd_active_first(ws.G, ws.c, lam, w, tol, max_iter - sweeps,
                                                  factor)
            sweeps += used
            rho = ws.correlations(ws.residual(w))
            outside = np.flatnonzero((np.abs(rho) > lam) & (ws.position == -1))
            if not converged or outside.size == 0:
                break
            ws.add(outside[np.argsort(-np.abs(rho[outside]))][:_WORKING_SET_STEP])
        if not converged or outside.size:
            warnings.warn(f"coordinate descent did not converge in {max_iter} sweeps at "
                          f"lam = {lam:g}; increase max_iter or tol", RuntimeWarning,
                          stacklevel=3)
        out[i, ws.features] = w
        lam_previous = lam
    return out, ws.x_mean, ws.y_mean


def lasso_fit(
    X: ArrayLike, y: ArrayLike, lam: float, tol: float = 1e-8, max_iter: int = 10000
) -> tuple[FloatArray, float]:
    """The LASSO: minimise (1/2N) ||y - X w - b||^2 + lam ||w||_1 by cyclic coordinate descent.

    The intercept is not penalised: b = mean(y) - w^T mean(X), and w solves the problem on
    centred data. Coordinate descent starts from w = 0 and updates one weight at a time to its
    exact minimiser given the others, w_j = S(rho_j, lam) / (x_j^T x_j / N) with rho_j the
    correlation of feature j with the residual that leaves j out; it stops when the largest
    change of a weight in a sweep over all coordinates is <= tol. With N >= 10 D the Gram
    matrix X_c^T X_c / N is formed once, so a sweep costs O(D^2) whatever N (see
    :func:`_coordinate_descent`); with fewer samples per feature, working sets of features
    avoid any D x D matrix (see :func:`_lasso_working_set`). On standardised data the weights
    are within 1e-6 of scikit-learn's ``Lasso(alpha=lam, tol=1e-12)``.

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
    if X.shape[0] < _GRAM_SAMPLES_PER_FEATURE * X.shape[1]:     # not N >> D: working sets
        W, x_mean, y_mean = _lasso_working_set(X, y, [lam], tol, max_iter)
        return W[0], float(y_mean - x_mean @ W[0])
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
    only a few sweeps. The Gram matrix is formed once for the whole path (working sets when
    N < 10 D, see :func:`_lasso_working_set`). Intercepts: mean(y) - w^T mean(X) for a row w.

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
    if X.shape[0] < _GRAM_SAMPLES_PER_FEATURE * X.shape[1]:     # not N >> D: working sets
        return _lasso_working_set(X, y, lams, tol, max_iter)[0]
    _, _, G, c = _lasso_gram(X, y)
    W = np.empty((lams.shape[0], X.shape[1]))
    w = np.zeros(X.shape[1])
    for i in np.argsort(-lams, kind="stable"):          # largest penalty first
        w, _ = _coordinate_descent(G, c, float(lams[i]), w, tol, max_iter)
        W[i] = w
    return W


# =============================================================================================
# Beyond the two penalties: the elastic net, the exact LASSO path, bias and variance.
# These functions use only the public functions above (and their own plain solver), so that
# the solvers of ridge_fit, lasso_fit and lasso_path can change without touching them.
# =============================================================================================

__all__ += [
    "elastic_net_objective",
    "elastic_net_fit",
    "elastic_net_path",
    "lasso_knots",
    "LassoKnots",
    "ridge_bias_variance",
    "bias_variance_simulation",
    "BiasVariance",
]


def _check_l1_ratio(l1_ratio):
    return as_float(l1_ratio, "l1_ratio", low=0.0, high=1.0)


def elastic_net_objective(
    X: ArrayLike, y: ArrayLike, w: ArrayLike, b: float, lam: float, l1_ratio: float
) -> float:
    """The elastic-net objective (1/2N) ||y - X w - b||^2 + lam (om ||w||_1 + (1 - om)/2 ||w||^2).

    om = omega = ``l1_ratio`` mixes the two penalties: om = 1 is the LASSO objective of
    :func:`lasso_objective`, om = 0 is ridge on the LASSO's scale (a penalty lam/2 ||w||^2
    added to half the mean of squares, that is ``ridge_fit`` with penalty N lam). The intercept
    b is not penalised. This is the objective scikit-learn's ``ElasticNet(alpha=lam,
    l1_ratio=om)`` minimises.

    Parameters
    ----------
    X : array_like, shape (N, D)
    y : array_like, shape (N,)
    w : array_like, shape (D,)
    b : float
    lam : float
        >= 0.
    l1_ratio : float
        The share omega of the L1 penalty, 0 <= omega <= 1.

    Returns
    -------
    float

    See the chapter "Ridge and LASSO", section "The elastic net".
    """
    X, y = _regression_inputs(X, y)
    w = as_1d_float_array(w, "w")
    if w.shape[0] != X.shape[1]:
        raise ValueError(f"w has {w.shape[0]} entries but X has {X.shape[1]} columns")
    b = as_float(b, "b")
    lam = _check_lam(lam)
    l1_ratio = _check_l1_ratio(l1_ratio)
    residuals = y - X @ w - b
    penalty = l1_ratio * np.abs(w).sum() + 0.5 * (1.0 - l1_ratio) * (w @ w)
    return float(residuals @ residuals / (2 * X.shape[0]) + lam * penalty)


def _elastic_net_sweeps(Xc, yc, lam, l1_ratio, w, tol, max_iter):
    """Plain cyclic coordinate descent for the elastic net on centred data, from ``w``.

    Each update sets w_d to its exact minimiser given the other weights,
    w_d = S(rho_d, lam om) / (a_d + lam (1 - om)), om = l1_ratio, a_d = x_d^T x_d / N and
    rho_d = x_d^T r / N + a_d w_d, where r = y_c - X_c w is the residual (kept up to date, so an
    update costs O(N)). Stops after the first sweep in which no weight changes by more than
    tol. Returns ``(w, sweeps)``.
    """
    n, d = Xc.shape
    a = np.einsum("nd,nd->d", Xc, Xc) / n                  # a_d = x_d^T x_d / N
    w = w.copy()
    r = yc - Xc @ w                                        # the residual y_c - X_c w
    for sweep in range(1, max_iter + 1):
        largest = 0.0
        for j in range(d):
            if a[j] == 0.0:                                # a constant feature keeps w_j = 0
                continue
            rho = Xc[:, j] @ r / n + a[j] * w[j]
            new = soft_threshold(rho, lam * l1_ratio) / (a[j] + lam * (1.0 - l1_ratio))
            change = new - w[j]
            if change != 0.0:
                r -= change * Xc[:, j]
                w[j] = new
                largest = max(largest, abs(change))
        if largest <= tol:
            return w + 0.0, sweep                          # + 0.0 turns -0.0 into 0.0
    warnings.warn(f"coordinate descent did not converge in {max_iter} sweeps (the last changed "
                  f"a weight by {largest:.3g} > tol = {tol:g}); increase max_iter or tol",
                  RuntimeWarning, stacklevel=3)
    return w + 0.0, max_iter


def _centred_columns(X, y):
    """Means, X_c (Fortran order, so that a column is contiguous) and y_c."""
    x_mean, y_mean = X.mean(axis=0), float(y.mean())
    return x_mean, y_mean, np.asfortranarray(X - x_mean), y - y_mean


def elastic_net_fit(
    X: ArrayLike,
    y: ArrayLike,
    lam: float,
    l1_ratio: float,
    tol: float = 1e-8,
    max_iter: int = 10000,
) -> tuple[FloatArray, float]:
    """The elastic net by cyclic coordinate descent on the residual.

    Minimises (1/2N) ||y - X w - b||^2 + lam (om ||w||_1 + (1 - om)/2 ||w||^2) with om =
    omega = ``l1_ratio`` (see :func:`elastic_net_objective`). The intercept is not penalised:
    b = mean(y) - w^T mean(X), and w solves the problem on centred data. Starting from w = 0,
    each weight in turn is set to its exact minimiser given the others,
    w_d = S(rho_d, lam om) / (a_d + lam (1 - om)), where S is :func:`soft_threshold`,
    a_d = x_d^T x_d / N and rho_d = x_d^T r / N + a_d w_d with the residual r = y_c - X_c w. The
    sweeps stop after the first in which no weight changes by more than tol. om = 1 is the
    LASSO (:func:`lasso_fit`), om = 0 with lam > 0 is ridge with penalty N lam
    (:func:`ridge_fit`). On standardised data the weights are within 1e-6 of scikit-learn's
    ``ElasticNet(alpha=lam, l1_ratio=om, tol=1e-12)``.

    Parameters
    ----------
    X : array_like, shape (N, D)
    y : array_like, shape (N,)
    lam : float
        The penalty strength, >= 0 (on the LASSO's scale: half the *mean* of squares).
    l1_ratio : float
        The share omega of the L1 penalty, 0 <= omega <= 1.
    tol : float
        Stop when no weight changes by more than tol in a sweep.
    max_iter : int
        The largest number of sweeps (a ``RuntimeWarning`` when reached).

    Returns
    -------
    w : ndarray, shape (D,)
    b : float

    See the chapter "Ridge and LASSO", section "The elastic net".
    """
    X, y = _regression_inputs(X, y)
    lam = _check_lam(lam)
    l1_ratio = _check_l1_ratio(l1_ratio)
    tol, max_iter = _check_tol_max_iter(tol, max_iter)
    x_mean, y_mean, Xc, yc = _centred_columns(X, y)
    w, _ = _elastic_net_sweeps(Xc, yc, lam, l1_ratio, np.zeros(X.shape[1]), tol, max_iter)
    return w, float(y_mean - x_mean @ w)


def elastic_net_path(
    X: ArrayLike,
    y: ArrayLike,
    lams: ArrayLike,
    l1_ratio: float,
    tol: float = 1e-8,
    max_iter: int = 10000,
) -> FloatArray:
    """Elastic-net weights for every penalty in ``lams``: an array of shape (len(lams), D).

    Row i holds the weights of :func:`elastic_net_fit` for lams[i] (whatever the order of
    ``lams``). The fits run from the largest penalty down, each starting from the previous
    solution (a warm start). The intercepts are mean(y) - w^T mean(X) for each row w. Equals
    scikit-learn's ``enet_path`` on centred data.

    Parameters
    ----------
    X : array_like, shape (N, D)
    y : array_like, shape (N,)
    lams : array_like, shape (L,)
        Penalties >= 0, in any order, L >= 1.
    l1_ratio : float
        The share omega of the L1 penalty, 0 <= omega <= 1.
    tol, max_iter
        As in :func:`elastic_net_fit`, for each penalty.

    Returns
    -------
    ndarray, shape (L, D)

    See the chapter "Ridge and LASSO", section "The elastic net".
    """
    X, y = _regression_inputs(X, y)
    lams = as_1d_float_array(lams, "lams", min_size=1)
    if np.any(lams < 0):
        raise ValueError(f"lams must be >= 0, found {lams[lams < 0][0]!r}")
    l1_ratio = _check_l1_ratio(l1_ratio)
    tol, max_iter = _check_tol_max_iter(tol, max_iter)
    _, _, Xc, yc = _centred_columns(X, y)
    W = np.empty((lams.shape[0], X.shape[1]))
    w = np.zeros(X.shape[1])
    for i in np.argsort(-lams, kind="stable"):             # largest penalty first
        w, _ = _elastic_net_sweeps(Xc, yc, float(lams[i]), l1_ratio, w, tol, max_iter)
        W[i] = w
    return W


class LassoKnots(NamedTuple):
    """The exact LASSO path of :func:`lasso_knots`.

    ``lams`` (K,) are the knots, from lambda_max down to 0; ``coefs`` (K, D) the weights at
    each knot (between two knots every weight is linear in lambda); ``events`` (K - 1 pairs)
    say what happens at lams[k]: ``(d, +1)`` when feature d becomes nonzero there, ``(d, -1)``
    when it returns to zero. The last knot, 0, is least squares.
    """

    lams: FloatArray
    coefs: FloatArray
    events: list[tuple[int, int]]


def lasso_knots(X: ArrayLike, y: ArrayLike) -> LassoKnots:
    """The exact LASSO path: the penalties at which features enter or leave, and the weights.

    The LASSO weights of :func:`lasso_fit` are piecewise linear in lambda. On a stretch where
    the set A of nonzero weights and their signs s do not change, the optimality conditions
    x_d^T r / N = lam s_d (d in A) are linear: G_AA w_A = c_A - lam s_A with G = X_c^T X_c / N
    and c = X_c^T y_c / N, so w_A(lam) = u - lam v with u = G_AA^{-1} c_A and v = G_AA^{-1} s_A.
    Following the path down from lambda_max = max_d |c_d| (where the first feature enters),
    the stretch ends at the largest lam below the current one at which either an inactive
    feature's correlation with the residual, c_j - G_jA w_A(lam), reaches +-lam (it enters,
    with that sign), or an active weight reaches 0 (it leaves). This is the LASSO variant of
    least-angle regression (homotopy); it equals scikit-learn's ``lars_path(X_c, y_c,
    method="lasso")``. The centred columns must be linearly independent (rank D), so that
    every G_AA is invertible and the path ends at least squares.

    Parameters
    ----------
    X : array_like, shape (N, D)
    y : array_like, shape (N,)

    Returns
    -------
    LassoKnots
        ``(lams, coefs, events)``; see :class:`LassoKnots`.

    See the chapter "Ridge and LASSO", section "Regularisation paths and choosing lambda".
    """
    X, y = _regression_inputs(X, y)
    n, d = X.shape
    Xc, yc = X - X.mean(axis=0), y - y.mean()
    if n <= d or np.linalg.matrix_rank(Xc) < d:
        raise ValueError(f"X must have linearly independent centred columns (rank {d}) for the "
                         f"exact path; its centred columns have rank {np.linalg.matrix_rank(Xc)}")
    G, c = Xc.T @ Xc / n, Xc.T @ yc / n
    lam = float(np.max(np.abs(c)))
    if lam == 0.0:                                     # y is constant: w = 0 for every lam
        return LassoKnots(np.array([0.0]), np.zeros((1, d)), [])
    first = int(np.argmax(np.abs(c)))
    active, signs = [first], [float(np.sign(c[first]))]
    lams, coefs, events = [lam], [np.zeros(d)], [(first, 1)]
    margin = 1e-10 * lam                               # knots closer than this count as one
    while True:
        A = np.array(active)
        u = np.linalg.solve(G[np.ix_(A, A)], c[A])
        v = np.linalg.solve(G[np.ix_(A, A)], np.array(signs))
        next_lam, event = 0.0, None
        for j in sorted(set(range(d)) - set(active)):
            # correlation of j with the residual on this stretch: p + lam q; enters at +-lam
            p, q = c[j] - G[j, A] @ u, G[j, A] @ v
            for sign in (1.0, -1.0):
                if sign != q:
                    at = p / (sign - q)
                    if next_lam < at < lam - margin:
                        next_lam, event = at, (j, 1, sign)
        for k, j in enumerate(active):                 # an active weight u_k - lam v_k hits 0
            if v[k] != 0.0:
                at = u[k] / v[k]
                if next_lam < at < lam - margin:
                    next_lam, event = at, (j, -1, 0.0)
        lam = next_lam
        w = np.zeros(d)
        w[A] = u - lam * v
        if event is not None and event[1] == -1:
            w[event[0]] = 0.0                          # exactly zero where it leaves
        lams.append(lam)
        coefs.append(w)
        if event is None:                              # no more events: the end, lam = 0
            return LassoKnots(np.array(lams), np.array(coefs), events)
        j, change, sign = event
        events.append((j, change))
        if change == 1:
            active.append(j)
            signs.append(sign)
        else:
            k = active.index(j)
            del active[k], signs[k]


class BiasVariance(NamedTuple):
    """Squared bias, variance, noise and expected test error of a fit, one entry per penalty.

    Each is averaged over the test inputs: ``bias2`` the mean of (E[f_hat(x)] - f(x))^2,
    ``variance`` the mean of Var[f_hat(x)], ``noise`` the noise variance sigma2 of a test
    output, ``test_error`` the mean of E[(y - f_hat(x))^2] for a new output y at x.
    """

    bias2: FloatArray
    variance: FloatArray
    noise: float
    test_error: FloatArray


def _test_design(X_test, f_test, d):
    X_test = as_2d_float_array(X_test, "X_test", min_rows=1)
    f_test = as_1d_float_array(f_test, "f_test", min_size=1)
    check_same_length(X_test, f_test, "X_test", "f_test")
    if X_test.shape[1] != d:
        raise ValueError(f"X_test has {X_test.shape[1]} columns but the training inputs have {d}")
    return X_test, f_test


def _check_lams(lams):
    lams = as_1d_float_array(lams, "lams", min_size=1)
    if np.any(lams < 0):
        raise ValueError(f"lams must be >= 0, found {lams[lams < 0][0]!r}")
    return lams


def ridge_bias_variance(
    X: ArrayLike,
    f: ArrayLike,
    X_test: ArrayLike,
    f_test: ArrayLike,
    sigma2: float,
    lams: ArrayLike,
) -> BiasVariance:
    """Exact squared bias, variance and expected test error of ridge on a fixed design.

    The training inputs X are fixed and the outputs are y = f + eps with eps ~ N(0, sigma2 I).
    Ridge's prediction is linear in y: f_hat(x) = mean(y) + (x - mean(X))^T w with
    w = (X_c^T X_c + lam I)^{-1} X_c^T y, so at the test inputs f_hat = A y with
    A = 1 1^T / N + (X_test - mean(X)) (X_c^T X_c + lam I)^{-1} X_c^T. Hence E[f_hat] = A f and
    Cov[f_hat] = sigma2 A A^T: the squared bias is the mean of (A f - f_test)^2, the variance
    sigma2 ||A||_F^2 / M, and the expected test error sigma2 + bias^2 + variance. For lam = 0
    the pseudo-inverse gives least squares (minimum-norm when X_c^T X_c is singular), as
    :func:`ridge_fit` does.

    Parameters
    ----------
    X : array_like, shape (N, D)
        The training inputs (the same in every training set).
    f : array_like, shape (N,)
        The true regression function at the training inputs.
    X_test : array_like, shape (M, D)
    f_test : array_like, shape (M,)
        The true regression function at the test inputs.
    sigma2 : float
        The noise variance, >= 0.
    lams : array_like, shape (L,)
        Ridge penalties >= 0 (as in :func:`ridge_fit`).

    Returns
    -------
    BiasVariance
        Arrays of shape (L,), and the noise sigma2.

    See the chapter "Ridge and LASSO", section "Bias and variance".
    """
    X, f = _regression_inputs(X, f)
    X_test, f_test = _test_design(X_test, f_test, X.shape[1])
    sigma2 = as_float(sigma2, "sigma2", low=0.0)
    lams = _check_lams(lams)
    n, d = X.shape
    x_mean = X.mean(axis=0)
    Xc, Tc = X - x_mean, X_test - x_mean
    U, s, Vt = np.linalg.svd(Xc, full_matrices=False)     # X_c = U diag(s) V^T
    keep = s > s[0] * max(n, d) * np.finfo(float).eps if s.size else s > 0
    U, s, TV = U[:, keep], s[keep], Tc @ Vt[keep].T
    bias2, variance = np.empty(len(lams)), np.empty(len(lams))
    for i, lam in enumerate(lams):
        # (X_c^T X_c + lam I)^{-1} X_c^T = V diag(s / (s^2 + lam)) U^T
        B = (TV * (s / (s**2 + lam))) @ U.T                # (M, N)
        A = B + 1.0 / n
        bias2[i] = np.mean((A @ f - f_test) ** 2)
        variance[i] = sigma2 * np.sum(A * A) / X_test.shape[0]
    return BiasVariance(bias2, variance, sigma2, sigma2 + bias2 + variance)


def bias_variance_simulation(
    sample: Callable[[np.random.Generator], tuple[ArrayLike, ArrayLike]],
    X_test: ArrayLike,
    f_test: ArrayLike,
    sigma2: float,
    lams: ArrayLike,
    n_repeats: int = 200,
    seed: int = 0,
    fit: Callable[[ArrayLike, ArrayLike, float], tuple[ArrayLike, float]] | None = None,
) -> BiasVariance:
    """Squared bias, variance and test error of a penalised fit, estimated by repeated sampling.

    ``n_repeats`` times: draw a training set ``X, y = sample(rng)``, fit it with every penalty
    (``fit(X, y, lam)`` returns ``(w, b)``; default :func:`ridge_fit`), predict at the test
    inputs, and score the prediction against fresh test outputs y = f_test + eps,
    eps ~ N(0, sigma2). Then, per penalty and averaged over the test inputs, ``bias2`` is the
    squared difference between the mean prediction and f_test, ``variance`` the variance of
    the predictions over the training sets (dividing by the number of repeats), and
    ``test_error`` the mean squared error against the fresh outputs. The decomposition says
    test_error = sigma2 + bias2 + variance in expectation; the estimates agree up to Monte
    Carlo error. Running means and sums of squares (Welford's update) keep memory at
    O(L M) whatever ``n_repeats``.

    Parameters
    ----------
    sample : callable
        ``sample(rng)`` returns one training set ``(X, y)`` drawn with the numpy ``Generator``
        rng: X of shape (N, D), y of shape (N,).
    X_test : array_like, shape (M, D)
    f_test : array_like, shape (M,)
        The true regression function at the test inputs.
    sigma2 : float
        The noise variance of a test output, >= 0.
    lams : array_like, shape (L,)
        Penalties >= 0, passed to ``fit``.
    n_repeats : int
        The number of training sets, >= 2.
    seed : int
        Seed of the ``numpy.random.default_rng`` that draws the training and test sets.
    fit : callable, optional
        ``fit(X, y, lam) -> (w, b)``; default :func:`ridge_fit`.

    Returns
    -------
    BiasVariance
        Arrays of shape (L,), and the noise sigma2.

    See the chapter "Ridge and LASSO", section "Bias and variance".
    """
    if not callable(sample):
        raise TypeError(f"sample must be a function of a random generator, got {sample!r}")
    fit = ridge_fit if fit is None else fit
    if not callable(fit):
        raise TypeError(f"fit must be a function fit(X, y, lam) -> (w, b), got {fit!r}")
    X_test = as_2d_float_array(X_test, "X_test", min_rows=1)
    X_test, f_test = _test_design(X_test, f_test, X_test.shape[1])
    sigma2 = as_float(sigma2, "sigma2", low=0.0)
    lams = _check_lams(lams)
    if isinstance(n_repeats, bool) or not isinstance(n_repeats, numbers.Integral):
        raise TypeError(f"n_repeats must be an integer, got {n_repeats!r}")
    if n_repeats < 2:
        raise ValueError(f"n_repeats must be >= 2 (a variance needs two samples), got {n_repeats}")
    rng = np.random.default_rng(seed)
    mean = np.zeros((len(lams), X_test.shape[0]))         # running mean of the predictions
    sum_sq = np.zeros_like(mean)                           # running sum of squared deviations
    test_error = np.zeros(len(lams))
    for r in range(1, int(n_repeats) + 1):
        X, y = _regression_inputs(*sample(rng))
        if X.shape[1] != X_test.shape[1]:
            raise ValueError(f"X_test has {X_test.shape[1]} columns but sample returned X with "
                             f"{X.shape[1]}")
        pred = np.empty_like(mean)
        for i, lam in enumerate(lams):
            w, b = fit(X, y, float(lam))
            pred[i] = X_test @ np.asarray(w, dtype=float) + float(b)
        y_new = f_test + rng.normal(0.0, math.sqrt(sigma2), size=f_test.shape)
        test_error += np.mean((y_new - pred) ** 2, axis=1)
        delta = pred - mean
        mean += delta / r
        sum_sq += delta * (pred - mean)
    n_repeats = int(n_repeats)
    bias2 = np.mean((mean - f_test) ** 2, axis=1)
    variance = np.mean(sum_sq / n_repeats, axis=1)
    return BiasVariance(bias2, variance, sigma2, test_error / n_repeats)
