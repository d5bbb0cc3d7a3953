"""Tests for mlcourse_utils.bayes.

Expected values come from hand derivations (stated in each docstring), from the seed lectures'
worked examples (the bent/straight coin, the N_H=55, N_T=45 comparison table), from scipy
(scipy.stats.beta, scipy.special.logsumexp, scipy.optimize) or from a brute-force posterior
computed on a fine grid, never from the output of the code under test.
"""

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose
from scipy import integrate, optimize, special, stats

from mlcourse_utils import bayes
from mlcourse_utils.datasets import coin_sequence
from tolerances import few_ops

# --------------------------------------------------------------------------- model_posterior


def _coin_log_likelihoods(flips):
    """log p(D | straight) and log p(D | bent) written out from the counts."""
    n_h, n_t = flips.count("H"), flips.count("T")
    return np.array([(n_h + n_t) * np.log(0.5), n_h * np.log(0.8) + n_t * np.log(0.2)])


def test_model_posterior_coins_seed_example():
    """HTHHHTHHTHTH, uniform prior: p(straight|D) = 2^-12 / (2^-12 + 4^8 / 5^12) ≈ 0.48.

    The lecture rounds to 0.48 / 0.52; the exact fraction is computed with Fraction.
    """
    flips = coin_sequence()
    assert flips == "HTHHHTHHTHTH"
    post = bayes.model_posterior(_coin_log_likelihoods(flips), [0.5, 0.5])
    straight = Fraction(1, 2**12)
    bent = Fraction(4**8, 5**12)
    expected = float(straight / (straight + bent))
    assert_allclose(post, [expected, 1 - expected], rtol=1e-12)
    assert round(post[0], 2) == 0.48 and round(post[1], 2) == 0.52
    assert post.dtype == np.float64


def test_model_posterior_non_uniform_prior_by_hand():
    """Two fair coins and one bent (prior 1/3 each, straight counted twice as 2/3).

    p(straight|D) = (2/3) 2^-12 / ((2/3) 2^-12 + (1/3) 4^8/5^12).
    """
    ll = _coin_log_likelihoods(coin_sequence())
    post = bayes.model_posterior(ll, [2 / 3, 1 / 3])
    s, b = Fraction(2, 3) * Fraction(1, 2**12), Fraction(1, 3) * Fraction(4**8, 5**12)
    assert_allclose(post[0], float(s / (s + b)), rtol=1e-12)


def test_model_posterior_matches_scipy_logsumexp():
    """Against exp(ll + log prior - scipy.special.logsumexp(ll + log prior))."""
    rng = np.random.default_rng(0)
    ll = rng.normal(-50, 20, size=7)
    prior = rng.dirichlet(np.ones(7))
    expected = np.exp(ll + np.log(prior) - special.logsumexp(ll + np.log(prior)))
    assert_allclose(bayes.model_posterior(ll, prior), expected, rtol=1e-12)


def test_model_posterior_tiny_likelihoods():
    """Log-likelihoods near -1e4 underflow when exponentiated; log space must not care.

    ll = (-1e4, -1e4 - log 3) with a uniform prior gives (3/4, 1/4) by hand.
    """
    with np.errstate(over="raise", invalid="raise"):  # underflow of exp is benign
        post = bayes.model_posterior([-1e4, -1e4 - np.log(3.0)], [0.5, 0.5])
    assert_allclose(post, [0.75, 0.25], rtol=1e-12)
    ll = _coin_log_likelihoods(coin_sequence())
    shifted = bayes.model_posterior(ll - 5000.0, [0.5, 0.5])
    assert_allclose(shifted, bayes.model_posterior(ll, [0.5, 0.5]), rtol=1e-12)
    assert_allclose(bayes.model_posterior([-1001.0, -1002.0, -1003.0], [0.2, 0.3, 0.5]),
                    np.array([0.2, 0.3 * np.e**-1, 0.5 * np.e**-2])
                    / (0.2 + 0.3 * np.e**-1 + 0.5 * np.e**-2), rtol=1e-12)


