"""Tests for mlcourse_utils.gda (chapter "Gaussian discriminant analysis").

Expected values come from hand derivations (stated in each docstring), from
scipy.stats.multivariate_normal, or from scikit-learn's discriminant analysis estimators fitted
on the same data after matching their conventions.
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal
from scipy.special import logsumexp
from scipy.stats import multivariate_normal
from sklearn.discriminant_analysis import (
    LinearDiscriminantAnalysis,
    QuadraticDiscriminantAnalysis,
)

from mlcourse_utils import datasets
from mlcourse_utils._validation import NotFittedError
from mlcourse_utils.gda import (
    LDA,
    QDA,
    GaussianDiscriminantAnalysis,
    fit_lda,
    fit_qda,
    gda_log_joint,
    lda_coefficients,
    nearest_centroid_predict,
    qda_log_odds_coefficients,
    regularized_cov,
)
from tolerances import exact_mean, few_ops, sum_atol, sum_rtol


def _random_spd(rng, D, n_matrices=None):
    shape = (D, D) if n_matrices is None else (n_matrices, D, D)
    M = rng.normal(size=shape)
    return M @ np.swapaxes(M, -1, -2) + D * np.eye(D)


def _posterior(log_joint):
    return np.exp(log_joint - logsumexp(log_joint, axis=1, keepdims=True))


@pytest.fixture(scope="module")
def iris():
    bunch = datasets.load_iris()
    return bunch.data, bunch.target


@pytest.fixture(scope="module")
def wine():
    bunch = datasets.load_wine()
    return bunch.data, bunch.target


# --------------------------------------------------------------------------------- fitting


def test_fit_qda_hand_example_1d():
    """Class 'a' = {0, 2}: mean 1, ML variance ((0-1)^2 + (2-1)^2)/2 = 1.
    Class 'b' = {4, 6, 8}: mean 6, ML variance (4 + 0 + 4)/3 = 8/3. Priors 2/5 and 3/5."""
    X = [[4.0], [0.0], [6.0], [2.0], [8.0]]
    y = ["b", "a", "b", "a", "b"]
    classes, priors, means, covs = fit_qda(X, y)
    assert_array_equal(classes, ["a", "b"])
    assert_allclose(priors, [0.4, 0.6], rtol=few_ops())
    assert_allclose(means, [[1.0], [6.0]], rtol=few_ops())
    assert covs.shape == (2, 1, 1)
    assert_allclose(covs[:, 0, 0], [1.0, 8.0 / 3.0], rtol=few_ops())


def test_fit_lda_hand_example_1d():
    """Same data: pooled ML variance = (2 * 1 + 3 * 8/3) / 5 = 10/5 = 2 (divides by N = 5)."""
    X = [[4.0], [0.0], [6.0], [2.0], [8.0]]
    y = ["b", "a", "b", "a", "b"]
    classes, priors, means, cov = fit_lda(X, y)
    assert_array_equal(classes, ["a", "b"])
    assert_allclose(priors, [0.4, 0.6], rtol=few_ops())
    assert_allclose(means, [[1.0], [6.0]], rtol=few_ops())
    assert cov.shape == (1, 1)
    assert_allclose(cov, [[2.0]], rtol=few_ops())


def test_fit_qda_2d_hand_example():
    """Class 0 = corners of the square {0, 2}^2: mean (1, 1), ML covariance I (each coordinate
    is +-1 from the mean, and the products cancel). Class 1 = (0, 0), (2, 2): mean (1, 1),
    covariance [[1, 1], [1, 1]] (perfectly correlated, singular)."""
    X = np.array([[0, 0], [0, 2], [2, 0], [2, 2], [0, 0], [2, 2]], dtype=float)
    y = np.array([0, 0, 0, 0, 1, 1])
    _, priors, means, covs = fit_qda(X, y)
    assert_allclose(priors, [4 / 6, 2 / 6])
    assert_allclose(means, [[1, 1], [1, 1]])
    assert_allclose(covs[0], np.eye(2), atol=few_ops())
    assert_allclose(covs[1], [[1, 1], [1, 1]], atol=few_ops())


def test_fit_matches_numpy_cov_with_bias(wine):
    """Per-class covariances equal np.cov(..., bias=True) (ML, divide by N_c); the pooled one
    equals sum_c (N_c / N) Sigma_c."""
    X, y = wine
    classes, priors, means, covs = fit_qda(X, y)
    _, priors2, means2, cov = fit_lda(X, y)
    pooled = np.zeros_like(cov)
    for c, label in enumerate(classes):
        Xc = X[y == label]
        assert_allclose(means[c], Xc.mean(axis=0), rtol=1e-12)
        assert_allclose(covs[c], np.cov(Xc, rowvar=False, bias=True), rtol=1e-10, atol=1e-12)
        pooled += len(Xc) / len(X) * np.cov(Xc, rowvar=False, bias=True)
    assert_allclose(priors, np.bincount(y) / len(y))
    assert_allclose(priors2, priors)
    assert_allclose(means2, means)
    assert_allclose(cov, pooled, rtol=1e-10, atol=1e-12)
    assert_array_equal(covs, np.swapaxes(covs, 1, 2))


def test_fit_lda_matches_sklearn_covariance(iris):
    """scikit-learn's LDA (solver='lsqr', store_covariance=True) stores
    covariance_ = sum_c priors_c * (ML covariance of class c): the same pooled ML estimate."""
    X, y = iris
    sk = LinearDiscriminantAnalysis(solver="lsqr", store_covariance=True).fit(X, y)
    _, priors, means, cov = fit_lda(X, y)
    # 150 rows of size <= 8: two summation orders differ by sum_atol(150, 64) ~ 2e-12
    # at most; rtol 1e-10 covers entries near 0.1 with a margin.
    assert_allclose(cov, sk.covariance_, rtol=1e-10, atol=sum_atol(150, 64.0))
    assert_allclose(means, sk.means_, rtol=1e-12)
    assert_allclose(priors, sk.priors_, rtol=1e-12)


# ------------------------------------------------------------------------------- log-joint


def test_gda_log_joint_hand_example_1d():
    """Priors (0.4, 0.6), means (1, 6), variances (1, 8/3), at x = 3:
    log 0.4 - 1/2 log(2 pi) - 1/2 log 1 - (3 - 1)^2 / 2 = log 0.4 - 1/2 log(2 pi) - 2, and
    log 0.6 - 1/2 log(2 pi) - 1/2 log(8/3) - (3 - 6)^2 / (2 * 8/3)."""
    lj = gda_log_joint([[3.0]], [0.4, 0.6], [[1.0], [6.0]], [[[1.0]], [[8.0 / 3.0]]])
    half_log_2pi = 0.5 * math.log(2 * math.pi)
    expected = [
        math.log(0.4) - half_log_2pi - 2.0,
        math.log(0.6) - half_log_2pi - 0.5 * math.log(8 / 3) - 9.0 / (16.0 / 3.0),
    ]
    assert lj.shape == (1, 2)
    assert_allclose(lj[0], expected, rtol=few_ops())


@pytest.mark.parametrize("D", [1, 2, 5])
def test_gda_log_joint_matches_scipy(D):
    """log pi_c + scipy.stats.multivariate_normal(mu_c, Sigma_c).logpdf(x), per class."""
    rng = np.random.default_rng(D)
    C = 3
    priors = rng.dirichlet(np.ones(C))
    means = rng.normal(size=(C, D)) * 3
    covs = _random_spd(rng, D, C)
    X = rng.normal(size=(40, D)) * 4
    expected = np.column_stack(
        [np.log(priors[c]) + multivariate_normal(means[c], covs[c]).logpdf(X) for c in range(C)]
    )
    assert_allclose(gda_log_joint(X, priors, means, covs), expected, rtol=1e-11, atol=1e-11)
    # A shared (D, D) covariance is used for every class.
    shared = np.column_stack(
        [np.log(priors[c]) + multivariate_normal(means[c], covs[0]).logpdf(X) for c in range(C)]
    )
    assert_allclose(gda_log_joint(X, priors, means, covs[0]), shared, rtol=1e-11, atol=1e-11)


def test_gda_log_joint_far_points_finite():
    """A point 1e4 standard deviations away: log density -1e8/2 - ..., finite, no warning."""
    with np.errstate(all="raise"):
        lj = gda_log_joint([[1e4]], [0.5, 0.5], [[0.0], [1.0]], [[1.0]])
    expected = math.log(0.5) - 0.5 * math.log(2 * math.pi) - 0.5 * 1e8
    assert_allclose(lj[0, 0], expected, rtol=few_ops())
    assert np.all(np.isfinite(lj))


def test_gda_log_joint_zero_prior_gives_minus_inf():
    """log 0 = -inf is a legitimate log-joint."""
    lj = gda_log_joint([[0.0]], [0.0, 1.0], [[0.0], [1.0]], [[1.0]])
    assert lj[0, 0] == -np.inf
    assert np.isfinite(lj[0, 1])


# --------------------------------------------------------------- agreement with scikit-learn


def _many_rows(n=20_000, d=12, offset=0.0, seed=8):
    """Enough rows that the class statistics run over several blocks of rows (2^16 entries)."""
    rng = np.random.default_rng(seed)
    y = rng.choice(["a", "b", "c"], size=n, p=[0.2, 0.3, 0.5])
    X = rng.normal(size=(n, d)) @ (np.eye(d) + 0.3 * rng.normal(size=(d, d))) + offset
    X += (y == "b")[:, None] * 0.8 - (y == "c")[:, None] * 0.5
    return X, y


def test_fit_over_many_blocks_matches_sklearn():
    """20 000 x 12 (four blocks of rows): QDA's and LDA's ML parameters are scikit-learn's
    (QDA stores ML covariances from version 1.9; before, S_c / (N_c - 1)), and so are the
    estimators' posteriors."""
    X, y = _many_rows()
    classes, priors, means, covs = fit_qda(X, y)
    sk = QuadraticDiscriminantAnalysis(store_covariance=True).fit(X, y)
    counts = np.bincount(np.unique(y, return_inverse=True)[1]).astype(float)
    factor = np.ones(3) if _sklearn_qda_uses_ml_covariance() else counts / (counts - 1)
    # Class means of ~7 000 mixed-sign terms of size ~1, summed in another order by
    # scikit-learn: within sum_atol(N, mean |x|) of each other (N >= N_c), not one ulp.
    assert_allclose(means, sk.means_, rtol=0, atol=sum_atol(len(X), np.abs(X).mean()))
    assert_allclose(covs * factor[:, None, None], np.array(sk.covariance_), rtol=1e-10,
                    atol=1e-12)
    assert_allclose(QDA().fit(X, y).predict_proba(X)[:5],
                    _posterior(gda_log_joint(X[:5], priors, means, covs)), rtol=1e-12)
    _, priors, means, cov = fit_lda(X, y)
    sk = LinearDiscriminantAnalysis(solver="lsqr", store_covariance=True).fit(X, y)
    assert_allclose(priors, sk.priors_, rtol=few_ops())
    assert_allclose(cov, sk.covariance_, rtol=1e-10, atol=1e-12)
    assert_allclose(LDA().fit(X, y).predict_proba(X), sk.predict_proba(X), atol=1e-10)


