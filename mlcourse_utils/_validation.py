"""Input checks shared by every module of the package.

Each helper converts an array-like to a float64 (or integer/bool) numpy array and raises a
``ValueError`` or ``TypeError`` whose message names the argument and says what was wrong, so
that a student calling a reference function with bad data sees ``"x must be 1-D, got shape
(2, 3)"`` rather than a numpy traceback. The classifiers share :func:`check_X_y` (training
data and labels), :func:`one_hot`, ``LOG_2PI`` and :class:`NotFittedError`.

Checks that read a whole array cost about as much as one pass of a matrix product over it,
so each array is checked once, and cheaply: finiteness through its sum (see
:func:`all_finite`).
"""

from __future__ import annotations

import numbers
from typing import Any, TypeAlias

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "FloatArray",
    "LOG_2PI",
    "NotFittedError",
    "all_finite",
    "check_X_y",
    "one_hot",
    "as_float_array",
    "as_1d_float_array",
    "as_2d_float_array",
    "as_binary_array",
    "as_labels",
    "as_probability_vector",
    "as_float",
    "check_same_length",
    "count_binary",
    "row_blocks",
]

#: A float64 numpy array, what every reference function returns.
FloatArray: TypeAlias = NDArray[np.float64]

#: log(2 pi), the constant of every Gaussian log-density.
LOG_2PI = float(np.log(2.0 * np.pi))


class NotFittedError(ValueError):
    """An estimator was asked to predict before ``fit`` was called."""


#: Entries in one block of rows: 2^16 float64 numbers, 512 kB, about one core's L2 cache.
BLOCK_ENTRIES = 2**16
#: The fewest rows in a block: a block's product Z^T Z adds a D x D matrix to the total, which
#: costs little next to the product itself only when the block has many rows.
BLOCK_MIN_ROWS = 1024


