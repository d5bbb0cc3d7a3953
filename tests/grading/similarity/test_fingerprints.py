"""Answer code as normalised tokens and winnowed fingerprints (grading/similarity/fingerprints.py).

The normalisation tests were the first part of test_pairs.py (moved unchanged).
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mlcourse_utils.grading.similarity.fingerprints import (
    MAX_TOKENS,
    WINDOW,
    K,
    kgram_hashes,
    normalise,
    winnow,
)

# ---------------------------------------------------------------- normalisation

ORIGINAL = '''\
import numpy as np

def _centre(X):
    return X - X.mean(axis=0)

def covariance(X, ddof=0):
    """Covariance of the rows of X."""
    X = np.asarray(X, dtype=float)
    n = X.shape[0]
    centred = _centre(X)
    return centred.T @ centred / (n - ddof)
'''

SAME_CODE = {
    "renamed": '''\
import numpy as np

def _shift(data):
    return data - data.mean(axis=0)

def covariance(data, correction=0):
    """Covariance of the rows of X."""
    data = np.asarray(data, dtype=float)
    rows = data.shape[0]
    dev = _shift(data)
    return dev.T @ dev / (rows - correction)
''',
    "reformatted": '''\
import numpy as np
def _centre( X ):
    return (X -
            X.mean(axis = 0))
def covariance(X, ddof = 0):
    """Covariance of the rows of X."""
    X = np.asarray(X, dtype = float); n = X.shape[0]
    centred = (_centre(X))
    return ((centred.T @ centred) / (n - ddof))
''',
    "comments_and_docstrings": '''\
import numpy as np

def _centre(X):
    """Subtract the column means."""
    return X - X.mean(axis=0)  # broadcasting

def covariance(X, ddof=0):
    # My own implementation, honestly.
    X = np.asarray(X, dtype=float)
    n = X.shape[0]    # number of samples
    centred = _centre(X)
    pass
    return centred.T @ centred / (n - ddof)
''',
    "reordered": '''\
def covariance(X, ddof=0):
    """Covariance of the rows of X."""
    X = np.asarray(X, dtype=float)
    centred = _centre(X)
    n = X.shape[0]
    return centred.T @ centred / (n - ddof)

import numpy as np

def _centre(X):
    return X - X.mean(axis=0)
''',
    "import_alias": '''\
import numpy

def _centre(X):
    return X - X.mean(axis=0)

def covariance(X, ddof=0):
    X = numpy.asarray(X, dtype=float)
    n = X.shape[0]
    centred = _centre(X)
    return centred.T @ centred / (n - ddof)
''',
}


@pytest.mark.parametrize("variant", sorted(SAME_CODE))
def test_names_formatting_comments_and_order_do_not_change_the_tokens(variant):
    original, changed = normalise(ORIGINAL), normalise(SAME_CODE[variant])
    assert original.parsed and changed.parsed
    assert changed.tokens == original.tokens
    assert changed.fingerprints == original.fingerprints


def test_different_code_gives_different_tokens():
    """Changing an operation, a constant, a call or the order of dependent statements shows."""
    base = "def f(x):\n    a = np.log(x)\n    b = a * 2\n    return b\n"
    changed = ["def f(x):\n    a = np.log(x)\n    b = a + 2\n    return b\n",
               "def f(x):\n    a = np.log(x)\n    b = a * 3\n    return b\n",
               "def f(x):\n    a = np.exp(x)\n    b = a * 2\n    return b\n",
               "def f(x):\n    b = a * 2\n    a = np.log(x)\n    return b\n"]
    for source in changed:
        assert normalise(source).tokens != normalise(base).tokens, source


def test_imported_names_become_the_module_path():
    """np.linalg.solve, numpy.linalg.solve and `from numpy.linalg import solve` are one call."""
    spellings = ["def f(A, b):\n    return np.linalg.solve(A, b)\n",
                 "import numpy\ndef f(A, b):\n    return numpy.linalg.solve(A, b)\n",
                 "from numpy.linalg import solve\ndef f(A, b):\n    return solve(A, b)\n",
                 "from numpy import linalg as la\ndef f(A, b):\n    return la.solve(A, b)\n"]
    calls = [[t for t in normalise(s).tokens if "solve" in t and not t.startswith("import:")]
             for s in spellings]
    assert all(c == ["numpy.linalg.solve"] for c in calls), calls


def test_lines_of_tokens_point_into_the_shown_text():
    code = normalise("def f(x):\r\n    '''doc'''\r\n\r\n    return x + 1\r\n")
    shown = code.text.split("\n")
    ret = code.tokens.index("Return")
    assert shown[code.lines[ret] - 1].strip() == "return x + 1"


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from("abcdefgh"), max_size=40),
       st.lists(st.sampled_from("abcdefgh"), max_size=40),
       st.lists(st.sampled_from("abcdefgh"), min_size=K + WINDOW - 1, max_size=30))
def test_a_shared_run_of_k_plus_window_minus_one_tokens_shares_a_fingerprint(left, right, common):
    """The winnowing guarantee (Schleimer, Wilkerson and Aiken 2003): every window of WINDOW
    k-gram hashes contributes its minimum, and a run of K + WINDOW - 1 tokens holds a whole
    window, so two texts sharing such a run share a fingerprint."""
    a = left + common + right
    b = right + common + left
    assert set(winnow(kgram_hashes(a))) & set(winnow(kgram_hashes(b)))


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=400))
def test_any_text_is_normalised_without_an_exception(text):
    code = normalise(text)
    assert len(code.tokens) == len(code.lines) <= MAX_TOKENS
    assert all(1 <= line <= code.text.count("\n") + 1 for line in code.lines)


@pytest.mark.parametrize("source", [
    "x = " + "-" * 50_000 + "1",                  # deeper than the parser allows
    "x = " + "(" * 300 + "1" + ")" * 300,
    "def f(x):\n" + "    y = x + 1\n" * 20_000,  # a huge but valid cell
    "def f(x):\n" + "    # padding\n" * 50_000 + "    return x\n",
    "def f(x):\n    return x\x00\n",               # a NUL byte
    "def f(x):\n    return '\udcff' + x\n",        # a lone surrogate
    "def f(x:\n    return '''unterminated\n",
    "'" * 20_001,
])
def test_hostile_answers_are_compared_as_far_as_possible(source):
    code = normalise(source)
    assert len(code.tokens) <= MAX_TOKENS
    assert len(code.text) <= len(source)


def test_padding_with_comments_is_removed_before_the_size_limit():
    padded = "def f(x):\n" + "    # padding\n" * 50_000 + "    return x + 1\n"
    code, plain = normalise(padded), normalise("def f(x):\n    return x + 1\n")
    assert code.tokens == plain.tokens and not code.note


# ---------------------------------------------------------------- hashing and winnowing

def _winnow_by_definition(hashes, window):
    """Of every window, the position of its rightmost minimum; each position recorded once."""
    if not hashes:
        return []
    positions = []
    for start in range(max(1, len(hashes) - window + 1)):
        part = hashes[start:start + window]
        pos = start + max(i for i, h in enumerate(part) if h == min(part))
        if not positions or positions[-1] != pos:
            positions.append(pos)
    return [hashes[p] for p in positions]


@pytest.mark.parametrize("seed", range(20))
def test_winnow_keeps_the_rightmost_minimum_of_every_window(seed):
    rng = random.Random(seed)
    hashes = [rng.randrange(4) for _ in range(rng.randrange(0, 30))]  # many ties
    for window in (1, 2, 4, 7):
        assert winnow(hashes, window) == _winnow_by_definition(hashes, window), (hashes, window)


def test_winnow_of_few_hashes_is_their_minimum():
    assert winnow([5, 3, 9], 4) == [3] and winnow([], 4) == []
    assert winnow([9, 8, 7, 6, 5, 4], 2) == [8, 7, 6, 5, 4]  # falling: every window's last


def test_kgram_hashes_one_per_run_of_k_tokens():
    tokens = ["a", "b", "c", "a", "b", "c", "a"]
    grams = kgram_hashes(tokens, k=3)
    assert len(grams) == 5
    assert grams[0] == grams[3]            # "a b c" twice
    assert len(set(grams)) == 3            # abc, bca, cab
    assert kgram_hashes(["x", "y"], k=3) == kgram_hashes(["x", "y"], k=2)  # one short run
    assert kgram_hashes([], k=3) == []
    # token boundaries count: "ab" "c" is not "a" "bc"
    assert kgram_hashes(["ab", "c"], k=2) != kgram_hashes(["a", "bc"], k=2)


def test_code_that_does_not_parse_is_compared_as_text_and_noted():
    code = normalise("def f(x:\n    return x +\n")
    assert not code.parsed and code.note == "not valid Python: compared as text"
    assert normalise("def f(x):\n    return x\n").parsed


def test_where_indexes_each_gram_to_its_positions():
    code = normalise("def f(x):\n    return len(x) + len(x) + len(x)\n")
    assert code.grams == kgram_hashes(code.tokens)
    for h, positions in code.where.items():
        assert all(code.grams[q] == h for q in positions)
    assert sum(map(len, code.where.values())) == len(code.grams)
    assert code.fingerprints == frozenset(winnow(code.grams))
