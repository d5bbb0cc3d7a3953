"""Tests of mlcourse_utils.mle against hand-derived values, scipy and scikit-learn."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose
from scipy import stats
from sklearn.linear_model import LinearRegression, QuantileRegressor

from mlcourse_utils import datasets, mle

SEQ = "HTHHHTHHTHTH"


# --- sequence_likelihood -------------------------------------------------------------------


def test_sequence_likelihood_fair_coin_seed_value():
    """Seed lecture: twelve flips of a fair coin, (1/2)^12 = 1/4096 ≈ 0.000244."""
    value = mle.sequence_likelihood(SEQ, 0.5)
    assert isinstance(value, float)
    assert value == pytest.approx(1 / 4096, rel=1e-12)
    assert round(value, 6) == 0.000244


def test_sequence_likelihood_bent_coin_seed_value():
    """Seed lecture: 8 heads and 4 tails with p = 4/5: 0.8^8 * 0.2^4 = 4^8/5^12 ≈ 0.000268."""
    value = mle.sequence_likelihood(SEQ, 0.8)
    assert value == pytest.approx(4**8 / 5**12, rel=1e-12)
    assert round(value, 6) == 0.000268
    assert value > mle.sequence_likelihood(SEQ, 0.5)


def test_sequence_likelihood_accepts_list_and_edge_probabilities():
    """A list gives the same value; p=1 with a tail is 0, p=1 with only heads is 1; empty is 1."""
    assert mle.sequence_likelihood(list(SEQ), 0.8) == mle.sequence_likelihood(SEQ, 0.8)
    assert mle.sequence_likelihood("HHH", 1.0) == 1.0
    assert mle.sequence_likelihood("HHT", 1.0) == 0.0
    assert mle.sequence_likelihood("TT", 0.0) == 1.0
    assert mle.sequence_likelihood("", 0.3) == 1.0


@pytest.mark.parametrize("flips", ["HTX", "ht", ["H", 1], ["H", "HT"]])
def test_sequence_likelihood_rejects_other_symbols(flips):
    """Only 'H' and 'T' are flips; the error names the argument."""
    with pytest.raises(ValueError, match="flips"):
        mle.sequence_likelihood(flips, 0.5)


def test_sequence_likelihood_rejects_bad_types_and_probabilities():
    """Non-iterables and bytes are TypeErrors; p_heads must be a number in [0, 1]."""
    with pytest.raises(TypeError, match="flips"):
        mle.sequence_likelihood(12, 0.5)
    with pytest.raises(TypeError, match="flips"):
        mle.sequence_likelihood(b"HT", 0.5)
    for p in (-0.1, 1.5, float("nan")):
        with pytest.raises(ValueError, match="p_heads"):
            mle.sequence_likelihood("HT", p)
    with pytest.raises(TypeError, match="p_heads"):
        mle.sequence_likelihood("HT", "0.5")


# --- Bernoulli ------------------------------------------------------------------------------


def test_bernoulli_mle_is_fraction_of_heads():
    """The seed's sequence has 8 heads in 12 flips, so theta = 8/12 = 2/3; also 55/100."""
    assert mle.bernoulli_mle(datasets.coin_flips()) == pytest.approx(2 / 3, rel=1e-14)
    assert mle.bernoulli_mle([1] * 55 + [0] * 45) == pytest.approx(0.55, rel=1e-14)
    assert mle.bernoulli_mle([True, False, False, False]) == 0.25
    assert isinstance(mle.bernoulli_mle([1]), float)


def test_bernoulli_mle_maximises_log_likelihood():
    """theta_hat has a higher log-likelihood than every other theta on a grid."""
    x = datasets.coin_flips()
    theta = mle.bernoulli_mle(x)
    grid = np.linspace(0.01, 0.99, 99)
    best = mle.bernoulli_log_likelihood(theta, x)
    assert all(mle.bernoulli_log_likelihood(t, x) <= best + 1e-12 for t in grid)


def test_bernoulli_mle_bad_inputs():
    """Non-binary values, NaN, empty data, 2-D arrays and strings are rejected naming x."""
    for bad in ([0, 1, 2], [0.5], [1, np.nan], []):
        with pytest.raises(ValueError, match="x"):
            mle.bernoulli_mle(bad)
    with pytest.raises(ValueError, match="x"):
        mle.bernoulli_mle([[0, 1], [1, 1]])
    with pytest.raises(TypeError, match="x"):
        mle.bernoulli_mle("HTH")


