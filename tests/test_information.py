"""Tests for mlcourse_utils.information (chapter "Information theory and MDL").

Expected values come from hand derivations (stated in the docstrings), the seed lecture's
examples (2 bits, 1.75 bits, 0 bits; the coin-flip dice), textbook examples with known optimal
codes, scipy (``scipy.stats.entropy``, ``scipy.special.rel_entr``, ``scipy.stats.norm``), numpy's
``polyfit`` and brute-force searches over all integer code lengths. Huffman codes are judged by
their expected length and Kraft's inequality, never by one particular tie-break.
"""

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal
from scipy import stats
from scipy.special import rel_entr

from mlcourse_utils import datasets
from mlcourse_utils.information import (
    arithmetic_decode,
    arithmetic_encode,
    canonical_codewords,
    codelengths,
    conditional_entropy,
    cross_entropy,
    empirical_joint,
    entropy,
    expected_codelength,
    huffman_code_lengths,
    is_prefix_free,
    joint_entropy,
    kl_divergence,
    kraft_sum,
    mutual_information,
    mutual_information_from_samples,
    polynomial_ml_fit,
    prefix_decode,
    prefix_encode,
    quantile_bins,
    select_degree_mdl,
    select_features_mi,
    shannon_code_lengths,
    simulate_die_with_coin,
    two_part_code_terms,
    two_part_codelength,
)
from tolerances import few_ops, sum_atol, sum_rtol

# Distributions for property tests: non-negative weights, at least one positive, normalised.
weights = st.lists(st.floats(0.0, 1.0, allow_subnormal=False), min_size=1, max_size=12).filter(
    lambda w: sum(w) > 1e-3)
positive_weights = st.lists(st.floats(1e-3, 1.0), min_size=1, max_size=12)


def _normalise(w):
    w = np.asarray(w, dtype=float)
    return w / w.sum()


def _optimal_expected_length(p):
    """Brute force: the smallest sum p L over all integer lengths 0..K-1 with Kraft sum <= 1.

    An optimal prefix code for K >= 2 symbols has no codeword longer than K - 1 bits (and
    none of length 0), so searching lengths 1..K-1 is exhaustive.
    """
    K = len(p)
    if K == 1:
        return 0.0
    grid = np.array(list(itertools.product(range(1, K), repeat=K)), dtype=float)
    feasible = np.sum(2.0 ** -grid, axis=1) <= 1.0 + 1e-12
    return float(np.min(grid[feasible] @ p))


# ------------------------------------------------------------------------------------ entropy


def test_entropy_of_the_lecture_examples():
    """Seed lecture: uniform over 4 outcomes has 2 bits, (1/2, 1/4, 1/8, 1/8) has
    1/2*1 + 1/4*2 + 2*(1/8*3) = 1.75 bits, and certainty has 0 bits (0 log 0 = 0)."""
    assert entropy([0.25] * 4) == pytest.approx(2.0, abs=1e-15)
    assert entropy([0.5, 0.25, 0.125, 0.125]) == pytest.approx(1.75, abs=1e-15)
    h0 = entropy([1.0, 0.0, 0.0, 0.0])
    assert h0 == 0.0 and math.copysign(1.0, h0) == 1.0  # not -0.0
    assert isinstance(h0, float)


def test_entropy_matches_scipy_in_several_bases():
    rng = np.random.default_rng(0)
    for K in (1, 2, 5, 30):
        p = rng.dirichlet(np.ones(K))
        p[0] = 0.0
        p = p / p.sum() if p.sum() > 0 else np.r_[1.0, p[1:]]
        for base in (2, np.e, 3, 10):
            assert_allclose(entropy(p, base=base), stats.entropy(p, base=base), rtol=1e-12,
                            atol=1e-15)


def test_entropy_units_convert_by_log_of_the_base():
    """H in nats = H in bits * ln 2; a fair three-sided die has exactly one trit."""
    p = np.array([0.5, 0.25, 0.125, 0.125])
    assert_allclose(entropy(p, base=np.e), 1.75 * np.log(2), rtol=few_ops())
    assert_allclose(entropy([1 / 3] * 3, base=3), 1.0, rtol=few_ops())


def test_entropy_of_rows():
    P = np.array([[0.25] * 4, [0.5, 0.25, 0.125, 0.125], [1.0, 0.0, 0.0, 0.0]])
    out = entropy(P)
    assert isinstance(out, np.ndarray) and out.dtype == np.float64
    assert_allclose(out, [2.0, 1.75, 0.0], atol=few_ops())


@settings(max_examples=80, deadline=None)
@given(weights)
def test_entropy_is_between_zero_and_log_k(w):
    p = _normalise(w)
    h = entropy(p)
    assert -1e-12 <= h <= np.log2(len(p)) + 1e-12


@pytest.mark.parametrize("bad, match", [
    ([0.5, 0.6], "sum to 1"),
    ([1.5, -0.5], "negative"),
    ([0.5, np.nan], "NaN"),
    ([], "at least 1"),
    (np.full((2, 2, 2), 0.5), "1-D"),
])
def test_entropy_rejects_non_distributions(bad, match):
    with pytest.raises(ValueError, match=match):
        entropy(bad)


@pytest.mark.parametrize("base", [1, 0, -2])
def test_entropy_rejects_bad_bases(base):
    with pytest.raises(ValueError, match="base"):
        entropy([0.5, 0.5], base=base)


def test_entropy_rejects_a_string():
    with pytest.raises(TypeError, match="p"):
        entropy("0.5 0.5")


# ------------------------------------------------------------------------------ cross-entropy


def test_cross_entropy_by_hand():
    """H((1/2, 1/2), (1/4, 3/4)) = -(1/2) log2(1/4) - (1/2) log2(3/4) = 1 + (1/2) log2(4/3)."""
    assert_allclose(cross_entropy([0.5, 0.5], [0.25, 0.75]), 1 + 0.5 * np.log2(4 / 3),
                    rtol=few_ops())


