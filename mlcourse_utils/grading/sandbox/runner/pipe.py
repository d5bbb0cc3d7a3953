"""The runner's pipes to the grader: framed JSON messages, plain data both ways, warnings and
errors as data."""

import base64
import json
import struct
import warnings

#: Set by :func:`main`: whether the filter holds, the protocol's pipes, numpy, the shell.
SECCOMP = False
_in = _out = np = shell = None


def _read_exact(n):
    chunks = []
    while n:
        chunk = _in.read(n)
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def receive() -> dict[str, object]:
    (n,) = struct.unpack(">I", _read_exact(4))
    return json.loads(_read_exact(n))


def send(obj: dict[str, object]) -> None:
    payload = json.dumps(obj, allow_nan=False).encode()
    data = memoryview(struct.pack(">I", len(payload)) + payload)
    while data:
        data = data[_out.write(data):]


class _Blocker:
    """Without namespaces the real package is on disk; block its import and report the attempt.
    (A determined student can remove this hook; see docs/grading-security.md, "Limits".)"""

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name == "mlcourse_utils" or name.startswith("mlcourse_utils."):
            send({"event": "delegation"})
            raise ImportError(
                "mlcourse_utils is not available while your notebook is graded: "
                "answers must not use the reference implementation"
            )
        return None


_ALLOWED_KINDS = "biufU"


def encode(value: object, depth: int = 0) -> object:
    """Plain data only: numbers, strings, None, lists, tuples, str-keyed dicts, numeric arrays."""
    if depth > 20:
        raise TypeError("the returned value is nested too deeply")
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (int, np.integer)) and not isinstance(value, np.bool_):
        return int(value)
    if isinstance(value, (float, np.floating)):
        v = float(value)
        return v if np.isfinite(v) else {"$f": repr(v)}
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, tuple):
        return {"$t": [encode(v, depth + 1) for v in value]}
    if isinstance(value, list):
        return [encode(v, depth + 1) for v in value]
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise TypeError("returned dictionaries must have string keys")
        return {"$d": {k: encode(v, depth + 1) for k, v in value.items()}}
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in _ALLOWED_KINDS:
            raise TypeError(f"returned an array of dtype {value.dtype}; return numbers")
        arr = np.asarray(value, order="C")  # (ascontiguousarray would turn 0-d into 1-d)
        if arr.dtype.kind in "biuf":
            arr = arr.astype(arr.dtype.newbyteorder("<"), copy=False)
        return {"$a": base64.b64encode(arr.tobytes()).decode(), "dtype": arr.dtype.str,
                "shape": list(arr.shape)}
    if isinstance(value, complex):
        raise TypeError("returned a complex number; return real numbers")
    raise TypeError(
        f"returned an object of type {type(value).__name__}; return numbers, strings, "
        "tuples/lists or numpy arrays"
    )


def decode(obj: object) -> object:
    if isinstance(obj, list):
        return [decode(v) for v in obj]
    if isinstance(obj, dict):
        if "$t" in obj:
            return tuple(decode(v) for v in obj["$t"])
        if "$f" in obj:
            return float(obj["$f"])
        if "$d" in obj:
            return {k: decode(v) for k, v in obj["$d"].items()}
        if "$a" in obj:
            data = base64.b64decode(obj["$a"])
            return np.frombuffer(data, dtype=np.dtype(obj["dtype"])).reshape(obj["shape"]).copy()
    return obj


#: Warnings kept per request, as text (a loop that warns a million times keeps the first).
MAX_WARNINGS = 20


class _Warnings(warnings.catch_warnings):
    """The warnings of one request: each is recorded, never printed and never an error (the
    filter is "always", whatever the notebook set); the first :data:`MAX_WARNINGS` are kept as
    text. The grader's floating-point error mode never reaches the student's code: a test's
    ``np.errstate(..., "raise")`` holds in the grader's process only, so a warning inside an
    answer is a warning, shown in the feedback, and never costs points."""

    def __enter__(self):
        super().__enter__()
        warnings.simplefilter("always")
        self.texts = []
        warnings.showwarning = self._keep
        return self.texts

    def _keep(self, message, category, filename, lineno, file=None, line=None):
        if len(self.texts) < MAX_WARNINGS:
            self.texts.append(f"{category.__name__}: {message}"[:300])


def _exception_info(exc):
    return {
        "exc_type": type(exc).__name__,
        "exc_mro": [c.__name__ for c in type(exc).__mro__],
        "message": str(exc)[:1000],
    }
