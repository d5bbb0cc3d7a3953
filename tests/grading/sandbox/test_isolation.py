"""Starting and stopping one student's sandboxed process (grading/sandbox/isolation.py).

Unit tests of the parts that need no sandbox: the limits, the modules told to the prepared
image, and the words for why a process died (the root and its set-up script: test_root.py).
What the sandbox keeps a notebook from doing is tested by starting one (test_channel.py,
test_hostile.py).
"""

from __future__ import annotations

import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from mlcourse_utils.grading.protocol import SandboxError
from mlcourse_utils.grading.sandbox import isolation, root
from mlcourse_utils.grading.sandbox.isolation import Process


def test_rlimits_cap_files_and_core_always_memory_and_processes_when_asked():
    base = {(resource.RLIMIT_CORE, 0), (resource.RLIMIT_FSIZE, 64 * 2**20),
            (resource.RLIMIT_NOFILE, 256)}
    assert set(isolation._rlimits(0)) == base
    assert set(isolation._rlimits(100, nproc=7)) == base | {(resource.RLIMIT_AS, 100 * 2**20),
                                                            (resource.RLIMIT_NPROC, 7)}


def test_only_modules_reach_the_prepared_image_and_never_its_command_line(tmp_path):
    """``from a import b`` in the solution lists ``a.b``: a function's name must not reach the
    image, whose command line and memory its sandboxes can read."""
    names = ["colorsys", "colorsys.rgb_to_hsv", "os.path", "heapq.heappush",
             "no_such_module_anywhere", "no_such_package.sub", "xml.etree.ElementTree",
             "xml.etree.iterparse"]
    assert isolation._modules(names) == ["colorsys", "os.path", "xml.etree.ElementTree"]
    script = root._setup_script(tmp_path / "root", "py", "x", (7,), [Path("/usr")], 65534,
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
