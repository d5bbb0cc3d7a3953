"""Starting one student's sandboxed process and talking to it (the grader's side).

One sandbox is one process running ``runner.py`` for one student's notebook. Where
Linux namespaces can be made (``unshare``; as root, or as a user through a user namespace):

* new mount, PID, IPC, UTS and network namespaces: no other process is visible, no network,
  and SysV shared memory dies with the sandbox;
* a **minimal root** built with ``pivot_root``: a read-only tmpfs holding only ``/usr`` (and
  ``/bin``, ``/lib`` ... where they are not links into it), the Python environment, the loader's
  cache, a small ``/dev``, ``/proc``, and fresh size-capped tmpfs mounts for ``/tmp`` and
  ``/dev/shm``. Nothing else of the host is there: not the repository (hidden tests,
  solutions), not the submissions, not the grader's output, not ``/root`` or ``/home``. The
  reference package is replaced by a decoy that reports its import;
* as an **unprivileged user** (``nobody``, where the grader is root) with every capability
  dropped and ``no_new_privs``; the runner then installs a seccomp filter (no new namespaces,
  mounts, ptrace, keyrings, BPF, io_uring, ...);
* **resource limits**: a cgroup per sandbox (``cgroups.py``: memory including shared memory
  and tmpfs, processes and threads, one CPU's worth of time) where cgroups can be written, and
  always rlimits (address space ``--memory``, file size, open files, no core dumps).

Without namespaces (``isolate=False`` or no ``unshare``) the runner starts as a plain
``python -I`` with the rlimits and an import hook that refuses the reference package (a
student can remove that hook: see the README's "Limits").

Requests and replies (``protocol.py``) travel over two pipes; every read and write has a
deadline (non-blocking I/O with ``select``), every request carries an id that its reply must
echo, and only plain data is decoded: the student's objects never reach the grader. What the
notebook prints goes to a third pipe that the grader drains while it waits, keeping the first
:data:`OUTPUT_KEPT` bytes: no file of the host is open to the sandbox, so nothing it does
(writing, ``fallocate``) can grow the host's disk.
"""

from __future__ import annotations

import functools
import itertools
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
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from . import cgroups
from .protocol import (
    MAX_EVENTS,
    MAX_MESSAGE,
    RemoteError,
    SandboxError,
    decode,
    encode,
    parse_reply,
)
from .text import clean_text

RUNNER = Path(__file__).with_name("runner.py")
#: The reference package, replaced by a decoy inside the sandbox.
PACKAGE_DIR = Path(__file__).resolve().parent.parent

#: Per-sandbox caps besides --memory: processes and threads, open files, bytes per file.
PIDS_MAX = 128
NOFILE_MAX = 256
FSIZE_MAX = 64 * 2**20
#: The unprivileged user that runs student code where the grader is root.
NOBODY = 65534
#: Bytes of the notebook's printed output kept (the rest is read and dropped).
OUTPUT_KEPT = 80_000
#: numpy's floating-point error categories that a call carries into the sandbox.
ERRSTATE_KEYS = ("divide", "over", "under", "invalid")

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


# ---------------------------------------------------------------- launching

def _probe(flags):
    script = "mount -n -t tmpfs none /tmp && test -x \"$(command -v pivot_root)\""
    try:
        return subprocess.run(["unshare", *flags, "sh", "-c", script], capture_output=True,
                              timeout=20).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


@functools.lru_cache(maxsize=1)
def namespace_flags() -> tuple[str, ...] | None:
    """The ``unshare`` flags that work on this machine, or None (fallback mode)."""
    if sys.platform != "linux" or shutil.which("unshare") is None:
        return None
    base = ["--mount", "--pid", "--fork", "--kill-child", "--ipc", "--uts"]
    if os.geteuid() != 0:
        base = ["--user", "--map-root-user"] + base
    for flags in (base + ["--net"], base):
        if _probe(flags):
            return tuple(flags)
    return None


def _environment_paths(hidden):
    """Host folders the runner needs, read-only in the sandbox: the system and Python."""
    paths = {Path("/usr")}
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.isdir(top) and not os.path.islink(top):
            paths.add(Path(top))
    for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
              Path(os.path.realpath(sys.executable)).parent.parent):
        paths.add(Path(p))
    for entry in sys.path:
        if entry and os.path.isdir(entry) and \
                ("site-packages" in entry or "dist-packages" in entry):
            paths.add(Path(entry))
    # The interpreter and its libraries are needed even inside a hidden folder (a .venv in the
    # repository); anything else inside one stays out.
    env = {Path(p).resolve() for p in (sys.prefix, sys.base_prefix)}
    keep = set()
    for p in paths:
        p = p.resolve()
        if any(_is_within(p, h) for h in hidden) and not any(_is_within(p, e) for e in env):
            continue
        keep.add(p)
    # Drop folders inside another kept folder (their content is already there).
    return sorted(p for p in keep if not any(q != p and _is_within(p, q) for q in keep))


