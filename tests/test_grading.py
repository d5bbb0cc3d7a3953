"""The grading machinery: the helpers test cells call, the plain-data codec, the sandbox."""

from __future__ import annotations

import json
import os
import re

import numpy as np
import pytest

from mlcourse_utils.grading import (
    Case,
    check_against_reference,
    check_close,
    check_equal,
    check_raises,
    gradebook,
    notebook,
    session,
    submissions,
)
from mlcourse_utils.grading.protocol import (
    MAX_ELEMENTS,
    RemoteError,
    SandboxError,
    clean_text,
    decode,
    encode,
    parse_reply,
)
from mlcourse_utils.grading.sandbox import Sandbox, namespace_flags

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
        notebook.read_notebook_cells(b"{not json")
    with pytest.raises(ValueError, match="format version 4"):
        notebook.read_notebook_cells(b'{"cells": [], "nbformat": 3}')
    cells = notebook.read_notebook_cells(b'{"cells": [{"cell_type": "code", "source": ["a", "b"]}],'
                                        b' "nbformat": 4}')
    assert notebook.cell_source(cells[0]) == "ab"


def test_strip_hidden_tests_keeps_only_the_visible_part():
    src = "visible()\n### BEGIN HIDDEN TESTS\nsecret()\n### END HIDDEN TESTS\nafter()"
    assert notebook.strip_hidden_tests(src) == "visible()\nafter()"


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
def test_a_call_carries_the_tests_floating_point_error_mode(sandbox):
    """A stability check wraps its call in ``np.errstate(over="raise")``: the student's function
    runs in another process, where the mode must hold too, so a formula that overflows fails
    there as it fails in the student's notebook; outside such a block, overflow is a warning."""
    error, _ = sandbox.exec_cell("import numpy as np\nnp.seterr(all='ignore')\n"
                                 "def naive(t):\n    return 1 / (1 + np.exp(-t))", 30)
    assert error is None, error
    with np.errstate(over="raise"):
        with pytest.raises(RemoteError) as raised:
            sandbox.call("naive", (-1000.0,), {}, 30)
    assert raised.value.exc_type == "FloatingPointError"
    value, warns = sandbox.call("naive", (-1000.0,), {}, 30)
    assert value == 0.0 and any("overflow" in w for w in warns), warns


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


@pytest.mark.parametrize("source,uses", [
    ("from mlcourse_utils.mle import gaussian_mle", True),
    ("import mlcourse_utils.mle as m\ndef f(x):\n    return m.gaussian_mle(x)", True),
    ("def f(x):\n    return mlcourse_utils.mle.gaussian_mle(x)", True),
    ("%matplotlib inline\nfrom mlcourse_utils import mle", True),
    ("# unlike mlcourse_utils, this divides by N\ndef f(x):\n    return 1", False),
    ("def f(x):\n    'Same as mlcourse_utils.mle.gaussian_mle.'\n    return 1", False),
])
def test_uses_reference_reads_code_not_comments(source, uses):
    assert session.uses_reference(source) is uses


# ---------------------------------------------------------------- hostile text and data


@pytest.mark.parametrize("raw", ["\ud800", "ok \udcff end", b"caf\xe9", b"\xff\xfe\x00\x1b[31m"])
def test_clean_text_always_gives_valid_utf8(raw):
    text = clean_text(raw)
    text.encode("utf-8")  # would raise UnicodeEncodeError for a lone surrogate
    assert "\x00" not in text and "\x1b" not in text
    assert "\\" in text  # what could not be kept is shown as an escape, not dropped silently


def test_clean_text_caps_the_length_and_keeps_lines():
    assert clean_text("a\tb\nc") == "a\tb\nc"
    long = clean_text("x" * 5000, limit=100)
    assert long.startswith("x" * 100) and long.endswith("[...]") and len(long) < 120