@pytest.mark.parametrize("n, d", [(20_000, 5), (1500, 80)])
def test_qda_estimator_log_joint_is_gda_log_joint(n, d):
    """The QDA estimator inverts each Cholesky factor once at fit and multiplies (BLAS trmm)
    where gda_log_joint solves a triangular system: the same log joint, tall and wide.

    Both compute z = L^-1 (x - mu_c) backward stably, so they differ by about
    cond(L) D U |z|; the class covariances here are near the identity (cond(L) < 10) and
    |z|^2 ~ D, so the log joints (of size ~D) agree to ~1e-13 relative: 1e-10 has margin."""
    rng = np.random.default_rng(3)
    y = rng.integers(0, 3, size=n)
    mixing = np.eye(d) + 0.2 * rng.normal(size=(3, d, d)) / np.sqrt(d)
    X = np.einsum("nd,nde->ne", rng.normal(size=(n, d)), mixing[y]) + 0.3 * y[:, None]
    model = QDA().fit(X, y)
    expected = gda_log_joint(X, model.priors_, model.means_, model.covs_)
    assert_allclose(model.log_joint(X), expected, rtol=1e-10)
    assert_allclose(model.predict_proba(X), _posterior(expected), rtol=1e-9, atol=1e-12)
    with pytest.raises(ValueError, match=f"X has {d - 1} columns but means has {d}"):
        model.predict_proba(X[:, 1:])


