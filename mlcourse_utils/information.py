"""Information theory and minimum description length: codes, entropy, divergences, two-part codes.

Reference implementations for the chapter "Information theory and MDL". A probability
distribution p over K outcomes gives every outcome the ideal code length L(x) = -log2 p(x)
bits; entropy, cross-entropy and the Kullback-Leibler divergence are expected code lengths
and their differences. Codes with whole-bit codewords (Shannon, Huffman, arithmetic coding)
come within one bit of the ideal, and the minimum description length principle chooses the
model that gives the shortest two-part code: the model first, then the data with the model's
code.

Conventions: entropies are in bits unless ``base`` says otherwise; 0 log 0 = 0 (the limit of
t log t as t -> 0), and -p log q = inf when q = 0 < p. Code lengths are integers where a real
code is meant (Huffman, Shannon) and reals where ideal lengths are meant (``codelengths``).

See the chapter "Information theory and MDL".
"""

from __future__ import annotations

import heapq
import itertools
import numbers
import warnings
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
from numpy.polynomial import Chebyshev
from numpy.typing import ArrayLike, NDArray
from scipy.special import kl_div, xlogy

from ._validation import (
    FloatArray,
    as_1d_float_array,
    as_2d_float_array,
    as_float,
    as_float_array,
    as_labels,
    as_probability_vector,
)

__all__ = [
    "entropy",
    "cross_entropy",
    "kl_divergence",
    "joint_entropy",
    "conditional_entropy",
    "mutual_information",
    "empirical_joint",
    "mutual_information_from_samples",
    "quantile_bins",
    "select_features_mi",
    "codelengths",
    "kraft_sum",
    "is_prefix_free",
    "huffman_code_lengths",
    "shannon_code_lengths",
    "canonical_codewords",
    "expected_codelength",
    "prefix_encode",
    "prefix_decode",
    "arithmetic_encode",
    "arithmetic_decode",
    "simulate_die_with_coin",
    "polynomial_ml_fit",
    "two_part_code_terms",
    "two_part_codelength",
    "select_degree_mdl",
]


# ---------------------------------------------------------------------------------------------
# Input checks
# ---------------------------------------------------------------------------------------------


def _distribution(p, name):
    """One distribution (K,) or a stack of them (N, K), each summing to 1."""
    arr = as_probability_vector(p, name)
    if arr.ndim not in (1, 2):
        raise ValueError(
            f"{name} must be 1-D (one distribution) or 2-D (one distribution per row), "
            f"got shape {arr.shape}"
        )
    if arr.shape[-1] == 0:
        raise ValueError(f"{name} has no outcomes; a distribution needs at least one")
    return arr


def _log_base(base):
    b = as_float(base, "base", low=0.0, low_open=True)
    if b == 1.0:
        raise ValueError("base must be positive and different from 1, got 1")
    return float(np.log(b))


def _result(values):
    """A float for one distribution, an (N,) float64 array for a stack; -0.0 becomes 0.0."""
    values = np.asarray(values, dtype=np.float64) + 0.0
    return float(values) if values.ndim == 0 else values


def _pair(p, q):
    p = _distribution(p, "p")
    q = _distribution(q, "q")
    if p.shape != q.shape:
        raise ValueError(f"p has shape {p.shape} but q has shape {q.shape}; they must match")
    return p, q


def _codeword_list(codewords, name="codewords"):
    if isinstance(codewords, (str, bytes)):
        raise TypeError(f"{name} must be a list of '0'/'1' strings, got a single string")
    try:
        words = list(codewords)
    except TypeError:
        raise TypeError(
            f"{name} must be a list of '0'/'1' strings, got {type(codewords).__name__}"
        ) from None
    if not words:
        raise ValueError(f"{name} is empty; a code needs at least one codeword")
    for w in words:
        if not isinstance(w, str):
            raise TypeError(f"{name} must hold strings of '0' and '1', found {w!r}")
        if w.strip("01"):
            raise ValueError(f"{name} may contain only the characters '0' and '1', found {w!r}")
    return words


def _integer_lengths(lengths, name="lengths"):
    arr = as_float_array(lengths, name, ndim=1, min_size=1)
    if np.any(arr < 0) or np.any(arr != np.round(arr)):
        raise ValueError(f"{name} must be non-negative integers, got {arr.tolist()}")
    return [int(v) for v in arr]


def _bits(bits, name="bits"):
    if not isinstance(bits, str):
        raise TypeError(f"{name} must be a string of '0' and '1', got {type(bits).__name__}")
    if bits.strip("01"):
        raise ValueError(f"{name} may contain only the characters '0' and '1'")
    return bits


def _nonnegative_int(value, name):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be a non-negative integer, got {value!r}")
    if value < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {value}")
    return int(value)


# ---------------------------------------------------------------------------------------------
# Entropy, cross-entropy, Kullback-Leibler divergence
# ---------------------------------------------------------------------------------------------