def test_cross_entropy_is_entropy_plus_kl_from_scipy():
    rng = np.random.default_rng(1)
    for K in (2, 4, 17):
        p, q = rng.dirichlet(np.ones(K), size=2)
        expected = stats.entropy(p, base=2) + stats.entropy(p, q, base=2)
        assert_allclose(cross_entropy(p, q), expected, rtol=1e-12)
        assert_allclose(cross_entropy(p, q, base=np.e), expected * np.log(2), rtol=1e-12)


def test_cross_entropy_zero_probabilities():
    """0 log 0 = 0 where p = 0 (whatever q is), inf where q = 0 < p."""
    assert cross_entropy([0.0, 1.0], [0.0, 1.0]) == 0.0
    assert_allclose(cross_entropy([0.0, 1.0], [0.5, 0.5]), 1.0)
    assert cross_entropy([0.5, 0.5], [1.0, 0.0]) == np.inf


def test_cross_entropy_with_one_hot_rows_is_the_log_loss():
    """Against one-hot labels, row i of H(p_i, q_i) is -log q_i(y_i); scikit-learn's log_loss
    is their mean in nats."""
    from sklearn.metrics import log_loss

    rng = np.random.default_rng(2)
    q = rng.dirichlet(np.ones(3), size=20)
    y = rng.integers(0, 3, size=20)
    onehot = np.eye(3)[y]
    rows = cross_entropy(onehot, q, base=np.e)
    assert_allclose(rows, -np.log(q[np.arange(20), y]), rtol=1e-13)
    assert_allclose(rows.mean(), log_loss(y, q, labels=[0, 1, 2]), rtol=1e-12)


def test_cross_entropy_rejects_mismatched_shapes():
    with pytest.raises(ValueError, match="shape"):
        cross_entropy([0.5, 0.5], [0.25, 0.25, 0.5])


@settings(max_examples=80, deadline=None)
@given(weights, st.data())
def test_gibbs_inequality(w, data):
    """H(p, q) >= H(p) for every q with the same support size."""
    p = _normalise(w)
    q = _normalise(data.draw(st.lists(st.floats(1e-3, 1.0), min_size=len(w), max_size=len(w))))
    assert cross_entropy(p, q) >= entropy(p) - 1e-12


# ------------------------------------------------------------------------------ KL divergence


def test_kl_matches_scipy():
    rng = np.random.default_rng(3)
    for K in (1, 2, 6, 40):
        p, q = rng.dirichlet(np.ones(K), size=2)
        p[-1] = 0.0
        p = p / p.sum() if p.sum() > 0 else np.ones(K) / K
        assert_allclose(kl_divergence(p, q), stats.entropy(p, q, base=2), rtol=1e-11, atol=1e-15)
        assert_allclose(kl_divergence(p, q, base=np.e), np.sum(rel_entr(p, q)), rtol=1e-11,
                        atol=1e-15)


def test_kl_is_asymmetric_by_hand():
    """KL(Bern(1/2) || Bern(1/4)) = (1/2) log2 2 + (1/2) log2(2/3) and the reverse is
    (1/4) log2(1/2) + (3/4) log2(3/2): about 0.2075 and 0.1887 bits."""
    forward = kl_divergence([0.5, 0.5], [0.25, 0.75])
    backward = kl_divergence([0.25, 0.75], [0.5, 0.5])
    assert_allclose(forward, 0.5 + 0.5 * np.log2(2 / 3), rtol=1e-13)
    assert_allclose(backward, 0.25 * np.log2(0.5) + 0.75 * np.log2(1.5), rtol=1e-13)
    assert abs(forward - backward) > 0.01


def test_kl_zero_probabilities():
    assert kl_divergence([0.5, 0.5], [1.0, 0.0]) == np.inf
    assert_allclose(kl_divergence([1.0, 0.0], [0.5, 0.5]), 1.0)   # only log2(1 / 0.5)
    assert kl_divergence([0.3, 0.0, 0.7], [0.3, 0.0, 0.7]) == 0.0


def test_kl_is_cross_entropy_minus_entropy():
    rng = np.random.default_rng(4)
    P, Q = rng.dirichlet(np.ones(5), size=(2, 7))
    assert_allclose(kl_divergence(P, Q), cross_entropy(P, Q) - entropy(P), atol=1e-12)


@settings(max_examples=80, deadline=None)
@given(weights, weights)
def test_kl_is_nonnegative_and_zero_only_at_p_equals_q(w1, w2):
    p = _normalise(w1)
    tiled = (w2 * len(w1))[: len(w1)]  # w2 repeated or cut to the length of w1
    assume(sum(tiled) > 1e-3)           # the cut part of w2 may be all zeros: not a distribution
    q = _normalise(tiled)
    assert kl_divergence(p, q) >= 0.0
    assert kl_divergence(p, p) == 0.0
    if np.max(np.abs(p - q)) > 1e-3:
        assert kl_divergence(p, q) > 0.0


# ------------------------------------------------------ joint, conditional, mutual information

#: Cover and Thomas's table (section 2.6): rows x in {0, 1}, columns y in {0, 1}.
COVER_TABLE = np.array([[0.0, 3 / 4], [1 / 8, 1 / 8]])

# Joint tables for property tests: 1 to 5 rows and columns of non-negative weights.
tables = st.integers(1, 5).flatmap(lambda rows: st.integers(1, 5).flatmap(
    lambda cols: st.lists(
        st.lists(st.floats(0.0, 1.0, allow_subnormal=False), min_size=cols, max_size=cols),
        min_size=rows, max_size=rows))).map(np.array).filter(lambda t: t.sum() > 1e-3)


#: The sums of this section have at most three cells per row and four cells in all, each term a
#: product and a logarithm, divided by ln 2: a few dozen rounded operations on positive terms.
HAND = few_ops(24)


def _mi_atol(n_cells, magnitude):
    """Two computations of a mutual information (or entropy) from n_cells terms whose absolute
    values add up to at most ``magnitude``: each term is a few rounded operations and the sums
    run in different orders, so they differ by at most (sum_rtol(n) + few_ops()) * magnitude."""
    return sum_atol(n_cells, magnitude) + few_ops() * magnitude


