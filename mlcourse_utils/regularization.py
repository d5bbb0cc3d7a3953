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