def test_qda_estimator_with_a_singular_covariance_fits_and_explains_when_predicting():
    """A class with fewer samples than features has a singular covariance: fit succeeds (the
    factors are not needed yet) and predicting raises gda_log_joint's hint."""
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(size=(30, 4)), rng.normal(size=(3, 4)) + 2.0])
    y = np.array([0] * 30 + [1] * 3)
    model = QDA().fit(X, y)
    with pytest.raises(ValueError, match=r"covs\[1\].*regularized_cov"):
        model.predict_proba(X)
    assert_allclose(QDA(reg=0.5).fit(X, y).predict_proba(X).sum(axis=1), 1.0, rtol=1e-12)


def test_covariances_accurate_far_from_zero():
    """Data around 1e6 with spread ~1: each class covariance equals np.cov(bias=True) of the
    class's rows (centring first; X^T X - N mu mu^T would lose about 12 digits here)."""
    X, y = _many_rows(n=6000, d=4, offset=1e6)
    classes, _, means, covs = fit_qda(X, y)
    for k, c in enumerate(classes):
        Xc = X[y == c]
        # The mean is a sum of N_c positive terms: any summation order is within
        # gamma(N_c - 1) of the correctly rounded sum (tolerances.sum_rtol); about 4e-13 here.
        assert_allclose(means[k], exact_mean(Xc), rtol=sum_rtol(len(Xc)))
        # Centred first, each x - mu is exact (Sterbenz) up to the mean's error d, which adds
        # N_c d^2 to the scatter: (N_c U |mu|)^2 ~ 1e-13 against variances ~1, plus a sum of
        # N_c squares (sum_rtol). One-pass X^T X - N mu mu^T would be off by ~1e-4 here.
        assert_allclose(covs[k], np.cov(Xc, rowvar=False, bias=True), rtol=1e-9, atol=1e-10)


