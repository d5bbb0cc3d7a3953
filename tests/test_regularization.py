"""Tests for mlcourse_utils.regularization (chapter "Ridge and LASSO").

Expected values come from hand derivations (stated in each docstring: the one-feature example
x = (0, 1, 2, 3), y = (1, 3, 2, 6) has x_mean = 3/2, y_mean = 3, S_xx = sum (x - x_mean)^2 = 5
and S_xy = sum (x - x_mean)(y - y_mean) = 7), from optimality conditions checked directly, from
scipy, or from scikit-learn's Ridge, Lasso and lasso_path fitted on the same data.
"""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal
from scipy import optimize, stats
from sklearn import linear_model as sklm
from sklearn.linear_model import Lasso, Ridge
from sklearn.linear_model import lasso_path as sk_lasso_path

from mlcourse_utils import datasets
from mlcourse_utils import regularization as reg
from mlcourse_utils.mle import linear_regression_mle
from mlcourse_utils.regularization import (
    lasso_fit,
    lasso_lambda_max,
    lasso_map_lambda,
    lasso_objective,
    lasso_path,
    ridge_fit,
    ridge_map_lambda,
    soft_threshold,
)
from tolerances import few_ops, sum_atol, sum_rtol

X1 = np.array([[0.0], [1.0], [2.0], [3.0]])
Y1 = np.array([1.0, 3.0, 2.0, 6.0])


def _standardise(X):
    return (X - X.mean(axis=0)) / X.std(axis=0)


def _correlated(rng, n, d, rho=0.3, noise=1.0):
    """Standardised features with pairwise correlation about rho, y = X w + 2 + noise."""
    X = np.sqrt(1 - rho) * rng.normal(size=(n, d)) + np.sqrt(rho) * rng.normal(size=(n, 1))
    X = _standardise(X)
    w = rng.normal(0, 2, size=d) * (rng.random(d) < 0.6)
    return X, X @ w + 2.0 + noise * rng.normal(size=n)


def _sk_lasso(X, y, lam):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ConvergenceWarning at lam = 0 or tiny gaps
        return Lasso(alpha=lam, tol=1e-12, max_iter=1_000_000).fit(X, y)


@pytest.fixture(scope="module")
def diabetes():
    bunch = datasets.load_diabetes()
    return _standardise(bunch.data), bunch.target


# ----------------------------------------------------------------------------------- ridge


def test_ridge_one_feature_by_hand():
    """w = S_xy / (S_xx + lam) = 7 / (5 + 5) = 0.7 and b = 3 - 0.7 * 1.5 = 1.95 at lam = 5;
    lam = 0 is least squares, w = 7/5, b = 3 - 2.1 = 0.9."""
    w, b = ridge_fit(X1, Y1, 5.0)
    assert_allclose(w, [0.7], rtol=1e-12)
    assert b == pytest.approx(1.95, rel=1e-12)
    w0, b0 = ridge_fit(X1, Y1, 0.0)
    assert_allclose(w0, [1.4], rtol=1e-12)
    assert b0 == pytest.approx(0.9, rel=1e-12)
    assert isinstance(b, float) and w.dtype == np.float64 and w.shape == (1,)


@pytest.mark.parametrize("lam", [0.0, 1e-3, 0.5, 10.0, 1e4])
def test_ridge_matches_sklearn_on_diabetes(diabetes, lam):
    """Ridge(alpha=lam) minimises the same objective, with the intercept unpenalised."""
    X, y = diabetes
    for data in (X, datasets.load_diabetes().data):        # standardised and as shipped
        w, b = ridge_fit(data, y, lam)
        sk = Ridge(alpha=lam, solver="svd").fit(data, y)
        assert_allclose(w, sk.coef_, rtol=1e-8, atol=1e-8)
        assert b == pytest.approx(sk.intercept_, rel=1e-10)


@pytest.mark.parametrize("n,d", [(5, 20), (30, 30), (3, 1), (200, 3)])
def test_ridge_matches_sklearn_on_random_shapes(n, d):
    """Fewer samples than features (the N x N system) and more, against Ridge(solver='svd')."""
    rng = np.random.default_rng(n * 100 + d)
    X = rng.normal(3.0, 2.0, size=(n, d))
    y = rng.normal(size=n) + 10
    for lam in (1e-2, 1.0, 30.0):
        w, b = ridge_fit(X, y, lam)
        sk = Ridge(alpha=lam, solver="svd").fit(X, y)
        assert_allclose(w, sk.coef_, rtol=1e-8, atol=1e-10)
        assert b == pytest.approx(sk.intercept_, rel=1e-9)


def test_ridge_solves_its_normal_equations():
    """Stationarity, checked directly: sum_n r_n = 0 (the b-derivative) and
    -X^T r + lam w = 0 (half the w-derivative of ||r||^2 + lam ||w||^2)."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 6)) + 5
    y = X @ rng.normal(size=6) + rng.normal(size=40)
    lam = 3.7
    w, b = ridge_fit(X, y, lam)
    r = y - X @ w - b
    assert abs(r.sum()) < 1e-9
    assert_allclose(-X.T @ r + lam * w, 0.0, atol=1e-9)


def test_ridge_at_zero_is_chapter_one_least_squares():
    """lam = 0 returns linear_regression_mle's (w, b), also for a rank-deficient design."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(12, 3))
    X = np.column_stack([X, X[:, 0] + X[:, 1]])              # collinear: minimum-norm w
    y = rng.normal(size=12)
    w, b = ridge_fit(X, y, 0)
    w_ml, b_ml, _ = linear_regression_mle(X, y)
    # Exact: ridge_fit hands lam = 0 to linear_regression_mle itself (the same operations).
    assert_array_equal(w, w_ml)
    assert b == b_ml


def test_ridge_intercept_is_not_penalised():
    """Adding 100 to every y moves only b (by 100); shifting the features moves only b."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(25, 4))
    y = rng.normal(size=25)
    w, b = ridge_fit(X, y, 2.0)
    w2, b2 = ridge_fit(X, y + 100.0, 2.0)
    assert_allclose(w2, w, rtol=1e-10, atol=1e-12)
    assert b2 == pytest.approx(b + 100.0, rel=1e-12)
    shift = np.array([1.0, -2.0, 30.0, 0.5])
    w3, b3 = ridge_fit(X + shift, y, 2.0)
    assert_allclose(w3, w, rtol=1e-9, atol=1e-12)
    assert b3 == pytest.approx(b - shift @ w, rel=1e-9)


def test_ridge_shrinks_to_the_mean():
    """A huge penalty gives w -> 0 and b -> mean(y); the norm of w decreases with lam."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(30, 3))
    y = X @ [1.0, -2.0, 3.0] + 4.0
    w, b = ridge_fit(X, y, 1e12)
    assert np.abs(w).max() < 1e-9
    assert b == pytest.approx(y.mean(), rel=1e-9)
    norms = [np.linalg.norm(ridge_fit(X, y, lam)[0]) for lam in (0.0, 0.1, 1.0, 10.0, 100.0)]
    assert all(a > b for a, b in zip(norms[:-1], norms[1:], strict=True))


def test_ridge_small_penalty_on_singular_design():
    """A duplicated column: X^T X is singular, X^T X + lam I is not. With lam = 1e-6 the fit is
    least squares up to O(lam) and, by symmetry, the two copies share the weight equally."""
    rng = np.random.default_rng(5)
    x = rng.normal(size=(20, 1))
    X = np.hstack([x, x, rng.normal(size=(20, 1))])
    y = 2 * x[:, 0] + rng.normal(size=20)
    w, b = ridge_fit(X, y, 1e-6)
    w_ml, b_ml, _ = linear_regression_mle(X, y)
    assert_allclose(X @ w + b, X @ w_ml + b_ml, atol=1e-6)
    assert w[0] == pytest.approx(w[1], abs=1e-8)