def test_model_posterior_zero_prior_and_impossible_data():
    """A zero prior gives posterior 0; ll = -inf gives 0; the rest is renormalised by hand."""
    post = bayes.model_posterior([-1.0, -2.0, -3.0], [0.0, 0.5, 0.5])
    e = np.exp([-2.0, -3.0])
    assert_allclose(post, [0.0, *(e / e.sum())], rtol=1e-12)
    post = bayes.model_posterior([-np.inf, -2.0], [0.5, 0.5])
    assert_allclose(post, [0.0, 1.0])
    # A zero prior on the only model that explains the data: undefined.
    with pytest.raises(ValueError, match="log_likelihoods"):
        bayes.model_posterior([-1.0, -np.inf], [0.0, 1.0])


def test_model_posterior_rows():
    """A (K, M) array gives one posterior per row, equal to the 1-D call on that row."""
    ll = np.array([[-1.0, -2.0], [-10.0, -3.0], [-2000.0, -2001.0]])
    post = bayes.model_posterior(ll, [0.3, 0.7])
    assert post.shape == (3, 2)
    for row, expected_row in zip(ll, post, strict=True):
        lj = row + np.log([0.3, 0.7])
        assert_allclose(expected_row, np.exp(lj - special.logsumexp(lj)), rtol=1e-12)


@pytest.mark.parametrize(
    "ll, prior, match",
    [
        ([np.nan, -1.0], [0.5, 0.5], "log_likelihoods"),
        ([np.inf, -1.0], [0.5, 0.5], "log_likelihoods"),
        ([-1.0, -1.0], [0.5, 0.6], "prior"),
        ([-1.0, -1.0], [1.5, -0.5], "prior"),
        ([-1.0, -1.0], [np.nan, 1.0], "prior"),
        ([-1.0, -1.0, -1.0], [0.5, 0.5], "prior"),
        ([], [1.0], "log_likelihoods"),
        (np.zeros((2, 2, 2)), [0.5, 0.5], "log_likelihoods"),
    ],
)
def test_model_posterior_bad_input(ll, prior, match):
    with pytest.raises(ValueError, match=match):
        bayes.model_posterior(ll, prior)


def test_model_posterior_type_errors():
    with pytest.raises(TypeError, match="log_likelihoods"):
        bayes.model_posterior(["a", "b"], [0.5, 0.5])
    with pytest.raises(TypeError, match="prior"):
        bayes.model_posterior([-1.0, -2.0], "uniform")


def test_model_posterior_prior_tolerance():
    """Sums within 1e-9 of 1 are accepted, sums off by 1e-6 are not."""
    bayes.model_posterior([-1.0, -2.0], [0.5, 0.5 + 5e-10])
    with pytest.raises(ValueError, match="prior"):
        bayes.model_posterior([-1.0, -2.0], [0.5, 0.5 + 1e-6])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.floats(-1e4, 0.0), min_size=1, max_size=8),
    st.integers(0, 2**31 - 1),
)
def test_model_posterior_sums_to_one(ll, seed):
    prior = np.random.default_rng(seed).dirichlet(np.ones(len(ll)))
    post = bayes.model_posterior(ll, prior)
    assert np.all(post >= 0) and np.all(post <= 1)
    assert_allclose(post.sum(), 1.0, rtol=1e-12)


# --------------------------------------------------------------------------- Beta–Bernoulli