def test_bernoulli_log_likelihood_matches_scipy():
    """Sum of scipy.stats.bernoulli.logpmf; by hand 8 log(2/3) + 4 log(1/3) at theta = 2/3."""
    x = datasets.coin_flips()
    for theta in (0.1, 0.5, 2 / 3, 0.8):
        expected = stats.bernoulli.logpmf(x, theta).sum()
        assert_allclose(mle.bernoulli_log_likelihood(theta, x), expected, rtol=1e-12)
    hand = 8 * math.log(2 / 3) + 4 * math.log(1 / 3)
    assert_allclose(mle.bernoulli_log_likelihood(2 / 3, x), hand, rtol=1e-12)


def test_bernoulli_log_likelihood_zero_log_zero():
    """0 log 0 = 0: theta=1 without tails is 0.0, with a tail -inf; theta=0 mirrors it."""
    assert mle.bernoulli_log_likelihood(1.0, [1, 1, 1]) == 0.0
    assert mle.bernoulli_log_likelihood(1.0, [1, 0, 1]) == -np.inf
    assert mle.bernoulli_log_likelihood(0.0, [0, 0]) == 0.0
    assert mle.bernoulli_log_likelihood(0.0, [0, 1]) == -np.inf
    assert mle.bernoulli_log_likelihood(0.3, []) == 0.0


def test_bernoulli_log_likelihood_bad_inputs():
    """theta outside [0, 1] names theta; non-binary x names x."""
    with pytest.raises(ValueError, match="theta"):
        mle.bernoulli_log_likelihood(1.2, [1, 0])
    with pytest.raises(ValueError, match="theta"):
        mle.bernoulli_log_likelihood(np.nan, [1, 0])
    with pytest.raises(ValueError, match="x"):
        mle.bernoulli_log_likelihood(0.5, [1, 3])
    with pytest.raises(TypeError, match="theta"):
        mle.bernoulli_log_likelihood("half", [1, 0])


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(0, 1), min_size=1, max_size=40), st.floats(0.001, 0.999))
def test_bernoulli_log_likelihood_is_log_of_sequence_likelihood(bits, theta):
    """Property: the log of the product is the log-likelihood, which is largest at the MLE."""
    flips = ["H" if b else "T" for b in bits]
    ll = mle.bernoulli_log_likelihood(theta, bits)
    assert_allclose(ll, math.log(mle.sequence_likelihood(flips, theta)), rtol=1e-9, atol=1e-12)
    assert ll <= mle.bernoulli_log_likelihood(mle.bernoulli_mle(bits), bits) + 1e-9


# --- Gaussian --------------------------------------------------------------------------------


def test_gaussian_mle_by_hand_and_numpy():
    """[1, 2, 3]: mean 2, variance (1 + 0 + 1)/3 = 2/3 (divide by N); equals np.var(ddof=0)."""
    mu, sigma2 = mle.gaussian_mle([1, 2, 3])
    assert (mu, sigma2) == (pytest.approx(2.0), pytest.approx(2 / 3, rel=1e-14))
    assert isinstance(mu, float) and isinstance(sigma2, float)
    x = np.random.default_rng(1).normal(3.0, 2.0, size=200)
    mu, sigma2 = mle.gaussian_mle(x)
    loc, scale = stats.norm.fit(x)  # scipy's fit is the ML fit
    assert_allclose([mu, sigma2], [loc, scale**2], rtol=1e-10)
    assert_allclose(sigma2, np.var(x, ddof=0), rtol=1e-12)


def test_gaussian_mle_single_sample_has_zero_variance():
    """One point: the mean is the point and the ML variance is 0."""
    assert mle.gaussian_mle([4.2]) == (4.2, 0.0)


def test_gaussian_mle_bad_inputs():
    """NaN, inf, empty, 2-D and strings are rejected naming x."""
    for bad in ([1.0, np.nan], [np.inf], [], [[1.0, 2.0]]):
        with pytest.raises(ValueError, match="x"):
            mle.gaussian_mle(bad)
    with pytest.raises(TypeError, match="x"):
        mle.gaussian_mle("123")


def test_gaussian_log_likelihood_matches_scipy():
    """Total log density equals scipy.stats.norm.logpdf(x, mu, sqrt(sigma2)).sum()."""
    x = np.random.default_rng(2).normal(-1.0, 0.7, size=50)
    for mu, sigma2 in ((0.0, 1.0), (-1.0, 0.49), (3.0, 10.0)):
        expected = stats.norm.logpdf(x, mu, np.sqrt(sigma2)).sum()
        assert_allclose(mle.gaussian_log_likelihood(x, mu, sigma2), expected, rtol=1e-12)