def test_positive_definite_solve_falls_back_when_cholesky_fails():
    """An indefinite matrix (Cholesky fails) is still solved, through least squares."""
    from mlcourse_utils.regularization import _solve_positive_definite

    A = np.array([[1.0, 2.0], [2.0, 1.0]])
    assert_allclose(_solve_positive_definite(A, np.array([3.0, 3.0])), [1.0, 1.0], rtol=1e-12)


def test_ridge_bad_input():
    with pytest.raises(ValueError, match="lam"):
        ridge_fit(X1, Y1, -1.0)
    with pytest.raises(TypeError, match="lam"):
        ridge_fit(X1, Y1, "big")
    with pytest.raises(ValueError, match="y"):
        ridge_fit(X1, Y1[:3], 1.0)
    with pytest.raises(ValueError, match="X"):
        ridge_fit([[np.nan], [1.0], [2.0], [3.0]], Y1, 1.0)
    with pytest.raises(ValueError, match="X"):
        ridge_fit(Y1, Y1, 1.0)                                 # 1-D X


# ------------------------------------------------------------------------- penalties as priors


def test_ridge_map_lambda_is_the_posterior_mean():
    """Gaussian prior w ~ N(0, tau2 I), flat prior on b, noise variance sigma2: the posterior of
    w given the centred data is Gaussian with precision X_c^T X_c / sigma2 + I / tau2 and mean
    (that precision)^{-1} X_c^T y_c / sigma2 (conjugacy). Its mean is ridge with sigma2 / tau2."""
    rng = np.random.default_rng(6)
    X = rng.normal(size=(15, 4))
    y = X @ rng.normal(size=4) + rng.normal(size=15) + 1
    sigma2, tau2 = 0.7, 0.2
    lam = ridge_map_lambda(sigma2, tau2)
    assert lam == pytest.approx(3.5, rel=1e-15)
    Xc, yc = X - X.mean(axis=0), y - y.mean()
    precision = Xc.T @ Xc / sigma2 + np.eye(4) / tau2
    mean = np.linalg.solve(precision, Xc.T @ yc / sigma2)
    assert_allclose(ridge_fit(X, y, lam)[0], mean, rtol=1e-10)


def test_ridge_map_lambda_maximises_the_log_posterior():
    """A generic optimiser on the negative log posterior (scipy.stats densities) finds ridge."""
    rng = np.random.default_rng(7)
    X = rng.normal(size=(20, 3))
    y = X @ [1.0, 0.0, -1.0] + 0.5 + rng.normal(size=20)
    sigma2, tau2 = 1.5, 0.3

    def neg_log_post(theta):
        w, b = theta[:3], theta[3]
        return -(stats.norm.logpdf(y, X @ w + b, np.sqrt(sigma2)).sum()
                 + stats.norm.logpdf(w, 0.0, np.sqrt(tau2)).sum())

    res = optimize.minimize(neg_log_post, np.zeros(4), method="BFGS", options={"gtol": 1e-10})
    w, b = ridge_fit(X, y, ridge_map_lambda(sigma2, tau2))
    assert_allclose(res.x, np.r_[w, b], atol=1e-6)


def test_lasso_map_lambda_gives_the_log_posterior_up_to_a_constant():
    """-log p(w, b | D) = (N / sigma2) lasso_objective(..., sigma2 / (N s)) + const for a Laplace
    prior of scale s: the difference is the same for every (w, b)."""
    rng = np.random.default_rng(8)
    X = rng.normal(size=(12, 3))
    y = rng.normal(size=12)
    sigma2, s, n = 0.8, 0.25, 12
    lam = lasso_map_lambda(sigma2, s, n)
    assert lam == pytest.approx(0.8 / (12 * 0.25), rel=1e-15)
    diffs = []
    for _ in range(5):
        w, b = rng.normal(size=3), rng.normal()
        nlp = -(stats.norm.logpdf(y, X @ w + b, np.sqrt(sigma2)).sum()
                + stats.laplace.logpdf(w, 0.0, s).sum())
        diffs.append(nlp - n / sigma2 * lasso_objective(X, y, w, b, lam))
    assert_allclose(diffs, diffs[0], rtol=1e-10)


def test_elastic_net_is_the_map_under_a_laplace_times_gaussian_prior():
    """The lambda table of the notation page: a prior p(w_d) proportional to
    exp(-|w_d| / s - w_d^2 / (2 tau^2)) gives -log p(w, b | D) = (N / sigma2) times the
    elastic-net objective + const, with lam omega = sigma2 / (N s) and
    lam (1 - omega) = sigma2 / (N tau^2) (multiply the objective by N / sigma2 and compare term
    by term). The difference is the same for every (w, b): sums of 12 terms of size up to
    about 10, so 1e-10 relative is far above their rounding."""
    rng = np.random.default_rng(9)
    X = rng.normal(size=(12, 3))
    y = rng.normal(size=12)
    sigma2, s, tau2, n = 0.8, 0.25, 0.5, 12
    lam_l1, lam_l2 = sigma2 / (n * s), sigma2 / (n * tau2)
    lam, omega = lam_l1 + lam_l2, lam_l1 / (lam_l1 + lam_l2)
    diffs = []
    for _ in range(5):
        w, b = rng.normal(size=3), rng.normal()
        nlp = (-stats.norm.logpdf(y, X @ w + b, np.sqrt(sigma2)).sum()
               + np.abs(w).sum() / s + w @ w / (2 * tau2))
        diffs.append(nlp - n / sigma2 * reg.elastic_net_objective(X, y, w, b, lam, omega))
    assert_allclose(diffs, diffs[0], rtol=1e-10)


def test_map_lambda_bad_input():
    with pytest.raises(ValueError, match="sigma2"):
        ridge_map_lambda(0.0, 1.0)
    with pytest.raises(ValueError, match="tau2"):
        ridge_map_lambda(1.0, -2.0)
    with pytest.raises(ValueError, match="scale"):
        lasso_map_lambda(1.0, 0.0, 10)
    with pytest.raises(TypeError, match="n_samples"):
        lasso_map_lambda(1.0, 1.0, 2.5)
    with pytest.raises(ValueError, match="n_samples"):
        lasso_map_lambda(1.0, 1.0, 0)


# --------------------------------------------------------------------------- soft threshold


def test_soft_threshold_by_hand():
    """S(3, 1) = 2, S(-3, 1) = -2, S(0.5, 1) = S(1, 1) = S(-1, 1) = 0; t = 0 is the identity."""
    assert soft_threshold(3.0, 1.0) == 2.0
    assert soft_threshold(-3.0, 1.0) == -2.0
    assert soft_threshold(0.5, 1.0) == 0.0
    assert isinstance(soft_threshold(0.5, 1.0), float)
    assert_array_equal(soft_threshold([1.0, -1.0, 2.5, -0.25], 1.0), [0.0, 0.0, 1.5, 0.0])
    z = np.array([[-2.0, 0.0], [0.3, 7.0]])
    assert_array_equal(soft_threshold(z, 0.0), z)
    assert soft_threshold(z, 0.5).shape == (2, 2)


@settings(max_examples=60, deadline=None)
@given(st.floats(-50, 50), st.floats(0, 20))
def test_soft_threshold_minimises_the_one_dimensional_lasso(z, t):
    """S(z, t) minimises (1/2)(v - z)^2 + t |v|: no point of a fine grid around it is lower."""
    v_star = soft_threshold(z, t)
    grid = v_star + np.linspace(-3, 3, 601)

    def h(v):
        return 0.5 * (v - z) ** 2 + t * np.abs(v)

    assert h(v_star) <= h(grid).min() + 1e-9