def _sklearn_qda_uses_ml_covariance():
    """scikit-learn's QDA divided its class covariances by N_c - 1 before version 1.9 and by
    N_c since. Find out which on a hand example: class 0 = {0, 2} has ML variance 1 and
    unbiased variance 2."""
    X = np.array([[0.0], [2.0], [10.0], [14.0]])
    y = np.array([0, 0, 1, 1])
    var = QuadraticDiscriminantAnalysis(store_covariance=True).fit(X, y).covariance_[0][0, 0]
    assert var == pytest.approx(1.0) or var == pytest.approx(2.0)
    return var == pytest.approx(1.0)


@pytest.mark.parametrize("dataset", ["iris", "wine"])
def test_qda_matches_sklearn(dataset, request):
    """scikit-learn's QDA with the same covariances gives the same posteriors and predictions.

    If scikit-learn uses S_c / (N_c - 1), our ML covariance S_c / N_c times N_c / (N_c - 1) is
    its covariance_; feeding those into gda_log_joint must reproduce its predict_proba.
    With ML covariances (scikit-learn >= 1.9) the factor is 1."""
    X, y = request.getfixturevalue(dataset)
    sk = QuadraticDiscriminantAnalysis(store_covariance=True).fit(X, y)
    classes, priors, means, covs = fit_qda(X, y)
    counts = np.bincount(y).astype(float)
    factor = np.ones_like(counts) if _sklearn_qda_uses_ml_covariance() else counts / (counts - 1)
    sk_covs = covs * factor[:, None, None]
    assert_allclose(sk_covs, np.array(sk.covariance_), rtol=1e-8, atol=1e-10)
    assert_allclose(means, sk.means_, rtol=1e-12)
    lj = gda_log_joint(X, priors, means, sk_covs)
    assert_allclose(_posterior(lj), sk.predict_proba(X), atol=1e-8)
    assert_array_equal(classes[np.argmax(lj, axis=1)], sk.predict(X))


@pytest.mark.parametrize("dataset", ["iris", "wine"])
@pytest.mark.parametrize("solver", ["lsqr", "eigen"])
def test_lda_matches_sklearn(dataset, solver, request):
    """scikit-learn's LDA uses the same pooled ML covariance and priors N_c / N, so the
    posteriors and predictions must agree without any rescaling."""
    X, y = request.getfixturevalue(dataset)
    sk = LinearDiscriminantAnalysis(solver=solver, store_covariance=True).fit(X, y)
    classes, priors, means, cov = fit_lda(X, y)
    lj = gda_log_joint(X, priors, means, cov)
    assert_allclose(_posterior(lj), sk.predict_proba(X), atol=1e-8)
    assert_array_equal(classes[np.argmax(lj, axis=1)], sk.predict(X))


