"""Starting and talking to the grading sandbox (the grader's side).

One sandbox is one process running ``_sandbox_runner.py`` for one student's notebook:

* ``python -I`` (isolated mode: no PYTHON* variables, no user site, no script directory on
  ``sys.path``) with a minimal environment and an empty scratch folder as working directory;
* resource limits: address space (``--memory``), file size, no core dumps; per-request timeouts
  enforced here by killing the whole process group;
* where Linux namespaces are available (``unshare``), new mount, PID and network namespaces:
  every mount is remounted read-only, the repository (hidden tests, solutions, gradebook),
  the submissions and the output folder are covered by empty tmpfs mounts, ``/tmp`` is a fresh
  tmpfs, the reference package is replaced by a decoy that reports its import, there is no
  network, no other process is visible, and all capabilities are dropped before the student's
  code runs.

Requests and replies are length-prefixed JSON. Replies are decoded strictly into plain Python
numbers, strings, lists, tuples, dicts and numeric numpy arrays: the student's objects never
reach the grader.
"""

from __future__ import annotations

import base64
import functools
import json
import os
import resource
import select
import shlex
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

RUNNER = Path(__file__).with_name("_sandbox_runner.py")
PACKAGE_DIR = Path(__file__).resolve().parent
MAX_MESSAGE = 64 * 2**20
_ALLOWED_DTYPES = {"|b1", "<i1", "<i2", "<i4", "<i8", "|i1", "|u1", "<u1", "<u2", "<u4", "<u8",
                   "<f2", "<f4", "<f8"}

DECOY = '''"""Stand-in for the reference package while a notebook is graded."""
import os, json, struct, sys
try:
    _data = json.dumps({"event": "delegation"}).encode()
    os.write(int(sys.argv[2]), struct.pack(">I", len(_data)) + _data)
except Exception:
    pass
raise ImportError("mlcourse_utils is not available while your notebook is graded: "
                  "answers must not use the reference implementation")
'''


class SandboxError(Exception):
    """The sandbox could not answer: it timed out, died or broke the protocol."""

    def __init__(self, kind, message):
        super().__init__(message)
        self.kind = kind  # "timeout", "died", "memory", "protocol"


class RemoteError(Exception):
    """The student's code raised an exception (its type, type hierarchy and message)."""

    def __init__(self, exc_type, mro, message):
        super().__init__(f"{exc_type}: {message}" if message else exc_type)
        self.exc_type = exc_type
        self.mro = tuple(mro)
        self.message = message


# ---------------------------------------------------------------- plain-data codec

def encode(value, depth=0):
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


def decode(obj, depth=0):
    """Strictly decode a reply into plain data; anything unexpected is a protocol error."""
    if depth > 25:
        raise ValueError("reply nested too deeply")
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    if isinstance(obj, list):
        return [decode(v, depth + 1) for v in obj]
    if isinstance(obj, dict):
        keys = set(obj)
        if keys == {"$t"} and isinstance(obj["$t"], list):
            return tuple(decode(v, depth + 1) for v in obj["$t"])
        if keys == {"$f"} and obj["$f"] in ("nan", "inf", "-inf"):
            return float(obj["$f"])
        if keys == {"$d"} and isinstance(obj["$d"], dict):
            return {str(k): decode(v, depth + 1) for k, v in obj["$d"].items()}
        if keys == {"$a", "dtype", "shape"}:
            dtype = obj["dtype"]
            if not isinstance(dtype, str):
                raise ValueError("bad array dtype")
            dt = np.dtype(dtype)
            if dtype not in _ALLOWED_DTYPES and not (dt.kind == "U" and dt.itemsize <= 4096):
                raise ValueError(f"array dtype {dtype!r} is not allowed")
            shape = obj["shape"]
            if not (isinstance(shape, list) and len(shape) <= 8
                    and all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in shape)):
                raise ValueError("bad array shape")
            data = base64.b64decode(obj["$a"], validate=True)
            count = int(np.prod(shape, dtype=np.int64))
            if count * dt.itemsize != len(data):
                raise ValueError("array data does not match its shape")
            return np.frombuffer(data, dtype=dt).reshape(shape).copy()
    raise ValueError(f"unexpected value in reply: {type(obj).__name__}")


# ---------------------------------------------------------------- launching

@functools.lru_cache(maxsize=1)
def namespace_flags():
    """The ``unshare`` flags that work on this machine, or None (fallback mode)."""
    if sys.platform != "linux" or shutil.which("unshare") is None:
        return None
    base = ["--mount", "--pid", "--fork", "--kill-child", "--mount-proc"]
    if os.geteuid() != 0:
        base = ["--user", "--map-root-user"] + base
    for flags in (base + ["--net"], base):
        try:
            ok = subprocess.run(["unshare", *flags, "sh", "-c", "mount -n -t tmpfs none /tmp"],
                                capture_output=True, timeout=20).returncode == 0
        except (OSError, subprocess.TimeoutExpired):
            ok = False
        if ok:
            return tuple(flags)
    return None