def test_joint_and_conditional_entropy_by_hand():
    """The table (0, 3/4; 1/8, 1/8), by hand: the cells 3/4, 1/8, 1/8 give H(X, Y) =
    (3/4) log2(4/3) + 2 (1/8) 3 bits. Given x = 0, y is certain (0 bits); given x = 1 (prob.
    1/4), y is a fair coin (1 bit): H(Y | X) = 1/4. Given y = 0 (prob. 1/8), x is certain;
    given y = 1 (prob. 7/8), x is (6/7, 1/7): H(X | Y) = (3/4) log2(7/6) + (1/8) log2 7."""
    assert_allclose(joint_entropy(COVER_TABLE), 0.75 * np.log2(4 / 3) + 0.75, rtol=HAND)
    assert_allclose(conditional_entropy(COVER_TABLE), 0.25, rtol=HAND)
    assert_allclose(conditional_entropy(COVER_TABLE.T), 0.75 * np.log2(7 / 6) + np.log2(7) / 8,
                    rtol=HAND)
    assert isinstance(joint_entropy(COVER_TABLE), float)


def test_mutual_information_by_hand():
    """Same table: H(Y) = (1/8) 3 + (7/8) log2(8/7), so I = H(Y) - H(Y | X) =
    1/8 + (7/8) log2(8/7); H(X) = (3/4) log2(4/3) + 1/2 gives the same I through H(X | Y)."""
    expected = 1 / 8 + 7 / 8 * np.log2(8 / 7)
    assert_allclose(mutual_information(COVER_TABLE), expected, rtol=HAND)
    h_x = 0.75 * np.log2(4 / 3) + 0.5
    h_x_given_y = 0.75 * np.log2(7 / 6) + np.log2(7) / 8
    # a difference of two entropies below 1 bit: absolute error of their sum of magnitudes
    assert_allclose(h_x - h_x_given_y, expected, atol=HAND * (h_x + h_x_given_y))
    assert_allclose(mutual_information(COVER_TABLE, base=np.e), expected * np.log(2), rtol=HAND)


def test_conditioning_reduces_entropy_only_on_average():
    """In the same table, knowing x = 1 raises the entropy of y from H(Y) = 0.54 bits to 1 bit,
    yet the average H(Y | X) = 1/4 is below H(Y)."""
    h_y = entropy(COVER_TABLE.sum(axis=0))
    specific = conditional_entropy(COVER_TABLE[1:] / COVER_TABLE[1].sum())  # one row: H(Y | x=1)
    assert_allclose(specific, 1.0, rtol=few_ops())
    assert specific > h_y > conditional_entropy(COVER_TABLE)


def test_spam_table_by_hand():
    """The eleven e-mails: counting by hand, "meeting" occurs in 6 e-mails (5 ham, 1 spam)
    and not in 5 (1 ham, 4 spam); "pill" occurs in 5 (2 ham, 3 spam) and not in 6 (4 ham,
    2 spam). So I(meeting; class) = H(6/11) - (6/11) H(1/6) - (5/11) H(1/5) and
    I(pill; class) = H(6/11) - (5/11) H(2/5) - (6/11) H(1/3), H the binary entropy."""
    X, y, names = datasets.spam_ham_table()

    def h2(t):
        return -t * np.log2(t) - (1 - t) * np.log2(1 - t)

    pxy, x_values, y_values = empirical_joint(X[:, names.index("meeting")], y)
    assert_array_equal(x_values, [0, 1])
    assert_array_equal(y_values, ["ham", "spam"])
    assert_array_equal(pxy, np.array([[1, 4], [5, 1]]) / 11)  # the same division
    # three binary entropies (each below 1 bit) combined: 3 bits of magnitude
    assert_allclose(mutual_information(pxy),
                    h2(6 / 11) - 6 / 11 * h2(1 / 6) - 5 / 11 * h2(1 / 5), atol=3 * HAND)
    assert_allclose(mutual_information_from_samples(X[:, names.index("pill")], y),
                    h2(6 / 11) - 5 / 11 * h2(2 / 5) - 6 / 11 * h2(1 / 3), atol=3 * HAND)


def test_joint_and_conditional_entropy_against_scipy():
    """H(X, Y) is scipy's entropy of the flattened table; H(Y | X) is sum_x p(x) H(p(y | x))
    with scipy's entropy of each row. All terms are >= 0 (at most 40 of them): relative
    tolerances of a sum in another order plus a few roundings per term."""
    rng = np.random.default_rng(11)
    for shape in [(1, 1), (2, 3), (5, 4), (8, 2)]:
        pxy = rng.dirichlet(np.ones(np.prod(shape))).reshape(shape)
        pxy[0, 0] = 0.0
        pxy = pxy / pxy.sum() if pxy.sum() > 0 else np.full(shape, 1 / np.prod(shape))
        for base in (2, np.e, 10):
            assert_allclose(joint_entropy(pxy, base=base),
                            stats.entropy(pxy.ravel(), base=base), rtol=sum_rtol(40) + HAND)
            px = pxy.sum(axis=1)
            expected = sum(px[i] * stats.entropy(pxy[i] / px[i], base=base)
                           for i in range(shape[0]) if px[i] > 0)
            assert_allclose(conditional_entropy(pxy, base=base), expected,
                            rtol=sum_rtol(40) + HAND)


def test_mutual_information_against_scikit_learn():
    """scikit-learn's mutual_info_score (natural logarithms) on label arrays and on count
    tables. Both sum at most 60 terms; scikit-learn's terms hold logarithms of counts up to
    log N^2, so the absolute values of all the terms add up to at most 6 log 1000 nats."""
    from sklearn.metrics import mutual_info_score

    rng = np.random.default_rng(12)
    atol = _mi_atol(60, 6 * np.log(1000))
    for n, kx, ky in [(10, 2, 2), (200, 3, 5), (1000, 6, 10), (57, 4, 3)]:
        x = rng.integers(0, kx, size=n)
        y = (x + rng.integers(0, ky, size=n)) % ky  # dependent on x
        nats = mutual_info_score(x, y)
        assert_allclose(mutual_information_from_samples(x, y, base=np.e), nats, atol=atol)
        assert_allclose(mutual_information_from_samples(x, y), nats / np.log(2), atol=atol)
        counts = rng.integers(0, 20, size=(kx, ky))
        counts[0, 0] += 1
        assert_allclose(mutual_information(counts / counts.sum(), base=np.e),
                        mutual_info_score(None, None, contingency=counts), atol=atol)


