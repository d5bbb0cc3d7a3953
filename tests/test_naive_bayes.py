"""Tests of mlcourse_utils.naive_bayes.

Expected values come from the seed lecture's spam/ham table (worked by hand in the docstrings),
from scipy.stats, or from scikit-learn's BernoulliNB / GaussianNB / CategoricalNB fitted on
the same real data (binarised digits, iris, wine).
"""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from numpy.testing import assert_allclose, assert_array_equal
from scipy import stats
from scipy.special import expit, softmax
from sklearn.model_selection import train_test_split
from sklearn.naive_bayes import BernoulliNB, CategoricalNB, GaussianNB

from mlcourse_utils import datasets
from mlcourse_utils.naive_bayes import (
    BernoulliNaiveBayes,
    GaussianNaiveBayes,
    bernoulli_nb_log_joint,
    bernoulli_nb_log_joint_missing,
    categorical_nb_log_joint,
    fit_bayesian_bernoulli_nb,
    fit_bernoulli_nb,
    fit_categorical_nb,
    fit_gaussian_nb,
    gaussian_nb_log_joint,
    gaussian_nb_log_joint_missing,
    nb_linear_weights,
    predict_proba_from_log_joint,
)
from tolerances import exact_mean, few_ops, sum_atol, sum_rtol


@pytest.fixture(scope="module")
def digits():
    return datasets.load_digits_binary()


@pytest.fixture(scope="module")
def spam():
    X, y, _ = datasets.spam_ham_table()
    return X, y


# --------------------------------------------------------------------------- the seed's table


def test_spam_ham_mle_parameters(spam):
    """By counting the lecture's table: 6 ham, 5 spam; "pill" in 2 of 6 ham and 3 of 5 spam;
    "meeting" in 5 of 6 ham and 1 of 5 spam. So P(ham) = 6/11, P(spam) = 5/11 and
    theta = [[2/6, 5/6], [3/5, 1/5]] (rows ham, spam; alpha = 0 is the MLE)."""
    X, y = spam
    classes, log_prior, theta = fit_bernoulli_nb(X, y, alpha=0.0)
    assert list(classes) == ["ham", "spam"]
    assert_allclose(np.exp(log_prior), [6 / 11, 5 / 11], rtol=1e-12)
    assert_allclose(theta, [[2 / 6, 5 / 6], [3 / 5, 1 / 5]], rtol=1e-12)


def test_spam_ham_joint_and_posterior_for_pill_and_meeting(spam):
    """A mail with both words. Unnormalised: ham (2/6)(5/6)(6/11) = 60/396 = 5/33,
    spam (3/5)(1/5)(5/11) = 15/275 = 3/55. Normalised: 5/33 + 3/55 = (25 + 9)/165 = 34/165,
    so p(ham | x) = (25/165)/(34/165) = 25/34 and p(spam | x) = 9/34."""
    X, y = spam
    _, log_prior, theta = fit_bernoulli_nb(X, y, alpha=0.0)
    L = bernoulli_nb_log_joint([[1, 1]], log_prior, theta)
    assert_allclose(np.exp(L), [[5 / 33, 3 / 55]], rtol=1e-12)
    assert_allclose(predict_proba_from_log_joint(L), [[25 / 34, 9 / 34]], rtol=1e-12)


def test_spam_ham_all_four_mails_by_hand(spam):
    """Joint p(x, c) for the four possible mails, each by hand from the table's fractions:
    (0,0): ham (4/6)(1/6)(6/11) = 4/66,  spam (2/5)(4/5)(5/11) = 8/55;
    (1,0): ham (2/6)(1/6)(6/11) = 2/66,  spam (3/5)(4/5)(5/11) = 12/55;
    (0,1): ham (4/6)(5/6)(6/11) = 20/66, spam (2/5)(1/5)(5/11) = 2/55.
    The eight joints plus (1,1) sum to 1 over all x and c."""
    X, y = spam
    _, log_prior, theta = fit_bernoulli_nb(X, y, alpha=0.0)
    mails = [[0, 0], [1, 0], [0, 1], [1, 1]]
    expected = [[4 / 66, 8 / 55], [2 / 66, 12 / 55], [20 / 66, 2 / 55], [5 / 33, 3 / 55]]
    P = np.exp(bernoulli_nb_log_joint(mails, log_prior, theta))
    assert_allclose(P, expected, rtol=1e-12)
    assert_allclose(P.sum(), 1.0, rtol=1e-12)


