"""Per-student resource limits with Linux control groups: memory, process count and CPU share.

One :class:`Cgroup` holds one student's sandbox. It caps

* memory at ``--memory`` (all of it: heap, tmpfs files in the sandbox's ``/tmp``, SysV and POSIX
  shared memory, memfd; swap too where the kernel accounts it), so the kernel's OOM killer ends
  the sandbox, not the machine;
* the number of processes and threads (``pids``), so a fork bomb stops at the cap;
* the CPU at one core (a CFS quota), so a notebook that starts many busy processes slows down
  only itself: a student graded beside it keeps its core.

Which hierarchy is used is found at run time. cgroup v2 is used where this process's cgroup has
``memory``, ``pids`` and ``cpu`` enabled for its children (a delegated subtree, or the root of a
container's cgroup namespace); otherwise the v1 hierarchies of those controllers, under this
process's own cgroup in each (hybrid systems, and containers where we are root). Where neither
can be written (no cgroups, or an unprivileged user without delegation), :func:`create` returns
None and the sandbox falls back to per-process rlimits (see ``isolation.py`` and
docs/grading-security.md, "Limits").

None is left behind. Each cgroup is named ``mlcourse-<grader's pid>-<n>`` and removed when its
sandbox ends; those this process made and could not remove yet (a process still exiting, a run
interrupted) are removed by :func:`remove_all`, which runs at exit. Where a grader could not
(killed with SIGKILL, or the machine stopped), the next grading run removes its empty cgroups
when it makes its first (:func:`sweep`): those whose grader is no longer running.
"""

from __future__ import annotations

import atexit
import functools
import itertools
import os
import re
import signal
import threading
import time
from collections.abc import Iterable
from pathlib import Path

CONTROLLERS = ("memory", "pids", "cpu")
_counter = itertools.count()
#: The cgroups this process made and has not removed yet (:func:`remove_all` at exit).
_live: set[Cgroup] = set()
_live_lock = threading.Lock()
_swept = False
_NAME = re.compile(r"mlcourse-(\d+)-\d+")


def _mounts():
    """``[(fstype, mount_root, mount_point, super_options)]`` of the cgroup file systems."""
    out = []
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return out
    for line in lines:
        left, _, right = line.partition(" - ")
        fields, rfields = left.split(), right.split()
        if len(fields) >= 5 and len(rfields) >= 3 and rfields[0] in ("cgroup", "cgroup2"):
            out.append((rfields[0], fields[3], fields[4], set(rfields[2].split(","))))
    return out


def _own_paths():
    """``{controller or '': path}`` from /proc/self/cgroup ('' is the v2 hierarchy)."""
    paths = {}
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return paths
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) == 3:
            for name in parts[1].split(",") if parts[1] else [""]:
                paths[name] = parts[2]
    return paths


def _join(mount_point, mount_root, path):
    rel = os.path.relpath(path, mount_root) if path.startswith(mount_root) else path.lstrip("/")
    return Path(mount_point) / ("" if rel == "." else rel)


def _writable_dir(path):
    return path.is_dir() and os.access(path, os.W_OK)


@functools.lru_cache(maxsize=1)
def layout() -> tuple[str | None, dict[str, Path]]:
    """``("v2", {controller: parent})``, ``("v1", {controller: parent})`` or ``(None, {})``.

    A parent is the folder under which a student's cgroup is created for that controller.
    """
    mounts, own = _mounts(), _own_paths()
    for fstype, root, point, _ in mounts:
        if fstype == "cgroup2" and "" in own:
            parent = _join(point, root, own[""])
            try:
                enabled = set((parent / "cgroup.subtree_control").read_text().split())
            except OSError:
                continue
            if set(CONTROLLERS) <= enabled and _writable_dir(parent):
                return "v2", {c: parent for c in CONTROLLERS}
    parents = {}
    for fstype, root, point, options in mounts:
        if fstype != "cgroup":
            continue
        for c in CONTROLLERS:
            if c in options and c not in parents and c in own:
                parent = _join(point, root, own[c])
                if _writable_dir(parent):
                    parents[c] = parent
    return ("v1", parents) if parents else (None, {})


