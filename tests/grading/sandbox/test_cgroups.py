"""Per-student memory, process and CPU limits with control groups (grading/sandbox/cgroups.py).

Most tests build a fake cgroup tree in a temporary folder (the files the kernel would show);
the last ones create real cgroups, run the grader and interrupt it, and are skipped where this
machine cannot. None of ours may stay behind: not after a grader's exit, nor after a run that
was interrupted or killed (the next run removes those), with a student's processes lingering.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

import assignment_support as sup
from mlcourse_utils.grading.sandbox import cgroups
from mlcourse_utils.grading.sandbox.cgroups import Cgroup

REAL = pytest.mark.skipif(cgroups.layout()[0] is None,
                          reason="no writable cgroup hierarchy with memory, pids and cpu here")


def test_join_maps_a_cgroup_path_under_its_mount():
    assert cgroups._join("/sys/fs/cgroup", "/", "/user.slice/a") == \
        Path("/sys/fs/cgroup/user.slice/a")
    # a container sees its own cgroup as the mount's root
    assert cgroups._join("/sys/fs/cgroup", "/docker/abc", "/docker/abc") == Path("/sys/fs/cgroup")
    assert cgroups._join("/sys/fs/cgroup/memory", "/docker/abc", "/docker/abc/x") == \
        Path("/sys/fs/cgroup/memory/x")


def _v2_tree(tmp_path, enabled="cpuset cpu io memory pids"):
    (tmp_path / "cgroup.subtree_control").write_text(enabled + "\n")
    return [("cgroup2", "/", str(tmp_path), {"rw"})], {"": "/"}


def test_layout_prefers_v2_where_all_three_controllers_are_delegated(tmp_path, monkeypatch):
    mounts, own = _v2_tree(tmp_path)
    monkeypatch.setattr(cgroups, "_mounts", lambda: mounts)
    monkeypatch.setattr(cgroups, "_own_paths", lambda: own)
    assert cgroups.layout.__wrapped__() == ("v2", {c: tmp_path for c in cgroups.CONTROLLERS})


def test_layout_without_the_cpu_controller_is_none(tmp_path, monkeypatch):
    mounts, own = _v2_tree(tmp_path, enabled="memory pids")
    monkeypatch.setattr(cgroups, "_mounts", lambda: mounts)
    monkeypatch.setattr(cgroups, "_own_paths", lambda: own)
    assert cgroups.layout.__wrapped__() == (None, {})


def test_layout_v1_takes_each_controllers_own_hierarchy(tmp_path, monkeypatch):
    for c in ("memory", "pids"):
        (tmp_path / c / "grader").mkdir(parents=True)
    mounts = [("cgroup", "/", str(tmp_path / "memory"), {"rw", "memory"}),
              ("cgroup", "/", str(tmp_path / "pids"), {"rw", "pids"}),
              ("cgroup", "/", str(tmp_path / "cpu"), {"rw", "cpu", "cpuacct"})]  # not there
    own = {"memory": "/grader", "pids": "/grader", "cpu": "/grader"}
    monkeypatch.setattr(cgroups, "_mounts", lambda: mounts)
    monkeypatch.setattr(cgroups, "_own_paths", lambda: own)
    assert cgroups.layout.__wrapped__() == ("v1", {"memory": tmp_path / "memory" / "grader",
                                                   "pids": tmp_path / "pids" / "grader"})


def test_create_v2_writes_the_limits(tmp_path, monkeypatch):
    monkeypatch.setattr(cgroups, "layout", lambda: ("v2", {c: tmp_path
                                                           for c in cgroups.CONTROLLERS}))
    group = cgroups.create(300, pids_max=64, cpus=0.5)
    (folder,) = {group.folders[c] for c in cgroups.CONTROLLERS}
    assert folder.parent == tmp_path and folder.name.startswith(f"mlcourse-{os.getpid()}-")
    assert (folder / "memory.max").read_text() == str(300 * 2**20)
    assert (folder / "memory.swap.max").read_text() == "0"
    assert (folder / "pids.max").read_text() == "64"
    assert (folder / "cpu.max").read_text() == "50000 100000"  # half a core per period
    assert group.procs_files() == [str(folder / "cgroup.procs")]  # one folder, joined once
    assert group.controllers == ["cpu", "memory", "pids"]
    # a second sandbox of this process gets its own folder
    assert cgroups.create(300).folders["memory"] != folder


def test_create_v1_writes_each_controllers_files(tmp_path, monkeypatch):
    parents = {c: tmp_path / c for c in cgroups.CONTROLLERS}
    for p in parents.values():
        p.mkdir()
    monkeypatch.setattr(cgroups, "layout", lambda: ("v1", parents))
    group = cgroups.create(100, pids_max=9, cpus=2)
    f = group.folders
    assert (f["memory"] / "memory.limit_in_bytes").read_text() == str(100 * 2**20)
    assert (f["pids"] / "pids.max").read_text() == "9"
    assert (f["cpu"] / "cpu.cfs_period_us").read_text() == "100000"
    assert (f["cpu"] / "cpu.cfs_quota_us").read_text() == "200000"
    assert len(group.procs_files()) == 3


def test_create_without_cgroups_or_on_a_write_error_is_none(tmp_path, monkeypatch):
    monkeypatch.setattr(cgroups, "layout", lambda: (None, {}))
    assert cgroups.create(100) is None
    monkeypatch.setattr(cgroups, "layout", lambda: ("v2", {"memory": tmp_path / "missing"}))
    assert cgroups.create(100) is None  # the parent does not exist: mkdir fails


def test_memory_events_reads_oom_kills_of_either_version(tmp_path):
    (tmp_path / "memory.events").write_text("low 0\nhigh 0\nmax 5\noom 2\noom_kill 2\n")
    assert Cgroup("v2", {"memory": tmp_path}).memory_events() == 2
    (tmp_path / "memory.oom_control").write_text("oom_kill_disable 0\nunder_oom 0\noom_kill 1\n")
    assert Cgroup("v1", {"memory": tmp_path}).memory_events() == 1
    assert Cgroup("v2", {"pids": tmp_path}).memory_events() == 0       # no memory controller
    assert Cgroup("v2", {"memory": tmp_path / "gone"}).memory_events() == 0  # unreadable


def test_remove_takes_away_an_empty_cgroup(tmp_path):
    folder = tmp_path / "mlcourse-1-0"
    folder.mkdir()
    group = Cgroup("v1", {"memory": folder, "pids": folder})
    assert group.pids() == set()  # no cgroup.procs: nothing to kill
    group.remove()
    assert not folder.exists()


@REAL
def test_a_real_cgroup_is_created_and_removed():
    group = cgroups.create(256, pids_max=32)
    assert group is not None and set(group.controllers) >= {"memory"}
    folder = group.folders["memory"]
    limit = "memory.max" if group.version == "v2" else "memory.limit_in_bytes"
    assert int((folder / limit).read_text()) == 256 * 2**20
    assert group.pids() == set() and group.memory_events() == 0
    group.remove()
    assert not any(f.exists() for f in group.folders.values())


# ---------------------------------------------------------------- nothing left behind

def _parents():
    return sorted(set(cgroups.layout()[1].values()))


def _ours(pid):
    """The cgroups of the grader with process id ``pid``, in every hierarchy."""
    return sorted(p for parent in _parents() for p in parent.glob(f"mlcourse-{pid}-*"))


def _dead_pid():
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def _gone(pid, seconds=30):
    """Whether process ``pid`` has ended (a zombie has) within ``seconds``."""
    for _ in range(int(seconds * 10)):
        try:
            if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] in "ZX":
                return True
        except (OSError, IndexError):
            return True
        time.sleep(0.1)
    return False


def _in_cgroup(group):
    """A process that sleeps inside ``group`` (joined before it runs), in a session of its own."""
    join = 'for f in "$@"; do echo $$ > "$f"; done; exec sleep 300'
    return subprocess.Popen(["sh", "-c", join, "sh", *group.procs_files()],
                            start_new_session=True)


@REAL
def test_what_a_grader_could_not_remove_goes_when_it_exits():
    """A cgroup whose process lingers (here: one the grader never stopped) and one never
    joined: when the grader's process exits, both are gone and the process is killed."""
    code = ("import os, subprocess\n"
            "from mlcourse_utils.grading.sandbox import cgroups\n"
            "lingering, empty = cgroups.create(64), cgroups.create(64)\n"
            "join = 'for f in \"$@\"; do echo $$ > \"$f\"; done; exec sleep 300'\n"
            "proc = subprocess.Popen(['sh', '-c', join, 'sh', *lingering.procs_files()],\n"
            "                        start_new_session=True, stdout=subprocess.DEVNULL,\n"
            "                        stderr=subprocess.DEVNULL)\n"
            "while not lingering.pids():\n"
            "    pass\n"
            "print(os.getpid(), proc.pid, flush=True)\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stderr
    grader, lingering = map(int, run.stdout.split())
    try:
        assert _gone(lingering)
        assert _ours(grader) == []
    finally:
        try:
            os.kill(lingering, signal.SIGKILL)
        except ProcessLookupError:
            pass


@REAL
def test_the_next_run_removes_the_empty_cgroups_of_a_grader_that_was_killed():
    """A grader killed outright (SIGKILL) leaves its cgroups. The next grader's first cgroup
    removes those of graders no longer running, when empty; one that still holds a process,
    and one of a grader still running, stay as they are."""
    dead, other_dead = _dead_pid(), _dead_pid()
    left = [p / f"mlcourse-{dead}-0" for p in _parents()]
    running = [p / f"mlcourse-{os.getpid()}-{10**6 + k}" for k, p in enumerate(_parents())]
    busy = Cgroup(cgroups.layout()[0], {c: p / f"mlcourse-{other_dead}-0"
                                        for c, p in cgroups.layout()[1].items()})
    for folder in {*left, *running, *busy.folders.values()}:
        folder.mkdir()
    proc = _in_cgroup(busy)
    try:
        while not busy.pids():
            time.sleep(0.02)
        next_run = subprocess.run(
            [sys.executable, "-c", "from mlcourse_utils.grading.sandbox import cgroups\n"
                                   "cgroups.create(64).remove()"],
            capture_output=True, text=True, timeout=120)
        assert next_run.returncode == 0, next_run.stderr
        assert not any(p.exists() for p in left)
        assert all(p.exists() for p in running)
        assert all(p.exists() for p in busy.folders.values()) and proc.poll() is None
    finally:
        proc.kill()
        proc.wait()
        busy.remove()
        for folder in left + running:
            if folder.exists():
                folder.rmdir()


# A student whose answer cell leaves processes behind (their own sessions, SIGTERM, SIGHUP and
# SIGINT ignored, 100 MB each) and then sleeps: the grader is interrupted while it is graded.
MARKER = f"mlint{uuid.uuid4().hex[:8]}"
LINGER = f"""
import ctypes, os, signal, time
for _ in range(3):
    if os.fork() == 0:
        os.setsid()
        if os.fork():
            os._exit(0)
        for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
            signal.signal(s, signal.SIG_IGN)
        ctypes.CDLL(None).prctl(15, b"{MARKER}", 0, 0, 0)
        block = bytearray(100 << 20)
        while True:
            time.sleep(1)
ctypes.CDLL(None).prctl(15, b"{MARKER}", 0, 0, 0)
time.sleep(600)
"""


def _marked():
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                if Path(f"/proc/{pid}/comm").read_text().strip() == MARKER:
                    found.append(int(pid))
            except OSError:
                pass
    return found


@pytest.mark.slow
@REAL
@pytest.mark.skipif(os.geteuid() != 0, reason="the sandboxes of a run are forked where root")
@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM", "SIGKILL"])
def test_an_interrupted_grading_run_leaves_no_cgroup_and_no_process(tmp_path, sig):
    """`mlcourse grade` interrupted while a student's lingering processes run: Ctrl-C and
    SIGTERM end it at once (before, Ctrl-C graded the rest of the class first and SIGTERM left
    every running student's cgroup), with no cgroup of it left and nothing written for the
    student cut short; after SIGKILL the next run removes what it left."""
    name = "mle"
    solution = sup.solution_answers(name)
    subs, out = tmp_path / "submissions", tmp_path / "out"
    sup.write_submission(subs, "honest", name, sup.make_submission(name, solution))
    sup.write_submission(subs, "lingering", name,
                         sup.make_submission(name, solution, extra_cells=[LINGER]))
    # (started as from a terminal: a background job of a shell may ignore SIGINT)
    as_from_a_terminal = ("import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL);"
                          " os.execv(sys.argv[1], sys.argv[1:])")
    proc = subprocess.Popen(
        [sys.executable, "-c", as_from_a_terminal, sup.MLCOURSE, "grade", name, str(subs),
         "--out", str(out), "--jobs", "2", "--timeout", "900", "--memory", "1024"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=sup.ROOT)
    try:
        for _ in range(1200):  # (at most 120 s for the lingering processes to start)
            if len(_marked()) >= 4 or proc.poll() is not None:
                break
            time.sleep(0.1)
        assert len(_marked()) >= 4 and _ours(proc.pid), "the lingering student never ran"
        proc.send_signal(getattr(signal, sig))
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert all(_gone(pid) for pid in _marked()), "a student's process outlived the run"
    if sig == "SIGKILL":
        assert _ours(proc.pid), "the killed grader left no cgroup (nothing tested below)"
        next_run = subprocess.run(
            [sys.executable, "-c", "from mlcourse_utils.grading.sandbox import cgroups\n"
                                   "cgroups.create(64).remove()"],
            capture_output=True, text=True, timeout=120)
        assert next_run.returncode == 0, next_run.stderr
    else:
        assert proc.returncode == 130 and "mlcourse grade: interrupted" in err, err[-2000:]
        assert not (out / "feedback" / "lingering.html").exists()
    assert _ours(proc.pid) == []