def test_parse_reply_refuses_swelling_and_deep_replies():
    with pytest.raises(ValueError, match="lists and dicts"):
        parse_reply(b'{"value": [' + b"[]," * MAX_ELEMENTS + b"[]]}")
    with pytest.raises(ValueError):
        parse_reply(b"[" * 50_000 + b"]" * 50_000)
    with pytest.raises(ValueError, match="not an object"):
        parse_reply(b"[1, 2]")
    assert parse_reply(b'{"ok": true}') == {"ok": True}


def test_decode_cleans_strings_and_counts_elements():
    assert decode("bad \ud800").encode("utf-8")
    arr = decode(encode(np.array(["a", "b\x01c"])))
    assert list(arr) == ["a", "b\\x01c"]
    with pytest.raises(ValueError, match="elements"):
        decode([[] for _ in range(MAX_ELEMENTS + 1)])
    overflow = {"$a": "", "dtype": "<f8", "shape": [2**32, 2**32]}  # wraps to 0 in int64
    with pytest.raises(ValueError, match="shape"):
        decode(overflow)


def test_check_close_rejects_text_where_numbers_are_expected():
    for text in ("0.5", ["0.5"], np.array(["0.5"]), (np.float64(0.5), "1.0")):
        with pytest.raises(AssertionError):
            check_close(text, (0.5, 1.0) if isinstance(text, tuple) else [0.5], "f")


def test_student_ids_are_clean_and_unique():
    assert submissions.student_id("alice") == "alice"
    latin = submissions.student_id(os.fsdecode(b"caf\xe9"))
    latin.encode("utf-8")
    assert latin.startswith("caf\\xe9~")
    long = submissions.student_id("x" * 200)
    assert len(long) < 100 and long != submissions.student_id("x" * 199)


def test_read_submitted_file_takes_only_regular_files(tmp_path):
    real = tmp_path / "real.ipynb"
    real.write_bytes(b"{}")
    assert submissions.read_submitted_file(real) == b"{}"
    link = tmp_path / "link.ipynb"
    link.symlink_to(real)
    with pytest.raises(ValueError, match="symbolic link"):
        submissions.read_submitted_file(link)
    fifo = tmp_path / "fifo.ipynb"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match="not a regular file"):
        submissions.read_submitted_file(fifo)  # and it does not wait for a writer
    with pytest.raises(ValueError, match="larger than"):
        submissions.read_submitted_file(real, limit=1)


def test_find_submissions_refuses_links(tmp_path):
    (tmp_path / "alice").mkdir()
    (tmp_path / "alice" / "mle.ipynb").write_text("{}")
    (tmp_path / "bob").symlink_to(tmp_path / "alice")
    (tmp_path / "carol").mkdir()
    (tmp_path / "carol" / "mle.ipynb").symlink_to(tmp_path / "alice" / "mle.ipynb")
    (tmp_path / "dave").mkdir()
    (tmp_path / "dave" / "mle").symlink_to(tmp_path / "alice")
    (tmp_path / "erin").mkdir()
    found = submissions.find_submissions("mle", tmp_path, "mle.ipynb")
    assert found["alice"] == tmp_path / "alice" / "mle.ipynb"
    for student in ("bob", "carol", "dave"):
        assert isinstance(found[student], submissions.Refused), student
        assert "symbolic link" in found[student].reason
    assert found["erin"] is None


def test_sanitized_notebook_drops_outputs_attachments_and_script():
    nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": {"evil": "<script>"}, "cells": [
        {"cell_type": "code", "source": "x = 1", "metadata": {
            "nbgrader": {"grade_id": "f", "solution": True, "points": 2, "extra": {"a": 1}}},
         "outputs": [{"output_type": "display_data", "data": {"text/html": "<script>x</script>"},
                      "metadata": {}}], "execution_count": 3},
        {"cell_type": "markdown", "source": "ok <script>alert(1)</script><img src=x onerror=y>"
                                            " \ud800", "metadata": {},
         "attachments": {"a.png": {"image/png": "AAAA"}}},
    ]}
    import nbformat

    clean = gradebook.sanitized_notebook(json.dumps(nb).encode())
    text = json.dumps(clean)
    assert "<script" not in text and "onerror" not in text and "attachments" not in text
    nbformat.validate(nbformat.from_dict(clean))  # a valid notebook for formgrader
    cells = clean["cells"]
    assert cells[0]["outputs"] == [] and cells[0]["execution_count"] is None
    assert cells[0]["metadata"]["nbgrader"] == {"grade_id": "f", "solution": True, "points": 2}
    assert cells[1]["source"].startswith("ok ")
    text.encode("utf-8")


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