def test_lda_coefficients_match_sklearn_lsqr(wine):
    """With solver='lsqr', scikit-learn's coef_ solves Sigma beta_c = mu_c and intercept_ is
    log pi_c - 1/2 mu_c^T beta_c: exactly (B, gamma)."""
    X, y = wine
    sk = LinearDiscriminantAnalysis(solver="lsqr").fit(X, y)
    _, priors, means, cov = fit_lda(X, y)
    B, gamma = lda_coefficients(priors, means, cov)
    assert_allclose(B, sk.coef_, rtol=1e-7, atol=1e-9)
    assert_allclose(gamma, sk.intercept_, rtol=1e-7, atol=1e-7)


def test_estimator_classes_match_sklearn(iris):
    """QDA/LDA classes: predict_proba rows sum to 1 and agree with sklearn on string labels."""
    X, y = iris
    names = np.array(["setosa", "versicolor", "virginica"])[y]
    lda = LDA().fit(X, names)
    sk = LinearDiscriminantAnalysis(solver="lsqr").fit(X, names)
    assert_array_equal(lda.predict(X), sk.predict(X))
    assert_allclose(lda.predict_proba(X), sk.predict_proba(X), atol=1e-8)
    assert lda.score(X, names) == pytest.approx(sk.score(X, names))
    qda = QDA().fit(X, names)
    assert_allclose(qda.predict_proba(X).sum(axis=1), 1.0, rtol=1e-12)
    assert_array_equal(qda.classes_, ["setosa", "versicolor", "virginica"])


def test_diag_estimator_is_gaussian_naive_bayes(wine):
    """covariance='diag' equals scikit-learn's GaussianNB with var_smoothing=0 (ML variances)."""
    from sklearn.naive_bayes import GaussianNB

    X, y = wine
    ours = GaussianDiscriminantAnalysis("diag").fit(X, y)
    sk = GaussianNB(var_smoothing=0.0).fit(X, y)
    assert_allclose(ours.predict_log_proba(X), sk.predict_log_proba(X), atol=1e-7)
    assert_array_equal(ours.predict(X), sk.predict(X))


def test_estimator_bad_arguments():
    with pytest.raises(ValueError, match="covariance"):
        GaussianDiscriminantAnalysis("spherical")
    with pytest.raises(ValueError, match="reg"):
        QDA(reg=1.5)
    with pytest.raises(NotFittedError, match="call fit"):
        LDA().predict([[0.0]])
    assert issubclass(NotFittedError, ValueError)


# ----------------------------------------------------------------------- linear and quadratic


def test_lda_coefficients_reproduce_tied_log_joint(iris):
    """log p(x, c) - (beta_c^T x + gamma_c) = kappa(x) does not depend on c:
    kappa(x) = -D/2 log 2 pi - 1/2 log|Sigma| - 1/2 x^T Sigma^{-1} x."""
    X, y = iris
    _, priors, means, cov = fit_lda(X, y)
    B, gamma = lda_coefficients(priors, means, cov)
    diff = gda_log_joint(X, priors, means, cov) - (X @ B.T + gamma)
    assert np.ptp(diff, axis=1).max() < 1e-9
    kappa = (
        -0.5 * X.shape[1] * np.log(2 * np.pi)
        - 0.5 * np.linalg.slogdet(cov)[1]
        - 0.5 * np.sum(X * np.linalg.solve(cov, X.T).T, axis=1)
    )
    assert_allclose(diff[:, 0], kappa, rtol=1e-9)


def test_lda_coefficients_hand_example_1d():
    """Variance 2, means 1 and 6, priors 0.4, 0.6: beta = mu / 2 = (0.5, 3),
    gamma = log pi - mu^2 / 4 = (log 0.4 - 0.25, log 0.6 - 9)."""
    B, gamma = lda_coefficients([0.4, 0.6], [[1.0], [6.0]], [[2.0]])
    assert_allclose(B, [[0.5], [3.0]], rtol=few_ops())
    assert_allclose(gamma, [math.log(0.4) - 0.25, math.log(0.6) - 9.0], rtol=few_ops())