def test_empirical_joint_against_scipy_crosstab():
    """Relative frequencies and labels equal scipy's contingency table divided by N, also for
    string labels and values that do not start at 0."""
    from scipy.stats.contingency import crosstab

    rng = np.random.default_rng(13)
    x = rng.choice(np.array(["a", "b", "zz"]), size=300)
    y = rng.integers(-3, 4, size=300)
    pxy, x_values, y_values = empirical_joint(x, y)
    (xs, ys), counts = crosstab(x, y)
    assert_array_equal(x_values, xs)
    assert_array_equal(y_values, ys)
    assert_array_equal(pxy, counts / 300)  # the same division
    assert pxy.dtype == np.float64


def test_mutual_information_of_independent_and_identical_variables():
    """p(x) p(y) has I = 0; a diagonal table (Y = X) has I(X; X) = H(X) and H(X | X) = 0.
    The 12 terms of the product table add up to at most 2 (H(X) + H(Y)) < 4 log 12 nats."""
    px, py = np.array([0.2, 0.3, 0.5]), np.array([0.1, 0.6, 0.05, 0.25])
    assert_allclose(mutual_information(np.outer(px, py)), 0.0, atol=_mi_atol(12, 4 * np.log(12)))
    assert_allclose(mutual_information(np.diag(px)), stats.entropy(px, base=2),
                    rtol=sum_rtol(3) + HAND)
    assert conditional_entropy(np.diag(px)) == 0.0


def test_mutual_information_of_tiny_probabilities_is_finite():
    """A cell of probability 5.6e-309 (hypothesis found it): p(x) p(y) underflows and
    p(y | x) / p(y) overflows, yet its term -p log p is about 4e-306 bits, so I(X; X) is still
    H(X) = 2 bits for four outcomes of 1/4 (within the rounding of the normalisation)."""
    w = np.array([1.0, 1.0, 1.0, 1.0, 2.2250738585072014e-308])
    p = w / w.sum()
    assert_allclose(mutual_information(np.diag(p)), 2.0, rtol=HAND)
    assert_allclose(mutual_information(np.outer(p, p)), 0.0, atol=_mi_atol(25, 4 * np.log(4)))


@settings(max_examples=100, deadline=None)
@given(tables)
def test_information_identities(table):
    """For any joint table: I >= 0 and H(Y | X) >= 0 exactly (sums of non-negative terms);
    H(Y | X) <= H(Y); I is symmetric; the chain rule H(X, Y) = H(X) + H(Y | X); and
    I = H(Y) - H(Y | X) = H(X) - H(X | Y) = H(X) + H(Y) - H(X, Y). Entropies are at most
    log2 25 < 5 bits, sums of at most 25 terms: 1e-12 absolute is hundreds of rounding errors."""
    pxy = table / table.sum()
    h_x, h_y = entropy(pxy.sum(axis=1)), entropy(pxy.sum(axis=0))
    h_xy, h_y_x, h_x_y = joint_entropy(pxy), conditional_entropy(pxy), conditional_entropy(pxy.T)
    info = mutual_information(pxy)
    assert info >= 0.0 and h_y_x >= 0.0
    assert h_y_x <= h_y + 1e-12
    assert_allclose(mutual_information(pxy.T), info, atol=1e-12)
    assert_allclose(h_xy, h_x + h_y_x, atol=1e-12)
    assert_allclose(info, h_y - h_y_x, atol=1e-12)
    assert_allclose(info, h_x - h_x_y, atol=1e-12)
    assert_allclose(info, h_x + h_y - h_xy, atol=1e-12)
    assert info <= min(h_x, h_y) + 1e-12


@settings(max_examples=60, deadline=None)
@given(weights)
def test_mutual_information_with_itself_is_the_entropy(w):
    p = _normalise(w)
    assert_allclose(mutual_information(np.diag(p)), entropy(p), atol=1e-12)


@pytest.mark.parametrize("func", [joint_entropy, conditional_entropy, mutual_information])
@pytest.mark.parametrize("bad, match", [
    ([[0.5, 0.6], [0.0, 0.0]], "sum to 1"),
    ([[0.5, 0.6], [-0.1, 0.0]], "negative"),
    ([[0.5, np.nan], [0.5, 0.0]], "NaN"),
    ([0.5, 0.5], "2-D"),
    (np.full((2, 2, 2), 0.125), "2-D"),
    (np.zeros((0, 3)), "at least one value"),
])
def test_joint_tables_are_validated(func, bad, match):
    with pytest.raises(ValueError, match=match) as err:
        func(bad)
    assert "pxy" in str(err.value)


def test_joint_functions_reject_bad_bases_and_strings():
    with pytest.raises(ValueError, match="base"):
        mutual_information(COVER_TABLE, base=1)
    with pytest.raises(TypeError, match="pxy"):
        joint_entropy("0.5 0.5")


def test_empirical_joint_rejects_unpaired_or_empty_samples():
    with pytest.raises(ValueError, match="x has 3 entries but y has 2"):
        empirical_joint([1, 2, 3], [1, 2])
    with pytest.raises(ValueError, match="x is empty"):
        mutual_information_from_samples([], [])
    with pytest.raises(ValueError, match="y must be 1-D"):
        empirical_joint([1, 2], [[1, 2]])


def test_plug_in_estimate_is_biased_upwards():
    """For independent X and Y with 4 values each and N = 1000, the plug-in estimate is
    about (K_x - 1)(K_y - 1) / (2 N ln 2) bits (its expected value to first order: 2 N ln 2
    times it is approximately chi-squared with 9 degrees of freedom). The mean of 300 draws
    has a relative standard deviation of sqrt(18)/9/sqrt(300) = 2.7 %; 10 % is 3.7 of them."""
    rng = np.random.default_rng(14)
    draws = [mutual_information_from_samples(rng.integers(0, 4, 1000), rng.integers(0, 4, 1000))
             for _ in range(300)]
    assert_allclose(np.mean(draws), 9 / (2 * 1000 * np.log(2)), rtol=0.1)