def test_laplace_smoothing_on_spam_ham(spam):
    """alpha = 1 adds one pseudo-mail with and one without each word per class:
    ham (2+1)/(6+2) = 3/8, (5+1)/8 = 3/4; spam (3+1)/(5+2) = 4/7, (1+1)/7 = 2/7.
    The prior stays unsmoothed (6/11, 5/11). alpha = 0.01: (2.01/6.02, 5.01/6.02)."""
    X, y = spam
    _, log_prior, theta = fit_bernoulli_nb(X, y, alpha=1.0)
    assert_allclose(theta, [[3 / 8, 3 / 4], [4 / 7, 2 / 7]], rtol=1e-12)
    assert_allclose(np.exp(log_prior), [6 / 11, 5 / 11], rtol=1e-12)
    _, _, theta = fit_bernoulli_nb(X, y, alpha=0.01)
    assert_allclose(theta[0], [2.01 / 6.02, 5.01 / 6.02], rtol=1e-12)


def test_linear_weights_spam_ham_by_hand(spam):
    """c1 = spam. w_pill = logit(3/5) - logit(1/3) = log(3/2) - log(1/2) = log 3;
    w_meeting = logit(1/5) - logit(5/6) = log(1/4) - log 5 = -log 20;
    w0 = log(5/6) + log((2/5)/(2/3)) + log((4/5)/(1/6)) = log(5/6 * 3/5 * 24/5) = log(12/5).
    For (1,1): log(12/5 * 3 / 20) = log(9/25) = log((9/34)/(25/34))."""
    X, y = spam
    _, log_prior, theta = fit_bernoulli_nb(X, y, alpha=0.0)
    w0, w = nb_linear_weights(log_prior, theta)
    assert_allclose(w0, np.log(12 / 5), rtol=1e-12)
    assert_allclose(w, [np.log(3), -np.log(20)], rtol=1e-12)
    assert_allclose(w0 + w.sum(), np.log(9 / 25), rtol=1e-12)


def test_zero_count_collapse_and_smoothing():
    """The seed's second table: all five spam mails contain "pill", so the MLE gives
    p(no pill | spam) = 0 and a mail without "pill" cannot be spam (log joint -inf, posterior
    exactly 0), however strongly the absent "meeting" points to spam. With alpha = 1:
    ham theta = ((2+1)/8, (5+1)/8), spam theta = ((5+1)/7, (1+1)/7);
    x = (0, 0): ham (5/8)(2/8)(6/11) = 60/704, spam (1/7)(5/7)(5/11) = 25/539."""
    X = np.array([[1, 1], [1, 0], [1, 1], [1, 1], [0, 1], [0, 1], [0, 1], [1, 0], [1, 0],
                  [1, 0], [0, 0]])
    y = np.array(["spam", "spam", "ham", "ham", "ham", "ham", "ham", "spam", "spam", "spam",
                  "ham"])
    _, lp, theta = fit_bernoulli_nb(X, y, alpha=0.0)
    assert theta[1, 0] == 1.0
    L = bernoulli_nb_log_joint([[0, 0], [0, 1]], lp, theta)
    assert np.all(L[:, 1] == -np.inf) and np.all(np.isfinite(L[:, 0]))
    assert_array_equal(predict_proba_from_log_joint(L)[:, 1], [0.0, 0.0])
    _, lp, theta = fit_bernoulli_nb(X, y, alpha=1.0)
    P = np.exp(bernoulli_nb_log_joint([[0, 0]], lp, theta))
    assert_allclose(P, [[60 / 704, 25 / 539]], rtol=1e-12)


# --------------------------------------------------------------------------- scikit-learn


@pytest.mark.parametrize("alpha", [1.0, 0.5, 0.01, 1e-3])
def test_bernoulli_matches_sklearn_on_digits(digits, alpha):
    """BernoulliNB(force_alpha=True) uses the same smoothed theta, and its default
    class_log_prior_ is the unsmoothed log(N_c / N), as ours."""
    X, y = digits
    sk = BernoulliNB(alpha=alpha, force_alpha=True).fit(X, y)
    classes, log_prior, theta = fit_bernoulli_nb(X, y, alpha=alpha)
    assert_array_equal(classes, sk.classes_)
    assert_allclose(log_prior, sk.class_log_prior_, rtol=1e-13)
    assert_allclose(np.log(theta), sk.feature_log_prob_, rtol=1e-12, atol=1e-12)
    L = bernoulli_nb_log_joint(X, log_prior, theta)
    assert_allclose(L, sk.predict_joint_log_proba(X), rtol=1e-11)
    assert_allclose(predict_proba_from_log_joint(L), sk.predict_proba(X), atol=1e-10)