def test_qda_log_odds_hand_example_1d():
    """1-D, class 0 ~ N(0, 1), class 1 ~ N(2, 4), priors (0.25, 0.75). By hand:
    A = -1/2 (1/4 - 1) = 3/8, w = 2/4 - 0 = 1/2,
    w0 = log 3 - 1/2 (4/4 - 0) - 1/2 log(4/1) = log 3 - 1/2 - log 2."""
    A, w, w0 = qda_log_odds_coefficients([0.25, 0.75], [[0.0], [2.0]], [[[1.0]], [[4.0]]])
    assert_allclose(A, [[3 / 8]], rtol=few_ops())
    assert_allclose(w, [0.5], rtol=few_ops())
    assert w0 == pytest.approx(math.log(3) - 0.5 - math.log(2), rel=1e-14)
    assert isinstance(w0, float)


@pytest.mark.parametrize("D", [1, 3, 4])
def test_qda_log_odds_matches_log_joint_difference(D):
    """x^T A x + w^T x + w0 equals log p(x, c1) - log p(x, c0) from gda_log_joint at random
    points; A is symmetric."""
    rng = np.random.default_rng(10 + D)
    priors = rng.dirichlet([1.0, 1.0])
    means = rng.normal(size=(2, D)) * 2
    covs = _random_spd(rng, D, 2)
    X = rng.normal(size=(50, D)) * 3
    A, w, w0 = qda_log_odds_coefficients(priors, means, covs)
    assert_array_equal(A, A.T)
    lj = gda_log_joint(X, priors, means, covs)
    quad = np.einsum("ni,ij,nj->n", X, A, X) + X @ w + w0
    assert_allclose(quad, lj[:, 1] - lj[:, 0], rtol=1e-9, atol=1e-10)


def test_qda_log_odds_tied_is_linear():
    """With a shared covariance A = 0 and (w, w0) = (beta_1 - beta_0, gamma_1 - gamma_0)."""
    rng = np.random.default_rng(3)
    priors, means, cov = [0.3, 0.7], rng.normal(size=(2, 3)), _random_spd(rng, 3)
    A, w, w0 = qda_log_odds_coefficients(priors, means, cov)
    B, gamma = lda_coefficients(priors, means, cov)
    # One shared covariance: both quadratic terms come from the same factorisation, so
    # they cancel to a few roundings of entries of size ~1.
    assert_allclose(A, 0.0, atol=few_ops())
    assert_allclose(w, B[1] - B[0], rtol=1e-12)
    assert w0 == pytest.approx(gamma[1] - gamma[0], rel=1e-12)


def test_qda_log_odds_bad_inputs():
    with pytest.raises(ValueError, match="means"):
        qda_log_odds_coefficients([1 / 3] * 3, np.zeros((3, 2)), np.eye(2))
    with pytest.raises(ValueError, match="priors"):
        qda_log_odds_coefficients([0.0, 1.0], np.zeros((2, 2)), np.eye(2))
    with pytest.raises(ValueError, match="covs"):
        qda_log_odds_coefficients([0.5, 0.5], np.zeros((2, 2)), np.zeros((2, 2)))


# ------------------------------------------------------------------------- regularised cov


def test_regularized_cov_endpoints():
    """lam = 0 returns Sigma, lam = 1 its diagonal, lam = 0.25 scales the off-diagonal by 3/4."""
    S = np.array([[4.0, 2.0], [2.0, 3.0]])
    assert_array_equal(regularized_cov(S, 0), S)
    assert_array_equal(regularized_cov(S, 1), np.diag([4.0, 3.0]))
    assert_allclose(regularized_cov(S, 0.25), [[4.0, 1.5], [1.5, 3.0]], rtol=few_ops())


def test_regularized_cov_stack_and_singular():
    """A (C, D, D) stack is shrunk matrix by matrix; a singular [[1, 1], [1, 1]] becomes
    [[1, 0.9], [0.9, 1]] at lam = 0.1, which gda_log_joint accepts."""
    S = np.array([[[1.0, 1.0], [1.0, 1.0]], [[2.0, -1.0], [-1.0, 5.0]]])
    R = regularized_cov(S, 0.1)
    assert R.shape == (2, 2, 2)
    assert_allclose(R[0], [[1.0, 0.9], [0.9, 1.0]], rtol=few_ops())
    assert_allclose(R[1], [[2.0, -0.9], [-0.9, 5.0]], rtol=few_ops())
    with pytest.raises(ValueError, match="regularized_cov"):
        gda_log_joint([[0.0, 0.0]], [0.5, 0.5], np.zeros((2, 2)), S)
    assert np.all(np.isfinite(gda_log_joint([[0.0, 0.0]], [0.5, 0.5], np.zeros((2, 2)), R)))