# ---------------------------------------------------------------- properties and the report

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402

# Text without control characters and lone surrogates (decode cleans those: see above).
_text = st.text(st.characters(blacklist_categories=("Cc", "Cs")), max_size=20)
_scalars = st.one_of(st.none(), st.booleans(), st.integers(-2**62, 2**62),
                     st.floats(allow_nan=False), _text)
_arrays = hnp.arrays(dtype=st.sampled_from([np.float64, np.int64, np.bool_, np.float32]),
                     shape=hnp.array_shapes(min_dims=0, max_dims=3, max_side=4))
_values = st.recursive(
    st.one_of(_scalars, _arrays),
    lambda children: st.one_of(st.lists(children, max_size=4),
                               st.lists(children, max_size=4).map(tuple),
                               st.dictionaries(_text, children, max_size=3)),
    max_leaves=12)


def _same(a, b):
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.dtype == b.dtype and a.shape == b.shape and \
            np.array_equal(a, b, equal_nan=True)
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return a == b and type(a) is type(b)


@settings(max_examples=200, deadline=None)
@given(_values)
def test_codec_round_trips_plain_data(value):
    """What the grader sends arrives as the same plain data (types, dtypes and shapes kept)."""
    back = decode(json.loads(json.dumps(encode(value))))
    assert _same(value, back)


@given(st.floats(allow_nan=False, allow_infinity=False, min_value=-1e6, max_value=1e6),
       st.floats(min_value=-1e-7, max_value=1e-7))
def test_check_close_tolerates_rounding_and_rejects_real_errors(x, noise):
    check_close(x * (1 + noise), x, "f")                 # within rtol=1e-6
    with pytest.raises(AssertionError):
        check_close(x + 1e-3 + 1e-5 * abs(x), x, "f")    # beyond rtol and atol


def test_feedback_page_escapes_and_explains(tmp_path):
    from mlcourse_utils.grading.notebook import Assignment, TestCell
    from mlcourse_utils.grading.report import write_feedback
    from mlcourse_utils.grading.session import GradeResult, TestResult

    a = Assignment("demo", "demo.ipynb", ["f"], [TestCell("test_f", "f", 2.0, "secret_code()",
                                                          "f on the example")],
                   [], [("derivation", 3.0)], {"test_f": ""})
    r = GradeResult("<b>eve</b>", "demo")
    r.tests = [TestResult("test_f", "f", 2.0, 0.0, "f on the example",
                          message="f(1) should be 2, got <script>alert(1)</script>")]
    r.reasons = {"f": "timed out after 6 s"}
    r.output = "<img src=x onerror=alert(2)>"
    path = tmp_path / "page.html"
    write_feedback(r, a, path)
    page = path.read_text()
    assert "<script>" not in page and "<img" not in page and "<b>eve" not in page
    assert "&lt;script&gt;" in page and "timed out after 6 s" in page
    assert "0 / 2" in page and "derivation" in page and "secret_code" not in page


def _course_with(tmp_path, cells):
    import nbformat

    folder = tmp_path / "solutions" / "demo"
    folder.mkdir(parents=True)
    (tmp_path / "nbgrader_config.py").write_text("")
    nb = nbformat.v4.new_notebook(cells=cells)
    nbformat.write(nb, folder / "demo.ipynb")
    return tmp_path