def row_blocks(shape: tuple[int, ...], min_rows: int = BLOCK_MIN_ROWS) -> list[slice]:
    """Slices of consecutive rows of an array of this (N, D) shape, about 2^16 entries each.

    A computation that would make several temporary arrays as large as X (centre, square,
    multiply, compare) runs block by block instead: each block's temporaries stay in the
    processor's cache, X is read from memory once, and no temporary as large as X is made.
    Blocks have at least ``min_rows`` rows, by default 1024 (wide arrays then get blocks
    larger than the cache): enough for a block's D x D product Z^T Z to be efficient. Sums
    whose result is small (C x D class sums, an N x C product with a few columns) take
    ``min_rows=1`` and stay in the cache on wide arrays too.
    """
    step = max(min_rows, BLOCK_ENTRIES // max(int(np.prod(shape[1:])), 1))
    return [slice(start, start + step) for start in range(0, shape[0], step)]


def all_finite(arr: NDArray[Any]) -> bool:
    """Whether every entry of a float array is finite (no NaN, no +-inf).

    A sum is NaN or infinite when one of its terms is, so a finite sum proves every entry
    finite at the cost of one sum (no temporary array). Only when the sum is not finite (a bad
    entry, or finite entries whose sum overflows) are the entries checked one by one.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        total = np.sum(arr)
    return bool(np.isfinite(total)) or bool(np.isfinite(arr).all())


def as_float_array(
    x: ArrayLike,
    name: str,
    *,
    ndim: int | None = None,
    min_size: int = 0,
    allow_nonfinite: bool = False,
) -> FloatArray:
    """Convert ``x`` to a float64 array, checking type, dimension, size and finiteness.

    Parameters
    ----------
    x : array_like
    name : str
        The argument's name, used in error messages.
    ndim : int, optional
        Required number of dimensions.
    min_size : int
        Minimum number of entries (rows for 2-D input).
    allow_nonfinite : bool
        Accept NaN and inf (default: reject them).
    """
    if isinstance(x, (str, bytes)):
        raise TypeError(f"{name} must be numeric array-like, got a string")
    try:
        arr = np.asarray(x)
    except (ValueError, TypeError) as exc:  # ragged nested lists
        raise ValueError(f"{name} must be a rectangular numeric array: {exc}") from None
    if arr.dtype == object or not (
        np.issubdtype(arr.dtype, np.number) or np.issubdtype(arr.dtype, np.bool_)
    ):
        raise TypeError(f"{name} must be numeric, got an array of dtype {arr.dtype}")
    if np.issubdtype(arr.dtype, np.complexfloating):
        raise TypeError(f"{name} must be real-valued, got complex numbers")
    arr = arr.astype(np.float64, copy=False)
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape {arr.shape}")
    n = arr.shape[0] if arr.ndim >= 1 else arr.size
    if n < min_size:
        what = "rows" if arr.ndim == 2 else "entries"
        raise ValueError(f"{name} needs at least {min_size} {what}, got {n}")
    if not allow_nonfinite and not all_finite(arr):
        raise ValueError(f"{name} contains NaN or inf; remove or impute those entries")
    return arr


def as_1d_float_array(
    x: ArrayLike, name: str, *, min_size: int = 0, allow_nonfinite: bool = False
) -> FloatArray:
    """A 1-D float64 array (a scalar is not accepted: pass ``[value]``)."""
    return as_float_array(x, name, ndim=1, min_size=min_size, allow_nonfinite=allow_nonfinite)


def as_2d_float_array(
    X: ArrayLike, name: str, *, min_rows: int = 0, allow_nonfinite: bool = False
) -> FloatArray:
    """A 2-D float64 array of shape (N, D)."""
    return as_float_array(X, name, ndim=2, min_size=min_rows, allow_nonfinite=allow_nonfinite)


def as_binary_array(
    x: ArrayLike, name: str, *, ndim: int | None = None, min_size: int = 0
) -> FloatArray:
    """A float64 array whose entries are all 0 or 1 (booleans are accepted)."""
    arr = as_float_array(x, name, ndim=ndim, min_size=min_size, allow_nonfinite=True)
    # Binary exactly when the entries equal to 0 and those equal to 1 are all of them (NaN and
    # inf are neither, so this also proves the array finite), counted block by block while
    # the block is in cache; the slower checks below only build the message.
    flat = arr.reshape(-1)
    blocks = (flat[start:start + BLOCK_ENTRIES] for start in range(0, flat.size, BLOCK_ENTRIES))
    if sum(count_binary(b) for b in blocks) != flat.size:
        if not all_finite(arr):
            raise ValueError(f"{name} contains NaN or inf; remove or impute those entries")
        bad = arr[(arr != 0) & (arr != 1)].ravel()[0]
        raise ValueError(f"{name} must be binary (0/1), found the value {float(bad)!r}")
    return arr


def count_binary(block: NDArray[Any]) -> int:
    """How many entries of an array are exactly 0 or 1 (all of them when it is binary).

    Two comparisons and two counts; NaN and inf count as neither. On a block in the cache
    this costs far less than reading the block from memory, so a function that reads X block
    by block anyway (a product, a sum) checks that X is binary on the way: see
    :func:`as_binary_array` for the message when it is not.
    """
    return int(np.count_nonzero(block == 0) + np.count_nonzero(block == 1))


def as_labels(
    y: ArrayLike, name: str = "y", *, n_samples: int | None = None
) -> tuple[NDArray[Any], NDArray[Any], NDArray[np.intp]]:
    """A 1-D array of class labels and ``classes = np.unique(y)``.

    Labels may be any sortable values (ints, strings). Returns ``(y, classes, index)`` where
    ``index[i]`` is the position of ``y[i]`` in ``classes``.
    """
    if isinstance(y, (str, bytes)):
        raise TypeError(f"{name} must be an array of labels, got a single string")
    arr = np.asarray(y)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} is empty; at least one labelled sample is needed")
    if n_samples is not None and arr.shape[0] != n_samples:
        raise ValueError(f"X has {n_samples} rows but {name} has {arr.shape[0]} entries")
    if np.issubdtype(arr.dtype, np.floating) and not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or inf")
    if _small_integer_range(arr):
        # Integer labels in a short range: counting is faster than np.unique's sort.
        low = int(arr.min())
        codes = arr.astype(np.int64) - low          # 0 .. range, exactly
        present = np.bincount(codes) > 0
        classes = (np.flatnonzero(present) + low).astype(arr.dtype)
        index = (np.cumsum(present) - 1)[codes]
        return arr, classes, index.astype(np.intp)
    try:
        classes, index = np.unique(arr, return_inverse=True)
    except TypeError as exc:
        raise TypeError(f"{name} must hold sortable labels of one type: {exc}") from None
    return arr, classes, index.reshape(-1)


def _small_integer_range(labels: NDArray[Any]) -> bool:
    """Whether labels are integers (that int64 holds) spanning at most 2 N + 100 values."""
    kind, size = labels.dtype.kind, labels.dtype.itemsize
    if not (kind == "i" or (kind == "u" and size <= 4)):
        return False
    return int(labels.max()) - int(labels.min()) <= 2 * labels.shape[0] + 100


def as_probability_vector(
    p: ArrayLike, name: str, *, axis: int = -1, tol: float = 1e-9
) -> FloatArray:
    """Probabilities: non-negative, finite, summing to 1 within ``tol`` along ``axis``."""
    arr = as_float_array(p, name, min_size=1)
    if arr.ndim == 0:
        raise ValueError(f"{name} must be a vector of probabilities, got a scalar")
    if np.any(arr < 0):
        raise ValueError(f"{name} has negative entries; probabilities must be >= 0")
    sums = arr.sum(axis=axis)
    if np.any(np.abs(sums - 1.0) > tol):
        raise ValueError(f"{name} must sum to 1, sums to {np.atleast_1d(sums)[0]!r}")
    return arr


def as_float(
    value: Any,
    name: str,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
) -> float:
    """A finite Python float, optionally within [low, high] (open ends when requested)."""
    if isinstance(value, (str, bytes)) or isinstance(value, bool):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    arr = np.asarray(value)
    if arr.ndim != 0 or not (
        isinstance(value, numbers.Real) or np.issubdtype(arr.dtype, np.number)
    ):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    if np.issubdtype(arr.dtype, np.complexfloating):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    v = float(arr)
    if not np.isfinite(v):
        raise ValueError(f"{name} must be finite, got {v}")
    if low is not None and (v < low or (low_open and v == low)):
        sign = ">" if low_open else ">="
        raise ValueError(f"{name} must be {sign} {low}, got {v}")
    if high is not None and (v > high or (high_open and v == high)):
        sign = "<" if high_open else "<="
        raise ValueError(f"{name} must be {sign} {high}, got {v}")
    return v


def check_same_length(
    X: NDArray[Any], y: NDArray[Any], x_name: str = "X", y_name: str = "y"
) -> None:
    """Raise when ``X`` and ``y`` disagree on the number of samples."""
    if X.shape[0] != y.shape[0]:
        raise ValueError(
            f"{x_name} has {X.shape[0]} rows but {y_name} has {y.shape[0]} entries"
        )


def check_X_y(
    X: ArrayLike, y: ArrayLike, *, binary: bool = False, check_entries: bool = True
) -> tuple[FloatArray, NDArray[Any], NDArray[np.intp]]:
    """The training data of a classifier: ``(X, classes, index)``.

    ``X`` becomes a float64 (N, D) array with N >= 1 and D >= 1 (all 0/1 when ``binary``),
    ``y`` a 1-D array of N labels; ``classes = np.unique(y)`` and ``index[i]`` is the position
    of ``y[i]`` in ``classes``, so that every per-class array can be in ``classes`` order.
    With ``check_entries=False`` the entries of X are not read here (no finiteness or binary
    check): the caller checks them itself during its own pass over X, which saves a pass.
    """
    if not check_entries:
        X = as_2d_float_array(X, "X", min_rows=1, allow_nonfinite=True)
    elif binary:
        X = as_binary_array(X, "X", ndim=2, min_size=1)
    else:
        X = as_2d_float_array(X, "X", min_rows=1)
    if X.shape[1] == 0:
        raise ValueError("X has no columns; at least one feature is needed")
    _, classes, index = as_labels(y, "y", n_samples=X.shape[0])
    return X, classes, index


def one_hot(index: NDArray[np.intp], n_classes: int) -> FloatArray:
    """(N, C) indicator matrix T with T[i, c] = 1 when index[i] == c, else 0.

    ``T.T @ X`` sums the rows of X class by class (row c: the sum over the samples of class c)
    in one matrix product; ``T.sum(axis=0)`` counts the samples of each class.
    """
    onehot = np.zeros((index.shape[0], n_classes))
    onehot[np.arange(index.shape[0]), index] = 1.0
    return onehot
