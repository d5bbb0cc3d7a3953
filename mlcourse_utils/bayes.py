"""Bayesian learning: posteriors over a finite model space and conjugate updates.

The functions follow the chapter "Bayesian learning": the posterior over a handful of models
(the straight and the bent coin), the Beta–Bernoulli pair (posterior, mean, MAP, posterior
predictive, credible interval), Dirichlet–categorical (Laplace) smoothing, and the Gaussian
mean with known noise variance. Counts may be any non-negative reals (a Beta prior's
pseudo-counts need not be integers); every output is a Python ``float`` or a float64 array.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy import special, stats

from ._validation import FloatArray, as_1d_float_array, as_float, as_float_array

__all__ = [
    "model_posterior",
    "beta_posterior",
    "beta_mean",
    "beta_map",
    "posterior_predictive_heads",
    "beta_credible_interval",
    "smoothed_categorical",
    "gaussian_mean_posterior",
    "gaussian_posterior_predictive",
    "beta_bernoulli_log_joint",
]


def _positive(value, name):
    """A finite float > 0 (Beta parameters, variances)."""
    return as_float(value, name, low=0.0, low_open=True)


def _count(value, name):
    """A finite float >= 0 (numbers of heads and tails, possibly fractional pseudo-counts)."""
    return as_float(value, name, low=0.0)


def model_posterior(log_likelihoods: ArrayLike, prior: ArrayLike) -> FloatArray:
    """Posterior probabilities of a finite set of models, computed in log space.

    p(m | D) = exp(log p(D | m) + log p(m) - logsumexp_m'(log p(D | m') + log p(m'))).

    Normalising with log-sum-exp keeps the result exact when every log-likelihood is far
    below the smallest representable exponent (e.g. -1e4): exponentiating them first would
    give 0/0. A model with prior probability 0 gets posterior 0 whatever its likelihood, and
    a log-likelihood of -inf (data impossible under that model) is legitimate and gives 0.

    Parameters
    ----------
    log_likelihoods : array_like, shape (M,) or (K, M)
        Natural-log likelihood log p(D | m) of the data under each of the M models. With
        a 2-D array each row is a separate data set (e.g. the first k flips of a sequence)
        and each row gets its own posterior.
    prior : array_like, shape (M,)
        Prior probabilities p(m): non-negative, summing to 1 within 1e-9.

    Returns
    -------
    posterior : ndarray of float64, shape like ``log_likelihoods``
        Each row sums to 1.

    Raises
    ------
    ValueError
        If a log-likelihood is NaN or +inf, if the shapes disagree, if ``prior`` is not a
        probability vector, or if every model with positive prior has likelihood 0.

    See the chapter "Bayesian learning", section "A posterior over two coins".
    """
    ll = as_float_array(log_likelihoods, "log_likelihoods", min_size=1, allow_nonfinite=True)
    if ll.ndim not in (1, 2):
        raise ValueError(f"log_likelihoods must be 1-D or 2-D, got shape {ll.shape}")
    if np.any(np.isnan(ll)) or np.any(ll == np.inf):
        raise ValueError(
            "log_likelihoods contains NaN or +inf; a log-likelihood must be finite or -inf"
        )
    prior = as_1d_float_array(prior, "prior", min_size=1)
    if np.any(prior < 0):
        raise ValueError("prior has negative entries; probabilities must be >= 0")
    if abs(prior.sum() - 1.0) > 1e-9:
        raise ValueError(f"prior must sum to 1, sums to {prior.sum()!r}")
    if ll.shape[-1] != prior.shape[0]:
        raise ValueError(
            f"log_likelihoods has {ll.shape[-1]} models (last axis) but prior has "
            f"{prior.shape[0]} entries"
        )
    with np.errstate(divide="ignore"):  # log 0 = -inf is the intended value for a zero prior
        log_joint = ll + np.log(prior)
    log_evidence = special.logsumexp(log_joint, axis=-1, keepdims=True)
    if np.any(np.isneginf(log_evidence)):
        raise ValueError(
            "log_likelihoods is -inf for every model with positive prior: the data are "
            "impossible under all models, so the posterior is undefined"
        )
    return np.exp(log_joint - log_evidence)


def beta_posterior(a: float, b: float, n_heads: float, n_tails: float) -> tuple[float, float]:
    """Parameters of the Beta posterior after observing coin flips (Beta–Bernoulli conjugacy).

    Beta(a, b) prior and N_H heads, N_T tails give the posterior Beta(a + N_H, b + N_T):
    the prior's a and b act as pseudo-counts of heads and tails.

    Parameters
    ----------
    a, b : float
        Prior parameters, both > 0.
    n_heads, n_tails : float
        Observed counts, non-negative (fractional counts are accepted).

    Returns
    -------
    a_post, b_post : float

    See the chapter "Bayesian learning", section "The Beta prior and conjugacy".
    """
    a, b = _positive(a, "a"), _positive(b, "b")
    n_heads, n_tails = _count(n_heads, "n_heads"), _count(n_tails, "n_tails")
    return a + n_heads, b + n_tails


def beta_mean(a: float, b: float) -> float:
    """Mean of Beta(a, b): a / (a + b).

    Parameters
    ----------
    a, b : float
        Both > 0.

    Returns
    -------
    float

    See the chapter "Bayesian learning", section "Point estimates from the posterior".
    """
    a, b = _positive(a, "a"), _positive(b, "b")
    return a / (a + b)


def beta_map(a: float, b: float) -> float:
    """Mode of Beta(a, b): (a - 1) / (a + b - 2), the MAP estimate when Beta(a, b) is a posterior.

    The mode is an interior point only when a > 1 and b > 1; otherwise the density is
    unbounded or maximal at an end point (or flat for a = b = 1), and this function refuses.

    Parameters
    ----------
    a, b : float
        Both > 1.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        Unless a > 1 and b > 1.

    See the chapter "Bayesian learning", section "Point estimates from the posterior".
    """
    a, b = _positive(a, "a"), _positive(b, "b")
    if a <= 1:
        raise ValueError(f"a must be > 1 for Beta(a, b) to have an interior mode, got {a}")
    if b <= 1:
        raise ValueError(f"b must be > 1 for Beta(a, b) to have an interior mode, got {b}")
    return (a - 1.0) / (a + b - 2.0)


def posterior_predictive_heads(a: float, b: float, n_heads: float, n_tails: float) -> float:
    """Probability that the next flip is heads, averaging over the Beta posterior.

    p(x = H | D) = E[θ | D] = (N_H + a) / (N + a + b) with N = N_H + N_T.

    Parameters
    ----------
    a, b : float
        Prior parameters, both > 0.
    n_heads, n_tails : float
        Observed counts, non-negative.

    Returns
    -------
    float

    See the chapter "Bayesian learning", section "Point estimates from the posterior".
    """
    a_post, b_post = beta_posterior(a, b, n_heads, n_tails)
    return a_post / (a_post + b_post)


def beta_credible_interval(a: float, b: float, mass: float = 0.95) -> tuple[float, float]:
    """Equal-tailed credible interval of Beta(a, b).

    lo and hi are the (1 - mass)/2 and (1 + mass)/2 quantiles, so that the interval holds
    probability ``mass`` with (1 - mass)/2 left out on each side.

    Parameters
    ----------
    a, b : float
        Both > 0.
    mass : float
        Probability inside the interval, strictly between 0 and 1.

    Returns
    -------
    lo, hi : float

    See the chapter "Bayesian learning", section "Credible intervals".
    """
    a, b = _positive(a, "a"), _positive(b, "b")
    mass = as_float(mass, "mass", low=0.0, high=1.0, low_open=True, high_open=True)
    tail = (1.0 - mass) / 2.0
    lo, hi = stats.beta.ppf([tail, 1.0 - tail], a, b)
    return float(lo), float(hi)


def smoothed_categorical(counts: ArrayLike, alpha: float = 1.0) -> FloatArray:
    """Posterior-mean (Laplace-smoothed) probabilities of a categorical variable.

    p_j = (k_j + alpha) / (n + m * alpha), with k_j the count of outcome j, n = sum_j k_j
    and m the number of outcomes. This is the mean of the Dirichlet(k + alpha) posterior
    under a symmetric Dirichlet(alpha) prior; alpha = 1 is Laplace's rule, alpha = 0 the
    maximum-likelihood estimate k_j / n.

    Parameters
    ----------
    counts : array_like, shape (m,) or (K, m)
        Non-negative counts; with a 2-D array each row is smoothed separately.
    alpha : float
        Pseudo-count added to every outcome, >= 0.

    Returns
    -------
    ndarray of float64, shape like ``counts``
        Probabilities summing to 1 along the last axis.

    Raises
    ------
    ValueError
        If a count is negative, or if alpha = 0 and a row has no observations (0/0).

    See the chapter "Bayesian learning", section "Dice: the Dirichlet prior and Laplace smoothing".
    """
    counts = as_float_array(counts, "counts", min_size=1)
    if counts.ndim not in (1, 2) or counts.shape[-1] == 0:
        raise ValueError(f"counts must be a non-empty 1-D or 2-D array, got shape {counts.shape}")
    if np.any(counts < 0):
        raise ValueError("counts has negative entries; counts must be >= 0")
    alpha = as_float(alpha, "alpha", low=0.0)
    m = counts.shape[-1]
    denominator = counts.sum(axis=-1, keepdims=True) + m * alpha
    if np.any(denominator == 0):
        raise ValueError(
            "counts are all zero and alpha is 0: the estimate is 0/0; use alpha > 0"
        )
    return (counts + alpha) / denominator


def gaussian_mean_posterior(
    x: ArrayLike, sigma2: float, mu0: float, tau2: float
) -> tuple[float, float]:
    """Posterior of a Gaussian mean with known noise variance under a Gaussian prior.

    With x_i ~ N(mu, sigma2) i.i.d. and mu ~ N(mu0, tau2), the posterior is N(mu_n, tau2_n):

        1 / tau2_n = 1 / tau2 + N / sigma2,
        mu_n = tau2_n * (mu0 / tau2 + sum_i x_i / sigma2)
             = (sigma2 * mu0 + tau2 * sum_i x_i) / (sigma2 + N * tau2).

    Precisions add; the posterior mean is a precision-weighted average of the prior mean
    and the sample mean. With no data (N = 0) the posterior is the prior.

    Parameters
    ----------
    x : array_like, shape (N,)
        Observations; may be empty.
    sigma2 : float
        Known noise variance, > 0.
    mu0 : float
        Prior mean.
    tau2 : float
        Prior variance, > 0.

    Returns
    -------
    mu_n, tau2_n : float

    See the chapter "Bayesian learning", section "The mean of a Gaussian".
    """
    x = as_1d_float_array(x, "x")
    sigma2 = _positive(sigma2, "sigma2")
    mu0 = as_float(mu0, "mu0")
    tau2 = _positive(tau2, "tau2")
    n = x.shape[0]
    # The second forms avoid dividing by tiny variances when tau2 or sigma2 is small.
    denominator = sigma2 + n * tau2
    tau2_n = tau2 * sigma2 / denominator
    mu_n = (sigma2 * mu0 + tau2 * x.sum()) / denominator
    return float(mu_n), float(tau2_n)


def gaussian_posterior_predictive(
    x: ArrayLike, sigma2: float, mu0: float, tau2: float
) -> tuple[float, float]:
    """Posterior predictive distribution of a new observation of a Gaussian with unknown mean.

    p(x_new | x) = integral N(x_new; mu, sigma2) N(mu; mu_n, tau2_n) dmu
                 = N(x_new; mu_n, tau2_n + sigma2):
    the uncertainty about the mean (tau2_n) adds to the noise (sigma2).

    Parameters
    ----------
    x : array_like, shape (N,)
        Observations; may be empty.
    sigma2 : float
        Known noise variance, > 0.
    mu0 : float
        Prior mean.
    tau2 : float
        Prior variance, > 0.

    Returns
    -------
    mean, var : float

    See the chapter "Bayesian learning", section "The mean of a Gaussian".
    """
    mu_n, tau2_n = gaussian_mean_posterior(x, sigma2, mu0, tau2)
    return mu_n, tau2_n + float(sigma2)


def beta_bernoulli_log_joint(
    theta: ArrayLike, a: float, b: float, n_heads: float, n_tails: float
) -> float | FloatArray:
    """Log of prior times likelihood, log Beta(θ; a, b) + N_H log θ + N_T log(1 - θ).

    As a function of θ this is the unnormalised log posterior: its maximiser is the MAP
    estimate, and without the prior term it is the log-likelihood. Uses 0·log 0 = 0, so
    θ = 0 or 1 gives a finite value whenever the corresponding exponent is zero.

    Parameters
    ----------
    theta : array_like
        Values in [0, 1].
    a, b : float
        Prior parameters, both > 0.
    n_heads, n_tails : float
        Observed counts, non-negative.

    Returns
    -------
    ndarray of float64, shape like ``theta`` (a float for scalar ``theta``)

    See the chapter "Bayesian learning", section "MAP as regularised maximum likelihood".
    """
    theta_arr = as_float_array(theta, "theta")
    if np.any((theta_arr < 0) | (theta_arr > 1)):
        raise ValueError("theta must lie in [0, 1]")
    a_post, b_post = beta_posterior(a, b, n_heads, n_tails)
    log_norm = special.betaln(a, b)
    out = special.xlogy(a_post - 1.0, theta_arr) + special.xlog1py(b_post - 1.0, -theta_arr)
    out = out - log_norm
    return float(out) if out.ndim == 0 else out
