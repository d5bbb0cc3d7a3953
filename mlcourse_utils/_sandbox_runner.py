"""The program that runs a student's notebook inside the grading sandbox.

The grader starts it as ``python -I -c <this file's text> READ_FD WRITE_FD MODE`` inside fresh
mount/PID/network namespaces (see ``_sandbox.py``). It must not import ``mlcourse_utils``: it
only uses the standard library, numpy and IPython. It executes the cells it is sent and calls
answer functions on the inputs it is sent, and answers with plain data.

Nothing here is trusted: the student's code runs in this process and may change anything in it,
including this loop. The grader therefore treats every byte that comes back as untrusted data
and decides every verdict in its own process.
"""

import base64
import json
import os
import struct
import sys
import warnings

READ_FD, WRITE_FD, MODE = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
_in = os.fdopen(READ_FD, "rb", buffering=0)
_out = os.fdopen(WRITE_FD, "wb", buffering=0)


def _read_exact(n):
    chunks = []
    while n:
        chunk = _in.read(n)
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def receive():
    (n,) = struct.unpack(">I", _read_exact(4))
    return json.loads(_read_exact(n))


def send(obj):
    data = json.dumps(obj, allow_nan=False).encode()
    _out.write(struct.pack(">I", len(data)) + data)


if MODE == "fallback":
    # Without namespaces the real package is on disk; block its import and report the attempt.
    # (A determined student can remove this hook; see the README's "Limits" section.)
    class _Blocker:
        def find_spec(self, name, path=None, target=None):
            if name == "mlcourse_utils" or name.startswith("mlcourse_utils."):
                send({"event": "delegation"})
                raise ImportError(
                    "mlcourse_utils is not available while your notebook is graded: "
                    "answers must not use the reference implementation"
                )
            return None

    sys.meta_path.insert(0, _Blocker())

import numpy as np  # noqa: E402

_ALLOWED_KINDS = "biufU"


def encode(value, depth=0):
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


def decode(obj):
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


def _warning_texts(caught):
    return [f"{w.category.__name__}: {w.message}"[:300] for w in caught[:20]]


def _exception_info(exc):
    return {
        "exc_type": type(exc).__name__,
        "exc_mro": [c.__name__ for c in type(exc).__mro__],
        "message": str(exc)[:1000],
    }


from IPython.core.interactiveshell import InteractiveShell  # noqa: E402

shell = InteractiveShell.instance()
shell.colors = "NoColor"
send({"event": "ready", "pid": os.getpid()})

while True:
    try:
        msg = receive()
    except EOFError:
        break
    op = msg.get("op")
    if op == "exec":
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = shell.run_cell(msg["source"], store_history=False)
        error = result.error_before_exec or result.error_in_exec
        reply = {"ok": error is None, "warnings": _warning_texts(caught)}
        if error is not None:
            reply.update(_exception_info(error))
        sys.stdout.flush()
        sys.stderr.flush()
        send(reply)
    elif op == "call":
        fn = shell.user_ns.get(msg["name"])
        if not callable(fn):
            send({"ok": False, "exc_type": "NameError", "exc_mro": ["NameError", "Exception"],
                  "message": f"the notebook does not define a function {msg['name']!r}",
                  "warnings": []})
            continue
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                value = fn(*decode(msg["args"]), **decode(msg["kwargs"]))
                reply = {"ok": True, "value": encode(value)}
            except BaseException as exc:  # noqa: BLE001 (the student's error is data)
                reply = {"ok": False, **_exception_info(exc)}
        reply["warnings"] = _warning_texts(caught)
        sys.stdout.flush()
        sys.stderr.flush()
        send(reply)
    elif op == "exit":
        break