def _cell(source, **nbgrader):
    import nbformat

    cell = nbformat.v4.new_code_cell(source)
    if nbgrader:
        cell.metadata["nbgrader"] = {"schema_version": 3, "locked": True, **nbgrader}
    return cell


def test_setup_is_the_plain_code_before_the_first_task(tmp_path):
    """Imports before the first task run before each test; a later exploration cell does not."""
    root = _course_with(tmp_path, [
        _cell("import math"),
        _cell("def f(x):\n    return x", grade_id="f", solution=True, grade=False),
        _cell("assert f(1) == 1", grade_id="test_f", grade=True, solution=False, points=1),
        _cell("print(f(2))  # an exploration that calls the student's function"),
    ])
    a = notebook.load_assignment("demo", root)
    assert a.setup == ["import math"] and a.tasks == ["f"]
    session.check_setup(a)
    broken = _course_with(tmp_path / "broken", [_cell("1 / 0"), *[_cell("x = 1")]])
    with pytest.raises(ValueError, match="setup cell .*ZeroDivisionError"):
        session.check_setup(notebook.load_assignment("demo", broken))


# ---------------------------------------------------------------- reading submitted text

from mlcourse_utils.grading import analysis  # noqa: E402


@pytest.mark.parametrize("source,watch,uses", [
    ("import numpy as np\ndef f(a):\n    return np.linalg.inv(a)", "numpy.linalg.inv", True),
    ("from scipy.stats import entropy as H\ndef f(p):\n    return H(p)", "scipy.stats.entropy",
     True),
    ("from scipy import stats\ndef f(p):\n    return stats.entropy(p)", "scipy.stats.entropy",
     True),
    ("import scipy.stats\ndef f(p):\n    return scipy.stats.entropy(p)", "scipy.stats.entropy",
     True),
    ("def entropy(p):\n    return 0.0\nentropy([1])", "scipy.stats.entropy", False),
    ("# scipy.stats.entropy would do it\nx = 'scipy.stats.entropy'", "scipy.stats.entropy", False),
    ("import scipy.stats as ss\nss.norm.pdf(0)", "scipy.stats.entropy", False),
    ("%timeit -n1 1\n!ls\nfrom mlcourse_utils import mle", "mlcourse_utils", True),
    ("%%time\nimport mlcourse_utils.mle as m", "mlcourse_utils", True),
])
def test_scan_code_resolves_imports(source, watch, uses):
    """Names are followed through `import ... as`, `from ... import` and attribute chains (by
    hand: each source either reaches `watch` through its imports or does not)."""
    scan = analysis.scan_code(source, [watch])
    assert scan.parsed
    assert scan.uses == ([watch] if uses else [])


def test_scan_code_judges_long_or_broken_cells_by_their_text():
    """A cell beyond MAX_PARSED_CELL characters, or not Python, is judged by its text."""
    long = "x = [" + "1," * analysis.MAX_PARSED_CELL + "]\n# mlcourse_utils.mle\n"
    scan = analysis.scan_code(long)
    assert not scan.parsed and "longer than" in scan.reason and scan.uses == ["mlcourse_utils"]
    broken = analysis.scan_code("def f(:\n    from mlcourse_utils import mle")
    assert not broken.parsed and broken.uses == ["mlcourse_utils"]
    assert analysis.scan_code("def f(:\n    return 1").uses == []


def test_scan_code_notes_tampering_and_no_false_alarm_on_long_text():
    """The tamper patterns find what they name, and stay silent on the long near-misses that
    used to make them quadratic (no `] =` after `sys.modules[`, blank lines, no `=`)."""
    assert analysis.scan_code("import sys\nsys.modules['numpy'] = None").tamper == [
        "replaces modules in sys.modules"]
    assert analysis.scan_code("import builtins\nbuiltins.abs = max").tamper == [
        "replaces built-in functions"]
    assert analysis.scan_code("np.testing.assert_allclose = print").tamper == [
        "monkeypatches numpy"]
    assert analysis.scan_code("sys.modules[" * 20_000).tamper == []
    assert analysis.scan_code(" \n" * 50_000 + "$").tamper == []
    assert analysis.scan_code("builtins." + "a" * 100_000).tamper == []