def _setup_script(root, python, runner_code, fds, binds, uid, mode="namespace"):
    """Shell commands run as root inside the new namespaces, ending in the runner.

    Builds the minimal root on a tmpfs at ``root`` (an empty folder of the host, used as a
    mount point only inside this mount namespace), switches to it with ``pivot_root``, and
    starts the runner as ``uid`` without capabilities.
    """
    q = shlex.quote
    r = q(str(root))
    pkg = str(PACKAGE_DIR)
    # Each external command is a process started per sandbox: files are created with the
    # shell's own `: > FILE` and `printf`, and folders several to one `mkdir -p`. Bind targets
    # are never nested (see _environment_paths), so making them all before the first bind is
    # the same as making each before its own; those under /tmp are made once it is mounted.
    in_tmp = [src for src in binds if _is_within(src, "/tmp")]
    early = " ".join(f"{r}{q(str(src))}" for src in binds if src not in in_tmp)
    lines = [
        "set -e",
        "PATH=/usr/sbin:/usr/bin:/sbin:/bin",
        "mount --make-rprivate /",
        f"mount -n -t tmpfs -o size=16m,mode=755 mlcourse-root {r}",
        f"mkdir -p {r}/tmp {r}/proc {r}/dev {r}/etc {r}/.old {early}".rstrip(),
        # /tmp first: the environment may live under /tmp (CI clones there) and is bound on top.
        f"mount -n -t tmpfs -o size=512m,mode=1777,nosuid,nodev mlcourse-tmp {r}/tmp",
        f"mkdir -m 700 {r}/tmp/work" if uid is None else
        f"install -d -m 700 -o {uid} -g {uid} {r}/tmp/work",
    ]
    if in_tmp:
        lines.append("mkdir -p " + " ".join(f"{r}{q(str(src))}" for src in in_tmp))
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(top):
            lines.append(f"ln -s {q(os.readlink(top))} {r}{top}")
    for src in binds:
        s = q(str(src))
        lines += [f"mount -n --bind {s} {r}{s}",
                  f"mount -n -o remount,bind,ro,nosuid,nodev {r}{s}"]
    for f in ("/etc/ld.so.cache", "/etc/localtime"):
        if os.path.isfile(f):
            lines += [f": > {r}{f}", f"mount -n --bind {f} {r}{f}",
                      f"mount -n -o remount,bind,ro {r}{f}"]
    lines += [
        f"echo 'root:x:0:0::/:/bin/sh' > {r}/etc/passwd",
        f"echo 'nobody:x:{NOBODY}:{NOBODY}:nobody:/tmp/work:/bin/sh' >> {r}/etc/passwd",
        f"printf 'root:x:0:\\nnogroup:x:{NOBODY}:\\n' > {r}/etc/group",
        f"mount -n -t proc -o nosuid,nodev,noexec proc {r}/proc",
        f"mount -n -t tmpfs -o size=1m,mode=755,nosuid dev {r}/dev",
        f"for d in null zero full random urandom; do : > {r}/dev/$d; "
        f"mount -n --bind /dev/$d {r}/dev/$d; done",
        f"mkdir {r}/dev/shm",
        f"mount -n -t tmpfs -o size=64m,mode=1777,nosuid,nodev shm {r}/dev/shm",
        # The reference package: a decoy where the import system would find it.
        f"mkdir -p {r}{q(pkg)}",
        f"mount -n -t tmpfs -o size=1m,mode=755 mlcourse-decoy {r}{q(pkg)}",
        f"printf '%s' {q(DECOY)} > {r}{q(pkg)}/__init__.py",
        f"mount -n -o remount,ro {r}{q(pkg)}",
        f"mount -n -o remount,ro,nosuid,nodev {r}",
        f"cd {r}",
        "pivot_root . .old",
        "umount -n -l /.old",
        "cd /tmp/work",
    ]
    change_user = f"--reuid={uid} --regid={uid} --clear-groups " if uid is not None else ""
    # Not `exec`: the shell stays PID 1 of the namespace, so the student's process is an
    # ordinary one (signals it sends itself are delivered) and everything dies with the shell.
    lines.append(
        f"setpriv {change_user}--no-new-privs --inh-caps=-all --ambient-caps=-all "
        f"--bounding-set=-all {q(python)} -I -c {q(runner_code)} {fds[0]} {fds[1]} {mode}")
    return "\n".join(lines)