def test_soft_threshold_bad_input():
    with pytest.raises(ValueError, match="t"):
        soft_threshold(1.0, -0.1)
    with pytest.raises(TypeError, match="z"):
        soft_threshold("1", 0.1)
    with pytest.raises(ValueError, match="z"):
        soft_threshold([1.0, np.inf], 0.1)


# ---------------------------------------------------------------------------- lasso objective


def test_lasso_objective_by_hand():
    """X1, Y1 with w = (1,), b = 1: residuals (0, 1, -1, 2), so (1/8)(0 + 1 + 1 + 4) + 0.5 * 1."""
    assert lasso_objective(X1, Y1, [1.0], 1.0, 0.5) == pytest.approx(6 / 8 + 0.5, rel=1e-15)
    assert lasso_objective(X1, Y1, np.zeros(1), 3.0, 2.0) == pytest.approx(14 / 8, rel=1e-15)
    X = np.array([[1.0, -1.0], [2.0, 0.0]])
    # with w = (1, 2) and b = 0: X w = (-1, 2), residuals (1, -1), and ||w||_1 = 3
    assert lasso_objective(X, [0.0, 1.0], [1.0, 2.0], 0.0, 0.1) == pytest.approx(
        (1 + 1) / 4 + 0.3, rel=1e-15)


def test_lasso_objective_is_what_sklearn_minimises(diabetes):
    """scikit-learn's Lasso solution has a lower objective than nearby points."""
    X, y = diabetes
    sk = _sk_lasso(X, y, 0.5)
    best = lasso_objective(X, y, sk.coef_, sk.intercept_, 0.5)
    rng = np.random.default_rng(9)
    for _ in range(20):
        dw = rng.normal(0, 1e-2, size=10)
        assert lasso_objective(X, y, sk.coef_ + dw, sk.intercept_ + rng.normal(0, 1e-2), 0.5) > best


def test_lasso_objective_bad_input():
    with pytest.raises(ValueError, match="w"):
        lasso_objective(X1, Y1, [1.0, 2.0], 0.0, 1.0)
    with pytest.raises(TypeError, match="b"):
        lasso_objective(X1, Y1, [1.0], [0.0, 1.0], 1.0)
    with pytest.raises(ValueError, match="lam"):
        lasso_objective(X1, Y1, [1.0], 0.0, -1.0)


# ------------------------------------------------------------------------------- lasso fit


def test_lasso_one_feature_by_hand():
    """D = 1: w = S(S_xy / N, lam) / (S_xx / N) = S(7/4, 1/2) / (5/4) = 1; b = 3 - 1.5 = 1.5.
    lam = 1 gives 0.75 / 1.25 = 0.6; lam >= 7/4 gives w = 0 and b = mean(y) = 3."""
    w, b = lasso_fit(X1, Y1, 0.5)
    assert_allclose(w, [1.0], rtol=1e-12)
    assert b == pytest.approx(1.5, rel=1e-12)
    assert_allclose(lasso_fit(X1, Y1, 1.0)[0], [0.6], rtol=1e-12)
    w, b = lasso_fit(X1, Y1, 1.75)
    assert_array_equal(w, [0.0])
    assert b == 3.0


def test_lasso_orthonormal_design_is_soft_thresholded_least_squares():
    """If X_c^T X_c / N = I, the LASSO separates: w = S(X_c^T y_c / N, lam), the least-squares
    weights X_c^T y_c / N soft-thresholded. The design is sqrt(N) Q with Q from the QR
    factorisation of a centred matrix (its columns are orthonormal and centred)."""
    rng = np.random.default_rng(10)
    n, d = 50, 6
    Q, _ = np.linalg.qr(rng.normal(size=(n, d)))
    Q, _ = np.linalg.qr(Q - Q.mean(axis=0))
    X = np.sqrt(n) * Q + rng.normal(size=d)                 # shifted: the intercept absorbs it
    y = X @ np.array([3.0, -2.0, 0.5, 0.0, 1.0, -0.2]) + rng.normal(size=n)
    Xc, yc = X - X.mean(axis=0), y - y.mean()
    assert_allclose(Xc.T @ Xc / n, np.eye(d), atol=1e-12)
    z = Xc.T @ yc / n
    for lam in (0.0, 0.3, 0.9, 2.5):
        expected = np.sign(z) * np.maximum(np.abs(z) - lam, 0.0)
        w, b = lasso_fit(X, y, lam)
        assert_allclose(w, expected, atol=1e-10)
        assert b == pytest.approx(y.mean() - X.mean(axis=0) @ expected, abs=1e-10)


@pytest.mark.parametrize("fraction", [1.0, 0.5, 0.1, 0.02, 1e-3, 0.0])
def test_lasso_matches_sklearn_on_diabetes(diabetes, fraction):
    """Lasso(alpha=lam, tol=1e-12) on the standardised diabetes data, from lam_max down to 0."""
    X, y = diabetes
    lam = fraction * lasso_lambda_max(X, y)
    w, b = lasso_fit(X, y, lam)
    sk = _sk_lasso(X, y, lam)
    assert_allclose(w, sk.coef_, atol=1e-6)
    assert b == pytest.approx(sk.intercept_, abs=1e-6)
    assert lasso_objective(X, y, w, b, lam) <= lasso_objective(X, y, sk.coef_, sk.intercept_,
                                                               lam) + 1e-9


@pytest.mark.parametrize("seed,n,d,rho", [(0, 100, 5, 0.0), (1, 60, 12, 0.5), (2, 400, 30, 0.3),
                                          (3, 40, 2, 0.9), (4, 25, 20, 0.2)])
def test_lasso_matches_sklearn_on_random_standardised_data(seed, n, d, rho):
    rng = np.random.default_rng(seed)
    X, y = _correlated(rng, n, d, rho)
    lam_max = lasso_lambda_max(X, y)
    for lam in (0.7 * lam_max, 0.2 * lam_max, 0.03 * lam_max):
        w, b = lasso_fit(X, y, lam)
        sk = _sk_lasso(X, y, lam)
        assert_allclose(w, sk.coef_, atol=1e-6)
        assert b == pytest.approx(sk.intercept_, abs=1e-6)


def test_lasso_solution_satisfies_the_subgradient_conditions():
    """Optimality of the convex objective, checked directly: with r the residual,
    x_d^T r / N = lam sign(w_d) where w_d != 0 and |x_d^T r / N| <= lam where w_d = 0."""
    rng = np.random.default_rng(11)
    X, y = _correlated(rng, 80, 15, 0.4)
    X = X * rng.uniform(0.5, 3, size=15) + 7               # not standardised, not centred
    lam = 0.3
    w, b = lasso_fit(X, y, lam, tol=1e-12)
    r = y - X @ w - b
    assert abs(r.mean()) < 1e-10
    grad = X.T @ r / len(y)
    active = w != 0
    assert active.sum() not in (0, 15)                       # a genuinely sparse solution
    assert_allclose(grad[active], lam * np.sign(w[active]), atol=1e-8)
    assert np.all(np.abs(grad[~active]) <= lam + 1e-10)


def test_lasso_at_zero_is_least_squares():
    rng = np.random.default_rng(12)
    X = rng.normal(size=(50, 4)) + 3
    y = X @ [1.0, 2.0, -1.0, 0.5] + rng.normal(size=50)
    w, b = lasso_fit(X, y, 0.0)
    w_ml, b_ml, _ = linear_regression_mle(X, y)
    assert_allclose(w, w_ml, atol=1e-7)
    assert b == pytest.approx(b_ml, abs=1e-6)


