"""The comparisons test cells make (grading/checks.py): what they accept, what they reject
and the message they give.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mlcourse_utils.grading import (
    Case,
    check_against_reference,
    check_close,
    check_equal,
    check_raises,
)
from mlcourse_utils.grading.protocol import (
    RemoteError,
)


def test_check_close_accepts_harmless_differences():
    """A list for a tuple, a Python float for a numpy scalar, a 0-d array for a number."""
    check_close([1.0, np.array(2.0)], (np.float64(1.0), 2.0), "pair")
    check_close((np.array([1.0, 2.0]), 3), [np.array([1.0, 2.0]), 3.0], "array and number")
    check_close(-np.inf, -np.inf, "minus infinity")
    check_close([0.5, 0.25], np.array([0.5, 0.25]), "list for an array")


@pytest.mark.parametrize("actual,expected,fragment", [
    (1.1, 1.0, "expected 1"),
    ((1.0,), (1.0, 2.0), "expected 2 values"),
    (np.array([1.0]), 1.0, "single number"),
    (np.ones((2, 3)), np.ones((3, 2)), "shape (3, 2)"),
    (np.nan, 0.0, "expected 0"),
    (0.0, -np.inf, "expected -inf"),
    ("0.5", 0.5, "expected 0.5"),
    (None, 1.0, "expected 1"),
    (np.array([1.0, 2.0, 3.5]), np.array([1.0, 2.0, 3.0]), "entry 2 should be 3"),
])
def test_check_close_rejects_wrong_values_with_a_message(actual, expected, fragment):
    with pytest.raises(AssertionError, match="what was called") as info:
        check_close(actual, expected, "what was called")
    assert fragment in str(info.value)


def test_check_equal_is_exact_and_compares_labels():
    check_equal(np.array(["ham", "spam"]), np.array(["ham", "spam"]), "classes")
    check_equal([0, 2, 1], np.array([0, 2, 1]), "indices")
    with pytest.raises(AssertionError):
        check_equal(np.array(["spam", "ham"]), np.array(["ham", "spam"]), "classes")
    with pytest.raises(AssertionError):
        check_equal(np.array([0, 1]), np.array([0.0, 1.0 + 1e-12]), "indices")


def test_check_close_compares_string_parts_of_a_tuple_exactly():
    expected = (np.array(["a", "b"]), np.array([0.5, 0.5]))
    check_close([["a", "b"], [0.5, 0.5 + 1e-12]], expected, "fit")
    with pytest.raises(AssertionError, match=r"fit\[0\]"):
        check_close([["b", "a"], [0.5, 0.5]], expected, "fit")


def _raises_value_error(x):
    if x < 0:
        raise ValueError("x must be >= 0")
    return x


def test_check_raises_local_and_remote():
    check_raises(ValueError, _raises_value_error, -1)
    with pytest.raises(AssertionError, match="should raise ValueError, but returned 1"):
        check_raises(ValueError, _raises_value_error, 1)

    def remote(*args):
        raise RemoteError("BadInput", ["BadInput", "ValueError", "Exception"], "no")

    check_raises(ValueError, remote, 1)  # a subclass of ValueError in the student's process
    with pytest.raises(AssertionError, match="raised BadInput"):
        check_raises(TypeError, remote, 1)


def test_check_against_reference_names_the_failing_case():
    cases = [Case((np.arange(3.0),), label="a short ramp"), Case((np.ones(4),), label="four ones")]
    check_against_reference(np.mean, np.mean, cases)

    def off_by_one(x):
        return np.sum(x) / (len(x) - 1)

    off_by_one.__name__ = "mean"
    with pytest.raises(AssertionError, match="mean on a short ramp"):
        check_against_reference(off_by_one, np.mean, cases)


def test_check_close_rejects_text_where_numbers_are_expected():
    for text in ("0.5", ["0.5"], np.array(["0.5"]), (np.float64(0.5), "1.0")):
        with pytest.raises(AssertionError):
            check_close(text, (0.5, 1.0) if isinstance(text, tuple) else [0.5], "f")


@given(st.floats(allow_nan=False, allow_infinity=False, min_value=-1e6, max_value=1e6),
       st.floats(min_value=-1e-7, max_value=1e-7))
def test_check_close_tolerates_rounding_and_rejects_real_errors(x, noise):
    check_close(x * (1 + noise), x, "f")                 # within rtol=1e-6
    with pytest.raises(AssertionError):
        check_close(x + 1e-3 + 1e-5 * abs(x), x, "f")    # beyond rtol and atol