# ---------------------------------------------------------------- feature selection by MI


def test_quantile_bins_by_hand():
    """x = 0..9 in 5 bins: the cut points are the 20 %, 40 %, 60 %, 80 % quantiles 1.8, 3.6,
    5.4 and 7.2 (linear interpolation), so two values fall in each bin."""
    assert_array_equal(quantile_bins(np.arange(10.0), bins=5), [0, 0, 1, 1, 2, 2, 3, 3, 4, 4])
    assert_array_equal(quantile_bins([3.0, 1.0, 2.0], bins=1), [0, 0, 0])
    codes = quantile_bins(np.random.default_rng(15).normal(size=1000), bins=8)
    assert_array_equal(np.bincount(codes), np.full(8, 125))


def test_quantile_bins_match_scikit_learn():
    """scikit-learn's KBinsDiscretizer(strategy="quantile", encode="ordinal") on continuous
    data (no ties, so it drops no bin), with the same linear interpolation of quantiles."""
    from sklearn.preprocessing import KBinsDiscretizer

    rng = np.random.default_rng(16)
    x = rng.lognormal(size=437)
    for bins in (2, 5, 10):
        options = {"quantile_method": "linear"} if "quantile_method" in \
            KBinsDiscretizer().get_params() else {}
        disc = KBinsDiscretizer(n_bins=bins, encode="ordinal", strategy="quantile", **options)
        expected = disc.fit_transform(x[:, None])[:, 0]
        assert_array_equal(quantile_bins(x, bins), expected.astype(int))


def test_select_features_mi_matches_scikit_learn_on_breast_cancer():
    """The scores are scikit-learn's mutual_info_classif (natural logs, discrete features) of
    the features binned by KBinsDiscretizer, converted to bits; the selection is their top k.
    16 cells per feature, scikit-learn's terms up to log N^2 (N = 569): see _mi_atol."""
    from sklearn.feature_selection import mutual_info_classif
    from sklearn.preprocessing import KBinsDiscretizer

    data = datasets.load_breast_cancer()
    options = {"quantile_method": "linear"} if "quantile_method" in \
        KBinsDiscretizer().get_params() else {}
    binned = KBinsDiscretizer(n_bins=8, encode="ordinal", strategy="quantile",
                              **options).fit_transform(data.data)
    expected = mutual_info_classif(binned, data.target, discrete_features=True) / np.log(2)
    selected, scores = select_features_mi(data.data, data.target, k=5, bins=8)
    assert_allclose(scores, expected, atol=_mi_atol(16, 6 * np.log(569)))
    assert_array_equal(selected, np.argsort(-expected)[:5])
    assert selected.dtype == np.int64 and scores.shape == (30,)


def test_select_features_mi_finds_a_planted_feature():
    """A feature that is the label plus tiny noise has I = H(Y) = 1 bit (balanced labels) and
    ranks first; pure noise ranks last; a copy of a column ties with it and comes after it."""
    rng = np.random.default_rng(17)
    y = np.repeat([0, 1], 200)
    noise = rng.normal(size=400)
    X = np.column_stack([noise, y + 0.01 * rng.normal(size=400), noise])
    selected, scores = select_features_mi(X, y, k=3, bins=2)
    assert_allclose(scores[1], 1.0, rtol=HAND)
    assert selected[0] == 1 and list(selected[1:]) == [0, 2]
    assert scores[0] == scores[2]


@pytest.mark.parametrize("kwargs, error, match", [
    ({"k": 0}, ValueError, "k must be between 1"),
    ({"k": 4}, ValueError, "k must be between 1"),
    ({"k": 1.5}, TypeError, "k"),
    ({"k": 1, "bins": 0}, ValueError, "bins"),
])
def test_select_features_mi_rejects_bad_arguments(kwargs, error, match):
    X = np.arange(12.0).reshape(4, 3)
    with pytest.raises(error, match=match):
        select_features_mi(X, [0, 1, 0, 1], **kwargs)


def test_select_features_mi_rejects_mismatched_labels():
    with pytest.raises(ValueError, match="X has 4 rows but y has 3"):
        select_features_mi(np.ones((4, 2)), [0, 1, 0], k=1)
    with pytest.raises(ValueError, match="x must be 1-D"):
        quantile_bins(np.ones((3, 2)))


# -------------------------------------------------------------------------------- code lengths


def test_codelengths_by_hand():
    assert_array_equal(codelengths([1.0, 0.5, 0.25, 0.0]), [0.0, 1.0, 2.0, np.inf])
    assert codelengths(0.125) == 3.0


def test_codelengths_rejects_non_probabilities():
    with pytest.raises(ValueError, match="p"):
        codelengths([0.5, 1.5])
    with pytest.raises(ValueError, match="p"):
        codelengths([-0.1])


def test_kraft_sum_by_hand():
    """Lengths (1, 2, 3, 3): 1/2 + 1/4 + 1/8 + 1/8 = 1; (1, 2, 2, 3): 1.125 > 1."""
    assert kraft_sum([1, 2, 3, 3]) == 1.0
    assert kraft_sum([1, 2, 2, 3]) == 1.125
    assert kraft_sum([0]) == 1.0
    assert kraft_sum([1.5, np.inf]) == pytest.approx(2 ** -1.5)


@settings(max_examples=60, deadline=None)
@given(weights)
def test_ideal_lengths_have_kraft_sum_one(w):
    p = _normalise(w)
    assert kraft_sum(codelengths(p)) == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("bad", [[-1.0, 2.0], [np.nan], []])
def test_kraft_sum_rejects_bad_lengths(bad):
    with pytest.raises(ValueError, match="lengths"):
        kraft_sum(bad)


# ------------------------------------------------------------------------------- prefix-free