def _notebook(path, cells, extra=""):
    """A version-4 notebook file of ``cells`` (dicts); ``extra`` is JSON text added at the top."""
    body = json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    path.write_text("{" + extra + body[1:] if extra else body)
    return path


def _code(source, **nbgrader):
    cell = {"cell_type": "code", "metadata": {}, "source": source, "outputs": [],
            "execution_count": None}
    if nbgrader:
        cell["metadata"]["nbgrader"] = nbgrader
    return cell


@pytest.fixture(scope="module")
def demo_assignment():
    from mlcourse_utils.grading.notebook import Assignment, TestCell

    return Assignment("demo", "demo.ipynb", ["f", "g"],
                      [TestCell("test_f", "f", 1.0, "assert f(1) == 1", "f on 1"),
                       TestCell("test_g", "g", 1.0, "assert g(1) == 2", "g on 1")],
                      [], [], {"test_f": "assert f(1) == 1", "test_g": "assert g(1) == 2"})


def test_analyse_returns_the_code_cells_and_what_they_show(tmp_path, demo_assignment):
    """By hand: cells 0, 1 and 4 run (the test cells do not), g delegates, cell 4 tampers, and
    test_g was edited."""
    path = _notebook(tmp_path / "nb.ipynb", [
        _code("def f(x):\n    return x", grade_id="f", solution=True, grade=False),
        _code("from mlcourse_utils.mle import g", grade_id="g", solution=True, grade=False),
        _code("assert f(1) == 1", grade_id="test_f", grade=True, solution=False, points=1),
        _code("pass", grade_id="test_g", grade=True, solution=False, points=1),
        _code("import sys\nsys.modules['numpy'] = None\nimport scipy.special"),
        {"cell_type": "markdown", "metadata": {}, "source": "text"},
    ])
    found = analysis.analyse(path, demo_assignment, timeout=60, watch=["scipy.special"])
    assert [(i, t) for i, _, t in found.cells] == [(0, "f"), (1, "g"), (4, None)]
    assert found.cells[0][1] == "def f(x):\n    return x"
    assert found.delegated == {"g"}
    assert found.uses == {1: ["mlcourse_utils"], 4: ["scipy.special"]}
    assert any("test cell test_g was changed" in n for n in found.notes)
    assert any("cell 5 replaces modules in sys.modules" in n for n in found.notes)


def test_analyse_refuses_what_it_cannot_read_within_its_limits(tmp_path, demo_assignment):
    """Too many cells, JSON nested 100 000 deep, 280 MB of small lists against a 100 MB limit
    (5 million lists of 56 bytes each), and ten 190 kB cells to parse (about a second each)
    against half a second: each is the student's reason, never an exception of the grader."""
    many = _notebook(tmp_path / "many.ipynb", [_code("x = 1")] * (analysis.MAX_CELLS + 1))
    with pytest.raises(analysis.AnalysisError, match=f"at most {analysis.MAX_CELLS}"):
        analysis.analyse(many, demo_assignment, timeout=60)
    deep = _notebook(tmp_path / "deep.ipynb", [], '"x": ' + "[" * 100_000 + "]" * 100_000 + ", ")
    with pytest.raises(analysis.AnalysisError, match="nested too deeply"):
        analysis.analyse(deep, demo_assignment, timeout=60)
    swell = _notebook(tmp_path / "swell.ipynb", [], '"x": [' + "[]," * 5_000_000 + "[]], ")
    with pytest.raises(analysis.AnalysisError, match="more than 100 MB"):
        analysis.analyse(swell, demo_assignment, timeout=60, memory_mb=100)
    slow = _notebook(tmp_path / "slow.ipynb", [_code("x = [" + "1," * 95_000 + "]")] * 10)
    with pytest.raises(analysis.AnalysisError, match="longer than 0.5 s"):
        analysis.analyse(slow, demo_assignment, timeout=0.5)
    import time

    with pytest.raises(analysis.AnalysisError, match="total grading time"):
        analysis.analyse(slow, demo_assignment, timeout=60, deadline=time.monotonic() + 0.5)
    # ... and the reader still serves the next student.
    ok = _notebook(tmp_path / "ok.ipynb", [_code("x = 1")])
    assert len(analysis.analyse(ok, demo_assignment, timeout=60).cells) == 1


