"""A fork server: one process imports what a job needs once, then forks a fresh child per job.

The grader's reading of student notebooks (:mod:`.analysis`) runs each notebook in its own child
with its own limits; starting a Python process and importing the Markdown, HTML and notebook
libraries for every student would cost about a second each, so :class:`Server` starts one
process that imports them (``preload``) and forks a child per request. A child writes its pid,
reads its request to the end, and writes what the job function (``work``, named as
``"module:function"``, taking the request's bytes and returning the reply's) returns. The job
function sets the child's own limits. The grader waits on pipes, never holding its global lock.
"""

from __future__ import annotations

import json
import os
import resource
import struct
import threading
import time


def limit_memory(extra_mb: int) -> None:
    """Cap this process's address space at what it uses now plus ``extra_mb``."""
    try:
        with open("/proc/self/statm") as fh:
            used = int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        used = 0
    limit = used + extra_mb * 2**20
    try:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (ValueError, OSError):
        pass


def _read_all(fd):
    chunks = []
    while True:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def _write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def write_by(fd: int, data: bytes, deadline: float) -> bool:
    """Write ``data`` to the pipe ``fd`` by ``deadline``; whether it was all written."""
    import select

    os.set_blocking(fd, False)
    view = memoryview(data)
    while view:
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        _, ready, _ = select.select([], [fd], [], left)
        if ready:
            try:
                view = view[os.write(fd, view):]
            except BlockingIOError:
                continue
    return True


def _child(work, request_fd, reply_fd):
    """One forked child: its pid, then the request, the job and its answer."""
    _write_all(reply_fd, struct.pack(">I", os.getpid()))
    message = _read_all(request_fd)
    os.close(request_fd)
    _write_all(reply_fd, work(message))


def serve(control_fd: int, preload: list[str], work: str) -> None:
    """The fork server: imports ``preload`` once, then forks one child per request that runs
    ``work`` (``"module:function"``).

    Messages on the control socket: ``b"R"`` with two file descriptors (the request to read,
    the reply to write: the child's), or ``b"K" + pid`` (kill that child if it still runs; the
    server is its parent, so the pid cannot have been reused). EOF: the grader is gone.
    """
    import importlib
    import select
    import signal
    import socket

    for name in preload:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 (a missing optional module is imported when used)
            pass
    module, _, function = work.partition(":")
    job = getattr(importlib.import_module(module), function)
    control = socket.socket(fileno=control_fd)
    live = set()
    while True:
        _reap(live)
        ready, _, _ = select.select([control], [], [], 1.0)
        if not ready:
            continue
        try:
            message, fds, _, _ = socket.recv_fds(control, 16, 2)
        except OSError:
            message, fds = b"", []
        if not message:
            for pid in live:
                os.kill(pid, signal.SIGKILL)
            return
        if message[:1] == b"K":
            pid = int.from_bytes(message[1:9], "big")
            if pid in live:
                os.kill(pid, signal.SIGKILL)
        elif message[:1] == b"R" and len(fds) == 2:
            pid = _fork_job(job, control, fds)
            if pid is not None:
                live.add(pid)
        for fd in fds:
            os.close(fd)


def _reap(live):
    """Forget the children of ``live`` that have ended (all of them if none is left)."""
    while live:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            live.clear()
            return
        if pid == 0:
            return
        live.discard(pid)


def _fork_job(job, control, fds):
    """Fork a child that runs ``job`` on the request and reply descriptors ``fds`` and exits;
    its pid, or None when no process is to spare (the grader sees the reply pipe close)."""
    try:
        pid = os.fork()
    except OSError:
        return None
    if pid == 0:
        code = 1
        try:
            control.close()
            _child(job, *fds)
            code = 0
        finally:
            os._exit(code)
    return pid


class Server:
    """The grader's handle on a fork server (started on first use): ``preload`` is imported
    once, ``work`` (``"module:function"``) answers each request in a fresh child, and a reply
    longer than ``max_reply`` bytes is refused (the child is killed)."""

    def __init__(self, preload: list[str], work: str, max_reply: int) -> None:
        self._preload, self._work, self._max_reply = list(preload), work, max_reply
        self._lock = threading.Lock()
        self._proc = None
        self._control = None

    def _start(self):
        import socket
        import subprocess
        import sys

        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        code = ("import json, sys; sys.path[:0] = json.loads(sys.argv[2]); "
                "from mlcourse_utils.grading.sandbox.forkserver import serve; "
                "serve(int(sys.argv[1]), json.loads(sys.argv[3]), sys.argv[4])")
        env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "TMPDIR",
                                                             "HOME", "SYSTEMROOT")}
        self._proc = subprocess.Popen(
            [sys.executable, "-I", "-c", code, str(theirs.fileno()),
             json.dumps([p for p in sys.path if p]), json.dumps(self._preload),
             self._work],
            pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL, env=env,
            start_new_session=True)
        theirs.close()
        self._control = ours

    def warm_up(self) -> None:
        """Start the server now (it imports for about a second) rather than at first use."""
        with self._lock:
            if self._proc is None or self._proc.poll() is not None:
                self._start()

    def _send(self, message, fds=()):
        import socket

        with self._lock:
            for attempt in (1, 2):
                if self._proc is None or self._proc.poll() is not None:
                    self._start()
                try:
                    socket.send_fds(self._control, [message], list(fds))
                    return
                except OSError:
                    if attempt == 2:
                        raise
                    self._proc = None

    def run(self, payload: bytes, deadline: float) -> tuple[bytes | None, bool]:
        """Have a child answer ``payload`` by ``deadline``: ``(answer or None, timed out)``."""
        import select

        request_r, request_w = os.pipe()
        reply_r, reply_w = os.pipe()
        try:
            self._send(b"R", (request_r, reply_w))
        finally:
            os.close(request_r)
            os.close(reply_w)
        pid, data, timed_out = None, bytearray(), False
        try:
            try:  # the child reads it at once (its first act), but the notebook is up to 16 MB
                timed_out = not write_by(request_w, payload, deadline)
            except OSError:
                pass
            os.close(request_w)  # (a child cut short reads the end of its request and stops)
            request_w = None
            while not timed_out:
                left = deadline - time.monotonic()
                if left <= 0:
                    timed_out = True
                    break
                ready, _, _ = select.select([reply_r], [], [], left)
                if not ready:
                    continue
                chunk = os.read(reply_r, 1 << 20)
                if not chunk:
                    break
                data += chunk
                if pid is None and len(data) >= 4:
                    pid = struct.unpack(">I", data[:4])[0]
                if len(data) > self._max_reply + 8:
                    break
        finally:
            if request_w is not None:
                os.close(request_w)
            os.close(reply_r)
            if pid is not None and (timed_out or len(data) > self._max_reply + 8):
                self._send(b"K" + pid.to_bytes(8, "big"))
        if timed_out or len(data) < 8 or len(data) > self._max_reply + 8:
            return None, timed_out
        return bytes(data[4:]), False