def test_bernoulli_mle_is_class_frequency(digits):
    """alpha = 0: theta[c] is the mean of the class's rows (a direct count)."""
    X, y = digits
    classes, log_prior, theta = fit_bernoulli_nb(X, y, alpha=0.0)
    for k, c in enumerate(classes):
        # Sums of 0/1 are exact integers in any order: one rounding in the division.
        assert_allclose(theta[k], X[y == c].mean(axis=0), rtol=few_ops(1))
        assert_allclose(np.exp(log_prior[k]), np.mean(y == c), rtol=1e-13)


def test_bernoulli_estimator_matches_sklearn_on_split(digits):
    X, y = digits
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)
    ours = BernoulliNaiveBayes(alpha=1.0).fit(Xtr, ytr)
    sk = BernoulliNB(alpha=1.0).fit(Xtr, ytr)
    assert_array_equal(ours.predict(Xte), sk.predict(Xte))
    assert_allclose(ours.predict_proba(Xte), sk.predict_proba(Xte), atol=1e-10)
    assert_allclose(ours.predict_log_proba(Xte), sk.predict_log_proba(Xte), rtol=1e-9, atol=1e-9)
    assert ours.score(Xte, yte) == pytest.approx(sk.score(Xte, yte))


@pytest.mark.parametrize("loader", ["load_iris", "load_wine"])
@pytest.mark.parametrize("var_smoothing", [0.0, 1e-9, 1e-2])
def test_gaussian_matches_sklearn(loader, var_smoothing):
    """Same means, ML variances + var_smoothing * max feature variance, joint log-likelihoods
    and posteriors as GaussianNB(var_smoothing=...)."""
    data = getattr(datasets, loader)()
    X, y = data.data, data.target
    sk = GaussianNB(var_smoothing=var_smoothing).fit(X, y)
    classes, log_prior, means, variances = fit_gaussian_nb(X, y, var_smoothing=var_smoothing)
    assert_array_equal(classes, sk.classes_)
    assert_allclose(np.exp(log_prior), sk.class_prior_, rtol=1e-13)
    assert_allclose(means, sk.theta_, rtol=1e-12)
    assert_allclose(variances, sk.var_, rtol=1e-10)
    L = gaussian_nb_log_joint(X, log_prior, means, variances)
    assert_allclose(L, sk.predict_joint_log_proba(X), rtol=1e-10, atol=1e-10)
    assert_allclose(predict_proba_from_log_joint(L), sk.predict_proba(X), atol=1e-10)
    est = GaussianNaiveBayes(var_smoothing=var_smoothing).fit(X, y)
    assert_array_equal(est.predict(X), sk.predict(X))


def _many_rows(n=20_000, d=12, offset=0.0, seed=8):
    """Enough rows that the fits and joints run over several blocks of rows (2^16 entries)."""
    rng = np.random.default_rng(seed)
    y = rng.choice(["a", "b", "c", "d"], size=n, p=[0.1, 0.2, 0.3, 0.4])
    X = rng.normal(size=(n, d)) * rng.uniform(0.5, 2.0, size=d) + offset
    X += (y == "b")[:, None] * 0.7 - (y == "d")[:, None] * 0.4
    return X, y


def test_gaussian_matches_sklearn_over_many_blocks():
    """20 000 x 12 (four blocks of rows): the same parameters, joints and posteriors as
    GaussianNB, and the estimator's posteriors too."""
    X, y = _many_rows()
    sk = GaussianNB(var_smoothing=1e-9).fit(X, y)
    _, log_prior, means, variances = fit_gaussian_nb(X, y, var_smoothing=1e-9)
    assert_allclose(np.exp(log_prior), sk.class_prior_, rtol=1e-13)
    # Class means of thousands of mixed-sign terms of size ~1, summed in another order by
    # scikit-learn: within sum_atol(N, mean |x|) of each other (N >= N_c), not one ulp.
    assert_allclose(means, sk.theta_, rtol=0, atol=sum_atol(len(X), np.abs(X).mean()))
    assert_allclose(variances, sk.var_, rtol=1e-12)
    L = gaussian_nb_log_joint(X, log_prior, means, variances)
    assert_allclose(L, sk.predict_joint_log_proba(X), rtol=1e-12, atol=1e-10)
    est = GaussianNaiveBayes(var_smoothing=1e-9).fit(X, y)
    assert_allclose(est.predict_proba(X), sk.predict_proba(X), atol=1e-12)