# ---------------------------------------------------------------- ids, caps, defences


def test_find_submissions_refuses_invisible_and_lookalike_names(tmp_path):
    names = ["ok", "zw\u200bsp", "Twin", "twin", "Jos\u00e9", "Jose\u0301", " lead", "Ren\u00e9e"]
    for name in names:
        (tmp_path / name).mkdir()
        (tmp_path / name / "mle.ipynb").write_text("{}")
    (tmp_path / "Zoe\u0308").mkdir()  # decomposed, without a composed twin: composed
    found = submissions.find_submissions("mle", tmp_path, "mle.ipynb")
    assert found["ok"] == tmp_path / "ok" / "mle.ipynb"
    assert found["Ren\u00e9e"] == tmp_path / "Ren\u00e9e" / "mle.ipynb"
    assert "Zoe\u0308" not in found and found["Zo\u00eb"] is None
    zero = found["zw\\u200bsp"]  # the id shows the invisible character
    assert isinstance(zero, submissions.Refused) and "U+200B ZERO WIDTH SPACE" in zero.reason
    for twin in ("Twin", "twin"):
        assert "'Twin' and 'twin' differ only in case" in found[twin].reason
    for jose in ("Jos\u00e9", "Jose\\u0301"):
        assert "'Jose\\\\u0301' and 'Jos\u00e9'" in found[jose].reason, found[jose]
    assert "begins or ends with a space" in found["\\x20lead"].reason
    for student in found:
        assert all(c.isprintable() for c in student), repr(student)


def test_gradebook_ids_are_safe_for_nbgrader_export():
    """nbgrader export writes ids unquoted: commas, quotes and line breaks would break rows and
    a leading = + - @ is a formula (by hand: each case below)."""
    from mlcourse_utils.grading.gradebook import gradebook_id

    assert gradebook_id("alice") == "alice"
    assert gradebook_id("dave@uni.example") == "dave@uni.example"
    assert gradebook_id("Ana Lima") == "Ana Lima"
    assert gradebook_id("=1+2") == "'=1+2"
    assert gradebook_id("-2") == "'-2"
    for raw in ("smith, j", 'say "hi"', "tab\there"):
        safe = gradebook_id(raw)
        assert not any(c in safe for c in ',"\t') and safe.startswith(raw[:3])
    assert gradebook_id("a,b") != gradebook_id("a_b")


def test_grade_result_is_capped_with_a_note():
    r = session.GradeResult("s", "demo")
    r.cell_errors = [(i, "ValueError: x" * 10) for i in range(300)]
    r.cell_warnings = [f"cell {i}: UserWarning" for i in range(100)]
    r.notes = [f"note {i}" for i in range(200)]
    r.output = "y" * 100_000
    r.bound()
    assert len(r.cell_errors) == session.MAX_CELL_ERRORS
    assert len(r.cell_warnings) == session.MAX_CELL_WARNINGS
    assert r.notes[session.MAX_NOTES:] == ["150 more notes (not listed)",
                                           "250 more cells raised an error (not listed)",
                                           "80 more warnings while the notebook ran (not listed)"]
    assert r.output.startswith("[... output cut]") and len(r.output) < session.MAX_OUTPUT + 50


@pytest.mark.parametrize("isolate", [True, False])
def test_sandbox_output_is_a_drained_pipe(isolate):
    """The notebook's stdout is a pipe (fallocate cannot grow a host file through it), and
    10 MB printed keep OUTPUT_KEPT bytes and say how much was dropped."""
    from mlcourse_utils.grading.sandbox import OUTPUT_KEPT

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


