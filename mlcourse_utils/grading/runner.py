"""The program that runs a student's notebook inside the grading sandbox.

The grader starts it as ``python -I -c <this file's text> READ_FD WRITE_FD MODE`` inside fresh
namespaces and a minimal root, as an unprivileged user (see ``sandbox.py``). Its first act is
to install a seccomp filter; then it executes the cells it is sent and calls answer functions on
the inputs it is sent, and answers with plain data, each reply carrying its request's id. It
must not import ``mlcourse_utils``: it only uses the standard library, numpy and IPython.

Nothing here is trusted: the student's code runs in this process and may change anything in it,
including this loop. The grader therefore treats every byte that comes back as untrusted data,
with deadlines and size limits, and decides every verdict in its own process.
"""

from __future__ import annotations

import ctypes
import os
import platform
import struct
import sys

# ---------------------------------------------------------------- seccomp, before anything else
# A filter that every process and thread started from here inherits and cannot remove: no new
# namespaces (a nested user namespace would hand out capabilities), no mounts, no ptrace of a
# neighbour, no kernel keyrings, modules, BPF or io_uring. The process has no capabilities and
# runs as an unprivileged user already; this closes the doors that stay open to such a user.

_ERRNO, _ALLOW, _KILL = 0x00050000, 0x7FFF0000, 0x80000000
_EPERM, _ENOSYS = 1, 38
_NS_FLAGS = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000
_SYSCALLS = {  # (audit arch, clone, clone3, denied syscall numbers)
    "x86_64": (0xC000003E, 56, 435, [
        272, 308, 165, 166, 155, 161, 101, 310, 311, 250, 248, 249, 321, 298, 246, 320, 175, 313,
        176, 304, 303, 323, 167, 168, 169, 163, 425, 426, 427, 428, 429, 430, 431, 432, 433, 442,
        135, 179, 164, 227, 159, 305, 103, 170, 171, 172, 173, 134, 153]),
    "aarch64": (0xC00000B7, 220, 435, [
        97, 268, 40, 39, 41, 51, 117, 270, 271, 219, 217, 218, 280, 241, 104, 294, 105, 273, 106,
        265, 264, 282, 224, 225, 142, 89, 425, 426, 427, 428, 429, 430, 431, 432, 433, 442, 92,
        60, 170, 112, 116, 161, 162]),
}


def _install_seccomp():
    """Install the filter (classic BPF through prctl); returns False where unsupported."""
    table = _SYSCALLS.get(platform.machine())
    if table is None or sys.platform != "linux":
        return False
    arch, clone, clone3, denied = table
    prog = []

    def op(code, k, jt=0, jf=0):
        prog.append((code, jt, jf, k))

    LD, JEQ, JSET, JGE, RET = 0x20, 0x15, 0x45, 0x35, 0x06
    op(LD, 4)                                   # seccomp_data.arch
    op(JEQ, arch, 1, 0)
    op(RET, _KILL)                              # another ABI (e.g. 32-bit calls): refuse
    op(LD, 0)                                   # seccomp_data.nr
    if arch == 0xC000003E:
        op(JGE, 0x40000000, 0, 1)               # the x32 ABI
        op(RET, _ERRNO | _EPERM)
    for nr in denied:
        op(JEQ, nr, 0, 1)
        op(RET, _ERRNO | _EPERM)
    op(JEQ, clone3, 0, 1)
    op(RET, _ERRNO | _ENOSYS)                   # libc falls back to clone, checked below
    op(JEQ, clone, 0, 3)
    op(LD, 16)                                  # clone's flags (low 32 bits of args[0])
    op(JSET, _NS_FLAGS, 0, 1)
    op(RET, _ERRNO | _EPERM)
    op(RET, _ALLOW)

    class SockFilter(ctypes.Structure):
        _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte),
                    ("k", ctypes.c_uint)]

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(SockFilter))]

    filters = (SockFilter * len(prog))(*[SockFilter(*ins) for ins in prog])
    fprog = SockFprog(len(prog), filters)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p, ctypes.c_ulong,
                           ctypes.c_ulong]
    PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, None, 0, 0) != 0:
        return False
    return libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(fprog), 0, 0) == 0


SECCOMP = _install_seccomp()

import base64  # noqa: E402
import json  # noqa: E402
import warnings  # noqa: E402

READ_FD, WRITE_FD, MODE = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
PROBE = MODE.endswith("-probe")  # only say which defences hold, then exit (sandbox.defences)
MODE = MODE.removesuffix("-probe")
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


def receive() -> dict[str, object]:
    (n,) = struct.unpack(">I", _read_exact(4))
    return json.loads(_read_exact(n))


def send(obj: dict[str, object]) -> None:
    payload = json.dumps(obj, allow_nan=False).encode()
    data = memoryview(struct.pack(">I", len(payload)) + payload)
    while data:
        data = data[_out.write(data):]


if PROBE:
    send({"event": "ready", "pid": os.getpid(), "seccomp": SECCOMP, "uid": os.getuid()})
    sys.exit(0)

if MODE == "fallback":
    # Without namespaces the real package is on disk; block its import and report the attempt.
    # (A determined student can remove this hook; see the README's "Limits" section.)
    class _Blocker:
        def find_spec(self, name: str, path: object = None, target: object = None) -> None:
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
send({"event": "ready", "pid": os.getpid(), "seccomp": SECCOMP, "uid": os.getuid()})

while True:
    try:
        msg = receive()
    except EOFError:
        break
    op = msg.get("op")
    request = msg.get("id")
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
        reply["id"] = request
        send(reply)
    elif op == "call":
        fn = shell.user_ns.get(msg["name"])
        if not callable(fn):
            send({"ok": False, "exc_type": "NameError", "exc_mro": ["NameError", "Exception"],
                  "message": f"the notebook does not define a function {msg['name']!r}",
                  "warnings": [], "id": request})
            continue
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                value = fn(*decode(msg["args"]), **decode(msg["kwargs"]))
                reply = {"ok": True, "value": encode(value)}
            except BaseException as exc:  # noqa: BLE001 (the student's error is data)
                reply = {"ok": False, **_exception_info(exc)}
        reply["warnings"] = _warning_texts(caught)
        reply["id"] = request
        sys.stdout.flush()
        sys.stderr.flush()
        send(reply)
    elif op == "exit":
        break
