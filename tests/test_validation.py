"""Tests for mlcourse_utils._validation: the input checks and helpers every module shares.

Expected values come from plain numpy written the slow, obvious way (np.unique, an entrywise
np.isfinite, a loop over rows); the helpers under test take shortcuts (a sum for finiteness,
counting for integer labels, blocks of rows) that must not change any answer.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_array_equal

from mlcourse_utils._validation import (
    BLOCK_ENTRIES,
    LOG_2PI,
    NotFittedError,
    all_finite,
    as_binary_array,
    as_labels,
    check_X_y,
    count_binary,
    one_hot,
    row_blocks,
)


def test_log_2pi():
    assert LOG_2PI == pytest.approx(np.log(2 * np.pi), rel=1e-15)


def test_not_fitted_error_is_a_value_error():
    """Code that catches ValueError (bad use of a function) also catches it."""
    assert issubclass(NotFittedError, ValueError)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_all_finite_finds_one_bad_entry(bad):
    X = np.zeros((300, 7))
    assert all_finite(X)
    X[123, 4] = bad
    assert not all_finite(X)


def test_all_finite_when_the_sum_overflows():
    """1e308 + 1e308 overflows to inf, yet every entry is finite: the entrywise check decides."""
    X = np.full(10, 1e308)
    with np.errstate(over="ignore"):
        assert not np.isfinite(X.sum())
    assert all_finite(X)
    X[3] = np.nan
    assert not all_finite(X)


def test_all_finite_with_plus_and_minus_inf():
    """inf - inf is NaN in the sum; still not finite."""
    assert not all_finite(np.array([np.inf, -np.inf, 1.0]))


def test_binary_check_in_every_block():
    """A bad value in the last block, just after a block boundary, is found and named."""
    x = np.zeros(3 * BLOCK_ENTRIES + 5)
    x[::7] = 1.0
    assert_array_equal(as_binary_array(x, "x"), x)
    x[2 * BLOCK_ENTRIES + 1] = 0.5
    with pytest.raises(ValueError, match=r"x must be binary \(0/1\), found the value 0.5"):
        as_binary_array(x, "x")


def test_binary_check_messages_and_accepted_values():
    assert_array_equal(as_binary_array([[True, False]], "X"), [[1.0, 0.0]])
    assert_array_equal(as_binary_array([-0.0, 1.0], "x"), [0.0, 1.0])  # -0.0 == 0
    assert as_binary_array(np.zeros((0, 3)), "X").shape == (0, 3)
    with pytest.raises(ValueError, match="X contains NaN or inf"):
        as_binary_array([[0.0, np.nan]], "X")
    with pytest.raises(ValueError, match="X contains NaN or inf"):
        as_binary_array([[1.0, np.inf]], "X")
    with pytest.raises(ValueError, match="found the value 2.0"):
        as_binary_array([[0, 1, 2]], "X")
    with pytest.raises(ValueError, match="found the value -1.0"):
        as_binary_array([-1.0, 1.0], "x")


@settings(max_examples=200, deadline=None)
@given(
    dtype=st.sampled_from([np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
                           np.uint32, np.uint64]),
    offset=st.integers(min_value=0, max_value=2**40),
    values=st.lists(st.integers(min_value=0, max_value=120), min_size=1, max_size=60),
)
def test_integer_labels_as_np_unique(dtype, offset, values):
    """Counting integer labels gives exactly np.unique's classes (same dtype) and indices."""
    info = np.iinfo(dtype)
    low = min(offset, int(info.max) - 120) if info.min == 0 else info.min + offset % 2**6
    y = np.array([low + v for v in values], dtype=dtype)
    _, classes, index = as_labels(y)
    expected_classes, expected_index = np.unique(y, return_inverse=True)
    assert classes.dtype == expected_classes.dtype
    assert_array_equal(classes, expected_classes)
    assert_array_equal(index, expected_index.reshape(-1))
    assert index.dtype == np.intp


