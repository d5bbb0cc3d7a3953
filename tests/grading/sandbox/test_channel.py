"""One student's sandboxed process, seen from the grader (grading/sandbox/channel.py).

What a notebook's process may see and do (namespaces, an unprivileged user, no network, no
host file), and the request/reply protocol's public behaviour: cells and calls, plain data
both ways, the student's exceptions and warnings, events, deadlines, output and death.
"""

from __future__ import annotations

import os
import time

import numpy as np
import pytest

from mlcourse_utils.grading import notebook
from mlcourse_utils.grading.protocol import RemoteError, SandboxError
from mlcourse_utils.grading.sandbox.channel import (
    DEFENCES,
    OUTPUT_KEPT,
    Sandbox,
    defences,
    namespace_flags,
)

# ---------------------------------------------------------------- the sandbox

needs_namespaces = pytest.mark.skipif(namespace_flags() is None,
                                      reason="Linux namespaces (unshare) are not available here")


@pytest.fixture
def sandbox(tmp_path):
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "hidden_tests.txt").write_text("expected = 42")
    box = Sandbox(hidden=[notebook.find_course_root(), secret], memory_mb=2048).start()
    box.secret = secret
    yield box
    box.kill()


def _run(box, source):
    error, _ = box.exec_cell(source, 30)
    assert error is None, error
    value, _ = box.call("probe", (), {}, 30)
    return value


@needs_namespaces
def test_sandbox_hides_the_course_and_grader_files(sandbox):
    root = notebook.find_course_root()
    listing = _run(sandbox,
                   f"import os\ndef probe():\n    return sorted(os.listdir({str(root)!r}))")
    assert "solutions" not in listing and "exercises" not in listing
    secret = _run(sandbox, "import os\ndef probe():\n"
                  f"    p = {str(sandbox.secret)!r}\n"
                  "    return os.listdir(p) if os.path.isdir(p) else None")
    assert not secret  # covered by an empty tmpfs, or not there at all (/tmp is fresh)


@needs_namespaces
def test_a_warning_in_the_students_code_is_never_an_error(sandbox):
    """Warnings never cost points: a test that runs inside ``np.errstate(..., "raise")`` (or
    with warnings made errors) in the grader does not carry that into the student's process.
    The naive sigmoid at -1000 returns its value, 1 / (1 + inf) = 0, and the overflow comes
    back as a warning; a loop that warns 10 000 times sends back the first MAX_WARNINGS only."""
    import warnings

    from mlcourse_utils.grading.sandbox.runner.pipe import MAX_WARNINGS

    error, _ = sandbox.exec_cell("import numpy as np\n"
                                 "def naive(t):\n    return 1 / (1 + np.exp(-t))\n"
                                 "def noisy(n):\n"
                                 "    for _ in range(n):\n        np.log(np.zeros(1))\n"
                                 "    return n", 30)
    assert error is None, error
    with np.errstate(all="raise"), warnings.catch_warnings():
        warnings.simplefilter("error")
        value, warns = sandbox.call("naive", (-1000.0,), {}, 30)
        count, many = sandbox.call("noisy", (10_000,), {}, 30)
    assert value == 0.0 and any("overflow" in w for w in warns), warns
    assert count == 10_000 and len(many) == MAX_WARNINGS < 100
    assert all(w.startswith("RuntimeWarning: divide by zero") for w in many), many[:2]


@needs_namespaces
def test_sandbox_cannot_write_outside_its_scratch_folder(sandbox, tmp_path):
    target = tmp_path / "written_by_student.txt"
    result = _run(sandbox, "def probe():\n    out = []\n"
                  f"    for p in [{str(target)!r}, '/usr/lib/evil.py', 'scratch.txt']:\n"
                  "        try:\n            open(p, 'w').write('x'); out.append(True)\n"
                  "        except OSError:\n            out.append(False)\n    return out")
    assert result == [False, False, True]
    assert not target.exists()


