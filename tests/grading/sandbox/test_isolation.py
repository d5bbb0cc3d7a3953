"""Starting and stopping one student's sandboxed process (grading/sandbox/isolation.py).

Unit tests of the parts that need no sandbox: the limits, the folders made visible, the
set-up script, and the words for why a process died. What the sandbox keeps a notebook from
doing is tested by starting one (test_channel.py, test_hostile.py).
"""

from __future__ import annotations

import resource
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from mlcourse_utils.grading.protocol import SandboxError
from mlcourse_utils.grading.sandbox import isolation
from mlcourse_utils.grading.sandbox.isolation import Process
from mlcourse_utils.grading.sandbox.runner import MAX_ARG_STRLEN, runner_text


def test_rlimits_cap_files_and_core_always_memory_and_processes_when_asked():
    base = {(resource.RLIMIT_CORE, 0), (resource.RLIMIT_FSIZE, 64 * 2**20),
            (resource.RLIMIT_NOFILE, 256)}
    assert set(isolation._rlimits(0)) == base
    assert set(isolation._rlimits(100, nproc=7)) == base | {(resource.RLIMIT_AS, 100 * 2**20),
                                                            (resource.RLIMIT_NPROC, 7)}


def test_is_within(tmp_path):
    (tmp_path / "a" / "b").mkdir(parents=True)
    assert isolation._is_within(tmp_path / "a" / "b", tmp_path / "a")
    assert isolation._is_within(tmp_path / "a", tmp_path / "a")
    assert not isolation._is_within(tmp_path / "a", tmp_path / "a" / "b")
    assert not isolation._is_within(tmp_path / "ab", tmp_path / "a")  # a prefix is not a parent
    assert isolation._is_within(tmp_path / "a" / ".." / "a" / "b", tmp_path / "a")


def test_environment_paths_hold_the_system_and_python_but_no_hidden_folder(tmp_path):
    paths = isolation._environment_paths([tmp_path])
    assert Path("/usr") in paths
    assert any(isolation._is_within(Path(sys.executable).resolve(), p) for p in paths)
    assert not any(isolation._is_within(p, tmp_path) for p in paths)
    # none inside another (the inner one is there already)
    assert not any(p != q and isolation._is_within(p, q) for p in paths for q in paths)


def test_a_hidden_folder_around_the_environment_keeps_the_environment_only():
    env = Path(sys.prefix).resolve()
    paths = isolation._environment_paths([env.parent])
    assert any(isolation._is_within(env, p) for p in paths)
    assert not any(p == env.parent.resolve() for p in paths)


def test_the_decoy_covers_the_whole_package_wherever_isolation_py_lies():
    """PACKAGE_DIR is found from isolation.py's own place (grading/sandbox/): it must be the
    package's folder, not a sub-package, or the sandbox would leave the reference importable."""
    import mlcourse_utils

    assert isolation.PACKAGE_DIR == Path(mlcourse_utils.__file__).resolve().parent


def test_setup_script_builds_a_minimal_root_and_drops_privileges(tmp_path):
    script = isolation._setup_script(tmp_path / "root", "/usr/bin/python3", "print('runner')",
                                     (5, 6), [Path("/usr")], 65534)
    lines = script.split("\n")
    assert lines[0] == "set -e"
    root = str(tmp_path / "root")
    assert f"mount -n --bind /usr {root}/usr" in lines
    assert f"mount -n -o remount,bind,ro,nosuid,nodev {root}/usr" in lines
    assert "pivot_root . .old" in lines and "umount -n -l /.old" in lines
    # the reference package is a read-only decoy that refuses its import
    assert f"mount -n -o remount,ro {root}{isolation.PACKAGE_DIR}" in lines
    assert "raise ImportError" in script
    last = lines[-1]
    assert last.startswith("setpriv --reuid=65534 --regid=65534 --clear-groups --no-new-privs")
    assert last.endswith("-I -c 'print('\"'\"'runner'\"'\"')' 5 6 namespace")  # quoted
    assert "--bounding-set=-all" in last
    # without a user change (not root) no --reuid, and the mode is passed on
    other = isolation._setup_script(tmp_path / "r", "py", "x", (1, 2), [], None, "namespace-probe")
    assert "--reuid" not in other and other.endswith("x 1 2 namespace-probe")