def test_gaussian_variances_accurate_far_from_zero():
    """Data around 1e6 with spread ~1: per-class variances equal numpy's two-pass np.var of
    each class's rows (a one-pass sum of squares would lose about 12 digits here), and the
    joints equal scipy's log-densities summed over the features."""
    X, y = _many_rows(n=6000, d=5, offset=1e6)
    classes, log_prior, means, variances = fit_gaussian_nb(X, y)
    for k, c in enumerate(classes):
        Xc = X[y == c]
        # The mean is a sum of N_c positive terms: any summation order is within
        # gamma(N_c - 1) of the correctly rounded sum (tolerances.sum_rtol); about 4e-13 here.
        assert_allclose(means[k], exact_mean(Xc), rtol=sum_rtol(len(Xc)))
        # Two-pass: x - mu is exact (Sterbenz) up to the mean's error d, which adds d^2
        # ~ (N_c U |mu|)^2 ~ 1e-13 to variances ~1, plus a sum of squares (sum_rtol). A
        # one-pass E[x^2] - mu^2 would be off by ~1e-4 here, so 1e-9 separates the two.
        assert_allclose(variances[k], Xc.var(axis=0), rtol=1e-9)
    Xq = X[:50]
    expected = log_prior + np.stack(
        [stats.norm.logpdf(Xq, means[k], np.sqrt(variances[k])).sum(axis=1)
         for k in range(len(classes))], axis=1)
    assert_allclose(gaussian_nb_log_joint(Xq, log_prior, means, variances), expected,
                    rtol=1e-12, atol=1e-9)


def test_gaussian_joint_for_points_far_from_every_mean():
    """Points 1000 standard deviations away: log-densities of about -5e5 per feature, still
    equal to scipy's to 12 digits (the expanded square loses nothing that matters)."""
    rng = np.random.default_rng(2)
    means = rng.normal(size=(3, 4))
    variances = rng.uniform(0.5, 2.0, size=(3, 4))
    log_prior = np.log([0.2, 0.3, 0.5])
    X = rng.normal(size=(30, 4)) * 1000.0
    expected = log_prior + np.stack(
        [stats.norm.logpdf(X, means[k], np.sqrt(variances[k])).sum(axis=1) for k in range(3)],
        axis=1)
    assert_allclose(gaussian_nb_log_joint(X, log_prior, means, variances), expected, rtol=1e-12)


def test_bernoulli_matches_sklearn_over_many_blocks():
    """Binary 20 000 x 12: counts, joints and posteriors as BernoulliNB's."""
    X, y = _many_rows()
    Xb = X > 0.2
    sk = BernoulliNB(alpha=0.5, binarize=None).fit(Xb, y)
    _, log_prior, theta = fit_bernoulli_nb(Xb, y, alpha=0.5)
    assert_allclose(log_prior, sk.class_log_prior_, rtol=1e-13)
    assert_allclose(np.log(theta), sk.feature_log_prob_, rtol=1e-12)
    L = bernoulli_nb_log_joint(Xb, log_prior, theta)
    assert_allclose(L, sk.predict_joint_log_proba(Xb.astype(float)), rtol=1e-12)
    est = BernoulliNaiveBayes(alpha=0.5).fit(Xb, y)
    assert_allclose(est.predict_proba(Xb), sk.predict_proba(Xb.astype(float)), atol=1e-12)


