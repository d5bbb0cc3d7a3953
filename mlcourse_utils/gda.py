"""Gaussian discriminant analysis: class-conditional Gaussians and the classifiers they give.

Each class c gets a prior pi_c and a Gaussian density N(x | mu_c, Sigma_c); Bayes' rule turns
them into a posterior over classes. Full per-class covariances give quadratic discriminant
analysis (QDA), one shared covariance gives linear discriminant analysis (LDA), diagonal
covariances give Gaussian naive Bayes, and shrinking the off-diagonal entries gives regularised
discriminant analysis (RDA). All covariances are maximum-likelihood estimates (divide by N_c or
N, not by N_c - 1).

Every density evaluation goes through a Cholesky factor Sigma = L L^T: the quadratic form is
the squared norm of L^{-1}(x - mu) (a triangular solve) and log|Sigma| = 2 sum_d log L_dd. No
covariance matrix is ever inverted explicitly. (The estimator classes, which predict many times
with the same covariances, invert the triangular factor L once at ``fit`` and multiply by it:
see :func:`_whitening`.)

See the chapter "Gaussian discriminant analysis".
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import linalg
from scipy.linalg import blas

from ._base import ProbabilisticClassifier
from ._validation import (
    LOG_2PI,
    FloatArray,
    as_2d_float_array,
    as_float,
    as_float_array,
    as_probability_vector,
    check_X_y,
    one_hot,
    row_blocks,
)

__all__ = [
    "fit_qda",
    "fit_lda",
    "gda_log_joint",
    "lda_coefficients",
    "qda_log_odds_coefficients",
    "regularized_cov",
    "nearest_centroid_predict",
    "GaussianDiscriminantAnalysis",
    "QDA",
    "LDA",
]

# ---------------------------------------------------------------------------------------------
# Input checks and the Cholesky factor
# ---------------------------------------------------------------------------------------------


def _check_means(means, name="means"):
    means = as_float_array(means, name, ndim=2, min_size=1)
    if means.shape[1] == 0:
        raise ValueError(f"{name} has no columns; it must have shape (C, D) with D >= 1")
    return means


def _check_priors(priors, n_classes):
    priors = as_probability_vector(priors, "priors")
    if priors.ndim != 1:
        raise ValueError(f"priors must be 1-D, got shape {priors.shape}")
    if priors.shape[0] != n_classes:
        raise ValueError(
            f"priors has {priors.shape[0]} entries but means has {n_classes} rows (classes)"
        )
    return priors


def _check_square(cov, name, D):
    """A (D, D) or (C, D, D) symmetric array; returns it as float64."""
    cov = as_float_array(cov, name)
    if cov.ndim not in (2, 3) or cov.shape[-1] != cov.shape[-2]:
        raise ValueError(f"{name} must have shape (D, D) or (C, D, D), got {cov.shape}")
    if D is not None and cov.shape[-1] != D:
        raise ValueError(f"{name} is for {cov.shape[-1]} features but means has {D} columns")
    transposed = np.swapaxes(cov, -1, -2)
    if np.array_equal(cov, transposed):             # the usual case, and the cheap test
        return cov
    scale = np.max(np.abs(cov)) if cov.size else 0.0
    if not np.allclose(cov, transposed, rtol=1e-8, atol=1e-12 * scale):
        raise ValueError(f"{name} must be symmetric")
    return cov


def _cholesky(cov, name):
    """Lower Cholesky factor of one covariance, or a ValueError suggesting regularisation.

    A covariance counts as singular when the factorisation fails or when a pivot is
    negligible relative to its variance: L_dd^2 / Sigma_dd <= 100 D eps, i.e. feature d is,
    to rounding error, a linear combination of the earlier features. The relative test makes
    the verdict independent of the features' units.
    """
    D = cov.shape[0]
    hint = (
        f"{name} is singular or not positive definite (D={D}); regularise it, e.g. "
        f"regularized_cov({name.split('[')[0]}, 0.1), or add a small multiple of the "
        "identity"
    )
    variances = np.diag(cov)
    if np.any(variances <= 0):
        raise ValueError(hint + "; some feature has zero variance")
    try:
        L = linalg.cholesky(cov, lower=True, check_finite=False)
    except linalg.LinAlgError:
        raise ValueError(hint) from None
    if np.any(np.diag(L) ** 2 / variances <= 100 * D * np.finfo(float).eps):
        raise ValueError(hint)
    return L


def _cholesky_stack(covs, name, n_classes):
    """Cholesky factors for a shared (D, D) or per-class (C, D, D) covariance; (C, D, D)."""
    if covs.ndim == 2:
        L = _cholesky(covs, name)
        return np.broadcast_to(L, (n_classes,) + L.shape)
    if covs.shape[0] != n_classes:
        raise ValueError(
            f"{name} holds {covs.shape[0]} covariance matrices but means has "
            f"{n_classes} rows (classes)"
        )
    return np.stack([_cholesky(covs[c], f"{name}[{c}]") for c in range(n_classes)])


def _solve_lower(L, B):
    """L^{-1} B for a lower triangular L; B is overwritten when it is Fortran-ordered (for
    example the transpose of a C-ordered array), which saves a copy of it."""
    return linalg.solve_triangular(L, B, lower=True, check_finite=False, overwrite_b=True)


# ---------------------------------------------------------------------------------------------
# Fitting by maximum likelihood
# ---------------------------------------------------------------------------------------------


def _class_statistics(X, classes, index, pooled=False):
    """Counts (C,), means (C, D) and ML covariances, in two passes over X.

    The means come from one matrix product with the one-hot matrix T (T[n, c] = 1 when
    y_n = c): row c of T^T X is the sum of the samples of class c. The covariances centre each
    sample at its class mean and add its outer product to its class,
    Sigma_c = (1/N_c) sum_{n: y_n = c} (x_n - mu_c)(x_n - mu_c)^T, as Z^T Z for the centred
    samples Z of class c (a symmetric matrix product, BLAS syrk): (C, D, D). With ``pooled``
    every outer product goes to one sum, Sigma = (1/N) sum_n (x_n - mu_{y_n})(x_n - mu_{y_n})^T
    (D, D), one Z^T Z for all the centred samples, without sorting them by class. The sums
    run over blocks of rows small enough to stay in the processor's cache: no array as large as
    X is made.
    """
    C, D = classes.shape[0], X.shape[1]
    onehot = one_hot(index, C)
    counts = onehot.sum(axis=0)
    means = onehot.T @ X / counts[:, None]          # row c: the sum over class c, / N_c
    covs = np.zeros((D, D) if pooled else (C, D, D))
    for rows in row_blocks(X.shape):                # blocks of rows that stay in cache
        centred = X[rows] - means[index[rows]]      # x_n - mu_{y_n}
        if pooled:
            covs += centred.T @ centred             # sum of (x_n - mu_{y_n})(...)^T
            continue
        for c in range(C):
            Z = centred[index[rows] == c]
            covs[c] += Z.T @ Z                      # sum of (x_n - mu_c)(x_n - mu_c)^T
    covs /= X.shape[0] if pooled else counts[:, None, None]
    return counts, means, covs


def fit_qda(X: ArrayLike, y: ArrayLike) -> tuple[NDArray[Any], FloatArray, FloatArray, FloatArray]:
    """Maximum-likelihood class priors, means and full per-class covariances (QDA).

    pi_c = N_c / N, mu_c = (1/N_c) sum_{i: y_i = c} x_i and
    Sigma_c = (1/N_c) sum_{i: y_i = c} (x_i - mu_c)(x_i - mu_c)^T. The covariances divide by
    N_c, not N_c - 1: they maximise the likelihood. A class with N_c <= D samples gets a
    singular covariance; it is returned as it is, and :func:`gda_log_joint` refuses it (use
    :func:`regularized_cov` or a tied covariance).

    Parameters
    ----------
    X : array_like, shape (N, D)
    y : array_like, shape (N,)
        Class labels of any sortable type.

    Returns
    -------
    classes : ndarray, shape (C,)
        ``np.unique(y)``; every per-class array is in this order.
    priors : ndarray, shape (C,)
    means : ndarray, shape (C, D)
    covs : ndarray, shape (C, D, D)

    See the chapter "Gaussian discriminant analysis", section "Fitting by maximum likelihood".
    """
    X, classes, index = check_X_y(X, y)
    counts, means, covs = _class_statistics(X, classes, index)
    return classes, counts / X.shape[0], means, covs


def fit_lda(X: ArrayLike, y: ArrayLike) -> tuple[NDArray[Any], FloatArray, FloatArray, FloatArray]:
    """Maximum-likelihood priors, means and one pooled (tied) covariance (LDA).

    Priors and means are those of :func:`fit_qda`; the shared covariance is the ML estimate
    under Sigma_c = Sigma for every c:
    Sigma = (1/N) sum_c sum_{i: y_i = c} (x_i - mu_c)(x_i - mu_c)^T = sum_c (N_c / N) Sigma_c,
    dividing by N (not N - C).

    Parameters
    ----------
    X : array_like, shape (N, D)
    y : array_like, shape (N,)

    Returns
    -------
    classes : ndarray, shape (C,)
    priors : ndarray, shape (C,)
    means : ndarray, shape (C, D)
    cov : ndarray, shape (D, D)

    See the chapter "Gaussian discriminant analysis", section "Tied covariances: LDA".
    """
    X, classes, index = check_X_y(X, y)
    counts, means, cov = _class_statistics(X, classes, index, pooled=True)
    return classes, counts / X.shape[0], means, cov


# ---------------------------------------------------------------------------------------------
# Evaluating the model
# ---------------------------------------------------------------------------------------------


def gda_log_joint(X: ArrayLike, priors: ArrayLike, means: ArrayLike, covs: ArrayLike) -> FloatArray:
    """Log joint density log p(x, c) = log pi_c + log N(x | mu_c, Sigma_c) for every class.

    log N(x | mu, Sigma) = -D/2 log(2 pi) - 1/2 log|Sigma| - 1/2 (x - mu)^T Sigma^{-1} (x - mu),
    computed with the Cholesky factor Sigma = L L^T: the quadratic form is ||L^{-1}(x - mu)||^2
    (a triangular solve) and log|Sigma| = 2 sum_d log L_dd. A zero prior gives a column of
    -inf. Normalising the rows (log-sum-exp) gives the posterior log p(c | x).

    Parameters
    ----------
    X : array_like, shape (N, D)
    priors : array_like, shape (C,)
        Class probabilities (non-negative, summing to 1).
    means : array_like, shape (C, D)
    covs : array_like, shape (C, D, D) or (D, D)
        One covariance per class (QDA) or one shared covariance (LDA). Each must be symmetric
        positive definite; a singular one raises ``ValueError`` suggesting
        :func:`regularized_cov`.

    Returns
    -------
    ndarray, shape (N, C)

    See the chapter "Gaussian discriminant analysis", section "Class-conditional Gaussians".
    """
    means = _check_means(means)
    C, D = means.shape
    priors = _check_priors(priors, C)
    covs = _check_square(covs, "covs", D)
    X = as_2d_float_array(X, "X")
    if X.shape[1] != D:
        raise ValueError(f"X has {X.shape[1]} columns but means has {D} (features)")
    Ls = _cholesky_stack(covs, "covs", C)
    out = np.empty((X.shape[0], C))
    with np.errstate(divide="ignore"):
        log_priors = np.log(priors)
    centred = np.empty(X.shape)                     # x - mu_c, one buffer for every class
    for c in range(C):  # a loop over classes; every sample is handled at once
        # (D, N) array z = L^{-1} (x - mu_c), solved in place in the transposed differences.
        z = _solve_lower(Ls[c], np.subtract(X, means[c], out=centred).T)
        half_logdet = np.sum(np.log(np.diag(Ls[c])))
        sq_norms = np.einsum("dn,dn->n", z, z)      # ||z_n||^2 for every column n
        out[:, c] = log_priors[c] - 0.5 * D * LOG_2PI - half_logdet - 0.5 * sq_norms
    return out


def _whitening(covs):
    """For the estimators: inverse Cholesky factors L_c^{-1} (C, D, D) and 1/2 log|Sigma_c|.

    :func:`gda_log_joint` solves L z = x - mu_c for every call, which BLAS does at about half
    the speed of a product. An estimator predicts many times with the same covariances, so it
    inverts each factor once at ``fit`` (a triangular solve against the identity: L^{-1} is
    lower triangular) and then multiplies, z = L^{-1}(x - mu_c) (BLAS trmm, N D^2 / 2
    multiply-adds per class, the count of the solve, at the speed of a product).
    """
    D = covs.shape[-1]
    Ls = _cholesky_stack(covs, "covs", covs.shape[0])
    eye = np.eye(D)
    inverses = [np.asfortranarray(linalg.solve_triangular(L, eye, lower=True, check_finite=False))
                for L in Ls]                        # Fortran order: what BLAS reads in place
    return inverses, np.log(np.diagonal(Ls, axis1=1, axis2=2)).sum(axis=1)


def _whitened_log_joint(X, priors, means, inverses, half_logdets):
    """:func:`gda_log_joint` from the factors of :func:`_whitening`: the same sum, with the
    triangular solve replaced by a product with the inverse factor."""
    N, D = X.shape
    out = np.empty((N, len(inverses)))
    with np.errstate(divide="ignore"):
        log_priors = np.log(priors)
    centred = np.empty(X.shape)                     # x - mu_c, one buffer for every class
    for c, inverse in enumerate(inverses):
        # (D, N) array z = L^{-1} (x - mu_c), multiplied in place in the transposed differences.
        z = blas.dtrmm(1.0, inverse, np.subtract(X, means[c], out=centred).T, lower=1,
                       overwrite_b=1)
        sq_norms = np.einsum("dn,dn->n", z, z)      # ||z_n||^2 for every column n
        out[:, c] = log_priors[c] - 0.5 * D * LOG_2PI - half_logdets[c] - 0.5 * sq_norms
    return out


def lda_coefficients(
    priors: ArrayLike, means: ArrayLike, cov: ArrayLike
) -> tuple[FloatArray, FloatArray]:
    """Linear discriminant functions of LDA: log p(x, c) = beta_c^T x + gamma_c + kappa(x).

    With a shared covariance the term -1/2 x^T Sigma^{-1} x (and the normalising constant) is
    the same for every class, so the classes are compared through the linear scores
    beta_c = Sigma^{-1} mu_c and gamma_c = log pi_c - 1/2 mu_c^T Sigma^{-1} mu_c. Sigma^{-1} mu_c
    is a Cholesky solve, not an explicit inverse.

    Parameters
    ----------
    priors : array_like, shape (C,)
    means : array_like, shape (C, D)
    cov : array_like, shape (D, D)

    Returns
    -------
    B : ndarray, shape (C, D)
        Row c is beta_c.
    gamma : ndarray, shape (C,)

    See the chapter "Gaussian discriminant analysis", section "Tied covariances: LDA".
    """
    means = _check_means(means)
    C, D = means.shape
    priors = _check_priors(priors, C)
    cov = _check_square(cov, "cov", D)
    if cov.ndim != 2:
        raise ValueError(f"cov must be one shared (D, D) covariance, got shape {cov.shape}")
    L = _cholesky(cov, "cov")
    B = linalg.cho_solve((L, True), means.T, check_finite=False).T
    with np.errstate(divide="ignore"):
        gamma = np.log(priors) - 0.5 * np.sum(means * B, axis=1)
    return B, gamma


def qda_log_odds_coefficients(
    priors: ArrayLike, means: ArrayLike, covs: ArrayLike
) -> tuple[FloatArray, FloatArray, float]:
    """The log-odds of two Gaussian classes as a quadratic form in x.

    log p(c_1 | x) / p(c_0 | x) = x^T A x + w^T x + w0 with (P_c = Sigma_c^{-1})

        A  = -1/2 (P_1 - P_0),
        w  = P_1 mu_1 - P_0 mu_0,
        w0 = log(pi_1 / pi_0) - 1/2 (mu_1^T P_1 mu_1 - mu_0^T P_0 mu_0)
             - 1/2 (log|Sigma_1| - log|Sigma_0|).

    Class c_1 is the second row of ``means`` (``classes[1]``). With one shared covariance
    A = 0 and the log-odds are linear: the posterior is a logistic function of w^T x + w0.
    The precision matrices are formed by Cholesky solves against the identity; A is
    symmetrised exactly.

    Parameters
    ----------
    priors : array_like, shape (2,)
        Both must be positive (a zero prior makes the log-odds infinite).
    means : array_like, shape (2, D)
    covs : array_like, shape (2, D, D) or (D, D)

    Returns
    -------
    A : ndarray, shape (D, D)
    w : ndarray, shape (D,)
    w0 : float

    See the chapter "Gaussian discriminant analysis", section "The log-odds of two classes".
    """
    means = _check_means(means)
    C, D = means.shape
    if C != 2:
        raise ValueError(f"means must have 2 rows (two classes), got {C}")
    priors = _check_priors(priors, C)
    if np.any(priors == 0):
        raise ValueError("priors must both be positive; a zero prior gives infinite log-odds")
    covs = _check_square(covs, "covs", D)
    Ls = _cholesky_stack(covs, "covs", C)
    eye = np.eye(D)
    P = [linalg.cho_solve((Ls[c], True), eye, check_finite=False) for c in range(2)]
    P = [0.5 * (Pc + Pc.T) for Pc in P]
    Pmu = [P[c] @ means[c] for c in range(2)]
    logdet = [2.0 * np.sum(np.log(np.diag(Ls[c]))) for c in range(2)]
    A = -0.5 * (P[1] - P[0])
    w = Pmu[1] - Pmu[0]
    w0 = (
        np.log(priors[1] / priors[0])
        - 0.5 * (means[1] @ Pmu[1] - means[0] @ Pmu[0])
        - 0.5 * (logdet[1] - logdet[0])
    )
    return A, w, float(w0)


def regularized_cov(cov: ArrayLike, lam: float) -> FloatArray:
    """Shrink a covariance towards its diagonal: lam diag(Sigma) + (1 - lam) Sigma.

    The variances are kept and every covariance (off-diagonal entry) is multiplied by
    1 - lam: lam = 0 returns Sigma, lam = 1 its diagonal (the naive Bayes covariance). For
    0 < lam <= 1 the result is positive definite whenever every variance is positive, even if
    Sigma is singular. This is regularised discriminant analysis (RDA).

    Parameters
    ----------
    cov : array_like, shape (D, D) or (C, D, D)
        One covariance or a stack of them (each is shrunk towards its own diagonal).
    lam : float
        0 <= lam <= 1.

    Returns
    -------
    ndarray, the shape of ``cov``

    See the chapter "Gaussian discriminant analysis", section "Diagonal and regularised
    covariances".
    """
    cov = _check_square(cov, "cov", None)
    lam = as_float(lam, "lam", low=0.0, high=1.0)
    out = (1.0 - lam) * cov
    D = cov.shape[-1]
    idx = np.arange(D)
    out[..., idx, idx] = cov[..., idx, idx]  # the variances are kept exactly
    return out


def nearest_centroid_predict(
    X: ArrayLike, means: ArrayLike, cov: ArrayLike | None = None
) -> NDArray[np.int64]:
    """Index of the nearest class mean for every row of X.

    The distance is the squared Mahalanobis distance (x - mu_c)^T Sigma^{-1} (x - mu_c) under
    ``cov`` (computed as ||L^{-1}(x - mu_c)||^2 with Sigma = L L^T), or the squared Euclidean
    distance when ``cov`` is None. This is LDA with equal priors. Ties go to the lowest index.

    Parameters
    ----------
    X : array_like, shape (N, D)
    means : array_like, shape (C, D)
    cov : array_like, shape (D, D), optional

    Returns
    -------
    ndarray of int, shape (N,)
        Indices into the rows of ``means``.

    See the chapter "Gaussian discriminant analysis", section "Nearest centroids".
    """
    means = _check_means(means)
    C, D = means.shape
    X = as_2d_float_array(X, "X")
    if X.shape[1] != D:
        raise ValueError(f"X has {X.shape[1]} columns but means has {D} (features)")
    diff = X[:, None, :] - means[None, :, :]  # (N, C, D)
    if cov is not None:
        cov = _check_square(cov, "cov", D)
        if cov.ndim != 2:
            raise ValueError(f"cov must be one shared (D, D) covariance, got {cov.shape}")
        L = _cholesky(cov, "cov")
        rhs = np.ascontiguousarray(diff.reshape(-1, D).T)
        diff = _solve_lower(L, rhs).T.reshape(X.shape[0], C, D)
    dist2 = np.sum(diff**2, axis=2)
    return np.argmin(dist2, axis=1).astype(np.int64)  # argmin takes the first of ties


# ---------------------------------------------------------------------------------------------
# Estimators in the scikit-learn style
# ---------------------------------------------------------------------------------------------


class GaussianDiscriminantAnalysis(ProbabilisticClassifier):
    """A Gaussian generative classifier with a choice of covariance structure.

    Parameters
    ----------
    covariance : {"full", "tied", "diag", "tied_diag"}
        "full": one covariance per class (QDA); "tied": one pooled covariance (LDA);
        "diag": per-class diagonal covariances (Gaussian naive Bayes); "tied_diag": the
        diagonal of the pooled covariance.
    reg : float
        RDA shrinkage lam in [0, 1], applied with :func:`regularized_cov` after fitting.

    Attributes after ``fit``: ``classes_``, ``priors_``, ``means_`` and ``covs_`` ((C, D, D) for
    "full"/"diag", (D, D) for "tied"/"tied_diag"). ``predict_proba``, ``predict_log_proba``,
    ``predict`` and ``score`` come from :class:`~mlcourse_utils._base.ProbabilisticClassifier`;
    with a shared covariance they use the linear scores of :func:`lda_coefficients` (the
    quadratic term is the same for every class and cancels in the posterior), with one
    covariance per class the inverse Cholesky factors computed once at ``fit`` (see
    :func:`_whitening`; the log joint is that of :func:`gda_log_joint`).

    See the chapter "Gaussian discriminant analysis".
    """

    _COVARIANCES = ("full", "tied", "diag", "tied_diag")

    def __init__(self, covariance: str = "full", reg: float = 0.0) -> None:
        if covariance not in self._COVARIANCES:
            raise ValueError(f"covariance must be one of {self._COVARIANCES}, got {covariance!r}")
        self.covariance = covariance
        self.reg = as_float(reg, "reg", low=0.0, high=1.0)

    def _fit(self, X: ArrayLike, y: ArrayLike) -> None:
        if self.covariance in ("full", "diag"):
            classes, priors, means, covs = fit_qda(X, y)
        else:
            classes, priors, means, covs = fit_lda(X, y)
        if self.covariance in ("diag", "tied_diag"):
            covs = regularized_cov(covs, 1.0)
        elif self.reg > 0:
            covs = regularized_cov(covs, self.reg)
        self.classes_, self.priors_, self.means_, self.covs_ = classes, priors, means, covs
        self._linear = lda_coefficients(priors, means, covs) if covs.ndim == 2 else None
        self._whitened = None
        if covs.ndim == 3:
            try:
                self._whitened = _whitening(covs)
            except ValueError:  # a singular covariance: gda_log_joint explains when predicting
                pass

    def log_joint(self, X: ArrayLike) -> FloatArray:
        """(N, C) log p(x, c)."""
        self._check_fitted()
        if self._whitened is None:
            return gda_log_joint(X, self.priors_, self.means_, self.covs_)
        X = as_2d_float_array(X, "X")
        if X.shape[1] != self.means_.shape[1]:
            raise ValueError(
                f"X has {X.shape[1]} columns but means has {self.means_.shape[1]} (features)"
            )
        return _whitened_log_joint(X, self.priors_, self.means_, *self._whitened)

    def _class_scores(self, X: ArrayLike) -> FloatArray:
        if self._linear is None:
            return self.log_joint(X)
        # Shared covariance: log p(x, c) = beta_c^T x + gamma_c + (a term common to all c).
        X = as_2d_float_array(X, "X")
        B, gamma = self._linear
        if X.shape[1] != B.shape[1]:
            raise ValueError(f"X has {X.shape[1]} columns but means has {B.shape[1]} (features)")
        return X @ B.T + gamma


class QDA(GaussianDiscriminantAnalysis):
    """Quadratic discriminant analysis: full per-class covariances, optional RDA shrinkage."""

    def __init__(self, reg: float = 0.0) -> None:
        super().__init__("full", reg)


class LDA(GaussianDiscriminantAnalysis):
    """Linear discriminant analysis: one pooled covariance, optional RDA shrinkage."""

    def __init__(self, reg: float = 0.0) -> None:
        super().__init__("tied", reg)