def test_lambda_max_is_the_threshold_of_the_zero_solution(diabetes):
    """lam_max = max_d |x_d^T (y - mean y)| / N (7/4 for the one-feature example): all weights
    are 0 above lam_max (at lam_max itself up to rounding), and some are not just below it."""
    assert lasso_lambda_max(X1, Y1) == pytest.approx(7 / 4, rel=1e-15)
    X, y = diabetes
    lam_max = lasso_lambda_max(X, y)
    assert lam_max == pytest.approx(np.abs(X.T @ (y - y.mean())).max() / len(y), rel=1e-12)
    assert_allclose(lasso_fit(X, y, lam_max)[0], 0.0, atol=1e-12)
    for lam in (1.001 * lam_max, 1.5 * lam_max, 1e6):
        w, b = lasso_fit(X, y, lam)
        assert_array_equal(w, np.zeros(10))
        assert b == pytest.approx(y.mean(), rel=1e-14)
    assert np.count_nonzero(lasso_fit(X, y, 0.99 * lam_max)[0]) >= 1


def test_lasso_constant_feature_gets_zero_weight():
    rng = np.random.default_rng(13)
    X = np.column_stack([rng.normal(size=30), np.full(30, 4.0), rng.normal(size=30)])
    y = X[:, 0] - X[:, 2] + rng.normal(size=30)
    for lam in (0.0, 0.1):
        w, _ = lasso_fit(X, y, lam)
        assert w[1] == 0.0
        assert_allclose(w[[0, 2]], lasso_fit(X[:, [0, 2]], y, lam)[0], atol=1e-9)


def test_lasso_warns_when_it_runs_out_of_sweeps():
    rng = np.random.default_rng(14)
    X, y = _correlated(rng, 50, 8, 0.95)
    with pytest.warns(RuntimeWarning, match="did not converge"):
        lasso_fit(X, y, 1e-3, max_iter=1)


def test_lasso_bad_input():
    with pytest.raises(ValueError, match="lam"):
        lasso_fit(X1, Y1, -0.1)
    with pytest.raises(ValueError, match="tol"):
        lasso_fit(X1, Y1, 0.1, tol=-1.0)
    with pytest.raises(ValueError, match="max_iter"):
        lasso_fit(X1, Y1, 0.1, max_iter=0)
    with pytest.raises(TypeError, match="max_iter"):
        lasso_fit(X1, Y1, 0.1, max_iter=2.5)
    with pytest.raises(ValueError, match="y"):
        lasso_fit(X1, [1.0, 2.0], 0.1)
    with pytest.raises(ValueError, match="y"):
        lasso_fit(X1, [1.0, 2.0, np.nan, 3.0], 0.1)


# ------------------------------------------------------------------------------- lasso path


def test_lasso_path_one_feature_by_hand_in_any_order():
    """Rows follow the order of lams: 0.5 -> 1, 2 -> 0 (above lam_max = 7/4), 0 -> 7/5,
    1 -> 0.6, and a repeated 0.5 -> 1 again."""
    W = lasso_path(X1, Y1, [0.5, 2.0, 0.0, 1.0, 0.5])
    assert W.shape == (5, 1)
    assert_allclose(W[:, 0], [1.0, 0.0, 1.4, 0.6, 1.0], rtol=1e-10, atol=1e-12)


def test_lasso_path_matches_sklearn_lasso_path(diabetes):
    """sklearn's lasso_path (no intercept: X centred) returns its path for decreasing alphas."""
    X, y = diabetes
    lam_max = lasso_lambda_max(X, y)
    lams = np.geomspace(lam_max, 1e-4 * lam_max, 30)
    shuffled = np.random.default_rng(15).permutation(30)
    W = lasso_path(X, y, lams[shuffled])
    _, coefs, _ = sk_lasso_path(X - X.mean(axis=0), y, alphas=lams, tol=1e-12, max_iter=100_000)
    assert_allclose(W, coefs.T[shuffled], atol=1e-6)


def test_lasso_path_rows_equal_single_fits():
    rng = np.random.default_rng(16)
    X, y = _correlated(rng, 70, 9, 0.6)
    lams = [0.05, 1.0, 0.3, 0.0, 5.0]
    W = lasso_path(X, y, lams)
    for row, lam in zip(W, lams, strict=True):
        assert_allclose(row, lasso_fit(X, y, lam)[0], atol=1e-7)


def test_lasso_path_sparsity_on_diabetes(diabetes):
    """At lam_max no feature is used, at lam = 0 all ten are (least squares)."""
    X, y = diabetes
    lam_max = lasso_lambda_max(X, y)
    W = lasso_path(X, y, [1.001 * lam_max, 0.0])
    assert np.count_nonzero(W[0]) == 0
    assert np.count_nonzero(W[1]) == 10
    assert_allclose(W[1], linear_regression_mle(X, y)[0], atol=1e-6)


def test_lasso_path_bad_input():
    with pytest.raises(ValueError, match="lams"):
        lasso_path(X1, Y1, [0.1, -0.2])
    with pytest.raises(ValueError, match="lams"):
        lasso_path(X1, Y1, [])
    with pytest.raises(ValueError, match="lams"):
        lasso_path(X1, Y1, 0.5)
    with pytest.raises(ValueError, match="lams"):
        lasso_path(X1, Y1, [0.5, np.nan])


# --------------------------------------------------- wide data: more features than samples


def _wide_regression(seed, n=60, d=400):
    """Correlated standardised features (rho = 0.3), y from 8 nonzero weights plus noise."""
    rng = np.random.default_rng(seed)
    X = np.sqrt(0.7) * rng.normal(size=(n, d)) + np.sqrt(0.3) * rng.normal(size=(n, 1))
    X = _standardise(X)
    w = np.zeros(d)
    w[rng.choice(d, 8, replace=False)] = rng.normal(0, 2, size=8)
    return X, X @ w + 1.0 + 0.5 * rng.normal(size=n)


def test_ridge_on_wide_data_matches_sklearn():
    """60 x 400: the N x N (kernel) system, against Ridge(solver='svd')."""
    X, y = _wide_regression(20)
    X = X * 3.0 + 5.0                                      # not standardised, not centred
    for lam in (1e-2, 1.0, 30.0):
        w, b = ridge_fit(X, y, lam)
        sk = Ridge(alpha=lam, solver="svd").fit(X, y)
        assert_allclose(w, sk.coef_, rtol=1e-8, atol=1e-10)
        assert b == pytest.approx(sk.intercept_, rel=1e-9)


@pytest.mark.parametrize("seed,n,d", [(21, 60, 400), (22, 100, 250), (23, 40, 1000)])
def test_lasso_on_wide_data_matches_sklearn(seed, n, d):
    """Fewer samples than ten per feature: coordinate descent on working sets of features.
    Against Lasso(alpha=lam, tol=1e-12), the contract of lasso_fit (1e-6 on standardised
    data), and an objective no larger than scikit-learn's (up to 1e-9, the rounding of a
    mean of N squares of size 1)."""
    X, y = _wide_regression(seed, n, d)
    lam_max = lasso_lambda_max(X, y)
    for fraction in (0.9, 0.3, 0.1, 0.03):
        lam = fraction * lam_max
        w, b = lasso_fit(X, y, lam)
        sk = _sk_lasso(X, y, lam)
        assert_allclose(w, sk.coef_, atol=1e-6)
        assert b == pytest.approx(sk.intercept_, abs=1e-6)
        assert lasso_objective(X, y, w, b, lam) <= lasso_objective(X, y, sk.coef_,
                                                                   sk.intercept_, lam) + 1e-9