def test_bernoulli_estimator_log_joint_is_the_function_s():
    """The estimator's log joint (weights computed at fit, one product per block of rows) is
    bernoulli_nb_log_joint's, over several blocks of rows; with alpha = 0 (thetas exactly 0
    or 1, infinite weights) it is bernoulli_nb_log_joint's itself, -inf entries included."""
    X, y = _many_rows()
    Xb = (X > 0.2).astype(float)
    est = BernoulliNaiveBayes(alpha=0.5).fit(Xb, y)
    expected = bernoulli_nb_log_joint(Xb, est.class_log_prior_, est.theta_)
    # Each entry sums the same D + 1 terms, perhaps in another order (another BLAS kernel
    # for another number of rows): within sum_atol of the terms' absolute sum.
    magnitude = np.max(np.abs(np.log(est.theta_)) + np.abs(np.log1p(-est.theta_)), axis=0).sum()
    atol = sum_atol(Xb.shape[1] + 2, magnitude + np.abs(est.class_log_prior_).max())
    assert_allclose(est.log_joint(Xb), expected, rtol=0, atol=atol)
    Xs = np.array([[1, 1], [0, 1], [1, 0], [0, 0]] * 3, dtype=float)
    ys = np.array([0, 0, 0, 1] * 3)                     # class 1 only ever sees (0, 0)
    exact = BernoulliNaiveBayes(alpha=0.0).fit(Xs, ys)
    joint = exact.log_joint(Xs)
    assert_array_equal(joint, bernoulli_nb_log_joint(Xs, exact.class_log_prior_, exact.theta_))
    assert np.isneginf(joint[:3, 1]).all() and np.isfinite(joint[3]).all()


@pytest.mark.parametrize("value, match", [(0.5, "X must be binary"), (2.0, "X must be binary"),
                                          (np.nan, "NaN or inf"), (np.inf, "NaN or inf")])
@pytest.mark.parametrize("row", [0, 7000, 19_999])
def test_bad_entry_in_any_block_is_found(value, match, row):
    """The entries of X are checked block by block during the fits' and the estimators' own
    passes over X: one bad entry in the first, a middle or the last (partial) block of a
    20 000 x 12 array is found by every fit and by the Bernoulli estimator's prediction."""
    X, y = _many_rows()
    Xb = (X > 0.2).astype(float)
    est = BernoulliNaiveBayes(alpha=1.0).fit(Xb, y)
    Xb[row, 5] = value
    with pytest.raises(ValueError, match=match):
        fit_bernoulli_nb(Xb, y)
    with pytest.raises(ValueError, match=match):
        fit_bayesian_bernoulli_nb(Xb, y)
    with pytest.raises(ValueError, match=match):
        est.predict_proba(Xb)
    if not np.isfinite(value):
        X[row, 5] = value
        with pytest.raises(ValueError, match="X contains NaN or inf"):
            fit_gaussian_nb(X, y, var_smoothing=1e-9)
        X[row, 5] = -value
        with pytest.raises(ValueError, match="X contains NaN or inf"):
            fit_gaussian_nb(X, y, var_smoothing=1e-9)


def test_gaussian_by_hand_against_scipy():
    """Class 'a' x = 0, 2 (mean 1, ML variance 1); class 'b' x = 4, 4, 7 (mean 5, variance
    (1 + 1 + 4)/3 = 2). Joint at x = 3: log(2/5) + log N(3 | 1, 1), log(3/5) + log N(3 | 5, 2)."""
    X = np.array([[0.0], [2.0], [4.0], [4.0], [7.0]])
    y = np.array(["a", "a", "b", "b", "b"])
    classes, log_prior, means, variances = fit_gaussian_nb(X, y)
    assert_allclose(means, [[1.0], [5.0]])
    assert_allclose(variances, [[1.0], [2.0]])
    L = gaussian_nb_log_joint([[3.0]], log_prior, means, variances)
    expected = [np.log(2 / 5) + stats.norm.logpdf(3, 1, 1),
                np.log(3 / 5) + stats.norm.logpdf(3, 5, np.sqrt(2))]
    assert_allclose(L[0], expected, rtol=1e-13)


def test_var_smoothing_rule():
    """Per class by hand: class 0 has (0, 2) and (1, 1.5): variances 1 and 0.0625; class 1
    has (4, 7) and (1, 3): 2.25 and 1. epsilon = 0.5 * the larger feature variance of all X."""
    X = np.array([[0.0, 1.0], [2.0, 1.5], [4.0, 1.0], [7.0, 3.0]])
    y = np.array([0, 0, 1, 1])
    eps = 0.5 * max(np.var(X[:, 0]), np.var(X[:, 1]))
    _, _, _, v0 = fit_gaussian_nb(X, y)
    _, _, _, v1 = fit_gaussian_nb(X, y, var_smoothing=0.5)
    assert_allclose(v1 - v0, eps, rtol=1e-12)
    assert_allclose(v0, [[1.0, 0.0625], [2.25, 1.0]], rtol=1e-12)


