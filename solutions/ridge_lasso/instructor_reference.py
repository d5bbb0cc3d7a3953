"""Instructor-only reference for the ridge_lasso assignment's hidden tests.

Never released: nbgrader_config.py keeps this file out of exercises/, and it is not part of the
course package (students can read mlcourse_utils, so the reference of a task beyond the chapter
cannot live there). The hidden test cells load it from solutions/ridge_lasso/ in the grader's
process.

It holds the extension tasks (weighted ridge, the non-negative LASSO by coordinate descent) and
the plain methods the tasks prescribe (cyclic coordinate descent sweeps from a given start, a
path with warm starts), so that hidden tests can compare a student's iterates, not only the
point they end at. (mlcourse_utils.regularization reaches the same optima by faster routes:
Gram matrices, working sets, exact steps on the active set.) :func:`variant_numbers` gives the
model answer's numbers of section 10 for each student's variant (the manual-grading page shows
them beside the answer).
"""

from __future__ import annotations

import functools

import numpy as np


def weighted_ridge_fit(X, y, lam, weights):
    """Minimise sum_n s_n (y_n - w.x_n - b)^2 + lam ||w||^2 (b not penalised); returns (w, b).

    b = ybar_s - w.xbar_s with weighted means, and w solves (Xc^T S Xc + lam I) w = Xc^T S yc.
    """
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    s = np.asarray(weights, dtype=float)
    x_mean, y_mean = s @ X / s.sum(), s @ y / s.sum()
    Xc, yc = X - x_mean, y - y_mean
    w = np.linalg.solve(Xc.T @ (s[:, None] * Xc) + lam * np.eye(X.shape[1]), Xc.T @ (s * yc))
    return w, float(y_mean - x_mean @ w)


def _sweeps(Xc, r, w, lam, a, tol, max_iter, nonneg):
    """Cyclic coordinate descent from w (changed in place) with residual r = yc - Xc w.

    Returns the number of sweeps taken. The update is S(rho, lam) / a (max(rho - lam, 0) / a
    for the non-negative LASSO); stop after the first sweep whose largest change is <= tol.
    """
    N, D = Xc.shape
    for sweep in range(1, max_iter + 1):
        largest = 0.0
        for d in range(D):
            if a[d] == 0.0:
                continue
            rho = Xc[:, d] @ r / N + a[d] * w[d]
            if nonneg:
                new = max(rho - lam, 0.0) / a[d]
            else:
                new = np.sign(rho) * max(abs(rho) - lam, 0.0) / a[d]
            change = new - w[d]
            if change != 0.0:
                r -= change * Xc[:, d]
                w[d] = new
                largest = max(largest, abs(change))
        if largest <= tol:
            return sweep
    return max_iter


def _centre(X, y):
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    x_mean, y_mean = X.mean(axis=0), y.mean()
    Xc = X - x_mean
    return Xc, y - y_mean, x_mean, y_mean, np.sum(Xc**2, axis=0) / len(y)


def lasso_cd(X, y, lam, tol=1e-8, max_iter=10000):
    """lasso_fit's prescribed method: cyclic coordinate descent from w = 0; returns (w, b)."""
    Xc, yc, x_mean, y_mean, a = _centre(X, y)
    w = np.zeros(Xc.shape[1])
    _sweeps(Xc, yc.copy(), w, lam, a, tol, max_iter, nonneg=False)
    return w, float(y_mean - x_mean @ w)


def nonneg_lasso_fit(X, y, lam, tol=1e-8, max_iter=10000):
    """The LASSO with w >= 0 by cyclic coordinate descent from w = 0: w_d <- max(rho_d - lam, 0) / a_d."""
    Xc, yc, x_mean, y_mean, a = _centre(X, y)
    w = np.zeros(Xc.shape[1])
    _sweeps(Xc, yc.copy(), w, lam, a, tol, max_iter, nonneg=True)
    return w, float(y_mean - x_mean @ w)


def lasso_path_warm(X, y, lams, tol=1e-8, max_iter=10000):
    """lasso_path's prescribed method: from the largest penalty down, each fit starting from the
    previous solution. Returns (W (len(lams), D), sweeps (len(lams),)) in the order of lams."""
    Xc, yc, _, _, a = _centre(X, y)
    lams = np.asarray(lams, dtype=float)
    w, r = np.zeros(Xc.shape[1]), yc.copy()
    W, sweeps = np.zeros((len(lams), Xc.shape[1])), np.zeros(len(lams), dtype=int)
    for i in np.argsort(-lams, kind="stable"):
        sweeps[i] = _sweeps(Xc, r, w, lams[i], a, tol, max_iter, nonneg=False)
        W[i] = w
    return W, sweeps


def lasso_path_sweeps(X, y, lams, tol=1e-8, max_iter=10000):
    """lasso_path by plain warm-started sweeps (the rows of lasso_path_warm; named apart from the
    package's lasso_path, whose working sets count sweeps differently): at most max_iter sweeps
    per penalty, each from the last."""
    return lasso_path_warm(X, y, lams, tol, max_iter)[0]