def _setup_script(python, runner_code, hidden, fds, mode):
    """Shell commands run as root inside the new namespaces, ending in the runner.

    Order matters: remount everything read-only; park the Python environment on a private
    mount; cover ``/tmp`` and the hidden folders with empty file systems; bring the
    environment back (read-only) if a cover buried it; put the decoy package in place of the
    reference; drop every capability and start the runner in an empty ``/tmp/work``.
    """
    q = shlex.quote
    venv = Path(sys.prefix).resolve()
    covered = [Path("/tmp"), *hidden]
    keep = any(_is_within(venv, c) for c in covered)
    lines = [
        "set -e",
        "for m in $(awk '{print $5}' /proc/self/mountinfo | sort -r); do "
        "mount -n -o remount,bind,ro \"$m\" 2>/dev/null || true; done",
    ]
    if keep:
        lines += [
            "STAGE=; for d in /run /mnt /media /srv /opt; do "
            "if [ -d \"$d\" ]; then STAGE=$d; break; fi; done; [ -n \"$STAGE\" ]",
            "mount -n -t tmpfs -o size=1m,mode=700 tmpfs \"$STAGE\"",
            "mkdir \"$STAGE/venv\"",
            f"mount -n --bind {q(str(venv))} \"$STAGE/venv\"",
        ]
    lines += ["mount -n -t tmpfs -o size=512m,mode=1777 tmpfs /tmp", "mkdir -p /tmp/work"]
    for h in hidden:
        lines.append(f"if [ -d {q(str(h))} ]; then mount -n -t tmpfs -o size=4m,mode=755 tmpfs "
                     f"{q(str(h))}; fi")
    if keep:
        lines += [f"mkdir -p {q(str(venv))}",
                  f"mount -n --move \"$STAGE/venv\" {q(str(venv))}",
                  f"mount -n -o remount,bind,ro {q(str(venv))}",
                  "umount -n \"$STAGE\""]
    pkg = q(str(PACKAGE_DIR))
    lines += [
        f"mountpoint -q {pkg} || mount -n -t tmpfs -o size=1m,mode=755 tmpfs {pkg} 2>/dev/null "
        f"|| mkdir -p {pkg}",
        f"cat > {pkg}/__init__.py <<'MLCOURSE_DECOY'\n{DECOY}MLCOURSE_DECOY",
        f"mount -n -o remount,ro {pkg} 2>/dev/null || true",
    ]
    for h in hidden:  # (/tmp stays writable: it is the student's scratch space)
        lines.append(f"if mountpoint -q {q(str(h))}; then mount -n -o remount,ro {q(str(h))}; fi")
    lines += [
        "cd /tmp/work",
        # Not `exec`: the shell stays PID 1 of the namespace, so the student's process is an
        # ordinary one (signals it sends itself are delivered) and dies with the namespace.
        "setpriv --no-new-privs --inh-caps=-all --ambient-caps=-all --bounding-set=-all "
        f"{q(python)} -I -c {q(runner_code)} {fds[0]} {fds[1]} {mode}",
    ]
    return "\n".join(lines)


def _is_within(path, parent):
    try:
        Path(path).resolve().relative_to(Path(parent).resolve())
        return True
    except ValueError:
        return False


def _limits(memory_mb):
    def apply():
        if memory_mb:
            limit = int(memory_mb) * 2**20
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        resource.setrlimit(resource.RLIMIT_FSIZE, (256 * 2**20, 256 * 2**20))
    return apply


