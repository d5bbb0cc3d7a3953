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
from sklearn.linear_model import Lasso, Ridge
from sklearn.linear_model import lasso_path as sk_lasso_path

from mlcourse_utils import datasets
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