def test_comparison_table_55_45():
    """Seed table: N_H=55, N_T=45, Beta(2, 2) prior.

    ML = 55/100; MAP = (55+2-1)/(100+4-2) = 56/102; posterior mean = (55+2)/(100+4) = 57/104.
    """
    a_post, b_post = bayes.beta_posterior(2, 2, 55, 45)
    assert (a_post, b_post) == (57.0, 47.0)
    assert isinstance(a_post, float) and isinstance(b_post, float)
    assert_allclose(bayes.beta_map(a_post, b_post), 56 / 102, rtol=few_ops())
    assert_allclose(bayes.beta_mean(a_post, b_post), 57 / 104, rtol=few_ops())
    assert_allclose(bayes.posterior_predictive_heads(2, 2, 55, 45), 57 / 104, rtol=few_ops())
    # The MLE is the MAP under the flat Beta(1, 1) prior.
    assert_allclose(bayes.beta_map(*bayes.beta_posterior(1, 1, 55, 45)), 0.55, rtol=few_ops())


def test_comparison_table_2_0():
    """Seed table: N_H=2, N_T=0, Beta(2, 2): ML = 1, MAP = 3/4, posterior mean = 4/6."""
    a_post, b_post = bayes.beta_posterior(2, 2, 2, 0)
    assert (a_post, b_post) == (4.0, 2.0)
    assert_allclose(bayes.beta_map(a_post, b_post), 3 / 4, rtol=few_ops())
    assert_allclose(bayes.beta_mean(a_post, b_post), 4 / 6, rtol=few_ops())
    assert_allclose(bayes.posterior_predictive_heads(2, 2, 2, 0), 4 / 6, rtol=few_ops())
    # With the flat prior, a = 1 + 2 > 1 but b = 1: the mode is the end point 1, refused.
    with pytest.raises(ValueError, match="b"):
        bayes.beta_map(*bayes.beta_posterior(1, 1, 2, 0))


@pytest.mark.parametrize("a, b", [(2.0, 2.0), (57.0, 47.0), (0.5, 3.0), (3.7, 1.2), (200.0, 1.0)])
def test_beta_mean_and_interval_match_scipy(a, b):
    """Mean and quantiles against scipy.stats.beta; the interval leaves 2.5 % on each side."""
    assert_allclose(bayes.beta_mean(a, b), stats.beta.mean(a, b), rtol=1e-13)
    lo, hi = bayes.beta_credible_interval(a, b)
    assert_allclose([lo, hi], stats.beta.ppf([0.025, 0.975], a, b), rtol=1e-12)
    assert_allclose(stats.beta.cdf(hi, a, b) - stats.beta.cdf(lo, a, b), 0.95, rtol=1e-10)
    lo90, hi90 = bayes.beta_credible_interval(a, b, mass=0.9)
    assert lo < lo90 < hi90 < hi
    assert_allclose(stats.beta.cdf(lo90, a, b), 0.05, rtol=1e-9)


@pytest.mark.parametrize("a, b", [(2.0, 2.0), (57.0, 47.0), (4.0, 2.0), (1.5, 8.0)])
def test_beta_map_is_numerical_maximiser_of_pdf(a, b):
    """The mode found by maximising scipy's Beta density numerically."""
    res = optimize.minimize_scalar(
        lambda t: -stats.beta.logpdf(t, a, b), bounds=(1e-9, 1 - 1e-9), method="bounded",
        options={"xatol": 1e-12},
    )
    assert_allclose(bayes.beta_map(a, b), res.x, atol=1e-7)


def test_beta_map_seed_formula_is_wrong():
    """The seed's (a-1)/(b-a) differs from the true mode, e.g. Beta(3, 5): 2/6 vs 2/2."""
    assert_allclose(bayes.beta_map(3, 5), 2 / 6, rtol=few_ops())
    assert not np.isclose(bayes.beta_map(3, 5), (3 - 1) / (5 - 3))