def test_gaussian_log_likelihood_is_maximised_at_the_mle():
    """Perturbing mu or sigma2 away from the ML estimates lowers the log-likelihood."""
    x = np.random.default_rng(3).normal(size=30)
    mu, sigma2 = mle.gaussian_mle(x)
    best = mle.gaussian_log_likelihood(x, mu, sigma2)
    for dmu, factor in ((0.05, 1.0), (-0.05, 1.0), (0.0, 1.1), (0.0, 0.9)):
        assert mle.gaussian_log_likelihood(x, mu + dmu, sigma2 * factor) < best


def test_gaussian_log_likelihood_bad_inputs():
    """sigma2 must be > 0; mu finite; x without NaN."""
    for s2 in (0.0, -1.0):
        with pytest.raises(ValueError, match="sigma2"):
            mle.gaussian_log_likelihood([1.0], 0.0, s2)
    with pytest.raises(ValueError, match="mu"):
        mle.gaussian_log_likelihood([1.0], np.inf, 1.0)
    with pytest.raises(ValueError, match="x"):
        mle.gaussian_log_likelihood([1.0, np.nan], 0.0, 1.0)


# --- multivariate Gaussian -------------------------------------------------------------------


def test_mvn_mle_toronto_temperatures():
    """Seed data: mean by hand (-39.4/5, -64.9/5) = (-7.88, -12.98); Sigma = np.cov(bias=True)."""
    X = datasets.toronto_march_temperatures()
    mu, Sigma = mle.mvn_mle(X)
    assert_allclose(mu, [-7.88, -12.98], rtol=1e-12)
    assert_allclose(Sigma, np.cov(X, rowvar=False, bias=True), rtol=1e-12)
    assert Sigma.shape == (2, 2) and mu.shape == (2,)
    assert Sigma.dtype == np.float64 and mu.dtype == np.float64


def test_mvn_mle_matches_scipy_fit():
    """scipy.stats.multivariate_normal.fit returns the ML mean and covariance."""
    X = np.random.default_rng(4).normal(size=(40, 3)) @ np.array(
        [[1.0, 0.3, 0.0], [0.0, 1.0, 0.5], [0.0, 0.0, 2.0]]
    )
    mu, Sigma = mle.mvn_mle(X)
    mu_sp, Sigma_sp = stats.multivariate_normal.fit(X)
    assert_allclose(mu, mu_sp, rtol=1e-10)
    assert_allclose(Sigma, Sigma_sp, rtol=1e-10)
    # Exactly symmetric: mvn_mle returns (S + S^T) / 2, and floating-point addition commutes.
    assert_allclose(Sigma, Sigma.T, rtol=0, atol=0)


def test_mvn_mle_single_sample_and_bad_inputs():
    """One row: mean is the row and Sigma is zero; 1-D input, NaN and empty are rejected."""
    mu, Sigma = mle.mvn_mle([[1.0, 2.0]])
    assert_allclose(mu, [1.0, 2.0])
    assert_allclose(Sigma, np.zeros((2, 2)))
    with pytest.raises(ValueError, match="X"):
        mle.mvn_mle([1.0, 2.0])
    with pytest.raises(ValueError, match="X"):
        mle.mvn_mle([[1.0, np.nan]])
    with pytest.raises(ValueError, match="X"):
        mle.mvn_mle(np.empty((0, 2)))


# --- linear regression -----------------------------------------------------------------------