class Cgroup:
    """One student's cgroup(s): create with :func:`create`, join, kill everything, remove."""

    def __init__(self, version: str, folders: dict[str, Path]) -> None:
        self.version = version
        self.folders = folders  # {controller: Path}

    @property
    def controllers(self) -> list[str]:
        return sorted(self.folders)

    def procs_files(self) -> list[str]:
        """The ``cgroup.procs`` files a process writes its PID to, to join (one per folder)."""
        return sorted({str(f / "cgroup.procs") for f in self.folders.values()})

    def pids(self) -> set[int]:
        found = set()
        for folder in set(self.folders.values()):
            try:
                found |= {int(p) for p in (folder / "cgroup.procs").read_text().split()}
            except (OSError, ValueError):
                pass
        return found

    def memory_events(self) -> int:
        """How often the kernel killed a process of this cgroup for memory (0 if unknown)."""
        folder = self.folders.get("memory")
        if folder is None:
            return 0
        name = "memory.events" if self.version == "v2" else "memory.oom_control"
        try:
            for line in (folder / name).read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
        except (OSError, ValueError):
            pass
        return 0

    def kill(self) -> None:
        """SIGKILL every process in the cgroup (also ones that left the sandbox's session)."""
        if self.version == "v2" and "memory" in self.folders:  # none if mkdir failed
            try:
                (self.folders["memory"] / "cgroup.kill").write_text("1")
            except OSError:
                pass
        for _ in range(50):
            pids = self.pids()
            if not pids:
                return
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            time.sleep(0.02)

    def remove(self) -> bool:
        """Kill what is left and remove the folders (retrying while the kernel reaps); whether
        they are gone (if not, :func:`remove_all` tries again at exit)."""
        self.kill()
        gone = True
        for folder in set(self.folders.values()):
            for _ in range(100):
                try:
                    folder.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.02)
            else:
                gone = False
        if gone:
            with _live_lock:
                _live.discard(self)
        return gone


def remove_all() -> None:
    """Kill the processes of every cgroup this process made and has not removed, and remove
    those cgroups: at exit (also after Ctrl-C or SIGTERM), and when grading is interrupted."""
    with _live_lock:
        groups = list(_live)
    for group in groups:
        group.remove()


atexit.register(remove_all)


def _running(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        pass  # (another user's: it runs)
    return True


def sweep(parents: Iterable[Path]) -> list[Path]:
    """Remove the empty cgroups of graders that no longer run (``mlcourse-<pid>-<n>`` under
    ``parents``, with no process ``pid``): what a grader killed by SIGKILL left behind. A
    cgroup that still holds a process is left alone. Returns the folders removed."""
    removed = []
    for parent in {Path(p) for p in parents}:
        try:
            entries = list(os.scandir(parent))
        except OSError:
            continue
        for entry in entries:
            match = _NAME.fullmatch(entry.name)
            if match and int(match[1]) != os.getpid() and entry.is_dir(follow_symlinks=False) \
                    and not _running(int(match[1])):
                try:
                    os.rmdir(entry.path)
                    removed.append(Path(entry.path))
                except OSError:
                    pass  # (not empty: a process of it still runs)
    return removed


def _write(path, value):
    Path(path).write_text(str(value))


def create(memory_mb: int, pids_max: int = 128, cpus: float = 1.0) -> Cgroup | None:
    """A new cgroup with the limits applied, or None where cgroups cannot be used here."""
    global _swept
    version, parents = layout()
    if version is None:
        return None
    if not _swept:
        _swept = True
        sweep(parents.values())
    name = f"mlcourse-{os.getpid()}-{next(_counter)}"
    folders = {}
    group = Cgroup(version, folders)
    with _live_lock:
        _live.add(group)  # (before its first folder: whatever happens next, it is removed)
    try:
        for c, parent in parents.items():
            folder = parent / name
            if folder not in folders.values():
                folder.mkdir()
            folders[c] = folder
        limit = int(memory_mb) * 2**20
        period = 100_000
        if version == "v2":
            f = folders["memory"]
            _write(f / "memory.max", limit)
            try:
                _write(f / "memory.swap.max", 0)
            except OSError:
                pass
            _write(f / "pids.max", pids_max)
            _write(f / "cpu.max", f"{int(cpus * period)} {period}")
        else:
            if "memory" in folders:
                _write(folders["memory"] / "memory.limit_in_bytes", limit)
                memsw = folders["memory"] / "memory.memsw.limit_in_bytes"
                if memsw.exists():
                    _write(memsw, limit)
            if "pids" in folders:
                _write(folders["pids"] / "pids.max", pids_max)
            if "cpu" in folders:
                _write(folders["cpu"] / "cpu.cfs_period_us", period)
                _write(folders["cpu"] / "cpu.cfs_quota_us", int(cpus * period))
        return group
    except OSError:
        group.remove()
        return None