def test_lasso_on_wide_data_stops_by_the_rule_of_the_spec():
    """One more sweep of plain cyclic coordinate descent over all 400 coordinates (written
    here from the update w_d = S(rho_d, lam) / a_d) moves no weight by more than tol, and the
    subgradient conditions hold to a_d tol = tol (standardised features: a weight that moves
    by at most tol has a correlation within a_d tol of lam sign(w_d)): the returned weights
    are a fixed point of the chapter's algorithm, whatever the shortcuts that found them."""
    X, y = _wide_regression(24)
    lam = 0.05 * lasso_lambda_max(X, y)
    tol = 1e-8
    w, b = lasso_fit(X, y, lam, tol=tol)
    n = len(y)
    Xc, r = X - X.mean(axis=0), y - y.mean() - (X - X.mean(axis=0)) @ w
    v = w.copy()
    largest = 0.0
    for d in range(X.shape[1]):
        a = Xc[:, d] @ Xc[:, d] / n
        rho = Xc[:, d] @ r / n + a * v[d]
        new = np.sign(rho) * max(abs(rho) - lam, 0.0) / a
        r -= Xc[:, d] * (new - v[d])
        largest = max(largest, abs(new - v[d]))
        v[d] = new
    assert largest <= tol
    grad = Xc.T @ (y - y.mean() - Xc @ w) / n
    active = w != 0
    assert 0 < active.sum() < n                            # a sparse solution
    assert_allclose(grad[active], lam * np.sign(w[active]), atol=tol)
    assert np.all(np.abs(grad[~active]) <= lam + tol)


def test_lasso_path_on_wide_data_matches_sklearn_lasso_path():
    """60 x 400, 40 penalties from lam_max to lam_max / 100 in shuffled order (the path runs
    from the largest down with strong-rule screening), against sklearn's lasso_path."""
    X, y = _wide_regression(25)
    lam_max = lasso_lambda_max(X, y)
    lams = np.geomspace(lam_max, 1e-2 * lam_max, 40)
    shuffled = np.random.default_rng(26).permutation(40)
    W = lasso_path(X, y, lams[shuffled])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, coefs, _ = sk_lasso_path(X - X.mean(axis=0), y, alphas=lams, tol=1e-12,
                                    max_iter=1_000_000)
    assert_allclose(W, coefs.T[shuffled], atol=1e-6)


def test_lasso_on_wide_data_with_constant_and_repeated_features():
    """A constant feature keeps weight 0; a repeated feature does not change the fit of the
    others (the LASSO splits the weight between the copies, the total is that of one copy)."""
    X, y = _wide_regression(27, 50, 200)
    lam = 0.1 * lasso_lambda_max(X, y)
    w_ref, b_ref = lasso_fit(X, y, lam)
    X2 = np.column_stack([X, np.full(50, 4.0), X[:, np.argmax(np.abs(w_ref))]])
    w, b = lasso_fit(X2, y, lam)
    assert w[200] == 0.0
    k = np.argmax(np.abs(w_ref))
    assert_allclose(np.delete(w, [k, 200, 201]), np.delete(w_ref, k), atol=1e-7)
    assert w[k] + w[201] == pytest.approx(w_ref[k], abs=1e-7)
    assert b == pytest.approx(b_ref, abs=1e-7)


# ---------------------------------------------------------------- plotting helpers (chapter)


@pytest.mark.parametrize("p", [1, 2, np.inf])
def test_norm_ball_points_lie_on_the_sphere_of_that_norm(p):
    from mlcourse_utils.plotting import norm_ball

    pts = norm_ball(p, radius=1.5, n_points=101)
    assert pts.shape == (101, 2)
    assert_allclose(np.linalg.norm(pts, ord=p, axis=1), 1.5, rtol=1e-12)
    assert_allclose(pts[0], pts[-1], atol=1e-12)          # a closed curve
    with pytest.raises(ValueError, match="p"):
        norm_ball(3)


def test_norm_ball_diamond_has_its_corners_on_the_axes():
    """The L1 ball of radius 2 reaches (2, 0), (0, 2), (-2, 0), (0, -2) and no further."""
    from mlcourse_utils.plotting import norm_ball

    pts = norm_ball(1, radius=2.0, n_points=801)          # t = 0, pi/2, ... are on the grid
    assert_allclose(np.abs(pts).max(axis=0), [2.0, 2.0], atol=1e-12)
    for corner in ([2, 0], [0, 2], [-2, 0], [0, -2]):
        assert np.min(np.linalg.norm(pts - corner, axis=1)) < 1e-12


def test_plot_coefficient_paths_draws_one_line_per_feature():
    import matplotlib

    matplotlib.use("Agg")
    from mlcourse_utils.plotting import new_figure, plot_coefficient_paths

    lams = np.array([10.0, 0.1, 1.0])
    coefs = np.arange(3 * 10, dtype=float).reshape(3, 10)
    fig, ax = new_figure()
    lines = plot_coefficient_paths(ax, lams, coefs)
    assert len(lines) == 10
    assert_array_equal(lines[0].get_xdata(), [0.1, 1.0, 10.0])        # sorted by lambda
    assert_array_equal(lines[0].get_ydata(), [10.0, 20.0, 0.0])
    assert lines[9].get_linestyle() == "--"                           # beyond the palette
    assert ax.get_xscale() == "log"
    assert [t.get_text() for t in ax.get_legend().get_texts()][:2] == ["$w_{1}$", "$w_{2}$"]
    import matplotlib.pyplot as plt

    plt.close(fig)


# ================================================================================ elastic net
# The one-feature example has a = S_xx / N = 5/4 and rho = S_xy / N = 7/4 at w = 0.


def _sk_enet(X, y, lam, l1_ratio):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ConvergenceWarning at tiny duality gaps
        return sklm.ElasticNet(alpha=lam, l1_ratio=l1_ratio, tol=1e-12,
                               max_iter=1_000_000).fit(X, y)


def test_elastic_net_objective_by_hand():
    """w = 1, b = 1: residuals (0, 1, -1, 2), squared sum 6, so 6 / 8; penalty
    0.5 (0.5 |1| + 0.25 * 1^2) = 0.375; at w = -2, b = 0, lam = 1, a = 0.2: residuals
    (1, 5, 6, 12), 206 / 8, penalty 0.2 * 2 + 0.4 * 4 = 2. About 20 rounded operations on
    exact inputs."""
    assert reg.elastic_net_objective(X1, Y1, [1.0], 1.0, 0.5, 0.5) == pytest.approx(
        1.125, rel=few_ops(20))
    assert reg.elastic_net_objective(X1, Y1, [-2.0], 0.0, 1.0, 0.2) == pytest.approx(
        206 / 8 + 2.0, rel=few_ops(20))


def test_elastic_net_objective_limits(diabetes):
    """a = 1 is the LASSO objective; a = 0 is the ridge objective (sum of squares plus
    N lam ||w||^2) divided by 2N. Both sides sum the same N positive squares, possibly in
    other orders (sum_rtol(N)), plus a few operations."""
    X, y = diabetes
    rng = np.random.default_rng(30)
    w, b, lam = rng.normal(0, 10, size=10), 150.0, 0.7
    n = len(y)
    tol = sum_rtol(n) + few_ops(8)
    assert reg.elastic_net_objective(X, y, w, b, lam, 1.0) == pytest.approx(
        lasso_objective(X, y, w, b, lam), rel=tol)
    ridge_objective = np.sum((y - X @ w - b) ** 2) + n * lam * w @ w
    assert reg.elastic_net_objective(X, y, w, b, lam, 0.0) == pytest.approx(
        ridge_objective / (2 * n), rel=tol)