def entropy(p: ArrayLike, base: float = 2) -> float | FloatArray:
    """Entropy H(p) = -sum_x p(x) log p(x), the expected ideal code length under p.

    In bits for ``base=2`` (nats for ``base=np.e``). Terms with p(x) = 0 contribute 0 (the
    convention 0 log 0 = 0, computed with ``scipy.special.xlogy``). 0 <= H(p) <= log K.

    Parameters
    ----------
    p : array_like, shape (K,) or (N, K)
        A distribution (non-negative, summing to 1), or one distribution per row.
    base : float
        Base of the logarithm, > 0 and != 1.

    Returns
    -------
    float, or ndarray of shape (N,) for 2-D input

    See the chapter "Information theory and MDL", section "Entropy".
    """
    p = _distribution(p, "p")
    return _result(-np.sum(xlogy(p, p), axis=-1) / _log_base(base))


def cross_entropy(p: ArrayLike, q: ArrayLike, base: float = 2) -> float | FloatArray:
    """Cross-entropy H(p, q) = -sum_x p(x) log q(x), in bits unless ``base`` says otherwise.

    It is the expected code length of the code built for q on data drawn from p.

    Terms with p(x) = 0 contribute 0; a term with q(x) = 0 < p(x) makes it inf (an outcome
    that the code for q cannot encode). H(p, q) >= H(p), with equality exactly when q = p
    (Gibbs' inequality).

    Parameters
    ----------
    p, q : array_like, shape (K,) or (N, K)
        Distributions of the same shape (row-wise for 2-D input).
    base : float

    Returns
    -------
    float, or ndarray of shape (N,) for 2-D input

    See the chapter "Information theory and MDL", section "Cross-entropy and Gibbs' inequality".
    """
    p, q = _pair(p, q)
    with np.errstate(divide="ignore"):
        return _result(-np.sum(xlogy(p, q), axis=-1) / _log_base(base))


def kl_divergence(p: ArrayLike, q: ArrayLike, base: float = 2) -> float | FloatArray:
    """Kullback-Leibler divergence KL(p || q) = sum_x p(x) log(p(x) / q(x)) = H(p, q) - H(p).

    The expected number of extra bits from coding data from p with the code for q. Terms with
    p(x) = 0 contribute 0; q(x) = 0 < p(x) gives inf. Computed term by term as
    p log(p/q) - p + q (``scipy.special.kl_div``): every term is >= 0, so the result is never
    negative through rounding, and the added -p + q terms sum to 0 for two distributions.
    It is not symmetric: KL(p || q) != KL(q || p) in general.

    Parameters
    ----------
    p, q : array_like, shape (K,) or (N, K)
    base : float

    Returns
    -------
    float, or ndarray of shape (N,) for 2-D input

    See the chapter "Information theory and MDL", section "The Kullback-Leibler divergence".
    """
    p, q = _pair(p, q)
    return _result(np.sum(kl_div(p, q), axis=-1) / _log_base(base))


# ---------------------------------------------------------------------------------------------
# Joint and conditional entropy, mutual information
# ---------------------------------------------------------------------------------------------


def _joint_table(pxy, name="pxy"):
    """A joint distribution p(x, y) as a (K_x, K_y) table: >= 0, finite, summing to 1."""
    arr = as_float_array(pxy, name)
    if arr.ndim != 2:
        raise ValueError(
            f"{name} must be a 2-D table p(x, y) (one row per value of x, one column per "
            f"value of y), got shape {arr.shape}"
        )
    if arr.size == 0:
        raise ValueError(f"{name} has shape {arr.shape}; each variable needs at least one value")
    if np.any(arr < 0):
        raise ValueError(f"{name} has negative entries; probabilities must be >= 0")
    total = float(arr.sum())
    if abs(total - 1.0) > 1e-9:
        raise ValueError(f"{name} must sum to 1 over all its cells, sums to {total!r}")
    return arr


def joint_entropy(pxy: ArrayLike, base: float = 2) -> float:
    """Joint entropy H(X, Y) = -sum_{x,y} p(x, y) log p(x, y) of a joint distribution table.

    The entropy of the pair (X, Y), read as one variable with K_x K_y values; 0 log 0 = 0.

    Parameters
    ----------
    pxy : array_like, shape (K_x, K_y)
        ``pxy[i, j] = p(X = x_i, Y = y_j)``: non-negative, summing to 1 over all cells.
    base : float
        Base of the logarithm (2: bits, ``np.e``: nats), > 0 and != 1.

    Returns
    -------
    float

    See the chapter "Information theory and MDL", section "Joint and conditional entropy".
    """
    pxy = _joint_table(pxy)
    return _result(-np.sum(xlogy(pxy, pxy)) / _log_base(base))


