"""Starting and stopping one student's sandboxed process: its command, limits and folders.

Where Linux namespaces can be made (``unshare``; as root, or as a user through a user
namespace), the process gets:

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
  mounts, ptrace, keyrings, BPF, io_uring, file watches, ...);
* **resource limits**: a cgroup per sandbox (``cgroups.py``: memory including shared memory
  and tmpfs, processes and threads, one CPU's worth of time) where cgroups can be written, and
  always rlimits (address space ``--memory``, file size, open files, no core dumps).

Without namespaces (``isolate=False`` or no ``unshare``) the runner starts as a plain
``python -I`` with the rlimits and an import hook that refuses the reference package (a
student can remove that hook: see docs/grading-security.md, "Limits").

Talking to the process is ``channel.py``'s job, and the minimal root ``root.py``'s; this module
starts it, stops it, and says why it ended. :func:`stop_all` ends every sandbox of the grading
run at once (an interrupted run), with the prepared images and every cgroup.
"""

from __future__ import annotations

import functools
import os
import resource
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..protocol import SandboxError
from . import cgroups, zygote
from .root import NOBODY, _environment_paths, _setup_script
from .runner import runner_text

#: Per-sandbox caps besides --memory: processes and threads, open files, bytes per file.
PIDS_MAX = 128
NOFILE_MAX = 256
FSIZE_MAX = 64 * 2**20
#: The sandbox's whole environment (nothing of the grader's).
ENV = {"PATH": "/usr/bin:/bin", "HOME": "/tmp/work", "LANG": "C.UTF-8", "MPLBACKEND": "Agg",
       "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
       "PYTHONHASHSEED": "0", "MPLCONFIGDIR": "/tmp/work/.mpl",
       "IPYTHONDIR": "/tmp/work/.ipython"}


#: The processes started and not stopped yet; set once grading is interrupted (nothing starts).
_running: set[Process] = set()
_running_lock = threading.Lock()
_stopping = threading.Event()


def stop_all() -> None:
    """End every sandbox at once, for good: no sandbox starts after this (a start raises
    SandboxError); the prepared images (and every sandbox forked from them) and every
    sandbox started from scratch are killed; every cgroup is removed. For an interrupted
    grading run (Ctrl-C, SIGTERM); the threads grading students then fail fast."""
    _stopping.set()
    zygote.close_all()
    with _running_lock:
        processes = list(_running)
    for process in processes:  # (their own threads reap them)
        proc = process.proc
        if isinstance(proc, subprocess.Popen) and proc.returncode is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except OSError:
                pass
    cgroups.remove_all()


def interrupted() -> bool:
    """Whether :func:`stop_all` has ended grading."""
    return _stopping.is_set()


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


def _modules(names):
    """Those of ``names`` that are modules: only they reach the prepared image, whose command
    line and memory every sandbox forked from it can read. (``from scipy.special import
    betaln`` in the solution lists ``scipy.special.betaln``, which would tell a student which
    function the solution calls.) Found without importing anything not imported yet."""
    import importlib.machinery
    import importlib.util

    found = []
    for name in names:
        parts = name.split(".")
        try:
            if len(parts) == 1 or ".".join(parts[:-1]) in sys.modules:
                spec = importlib.util.find_spec(name)  # (its parent is imported already)
            else:  # each package's folders, from the top (nothing of them runs)
                spec = importlib.util.find_spec(parts[0])
                for cut in range(2, len(parts) + 1):
                    if spec is None or not spec.submodule_search_locations:
                        spec = None
                        break
                    spec = importlib.machinery.PathFinder.find_spec(
                        ".".join(parts[:cut]), spec.submodule_search_locations)
        except Exception:  # noqa: BLE001, S112 (not a module, or a name find_spec refuses)
            continue
        if spec is not None:
            found.append(name)
    return found


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