def test_the_longest_argument_with_the_runner_fits_linux_limit(tmp_path):
    """The runner's text travels inside the set-up script, one argument of ``sh -c``, quoted
    once more where a cgroup is joined (``sh -c '... exec prlimit ... sh -c SCRIPT'``, as
    ``Process._spawn`` builds it): that argument stays under Linux's limit on one argument,
    with room to spare for more bound folders and a longer text."""
    script = isolation._setup_script(tmp_path / "root", sys.executable, runner_text(), (5, 6),
                                     isolation._environment_paths([tmp_path]), 65534)
    inner = ["prlimit", "--as=1", "--", "unshare", "--mount", "--pid", "sh", "-c", script]
    joining = 'for f in "$@"; do echo $$ > "$f" || exit 111; done; exec ' + shlex.join(inner)
    assert shlex.quote(runner_text()) in script
    assert len(joining.encode()) < MAX_ARG_STRLEN - 16384


def test_only_modules_reach_the_prepared_image_and_never_its_command_line(tmp_path):
    """``from a import b`` in the solution lists ``a.b``: a function's name must not reach the
    image, whose command line and memory its sandboxes can read."""
    names = ["colorsys", "colorsys.rgb_to_hsv", "os.path", "heapq.heappush",
             "no_such_module_anywhere", "no_such_package.sub", "xml.etree.ElementTree",
             "xml.etree.iterparse"]
    assert isolation._modules(names) == ["colorsys", "os.path", "xml.etree.ElementTree"]
    script = isolation._setup_script(tmp_path / "root", "py", "x", (7,), [Path("/usr")], 65534,
                                     "zygote")
    assert script.split("\n")[-1] == "exec py -I -c x 7 zygote"


class _Exited:
    """A stand-in for a finished Popen: wait() gives ``code``."""

    def __init__(self, code):
        self.code = code

    def wait(self, timeout=None):
        if self.code == "hung":
            raise subprocess.TimeoutExpired("runner", timeout)
        return self.code


class _Cgroup:
    def __init__(self, oom):
        self.oom = oom

    def memory_events(self):
        return self.oom


def _death(code, mode="fallback", oom=None, memory_mb=512):
    process = Process([], memory_mb, True, False, False)
    process.proc, process.mode = _Exited(code), mode
    process.cgroup = _Cgroup(oom) if oom is not None else None
    killed = []
    error = process.death(lambda: killed.append(True))
    assert killed == [True]  # the caller's clean-up always runs
    assert isinstance(error, SandboxError)
    return error.kind, str(error)


def test_death_names_the_signal_the_status_or_the_memory_limit():
    assert _death(-signal.SIGKILL) == ("died", "was killed by signal SIGKILL")
    assert _death(3)[0] == "died" and "exited (status 3)" in _death(3)[1]
    # the namespace's shell reports a signal as 128 + its number
    assert _death(128 + signal.SIGSEGV, mode="namespace")[1] == "was killed by signal SIGSEGV"
    assert "exited (status 137)" in _death(137, mode="fallback")[1]
    assert "status None" in _death("hung")[1]
    kind, words = _death(-signal.SIGKILL, oom=1, memory_mb=300)
    assert kind == "memory" and "memory limit of 300 MB" in words


@pytest.mark.skipif(sys.platform != "linux", reason="the sandbox runs on Linux only")
def test_a_fallback_process_starts_cleans_up_and_leaves_no_folder(tmp_path):
    """Spawn, stop and clean up the fallback process (no namespaces, no cgroup)."""
    import os

    process = Process([tmp_path], 1024, False, False, True)
    r, w = os.pipe()
    r2, w2 = os.pipe()
    out_r, out_w = os.pipe()
    try:
        process.spawn(r, w2, out_w)
        scratch = Path(process._scratch)
        assert process.mode == "fallback" and scratch.is_dir()
    finally:
        for fd in (r, w2, out_w):
            os.close(fd)
        process.stop()
        process.clean_up()
        for fd in (w, r2, out_r):
            os.close(fd)
    assert process.proc.returncode is not None
    assert not scratch.exists() and process._scratch is None