def test_conjugate_posterior_matches_grid_posterior():
    """Brute force: prior density times likelihood on a fine grid, normalised by trapezoid.

    The grid posterior's density, mean and 2.5 % quantile agree with Beta(a + N_H, b + N_T).
    """
    a, b, n_h, n_t = 2.0, 3.0, 7, 4
    grid = np.linspace(0.0, 1.0, 200_001)
    unnorm = stats.beta.pdf(grid, a, b) * grid**n_h * (1 - grid) ** n_t
    density = unnorm / integrate.trapezoid(unnorm, grid)
    a_post, b_post = bayes.beta_posterior(a, b, n_h, n_t)
    assert_allclose(density, stats.beta.pdf(grid, a_post, b_post), atol=1e-6)
    grid_mean = integrate.trapezoid(grid * density, grid)
    assert_allclose(bayes.beta_mean(a_post, b_post), grid_mean, rtol=1e-8)
    assert_allclose(bayes.posterior_predictive_heads(a, b, n_h, n_t), grid_mean, rtol=1e-8)
    assert_allclose(bayes.beta_map(a_post, b_post), grid[np.argmax(density)], atol=1e-5)
    cdf = integrate.cumulative_trapezoid(density, grid, initial=0.0)
    lo, hi = bayes.beta_credible_interval(a_post, b_post)
    assert_allclose([np.interp(0.025, cdf, grid), np.interp(0.975, cdf, grid)], [lo, hi],
                    atol=1e-6)


def test_beta_posterior_no_data_is_prior_and_fractional_counts():
    assert bayes.beta_posterior(2.5, 0.5, 0, 0) == (2.5, 0.5)
    assert_allclose(bayes.beta_posterior(1, 1, 0.5, 2.25), (1.5, 3.25))
    assert_allclose(bayes.posterior_predictive_heads(3, 1, 0, 0), 3 / 4)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: bayes.beta_posterior(0, 1, 1, 1), "a"),
        (lambda: bayes.beta_posterior(1, -2, 1, 1), "b"),
        (lambda: bayes.beta_posterior(1, 1, -1, 1), "n_heads"),
        (lambda: bayes.beta_posterior(1, 1, 1, -0.5), "n_tails"),
        (lambda: bayes.beta_posterior(1, 1, np.nan, 1), "n_heads"),
        (lambda: bayes.beta_mean(1, 0), "b"),
        (lambda: bayes.beta_map(1, 3), "a"),
        (lambda: bayes.beta_map(3, 1), "b"),
        (lambda: bayes.beta_map(0.5, 0.5), "a"),
        (lambda: bayes.posterior_predictive_heads(1, 1, 2, -1), "n_tails"),
        (lambda: bayes.beta_credible_interval(1, 1, mass=1.0), "mass"),
        (lambda: bayes.beta_credible_interval(1, 1, mass=0.0), "mass"),
        (lambda: bayes.beta_credible_interval(-1, 1), "a"),
        (lambda: bayes.beta_bernoulli_log_joint(1.5, 2, 2, 1, 1), "theta"),
    ],
)
def test_beta_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_beta_type_errors():
    with pytest.raises(TypeError, match="a"):
        bayes.beta_mean("2", 2)
    with pytest.raises(TypeError, match="n_heads"):
        bayes.beta_posterior(1, 1, [1, 2], 0)


@settings(max_examples=80, deadline=None)
@given(st.floats(0.5, 500.0), st.floats(0.5, 500.0), st.floats(0.5, 0.99))
def test_credible_interval_contains_mean(a, b, mass):
    """For a, b >= 1/2 an equal-tailed interval of mass >= 1/2 holds the mean.

    Not true in general: Beta(0.001, 1) puts less than 1 % of its mass above its mean, and a
    narrow interval around the median can miss a skewed distribution's mean.
    """
    lo, hi = bayes.beta_credible_interval(a, b, mass=mass)
    assert 0.0 <= lo < hi <= 1.0
    assert lo <= bayes.beta_mean(a, b) <= hi


@settings(max_examples=60, deadline=None)
@given(st.floats(0.1, 50.0), st.floats(0.1, 50.0), st.integers(0, 200), st.integers(0, 200))
def test_posterior_mean_between_prior_mean_and_mle(a, b, n_h, n_t):
    """(N_H + a)/(N + a + b) is a convex combination of a/(a+b) and N_H/N."""
    pm = bayes.posterior_predictive_heads(a, b, n_h, n_t)
    prior_mean = a / (a + b)
    ends = [prior_mean] if n_h + n_t == 0 else [prior_mean, n_h / (n_h + n_t)]
    assert min(ends) - 1e-12 <= pm <= max(ends) + 1e-12