@pytest.mark.parametrize("words, expected", [
    (["0", "10", "110", "111"], True),
    (["0", "01"], False),
    (["10", "0", "1"], False),       # "1" is a prefix of "10"
    (["00", "01", "10", "11"], True),
    (["01", "01"], False),           # a repeated codeword
    ([""], True),                    # one symbol, nothing to send
    (["", "0"], False),
    (["1"], True),
])
def test_is_prefix_free_examples(words, expected):
    result = is_prefix_free(words)
    assert result is expected


@settings(max_examples=150, deadline=None)
@given(st.lists(st.text(alphabet="01", max_size=5), min_size=1, max_size=8))
def test_is_prefix_free_agrees_with_all_pairs(words):
    brute = not any(i != j and b.startswith(a) for i, a in enumerate(words)
                    for j, b in enumerate(words))
    assert is_prefix_free(words) is brute


def test_is_prefix_free_rejects_bad_input():
    with pytest.raises(TypeError, match="codewords"):
        is_prefix_free("0101")
    with pytest.raises(ValueError, match="empty"):
        is_prefix_free([])
    with pytest.raises(ValueError, match="'0' and '1'"):
        is_prefix_free(["01", "2"])
    with pytest.raises(TypeError, match="codewords"):
        is_prefix_free([0, 1])


# ---------------------------------------------------------------------------------- Huffman


def test_huffman_dyadic_example_reaches_the_entropy():
    """(1/2, 1/4, 1/8, 1/8): Huffman gives lengths (1, 2, 3, 3), expected length 1.75 = H."""
    L = huffman_code_lengths([0.5, 0.25, 0.125, 0.125])
    assert L.dtype == np.int64
    assert_array_equal(L, [1, 2, 3, 3])


@pytest.mark.parametrize("p, optimum", [
    # Cover & Thomas, Elements of Information Theory, example 5.6.1: 2.3 bits.
    ([0.25, 0.25, 0.2, 0.15, 0.15], 2.3),
    # Two different Huffman trees (lengths 1,2,3,4,4 or 2,2,2,3,3) both give 2.2 bits.
    ([0.4, 0.2, 0.2, 0.1, 0.1], 2.2),
    ([0.9, 0.05, 0.05], 1.1),
    ([1 / 3, 1 / 3, 1 / 3], 5 / 3),
])
def test_huffman_known_optimal_expected_lengths(p, optimum):
    L = huffman_code_lengths(p)
    assert_allclose(np.dot(p, L), optimum, rtol=1e-12)
    assert kraft_sum(L) <= 1.0


def test_huffman_single_symbol_and_zero_probabilities():
    """One symbol: length 0. Zero-probability symbols still get (finite) codewords, so every
    symbol is encodable; the code stays a valid prefix code."""
    assert_array_equal(huffman_code_lengths([1.0]), [0])
    L = huffman_code_lengths([0.0, 1.0, 0.0])
    assert L.shape == (3,) and np.all(L >= 1)
    assert kraft_sum(L) <= 1.0
    assert is_prefix_free(canonical_codewords(L))
    # With (1, 0) both symbols need one bit: expected length 1, the brute-force optimum.
    assert_allclose(np.dot([1.0, 0.0], huffman_code_lengths([1.0, 0.0])), 1.0)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=6).filter(lambda w: sum(w) > 1e-3))
def test_huffman_is_optimal_against_brute_force(w):
    p = _normalise(w)
    L = huffman_code_lengths(p)
    assert L.shape == p.shape and L.dtype == np.int64
    assert kraft_sum(L) <= 1.0 + 1e-12
    assert np.dot(p, L) == pytest.approx(_optimal_expected_length(p), abs=1e-9)


@settings(max_examples=80, deadline=None)
@given(positive_weights)
def test_huffman_expected_length_within_one_bit_of_entropy(w):
    """H(p) <= E[L] < H(p) + 1, and never worse than the Shannon code."""
    p = _normalise(w)
    L = huffman_code_lengths(p)
    h = entropy(p)
    assert h - 1e-12 <= np.dot(p, L) < h + 1
    assert np.dot(p, L) <= np.dot(p, shannon_code_lengths(p)) + 1e-12


def _huffman_by_lists(p):
    """An independent textbook Huffman: merge symbol groups by repeated sorting, O(K^2 log K)."""
    groups = [(w, [k]) for k, w in enumerate(p)]
    L = np.zeros(len(p), dtype=int)
    while len(groups) > 1:
        groups.sort(key=lambda g: g[0])
        (w1, s1), (w2, s2) = groups[0], groups[1]
        L[s1 + s2] += 1
        groups = groups[2:] + [(w1 + w2, s1 + s2)]
    return L


def test_huffman_matches_a_list_implementation_on_large_alphabets():
    rng = np.random.default_rng(5)
    for K in (7, 50, 300):
        p = rng.dirichlet(np.full(K, 0.5))
        assert_allclose(np.dot(p, huffman_code_lengths(p)), np.dot(p, _huffman_by_lists(p)),
                        rtol=1e-12)
    p = rng.dirichlet(np.ones(20_000))
    L = huffman_code_lengths(p)
    assert kraft_sum(L) == pytest.approx(1.0)  # a full binary tree
    assert entropy(p) <= np.dot(p, L) < entropy(p) + 1


def test_huffman_per_symbol_can_be_far_from_the_ideal_length():
    """Huffman bounds the expected length only: for (0.9, 0.05, 0.05) the rare symbols get 2
    bits although -log2 0.05 = 4.32, more than one bit off."""
    p = np.array([0.9, 0.05, 0.05])
    L = huffman_code_lengths(p)
    assert np.max(np.abs(L + np.log2(p))) > 1


def test_huffman_rejects_bad_input():
    with pytest.raises(ValueError, match="sum to 1"):
        huffman_code_lengths([0.5, 0.6])
    with pytest.raises(ValueError, match="1-D"):
        huffman_code_lengths([[0.5, 0.5]])


# ---------------------------------------------------------------------- Shannon and canonical