def test_categorical_matches_sklearn():
    rng = np.random.default_rng(3)
    X = rng.integers(0, [3, 5, 2], size=(200, 3))
    y = rng.choice(["a", "b", "c"], size=200)
    sk = CategoricalNB(alpha=0.7, force_alpha=True).fit(X, y)
    classes, log_prior, thetas = fit_categorical_nb(X, y, alpha=0.7)
    assert_array_equal(classes, sk.classes_)
    for th, sk_log in zip(thetas, sk.feature_log_prob_, strict=True):
        assert_allclose(np.log(th), sk_log, rtol=1e-12)
    L = categorical_nb_log_joint(X, log_prior, thetas)
    assert_allclose(L, sk.predict_joint_log_proba(X), rtol=1e-12)


def test_categorical_with_two_values_is_bernoulli(digits):
    X, y = digits
    _, lp_b, theta = fit_bernoulli_nb(X, y, alpha=0.3)
    _, lp_c, thetas = fit_categorical_nb(X, y, alpha=0.3, n_categories=np.full(64, 2))
    assert_allclose(np.stack([t[:, 1] for t in thetas], axis=1), theta, rtol=1e-13)
    assert_allclose(categorical_nb_log_joint(X[:50], lp_c, thetas),
                    bernoulli_nb_log_joint(X[:50], lp_b, theta), rtol=1e-12)


# --------------------------------------------------------------------------- linear form


@pytest.mark.parametrize("alpha", [1.0, 0.1])
def test_linear_weights_equal_log_odds_on_digits(digits, alpha):
    """Digits 3 vs 8: w0 + w.x equals the difference of the two log joints, and its sigmoid
    equals scikit-learn's predict_proba for the second class."""
    X, y = digits
    mask = (y == 3) | (y == 8)
    X, y = X[mask], y[mask]
    _, log_prior, theta = fit_bernoulli_nb(X, y, alpha=alpha)
    w0, w = nb_linear_weights(log_prior, theta)
    L = bernoulli_nb_log_joint(X, log_prior, theta)
    assert_allclose(w0 + X @ w, L[:, 1] - L[:, 0], rtol=1e-10, atol=1e-10)
    sk = BernoulliNB(alpha=alpha, force_alpha=True).fit(X, y)
    assert_allclose(expit(w0 + X @ w), sk.predict_proba(X)[:, 1], atol=1e-10)


@settings(max_examples=60, deadline=None)
@given(
    theta=arrays(np.float64, (2, 4), elements=st.floats(0.01, 0.99)),
    x=arrays(np.int64, (4,), elements=st.integers(0, 1)),
    p=st.floats(0.01, 0.99),
)
def test_linear_weights_property(theta, x, p):
    """log-odds from the explicit Bernoulli pmfs (scipy) equals w0 + w.x."""
    log_prior = np.log([1 - p, p])
    w0, w = nb_linear_weights(log_prior, theta)
    lj = log_prior + stats.bernoulli.logpmf(x[None, :], theta).sum(axis=1)
    assert_allclose(w0 + w @ x, lj[1] - lj[0], rtol=1e-9, atol=1e-9)


# --------------------------------------------------------------------------- numerics