class Process:
    """The sandboxed process's start and stop: its command (namespaces with a minimal root, or
    the fallback), its limits (rlimits, a cgroup), its folders, and why it ended."""

    def __init__(self, hidden: list[Path], memory_mb: int, isolate: bool, use_cgroups: bool,
                 probe: bool, preload: Sequence[str] = ()) -> None:
        self.hidden = hidden
        self.preload = list(preload)  # modules the prepared image imports (Assignment.preload)
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

    def spawn(self, to_child_r: int, from_child_w: int, out_w: int,
              from_image: bool = True) -> bool:
        """Start the runner: it reads requests from ``to_child_r``, writes replies to
        ``from_child_w``, and prints to ``out_w`` (the caller closes its copies). It is forked
        from the prepared image where there is one (``from_image``); False when that failed:
        call again with new pipes and ``from_image=False``. If it raises, nothing of it is left
        (no process, no cgroup)."""
        with _running_lock:
            _running.add(self)
        try:
            if _stopping.is_set():
                raise SandboxError("died", "grading was interrupted")
            started = self._spawn(to_child_r, from_child_w, out_w, from_image)
            if _stopping.is_set():  # (stop_all ran meanwhile, maybe before this one existed)
                raise SandboxError("died", "grading was interrupted")
            return started
        except BaseException:
            self.stop()
            self.clean_up()
            raise

    def _spawn(self, to_child_r, from_child_w, out_w, from_image):
        runner_code = runner_text()
        env = dict(ENV)
        flags = namespace_flags() if self.isolate else None
        self.cgroup = cgroups.create(self.memory_mb, PIDS_MAX) if self.use_cgroups else None
        joins = self.cgroup.procs_files() if self.cgroup else []
        # Without a pids cgroup, cap processes per user (shared by the sandboxes of one run).
        limits = _rlimits(self.memory_mb, None if self.cgroup else PIDS_MAX * 4)
        preexec = None
        if from_image and flags is not None and os.geteuid() == 0 and zygote.enabled():
            return self._fork(flags, limits, joins, (to_child_r, from_child_w, out_w),
                              runner_code)
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
        return True

    def _fork(self, flags, limits, joins, fds, runner_code) -> bool:
        """Fork the sandbox from the prepared image for these folders and imports
        (``zygote.py``); False where the image cannot start or fork (the caller then starts it
        from scratch, on new pipes: a fork that comes late dies on the old ones)."""
        binds = _environment_paths(self.hidden)
        preload = sorted(set(self.preload))

        def start():
            root = tempfile.mkdtemp(prefix="mlcourse-root-")  # (an empty mount point)
            try:
                return zygote.Zygote.start(flags, lambda fd: _setup_script(
                    root, sys.executable, runner_code, (fd,), binds, NOBODY, "zygote"), ENV,
                    _modules(preload))
            finally:
                try:
                    os.rmdir(root)
                except OSError:
                    pass

        spec = {"uid": NOBODY, "mode": "namespace-probe" if self.probe else "namespace",
                "rlimits": [[f"RLIMIT_{_PRLIMIT_NAMES[res].upper()}", v] for res, v in limits]}
        joined = []
        try:
            for path in joins:
                joined.append(os.open(path, os.O_WRONLY | os.O_CLOEXEC))
            image = zygote.image_for((tuple(binds), NOBODY, runner_code, tuple(preload)), start)
            self.proc = image.spawn([*fds, *joined], spec)
        except (OSError, zygote.ZygoteError):
            if self.cgroup is not None:  # (whatever of a failed fork joined it dies with it; a
                self.cgroup.remove()     # start from scratch makes a cgroup of its own)
                self.cgroup = None
            return False
        finally:
            for fd in joined:
                os.close(fd)
        self.mode = "namespace"
        return True

    def stop(self) -> None:
        """Kill the process (its session, and what left it but not its cgroup) and reap it."""
        if isinstance(self.proc, zygote.ZygoteChild):
            self.proc.kill()  # (its whole PID namespace)
        elif self.proc is not None and self.proc.poll() is None:
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
        with _running_lock:
            _running.discard(self)
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
        if code is not None and self.mode == "namespace" and code > 128 and \
                not isinstance(self.proc, zygote.ZygoteChild):
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