@needs_namespaces
def test_sandbox_sees_no_other_process_and_no_network(sandbox):
    pids = _run(sandbox, "import os\ndef probe():\n"
                         "    return [p for p in os.listdir('/proc') if p.isdigit()]")
    assert len(pids) <= 3  # the namespace's shell, the notebook process, maybe a child
    reached = _run(sandbox, "import socket\ndef probe():\n    try:\n"
                   "        socket.create_connection(('127.0.0.1', 22), timeout=2)\n"
                   "        return True\n"
                   "    except OSError:\n        return False")
    assert reached is False


@needs_namespaces
def test_sandbox_reports_an_import_of_the_reference(sandbox):
    error, _ = sandbox.exec_cell(
        "import importlib\nimportlib.import_module('mlcourse' + '_utils.mle')", 30)
    assert error is not None and error.exc_type in ("ImportError", "ModuleNotFoundError")
    assert "delegation" in sandbox.events


def test_sandbox_timeout_and_exit_are_reported():
    box = Sandbox(memory_mb=2048).start()
    box.exec_cell("def spin():\n    while True:\n        pass", 30)
    with pytest.raises(SandboxError) as info:
        box.call("spin", (), {}, 1.0)
    assert info.value.kind == "timeout"
    box = Sandbox(memory_mb=2048).start()
    with pytest.raises(SandboxError) as info:
        box.exec_cell("import os\nos._exit(7)", 30)
    assert info.value.kind == "died" and "7" in str(info.value)


def test_sandbox_memory_limit_raises_memory_error():
    box = Sandbox(memory_mb=1024).start()
    try:
        error, _ = box.exec_cell("x = bytearray(3 * 2**30)", 30)
        assert error is not None and error.exc_type == "MemoryError"
    finally:
        box.kill()


def test_sandbox_returns_only_plain_data():
    box = Sandbox(memory_mb=2048).start()
    try:
        box.exec_cell("class Anything:\n    def __eq__(self, other):\n        return True\n"
                      "def probe():\n    return Anything()", 30)
        with pytest.raises(RemoteError, match="Anything"):
            box.call("probe", (), {}, 30)
    finally:
        box.kill()


def test_fallback_sandbox_blocks_the_reference_without_namespaces():
    """Where Linux namespaces are missing, an import hook still refuses mlcourse_utils."""
    box = Sandbox(memory_mb=2048, isolate=False).start()
    try:
        assert box.mode == "fallback"
        error, _ = box.exec_cell("import mlcourse_utils.mle", 30)
        assert error is not None and error.exc_type == "ImportError"
        assert "delegation" in box.events
    finally:
        box.kill()


# ---------------------------------------------------------------- hostile processes


@needs_namespaces
def test_sandbox_runs_as_nobody_without_new_namespaces_or_mounts(sandbox):
    result = _run(sandbox, "import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"
                  "def probe():\n"
                  "    return [os.getuid(), libc.unshare(0x10000000), libc.unshare(0x00020000),\n"
                  "            libc.mount(b'x', b'/tmp', b'tmpfs', 0, None),\n"
                  "            sorted(os.listdir('/etc'))]")
    uid, user_ns, mount_ns, mount, etc = result
    if os.geteuid() == 0:
        assert uid == 65534
    assert (user_ns, mount_ns, mount) == (-1, -1, -1)
    assert "shadow" not in etc and "passwd" in etc
    assert sandbox.info["seccomp"] is True


@needs_namespaces
def test_sandbox_sysv_segments_die_with_it():
    key = 0x4D4C4332
    box = Sandbox(memory_mb=2048).start()
    try:
        error, _ = box.exec_cell("import ctypes\nlibc = ctypes.CDLL(None)\n"
                                 f"assert libc.shmget({key}, 4096, 0o1666) >= 0", 30)
        assert error is None, error
        host = [line.split()[0] for line in open("/proc/sysvipc/shm").read().splitlines()[1:]]
        assert str(key) not in host  # not even while the sandbox runs: its own IPC namespace
    finally:
        box.kill()