@settings(max_examples=50, deadline=None)
@given(
    lam=st.floats(0.0, 1.0),
    seed=st.integers(0, 2**32 - 1),
    D=st.integers(1, 5),
)
def test_regularized_cov_properties(lam, seed, D):
    """Symmetric, diagonal kept, off-diagonal scaled by 1 - lam, still positive definite."""
    rng = np.random.default_rng(seed)
    S = _random_spd(rng, D)
    R = regularized_cov(S, lam)
    assert_array_equal(np.diag(R), np.diag(S))
    off = ~np.eye(D, dtype=bool)
    assert_allclose(R[off], (1 - lam) * S[off], rtol=1e-12, atol=1e-14)
    assert_allclose(R, R.T)
    assert np.linalg.eigvalsh(R).min() > 0


def test_regularized_cov_bad_inputs():
    with pytest.raises(ValueError, match="lam"):
        regularized_cov(np.eye(2), 1.5)
    with pytest.raises(ValueError, match="lam"):
        regularized_cov(np.eye(2), -0.1)
    with pytest.raises(TypeError, match="lam"):
        regularized_cov(np.eye(2), "0.5")
    with pytest.raises(ValueError, match="cov"):
        regularized_cov(np.ones((2, 3)), 0.5)
    with pytest.raises(ValueError, match="symmetric"):
        regularized_cov([[1.0, 0.5], [0.0, 1.0]], 0.5)


# ------------------------------------------------------------------------- nearest centroid


def test_nearest_centroid_euclidean_and_ties():
    """Means 0, 2, 2 on a line: x = 1 is equidistant from all three -> index 0; x = 3 is
    equidistant from means 1 and 2 (identical) -> index 1 (the lowest)."""
    means = [[0.0], [2.0], [2.0]]
    pred = nearest_centroid_predict([[1.0], [3.0], [-5.0], [1.1]], means)
    assert_array_equal(pred, [0, 1, 0, 1])
    assert np.issubdtype(pred.dtype, np.integer)


def test_nearest_centroid_mahalanobis_changes_the_answer():
    """Means (0, 0) and (3, 0), Sigma = [[1, 0.9], [0.9, 1]], so
    Sigma^{-1} = [[1, -0.9], [-0.9, 1]] / 0.19 and d^2(v) = (v1^2 - 1.8 v1 v2 + v2^2) / 0.19.
    x = (1.2, 2):  Euclidean 5.44 vs 7.24 -> 0;  Mahalanobis 1.12/0.19 vs 13.72/0.19 -> 0.
    x = (2, -1):   Euclidean 5 vs 2 -> 1;        Mahalanobis 8.6/0.19 vs 0.2/0.19 -> 1.
    x = (1, 1):    Euclidean 2 vs 5 -> 0;        Mahalanobis 0.2/0.19 vs 8.6/0.19 -> 0.
    x = (1.4, -1): Euclidean 2.96 vs 3.56 -> 0;  Mahalanobis 5.48/0.19 vs 0.68/0.19 -> 1."""
    means = [[0.0, 0.0], [3.0, 0.0]]
    cov = [[1.0, 0.9], [0.9, 1.0]]
    X = [[1.2, 2.0], [2.0, -1.0], [1.0, 1.0], [1.4, -1.0]]
    assert_array_equal(nearest_centroid_predict(X, means), [0, 1, 0, 0])
    assert_array_equal(nearest_centroid_predict(X, means, cov), [0, 1, 0, 1])


def test_nearest_centroid_is_lda_with_equal_priors(wine):
    """argmax of the tied log-joint with uniform priors = nearest Mahalanobis centroid."""
    X, y = wine
    _, _, means, cov = fit_lda(X, y)
    lj = gda_log_joint(X, np.full(3, 1 / 3), means, cov)
    assert_array_equal(nearest_centroid_predict(X, means, cov), np.argmax(lj, axis=1))