def test_require_isolation_stops_before_any_student_is_graded(tmp_path, monkeypatch):
    from mlcourse_utils.grading import batch, sandbox

    held = dict.fromkeys(sandbox.DEFENCES, True)
    monkeypatch.setattr(batch.sandbox, "defences", lambda *a, **k: {**held, "seccomp": False})
    (tmp_path / "subs" / "alice").mkdir(parents=True)
    with pytest.raises(batch.IsolationError, match="seccomp"):
        batch.grade_class("mle", tmp_path / "subs", tmp_path / "out", require_isolation=True,
                          progress=False)
    assert not (tmp_path / "out").exists()
    lines = batch.describe_defences({**held, "cpu_cgroup": False})
    assert lines[0].startswith("defences in force: namespaces")
    assert "cpu_cgroup (a CPU cgroup" in lines[1] and "--require-isolation" in lines[1]


def test_missing_dependency_is_an_error_with_the_install_command(monkeypatch):
    from mlcourse_utils.grading import requirements

    assert requirements.missing_dependencies() == []  # this environment installed the extra
    real = requirements.importlib.util.find_spec
    monkeypatch.setattr(requirements.importlib.util, "find_spec",
                        lambda name, *a: None if name == "mdit_py_plugins" else real(name, *a))
    with pytest.raises(ValueError,
                       match=r"mdit-py-plugins.*pip install '\.\[grading\]'"):
        requirements.check_dependencies()


def test_grading_extra_lists_what_grading_imports():
    """pyproject's [grading] extra names every distribution the grader imports (and MathJax)."""
    import tomllib

    from mlcourse_utils.grading import requirements

    project = tomllib.loads((notebook.find_course_root() / "pyproject.toml").read_text())
    extra = {re.split(r"[<>=!~\[ ]", r, maxsplit=1)[0].lower()
             for r in project["project"]["optional-dependencies"]["grading"]}
    assert set(requirements.REQUIRED_MODULES.values()) | {requirements.MATHJAX} <= extra


def test_pages_that_cannot_be_made_cost_only_the_pages(tmp_path, demo_assignment):
    """A derivation whose Markdown takes seconds to render, given 0.3 s: its page shows the
    reason in place of the answer, no half-written copy is left, and reading the code for
    grading is unaffected; an ordinary derivation renders (by hand: its text, escaped)."""
    import dataclasses

    a = dataclasses.replace(demo_assignment, manual=[("deriv", 2.0)])
    derivation = {"cell_type": "markdown", "source": "[" * 30_000 + "*a " * 20_000,
                  "metadata": {"nbgrader": {"grade_id": "deriv", "grade": True,
                                            "solution": True, "points": 2}}}
    slow = _notebook(tmp_path / "slow.ipynb", [_code("def f(x):\n    return x",
                                                     grade_id="f", solution=True), derivation])
    assert [t for _, _, t in analysis.analyse(slow, a, timeout=60).cells] == ["f"]
    problem = analysis.render_pages(slow, a, timeout=0.3, copy_to=tmp_path / "copy.ipynb",
                                    manual_dir=tmp_path / "pages")
    assert "longer than 0.3 s" in problem
    assert "No answer shown: reading the notebook took longer" in \
        (tmp_path / "pages" / "0.html").read_text()
    assert not (tmp_path / "copy.ipynb").exists() and not (tmp_path / "copy.ipynb.part").exists()
    derivation["source"] = "We get $a < b$ and <b>bold</b>."
    fine = _notebook(tmp_path / "fine.ipynb", [derivation])
    assert analysis.render_pages(fine, a, timeout=60, manual_dir=tmp_path / "ok") is None
    page = (tmp_path / "ok" / "0.html").read_text()
    assert r'<span class="math">\(a &lt; b\)</span>' in page and "&lt;b&gt;bold" in page