#: A cell that makes the runner's loop stop reading requests (it finds the loop's globals).
STOP_READING = ("import gc, time\n"  # the runner's loop stops reading its requests
                "for obj in gc.get_objects():\n"
                "    if isinstance(obj, dict) and 'receive' in obj and '_serve' in obj:\n"
                "        obj['receive'] = lambda: time.sleep(3600)")


def test_sandbox_write_has_a_deadline():
    """A notebook that stops reading its input cannot block the grader's writes."""
    box = Sandbox(memory_mb=2048).start()
    try:
        error, _ = box.exec_cell(STOP_READING, 30)
        assert error is None
        with pytest.raises(SandboxError) as info:
            box.exec_cell("#" * 1_000_000, 2.0)  # far more than a pipe buffer
        assert info.value.kind == "timeout"
    finally:
        box.kill()


def test_sandbox_replies_must_match_their_request():
    box = Sandbox(memory_mb=2048).start()
    try:
        box.exec_cell("import json, os, struct, sys\n"
                      "def probe():\n"
                      "    data = json.dumps({'ok': True, 'value': 1, 'id': 999}).encode()\n"
                      "    os.write(int(sys.argv[2]), struct.pack('>I', len(data)) + data)\n"
                      "    return 2", 30)
        with pytest.raises(SandboxError, match="out of turn"):
            box.call("probe", (), {}, 30)
    finally:
        box.kill()


def test_sandbox_events_are_capped():
    box = Sandbox(memory_mb=2048).start()
    try:
        box.exec_cell("import json, os, struct, sys\n"
                      "def probe():\n"
                      "    data = json.dumps({'event': 'delegation'}).encode()\n"
                      "    for _ in range(1000):\n"
                      "        os.write(int(sys.argv[2]), struct.pack('>I', len(data)) + data)\n"
                      "    return 2", 30)
        with pytest.raises(SandboxError, match="too many events"):
            box.call("probe", (), {}, 30)
    finally:
        box.kill()


@pytest.mark.parametrize("isolate", [True, False])
def test_sandbox_output_is_a_drained_pipe(isolate):
    """The notebook's stdout is a pipe (fallocate cannot grow a host file through it), and
    10 MB printed keep OUTPUT_KEPT bytes and say how much was dropped."""

    box = Sandbox(memory_mb=1024, isolate=isolate).start()
    try:
        error, _ = box.exec_cell(
            "import ctypes, os, stat\n"
            "libc = ctypes.CDLL(None, use_errno=True)\n"
            "libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long, "
            "ctypes.c_long]\n"
            "def probe():\n"
            "    return [stat.S_ISFIFO(os.fstat(fd).st_mode) for fd in (1, 2)] + "
            "[libc.fallocate(fd, 1, 0, 1 << 30) for fd in (1, 2)]\n"
            "_ = os.write(1, b'x' * (10 << 20))", 60)
        assert error is None, error
        assert box.call("probe", (), {}, 30)[0] == [True, True, -1, -1]
        out = box.output(limit=10 * 2**20)
        assert out.startswith("x" * OUTPUT_KEPT)
        assert f"[... {(10 << 20) - OUTPUT_KEPT} more bytes of output not kept]" in out
    finally:
        box.kill()


# ------------------------------------------------------------ the protocol, as the grader sees it


@pytest.fixture(scope="module")
def box():
    """One sandbox for the protocol's tests (each defines its own functions)."""
    box = Sandbox(memory_mb=1024).start()
    yield box
    box.kill()