def test_beta_bernoulli_log_joint():
    """log Beta pdf + N_H log θ + N_T log(1-θ) from scipy; its argmax is the posterior mode."""
    theta = np.linspace(0.05, 0.95, 19)
    expected = stats.beta.logpdf(theta, 2, 3) + 7 * np.log(theta) + 4 * np.log1p(-theta)
    assert_allclose(bayes.beta_bernoulli_log_joint(theta, 2, 3, 7, 4), expected, rtol=1e-12)
    res = optimize.minimize_scalar(lambda t: -bayes.beta_bernoulli_log_joint(t, 2, 3, 7, 4),
                                   bounds=(0, 1), method="bounded", options={"xatol": 1e-12})
    assert_allclose(res.x, (7 + 2 - 1) / (11 + 5 - 2), atol=1e-7)
    # Flat prior, two heads: log θ² at θ = 1 is 0 (0·log 0 = 0 for the tails term).
    assert bayes.beta_bernoulli_log_joint(1.0, 1, 1, 2, 0) == 0.0
    assert bayes.beta_bernoulli_log_joint(0.0, 1, 1, 2, 0) == -np.inf


# --------------------------------------------------------------------------- smoothing


def test_smoothed_categorical_die_by_hand():
    """Die counts (3,1,0,2,4,0), n = 10, m = 6: alpha=1 gives (k+1)/16, alpha=0 gives k/10."""
    counts = [3, 1, 0, 2, 4, 0]
    assert_allclose(bayes.smoothed_categorical(counts), np.array([4, 2, 1, 3, 5, 1]) / 16,
                    rtol=few_ops())
    assert_allclose(bayes.smoothed_categorical(counts, alpha=0), np.array(counts) / 10,
                    rtol=few_ops())
    assert_allclose(bayes.smoothed_categorical(counts, alpha=0.5),
                    (np.array(counts) + 0.5) / 13, rtol=few_ops())
    assert bayes.smoothed_categorical(counts).dtype == np.float64


def test_smoothed_categorical_is_dirichlet_posterior_mean():
    """Against scipy.stats.dirichlet(counts + alpha).mean()."""
    counts = np.array([5.0, 0.0, 12.0, 3.0])
    for alpha in (0.1, 1.0, 7.0):
        assert_allclose(bayes.smoothed_categorical(counts, alpha),
                        stats.dirichlet(counts + alpha).mean(), rtol=1e-12)


def test_smoothed_categorical_edge_cases():
    """No data: uniform 1/m; rows of a 2-D array are smoothed separately."""
    assert_allclose(bayes.smoothed_categorical([0, 0, 0, 0]), [0.25] * 4)
    rows = bayes.smoothed_categorical([[1, 1], [0, 4]], alpha=1.0)
    assert_allclose(rows, [[0.5, 0.5], [1 / 6, 5 / 6]])


@pytest.mark.parametrize(
    "counts, alpha, match",
    [
        ([1, -1, 2], 1.0, "counts"),
        ([0, 0], 0.0, "alpha"),
        ([], 1.0, "counts"),
        ([1, np.nan], 1.0, "counts"),
        ([1, 2], -0.5, "alpha"),
    ],
)
def test_smoothed_categorical_bad_input(counts, alpha, match):
    with pytest.raises(ValueError, match=match):
        bayes.smoothed_categorical(counts, alpha)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 1000), min_size=1, max_size=10), st.floats(0.01, 100.0))
def test_smoothed_categorical_sums_to_one(counts, alpha):
    p = bayes.smoothed_categorical(counts, alpha)
    assert np.all(p > 0)
    assert_allclose(p.sum(), 1.0, rtol=1e-12)


# --------------------------------------------------------------------------- Gaussian mean


