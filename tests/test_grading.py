"""The grading machinery: the helpers test cells call, the plain-data codec, the sandbox."""

from __future__ import annotations

import json

import numpy as np
import pytest

from mlcourse_utils import grading
from mlcourse_utils._sandbox import RemoteError, Sandbox, SandboxError, decode, encode, namespace_flags
from mlcourse_utils.grading import Case, check_against_reference, check_close, check_equal, check_raises

# ---------------------------------------------------------------- check helpers


def test_check_close_accepts_harmless_differences():
    """A list for a tuple, a Python float for a numpy scalar, a 0-d array for a number."""
    check_close([1.0, np.array(2.0)], (np.float64(1.0), 2.0), "pair")
    check_close((np.array([1.0, 2.0]), 3), [np.array([1.0, 2.0]), 3.0], "array and number")
    check_close(-np.inf, -np.inf, "minus infinity")
    check_close([0.5, 0.25], np.array([0.5, 0.25]), "list for an array")


@pytest.mark.parametrize("actual,expected,fragment", [
    (1.1, 1.0, "expected 1"),
    ((1.0,), (1.0, 2.0), "expected 2 values"),
    (np.array([1.0]), 1.0, "single number"),
    (np.ones((2, 3)), np.ones((3, 2)), "shape (3, 2)"),
    (np.nan, 0.0, "expected 0"),
    (0.0, -np.inf, "expected -inf"),
    ("0.5", 0.5, "expected 0.5"),
    (None, 1.0, "expected 1"),
    (np.array([1.0, 2.0, 3.5]), np.array([1.0, 2.0, 3.0]), "entry 2 should be 3"),
])
def test_check_close_rejects_wrong_values_with_a_message(actual, expected, fragment):
    with pytest.raises(AssertionError, match="what was called") as info:
        check_close(actual, expected, "what was called")
    assert fragment in str(info.value)


def test_check_equal_is_exact_and_compares_labels():
    check_equal(np.array(["ham", "spam"]), np.array(["ham", "spam"]), "classes")
    check_equal([0, 2, 1], np.array([0, 2, 1]), "indices")
    with pytest.raises(AssertionError):
        check_equal(np.array(["spam", "ham"]), np.array(["ham", "spam"]), "classes")
    with pytest.raises(AssertionError):
        check_equal(np.array([0, 1]), np.array([0.0, 1.0 + 1e-12]), "indices")


def test_check_close_compares_string_parts_of_a_tuple_exactly():
    expected = (np.array(["a", "b"]), np.array([0.5, 0.5]))
    check_close([["a", "b"], [0.5, 0.5 + 1e-12]], expected, "fit")
    with pytest.raises(AssertionError, match=r"fit\[0\]"):
        check_close([["b", "a"], [0.5, 0.5]], expected, "fit")


def _raises_value_error(x):
    if x < 0:
        raise ValueError("x must be >= 0")
    return x


def test_check_raises_local_and_remote():
    check_raises(ValueError, _raises_value_error, -1)
    with pytest.raises(AssertionError, match="should raise ValueError, but returned 1"):
        check_raises(ValueError, _raises_value_error, 1)

    def remote(*args):
        raise RemoteError("BadInput", ["BadInput", "ValueError", "Exception"], "no")

    check_raises(ValueError, remote, 1)  # a subclass of ValueError in the student's process
    with pytest.raises(AssertionError, match="raised BadInput"):
        check_raises(TypeError, remote, 1)


def test_check_against_reference_names_the_failing_case():
    cases = [Case((np.arange(3.0),), label="a short ramp"), Case((np.ones(4),), label="four ones")]
    check_against_reference(np.mean, np.mean, cases)

    def off_by_one(x):
        return np.sum(x) / (len(x) - 1)

    off_by_one.__name__ = "mean"
    with pytest.raises(AssertionError, match="mean on a short ramp"):
        check_against_reference(off_by_one, np.mean, cases)


# ---------------------------------------------------------------- the codec