def collinear_problem(rng, n, d, positive=False):
    """Data on which cyclic coordinate descent is slow: (X (n, d), y (n,)) and a penalty.

    The features are one common factor plus noise of a fiftieth of its size (correlations
    about 0.9996), shifted and scaled; y is a combination of them with weights of alternating
    signs (all positive with ``positive``, for the non-negative LASSO) and little noise. With a
    penalty of 1e-6 to 1e-5 times lambda_max every weight of the solution is non-zero, and each
    sweep shrinks the distance to it by a factor of about 1 - 1e-3: after 1000 sweeps the
    weights are still far from the solution, so the point reached after k sweeps tells the
    method apart from another solver (which would be at the solution by then).
    """
    z = rng.normal(size=(n, 1))
    Z = z + 0.02 * rng.normal(size=(n, d))
    w = rng.uniform(1.0, 3.0, size=d) * (1.0 if positive else np.resize([1.0, -1.0], d))
    y = Z @ w + 0.003 * rng.normal(size=n) + rng.normal(0.0, 2.0)
    X = Z * rng.uniform(0.5, 2.0, size=d) + rng.normal(0.0, 2.0, size=d)
    Xc = X - X.mean(axis=0)
    lam_max = np.max(np.abs(Xc.T @ (y - y.mean()))) / n
    return X, y, float(np.exp(rng.uniform(np.log(1e-6), np.log(1e-5))) * lam_max)


def _ordinal(k):
    return f"{k}{'th' if 10 <= k % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(k % 10, 'th')}"


@functools.lru_cache(maxsize=1)
def _diabetes_standardised():
    """The diabetes features standardised to mean 0 and standard deviation 1: (X, y, names)."""
    from sklearn.datasets import load_diabetes

    data = load_diabetes()
    X = (data.data - data.data.mean(axis=0)) / data.data.std(axis=0)
    return X, data.target, tuple(data.feature_names)


@functools.lru_cache(maxsize=64)
def _diabetes_path(removed, grid):
    """The section's path without feature ``removed`` ('' for none): (names, lambda_max, W) with
    W (grid, D) on np.geomspace(lambda_max, lambda_max / 1000, grid), by the reference."""
    from mlcourse_utils.regularization import lasso_lambda_max, lasso_path

    X, y, names = _diabetes_standardised()
    keep = [k for k, name in enumerate(names) if name != removed]
    X = X[:, keep]
    lam_max = lasso_lambda_max(X, y)
    W = lasso_path(X, y, np.geomspace(lam_max, lam_max / 1000, grid))
    return tuple(names[k] for k in keep), lam_max, W


#: A weight counts as nonzero on the path above this: at lambda_max itself the weight of the
#: feature that defines it is 0 in exact arithmetic, and of order 1e-14 in floating point.
NONZERO = 1e-9


def variant_numbers(question, params):
    """The model answer's numbers for one variant of a question graded by hand.

    question : "interpretation_diabetes" (section 10 (a); (b) and (c) are about the full data
    and do not vary). params : {"removed": the feature removed in (a), "grid": the number of
    penalties on the paths}, as V.question(question) gives them. Returns an ordered dict,
    label -> number or short text: lambda_max without the feature, the first three features to
    become nonzero with the number of the penalty (1 = lambda_max) where each first does, the
    three largest changes of a weight at the smallest penalty (lambda_max / 1000) against the
    full data, and the features most correlated with the removed one.
    """
    if question != "interpretation_diabetes":
        raise ValueError(f"ridge_lasso has no question {question!r} with variants "
                         "(it has: interpretation_diabetes)")
    removed, grid = params["removed"], int(params["grid"])
    X, _, all_names = _diabetes_standardised()
    if removed not in all_names:
        raise ValueError(f"removed must be a diabetes feature ({', '.join(all_names)}), "
                         f"got {removed!r}")
    names, lam_max, W = _diabetes_path(removed, grid)
    full_names, _, W_full = _diabetes_path("", grid)
    numbers = {f"lambda_max without {removed}": round(float(lam_max), 2)}
    nonzero = np.abs(W) > NONZERO
    first = {name: int(np.argmax(nonzero[:, k])) + 1 for k, name in enumerate(names)
             if nonzero[:, k].any()}
    # Features that first become nonzero at the same penalty: the larger weight there first.
    order = sorted(first, key=lambda n: (first[n], -abs(W[first[n] - 1, names.index(n)])))
    for rank, name in enumerate(order[:3], start=1):
        numbers[f"{_ordinal(rank)} to enter (penalty k of {grid})"] = (
            f"{name} (k = {first[name]})")
    before = dict(zip(full_names, W_full[-1], strict=True))
    change = {name: W[-1, k] - before[name] for k, name in enumerate(names)}
    for rank, name in enumerate(sorted(change, key=lambda n: -abs(change[n]))[:3], start=1):
        label = "largest change" if rank == 1 else f"{_ordinal(rank)} largest change"
        after = W[-1, names.index(name)]
        numbers[f"{label} at lambda_max/1000"] = f"{name}: {before[name]:+.1f} -> {after:+.1f}"
    corr = np.corrcoef(X.T)[all_names.index(removed)]
    related = sorted(names, key=lambda n: -abs(corr[all_names.index(n)]))[:3]
    numbers[f"most correlated with {removed}"] = ", ".join(
        f"{n} {corr[all_names.index(n)]:+.2f}" for n in related)
    return numbers