def test_a_call_takes_and_returns_plain_data(box):
    """Arguments and keyword arguments arrive as the values sent (tuples, None, arrays of their
    dtype) and the value comes back as plain data, a tuple as a tuple."""
    error, warns = box.exec_cell("import numpy as np\n"
                                 "def pack(a, b, *, c=None):\n"
                                 "    return (a.dtype.str, a.sum(), b, c)", 30)
    assert error is None and warns == []
    value, warns = box.call("pack", (np.arange(4, dtype=np.int32), (1, "x")), {"c": None}, 30)
    assert value == ("<i4", 6, (1, "x"), None) and warns == []
    array, _ = box.call("pack", (np.zeros(0),), {"b": [], "c": 2.5}, 30)
    assert array == ("<f8", 0.0, [], 2.5)


def test_the_students_exception_and_warnings_come_back_as_data(box):
    """A cell that raises gives its error as a value (the process goes on); a function that
    raises gives RemoteError with the exception's type, its hierarchy, message and warnings."""
    error, _ = box.exec_cell("def f(:\n    pass", 30)
    assert error is not None and error.exc_type == "SyntaxError"
    box.exec_cell("import warnings\n"
                  "def lookup(key):\n"
                  "    warnings.warn('careful with ' + key)\n"
                  "    return {'a': 1}[key]", 30)
    assert box.call("lookup", ("a",), {}, 30) == (1, ["UserWarning: careful with a"])
    with pytest.raises(RemoteError) as raised:
        box.call("lookup", ("zz",), {}, 30)
    assert raised.value.exc_type == "KeyError" and "LookupError" in raised.value.mro
    assert "'zz'" in raised.value.message
    assert any("careful with zz" in w for w in raised.value.warnings)


def test_an_unknown_function_is_a_name_error_of_the_student(box):
    with pytest.raises(RemoteError) as raised:
        box.call("never_defined", (), {}, 30)
    assert raised.value.exc_type == "NameError"


def test_a_request_past_the_deadline_fails_at_once_and_ends_the_process():
    """``deadline`` (the student's budget) cuts a request short whatever its ``timeout``."""
    box = Sandbox(memory_mb=1024).start()
    try:
        box.exec_cell("import time\ndef nap():\n    time.sleep(60)", 30)
        start = time.monotonic()
        with pytest.raises(SandboxError) as info:
            box.call("nap", (), {}, 60, deadline=start + 0.5)
        assert info.value.kind == "timeout"
        assert box.proc.poll() is not None  # killed, not left sleeping
    finally:
        box.kill()


def test_printed_output_is_kept_and_cleaned():
    """What the notebook prints comes back as clean text (control codes escaped), cut to the
    ``limit`` asked for."""
    box = Sandbox(memory_mb=1024).start()
    try:
        box.exec_cell("print('hello\\x1b[31m red')\nprint('y' * 500)", 30)
        # The first 100 characters: "hello", ESC, "[31m red" and a newline (15), then 85 y's;
        # the escape code is shown as the four characters \x1b.
        assert box.output(limit=100) == "hello\\x1b[31m red\n" + "y" * 85 + " [...]"
    finally:
        box.kill()


def test_killing_is_idempotent_and_keeps_the_output():
    box = Sandbox(memory_mb=1024).start()
    box.exec_cell("print('before the end')", 30)
    box.kill()
    box.kill()
    assert box.proc.poll() is not None
    assert "before the end" in box.output()


def test_a_process_killed_by_a_signal_says_which():
    box = Sandbox(memory_mb=1024).start()
    try:
        with pytest.raises(SandboxError) as info:
            box.exec_cell("import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)", 30)
        assert info.value.kind == "died" and "SIGSEGV" in str(info.value)
    finally:
        box.kill()


def test_defences_report_every_defence_by_name():
    found = defences(memory_mb=512)

    assert set(found) == set(DEFENCES) and all(isinstance(v, bool) for v in found.values())
    assert found["rlimits"] and found["output_pipe"]  # a sandbox starts here at all
    assert found["namespaces"] == (namespace_flags() is not None)