def test_labels_of_other_types_as_np_unique():
    """Strings, floats, booleans and integers spread far apart take np.unique's path."""
    for y in (np.array(["b", "a", "b"]), np.array([2.5, -1.0, 2.5]), np.array([True, False]),
              np.array([10**12, -(10**12), 0]), np.array([2**63, 1], dtype=np.uint64)):
        _, classes, index = as_labels(y)
        expected_classes, expected_index = np.unique(y, return_inverse=True)
        assert_array_equal(classes, expected_classes)
        assert_array_equal(index, expected_index.reshape(-1))


def test_check_X_y():
    X, classes, index = check_X_y([[1, 2], [3, 4], [5, 6]], ["b", "a", "b"])
    assert X.dtype == np.float64
    assert_array_equal(classes, ["a", "b"])
    assert_array_equal(index, [1, 0, 1])
    with pytest.raises(ValueError, match="X has 3 rows but y has 2 entries"):
        check_X_y(np.zeros((3, 2)), [0, 1])
    with pytest.raises(ValueError, match="X has no columns"):
        check_X_y(np.zeros((3, 0)), [0, 1, 0])
    with pytest.raises(ValueError, match="X needs at least 1 rows"):
        check_X_y(np.zeros((0, 2)), [])
    with pytest.raises(ValueError, match="X must be binary"):
        check_X_y([[0.0, 0.5]], [1], binary=True)
    with pytest.raises(ValueError, match="X contains NaN"):
        check_X_y([[0.0, np.nan]], [1])
    # check_entries=False leaves the entries to the caller, but not the shapes and labels.
    X, _, _ = check_X_y([[0.0, np.nan]], [1], binary=True, check_entries=False)
    assert np.isnan(X[0, 1])
    with pytest.raises(ValueError, match="X has 3 rows but y has 2 entries"):
        check_X_y(np.zeros((3, 2)), [0, 1], check_entries=False)
    with pytest.raises(ValueError, match="X has no columns"):
        check_X_y(np.zeros((3, 0)), [0, 1, 0], check_entries=False)


def test_one_hot():
    """Row i has its 1 in column index[i]; T^T X sums the rows of X class by class (class 3
    has no samples: a row of zeros)."""
    T = one_hot(np.array([2, 0, 2, 1]), 4)
    assert_array_equal(T, [[0, 0, 1, 0], [1, 0, 0, 0], [0, 0, 1, 0], [0, 1, 0, 0]])
    X = np.arange(8.0).reshape(4, 2)
    assert_array_equal(T.T @ X, [[2, 3], [6, 7], [0 + 4, 1 + 5], [0, 0]])


@pytest.mark.parametrize("shape", [(0, 5), (1, 1), (10, 3), (70_000, 1), (1000, 500),
                                   (5, 2 * BLOCK_ENTRIES), (300, 4, 5)])
@pytest.mark.parametrize("min_rows", [None, 1])
def test_row_blocks_cover_every_row_once(shape, min_rows):
    """Every row in exactly one block, in order; blocks of 2^16 entries, and at least 1024 rows
    unless min_rows says fewer (then a row wider than 2^16 entries is a block of its own)."""
    blocks = row_blocks(shape) if min_rows is None else row_blocks(shape, min_rows=min_rows)
    rows = np.concatenate([np.arange(shape[0])[b] for b in blocks]) if blocks else np.array([])
    assert_array_equal(rows, np.arange(shape[0]))
    width = int(np.prod(shape[1:]))
    least = 1024 if min_rows is None else min_rows
    assert all(b.stop - b.start == max(least, BLOCK_ENTRIES // width) for b in blocks)


def test_count_binary():
    """Entries exactly 0 or 1 (either sign of zero, booleans too); NaN, inf, 0.5, 2 are not."""
    x = np.array([[0.0, -0.0, 1.0, 0.5], [np.nan, np.inf, 2.0, 1.0]])
    assert count_binary(x) == 4
    assert count_binary(np.array([True, False, True])) == 3
