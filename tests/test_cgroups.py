"""Per-student memory, process and CPU limits with control groups (grading/cgroups.py).

Most tests build a fake cgroup tree in a temporary folder (the files the kernel would show);
the last one creates a real cgroup and is skipped where this machine cannot.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mlcourse_utils.grading import cgroups
from mlcourse_utils.grading.cgroups import Cgroup


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


@pytest.mark.skipif(cgroups.layout()[0] is None,
                    reason="no writable cgroup hierarchy with memory, pids and cpu here")
def test_a_real_cgroup_is_created_and_removed():
    group = cgroups.create(256, pids_max=32)
    assert group is not None and set(group.controllers) >= {"memory"}
    folder = group.folders["memory"]
    limit = "memory.max" if group.version == "v2" else "memory.limit_in_bytes"
    assert int((folder / limit).read_text()) == 256 * 2**20
    assert group.pids() == set() and group.memory_events() == 0
    group.remove()
    assert not any(f.exists() for f in group.folders.values())