def test_linear_regression_mle_matches_sklearn():
    """Coefficients and intercept equal LinearRegression; sigma2 is its mean squared residual."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(60, 3))
    y = X @ np.array([1.0, -2.0, 0.5]) + 3.0 + rng.normal(scale=0.3, size=60)
    w, b, sigma2 = mle.linear_regression_mle(X, y)
    ref = LinearRegression().fit(X, y)
    assert_allclose(w, ref.coef_, rtol=1e-10)
    assert_allclose(b, ref.intercept_, rtol=1e-10)
    assert_allclose(sigma2, np.mean((y - ref.predict(X)) ** 2), rtol=1e-10)
    assert w.shape == (3,) and isinstance(b, float) and isinstance(sigma2, float)


def test_linear_regression_mle_exact_line():
    """Points on y = 1 + 2x exactly: w = 2, b = 1, sigma2 = 0 (by hand)."""
    x = np.arange(5.0)
    w, b, sigma2 = mle.linear_regression_mle(x[:, None], 1 + 2 * x)
    assert_allclose(w, [2.0], rtol=1e-12)
    assert_allclose(b, 1.0, rtol=1e-12)
    assert sigma2 == pytest.approx(0.0, abs=1e-20)


def test_linear_regression_mle_single_sample():
    """One sample: the intercept fits it exactly, w = 0 (minimum norm), sigma2 = 0."""
    w, b, sigma2 = mle.linear_regression_mle([[2.0, 3.0]], [5.0])
    assert_allclose(w, [0.0, 0.0])
    assert (b, sigma2) == (5.0, 0.0)


def test_linear_regression_mle_bad_inputs():
    """Shape mismatch names X and y; NaN in X or y, and 1-D X are rejected."""
    with pytest.raises(ValueError, match="X has 3 rows but y has 2"):
        mle.linear_regression_mle(np.ones((3, 1)), [1.0, 2.0])
    with pytest.raises(ValueError, match="y"):
        mle.linear_regression_mle(np.ones((2, 1)), [1.0, np.nan])
    with pytest.raises(ValueError, match="X"):
        mle.linear_regression_mle([[np.nan], [1.0]], [1.0, 2.0])
    with pytest.raises(ValueError, match="X"):
        mle.linear_regression_mle([1.0, 2.0], [1.0, 2.0])


# --- Laplace regression ----------------------------------------------------------------------


def _lad_objective(X, y, w, b):
    return float(np.sum(np.abs(y - X @ w - b)))


def test_laplace_regression_mle_objective_matches_quantile_regressor():
    """Median regression (QuantileRegressor, q=0.5, alpha=0) reaches the same L1 objective."""
    rng = np.random.default_rng(6)
    X = rng.normal(size=(80, 2))
    y = X @ np.array([1.5, -0.5]) + 2.0 + rng.laplace(scale=0.5, size=80)
    w, b, scale = mle.laplace_regression_mle(X, y)
    ref = QuantileRegressor(quantile=0.5, alpha=0.0, solver="highs").fit(X, y)
    ours = _lad_objective(X, y, w, b)
    theirs = _lad_objective(X, y, ref.coef_, ref.intercept_)
    assert ours <= theirs + 1e-8
    assert_allclose(ours, theirs, rtol=1e-8)
    assert_allclose(scale, ours / 80, rtol=1e-12)
    assert w.shape == (2,) and isinstance(b, float) and isinstance(scale, float)


def test_laplace_regression_mle_objective_matches_brute_force():
    """For D=1 an optimal LAD line passes through two data points: search all pairs."""
    x, y = datasets.line_with_outliers(n=15, n_outliers=3, seed=2)
    w, b, _ = mle.laplace_regression_mle(x[:, None], y)
    best = np.inf
    for i in range(len(x)):
        for j in range(i + 1, len(x)):
            if x[i] == x[j]:
                continue
            slope = (y[j] - y[i]) / (x[j] - x[i])
            best = min(best, np.sum(np.abs(y - slope * x - (y[i] - slope * x[i]))))
    assert_allclose(_lad_objective(x[:, None], y, w, b), best, rtol=1e-9)


def test_laplace_regression_resists_outliers():
    """On the outlier data, LAD recovers the slope 2 far better than least squares."""
    x, y = datasets.line_with_outliers()
    w_l1, _, _ = mle.laplace_regression_mle(x[:, None], y)
    w_l2, _, _ = mle.linear_regression_mle(x[:, None], y)
    assert abs(w_l1[0] - 2.0) < 0.2
    assert abs(w_l2[0] - 2.0) > 0.5


def test_laplace_regression_intercept_only_is_median():
    """With a constant feature column of zeros, b is a median: |b - median| minimises L1."""
    y = np.array([1.0, 2.0, 7.0, 10.0, 100.0])
    w, b, scale = mle.laplace_regression_mle(np.zeros((5, 1)), y)
    assert_allclose(b, 7.0, rtol=1e-9)
    assert_allclose(scale, (6 + 5 + 0 + 3 + 93) / 5, rtol=1e-9)


def test_laplace_regression_single_sample_and_bad_inputs():
    """One sample is fitted exactly (scale 0); shape mismatch and NaN are rejected."""
    w, b, scale = mle.laplace_regression_mle([[1.0]], [3.0])
    assert_allclose(w[0] * 1.0 + b, 3.0, atol=1e-9)
    assert scale == pytest.approx(0.0, abs=1e-9)
    with pytest.raises(ValueError, match="X has 2 rows but y has 3"):
        mle.laplace_regression_mle(np.ones((2, 1)), [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="y"):
        mle.laplace_regression_mle(np.ones((2, 1)), [1.0, np.inf])
    with pytest.raises(TypeError, match="X"):
        mle.laplace_regression_mle("abc", [1.0])
