"""Talking to one student's sandboxed process (the grader's side).

One sandbox is one process running the runner (``runner/``) for one student's notebook, started
and stopped by ``isolation.py`` (namespaces with a minimal root, an unprivileged user, seccomp,
a cgroup and rlimits; or the fallback without namespaces).

Requests and replies (``protocol.py``) travel over two pipes; every read and write has a
deadline (non-blocking I/O with ``select``), every request carries an id that its reply must
echo, and only plain data is decoded: the student's objects never reach the grader. What the
notebook prints goes to a third pipe that the grader drains while it waits, keeping the first
:data:`OUTPUT_KEPT` bytes: no file of the host is open to the sandbox, so nothing it does
(writing, ``fallocate``) can grow the host's disk.
"""

from __future__ import annotations

import json
import os
import secrets
import select
import struct
import subprocess
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..protocol import (
    MAX_EVENTS,
    MAX_MESSAGE,
    RemoteError,
    SandboxError,
    decode,
    encode,
    parse_reply,
)
from ..text import clean_text, plural
from .isolation import Process, namespace_flags
from .root import NOBODY

#: Bytes of the notebook's printed output kept (the rest is read and dropped).
OUTPUT_KEPT = 80_000


class _Channel:
    """The request/reply protocol with the process: length-prefixed JSON over two pipes, every
    read and write within a deadline, each reply echoing its request's id, events collected,
    replies decoded as plain data, and the output pipe drained meanwhile (its first
    :data:`OUTPUT_KEPT` bytes kept). A timeout or garbage kills the sandbox ``box``."""

    def __init__(self, box, w, r, out):
        self.box = box
        self._w, self._r, self._out = w, r, out
        for fd in (self._w, self._r, self._out):
            os.set_blocking(fd, False)
        self._rbuf = bytearray()
        self._output = bytearray()
        self._dropped = 0
        # Unpredictable request ids: a reply the notebook forges on the pipe (its descriptor is
        # no secret) cannot stand in for the runner's, which follows the watch's last events.
        self._ids = iter(lambda: secrets.randbits(52), None)

    def output(self, limit: int) -> str:
        """What the notebook printed to stdout/stderr (at most ``limit`` characters)."""
        self.drain()
        text = clean_text(bytes(self._output[:4 * limit + 4]), limit).replace("\\x0d", "")
        if self._dropped:
            text += f"\n[... {plural(self._dropped, 'more byte')} of output not kept]"
        return text

    def close(self) -> None:
        for fd in ("_w", "_r", "_out"):
            if getattr(self, fd, None) is not None:
                try:
                    os.close(getattr(self, fd))
                except OSError:
                    pass
                setattr(self, fd, None)

    def _outputs(self):
        return [] if self._out is None else [self._out]

    def drain(self) -> None:
        """Read what the notebook printed so far (never blocks); keep the first OUTPUT_KEPT."""
        while self._out is not None:
            try:
                chunk = os.read(self._out, 1 << 16)
            except (BlockingIOError, OSError):
                return
            if not chunk:  # every writer closed it: stop watching it
                os.close(self._out)
                self._out = None
                return
            room = OUTPUT_KEPT - len(self._output)
            if room > 0:
                self._output += chunk[:room]
            self._dropped += max(0, len(chunk) - max(room, 0))

    def _send(self, obj, deadline):
        data = json.dumps(obj).encode()
        view = memoryview(struct.pack(">I", len(data)) + data)
        while view:
            left = deadline - time.monotonic()
            if left <= 0:
                self.box.kill()
                raise SandboxError("timeout", "timed out (it stopped reading its input)")
            try:
                readable, writable, _ = select.select(self._outputs(), [self._w], [],
                                                      min(left, 1.0))
                if readable:
                    self.drain()
                if writable:
                    view = view[os.write(self._w, view):]
            except BlockingIOError:
                continue
            except OSError:
                raise self.box._death() from None
            if self.box.proc.poll() is not None:
                raise self.box._death()

    def _read_some(self, deadline):
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                self.box.kill()
                raise SandboxError("timeout", "timed out")
            ready, _, _ = select.select([self._r, *self._outputs()], [], [], min(left, 1.0))
            if self._out is not None and self._out in ready:
                self.drain()
            if self._r in ready:
                try:
                    chunk = os.read(self._r, 1 << 20)
                except BlockingIOError:
                    continue
                if not chunk:
                    raise self.box._death()
                return chunk

    def receive(self, deadline: float) -> dict[str, Any]:
        """The next message, by ``deadline``; SandboxError for a timeout, death or garbage."""
        while len(self._rbuf) < 4:
            self._rbuf += self._read_some(deadline)
        (n,) = struct.unpack(">I", self._rbuf[:4])
        if n > MAX_MESSAGE:
            self.box.kill()
            raise SandboxError("protocol", "the notebook's process sent an oversized reply "
                                           f"({n} bytes; at most {MAX_MESSAGE})")
        while len(self._rbuf) < 4 + n:
            self._rbuf += self._read_some(deadline)
        data = bytes(self._rbuf[4:4 + n])
        del self._rbuf[:4 + n]
        try:
            return parse_reply(data)
        except ValueError as exc:
            self.box.kill()
            raise SandboxError("protocol", f"the notebook's process sent malformed data "
                                           f"({clean_text(exc, 200)})") from None

    def request(self, obj: dict[str, Any], timeout: float,
                deadline: float | None = None) -> dict[str, Any]:
        """Send one request and wait for the reply that carries its id."""
        limit = time.monotonic() + timeout
        deadline = min(limit, deadline) if deadline else limit
        request = next(self._ids)
        self._send({**obj, "id": request}, deadline)
        events = 0
        while True:
            reply = self.receive(deadline)
            if "event" in reply:
                events += 1
                if events > MAX_EVENTS:
                    self.box.kill()
                    raise SandboxError("protocol", "the notebook's process sent too many events")
                event = clean_text(reply["event"], 50)
                detail = reply.get("name", reply.get("what"))
                if isinstance(detail, str):  # a forbidden call, or what touched the watch on them
                    event = f"{event} {clean_text(detail, 200)}"
                self.box.events.append(event)
                continue
            if reply.get("id") != request:
                self.box.kill()
                raise SandboxError("protocol", "the notebook's process answered out of turn")
            return reply

    @staticmethod
    def warnings(reply: dict[str, Any]) -> list[str]:
        w = reply.get("warnings", [])
        return [clean_text(x, 300) for x in w[:20]] if isinstance(w, list) else []

    @staticmethod
    def remote_error(reply: dict[str, Any]) -> RemoteError:
        mro = reply.get("exc_mro", [])
        if not isinstance(mro, list):
            mro = []
        return RemoteError(clean_text(reply.get("exc_type", "Exception"), 100),
                           [clean_text(m, 100) for m in mro[:30]],
                           clean_text(reply.get("message", ""), 1000))


