"""Naive Bayes classifiers: Bernoulli, categorical and Gaussian, fit by counting.

A naive Bayes classifier is a generative model p(x, c) = pi_c prod_d p(x_d | c): the class
prior pi_c times one univariate distribution per feature, the features being independent
*given the class*. Fitting is counting (or averaging); prediction is Bayes' rule, done in log
space so that a product of hundreds of small probabilities does not underflow to 0.

Conventions: ``X`` is (N, D), ``y`` is (N,), ``classes = np.unique(y)`` and every per-class
array is in that order. ``log_prior`` holds log pi_c, shape (C,). Natural logarithms.

See the chapter "Naive Bayes".
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import logsumexp

from ._base import ProbabilisticClassifier
from ._validation import (
    LOG_2PI,
    FloatArray,
    as_1d_float_array,
    as_2d_float_array,
    as_binary_array,
    as_float,
    as_float_array,
    check_X_y,
    count_binary,
    one_hot,
    row_blocks,
)

__all__ = [
    "fit_bernoulli_nb",
    "bernoulli_nb_log_joint",
    "predict_proba_from_log_joint",
    "fit_gaussian_nb",
    "gaussian_nb_log_joint",
    "nb_linear_weights",
    "fit_bayesian_bernoulli_nb",
    "fit_categorical_nb",
    "categorical_nb_log_joint",
    "bernoulli_nb_log_joint_missing",
    "gaussian_nb_log_joint_missing",
    "BernoulliNaiveBayes",
    "GaussianNaiveBayes",
]

# --------------------------------------------------------------------------- helpers


def _check_log_prior(log_prior, name="log_prior"):
    """A (C,) vector of log-probabilities: no NaN or +inf, exp(log_prior) sums to 1."""
    lp = as_1d_float_array(log_prior, name, min_size=1, allow_nonfinite=True)
    if np.any(np.isnan(lp)) or np.any(lp == np.inf):
        raise ValueError(f"{name} contains NaN or +inf; it must hold log-probabilities")
    if np.any(lp > 0):
        raise ValueError(f"{name} has positive entries; log-probabilities must be <= 0")
    total = np.exp(logsumexp(lp))
    if abs(total - 1.0) > 1e-9:
        raise ValueError(f"exp({name}) must sum to 1, sums to {total!r}")
    return lp


def _check_theta(theta, n_classes, name="theta"):
    """A (C, D) array of Bernoulli parameters in [0, 1]."""
    th = as_2d_float_array(theta, name, min_rows=1)
    if th.shape[0] != n_classes:
        raise ValueError(
            f"{name} has {th.shape[0]} rows but log_prior has {n_classes} classes"
        )
    if np.any(th < 0) or np.any(th > 1):
        raise ValueError(f"{name} must hold probabilities in [0, 1]")
    return th


def _fit_counts(X, y, binary=False, check_entries=True):
    """Validated ``(X, classes, index, N_c)`` shared by the fitting functions.

    ``check_entries=False``: the entries of X are left for the caller to check during its own
    pass over X (see :func:`~mlcourse_utils._validation.check_X_y`).
    """
    X, classes, index = check_X_y(X, y, binary=binary, check_entries=check_entries)
    counts = np.bincount(index, minlength=classes.size).astype(np.float64)
    return X, classes, index, counts


def _count_ones(X, index, n_classes):
    """(C, D) counts N_dc of the ones of each feature in each class, T^T X; X must be binary.

    T is the one-hot matrix of the labels (row c of T^T X sums the samples of class c). X is
    read once, in blocks of rows of about 2^16 entries: while a block is in the processor's
    cache, it is checked (every entry 0 or 1) and added to the counts. Checking all of X first
    and counting after would read X from memory twice, about a third more time.
    """
    onehot = one_hot(index, n_classes)
    n_dc = np.zeros((n_classes, X.shape[1]))
    binary_entries = 0
    with np.errstate(invalid="ignore", over="ignore"):   # a non-binary X raises below
        for rows in row_blocks(X.shape, min_rows=1):
            block = X[rows]
            binary_entries += count_binary(block)
            n_dc += onehot[rows].T @ block
    if binary_entries != X.size:
        as_binary_array(X, "X", ndim=2)               # raises, naming the offending value
    return n_dc


def _binary_scores(X, weights, offsets):
    """X @ weights.T + offsets for a binary X (checked on the way), shape (N, C).

    The linear form of Bernoulli naive Bayes: with weights log theta - log(1 - theta) and
    offsets log pi + sum_d log(1 - theta) it is the log joint. As in :func:`_count_ones`, each
    block of rows is checked while it is in the cache for its product, so X is read once.
    """
    X = as_float_array(X, "X", ndim=2, allow_nonfinite=True)
    if X.shape[1] != weights.shape[1]:
        raise ValueError(f"X has {X.shape[1]} columns but theta has {weights.shape[1]}")
    out = np.empty((X.shape[0], weights.shape[0]))
    binary_entries = 0
    with np.errstate(invalid="ignore", over="ignore"):   # a non-binary X raises below
        for rows in row_blocks(X.shape, min_rows=1):
            block = X[rows]
            binary_entries += count_binary(block)
            np.matmul(block, weights.T, out=out[rows])
    if binary_entries != X.size:
        as_binary_array(X, "X", ndim=2)               # raises, naming the offending value
    out += offsets
    return out


def _total_variance(counts, means, variances):
    """Per-feature variance of all the samples, from the class counts, means and variances.

    The law of total variance: Var(x_d) = sum_c (N_c / N) [sigma2_cd + (mu_cd - mu_d)^2] with
    mu_d = sum_c (N_c / N) mu_cd, the within-class plus the between-class variance. It needs no
    further pass over X, and every term is non-negative (no cancellation).
    """
    weights = counts / counts.sum()
    mean = weights @ means
    return weights @ (variances + (means - mean) ** 2)


# --------------------------------------------------------------------------- Bernoulli


def fit_bernoulli_nb(
    X: ArrayLike, y: ArrayLike, alpha: float = 1.0
) -> tuple[NDArray[Any], FloatArray, FloatArray]:
    """Fit a Bernoulli naive Bayes classifier by (smoothed) counting.

    log_prior[c] = log(N_c / N)                (the ML class prior, not smoothed)
    theta[c, d]  = (N_dc + alpha) / (N_c + 2 alpha)

    where N_c is the number of samples of class c and N_dc the number of those with x_d = 1.
    ``alpha = 0`` gives the maximum-likelihood estimate N_dc / N_c; ``alpha = 1`` is Laplace
    (add-one) smoothing, the posterior mean under a uniform Beta(1, 1) prior on each theta.

    Parameters
    ----------
    X : array_like, shape (N, D)
        Binary (0/1 or bool) features.
    y : array_like, shape (N,)
        Class labels, any sortable values.
    alpha : float, default 1.0
        Pseudo-count added to each of the two outcomes, alpha >= 0.

    Returns
    -------
    classes : ndarray, shape (C,)
        ``np.unique(y)``.
    log_prior : ndarray, shape (C,)
    theta : ndarray, shape (C, D)
        theta[c, d] = p(x_d = 1 | c).

    See the chapter "Naive Bayes", sections "The spam filter" and "Smoothing".
    """
    X, classes, index, counts = _fit_counts(X, y, binary=True, check_entries=False)
    alpha = as_float(alpha, "alpha", low=0.0)
    n_dc = _count_ones(X, index, classes.size)  # (C, D) counts of ones per class, T^T X
    theta = (n_dc + alpha) / (counts[:, None] + 2.0 * alpha)
    log_prior = np.log(counts / X.shape[0])
    return classes, log_prior, theta


def fit_bayesian_bernoulli_nb(
    X: ArrayLike, y: ArrayLike, a: float = 1.0, b: float = 1.0, class_pseudocount: float = 1.0
) -> tuple[NDArray[Any], FloatArray, FloatArray]:
    """Posterior-predictive parameters of Bayesian Bernoulli naive Bayes.

    With a Beta(a, b) prior on every theta[c, d] and a symmetric Dirichlet(class_pseudocount)
    prior on the class probabilities, the posterior predictive distribution is naive Bayes with
    the posterior means plugged in:

    theta[c, d]  = (N_dc + a) / (N_c + a + b)
    log_prior[c] = log((N_c + class_pseudocount) / (N + C class_pseudocount))

    With a = b = alpha and class_pseudocount = 0 this is :func:`fit_bernoulli_nb`.

    Parameters
    ----------
    X : array_like, shape (N, D), binary
    y : array_like, shape (N,)
    a, b : float, >= 0
        Beta prior pseudo-counts for x_d = 1 and x_d = 0.
    class_pseudocount : float, >= 0

    Returns
    -------
    classes, log_prior (C,), theta (C, D)

    See the chapter "Naive Bayes", section "Bayesian naive Bayes".
    """
    X, classes, index, counts = _fit_counts(X, y, binary=True, check_entries=False)
    a = as_float(a, "a", low=0.0)
    b = as_float(b, "b", low=0.0)
    gamma = as_float(class_pseudocount, "class_pseudocount", low=0.0)
    n_dc = _count_ones(X, index, classes.size)
    theta = (n_dc + a) / (counts[:, None] + a + b)
    log_prior = np.log((counts + gamma) / (X.shape[0] + classes.size * gamma))
    return classes, log_prior, theta


def bernoulli_nb_log_joint(X: ArrayLike, log_prior: ArrayLike, theta: ArrayLike) -> FloatArray:
    """Joint log-probabilities log p(x_i, c) of Bernoulli naive Bayes.

    log p(x, c) = log pi_c + sum_d [x_d log theta_cd + (1 - x_d) log(1 - theta_cd)]

    with the convention 0 log 0 = 0: a theta of exactly 0 or 1 gives -inf only for the
    combinations it declares impossible (x_d = 1 with theta_cd = 0, or x_d = 0 with
    theta_cd = 1) and finite values otherwise. One matrix multiplication (the sum is linear
    in x), with no loop over samples.

    Parameters
    ----------
    X : array_like, shape (N, D), binary
    log_prior : array_like, shape (C,)
        log pi_c (exp(log_prior) sums to 1; -inf is allowed for a class of prior 0).
    theta : array_like, shape (C, D)
        theta[c, d] = p(x_d = 1 | c), in [0, 1].

    Returns
    -------
    ndarray, shape (N, C)

    See the chapter "Naive Bayes", section "Computing in log space".
    """
    X = as_binary_array(X, "X", ndim=2)
    lp = _check_log_prior(log_prior)
    th = _check_theta(theta, lp.size)
    if th.shape[1] != X.shape[1]:
        raise ValueError(f"X has {X.shape[1]} columns but theta has {th.shape[1]}")
    with np.errstate(divide="ignore"):
        log_t, log_1mt = np.log(th), np.log1p(-th)
    # Finite part: 0 log 0 terms are set to 0 here and handled by the impossibility count.
    log_t, log_1mt = np.where(th > 0, log_t, 0.0), np.where(th < 1, log_1mt, 0.0)
    # X @ log_t.T + (1 - X) @ log_1mt.T, as one product: (1 - x) a = a - x a.
    out = X @ (log_t - log_1mt).T + (lp + log_1mt.sum(axis=1))[None, :]
    if np.any((th == 0) | (th == 1)):
        impossible = X @ (th == 0).T + (1.0 - X) @ (th == 1).T
        out[impossible > 0] = -np.inf
    return out


def bernoulli_nb_log_joint_missing(
    X: ArrayLike, log_prior: ArrayLike, theta: ArrayLike
) -> FloatArray:
    """Like :func:`bernoulli_nb_log_joint`, with NaN entries of X treated as missing.

    A missing feature is marginalised out: sum_{x_d in {0,1}} p(x_d | c) = 1, so its factor
    drops from the product and the term is simply left out of the sum.

    Parameters
    ----------
    X : array_like, shape (N, D)
        0, 1 or NaN (missing).
    log_prior : array_like, shape (C,)
    theta : array_like, shape (C, D)

    Returns
    -------
    ndarray, shape (N, C)

    See the chapter "Naive Bayes", section "Missing features".
    """
    X = as_float_array(X, "X", ndim=2, allow_nonfinite=True)
    if np.any(np.isinf(X)):
        raise ValueError("X contains inf; only 0, 1 and NaN (missing) are allowed")
    observed = ~np.isnan(X)
    if not np.all((X[observed] == 0) | (X[observed] == 1)):
        raise ValueError("X must be binary (0/1) where it is not NaN (missing)")
    lp = _check_log_prior(log_prior)
    th = _check_theta(theta, lp.size)
    if th.shape[1] != X.shape[1]:
        raise ValueError(f"X has {X.shape[1]} columns but theta has {th.shape[1]}")
    ones = np.where(observed, X, 0.0)  # indicator of an observed 1
    zeros = (observed & (X == 0)).astype(np.float64)  # indicator of an observed 0
    with np.errstate(divide="ignore"):
        log_t, log_1mt = np.log(th), np.log1p(-th)
    finite = ones @ np.where(th > 0, log_t, 0.0).T + zeros @ np.where(th < 1, log_1mt, 0.0).T
    impossible = ones @ (th == 0).T + zeros @ (th == 1).T
    out = lp[None, :] + finite
    out[impossible > 0] = -np.inf
    return out


def predict_proba_from_log_joint(log_joint: ArrayLike) -> FloatArray:
    """Class posteriors p(c | x_i) from joint log-probabilities, by Bayes' rule.

    p(c | x) = exp(log p(x, c) - logsumexp_c' log p(x, c')).

    Subtracting the log-sum-exp (which itself subtracts the row maximum) keeps the
    computation exact when every log-joint is around -1e4, where exp() alone would give
    0/0.

    Parameters
    ----------
    log_joint : array_like, shape (N, C)
        log p(x_i, c); -inf is allowed but not in every entry of a row.

    Returns
    -------
    ndarray, shape (N, C)
        Rows sum to 1.

    See the chapter "Naive Bayes", section "Computing in log space".
    """
    L = as_2d_float_array(log_joint, "log_joint", allow_nonfinite=True)
    if L.shape[1] == 0:
        raise ValueError("log_joint has no columns; at least one class is needed")
    if np.any(np.isnan(L)) or np.any(L == np.inf):
        raise ValueError("log_joint contains NaN or +inf")
    dead = np.all(L == -np.inf, axis=1)
    if np.any(dead):
        raise ValueError(
            f"row {int(np.argmax(dead))} of log_joint is -inf for every class: the sample "
            "is impossible under every class (smooth the parameters, e.g. alpha > 0)"
        )
    return np.exp(L - logsumexp(L, axis=1, keepdims=True))


# --------------------------------------------------------------------------- Gaussian


def fit_gaussian_nb(
    X: ArrayLike, y: ArrayLike, var_smoothing: float = 0.0
) -> tuple[NDArray[Any], FloatArray, FloatArray, FloatArray]:
    """Fit a Gaussian naive Bayes classifier by maximum likelihood.

    log_prior[c]    = log(N_c / N)
    means[c, d]     = (1/N_c) sum_{i: y_i = c} x_id
    variances[c, d] = (1/N_c) sum_{i: y_i = c} (x_id - means[c, d])^2 + epsilon

    The variances divide by N_c (maximum likelihood). ``epsilon = var_smoothing * max_d
    Var(X[:, d])``, the largest per-feature variance of all of X (scikit-learn's rule;
    scikit-learn's default var_smoothing is 1e-9, ours is 0).

    Parameters
    ----------
    X : array_like, shape (N, D)
    y : array_like, shape (N,)
    var_smoothing : float, default 0.0, >= 0

    Returns
    -------
    classes : ndarray, shape (C,)
    log_prior : ndarray, shape (C,)
    means : ndarray, shape (C, D)
    variances : ndarray, shape (C, D)

    Raises
    ------
    ValueError
        When a variance is 0 (a class with one sample, or a constant feature within a
        class): the Gaussian density would be infinite. Use ``var_smoothing > 0``.

    See the chapter "Naive Bayes", section "Gaussian naive Bayes".
    """
    X, classes, index, counts = _fit_counts(X, y, check_entries=False)
    var_smoothing = as_float(var_smoothing, "var_smoothing", low=0.0)
    onehot = one_hot(index, classes.size)
    with np.errstate(invalid="ignore"):           # 0 * inf in the product, when X has inf
        means = (onehot.T @ X) / counts[:, None]
    # X is checked for NaN and inf through its class sums: a NaN or inf entry makes its class's
    # sum NaN or inf, so finite means prove X finite without a pass of its own over X.
    if not np.all(np.isfinite(means)):
        as_2d_float_array(X, "X")                 # raises, unless a finite sum overflowed
    # Two-pass variance (centre first) for accuracy when |x| is large compared to its spread.
    # Block by block of rows that stay in the processor's cache, in one reused buffer: the
    # block's rows minus their class means (np.take with mode="clip" writes straight into the
    # buffer; the indices are valid), squared, summed per class with the block's rows of T.
    variances = np.zeros_like(means)
    blocks = row_blocks(X.shape, min_rows=1)
    buffer = np.empty((min(blocks[0].stop, X.shape[0]), X.shape[1]))
    for rows in blocks:
        block = X[rows]
        Z = buffer[: block.shape[0]]
        np.take(means, index[rows], axis=0, out=Z, mode="clip")          # mu_{y_n}
        np.subtract(block, Z, out=Z)                                      # x_n - mu_{y_n}
        variances += onehot[rows].T @ np.square(Z, out=Z)
    variances /= counts[:, None]
    if var_smoothing > 0:  # epsilon: var_smoothing times the largest variance of a feature
        variances += var_smoothing * _total_variance(counts, means, variances).max()
    if np.any(variances <= 0):
        c, d = np.argwhere(variances <= 0)[0]
        raise ValueError(
            f"the variance of feature {d} in class {classes[c]!r} is 0 "
            f"({int(counts[c])} sample(s)); use var_smoothing > 0 (e.g. 1e-9)"
        )
    return classes, np.log(counts / X.shape[0]), means, variances


def gaussian_nb_log_joint(
    X: ArrayLike, log_prior: ArrayLike, means: ArrayLike, variances: ArrayLike
) -> FloatArray:
    """Joint log-densities log p(x_i, c) of Gaussian naive Bayes.

    log p(x, c) = log pi_c - 1/2 sum_d [log(2 pi sigma2_cd) + (x_d - mu_cd)^2 / sigma2_cd]

    Parameters
    ----------
    X : array_like, shape (N, D)
    log_prior : array_like, shape (C,)
    means : array_like, shape (C, D)
    variances : array_like, shape (C, D), all > 0

    Returns
    -------
    ndarray, shape (N, C)

    See the chapter "Naive Bayes", section "Gaussian naive Bayes".
    """
    X = as_2d_float_array(X, "X")
    lp = _check_log_prior(log_prior)
    means, variances = _check_gaussian_params(means, variances, lp.size, X.shape[1])
    # Expanding the square, sum_d (x_d - mu_cd)^2 / s_cd
    #   = sum_d x_d^2 / s_cd - 2 sum_d x_d mu_cd / s_cd + sum_d mu_cd^2 / s_cd:
    # two matrix products give every class at once. X is first shifted by the average class
    # mean (the log-density does not change when x and every mu_c are shifted alike), so that
    # the expanded terms stay of the size of the result and little accuracy is lost.
    shift = means.mean(axis=0)
    mu = means - shift
    precision = 1.0 / variances                               # (C, D)
    const = lp - 0.5 * np.sum(LOG_2PI + np.log(variances) + mu**2 * precision, axis=1)
    out = np.empty((X.shape[0], lp.size))
    for rows in row_blocks(X.shape):  # blocks of rows that stay in the processor's cache
        Z = X[rows] - shift
        out[rows] = Z @ (mu * precision).T - 0.5 * (Z * Z) @ precision.T
    return out + const[None, :]


def gaussian_nb_log_joint_missing(
    X: ArrayLike, log_prior: ArrayLike, means: ArrayLike, variances: ArrayLike
) -> FloatArray:
    """Like :func:`gaussian_nb_log_joint`, with NaN entries of X treated as missing.

    A missing feature is integrated out (its density integrates to 1), so its term is left
    out of the sum.

    See the chapter "Naive Bayes", section "Missing features".
    """
    X = as_float_array(X, "X", ndim=2, allow_nonfinite=True)
    if np.any(np.isinf(X)):
        raise ValueError("X contains inf; only finite values and NaN (missing) are allowed")
    lp = _check_log_prior(log_prior)
    means, variances = _check_gaussian_params(means, variances, lp.size, X.shape[1])
    observed = ~np.isnan(X)
    Xf = np.where(observed, X, 0.0)
    out = np.empty((X.shape[0], lp.size))
    for c in range(lp.size):
        terms = LOG_2PI + np.log(variances[c]) + (Xf - means[c]) ** 2 / variances[c]
        out[:, c] = -0.5 * np.sum(np.where(observed, terms, 0.0), axis=1)
    return out + lp[None, :]


def _check_gaussian_params(means, variances, n_classes, n_features):
    means = as_2d_float_array(means, "means", min_rows=1)
    variances = as_2d_float_array(variances, "variances", min_rows=1)
    if means.shape != (n_classes, n_features):
        raise ValueError(
            f"means must have shape ({n_classes}, {n_features}) to match log_prior and X, "
            f"got {means.shape}"
        )
    if variances.shape != means.shape:
        raise ValueError(f"variances must have shape {means.shape}, got {variances.shape}")
    if np.any(variances <= 0):
        raise ValueError("variances must be > 0; use var_smoothing when fitting")
    return means, variances


# --------------------------------------------------------------------------- categorical


def fit_categorical_nb(
    X: ArrayLike, y: ArrayLike, alpha: float = 1.0, n_categories: ArrayLike | None = None
) -> tuple[NDArray[Any], FloatArray, list[FloatArray]]:
    """Fit a categorical naive Bayes classifier by smoothed counting.

    theta_d[c, k] = (N_dck + alpha) / (N_c + K_d alpha)

    where N_dck counts the samples of class c whose feature d equals k, and feature d takes
    the K_d values 0, ..., K_d - 1. With two values this is :func:`fit_bernoulli_nb`.

    Parameters
    ----------
    X : array_like of int, shape (N, D)
        Category codes 0, 1, ..., K_d - 1.
    y : array_like, shape (N,)
    alpha : float, >= 0
    n_categories : array_like of int, shape (D,), optional
        K_d; by default max(X[:, d]) + 1.

    Returns
    -------
    classes : ndarray, shape (C,)
    log_prior : ndarray, shape (C,)
    thetas : list of D ndarrays, thetas[d] of shape (C, K_d)

    See the chapter "Naive Bayes", section "Categorical features".
    """
    X, classes, index, counts = _fit_counts(X, y, binary=False)
    alpha = as_float(alpha, "alpha", low=0.0)
    if np.any(X < 0) or np.any(X != np.round(X)):
        raise ValueError("X must hold integer category codes 0, 1, 2, ...")
    codes = X.astype(np.int64)
    if n_categories is None:
        n_categories = codes.max(axis=0) + 1
    n_categories = np.asarray(n_categories)
    if n_categories.shape != (X.shape[1],) or np.any(codes >= n_categories[None, :]):
        raise ValueError("n_categories must give, per feature, a number above every code in X")
    thetas = []
    for d in range(X.shape[1]):  # a loop over features; counting is vectorised
        n_dck = np.zeros((classes.size, int(n_categories[d])))
        np.add.at(n_dck, (index, codes[:, d]), 1.0)
        thetas.append((n_dck + alpha) / (counts[:, None] + n_categories[d] * alpha))
    return classes, np.log(counts / X.shape[0]), thetas


def categorical_nb_log_joint(
    X: ArrayLike, log_prior: ArrayLike, thetas: Sequence[ArrayLike]
) -> FloatArray:
    """Joint log-probabilities log pi_c + sum_d log thetas[d][c, x_d], shape (N, C).

    See the chapter "Naive Bayes", section "Categorical features".
    """
    X = as_2d_float_array(X, "X")
    lp = _check_log_prior(log_prior)
    if len(thetas) != X.shape[1]:
        raise ValueError(f"X has {X.shape[1]} columns but {len(thetas)} thetas were given")
    codes = X.astype(np.int64)
    if np.any(codes != X) or np.any(codes < 0):
        raise ValueError("X must hold integer category codes 0, 1, 2, ...")
    out = np.tile(lp, (X.shape[0], 1))
    with np.errstate(divide="ignore"):
        for d, th in enumerate(thetas):
            th = as_2d_float_array(th, f"thetas[{d}]")
            if np.any(codes[:, d] >= th.shape[1]):
                raise ValueError(f"X[:, {d}] has a code that thetas[{d}] does not cover")
            out += np.log(th[:, codes[:, d]]).T
    return out


# --------------------------------------------------------------------------- linear form


def nb_linear_weights(log_prior: ArrayLike, theta: ArrayLike) -> tuple[float, FloatArray]:
    """Bernoulli naive Bayes with two classes as a linear classifier.

    log p(c1 | x) / p(c0 | x) = w0 + w . x  with c1 = classes[1], c0 = classes[0], and

    w_d = log(theta_1d / (1 - theta_1d)) - log(theta_0d / (1 - theta_0d))
    w0  = log(pi_1 / pi_0) + sum_d log((1 - theta_1d) / (1 - theta_0d))

    Parameters
    ----------
    log_prior : array_like, shape (2,)
    theta : array_like, shape (2, D), entries strictly between 0 and 1

    Returns
    -------
    w0 : float
    w : ndarray, shape (D,)

    Raises
    ------
    ValueError
        When a theta is exactly 0 or 1 (the weight would be infinite; smooth with alpha > 0),
        or a prior is 0.

    See the chapter "Naive Bayes", section "Naive Bayes is a linear classifier".
    """
    lp = _check_log_prior(log_prior)
    if lp.size != 2:
        raise ValueError(f"log_prior must have 2 entries (two classes), got {lp.size}")
    if not np.all(np.isfinite(lp)):
        raise ValueError("log_prior has a -inf entry; both classes need a positive prior")
    th = _check_theta(theta, 2)
    if np.any((th == 0) | (th == 1)):
        raise ValueError(
            "theta has an entry exactly 0 or 1, so a weight would be infinite; "
            "fit with alpha > 0"
        )
    logit = np.log(th) - np.log1p(-th)
    w = logit[1] - logit[0]
    w0 = float(lp[1] - lp[0] + np.sum(np.log1p(-th[1]) - np.log1p(-th[0])))
    return w0, w


# --------------------------------------------------------------------------- estimators


class BernoulliNaiveBayes(ProbabilisticClassifier):
    """Bernoulli naive Bayes in the scikit-learn style, built on :func:`fit_bernoulli_nb`.

    Attributes after ``fit``: ``classes_`` (C,), ``class_log_prior_`` (C,), ``theta_`` (C, D).
    ``predict_proba``, ``predict_log_proba``, ``predict`` and ``score`` come from
    :class:`~mlcourse_utils._base.ProbabilisticClassifier`.

    The log joint is linear in x (see :func:`bernoulli_nb_log_joint`): ``fit`` computes its
    weights log theta - log(1 - theta) and offsets once, and each prediction is one product
    with X, checking X binary block by block on the way. When a theta is exactly 0 or 1
    (``alpha = 0``) the weights would be infinite and :func:`bernoulli_nb_log_joint` is used.

    See the chapter "Naive Bayes".
    """

    def __init__(self, alpha: float = 1.0) -> None:
        self.alpha = alpha

    def _fit(self, X: ArrayLike, y: ArrayLike) -> None:
        self.classes_, self.class_log_prior_, self.theta_ = fit_bernoulli_nb(X, y, self.alpha)
        theta = self.theta_
        self._linear = None
        if np.all((theta > 0) & (theta < 1)):
            log_1mt = np.log1p(-theta)
            weights = np.log(theta) - log_1mt
            self._linear = weights, self.class_log_prior_ + log_1mt.sum(axis=1)

    def log_joint(self, X: ArrayLike) -> FloatArray:
        """(N, C) log p(x_i, c)."""
        self._check_fitted()
        if self._linear is None:
            return bernoulli_nb_log_joint(X, self.class_log_prior_, self.theta_)
        return _binary_scores(X, *self._linear)

    _class_scores = log_joint


class GaussianNaiveBayes(ProbabilisticClassifier):
    """Gaussian naive Bayes in the scikit-learn style, built on :func:`fit_gaussian_nb`.

    Attributes after ``fit``: ``classes_``, ``class_log_prior_``, ``means_`` (C, D),
    ``variances_`` (C, D).

    See the chapter "Naive Bayes".
    """

    def __init__(self, var_smoothing: float = 0.0) -> None:
        self.var_smoothing = var_smoothing

    def _fit(self, X: ArrayLike, y: ArrayLike) -> None:
        self.classes_, self.class_log_prior_, self.means_, self.variances_ = fit_gaussian_nb(
            X, y, self.var_smoothing
        )

    def log_joint(self, X: ArrayLike) -> FloatArray:
        """(N, C) log p(x_i, c)."""
        self._check_fitted()
        return gaussian_nb_log_joint(X, self.class_log_prior_, self.means_, self.variances_)

    _class_scores = log_joint
