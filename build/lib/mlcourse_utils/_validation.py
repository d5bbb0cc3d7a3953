"""Input checks shared by every module of the package.

Each helper converts an array-like to a float64 (or integer/bool) numpy array and raises a
``ValueError`` or ``TypeError`` whose message names the argument and says what was wrong, so
that a student calling a reference function with bad data sees ``"x must be 1-D, got shape
(2, 3)"`` rather than a numpy traceback.
"""

from __future__ import annotations

import numbers

import numpy as np

__all__ = [
    "as_float_array",
    "as_1d_float_array",
    "as_2d_float_array",
    "as_binary_array",
    "as_labels",
    "as_probability_vector",
    "as_float",
    "check_same_length",
]


def as_float_array(x, name, *, ndim=None, min_size=0, allow_nonfinite=False):
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
    if not allow_nonfinite and not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or inf; remove or impute those entries")
    return arr


def as_1d_float_array(x, name, *, min_size=0, allow_nonfinite=False):
    """A 1-D float64 array (a scalar is not accepted: pass ``[value]``)."""
    return as_float_array(x, name, ndim=1, min_size=min_size, allow_nonfinite=allow_nonfinite)


def as_2d_float_array(X, name, *, min_rows=0, allow_nonfinite=False):
    """A 2-D float64 array of shape (N, D)."""
    return as_float_array(X, name, ndim=2, min_size=min_rows, allow_nonfinite=allow_nonfinite)


def as_binary_array(x, name, *, ndim=None, min_size=0):
    """A float64 array whose entries are all 0 or 1 (booleans are accepted)."""
    arr = as_float_array(x, name, ndim=ndim, min_size=min_size)
    if not np.all((arr == 0) | (arr == 1)):
        bad = arr[(arr != 0) & (arr != 1)].ravel()[0]
        raise ValueError(f"{name} must be binary (0/1), found the value {bad!r}")
    return arr


def as_labels(y, name="y", *, n_samples=None):
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
    try:
        classes, index = np.unique(arr, return_inverse=True)
    except TypeError as exc:
        raise TypeError(f"{name} must hold sortable labels of one type: {exc}") from None
    return arr, classes, index.reshape(-1)


def as_probability_vector(p, name, *, axis=-1, tol=1e-9):
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


def as_float(value, name, *, low=None, high=None, low_open=False, high_open=False):
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


def check_same_length(X, y, x_name="X", y_name="y"):
    """Raise when ``X`` and ``y`` disagree on the number of samples."""
    if X.shape[0] != y.shape[0]:
        raise ValueError(
            f"{x_name} has {X.shape[0]} rows but {y_name} has {y.shape[0]} entries"
        )
