"""The messages between the grader and a sandbox: plain-data codec, limits and clean text.

Requests and replies are JSON objects, each sent as a 4-byte big-endian length and the bytes.
Values are plain data only (numbers, strings, None, lists, and tagged tuples ``{"$t": [...]}``,
non-finite floats ``{"$f": "nan"}``, str-keyed dicts ``{"$d": {...}}`` and numeric or short
unicode arrays ``{"$a": base64, "dtype", "shape"}``). Everything that comes from a sandbox is
decoded strictly, within :data:`MAX_MESSAGE` bytes, :data:`MAX_ELEMENTS` elements and
:data:`MAX_DEPTH` levels, and every string is cleaned by :func:`~.text.clean_text`.
"""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from .text import clean_text

#: Largest reply (bytes of JSON): answers are a few arrays; 4 MiB holds 500 000 float64s.
MAX_MESSAGE = 4 * 2**20
#: Largest number of lists, dicts and strings in one reply, and its deepest nesting.
MAX_ELEMENTS = 100_000
MAX_DEPTH = 25
#: Events (such as a reported import of the reference) accepted while one request runs.
MAX_EVENTS = 64

_ALLOWED_DTYPES = {"|b1", "<i1", "<i2", "<i4", "<i8", "|i1", "|u1", "<u1", "<u2", "<u4", "<u8",
                   "<f2", "<f4", "<f8"}


class SandboxError(Exception):
    """The sandbox could not answer: it timed out, died or broke the protocol."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind  # "timeout", "died", "memory", "protocol", "budget"


class RemoteError(Exception):
    """The student's code raised an exception (its type, type hierarchy and message)."""

    def __init__(self, exc_type: str, mro: Iterable[str], message: str) -> None:
        super().__init__(f"{exc_type}: {message}" if message else exc_type)
        self.exc_type = exc_type
        self.mro = tuple(mro)
        self.message = message
        self.warnings: list[str] = []  # warnings the call emitted before it raised


# ---------------------------------------------------------------- plain-data codec

def encode(value: Any, depth: int = 0) -> Any:
    """Encode grader-side inputs (numbers, strings, sequences, numeric/str arrays)."""
    if depth > 20:
        raise TypeError("value nested too deeply")
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        v = float(value)
        return v if np.isfinite(v) else {"$f": repr(v)}
    if isinstance(value, tuple):
        return {"$t": [encode(v, depth + 1) for v in value]}
    if isinstance(value, list):
        return [encode(v, depth + 1) for v in value]
    if isinstance(value, dict):
        return {"$d": {str(k): encode(v, depth + 1) for k, v in value.items()}}
    if isinstance(value, np.ndarray):
        arr = np.asarray(value, order="C")  # (ascontiguousarray would turn 0-d into 1-d)
        if arr.dtype.kind in "biuf":
            arr = arr.astype(arr.dtype.newbyteorder("<"), copy=False)
        elif arr.dtype.kind != "U":
            raise TypeError(f"cannot send an array of dtype {arr.dtype} to the sandbox")
        return {"$a": base64.b64encode(arr.tobytes()).decode(), "dtype": arr.dtype.str,
                "shape": list(arr.shape)}
    raise TypeError(f"cannot send a {type(value).__name__} to the sandbox")


class _Budget:
    """Counts the containers and strings of one reply while it is decoded."""

    def __init__(self, limit=MAX_ELEMENTS):
        self.left = limit

    def take(self) -> None:
        self.left -= 1
        if self.left < 0:
            raise ValueError(f"reply has more than {MAX_ELEMENTS} elements")


def decode(obj: Any, depth: int = 0, budget: _Budget | None = None) -> Any:
    """Strictly decode a reply into plain data; anything unexpected is a protocol error.

    Strings are cleaned (:func:`clean_text`); arrays must be numeric or short unicode strings;
    at most :data:`MAX_ELEMENTS` lists, dicts and strings and :data:`MAX_DEPTH` levels.
    """
    budget = budget or _Budget()
    if depth > MAX_DEPTH:
        raise ValueError("reply nested too deeply")
    if obj is None or isinstance(obj, (bool, int, float)):
        return obj
    budget.take()
    if isinstance(obj, str):
        return clean_text(obj, 10_000)
    if isinstance(obj, list):
        return [decode(v, depth + 1, budget) for v in obj]
    if isinstance(obj, dict):
        keys = set(obj)
        if keys == {"$t"} and isinstance(obj["$t"], list):
            return tuple(decode(v, depth + 1, budget) for v in obj["$t"])
        if keys == {"$f"} and obj["$f"] in ("nan", "inf", "-inf"):
            return float(obj["$f"])
        if keys == {"$d"} and isinstance(obj["$d"], dict):
            return {clean_text(k, 200): decode(v, depth + 1, budget) for k, v in obj["$d"].items()}
        if keys == {"$a", "dtype", "shape"}:
            return _decode_array(obj)
    raise ValueError(f"unexpected value in reply: {type(obj).__name__}")


def _decode_array(obj):
    dtype = obj["dtype"]
    if not isinstance(dtype, str) or not isinstance(obj["$a"], str):
        raise ValueError("bad array dtype")
    dt = np.dtype(dtype)
    if dtype not in _ALLOWED_DTYPES and not (dt.kind == "U" and dt.itemsize <= 4096):
        raise ValueError(f"array dtype {dtype!r} is not allowed")
    shape = obj["shape"]
    if not (isinstance(shape, list) and len(shape) <= 8
            and all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in shape)):
        raise ValueError("bad array shape")
    data = base64.b64decode(obj["$a"], validate=True)
    if math.prod(shape) * dt.itemsize != len(data):
        raise ValueError("array data does not match its shape")
    arr = np.frombuffer(data, dtype=dt).reshape(shape).copy()
    if dt.kind == "U":  # lone surrogates and control characters, as in every string
        cleaned = [clean_text(str(v), 4096) for v in arr.ravel()]
        arr = np.array(cleaned, dtype=f"<U{max(1, max(map(len, cleaned), default=1))}")
        arr = arr.reshape(shape)
    return arr


def parse_reply(data: bytes) -> dict[str, Any]:
    """Bytes of one message → dict, or ValueError (malformed, too nested, too many elements)."""
    if data.count(b"[") + data.count(b"{") > MAX_ELEMENTS:
        raise ValueError(f"reply has more than {MAX_ELEMENTS} lists and dicts")
    try:
        obj = json.loads(data)
    except RecursionError:
        raise ValueError("reply nested too deeply") from None
    if not isinstance(obj, dict):
        raise ValueError("reply is not an object")
    return obj