def test_elastic_net_one_feature_by_hand():
    """w = S(rho, lam a) / (a_d + lam (1 - a)): lam = 1, a = 1/2 gives S(7/4, 1/2) / (5/4 + 1/2)
    = 5/7 and b = 3 - (5/7)(3/2) = 27/14; lam = 2, a = 1 gives 0 (lam >= lambda_max = 7/4)."""
    w, b = reg.elastic_net_fit(X1, Y1, 1.0, 0.5)
    assert_allclose(w, [5 / 7], rtol=1e-12)
    assert b == pytest.approx(27 / 14, rel=1e-12)
    w, b = reg.elastic_net_fit(X1, Y1, 2.0, 1.0)
    assert_array_equal(w, [0.0])
    assert b == 3.0


@pytest.mark.parametrize("lam,l1_ratio", [(0.01, 0.5), (0.1, 0.9), (0.5, 0.5), (1.0, 0.1),
                                          (5.0, 0.7), (0.05, 0.0), (2.0, 1.0), (100.0, 0.5)])
def test_elastic_net_matches_sklearn_on_diabetes(diabetes, lam, l1_ratio):
    """ElasticNet(alpha=lam, l1_ratio=a, tol=1e-12) on the standardised diabetes data."""
    X, y = diabetes
    w, b = reg.elastic_net_fit(X, y, lam, l1_ratio)
    sk = _sk_enet(X, y, lam, l1_ratio)
    assert_allclose(w, sk.coef_, atol=1e-6)
    assert b == pytest.approx(sk.intercept_, abs=1e-6)


@pytest.mark.parametrize("seed,n,d,rho,l1_ratio", [(0, 100, 5, 0.0, 0.5), (1, 60, 12, 0.5, 0.2),
                                                   (2, 30, 40, 0.3, 0.8), (3, 40, 2, 0.9, 0.5)])
def test_elastic_net_matches_sklearn_on_random_data(seed, n, d, rho, l1_ratio):
    """Standardised random data, also with more features than samples (D = 40 > N = 30)."""
    rng = np.random.default_rng(seed)
    X, y = _correlated(rng, n, d, rho)
    lam_max = lasso_lambda_max(X, y) / l1_ratio
    for lam in (0.5 * lam_max, 0.1 * lam_max, 0.02 * lam_max):
        w, b = reg.elastic_net_fit(X, y, lam, l1_ratio)
        sk = _sk_enet(X, y, lam, l1_ratio)
        assert_allclose(w, sk.coef_, atol=1e-6)
        assert b == pytest.approx(sk.intercept_, abs=1e-6)


def test_elastic_net_limits_are_lasso_and_ridge(diabetes):
    """a = 1 is scikit-learn's Lasso; a = 0 is Ridge(alpha = N lam) (divide the ridge objective
    by 2N: its penalty lam_ridge ||w||^2 becomes (lam_ridge / N) / 2 ||w||^2)."""
    X, y = diabetes
    assert_allclose(reg.elastic_net_fit(X, y, 0.3, 1.0)[0], _sk_lasso(X, y, 0.3).coef_,
                    atol=1e-6)
    w, b = reg.elastic_net_fit(X, y, 0.3, 0.0)
    sk = Ridge(alpha=len(y) * 0.3).fit(X, y)
    assert_allclose(w, sk.coef_, atol=1e-6)
    assert b == pytest.approx(sk.intercept_, abs=1e-6)


def test_elastic_net_satisfies_the_subgradient_conditions():
    """With r the residual: x_d^T r / N - lam (1 - a) w_d = lam a sign(w_d) where w_d != 0 and
    |x_d^T r / N| <= lam a where w_d = 0 (the derivative of the smooth part plus a subgradient
    of lam a |w_d| contains 0)."""
    rng = np.random.default_rng(31)
    X, y = _correlated(rng, 80, 15, 0.4)
    X = X * rng.uniform(0.5, 3, size=15) + 7               # not standardised, not centred
    lam, a = 0.6, 0.7
    w, b = reg.elastic_net_fit(X, y, lam, a, tol=1e-13)
    r = y - X @ w - b
    assert abs(r.mean()) < 1e-10
    grad = X.T @ r / len(y)
    active = w != 0
    assert active.sum() not in (0, 15)
    assert_allclose(grad[active] - lam * (1 - a) * w[active], lam * a * np.sign(w[active]),
                    atol=1e-8)
    assert np.all(np.abs(grad[~active]) <= lam * a + 1e-10)


def test_elastic_net_gives_identical_features_equal_weights(diabetes):
    """Two copies of bmi: for a < 1 the objective is strictly convex and symmetric in the copies,
    so their weights are equal. For a = 1 (LASSO) the loss and |w_a| + |w_b| depend only on
    the sum of two same-signed weights: moving all of it to one copy leaves the objective as
    it is, so the solution is not unique."""
    X, y = diabetes
    X_dup = np.column_stack([X, X[:, 2]])
    w = reg.elastic_net_fit(X_dup, y, 1.0, 0.5, tol=1e-12)[0]
    assert w[2] == pytest.approx(w[10], abs=1e-8)
    assert w[2] > 0
    w_lasso, b = reg.elastic_net_fit(X_dup, y, 1.0, 1.0)
    assert w_lasso[2] * w_lasso[10] >= 0 and w_lasso[2] + w_lasso[10] > 0
    moved = w_lasso.copy()
    moved[2], moved[10] = w_lasso[2] + w_lasso[10], 0.0
    assert reg.elastic_net_objective(X_dup, y, moved, b, 1.0, 1.0) == pytest.approx(
        reg.elastic_net_objective(X_dup, y, w_lasso, b, 1.0, 1.0), rel=1e-12)


def test_elastic_net_grouping_bound():
    """For standardised x_i, x_j with correlation rho and weights of the same sign, the KKT
    conditions give lam (1 - a)(w_i - w_j) = (x_i - x_j)^T r / N, and ||x_i - x_j||^2 =
    2 N (1 - rho), ||r|| <= ||y_c|| (the objective at the solution is at most its value at
    w = 0), so |w_i - w_j| <= ||y_c|| sqrt(2 (1 - rho)) / (sqrt(N) lam (1 - a))."""
    rng = np.random.default_rng(32)
    z = rng.normal(size=200)
    X = _standardise(np.column_stack([z + 0.2 * rng.normal(size=200),
                                      z + 0.2 * rng.normal(size=200), rng.normal(size=200)]))
    y = 3 * X[:, 0] + 1 * X[:, 1] + rng.normal(size=200)
    rho = np.corrcoef(X[:, 0], X[:, 1])[0, 1]
    yc = y - y.mean()
    for lam, a in [(0.5, 0.5), (2.0, 0.2), (0.1, 0.9)]:
        w = reg.elastic_net_fit(X, y, lam, a, tol=1e-12)[0]
        assert w[0] * w[1] > 0
        bound = np.linalg.norm(yc) * np.sqrt(2 * (1 - rho)) / (np.sqrt(200) * lam * (1 - a))
        assert abs(w[0] - w[1]) <= bound
    # the least-squares weights (3 and 1, roughly) are far apart; a strong ridge part pulls
    # them together
    w = reg.elastic_net_fit(X, y, 2.0, 0.2)[0]
    assert abs(w[0] - w[1]) < 0.25 * abs(linear_regression_mle(X, y)[0][:2] @ [1, -1])


def test_elastic_net_constant_feature_and_warning():
    X = np.column_stack([X1[:, 0], np.full(4, 3.0)])
    w, b = reg.elastic_net_fit(X, Y1, 0.5, 0.5)
    assert w[1] == 0.0
    rng = np.random.default_rng(33)
    Xr, yr = _correlated(rng, 50, 8, 0.95)
    with pytest.warns(RuntimeWarning, match="max_iter"):
        reg.elastic_net_fit(Xr, yr, 1e-4, 0.5, tol=1e-15, max_iter=3)