class Sandbox:
    """One student's notebook process. Use :meth:`exec_cell` and :meth:`call`."""

    def __init__(self, hidden=(), memory_mb=4096, startup_timeout=60, isolate=True):
        self.hidden = [Path(h).resolve() for h in hidden]
        self.memory_mb = memory_mb
        self.startup_timeout = startup_timeout
        self.isolate = isolate
        self.proc = None
        self.events = []
        self._log = tempfile.TemporaryFile()
        self.mode = None

    # -- lifecycle
    def start(self):
        to_child_r, to_child_w = os.pipe()
        from_child_r, from_child_w = os.pipe()
        runner_code = RUNNER.read_text()
        env = {"PATH": "/usr/bin:/bin", "HOME": "/tmp/work", "LANG": "C.UTF-8",
               "MPLBACKEND": "Agg", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
               "MKL_NUM_THREADS": "1", "PYTHONHASHSEED": "0", "MPLCONFIGDIR": "/tmp/work/.mpl",
               "IPYTHONDIR": "/tmp/work/.ipython"}
        flags = namespace_flags() if self.isolate else None
        scratch = None
        if flags is not None:
            self.mode = "namespace"
            script = _setup_script(sys.executable, runner_code, self.hidden,
                                   (to_child_r, from_child_w), "namespace")
            cmd = ["unshare", *flags, "sh", "-c", script]
            cwd = "/"
        else:
            self.mode = "fallback"
            scratch = tempfile.mkdtemp(prefix="mlcourse-sandbox-")
            env.update(HOME=scratch, MPLCONFIGDIR=scratch, IPYTHONDIR=scratch)
            cmd = [sys.executable, "-I", "-c", runner_code, str(to_child_r), str(from_child_w),
                   "fallback"]
            cwd = scratch
        self._scratch = scratch
        self.proc = subprocess.Popen(
            cmd, stdin=subprocess.DEVNULL, stdout=self._log, stderr=self._log, cwd=cwd, env=env,
            pass_fds=(to_child_r, from_child_w), start_new_session=True,
            preexec_fn=_limits(self.memory_mb),
        )
        os.close(to_child_r)
        os.close(from_child_w)
        self._w = to_child_w
        self._r = from_child_r
        self._rbuf = b""
        reply = self._receive(time.monotonic() + self.startup_timeout)
        if reply.get("event") != "ready":
            self.kill()
            raise SandboxError("protocol", "the notebook process did not start")
        return self

    def kill(self):
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait()
        for fd in ("_w", "_r"):
            if getattr(self, fd, None) is not None:
                try:
                    os.close(getattr(self, fd))
                except OSError:
                    pass
                setattr(self, fd, None)
        if getattr(self, "_scratch", None):
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None

    close = kill

    def output(self, limit=20000):
        """What the notebook printed to stdout/stderr (at most ``limit`` characters)."""
        self._log.seek(0)
        text = self._log.read(limit + 1).decode("utf-8", "replace")
        return text if len(text) <= limit else text[:limit] + "\n[... output cut ...]"

    # -- protocol
    def _send(self, obj):
        data = json.dumps(obj).encode()
        try:
            os.write(self._w, struct.pack(">I", len(data)))
            view = memoryview(data)
            while view:
                n = os.write(self._w, view)
                view = view[n:]
        except (BrokenPipeError, OSError):
            raise self._death() from None

    def _death(self):
        try:
            code = self.proc.wait(timeout=5) if self.proc else None
        except subprocess.TimeoutExpired:
            code = None
        self.kill()
        if code is not None and self.mode == "namespace" and code > 128:
            code = -(code - 128)  # the shell reports a signal as 128 + its number
        if code is not None and code < 0:
            try:
                sig = signal.Signals(-code).name
            except ValueError:
                sig = str(-code)
            return SandboxError("died", f"was killed by signal {sig}")
        return SandboxError("died", f"exited (status {code})")

    def _read_some(self, deadline):
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                self.kill()
                raise SandboxError("timeout", "timed out")
            ready, _, _ = select.select([self._r], [], [], min(left, 1.0))
            if ready:
                chunk = os.read(self._r, 1 << 20)
                if not chunk:
                    raise self._death()
                return chunk

    def _receive(self, deadline):
        while len(self._rbuf) < 4:
            self._rbuf += self._read_some(deadline)
        (n,) = struct.unpack(">I", self._rbuf[:4])
        if n > MAX_MESSAGE:
            self.kill()
            raise SandboxError("protocol", "the notebook's process sent an oversized reply")
        while len(self._rbuf) < 4 + n:
            self._rbuf += self._read_some(deadline)
        data, self._rbuf = self._rbuf[4:4 + n], self._rbuf[4 + n:]
        try:
            obj = json.loads(data)
        except ValueError:
            self.kill()
            raise SandboxError("protocol", "the notebook's process sent malformed data") from None
        if not isinstance(obj, dict):
            self.kill()
            raise SandboxError("protocol", "the notebook's process sent malformed data")
        return obj

    def _request(self, obj, timeout):
        deadline = time.monotonic() + timeout
        self._send(obj)
        while True:
            reply = self._receive(deadline)
            if "event" in reply:
                self.events.append(str(reply["event"])[:50])
                continue
            return reply

    @staticmethod
    def _warnings(reply):
        w = reply.get("warnings", [])
        return [str(x)[:300] for x in w[:20]] if isinstance(w, list) else []

    @staticmethod
    def _remote_error(reply):
        mro = reply.get("exc_mro", [])
        if not isinstance(mro, list):
            mro = []
        return RemoteError(str(reply.get("exc_type", "Exception"))[:100],
                           [str(m)[:100] for m in mro[:30]], str(reply.get("message", ""))[:1000])

    def exec_cell(self, source, timeout):
        """Run one cell. Returns ``(error or None, warnings)``; raises SandboxError."""
        reply = self._request({"op": "exec", "source": source}, timeout)
        return (None if reply.get("ok") is True else self._remote_error(reply)), self._warnings(reply)

    def call(self, name, args, kwargs, timeout):
        """Call the notebook's function ``name``; returns ``(value, warnings)``.

        Raises :class:`RemoteError` when the student's function raised, and
        :class:`SandboxError` when the process timed out, died or sent garbage.
        """
        reply = self._request({"op": "call", "name": name, "args": encode(list(args)),
                               "kwargs": encode(dict(kwargs))}, timeout)
        warnings_ = self._warnings(reply)
        if reply.get("ok") is not True:
            err = self._remote_error(reply)
            err.warnings = warnings_
            raise err
        try:
            return decode(reply.get("value")), warnings_
        except (ValueError, TypeError, KeyError) as exc:
            raise SandboxError("protocol", f"the function's return value could not be read ({exc})") from None