def test_gaussian_mean_posterior_by_hand():
    """x = (1, 2, 3), sigma2 = 1, prior N(0, 1): precision 1 + 3 = 4, mean 6/4 = 1.5."""
    mu_n, tau2_n = bayes.gaussian_mean_posterior([1.0, 2.0, 3.0], 1.0, 0.0, 1.0)
    assert_allclose((mu_n, tau2_n), (1.5, 0.25), rtol=few_ops())
    assert isinstance(mu_n, float) and isinstance(tau2_n, float)
    mean, var = bayes.gaussian_posterior_predictive([1.0, 2.0, 3.0], 1.0, 0.0, 1.0)
    assert_allclose((mean, var), (1.5, 1.25), rtol=few_ops())


def test_gaussian_mean_posterior_empty_is_prior():
    assert bayes.gaussian_mean_posterior([], 4.0, -3.0, 9.0) == (-3.0, 9.0)
    assert bayes.gaussian_posterior_predictive([], 4.0, -3.0, 9.0) == (-3.0, 13.0)


def test_gaussian_mean_posterior_matches_grid():
    """Grid posterior over mu (prior pdf × product of likelihoods) against N(mu_n, tau2_n).

    The posterior predictive density is checked by integrating N(x; mu, sigma2) over the grid
    posterior.
    """
    x = np.array([-2.5, -9.9, -12.1, -8.9, -6.0])
    sigma2, mu0, tau2 = 16.0, 0.0, 100.0
    mu = np.linspace(-30, 15, 90_001)
    log_unnorm = stats.norm.logpdf(mu, mu0, np.sqrt(tau2)) + stats.norm.logpdf(
        x[:, None], mu, np.sqrt(sigma2)).sum(axis=0)
    density = np.exp(log_unnorm - log_unnorm.max())
    density /= integrate.trapezoid(density, mu)
    grid_mean = integrate.trapezoid(mu * density, mu)
    grid_var = integrate.trapezoid((mu - grid_mean) ** 2 * density, mu)
    mu_n, tau2_n = bayes.gaussian_mean_posterior(x, sigma2, mu0, tau2)
    assert_allclose([mu_n, tau2_n], [grid_mean, grid_var], rtol=1e-7)
    mean, var = bayes.gaussian_posterior_predictive(x, sigma2, mu0, tau2)
    for x_new in (-20.0, -8.0, 3.0):
        pred = integrate.trapezoid(stats.norm.pdf(x_new, mu, 4.0) * density, mu)
        assert_allclose(stats.norm.pdf(x_new, mean, np.sqrt(var)), pred, rtol=1e-7)


def test_gaussian_mean_posterior_limits():
    """A huge prior variance gives the sample mean and sigma2/N; a tiny one keeps mu0."""
    x = np.array([1.0, 4.0, 7.0, 8.0])
    mu_n, tau2_n = bayes.gaussian_mean_posterior(x, 2.0, 100.0, 1e12)
    assert_allclose((mu_n, tau2_n), (5.0, 0.5), rtol=1e-9)
    mu_n, tau2_n = bayes.gaussian_mean_posterior(x, 2.0, 100.0, 1e-12)
    assert_allclose(mu_n, 100.0, rtol=1e-9)


@pytest.mark.parametrize(
    "args, match",
    [
        (([1.0, np.nan], 1.0, 0.0, 1.0), "x"),
        (([[1.0, 2.0]], 1.0, 0.0, 1.0), "x"),
        (([1.0], 0.0, 0.0, 1.0), "sigma2"),
        (([1.0], 1.0, np.inf, 1.0), "mu0"),
        (([1.0], 1.0, 0.0, -1.0), "tau2"),
    ],
)
def test_gaussian_bad_input(args, match):
    with pytest.raises(ValueError, match=match):
        bayes.gaussian_mean_posterior(*args)
    with pytest.raises(ValueError, match=match):
        bayes.gaussian_posterior_predictive(*args)