def _is_within(path, parent):
    try:
        Path(path).resolve().relative_to(Path(parent).resolve())
        return True
    except ValueError:
        return False


def _rlimits(memory_mb, nproc=None):
    """``[(resource, soft_and_hard)]`` applied to the sandbox's processes."""
    limits = [(resource.RLIMIT_CORE, 0), (resource.RLIMIT_FSIZE, FSIZE_MAX),
              (resource.RLIMIT_NOFILE, NOFILE_MAX)]
    if memory_mb:
        limits.append((resource.RLIMIT_AS, int(memory_mb) * 2**20))
    if nproc:
        limits.append((resource.RLIMIT_NPROC, nproc))
    return limits


_PRLIMIT_NAMES = {resource.RLIMIT_CORE: "core", resource.RLIMIT_FSIZE: "fsize",
                  resource.RLIMIT_NOFILE: "nofile", resource.RLIMIT_AS: "as",
                  resource.RLIMIT_NPROC: "nproc"}


def _apply_rlimits(limits):
    def apply():
        for res, value in limits:
            resource.setrlimit(res, (value, value))
    return apply


class _Process:
    """The sandboxed process's start and stop: its command (namespaces with a minimal root, or
    the fallback), its limits (rlimits, a cgroup), its folders, and why it ended."""

    def __init__(self, hidden, memory_mb, isolate, use_cgroups, probe):
        self.hidden = hidden
        self.memory_mb = memory_mb
        self.isolate = isolate
        self.use_cgroups = use_cgroups
        self.probe = probe
        self.proc = None
        self.mode = None
        self.cgroup = None
        self.oom = 0
        self._root = None
        self._scratch = None

    def spawn(self, to_child_r: int, from_child_w: int, out_w: int) -> None:
        """Start the runner: it reads requests from ``to_child_r``, writes replies to
        ``from_child_w``, and prints to ``out_w`` (the caller closes its copies)."""
        runner_code = RUNNER.read_text()
        env = {"PATH": "/usr/bin:/bin", "HOME": "/tmp/work", "LANG": "C.UTF-8",
               "MPLBACKEND": "Agg", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
               "MKL_NUM_THREADS": "1", "PYTHONHASHSEED": "0", "MPLCONFIGDIR": "/tmp/work/.mpl",
               "IPYTHONDIR": "/tmp/work/.ipython"}
        flags = namespace_flags() if self.isolate else None
        self.cgroup = cgroups.create(self.memory_mb, PIDS_MAX) if self.use_cgroups else None
        joins = self.cgroup.procs_files() if self.cgroup else []
        # Without a pids cgroup, cap processes per user (shared by the sandboxes of one run).
        limits = _rlimits(self.memory_mb, None if self.cgroup else PIDS_MAX * 4)
        preexec = None
        if flags is not None:
            self.mode = "namespace"
            self._root = tempfile.mkdtemp(prefix="mlcourse-root-")
            uid = NOBODY if os.geteuid() == 0 else None
            script = _setup_script(self._root, sys.executable, runner_code,
                                   (to_child_r, from_child_w),
                                   _environment_paths(self.hidden), uid,
                                   "namespace-probe" if self.probe else "namespace")
            inner = ["unshare", *flags, "sh", "-c", script]
            cwd = "/"
        else:
            self.mode = "fallback"
            self._scratch = tempfile.mkdtemp(prefix="mlcourse-sandbox-")
            env.update(HOME=self._scratch, MPLCONFIGDIR=self._scratch, IPYTHONDIR=self._scratch)
            inner = [sys.executable, "-I", "-c", runner_code, str(to_child_r), str(from_child_w),
                     "fallback-probe" if self.probe else "fallback"]
            cwd = self._scratch
        prlimit = shutil.which("prlimit")
        if prlimit:
            # Limits and the cgroup are set by small programs before exec, not by a Python
            # preexec_fn (unsafe in a process that grades with threads).
            inner = [prlimit, *(f"--{_PRLIMIT_NAMES[res]}={v}" for res, v in limits), "--",
                     *inner]
        else:
            preexec = _apply_rlimits(limits)
        if joins:  # join the cgroup, then become the sandbox: `sh -c SCRIPT sh FILE...`
            cmd = ["sh", "-c", 'for f in "$@"; do echo $$ > "$f" || exit 111; done; exec '
                   + shlex.join(inner), "sh", *joins]
        else:
            cmd = inner
        self.proc = subprocess.Popen(
            cmd, stdin=subprocess.DEVNULL, stdout=out_w, stderr=out_w, cwd=cwd, env=env,
            pass_fds=(to_child_r, from_child_w), start_new_session=True, preexec_fn=preexec,
        )

    def stop(self) -> None:
        """Kill the process (its session, and what left it but not its cgroup) and reap it."""
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if self.cgroup is not None:
            self.cgroup.kill()  # processes that left the session, if any
        if self.proc is not None:
            self.proc.wait()

    def clean_up(self) -> None:
        """Remove the cgroup (noting whether memory ran out) and the folders, after
        :meth:`stop`."""
        if self.cgroup is not None:
            self.oom = self.cgroup.memory_events()
            self.cgroup.remove()
            self.cgroup = None
        for attr in ("_scratch", "_root"):
            folder = getattr(self, attr, None)
            if folder:
                if attr == "_root":
                    try:
                        os.rmdir(folder)  # an empty mount point, never mounted on the host
                    except OSError:
                        pass
                else:
                    shutil.rmtree(folder, ignore_errors=True)
                setattr(self, attr, None)

    def death(self, kill: Any) -> SandboxError:
        """Why the process ended, as the error to raise; ``kill()`` cleans everything up."""
        try:
            code = self.proc.wait(timeout=5) if self.proc else None
        except subprocess.TimeoutExpired:
            code = None
        oom_before = self.cgroup.memory_events() if self.cgroup else 0
        kill()
        if code is not None and self.mode == "namespace" and code > 128:
            code = -(code - 128)  # the shell reports a signal as 128 + its number
        if max(oom_before, self.oom) > 0:
            return SandboxError("memory", f"was stopped for exceeding the memory limit of "
                                          f"{self.memory_mb} MB")
        if code is not None and code < 0:
            try:
                sig = signal.Signals(-code).name
            except ValueError:
                sig = str(-code)
            return SandboxError("died", f"was killed by signal {sig}")
        return SandboxError("died", f"exited (status {code})")


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
        self._ids = itertools.count(1)

    def output(self, limit: int) -> str:
        """What the notebook printed to stdout/stderr (at most ``limit`` characters)."""
        self.drain()
        text = clean_text(bytes(self._output[:4 * limit + 4]), limit).replace("\\x0d", "")
        if self._dropped:
            text += f"\n[... {self._dropped} more bytes of output not kept]"
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
    are :class:`_Process`'s job, the messages :class:`_Channel`'s.
    """

    def __init__(self, hidden: Iterable[Path | str] = (), memory_mb: int = 4096,
                 startup_timeout: float = 60, isolate: bool = True,
                 use_cgroups: bool = True, probe: bool = False) -> None:
        self.hidden = [Path(h).resolve() for h in hidden]
        self.memory_mb = memory_mb
        self.startup_timeout = startup_timeout
        # probe: start only far enough to report the defences, then exit
        self._process = _Process(self.hidden, memory_mb, isolate, use_cgroups, probe)
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
        to_child_r, to_child_w = os.pipe()
        from_child_r, from_child_w = os.pipe()
        out_r, out_w = os.pipe()
        try:
            self._process.spawn(to_child_r, from_child_w, out_w)
        finally:
            for fd in (to_child_r, from_child_w, out_w):
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
        watch adds ``"monitor WHAT"`` (``runner.py``, "watching forbidden calls").
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
        # The test's floating-point error mode (e.g. ``with np.errstate(over="raise")`` around a
        # stability check) holds in the student's process too, as it would in their notebook.
        errstate = {k: v for k, v in np.geterr().items() if k in ERRSTATE_KEYS}
        reply = self._request({"op": "call", "name": name, "args": encode(list(args)),
                               "kwargs": encode(dict(kwargs)), "errstate": errstate},
                              timeout, deadline)
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
    "seccomp": "a seccomp filter: no new namespaces, mounts, ptrace, keyrings, BPF, io_uring",
    "memory_cgroup": "a memory cgroup: --memory covers shared memory, memfd and tmpfs",
    "pids_cgroup": "a pids cgroup: processes and threads capped per student",
    "cpu_cgroup": "a CPU cgroup: one core per student",
    "scratch_filesystem": "writable space only on capped tmpfs mounts, never the host's disk",
    "rlimits": "rlimits on address space, file size, open files and core dumps",
    "output_pipe": "printed output through a drained pipe, never a host file",
    "bounded_reading": "the notebook is read in a child process with time and memory limits",
}


def defences(memory_mb: int = 1024, hidden: Iterable[Path | str] = ()) -> dict[str, bool]:
    """Which of :data:`DEFENCES` a sandbox gets on this machine, found by starting one.

    Without namespaces, cgroups or root, the sandbox still runs, with fewer defences: this
    says which (``mlcourse grade`` prints it, records it in ``results.json`` and, with
    ``--require-isolation``, refuses to grade when one is missing).
    """
    flags = namespace_flags()
    box = Sandbox(hidden=hidden, memory_mb=memory_mb, startup_timeout=60, probe=True)
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