class Sandbox:
    """One student's notebook process. Use :meth:`exec_cell` and :meth:`call`.

    ``hidden`` lists host folders that must not be visible (the course repository, the
    submissions, the output): in namespace mode nothing of the host is visible but the system
    and the Python environment, and those are never taken from inside a hidden folder (except
    the environment itself, e.g. a ``.venv`` in the repository). The process's start and stop
    are :class:`~.isolation.Process`'s job, the messages :class:`_Channel`'s.
    """

    def __init__(self, hidden: Iterable[Path | str] = (), memory_mb: int = 4096,
                 startup_timeout: float = 60, isolate: bool = True,
                 use_cgroups: bool = True, probe: bool = False,
                 preload: Iterable[str] = ()) -> None:
        self.hidden = [Path(h).resolve() for h in hidden]
        self.memory_mb = memory_mb
        self.startup_timeout = startup_timeout
        # probe: start only far enough to report the defences, then exit; preload: modules
        # (Assignment.preload) that a prepared image imports before forking sandboxes
        self._process = Process(self.hidden, memory_mb, isolate, use_cgroups, probe,
                                list(preload))
        self._channel = None
        self.events = []
        self.info = {}

    @property
    def proc(self) -> subprocess.Popen[bytes] | None:
        return self._process.proc

    @property
    def mode(self) -> str | None:
        """"namespace" or "fallback" once started."""
        return self._process.mode

    # -- lifecycle
    def start(self, deadline: float | None = None) -> Sandbox:
        """Start the process; ``deadline`` (a ``time.monotonic()`` value) caps the start-up."""
        for from_image in (True, False):  # (a failed fork from the image: from scratch)
            to_child_r, to_child_w = os.pipe()
            from_child_r, from_child_w = os.pipe()
            out_r, out_w = os.pipe()
            try:
                started = self._process.spawn(to_child_r, from_child_w, out_w, from_image)
            except BaseException:
                for fd in (to_child_w, from_child_r, out_r):
                    os.close(fd)
                raise
            finally:
                for fd in (to_child_r, from_child_w, out_w):
                    os.close(fd)
            if started:
                break
            for fd in (to_child_w, from_child_r, out_r):
                os.close(fd)
        self._channel = _Channel(self, to_child_w, from_child_r, out_r)
        limit = time.monotonic() + self.startup_timeout
        reply = self._channel.receive(min(limit, deadline) if deadline else limit)
        if reply.get("event") != "ready":
            self.kill()
            raise SandboxError("protocol", "the notebook process did not start")
        cgroup = self._process.cgroup
        self.info = {"seccomp": reply.get("seccomp") is True, "uid": reply.get("uid"),
                     "cgroup": cgroup.version if cgroup else None,
                     "cgroup_controllers": cgroup.controllers if cgroup else []}
        return self

    def kill(self) -> None:
        self._process.stop()
        if self._channel is not None:
            self._channel.drain()
            self._channel.close()
        self._process.clean_up()

    close = kill

    def output(self, limit: int = 20000) -> str:
        """What the notebook printed to stdout/stderr (at most ``limit`` characters)."""
        return self._channel.output(limit) if self._channel is not None else ""

    def _death(self):
        return self._process.death(self.kill)

    # -- requests
    def _request(self, obj, timeout, deadline=None):
        return self._channel.request(obj, timeout, deadline)

    _warnings = staticmethod(_Channel.warnings)
    _remote_error = staticmethod(_Channel.remote_error)

    def exec_cell(self, source: str, timeout: float,
                  deadline: float | None = None) -> tuple[RemoteError | None, list[str]]:
        """Run one cell. Returns ``(error or None, warnings)``; raises SandboxError."""
        reply = self._request({"op": "exec", "source": source}, timeout, deadline)
        error = None if reply.get("ok") is True else self._remote_error(reply)
        return error, self._warnings(reply)

    def monitor(self, names: Iterable[str], timeout: float,
                deadline: float | None = None) -> tuple[int, list[str]]:
        """Watch calls of ``names`` (qualified names or module prefixes) in the notebook's
        process; send it before any cell. Returns ``(functions replaced, prefixes watched)``.

        From then on, each call of a watched function adds the event ``"forbidden NAME"`` to
        :attr:`events` while the request that made it runs, and anything that could disable the
        watch adds ``"monitor WHAT"`` (``runner/watch_rules.py`` and its other parts).
        """
        reply = self._request({"op": "monitor", "names": sorted(set(names))}, timeout, deadline)
        if reply.get("ok") is not True:
            raise SandboxError("protocol", "the watch on forbidden calls could not be set up "
                                           f"({self._remote_error(reply)})")
        value = reply.get("value")
        if not (isinstance(value, list) and len(value) == 2 and isinstance(value[0], int)):
            raise SandboxError("protocol", "the watch on forbidden calls answered garbage")
        return value[0], [clean_text(p, 200) for p in value[1] if isinstance(p, str)]

    def call(self, name: str, args: Iterable[Any], kwargs: Mapping[str, Any], timeout: float,
             deadline: float | None = None) -> tuple[Any, list[str]]:
        """Call the notebook's function ``name``; returns ``(value, warnings)``.

        Raises :class:`RemoteError` when the student's function raised, and
        :class:`SandboxError` when the process timed out, died or sent garbage.
        """
        # No floating-point error mode of the grader's goes along: a warning in the student's
        # code stays a warning (runner/pipe.py records it), whatever np.errstate the test is in.
        reply = self._request({"op": "call", "name": name, "args": encode(list(args)),
                               "kwargs": encode(dict(kwargs))}, timeout, deadline)
        warnings_ = self._warnings(reply)
        if reply.get("ok") is not True:
            err = self._remote_error(reply)
            err.warnings = warnings_
            raise err
        try:
            return decode(reply.get("value")), warnings_
        except (ValueError, TypeError, KeyError) as exc:
            raise SandboxError("protocol", "the function's return value could not be read "
                                           f"({clean_text(exc, 200)})") from None