def conditional_entropy(pxy: ArrayLike, base: float = 2) -> float:
    """Conditional entropy H(Y | X) = -sum_{x,y} p(x, y) log p(y | x) of the column variable.

    The expected entropy of Y once X is known, sum_x p(x) H(Y | X = x), with
    p(y | x) = p(x, y) / p(x); rows with p(x) = 0 contribute nothing. It equals
    H(X, Y) - H(X) (the chain rule), but is summed term by term: each term is >= 0 because
    p(x, y) <= p(x), so the result is never negative through rounding, and no difference of
    two large entropies is taken. For H(X | Y) pass ``pxy.T``.

    Parameters
    ----------
    pxy : array_like, shape (K_x, K_y)
        ``pxy[i, j] = p(X = x_i, Y = y_j)``, rows indexed by the conditioning variable X.
    base : float

    Returns
    -------
    float
        0 <= H(Y | X) <= H(Y).

    See the chapter "Information theory and MDL", section "Joint and conditional entropy".
    """
    pxy = _joint_table(pxy)
    px = pxy.sum(axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        p_y_given_x = np.where(px > 0, pxy / px, 0.0)
    return _result(-np.sum(xlogy(pxy, p_y_given_x)) / _log_base(base))


def mutual_information(pxy: ArrayLike, base: float = 2) -> float:
    """Mutual information I(X; Y) = KL(p(x, y) || p(x) p(y)) of a joint distribution table.

    I(X; Y) = sum_{x,y} p(x, y) log(p(x, y) / (p(x) p(y))) = H(Y) - H(Y | X) = H(X) - H(X | Y):
    the bits about Y that knowing X saves, on average. It is symmetric, >= 0, and 0 exactly
    when X and Y are independent. Summed over the cells with p(x, y) > 0 (0 log 0 = 0) in
    logarithms, log p(x, y) - log p(x) - log p(y), so that no product p(x) p(y) or ratio of
    small probabilities can underflow or overflow. For independent variables rounding can leave
    a sum of order 1e-16 below zero; since I >= 0 exactly, such a sum is returned as 0.

    Parameters
    ----------
    pxy : array_like, shape (K_x, K_y)
        ``pxy[i, j] = p(X = x_i, Y = y_j)``: non-negative, summing to 1 over all cells.
    base : float

    Returns
    -------
    float
        0 <= I(X; Y) <= min(H(X), H(Y)).

    See the chapter "Information theory and MDL", section "Mutual information".
    """
    pxy = _joint_table(pxy)
    px, py = pxy.sum(axis=1), pxy.sum(axis=0)
    rows, cols = np.nonzero(pxy)
    p = pxy[rows, cols]
    total = np.sum(p * (np.log(p) - np.log(px[rows]) - np.log(py[cols])))
    return max(_result(total / _log_base(base)), 0.0)


def empirical_joint(
    x: ArrayLike, y: ArrayLike
) -> tuple[FloatArray, NDArray[Any], NDArray[Any]]:
    """The empirical joint distribution of paired samples: a table of relative frequencies.

    ``pxy[i, j]`` is the fraction of the N pairs (x_n, y_n) with x_n = x_values[i] and
    y_n = y_values[j], where ``x_values = np.unique(x)`` and ``y_values = np.unique(y)``
    (labels may be any sortable values: integers, strings, bin numbers). Counted in one
    ``np.bincount`` over the N pairs.

    Parameters
    ----------
    x, y : array_like, shape (N,)
        Paired discrete observations, N >= 1.

    Returns
    -------
    pxy : ndarray, shape (len(x_values), len(y_values))
        Sums to 1.
    x_values, y_values : ndarray
        The distinct values of x and of y, sorted: the row and column labels.

    See the chapter "Information theory and MDL", section "Mutual information".
    """
    _, x_values, ix = as_labels(x, "x")
    _, y_values, iy = as_labels(y, "y")
    if ix.size != iy.size:
        raise ValueError(f"x has {ix.size} entries but y has {iy.size}; they must be paired")
    shape = (x_values.size, y_values.size)
    counts = np.bincount(ix * shape[1] + iy, minlength=shape[0] * shape[1])
    return counts.reshape(shape) / ix.size, x_values, y_values


def mutual_information_from_samples(x: ArrayLike, y: ArrayLike, base: float = 2) -> float:
    """Plug-in estimate of I(X; Y) from paired discrete samples.

    The mutual information of the empirical joint distribution (:func:`empirical_joint`). It
    is biased upwards: for independent X and Y with K_x and K_y values it is about
    (K_x - 1)(K_y - 1) / (2 N ln 2) bits rather than 0, so compare it with the same estimate
    on shuffled pairs before reading a small value as dependence.

    Parameters
    ----------
    x, y : array_like, shape (N,)
        Paired discrete observations (integers, strings, bin numbers).
    base : float

    Returns
    -------
    float

    See the chapter "Information theory and MDL", section "Mutual information".
    """
    pxy, _, _ = empirical_joint(x, y)
    return mutual_information(pxy, base=base)


def quantile_bins(x: ArrayLike, bins: int = 10) -> NDArray[np.int64]:
    """Discretise a continuous variable into ``bins`` bins of (about) equal counts.

    The cut points are the quantiles j / bins, j = 1..bins-1, of x (``np.quantile``, linear
    interpolation); a value goes to the number of cut points <= it, so bins are closed on the
    left and the codes run from 0 to bins - 1. Repeated values stay in one bin, so a variable
    with few distinct values can leave bins empty. The same rule as scikit-learn's
    ``KBinsDiscretizer(strategy="quantile", encode="ordinal", quantile_method="linear")``
    (its newer default, "averaged_inverted_cdf", can put a value near a cut point in the next
    bin).

    Parameters
    ----------
    x : array_like, shape (N,)
        N >= 1, finite.
    bins : int
        >= 1.

    Returns
    -------
    ndarray of int64, shape (N,)

    See the chapter "Information theory and MDL", section "Feature selection by mutual
    information".
    """
    x = as_1d_float_array(x, "x", min_size=1)
    bins = _nonnegative_int(bins, "bins")
    if bins < 1:
        raise ValueError("bins must be at least 1")
    cuts = np.quantile(x, np.arange(1, bins) / bins)
    return np.searchsorted(cuts, x, side="right").astype(np.int64)


def select_features_mi(
    X: ArrayLike, y: ArrayLike, k: int, bins: int = 10, base: float = 2
) -> tuple[NDArray[np.int64], FloatArray]:
    """The k features with the largest mutual information with the labels.

    Each column of X is discretised into ``bins`` quantile bins (:func:`quantile_bins`) and
    scored by the plug-in I(X_d; Y) (:func:`mutual_information_from_samples`). The ranking
    looks at one feature at a time: two copies of the best feature both rank high, although
    the second adds nothing to the first.

    Parameters
    ----------
    X : array_like, shape (N, D)
        Continuous features.
    y : array_like, shape (N,)
        Class labels (any sortable values).
    k : int
        1 <= k <= D.
    bins : int
        Quantile bins per feature, >= 1.
    base : float

    Returns
    -------
    selected : ndarray of int64, shape (k,)
        Column indices, by decreasing score (ties: the lower index first).
    scores : ndarray, shape (D,)
        I(X_d; Y) of every feature, in column order.

    See the chapter "Information theory and MDL", section "Feature selection by mutual
    information".
    """
    X = as_2d_float_array(X, "X", min_rows=1)
    _, _, index = as_labels(y, "y", n_samples=X.shape[0])
    k = _nonnegative_int(k, "k")
    if not 1 <= k <= X.shape[1]:
        raise ValueError(f"k must be between 1 and the number of features {X.shape[1]}, got {k}")
    scores = np.array([mutual_information_from_samples(quantile_bins(col, bins), index, base)
                       for col in X.T])
    selected = np.argsort(-scores, kind="stable")[:k]
    return selected.astype(np.int64), scores


# ---------------------------------------------------------------------------------------------
# Codes
# ---------------------------------------------------------------------------------------------


def codelengths(p: ArrayLike) -> float | FloatArray:
    """Ideal code lengths L = -log2 p in bits, element-wise (inf for p = 0).

    Parameters
    ----------
    p : array_like
        Probabilities in [0, 1] (any shape; they need not sum to 1).

    Returns
    -------
    ndarray of the same shape (a float for a scalar input)

    See the chapter "Information theory and MDL", section "Code lengths are log-probabilities".
    """
    p = as_float_array(p, "p")
    if np.any((p < 0) | (p > 1)):
        raise ValueError("p must hold probabilities in [0, 1]")
    with np.errstate(divide="ignore"):
        return _result(-np.log2(p))


def kraft_sum(lengths: ArrayLike) -> float:
    """Kraft sum sum_x 2^(-L(x)) of a list of code lengths (real lengths and inf allowed).

    A prefix-free code with integer lengths L exists exactly when the sum is <= 1 (Kraft's
    inequality); ideal lengths -log2 p(x) of a distribution give exactly 1.

    Parameters
    ----------
    lengths : array_like, shape (K,)
        Non-negative lengths; inf (a symbol with no codeword) contributes 0.

    Returns
    -------
    float

    See the chapter "Information theory and MDL", section "Kraft's inequality".
    """
    lengths = as_float_array(lengths, "lengths", ndim=1, min_size=1, allow_nonfinite=True)
    if np.any(np.isnan(lengths)) or np.any(lengths < 0):
        raise ValueError("lengths must be non-negative numbers (inf allowed), without NaN")
    return float(np.sum(np.exp2(-lengths)))


def is_prefix_free(codewords: Sequence[str]) -> bool:
    """True when no codeword is a prefix of another (a repeated codeword is not prefix-free).

    After sorting the codewords lexicographically, a codeword that is a prefix of some other
    codeword is a prefix of the one right after it (everything sorted between a word and its
    extensions starts with that word), so comparing neighbours suffices: O(K log K) comparisons.

    Parameters
    ----------
    codewords : list of str
        A non-empty list of strings of '0' and '1' (the empty string is the codeword of
        length 0, prefix-free only when it is the only codeword).

    Returns
    -------
    bool

    See the chapter "Information theory and MDL", section "Prefix-free codes".
    """
    words = sorted(_codeword_list(codewords))
    return not any(b.startswith(a) for a, b in itertools.pairwise(words))


def huffman_code_lengths(p: ArrayLike) -> NDArray[np.int64]:
    """Codeword lengths of a Huffman code for p: an optimal prefix-free code.

    Huffman's algorithm: keep the subtrees in a min-heap by probability; repeatedly merge the
    two least probable into one whose probability is their sum, until one tree is left. A
    symbol's code length is the depth of its leaf. With a heap this is O(K log K). The
    expected length sum_x p(x) L(x) is the smallest of all prefix-free codes; it lies in
    [H(p), H(p) + 1). When probabilities tie, other optimal trees exist and the lengths are
    not unique: only the expected length is.

    Parameters
    ----------
    p : array_like, shape (K,)
        A distribution. A single symbol gets length 0 (nothing needs to be sent);
        zero-probability symbols still get a codeword.

    Returns
    -------
    ndarray of int64, shape (K,)

    See the chapter "Information theory and MDL", section "Huffman codes".
    """
    p = _distribution(p, "p")
    if p.ndim != 1:
        raise ValueError(f"p must be 1-D, got shape {p.shape}")
    K = p.size
    if K == 1:
        return np.zeros(1, dtype=np.int64)
    # Nodes 0..K-1 are the leaves, K..2K-2 the merged subtrees (2K-2 is the root). A merged
    # node always gets a larger number than its children, so the depths can be filled in
    # from the root downwards in decreasing node order.
    parent = np.zeros(2 * K - 1, dtype=np.int64)
    heap = [(float(weight), node) for node, weight in enumerate(p)]
    heapq.heapify(heap)
    for new in range(K, 2 * K - 1):
        w1, a = heapq.heappop(heap)
        w2, b = heapq.heappop(heap)
        parent[a] = parent[b] = new
        heapq.heappush(heap, (w1 + w2, new))
    depth = np.zeros(2 * K - 1, dtype=np.int64)
    for node in range(2 * K - 3, -1, -1):
        depth[node] = depth[parent[node]] + 1
    return depth[:K]


def shannon_code_lengths(p: ArrayLike) -> NDArray[np.int64]:
    """Shannon code lengths L(x) = ceil(-log2 p(x)) for a distribution without zeros.

    They satisfy Kraft's inequality (sum 2^-L <= sum p = 1), so a prefix code with these
    lengths exists, and for every symbol 0 <= L(x) + log2 p(x) < 1: each codeword is at most
    one bit longer than the ideal, and the expected length is in [H(p), H(p) + 1).

    Parameters
    ----------
    p : array_like, shape (K,)
        A distribution with every p(x) > 0 (drop zero-probability symbols first).

    Returns
    -------
    ndarray of int64, shape (K,)

    See the chapter "Information theory and MDL", section "Shannon codes".
    """
    p = _distribution(p, "p")
    if p.ndim != 1:
        raise ValueError(f"p must be 1-D, got shape {p.shape}")
    if np.any(p == 0):
        raise ValueError("p has zero probabilities; a Shannon code has no codeword for them: "
                         "drop those symbols first")
    return np.ceil(-np.log2(p)).astype(np.int64)


def canonical_codewords(lengths: ArrayLike) -> list[str]:
    """Codewords of a prefix-free code with the given integer lengths (a canonical code).

    Symbols are taken in order of increasing length (ties by position); each codeword is the
    previous one plus one, shifted left when the length grows. This succeeds exactly when the
    lengths satisfy Kraft's inequality, which is checked in exact integer arithmetic.

    Parameters
    ----------
    lengths : array_like of int, shape (K,)

    Returns
    -------
    list of str
        The codeword of each symbol, in the input order.

    See the chapter "Information theory and MDL", section "Kraft's inequality".
    """
    lengths = _integer_lengths(lengths)
    top = max(lengths)
    total = sum(1 << (top - ell) for ell in lengths)
    if total > 1 << top:
        raise ValueError(
            f"lengths violate Kraft's inequality (sum of 2^-L is {total / 2**top:g} > 1): "
            "no prefix-free code has them"
        )
    order = sorted(range(len(lengths)), key=lambda k: (lengths[k], k))
    words = [""] * len(lengths)
    code, previous = 0, lengths[order[0]]
    for k in order:
        code <<= lengths[k] - previous
        previous = lengths[k]
        words[k] = format(code, f"0{previous}b") if previous else ""
        code += 1
    return words


def expected_codelength(p: ArrayLike, lengths: ArrayLike) -> float:
    """Expected code length sum_x p(x) L(x), with 0 * L = 0 (also when L is inf).

    Parameters
    ----------
    p : array_like, shape (K,)
        A distribution.
    lengths : array_like, shape (K,)
        Non-negative code lengths (inf allowed for zero-probability symbols).

    Returns
    -------
    float

    See the chapter "Information theory and MDL", section "Entropy".
    """
    p = _distribution(p, "p")
    lengths = as_float_array(lengths, "lengths", allow_nonfinite=True)
    if lengths.shape != p.shape:
        raise ValueError(f"p has shape {p.shape} but lengths has shape {lengths.shape}")
    if np.any(np.isnan(lengths)) or np.any(lengths < 0):
        raise ValueError("lengths must be non-negative numbers (inf allowed), without NaN")
    with np.errstate(invalid="ignore"):
        terms = np.where(p > 0, p * lengths, 0.0)
    return float(np.sum(terms))


def prefix_encode(symbols: Iterable[Hashable], codebook: Mapping[Hashable, str]) -> str:
    """Concatenate the codewords of ``symbols``: no separators are needed for a prefix-free code.

    Parameters
    ----------
    symbols : iterable
        Symbols, each a key of ``codebook``.
    codebook : dict
        Symbol -> codeword ('0'/'1' string), prefix-free.

    Returns
    -------
    str

    See the chapter "Information theory and MDL", section "Prefix-free codes".
    """
    _check_codebook(codebook)
    out = []
    for s in symbols:
        if s not in codebook:
            raise ValueError(f"symbol {s!r} has no codeword in codebook")
        out.append(codebook[s])
    return "".join(out)


def prefix_decode(bits: str, codebook: Mapping[Hashable, str]) -> list[Hashable]:
    """Split a concatenation of codewords back into symbols.

    Read bits until they form a codeword, emit its symbol, start again. Because no codeword
    is a prefix of another, the first match is the only possible one: decoding is
    instantaneous and unambiguous.

    Parameters
    ----------
    bits : str
        A string of '0' and '1'.
    codebook : dict
        Symbol -> codeword, prefix-free.

    Returns
    -------
    list
        The decoded symbols.

    See the chapter "Information theory and MDL", section "Prefix-free codes".
    """
    bits = _bits(bits)
    _check_codebook(codebook)
    inverse = {w: s for s, w in codebook.items()}
    if "" in inverse:
        if bits:
            raise ValueError("the code has one codeword of length 0: bits must be empty")
        return []
    longest = max(len(w) for w in inverse)
    out, current = [], ""
    for bit in bits:
        current += bit
        if current in inverse:
            out.append(inverse[current])
            current = ""
        elif len(current) >= longest:
            raise ValueError(f"bits contain {current!r}, which starts no codeword")
    if current:
        raise ValueError(f"bits end in the middle of a codeword (left over: {current!r})")
    return out


def _check_codebook(codebook):
    if not isinstance(codebook, dict):
        raise TypeError(
            f"codebook must be a dict symbol -> codeword, got {type(codebook).__name__}"
        )
    words = _codeword_list(list(codebook.values()), "codebook's codewords")
    if not is_prefix_free(words):
        raise ValueError("codebook is not prefix-free: a codeword is a prefix of another")


# ---------------------------------------------------------------------------------------------
# Arithmetic coding (exact integer arithmetic)
# ---------------------------------------------------------------------------------------------


def _counts(counts):
    arr = as_float_array(counts, "counts", ndim=1, min_size=1)
    if np.any(arr <= 0) or np.any(arr != np.round(arr)):
        raise ValueError("counts must be positive integers (the model is p_k = counts_k / total)")
    counts = [int(c) for c in arr]
    cumulative = [0]
    for c in counts:
        cumulative.append(cumulative[-1] + c)
    return counts, cumulative


def _message(message, K):
    arr = np.asarray(message)
    if arr.ndim != 1 or not (arr.size == 0 or np.issubdtype(arr.dtype, np.integer)):
        raise ValueError("message must be a 1-D sequence of integer symbol indices")
    if arr.size and (arr.min() < 0 or arr.max() >= K):
        raise ValueError(f"message holds symbol indices outside 0..{K - 1}")
    return [int(s) for s in arr]


def arithmetic_encode(message: Sequence[int], counts: ArrayLike) -> str:
    """Arithmetic code of a whole message under the i.i.d. model p_k = counts_k / sum(counts).

    The message x_1..x_n picks out the interval [low, low + P) of width
    P = p(x_1) ... p(x_n) by repeatedly cutting the current interval in proportion to the
    probabilities. The codeword is the shortest bit string b whose dyadic interval
    [0.b, 0.b + 2^-len(b)) lies inside it: at most ceil(-log2 P) + 1 bits, so fewer than
    -log2 P + 2. The intervals of different messages of the same length are disjoint, so the
    codewords form a prefix-free code for them. All arithmetic is on exact Python integers
    (no rounding); the loop over symbols is inherently sequential.

    Parameters
    ----------
    message : sequence of int
        Symbol indices in 0..K-1.
    counts : array_like of int, shape (K,)
        Positive integer counts defining the model.

    Returns
    -------
    str
        The codeword, a string of '0' and '1'.

    See the chapter "Information theory and MDL", section "Arithmetic coding".
    """
    counts, cumulative = _counts(counts)
    message = _message(message, len(counts))
    total = cumulative[-1]
    low, width, denom = 0, 1, 1  # the interval [low / denom, (low + width) / denom)
    for s in message:
        low = low * total + width * cumulative[s]
        width *= counts[s]
        denom *= total
    # Every valid length k has 2^-k <= P, i.e. k > bits(denom) - bits(width) - 1.
    k = max(0, denom.bit_length() - width.bit_length() - 1)
    while True:
        m = -((-low << k) // denom)  # ceil(low * 2^k / denom)
        if (m + 1) * denom <= (low + width) << k:
            return format(m, f"0{k}b") if k else ""
        k += 1


def arithmetic_decode(bits: str, counts: ArrayLike, n_symbols: int) -> NDArray[np.int64]:
    """Decode ``n_symbols`` symbols from an arithmetic codeword made by :func:`arithmetic_encode`.

    The number 0.b (the codeword read as a binary fraction) lies in the interval of the
    message; the decoder repeats the encoder's interval cutting and at each step picks the
    sub-interval that contains it.

    Parameters
    ----------
    bits : str
    counts : array_like of int, shape (K,)
        The same counts as used for encoding.
    n_symbols : int
        The message length (agreed beforehand, like the model).

    Returns
    -------
    ndarray of int64, shape (n_symbols,)

    See the chapter "Information theory and MDL", section "Arithmetic coding".
    """
    bits = _bits(bits)
    counts, cumulative = _counts(counts)
    n_symbols = _nonnegative_int(n_symbols, "n_symbols")
    total = cumulative[-1]
    k = len(bits)
    value = int(bits, 2) if bits else 0  # the point value / 2^k
    low, width, denom = 0, 1, 1
    out = np.empty(n_symbols, dtype=np.int64)
    for i in range(n_symbols):
        # position of the point inside the current interval, scaled to 0..total
        target = ((value * denom - (low << k)) * total) // (width << k)
        if not 0 <= target < total:
            raise ValueError("bits are not an arithmetic codeword of this model and length")
        s = int(np.searchsorted(cumulative, target, side="right")) - 1
        out[i] = s
        low = low * total + width * cumulative[s]
        width *= counts[s]
        denom *= total
    return out


# ---------------------------------------------------------------------------------------------
# Coin flips simulating dice
# ---------------------------------------------------------------------------------------------


def simulate_die_with_coin(
    n_rolls: int, sides: int = 6, rng: np.random.Generator | None = None
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """Roll a fair die with a fair coin: the tree codes of the chapter's first section.

    A 4-sided die uses two flips (HH, HT, TH, TT give 1, 2, 3, 4). A 6-sided die uses one flip
    to choose between {1, 2, 3} (H) and {4, 5, 6} (T), then pairs of flips: HH, HT, TH pick the
    first, second or third number and TT is a reset: flip the pair again. Each pair resets
    with probability 1/4, independently, so a roll needs more than r resets with probability
    (1/4)^(r+1). Vectorised over rolls; the loop runs over rounds of resets (about
    log4(n_rolls) of them).

    Parameters
    ----------
    n_rolls : int
    sides : {4, 6}
    rng : numpy.random.Generator, optional

    Returns
    -------
    rolls : ndarray of int64, shape (n_rolls,)
        Values 1..sides.
    resets : ndarray of int64, shape (n_rolls,)
        Number of TT resets of each roll (always 0 for the 4-sided die).
    flips : ndarray of int64, shape (n_rolls,)
        Number of coin flips each roll used.

    See the chapter "Information theory and MDL", section "Coin flips that simulate dice".
    """
    n_rolls = _nonnegative_int(n_rolls, "n_rolls")
    if sides not in (4, 6) or isinstance(sides, bool):
        raise ValueError(f"sides must be 4 or 6, got {sides!r}")
    rng = np.random.default_rng() if rng is None else rng
    if sides == 4:
        pair = rng.integers(0, 2, size=(n_rolls, 2))  # 0 = heads, 1 = tails
        rolls = 2 * pair[:, 0] + pair[:, 1] + 1
        return (rolls.astype(np.int64), np.zeros(n_rolls, dtype=np.int64),
                np.full(n_rolls, 2, dtype=np.int64))
    half = rng.integers(0, 2, size=n_rolls)
    resets = np.zeros(n_rolls, dtype=np.int64)
    choice = np.full(n_rolls, 3, dtype=np.int64)
    active = np.arange(n_rolls)
    while active.size:
        pair = rng.integers(0, 2, size=(active.size, 2))
        value = 2 * pair[:, 0] + pair[:, 1]  # HH=0, HT=1, TH=2, TT=3 (reset)
        choice[active] = value
        done = value < 3
        resets[active[~done]] += 1
        active = active[~done]
    rolls = 3 * half + choice + 1
    return rolls.astype(np.int64), resets, 1 + 2 * (resets + 1)


# ---------------------------------------------------------------------------------------------
# Minimum description length: two-part codes for polynomial regression
# ---------------------------------------------------------------------------------------------


def _regression_xy(x, y):
    x = as_1d_float_array(x, "x", min_size=1)
    y = as_1d_float_array(y, "y", min_size=1)
    if x.shape != y.shape:
        raise ValueError(f"x has {x.size} entries but y has {y.size}")
    return x, y


def polynomial_ml_fit(x: ArrayLike, y: ArrayLike, degree: int) -> tuple[Chebyshev, float]:
    """Polynomial regression by maximum likelihood under Gaussian noise.

    y_i = f(x_i) + eps_i with f a polynomial of the given degree and eps_i ~ N(0, sigma2).
    The ML polynomial is the least-squares fit, here computed in the Chebyshev basis on x
    mapped to [-1, 1] (``numpy.polynomial.Chebyshev.fit``), which stays well conditioned up
    to high degrees where the monomial Vandermonde matrix does not; sigma2 is the mean
    squared residual (divides by N).

    Parameters
    ----------
    x, y : array_like, shape (N,)
    degree : int
        >= 0.

    Returns
    -------
    f : numpy.polynomial.Chebyshev
        The fitted polynomial (callable: ``f(x_new)``).
    sigma2 : float

    See the chapter "Information theory and MDL", section "Two-part codes".
    """
    x, y = _regression_xy(x, y)
    degree = _nonnegative_int(degree, "degree")
    with warnings.catch_warnings():  # fewer distinct x than coefficients: a rank warning
        warnings.simplefilter("ignore", np.exceptions.RankWarning)
        f = np.polynomial.Chebyshev.fit(x, y, degree)
    return f, float(np.mean((y - f(x)) ** 2))


def two_part_code_terms(
    x: ArrayLike, y: ArrayLike, degree: int, precision: float = 0.01
) -> tuple[float, float]:
    """The two parts of the two-part code of y given x: ``(model_bits, data_bits)``.

    model_bits = (k/2) log2 N for the k = degree + 2 parameters (degree + 1 coefficients and
    the noise variance), each sent to a precision of order 1/sqrt(N).
    data_bits = sum_i -log2(precision * N(y_i | f(x_i), sigma2)) with f and sigma2 the
    maximum-likelihood fit: the bits to send each y_i discretised to ``precision`` with the
    code of the fitted Gaussian. With sigma2 the mean squared residual this is
    N log2(1/precision) + (N/2) log2(2 pi e sigma2).

    Raises ``ValueError`` when N <= degree + 1 (no residual is left to estimate sigma2) or the
    fit is exact (sigma2 = 0 up to rounding: sigma2 <= 1e-20 mean(y^2)), where the code length
    is unbounded below.

    Parameters
    ----------
    x, y : array_like, shape (N,)
    degree : int
    precision : float
        > 0, the resolution to which the y_i are sent.

    Returns
    -------
    model_bits, data_bits : float

    See the chapter "Information theory and MDL", section "Two-part codes".
    """
    x, y = _regression_xy(x, y)
    degree = _nonnegative_int(degree, "degree")
    precision = as_float(precision, "precision", low=0.0, low_open=True)
    n = x.size
    if n <= degree + 1:
        raise ValueError(
            f"a polynomial of degree {degree} needs N > degree + 1 = {degree + 1} points "
            f"(one more than its coefficients, to estimate the noise variance); got N = {n}"
        )
    f, sigma2 = polynomial_ml_fit(x, y, degree)
    if sigma2 <= 1e-20 * np.mean(y**2):
        raise ValueError(
            f"the degree-{degree} polynomial fits y exactly (sigma2 = 0): the code length "
            "of the data is unbounded below"
        )
    k = degree + 2
    model_bits = 0.5 * k * np.log2(n)
    r2 = (y - f(x)) ** 2
    data_bits = np.sum(-np.log2(precision) + 0.5 * np.log2(2.0 * np.pi * sigma2)
                       + r2 / (2.0 * sigma2 * np.log(2.0)))
    return float(model_bits), float(data_bits)


def two_part_codelength(x: ArrayLike, y: ArrayLike, degree: int, precision: float = 0.01) -> float:
    """Total bits of the two-part code of y given x with a polynomial of the given degree.

    L = (k/2) log2 N + sum_i -log2(precision * N(y_i | f(x_i), sigma2)), with
    k = degree + 2 parameters (coefficients and noise variance) and f, sigma2 fitted by
    maximum likelihood. The same as BIC / (2 ln 2) up to the term N log2(1/precision), which
    is the same for every degree. See :func:`two_part_code_terms` for the two parts and the
    ``ValueError`` cases (N <= degree + 1, an exact fit).

    Parameters
    ----------
    x, y : array_like, shape (N,)
    degree : int
    precision : float

    Returns
    -------
    float

    See the chapter "Information theory and MDL", section "Two-part codes".
    """
    model_bits, data_bits = two_part_code_terms(x, y, degree, precision)
    return model_bits + data_bits


def select_degree_mdl(x: ArrayLike, y: ArrayLike, max_degree: int, precision: float = 0.01) -> int:
    """The polynomial degree in 0..max_degree with the shortest two-part code.

    Degrees above N - 2 are not considered (they leave no residual to estimate the noise).
    Ties go to the lowest degree. If some degree fits the data exactly, its code length is
    unbounded below and the lowest such degree is returned.

    Parameters
    ----------
    x, y : array_like, shape (N,)
        N >= 2.
    max_degree : int
    precision : float

    Returns
    -------
    int

    See the chapter "Information theory and MDL", section "Two-part codes".
    """
    x, y = _regression_xy(x, y)
    max_degree = _nonnegative_int(max_degree, "max_degree")
    as_float(precision, "precision", low=0.0, low_open=True)
    if x.size < 2:
        raise ValueError(f"MDL needs at least 2 points (a constant and a variance), got {x.size}")
    best, best_bits = 0, np.inf
    for degree in range(min(max_degree, x.size - 2) + 1):
        try:
            bits = two_part_codelength(x, y, degree, precision)
        except ValueError:  # an exact fit (N > degree + 1 holds here): unbounded below
            return degree
        if bits < best_bits:
            best, best_bits = degree, bits
    return best