@settings(max_examples=80, deadline=None)
@given(positive_weights)
def test_shannon_code_is_within_one_bit_per_symbol(w):
    p = _normalise(w)
    L = shannon_code_lengths(p)
    slack = L + np.log2(p)
    assert np.all(slack >= -1e-12) and np.all(slack < 1)
    assert kraft_sum(L) <= 1.0 + 1e-12
    assert is_prefix_free(canonical_codewords(L))


def test_shannon_code_of_a_dyadic_distribution_is_exact():
    assert_array_equal(shannon_code_lengths([0.5, 0.25, 0.125, 0.125]), [1, 2, 3, 3])
    assert_array_equal(shannon_code_lengths([1.0]), [0])
    with pytest.raises(ValueError, match="zero"):
        shannon_code_lengths([0.5, 0.5, 0.0])


def test_canonical_codewords():
    assert canonical_codewords([1, 2, 3, 3]) == ["0", "10", "110", "111"]
    assert canonical_codewords([3, 1, 3, 2]) == ["110", "0", "111", "10"]
    assert canonical_codewords([0]) == [""]
    assert canonical_codewords([2, 2, 2]) == ["00", "01", "10"]   # Kraft sum 3/4 < 1
    with pytest.raises(ValueError, match="Kraft"):
        canonical_codewords([1, 2, 2, 3])
    with pytest.raises(ValueError, match="lengths"):
        canonical_codewords([1.5, 2])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 8), min_size=1, max_size=10))
def test_canonical_codewords_exist_exactly_under_kraft(lengths):
    if sum(Fraction(1, 2**ell) for ell in lengths) <= 1:
        words = canonical_codewords(lengths)
        assert [len(w) for w in words] == lengths
        assert is_prefix_free(words)
    else:
        with pytest.raises(ValueError, match="Kraft"):
            canonical_codewords(lengths)


def test_expected_codelength_ignores_impossible_symbols():
    assert expected_codelength([0.5, 0.5, 0.0], [1, 1, np.inf]) == 1.0
    assert_allclose(expected_codelength([0.5, 0.25, 0.125, 0.125], [1, 2, 3, 3]), 1.75)
    with pytest.raises(ValueError, match="shape"):
        expected_codelength([0.5, 0.5], [1, 1, 1])


# ------------------------------------------------------------------------- encode and decode


def test_prefix_code_round_trip():
    code = {"a": "0", "b": "10", "c": "110", "d": "111"}
    bits = prefix_encode("abacabad", code)
    assert bits == "0" "10" "0" "110" "0" "10" "0" "111"
    assert prefix_decode(bits, code) == list("abacabad")
    assert prefix_decode("", code) == []


def test_prefix_decode_errors():
    code = {"a": "0", "b": "10"}
    with pytest.raises(ValueError, match="middle"):
        prefix_decode("01", code)
    with pytest.raises(ValueError, match="starts no codeword"):
        prefix_decode("11", code)
    with pytest.raises(ValueError, match="prefix-free"):
        prefix_decode("0", {"a": "0", "b": "01"})
    with pytest.raises(ValueError, match="no codeword"):
        prefix_encode("abc", code)
    with pytest.raises(TypeError, match="bits"):
        prefix_decode(1010, code)


def test_single_symbol_code_sends_nothing():
    assert prefix_encode("aaa", {"a": ""}) == ""
    assert prefix_decode("", {"a": ""}) == []


# ------------------------------------------------------------------------- arithmetic coding


def test_arithmetic_round_trip_and_length_bound():
    """The codeword decodes to the message and has at most ceil(-log2 P) + 1 bits, with P the
    message's probability computed exactly with fractions."""
    rng = np.random.default_rng(6)
    counts = [5, 3, 1, 1]
    for n in (0, 1, 2, 10, 200):
        msg = rng.choice(4, size=n, p=np.array(counts) / 10)
        bits = arithmetic_encode(msg, counts)
        assert_array_equal(arithmetic_decode(bits, counts, n), msg)
        prob = math.prod((Fraction(counts[s], 10) for s in msg), start=Fraction(1))
        ideal = -math.log2(prob) if n else 0.0
        assert len(bits) <= math.ceil(ideal - 1e-12) + 1
        assert len(bits) >= ideal - 1e-9


def test_arithmetic_codewords_of_equal_length_messages_are_prefix_free():
    counts = [2, 1, 1]
    words = [arithmetic_encode(list(m), counts) for m in itertools.product(range(3), repeat=3)]
    assert len(set(words)) == 27
    assert not any(i != j and b.startswith(a) for i, a in enumerate(words)
                   for j, b in enumerate(words))


def test_arithmetic_single_symbol_model_sends_nothing():
    assert arithmetic_encode([0, 0, 0], [7]) == ""
    assert_array_equal(arithmetic_decode("", [7], 3), [0, 0, 0])


def test_arithmetic_rejects_bad_input():
    with pytest.raises(ValueError, match="counts"):
        arithmetic_encode([0, 1], [1, 0])
    with pytest.raises(ValueError, match="message"):
        arithmetic_encode([0, 3], [1, 1])
    with pytest.raises(TypeError, match="n_symbols"):
        arithmetic_decode("01", [1, 1], 2.0)


# ------------------------------------------------------------------------------- coin dice


def test_six_sided_die_from_a_coin_is_fair_and_resets_geometrically():
    """Each face has probability 1/6; a roll needs more than five resets with probability
    (1/4)^6 = 1/4096, and on average 1 + 2 * 4/3 = 11/3 flips."""
    rolls, resets, flips = simulate_die_with_coin(400_000, rng=np.random.default_rng(7))
    assert set(np.unique(rolls)) == {1, 2, 3, 4, 5, 6}
    counts = np.bincount(rolls, minlength=7)[1:]
    assert stats.chisquare(counts).pvalue > 1e-4
    n = len(rolls)
    p6 = 1 / 4096
    assert abs(np.mean(resets > 5) - p6) < 5 * np.sqrt(p6 * (1 - p6) / n)
    assert_allclose(np.mean(flips), 11 / 3, rtol=0.01)
    assert_array_equal(flips, 1 + 2 * (resets + 1))