# ---------------------------------------------------------------- which defences hold here

#: Each defence a sandbox can have, and what it keeps a notebook from doing (for the report).
DEFENCES = {
    "namespaces": "mount, PID, IPC and UTS namespaces with a minimal root: no host file, no "
                  "other process",
    "network": "a network namespace: no network",
    "unprivileged_user": "student code runs as nobody, not as the grading user",
    "seccomp": "a seccomp filter: no new namespaces, mounts, ptrace, keyrings, BPF, io_uring, "
               "file watches or programs",
    "memory_cgroup": "a memory cgroup: --memory covers shared memory, memfd and tmpfs",
    "pids_cgroup": "a pids cgroup: processes and threads capped per student",
    "cpu_cgroup": "a CPU cgroup: one core per student",
    "scratch_filesystem": "writable space only on capped tmpfs mounts, never the host's disk",
    "rlimits": "rlimits on address space, file size, open files and core dumps",
    "output_pipe": "printed output through a drained pipe, never a host file",
    "bounded_reading": "the notebook is read in a child process with time and memory limits",
}


#: Each of :data:`DEFENCES` in plain words, read after "with" or "without" (what ``mlcourse
#: grade`` says about a missing one; ``--verbose`` and results.json keep the names).
IN_WORDS = {
    "namespaces": "a private view of the machine (no host files, no other processes)",
    "network": "a cut-off from the network",
    "unprivileged_user": "an unprivileged user",
    "seccomp": "a filter on dangerous system calls",
    "memory_cgroup": "a memory limit that counts shared memory",
    "pids_cgroup": "a cap on processes",
    "cpu_cgroup": "a limit of one CPU core",
    "scratch_filesystem": "scratch space kept off the host's disk",
    "rlimits": "limits on file size and open files",
    "output_pipe": "output through a drained pipe",
    "bounded_reading": "notebooks read under time and memory limits",
}