def test_elastic_net_bad_input():
    with pytest.raises(ValueError, match="l1_ratio"):
        reg.elastic_net_fit(X1, Y1, 1.0, 1.5)
    with pytest.raises(ValueError, match="l1_ratio"):
        reg.elastic_net_objective(X1, Y1, [1.0], 0.0, 1.0, -0.1)
    with pytest.raises(TypeError, match="l1_ratio"):
        reg.elastic_net_path(X1, Y1, [1.0], "half")
    with pytest.raises(ValueError, match="lam"):
        reg.elastic_net_fit(X1, Y1, -1.0, 0.5)
    with pytest.raises(ValueError, match="max_iter"):
        reg.elastic_net_fit(X1, Y1, 1.0, 0.5, max_iter=0)
    with pytest.raises(ValueError, match="rows"):
        reg.elastic_net_fit(X1, Y1[:3], 1.0, 0.5)
    with pytest.raises(ValueError, match="w has 2 entries"):
        reg.elastic_net_objective(X1, Y1, [1.0, 2.0], 0.0, 1.0, 0.5)
    with pytest.raises(ValueError, match="lams"):
        reg.elastic_net_path(X1, Y1, [1.0, -0.5], 0.5)


def test_elastic_net_path_matches_sklearn_enet_path(diabetes):
    """sklearn's enet_path (no intercept: X and y centred), rows in the order given."""
    X, y = diabetes
    lams = np.geomspace(50.0, 1e-3, 25)
    shuffled = np.random.default_rng(34).permutation(25)
    W = reg.elastic_net_path(X, y, lams[shuffled], 0.3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, coefs, _ = sklm.enet_path(X - X.mean(axis=0), y - y.mean(), l1_ratio=0.3,
                                     alphas=lams, tol=1e-12, max_iter=1_000_000)
    assert_allclose(W, coefs.T[shuffled], atol=1e-6)


def test_elastic_net_path_rows_equal_single_fits():
    rng = np.random.default_rng(35)
    X, y = _correlated(rng, 70, 9, 0.6)
    lams = [0.05, 1.0, 0.3, 5.0]
    W = reg.elastic_net_path(X, y, lams, 0.5)
    for row, lam in zip(W, lams, strict=True):
        assert_allclose(row, reg.elastic_net_fit(X, y, lam, 0.5)[0], atol=1e-7)


# ============================================================================ exact LASSO path


def _sk_lars(X, y):
    alphas, _, coefs = sklm.lars_path(X - X.mean(axis=0), y - y.mean(), method="lasso")
    return alphas, coefs.T


def test_lasso_knots_one_feature_by_hand():
    """One feature: it enters at lambda_max = S_xy / N = 7/4 and the path ends at least squares
    w = S_xy / S_xx = 7/5 for lam = 0 (a handful of rounded operations on exact inputs)."""
    knots = reg.lasso_knots(X1, Y1)
    assert_allclose(knots.lams, [7 / 4, 0.0], rtol=few_ops(16))
    assert_allclose(knots.coefs, [[0.0], [7 / 5]], rtol=few_ops(16))
    assert knots.events == [(0, 1)]


def test_lasso_knots_match_sklearn_lars_on_diabetes(diabetes):
    """lars_path(method="lasso") on the centred data: the same knots and weights. On these data
    s3 (column 6) leaves the path and enters again."""
    X, y = diabetes
    knots = reg.lasso_knots(X, y)
    alphas, coefs = _sk_lars(X, y)
    assert_allclose(knots.lams, alphas, rtol=1e-10, atol=1e-12)
    assert_allclose(knots.coefs, coefs, atol=1e-8)
    assert knots.events[0] == (2, 1)                                     # bmi first
    assert (6, -1) in knots.events
    assert sum(change for _, change in knots.events) == 10             # all ten end up in
    products = np.abs(X * (y - y.mean())[:, None])       # the terms of each x_d^T y_c
    d = np.argmax(np.abs(X.T @ (y - y.mean())))
    assert knots.lams[0] == pytest.approx(np.abs(X[:, d] @ (y - y.mean())) / len(y),
                                          abs=2 * sum_atol(len(y), products[:, d].sum()) / len(y))


@pytest.mark.parametrize("seed,n,d,rho", [(40, 50, 6, 0.3), (41, 200, 12, 0.7), (42, 15, 8, 0.5)])
def test_lasso_knots_match_sklearn_lars_on_random_data(seed, n, d, rho):
    rng = np.random.default_rng(seed)
    X, y = _correlated(rng, n, d, rho)
    X = X * rng.uniform(0.5, 2, size=d) + rng.normal(0, 3, size=d)     # not standardised
    knots = reg.lasso_knots(X, y)
    alphas, coefs = _sk_lars(X, y)
    assert_allclose(knots.lams, alphas, rtol=1e-9, atol=1e-12)
    assert_allclose(knots.coefs, coefs, atol=1e-7 * np.abs(coefs).max())


def test_lasso_knots_are_the_lasso_between_and_at_the_knots(diabetes):
    """The path is linear between knots: the midpoint of two knots' weights is scikit-learn's
    Lasso at the middle penalty; and a weight is nonzero just below its entry knot and zero just
    above it (the entry points follow from the optimality conditions, not a grid)."""
    X, y = diabetes
    knots = reg.lasso_knots(X, y)
    for k in range(len(knots.lams) - 1):
        mid = 0.5 * (knots.lams[k] + knots.lams[k + 1])
        assert_allclose(0.5 * (knots.coefs[k] + knots.coefs[k + 1]), _sk_lasso(X, y, mid).coef_,
                        atol=1e-6)
    for (d, change), lam in zip(knots.events, knots.lams, strict=False):
        above, below = _sk_lasso(X, y, lam * (1 + 1e-4)), _sk_lasso(X, y, lam * (1 - 1e-4))
        assert (below.coef_[d] != 0) == (change == 1)
        assert (above.coef_[d] != 0) == (change == -1)


def test_lasso_knots_constant_y_and_bad_input():
    knots = reg.lasso_knots(X1, np.full(4, 2.0))
    assert_array_equal(knots.lams, [0.0])
    assert knots.events == []
    X_dup = np.column_stack([X1[:, 0], X1[:, 0] ** 2, X1[:, 0]])
    with pytest.raises(ValueError, match="rank"):
        reg.lasso_knots(X_dup, Y1)
    with pytest.raises(ValueError, match="rank"):
        reg.lasso_knots(np.eye(3), [1.0, 2.0, 3.0])                      # N <= D
    with pytest.raises(ValueError, match="rows"):
        reg.lasso_knots(X1, Y1[:2])


# ============================================================================ bias and variance
# One feature with the training inputs x = (0, 1, 2, 3) (mean 3/2, S_xx = 5, N = 4), a linear
# truth f(x) = 2 x + 1, test inputs 0 and 4 and noise variance 1/2. Ridge predicts
# f_hat(x0) = mean(y) + (x0 - 3/2) S_xy / (S_xx + lam), so E[f_hat(x0)] - f(x0) =
# -2 lam (x0 - 3/2) / (5 + lam) and Var f_hat(x0) = sigma2 / N + (x0 - 3/2)^2 sigma2 S_xx /
# (S_xx + lam)^2 (mean(y) and S_xy are uncorrelated because sum (x_n - 3/2) = 0). At lam = 5:
# biases 1.5 and -2.5, squared bias (2.25 + 6.25) / 2 = 4.25; variances 0.125 + 0.05625 and
# 0.125 + 0.15625, mean 0.23125. At lam = 0: no bias, variance 0.125 + 0.1 (2.25 + 6.25) / 2
# = 0.55.

F1 = 2 * X1[:, 0] + 1
XT1 = np.array([[0.0], [4.0]])
FT1 = 2 * XT1[:, 0] + 1


def test_ridge_bias_variance_one_feature_by_hand():
    """The values of the comment above; the computation goes through an SVD, whose rounding
    is a modest multiple of U for this 4 x 1 problem (rtol 1e-12; the exact zero bias is met to
    the same absolute accuracy on outputs of size 10)."""
    bv = reg.ridge_bias_variance(X1, F1, XT1, FT1, 0.5, [5.0, 0.0])
    assert_allclose(bv.bias2, [4.25, 0.0], rtol=1e-12, atol=1e-12)
    assert_allclose(bv.variance, [0.23125, 0.55], rtol=1e-12)
    assert bv.noise == 0.5
    assert_allclose(bv.test_error, [0.5 + 4.25 + 0.23125, 0.5 + 0.55], rtol=1e-12)


def test_ridge_bias_variance_against_sklearn_ridge():
    """Independently of the formula: ridge is linear in y, so E[f_hat] is Ridge fitted to the
    noise-free outputs f, and the prediction's derivative with respect to y_n is Ridge fitted
    to the unit vector e_n; the variance is sigma2 times the sum of their squares."""
    rng = np.random.default_rng(50)
    X, X_test = rng.normal(size=(12, 4)), rng.normal(size=(30, 4))
    f, f_test = np.sin(X).sum(axis=1), np.sin(X_test).sum(axis=1)
    sigma2, lams = 0.3, [0.01, 1.0, 30.0]
    bv = reg.ridge_bias_variance(X, f, X_test, f_test, sigma2, lams)
    for i, lam in enumerate(lams):
        mean_pred = Ridge(alpha=lam).fit(X, f).predict(X_test)
        A = np.column_stack([Ridge(alpha=lam).fit(X, e).predict(X_test) for e in np.eye(12)])
        assert bv.bias2[i] == pytest.approx(np.mean((mean_pred - f_test) ** 2), rel=1e-9)
        assert bv.variance[i] == pytest.approx(sigma2 * np.sum(A**2) / 30, rel=1e-9)


def test_ridge_variance_falls_and_the_limits():
    """Variance falls with lam (each singular direction is scaled by s / (s^2 + lam)); as
    lam -> infinity the prediction is mean(y): variance sigma2 / N, squared bias the mean of
    (mean(f) - f_test)^2."""
    rng = np.random.default_rng(51)
    X, X_test = rng.normal(size=(20, 6)), rng.normal(size=(40, 6))
    f, f_test = X @ rng.normal(size=6), X_test @ rng.normal(size=6)
    lams = np.geomspace(1e-3, 1e3, 40)
    bv = reg.ridge_bias_variance(X, f, X_test, f_test, 2.0, lams)
    assert np.all(np.diff(bv.variance) < 0)
    far = reg.ridge_bias_variance(X, f, X_test, f_test, 2.0, [1e14])
    assert far.variance[0] == pytest.approx(2.0 / 20, rel=1e-9)
    assert far.bias2[0] == pytest.approx(np.mean((f.mean() - f_test) ** 2), rel=1e-9)


def test_bias_variance_simulation_agrees_with_the_exact_values():
    """Fixed design, 4000 training sets. The tolerances are five Monte Carlo standard errors:
    a variance estimated from R normal draws has relative standard error sqrt(2 / R) = 0.022
    (averaging two test points can only reduce it); the squared mean misses bias^2 by about
    2 |bias| sqrt(var / R) (at most 0.1 here); the test error averages R independent
    squared errors whose standard deviation is below 2 E[error] (chi-square with one degree of
    freedom scaled by the error, sqrt(2) times the mean)."""
    R = 4000
    bv = reg.ridge_bias_variance(X1, F1, XT1, FT1, 0.5, [5.0, 0.0])
    sim = reg.bias_variance_simulation(
        lambda rng: (X1, F1 + rng.normal(0, np.sqrt(0.5), size=4)), XT1, FT1, 0.5, [5.0, 0.0],
        n_repeats=R, seed=3)
    assert_allclose(sim.variance, bv.variance, rtol=5 * np.sqrt(2 / R))
    tolerance = 5 * (2 * np.sqrt(bv.bias2 * bv.variance / R) + bv.variance / R)
    assert np.all(np.abs(sim.bias2 - bv.bias2) <= tolerance), (sim.bias2, bv.bias2, tolerance)
    assert_allclose(sim.test_error, bv.test_error, rtol=5 * 2 / np.sqrt(R))
    assert sim.noise == 0.5


def test_bias_variance_simulation_without_noise_is_exact():
    """With sigma2 = 0 every training set is the same: the variance is 0, the squared bias is
    that of the one fit, and the test error equals it. The fits repeat the same operations, so
    the predictions (of size 10 at most) agree to a few ulps at worst: the variance is below
    (few_ops * 10)^2, and the rest is within 1e-12 as in the exact case."""
    sim = reg.bias_variance_simulation(lambda rng: (X1, F1), XT1, FT1, 0.0, [5.0], n_repeats=3)
    assert_allclose(sim.variance, [0.0], atol=(few_ops(16) * 10) ** 2)
    assert_allclose(sim.bias2, [4.25], rtol=1e-12)
    assert_allclose(sim.test_error, [4.25], rtol=1e-12)


def test_bias_variance_simulation_with_another_fit_and_random_inputs():
    """A fit that always predicts 0 has no variance and squared bias mean(f_test^2) = (1 + 81)/2
    whatever the training sets (here with random inputs); lasso_fit can be plugged in."""
    def sample(rng):
        x = rng.uniform(0, 3, size=(6, 1))
        return x, 2 * x[:, 0] + 1 + rng.normal(size=6)

    zero = reg.bias_variance_simulation(sample, XT1, FT1, 1.0, [0.0, 1.0], n_repeats=5,
                                        fit=lambda X, y, lam: (np.zeros(1), 0.0))
    assert_allclose(zero.bias2, [41.0, 41.0])
    assert_array_equal(zero.variance, [0.0, 0.0])
    lasso = reg.bias_variance_simulation(sample, XT1, FT1, 1.0, [0.1, 100.0], n_repeats=50,
                                         fit=lasso_fit)
    assert lasso.variance[1] < lasso.variance[0]          # above lambda_max: mean(y) only


def test_bias_variance_bad_input():
    def sample(rng):
        return X1, F1

    with pytest.raises(TypeError, match="sample"):
        reg.bias_variance_simulation("data", XT1, FT1, 1.0, [1.0])
    with pytest.raises(TypeError, match="fit"):
        reg.bias_variance_simulation(sample, XT1, FT1, 1.0, [1.0], fit=3)
    with pytest.raises(ValueError, match="n_repeats"):
        reg.bias_variance_simulation(sample, XT1, FT1, 1.0, [1.0], n_repeats=1)
    with pytest.raises(TypeError, match="n_repeats"):
        reg.bias_variance_simulation(sample, XT1, FT1, 1.0, [1.0], n_repeats=2.5)
    with pytest.raises(ValueError, match="X_test has 2 columns"):
        reg.bias_variance_simulation(sample, np.ones((2, 2)), FT1, 1.0, [1.0])
    with pytest.raises(ValueError, match="f_test"):
        reg.ridge_bias_variance(X1, F1, XT1, [1.0, 2.0, 3.0], 1.0, [1.0])
    with pytest.raises(ValueError, match="sigma2"):
        reg.ridge_bias_variance(X1, F1, XT1, FT1, -1.0, [1.0])
    with pytest.raises(ValueError, match="lams"):
        reg.ridge_bias_variance(X1, F1, XT1, FT1, 1.0, [-1.0])
    with pytest.raises(ValueError, match="X_test has 2 columns"):
        reg.ridge_bias_variance(X1, F1, np.ones((2, 2)), FT1, 1.0, [1.0])