# ---------------------------------------------------------------------------- bad inputs


def test_singular_covariance_raises_with_hint():
    """One sample in a class (covariance 0) or D > N_c (rank-deficient): ValueError naming
    covs and suggesting regularized_cov."""
    X = np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 1.0], [5.0, 5.0]])
    y = np.array([0, 0, 0, 1])
    _, priors, means, covs = fit_qda(X, y)
    with pytest.raises(ValueError, match=r"covs\[1\].*regularized_cov"):
        gda_log_joint(X, priors, means, covs)
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(4, 6))  # 4 samples in 6 dimensions: rank 3
    _, priors, means, covs = fit_qda(np.vstack([Z, Z + 1]), [0] * 4 + [1] * 4)
    with pytest.raises(ValueError, match="singular"):
        gda_log_joint(Z, priors, means, covs)
    with pytest.raises(ValueError, match="cov.*regularized_cov"):
        lda_coefficients([0.5, 0.5], [[0.0, 0.0], [1.0, 1.0]], [[1.0, 1.0], [1.0, 1.0]])
    with pytest.raises(ValueError, match="cov"):
        nearest_centroid_predict([[0.0, 0.0]], [[0.0, 0.0]], [[1.0, 2.0], [2.0, 4.0]])


def test_not_positive_definite_raises():
    with pytest.raises(ValueError, match="covs"):
        gda_log_joint([[0.0, 0.0]], [1.0], [[0.0, 0.0]], [[1.0, 2.0], [2.0, 1.0]])


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(X=[[0.0, 1.0]]), "X has 2 columns"),
        (dict(X=[0.0]), "X must be 2-D"),
        (dict(X=[[np.nan]]), "X contains NaN"),
        (dict(priors=[0.5, 0.6]), "priors must sum to 1"),
        (dict(priors=[-0.5, 1.5]), "priors has negative"),
        (dict(priors=[1.0]), "priors has 1 entries"),
        (dict(means=[0.0, 1.0]), "means must be 2-D"),
        (dict(covs=np.ones((3, 1, 1))), "covs holds 3"),
        (dict(covs=np.ones((2, 2))), "covs is for 2 features"),
        (dict(covs=np.ones(2)), "covs must have shape"),
    ],
)
def test_gda_log_joint_bad_inputs(kwargs, match):
    args = dict(X=[[0.0]], priors=[0.5, 0.5], means=[[0.0], [1.0]], covs=[[[1.0]], [[2.0]]])
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        gda_log_joint(**args)


def test_fit_bad_inputs():
    with pytest.raises(ValueError, match="y has 2"):
        fit_qda([[0.0], [1.0], [2.0]], [0, 1])
    with pytest.raises(ValueError, match="X contains NaN"):
        fit_lda([[0.0], [np.inf]], [0, 1])
    with pytest.raises(ValueError, match="X must be 2-D"):
        fit_qda([0.0, 1.0], [0, 1])
    with pytest.raises(ValueError, match="X needs at least 1"):
        fit_lda(np.zeros((0, 2)), [])
    with pytest.raises(TypeError, match="X"):
        fit_qda([["a"], ["b"]], [0, 1])


def test_lda_coefficients_bad_inputs():
    with pytest.raises(ValueError, match="cov must be one shared"):
        lda_coefficients([0.5, 0.5], [[0.0], [1.0]], np.ones((2, 1, 1)))
    with pytest.raises(ValueError, match="priors"):
        lda_coefficients([0.5, 0.4], [[0.0], [1.0]], [[1.0]])
    with pytest.raises(ValueError, match="cov is for 1"):
        lda_coefficients([0.5, 0.5], [[0.0, 0.0], [1.0, 1.0]], [[1.0]])


def test_nearest_centroid_bad_inputs():
    with pytest.raises(ValueError, match="X has 1 columns"):
        nearest_centroid_predict([[0.0]], [[0.0, 1.0]])
    with pytest.raises(ValueError, match="cov must be one shared"):
        nearest_centroid_predict([[0.0]], [[0.0]], np.ones((1, 1, 1)))
    with pytest.raises(ValueError, match="cov must be symmetric"):
        nearest_centroid_predict([[0.0, 0.0]], [[0.0, 0.0]], [[1.0, 0.5], [0.0, 1.0]])