def test_four_sided_die_from_two_flips():
    rolls, resets, flips = simulate_die_with_coin(40_000, sides=4, rng=np.random.default_rng(8))
    assert stats.chisquare(np.bincount(rolls, minlength=5)[1:]).pvalue > 1e-4
    assert np.all(resets == 0) and np.all(flips == 2)


def test_simulate_die_rejects_other_dice():
    with pytest.raises(ValueError, match="sides"):
        simulate_die_with_coin(10, sides=5)
    with pytest.raises(ValueError, match="n_rolls"):
        simulate_die_with_coin(-1)


# ------------------------------------------------------------------------------------- MDL


def _parabola(n=30, noise=0.3, seed=9):
    rng = np.random.default_rng(seed)
    x = np.sort(rng.uniform(-3, 3, size=n))
    return x, 1.0 - 0.5 * x + 0.8 * x**2 + rng.normal(0, noise, size=n)


def test_polynomial_fit_matches_numpy_polyfit():
    x, y = _parabola()
    for degree in (0, 1, 2, 5):
        f, sigma2 = polynomial_ml_fit(x, y, degree)
        fitted = np.polyval(np.polyfit(x, y, degree), x)
        assert_allclose(f(x), fitted, atol=1e-8)
        assert_allclose(sigma2, np.mean((y - fitted) ** 2), rtol=1e-8)


def test_two_part_codelength_by_hand_for_a_constant():
    """x = (0, 1, 2, 3), y = (0, 1, 0, 1), degree 0: the mean is 1/2, sigma2 = 1/4, k = 2, so
    the model costs (2/2) log2 4 = 2 bits and each y_i costs
    -log2(0.01) + (1/2) log2(2 pi / 4) + (1/4) / (2 (1/4) ln 2) bits."""
    per_point = -np.log2(0.01) + 0.5 * np.log2(2 * np.pi / 4) + 0.5 / np.log(2)
    model, data = two_part_code_terms([0, 1, 2, 3], [0, 1, 0, 1], 0)
    assert_allclose(model, 2.0, rtol=few_ops())
    assert_allclose(data, 4 * per_point, rtol=1e-12)
    assert_allclose(two_part_codelength([0, 1, 2, 3], [0, 1, 0, 1], 0), 2 + 4 * per_point,
                    rtol=1e-12)


def test_two_part_codelength_matches_scipy_densities():
    """(k/2) log2 N - sum_i log2(precision * N(y_i | polyfit, sigma2)) with scipy's density."""
    x, y = _parabola(n=25)
    for degree in (0, 1, 2, 4):
        for precision in (0.01, 0.5):
            fitted = np.polyval(np.polyfit(x, y, degree), x)
            s2 = np.mean((y - fitted) ** 2)
            expected = ((degree + 2) / 2 * np.log2(25)
                        - np.sum(np.log2(precision) + stats.norm.logpdf(y, fitted, np.sqrt(s2))
                                 / np.log(2)))
            assert_allclose(two_part_codelength(x, y, degree, precision), expected, rtol=1e-9)


def test_two_part_codelength_is_bic_in_bits():
    """L = BIC / (2 ln 2) + N log2(1/precision), with BIC = k ln N - 2 ln L_max."""
    x, y = _parabola(n=40)
    for degree in (1, 3):
        fitted = np.polyval(np.polyfit(x, y, degree), x)
        s2 = np.mean((y - fitted) ** 2)
        bic = (degree + 2) * np.log(40) - 2 * np.sum(stats.norm.logpdf(y, fitted, np.sqrt(s2)))
        assert_allclose(two_part_codelength(x, y, degree, 0.1),
                        bic / (2 * np.log(2)) + 40 * np.log2(10), rtol=1e-9)


def test_precision_shifts_every_degree_equally():
    x, y = _parabola()
    diff_fine = two_part_codelength(x, y, 3, 1e-4) - two_part_codelength(x, y, 1, 1e-4)
    diff_coarse = two_part_codelength(x, y, 3, 1.0) - two_part_codelength(x, y, 1, 1.0)
    assert_allclose(diff_fine, diff_coarse, rtol=1e-9)


def test_two_part_codelength_errors():
    with pytest.raises(ValueError, match="N > degree"):
        two_part_codelength([0, 1, 2], [1, 2, 0], 2)
    x = np.arange(6.0)
    for degree in (2, 3):
        with pytest.raises(ValueError, match="exactly"):
            two_part_codelength(x, x**2, degree)
    with pytest.raises(ValueError, match="exactly"):
        two_part_codelength([1, 2, 3], [2.0, 2.0, 2.0], 0)
    with pytest.raises(ValueError, match="precision"):
        two_part_codelength(x, np.sin(x), 1, precision=0)
    with pytest.raises(ValueError, match="entries"):
        two_part_codelength([0, 1, 2], [0, 1], 0)
    with pytest.raises(TypeError, match="degree"):
        two_part_codelength(x, np.sin(x), 1.5)


def test_select_degree_is_the_brute_force_minimum():
    for seed in range(5):
        x, y = _parabola(n=20 + 5 * seed, noise=0.5 + seed, seed=seed)
        lengths = [two_part_codelength(x, y, d) for d in range(11)]
        assert select_degree_mdl(x, y, 10) == int(np.argmin(lengths))


def test_select_degree_finds_the_parabola_and_the_line():
    x, y = _parabola(n=60)
    assert select_degree_mdl(x, y, 15) == 2
    rng = np.random.default_rng(10)
    assert select_degree_mdl(x, 2 - x + rng.normal(0, 0.3, size=60), 15) == 1


def test_select_degree_skips_degrees_above_n_minus_2_and_exact_fits():
    x = np.array([0.0, 1.0, 2.0, 3.0])
    y = np.array([0.3, -0.2, 0.9, 0.1])
    assert select_degree_mdl(x, y, 10) in (0, 1, 2)
    assert select_degree_mdl(x, y, 10) == int(np.argmin(
        [two_part_codelength(x, y, d) for d in range(3)]))
    assert select_degree_mdl(x, 1 + 2 * x, 5) == 1
    with pytest.raises(ValueError, match="at least 2"):
        select_degree_mdl([1.0], [2.0], 3)