def test_exact_zero_and_one_thetas():
    """theta = [[0, 1], [1/2, 1/2]], prior 1/2 each. Class 0 only allows x = (0, 1), where
    its log joint is log(1/2) + 0 + 0; everything else is -inf for class 0. Class 1 gives
    log(1/2) + 2 log(1/2) = 3 log(1/2) for every x."""
    theta = np.array([[0.0, 1.0], [0.5, 0.5]])
    lp = np.log([0.5, 0.5])
    X = np.array([[0, 1], [1, 1], [0, 0], [1, 0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        L = bernoulli_nb_log_joint(X, lp, theta)
    assert_allclose(L[0, 0], np.log(0.5), rtol=few_ops())
    assert np.all(L[1:, 0] == -np.inf)
    assert_allclose(L[:, 1], 3 * np.log(0.5), rtol=few_ops())
    assert_allclose(predict_proba_from_log_joint(L)[0], [0.8, 0.2], rtol=1e-12)


def test_predict_proba_stable_near_minus_1e4():
    """Log joints of -1e4 + (0, log 3): exp underflows to 0, but the posterior is (1/4, 3/4)."""
    L = np.array([[-1e4, -1e4 + np.log(3.0)], [-1e4 - 5.0, -1e4 + 5.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        P = predict_proba_from_log_joint(L)
    assert_allclose(P[0], [0.25, 0.75], rtol=1e-12)
    assert_allclose(P[1], [expit(-10.0), expit(10.0)], rtol=1e-12)


@settings(max_examples=60, deadline=None)
@given(
    L=arrays(np.float64, (5, 3), elements=st.floats(-50, 50)),
    shift=st.floats(-1e4, 1e4),
)
def test_predict_proba_property(L, shift):
    """Rows sum to 1, invariant to a common shift, and equal scipy's softmax."""
    P = predict_proba_from_log_joint(L + shift)
    assert_allclose(P.sum(axis=1), 1.0, rtol=1e-12)
    assert_allclose(P, softmax(L, axis=1), rtol=1e-6, atol=1e-12)
    assert np.all(P >= 0)


def test_long_product_underflows_but_log_joint_does_not(digits):
    """Repeating the 64 pixels 200 times (12,800 independent features) multiplies the log
    likelihood by 200: log p(x, c) = log pi_c + 200 * (the 64-pixel log likelihood), far below
    log of the smallest double (about -745), yet finite, and the posterior still sums to 1."""
    X, y = digits
    _, lp, theta = fit_bernoulli_nb(X, y)
    L64 = bernoulli_nb_log_joint(X[:5], lp, theta)
    L = bernoulli_nb_log_joint(np.tile(X[:5], (1, 200)), lp, np.tile(theta, (1, 200)))
    assert_allclose(L, lp + 200 * (L64 - lp), rtol=1e-12)
    assert np.all(np.isfinite(L)) and L.max() < -745
    assert np.all(np.exp(L) == 0.0)
    assert_allclose(predict_proba_from_log_joint(L).sum(axis=1), 1.0, rtol=1e-12)


# --------------------------------------------------------------------------- extras


def test_missing_feature_is_marginalised(spam):
    """Meeting unknown: ham (2/6)(6/11) = 2/11, spam (3/5)(5/11) = 3/11, so p(spam) = 3/5."""
    X, y = spam
    _, lp, theta = fit_bernoulli_nb(X, y, alpha=0.0)
    L = bernoulli_nb_log_joint_missing([[1, np.nan], [np.nan, np.nan]], lp, theta)
    assert_allclose(np.exp(L[0]), [2 / 11, 3 / 11], rtol=1e-12)
    assert_allclose(np.exp(L[1]), [6 / 11, 5 / 11], rtol=1e-12)
    assert_allclose(predict_proba_from_log_joint(L)[0], [2 / 5, 3 / 5], rtol=1e-12)


def test_gaussian_missing_feature_drops_its_term():
    data = datasets.load_iris()
    X, y = data.data, data.target
    _, lp, mu, var = fit_gaussian_nb(X, y)
    Xm = X[:10].copy()
    Xm[:, 2] = np.nan
    L = gaussian_nb_log_joint_missing(Xm, lp, mu, var)
    expected = lp + np.stack(
        [stats.norm.logpdf(X[:10][:, [0, 1, 3]], mu[c, [0, 1, 3]], np.sqrt(var[c, [0, 1, 3]]))
         .sum(axis=1) for c in range(3)], axis=1)
    assert_allclose(L, expected, rtol=1e-12)


def test_bayesian_bernoulli_nb_spam_ham(spam):
    """Beta(1, 1) on theta and Dirichlet(1, 1) on the classes: theta ham = (3/8, 6/8), spam =
    (4/7, 2/7); prior ((6+1)/13, (5+1)/13). With a = b = 0.5, class_pseudocount = 0 it equals
    fit_bernoulli_nb(alpha=0.5)."""
    X, y = spam
    _, lp, theta = fit_bayesian_bernoulli_nb(X, y)
    assert_allclose(theta, [[3 / 8, 6 / 8], [4 / 7, 2 / 7]], rtol=1e-12)
    assert_allclose(np.exp(lp), [7 / 13, 6 / 13], rtol=1e-12)
    _, lp, theta = fit_bayesian_bernoulli_nb(X, y, a=0.5, b=0.5, class_pseudocount=0.0)
    assert_allclose(theta, [[2.5 / 7, 5.5 / 7], [3.5 / 6, 1.5 / 6]], rtol=1e-12)
    assert_allclose(np.exp(lp), [6 / 11, 5 / 11], rtol=1e-12)


def test_string_labels_sorted_and_returned(spam):
    X, y = spam
    est = BernoulliNaiveBayes(alpha=1.0).fit(X, y)
    assert est.predict([[1, 1]])[0] == "ham"
    assert est.predict([[1, 0]])[0] == "spam"


# --------------------------------------------------------------------------- bad inputs


def test_bad_inputs_bernoulli(spam):
    X, y = spam
    with pytest.raises(ValueError, match="X must be binary"):
        fit_bernoulli_nb(X * 2, y)
    with pytest.raises(ValueError, match="y has 10"):
        fit_bernoulli_nb(X, y[:10])
    with pytest.raises(ValueError, match="alpha"):
        fit_bernoulli_nb(X, y, alpha=-1.0)
    with pytest.raises(ValueError, match="X"):
        fit_bernoulli_nb(np.where(X == 1, np.nan, 0), y)
    with pytest.raises(ValueError, match="X"):
        fit_bernoulli_nb(X[0], y[:1])
    _, lp, theta = fit_bernoulli_nb(X, y)
    with pytest.raises(ValueError, match="X must be binary"):
        bernoulli_nb_log_joint([[0.5, 1]], lp, theta)
    with pytest.raises(ValueError, match="columns"):
        bernoulli_nb_log_joint([[1, 1, 0]], lp, theta)
    with pytest.raises(ValueError, match="theta"):
        bernoulli_nb_log_joint([[1, 1]], lp, theta + 0.5)
    with pytest.raises(ValueError, match="theta"):
        bernoulli_nb_log_joint([[1, 1]], lp, theta[:1])
    with pytest.raises(ValueError, match="log_prior"):
        bernoulli_nb_log_joint([[1, 1]], lp + 0.1, theta)
    with pytest.raises(ValueError, match="log_prior"):
        bernoulli_nb_log_joint([[1, 1]], [np.nan, 0.0], theta)


def test_bad_inputs_proba():
    with pytest.raises(ValueError, match="log_joint"):
        predict_proba_from_log_joint([[-np.inf, -np.inf], [0.0, 1.0]])
    with pytest.raises(ValueError, match="log_joint"):
        predict_proba_from_log_joint([[np.nan, 0.0]])
    with pytest.raises(ValueError, match="log_joint"):
        predict_proba_from_log_joint([0.0, 1.0])


def test_bad_inputs_gaussian():
    X = np.array([[0.0, 1.0], [1.0, 2.0], [5.0, 5.0]])
    y = np.array([0, 0, 1])  # class 1 has a single sample: zero variance
    with pytest.raises(ValueError, match="var_smoothing"):
        fit_gaussian_nb(X, y)
    _, lp, mu, var = fit_gaussian_nb(X, y, var_smoothing=1e-9)
    assert np.all(var > 0)
    with pytest.raises(ValueError, match="var_smoothing"):
        fit_gaussian_nb(X, y, var_smoothing=-1.0)
    with pytest.raises(ValueError, match="X"):
        fit_gaussian_nb([[np.inf, 0.0]] * 3, y)
    with pytest.raises(ValueError, match="variances"):
        gaussian_nb_log_joint(X, lp, mu, -var)
    with pytest.raises(ValueError, match="means"):
        gaussian_nb_log_joint(X, lp, mu[:, :1], var)
    with pytest.raises(TypeError, match="X"):
        gaussian_nb_log_joint("abc", lp, mu, var)


def test_bad_inputs_linear_weights(spam):
    X, y = spam
    _, lp, theta = fit_bernoulli_nb(X, y, alpha=1.0)
    with pytest.raises(ValueError, match="theta"):
        nb_linear_weights(lp, np.array([[0.0, 0.5], [0.5, 0.5]]))
    with pytest.raises(ValueError, match="theta"):
        nb_linear_weights(lp, np.array([[0.5, 0.5], [1.0, 0.5]]))
    with pytest.raises(ValueError, match="log_prior"):
        nb_linear_weights(np.log([0.2, 0.3, 0.5]), np.full((3, 2), 0.5))
    with pytest.raises(ValueError, match="log_prior"):
        nb_linear_weights([0.0, -np.inf], theta)


def test_unfitted_estimator_raises():
    with pytest.raises(ValueError, match="fit"):
        GaussianNaiveBayes().predict([[0.0]])