def test_codec_round_trip_of_plain_data():
    value = (1, 2.5, -np.inf, "ham", None, True, [np.arange(6).reshape(2, 3)],
             {"k": np.array(["a", "bb"])}, np.array(3.0))
    back = decode(json.loads(json.dumps(encode(value))))
    assert isinstance(back, tuple) and len(back) == len(value)
    assert back[:6] == (1, 2.5, -np.inf, "ham", None, True)
    np.testing.assert_array_equal(back[6][0], value[6][0])
    assert back[6][0].dtype == np.int64
    np.testing.assert_array_equal(back[7]["k"], ["a", "bb"])
    assert back[8].shape == () and back[8] == 3.0


@pytest.mark.parametrize("payload", [
    {"$a": "AAAA", "dtype": "|O", "shape": [1]},                  # object arrays
    {"$a": "AAAAAAAAAAA=", "dtype": "<f8", "shape": [2]},         # data does not fit the shape
    {"$a": "AAAAAAAAAAA=", "dtype": "<f8", "shape": [-1]},        # negative shape
    {"$a": "AAAAAAAAAAA=", "dtype": "<f8", "shape": [1], "x": 1},  # unknown key
    {"__class__": "os.system"},
    {"$f": "1e400"},
])
def test_decode_rejects_anything_but_plain_data(payload):
    with pytest.raises((ValueError, TypeError)):
        decode(payload)


# ---------------------------------------------------------------- notebooks


def test_read_notebook_cells_rejects_non_notebooks():
    with pytest.raises(ValueError):
        grading.read_notebook_cells(b"{not json")
    with pytest.raises(ValueError, match="format version 4"):
        grading.read_notebook_cells(b'{"cells": [], "nbformat": 3}')
    cells = grading.read_notebook_cells(b'{"cells": [{"cell_type": "code", "source": ["a", "b"]}],'
                                        b' "nbformat": 4}')
    assert grading._source(cells[0]) == "ab"


def test_strip_hidden_tests_keeps_only_the_visible_part():
    src = "visible()\n### BEGIN HIDDEN TESTS\nsecret()\n### END HIDDEN TESTS\nafter()"
    assert grading.strip_hidden_tests(src) == "visible()\nafter()"


# ---------------------------------------------------------------- the sandbox

needs_namespaces = pytest.mark.skipif(namespace_flags() is None,
                                      reason="Linux namespaces (unshare) are not available here")


@pytest.fixture
def sandbox(tmp_path):
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "hidden_tests.txt").write_text("expected = 42")
    box = Sandbox(hidden=[grading.find_course_root(), secret], memory_mb=2048).start()
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
    root = grading.find_course_root()
    listing = _run(sandbox, f"import os\ndef probe():\n    return sorted(os.listdir({str(root)!r}))")
    assert "solutions" not in listing and "exercises" not in listing
    secret = _run(sandbox, "import os\ndef probe():\n"
                  f"    p = {str(sandbox.secret)!r}\n    return os.listdir(p) if os.path.isdir(p) else None")
    assert not secret  # covered by an empty tmpfs, or not there at all (/tmp is fresh)


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
    pids = _run(sandbox, "import os\ndef probe():\n    return [p for p in os.listdir('/proc') if p.isdigit()]")
    assert len(pids) <= 3  # the namespace's shell, the notebook process, maybe a child
    reached = _run(sandbox, "import socket\ndef probe():\n    try:\n"
                   "        socket.create_connection(('127.0.0.1', 22), timeout=2)\n        return True\n"
                   "    except OSError:\n        return False")
    assert reached is False


@needs_namespaces
def test_sandbox_reports_an_import_of_the_reference(sandbox):
    error, _ = sandbox.exec_cell("import importlib\nimportlib.import_module('mlcourse' + '_utils.mle')", 30)
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


@pytest.mark.parametrize("source,uses", [
    ("from mlcourse_utils.mle import gaussian_mle", True),
    ("import mlcourse_utils.mle as m\ndef f(x):\n    return m.gaussian_mle(x)", True),
    ("def f(x):\n    return mlcourse_utils.mle.gaussian_mle(x)", True),
    ("%matplotlib inline\nfrom mlcourse_utils import mle", True),
    ("# unlike mlcourse_utils, this divides by N\ndef f(x):\n    return 1", False),
    ("def f(x):\n    'Same as mlcourse_utils.mle.gaussian_mle.'\n    return 1", False),
])
def test_uses_reference_reads_code_not_comments(source, uses):
    assert grading.uses_reference(source) is uses