def defences(memory_mb: int = 1024, hidden: Iterable[Path | str] = (),
             preload: Iterable[str] = ()) -> dict[str, bool]:
    """Which of :data:`DEFENCES` a sandbox gets on this machine, found by starting one (from
    the prepared image where there is one, which then imports ``preload`` at once).

    Without namespaces, cgroups or root, the sandbox still runs, with fewer defences: this
    says which (``mlcourse grade`` prints it, records it in ``results.json`` and, with
    ``--require-isolation``, refuses to grade when one is missing).
    """
    flags = namespace_flags()
    box = Sandbox(hidden=hidden, memory_mb=memory_mb, startup_timeout=60, probe=True,
                  preload=preload)
    try:
        box.start()
        info, mode = dict(box.info), box.mode
    except SandboxError:
        info, mode = {}, None
    finally:
        box.kill()
    controllers = set(info.get("cgroup_controllers") or [])
    return {
        "namespaces": mode == "namespace",
        "network": mode == "namespace" and flags is not None and "--net" in flags,
        "unprivileged_user": mode == "namespace" and info.get("uid") == NOBODY,
        "seccomp": info.get("seccomp") is True,
        "memory_cgroup": "memory" in controllers,
        "pids_cgroup": "pids" in controllers,
        "cpu_cgroup": "cpu" in controllers,
        "scratch_filesystem": mode == "namespace",
        "rlimits": mode is not None,
        "output_pipe": mode is not None,
        "bounded_reading": True,
    }
