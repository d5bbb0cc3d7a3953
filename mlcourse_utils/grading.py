"""Grading: the helpers that assignment test cells call, and the grader behind `mlcourse grade`.

How an assignment is graded (the design is described for instructors in the README):

* The *source* notebook ``solutions/NAME/NAME.ipynb`` holds, per task, an answer cell
  (``grade_id`` = the function name) and test cells (``test_<function>[_<suffix>]``) with the
  points. Test cells hold visible tests and, between nbgrader's hidden-test markers, hidden ones.
* The student's notebook runs in a sandboxed process (``_sandbox.py``). Only the student's own
  cells run there, never a test cell.
* The grader executes each test cell of the *source* notebook (visible and hidden tests, as the
  instructor wrote them) in its own clean process. Inside the test cell, the name of each
  answer function is bound to a proxy that sends the arguments to the sandbox, calls the
  student's function there and receives plain data back. Every comparison, every reference
  value and the verdict are computed here, where the student's code cannot reach.

A test cell earns its points when it runs to the end without raising. The helpers below raise
``AssertionError`` with a message that says in words what was expected; that message is what
the student reads in the feedback (never the test code).
"""

from __future__ import annotations

import ast
import concurrent.futures
import contextlib
import csv
import dataclasses
import errno
import functools
import hashlib
import hmac
import html
import json
import os
import re
import shutil
import stat
import sys
import threading
import time
import warnings
from pathlib import Path

import numpy as np

from . import _gradebook
from ._sandbox import RemoteError, Sandbox, SandboxError, clean_text

__all__ = [
    "Case",
    "check_close",
    "check_equal",
    "check_raises",
    "check_against_reference",
    "hidden_rng",
    "RemoteError",
]

# ====================================================================== test-cell helpers


@dataclasses.dataclass
class Case:
    """One input for a hidden test: positional ``args``, ``kwargs`` and a ``label`` in words."""

    args: tuple
    kwargs: dict = dataclasses.field(default_factory=dict)
    label: str = ""


def _describe(value, limit=8):
    if isinstance(value, np.ndarray) and value.ndim > 0:
        flat = np.array2string(value.ravel()[:limit], precision=6, separator=", ")
        more = ", ..." if value.size > limit else ""
        return f"array of shape {value.shape} {flat[:-1]}{more}]"
    if isinstance(value, (float, np.floating)):
        return f"{float(value):.10g}"
    text = repr(value)
    return text if len(text) < 200 else text[:200] + "..."


def _is_scalar(x):
    return isinstance(x, (int, float, np.number, bool, np.bool_)) or (
        isinstance(x, np.ndarray) and x.ndim == 0
    )


def _compare(actual, expected, what, rtol, atol, exact):
    """Raise AssertionError when ``actual`` does not match ``expected`` (structure-aware)."""
    if isinstance(expected, (tuple, list)) and not (
        isinstance(actual, np.ndarray) and not exact and _numeric_sequence(expected)
    ):
        if not isinstance(actual, (tuple, list)) or len(actual) != len(expected):
            n = len(expected)
            raise AssertionError(
                f"{what}: expected {n} values (a tuple or list), got {_describe(actual)}"
            )
        for i, (a, e) in enumerate(zip(actual, expected)):
            _compare(a, e, f"{what}[{i}]", rtol, atol, exact)
        return
    if expected is None:
        if actual is not None:
            raise AssertionError(f"{what}: expected None, got {_describe(actual)}")
        return
    exp = np.asarray(expected)
    if exp.dtype.kind in "US" or exact:
        act = np.asarray(actual) if isinstance(actual, (list, tuple, np.ndarray)) else actual
        if np.shape(act) != exp.shape or not np.array_equal(np.asarray(act), exp):
            raise AssertionError(f"{what}: expected {_describe(expected)}, got {_describe(actual)}")
        return
    if isinstance(actual, (str, bytes, dict)) or actual is None or _has_text(actual):
        raise AssertionError(f"{what}: expected {_describe(expected)}, got {_describe(actual)}")
    try:
        act = np.asarray(actual, dtype=np.float64)
    except (TypeError, ValueError):
        raise AssertionError(
            f"{what}: expected numbers, got {_describe(actual)}"
        ) from None
    if act.shape != exp.shape:
        if exp.ndim == 0:
            raise AssertionError(f"{what}: expected a single number, got {_describe(actual)}")
        raise AssertionError(
            f"{what}: expected an array of shape {exp.shape}, got shape {act.shape}"
        )
    exp = exp.astype(np.float64)
    same_inf = np.isinf(exp) == np.isinf(act)
    close = np.isclose(act, exp, rtol=rtol, atol=atol, equal_nan=True)
    if not (np.all(close) and np.all(same_inf) and np.all(np.isnan(exp) == np.isnan(act))):
        if exp.ndim == 0:
            raise AssertionError(f"{what}: expected {_describe(expected)}, got {_describe(actual)}")
        bad = np.argwhere(~(close & same_inf))[0]
        idx = tuple(int(i) for i in bad)
        raise AssertionError(
            f"{what}: entry {idx if len(idx) > 1 else idx[0]} should be {exp[idx]:.10g}, "
            f"got {act[idx]:.10g}"
        )


def _has_text(value, depth=0):
    """Whether a value holds strings where numbers are expected (never converted to numbers)."""
    if isinstance(value, (str, bytes)):
        return True
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "USO" and (value.dtype.kind != "O" or any(
            _has_text(v, depth + 1) for v in value.ravel()[:1000]))
    if isinstance(value, (list, tuple)) and depth < 30:
        return any(_has_text(v, depth + 1) for v in value)
    return False


def _numeric_sequence(seq):
    return all(_is_scalar(v) for v in seq)


def check_close(actual, expected, what, *, rtol=1e-6, atol=1e-9):
    """Assert that ``actual`` matches ``expected`` within tolerances.

    ``expected`` may be a number, an array, or a tuple/list of those; ``actual`` may use a list
    where a tuple is expected, a Python float where a numpy scalar is expected, a 0-d array
    for a number. ``what`` describes the call in words, e.g. ``"gaussian_mle([1, 2, 3])"``.
    """
    _compare(actual, expected, what, rtol, atol, exact=False)


def check_equal(actual, expected, what):
    """Assert exact equality (integers, booleans, labels), with the same structure rules."""
    _compare(actual, expected, what, 0.0, 0.0, exact=True)


def check_raises(exc_type, func, *args, what=None, **kwargs):
    """Assert that ``func(*args, **kwargs)`` raises ``exc_type`` (or a subclass).

    Works for a local function (visible tests in Jupyter) and for the grader's proxy to a
    student's function (the error then arrives as a :class:`RemoteError`).
    """
    what = what or f"{getattr(func, '__name__', 'the function')}{_short_args(args)}"
    try:
        result = func(*args, **kwargs)
    except RemoteError as exc:
        if exc_type.__name__ in exc.mro:
            return
        raise AssertionError(
            f"{what} should raise {exc_type.__name__}, but raised {exc.exc_type}: {exc.message}"
        ) from None
    except exc_type:
        return
    except Exception as exc:  # noqa: BLE001
        raise AssertionError(
            f"{what} should raise {exc_type.__name__}, but raised {type(exc).__name__}: {exc}"
        ) from None
    raise AssertionError(f"{what} should raise {exc_type.__name__}, but returned {_describe(result)}")


def _short_args(args):
    parts = []
    for a in args:
        if isinstance(a, np.ndarray):
            parts.append(f"<array {a.shape}>")
        else:
            r = repr(a)
            parts.append(r if len(r) <= 40 else r[:37] + "...")
    return "(" + ", ".join(parts) + ")"


def check_against_reference(student, reference, cases, *, rtol=1e-6, atol=1e-9, exact=False,
                            compare=None):
    """Compare ``student(*case.args)`` with ``reference(*case.args)`` on every case.

    ``compare(actual, expected, what)`` replaces the default comparison when given (e.g. to
    compare an objective value instead of non-unique coefficients). The reference value is
    computed in the calling process, so in the grader it is out of the student's reach.
    """
    name = getattr(student, "__name__", "your function")
    for i, case in enumerate(cases):
        args = tuple(case.args)
        kwargs = dict(case.kwargs)
        expected = reference(*_copy(args), **_copy(kwargs))
        label = case.label or f"test input {i + 1}"
        what = f"{name} on {label}"
        try:
            actual = student(*_copy(args), **_copy(kwargs))
        except RemoteError as exc:
            raise AssertionError(f"{what} raised {exc.exc_type}: {exc.message}") from None
        if compare is not None:
            compare(actual, expected, what)
        elif exact:
            check_equal(actual, expected, what)
        else:
            check_close(actual, expected, what, rtol=rtol, atol=atol)


#: Seed material used when no grading secret is given (the instructor's own checks, `release`).
DEVELOPMENT_SECRET = b"mlcourse-development-seed"

_hidden_context = threading.local()


@contextlib.contextmanager
def hidden_inputs(secret, student):
    """Within this block, :func:`hidden_rng` draws from ``(secret, student, test_id)``.

    ``secret`` is bytes (None: the development seed, the same for every student). The grader
    enters it around one student's test cells; it is per thread, so parallel students differ.
    """
    previous = getattr(_hidden_context, "value", None)
    _hidden_context.value = (secret, str(student))
    try:
        yield
    finally:
        _hidden_context.value = previous


def hidden_rng(test_id):
    """The random generator a hidden test draws its inputs from.

    Seeded by HMAC-SHA256(secret, student id + test id): with a grading secret, every student
    (and every term) gets other inputs, and re-grading one student reproduces them; without one
    (the instructor's checks, ``mlcourse release``) a fixed development seed per test id.
    Edge cases stay fixed in the test cells; only the random inputs come from here.
    """
    secret, student = getattr(_hidden_context, "value", None) or (None, "")
    if secret is None:
        secret, student = DEVELOPMENT_SECRET, ""
    digest = hmac.new(secret, f"{student}\0{test_id}".encode(), hashlib.sha256).digest()
    return np.random.default_rng(int.from_bytes(digest, "little"))


def _copy(obj):
    if isinstance(obj, np.ndarray):
        return obj.copy()
    if isinstance(obj, tuple):
        return tuple(_copy(v) for v in obj)
    if isinstance(obj, list):
        return [_copy(v) for v in obj]
    if isinstance(obj, dict):
        return {k: _copy(v) for k, v in obj.items()}
    return obj


# ====================================================================== assignments

HIDDEN_BEGIN = "### BEGIN HIDDEN TESTS"
HIDDEN_END = "### END HIDDEN TESTS"


def find_course_root(start=None):
    """The folder holding ``nbgrader_config.py`` (searched upward from ``start`` or cwd)."""
    here = Path(start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "nbgrader_config.py").exists() and (folder / "solutions").is_dir():
            return folder
    fallback = Path(__file__).resolve().parent.parent
    if (fallback / "solutions").is_dir():
        return fallback
    raise FileNotFoundError("no course folder (with nbgrader_config.py and solutions/) found")


@dataclasses.dataclass
class TestCell:
    grade_id: str
    task: str
    points: float
    source: str
    description: str


@dataclasses.dataclass
class Assignment:
    """What the grader needs from a source notebook."""

    name: str
    notebook: str
    tasks: list
    tests: list
    setup: list
    manual: list
    visible_sources: dict

    @property
    def max_score(self):
        return sum(t.points for t in self.tests)

    def task_max(self, task):
        return sum(t.points for t in self.tests if t.task == task)


def _nbgrader_meta(cell):
    """A cell's nbgrader metadata as a dict whose ``grade_id`` is a string or absent."""
    meta = cell.get("metadata", {})
    meta = meta.get("nbgrader") if isinstance(meta, dict) else None
    if not isinstance(meta, dict):
        return {}
    if "grade_id" in meta and not isinstance(meta["grade_id"], str):
        meta = {k: v for k, v in meta.items() if k != "grade_id"}
    return meta


def is_test_cell(cell):
    meta = _nbgrader_meta(cell)
    return bool(meta.get("grade")) and not meta.get("solution") and cell.get("cell_type") == "code"


def strip_hidden_tests(source):
    """The part of a test cell that students see (hidden-test blocks removed)."""
    out, hidden = [], False
    for line in source.splitlines():
        if line.strip() == HIDDEN_BEGIN:
            hidden = True
        elif line.strip() == HIDDEN_END:
            hidden = False
        elif not hidden:
            out.append(line)
    return "\n".join(out).rstrip()


def _docstring(source):
    """First line of a cell's docstring (what a test cell checks), or ''."""
    try:
        doc = ast.get_docstring(ast.parse(source)) or ""
    except SyntaxError:
        return ""
    return doc.strip().split("\n", 1)[0]


def _source(cell):
    """A cell's source as one string (nbformat allows a list of lines; anything else is '')."""
    source = cell.get("source", "")
    if isinstance(source, list):
        return "".join(line for line in source if isinstance(line, str))
    return source if isinstance(source, str) else ""


def read_notebook_cells(data):
    """Cells of a version-4 notebook given as bytes or text (plain JSON: fast, no validation).

    Raises ValueError with a short reason when the content is not a notebook.
    """
    nb = json.loads(data)
    if not isinstance(nb, dict) or nb.get("nbformat") != 4 or not isinstance(nb.get("cells"), list):
        raise ValueError("not a Jupyter notebook of format version 4")
    cells = [c for c in nb["cells"] if isinstance(c, dict)]
    for c in cells:
        if not isinstance(c.get("metadata", {}), dict):
            c["metadata"] = {}
    return cells


def load_assignment(name, root=None):
    """Read ``solutions/NAME/NAME.ipynb`` into an :class:`Assignment`."""
    root = Path(root) if root else find_course_root()
    path = root / "solutions" / name / f"{name}.ipynb"
    if not path.exists():
        raise FileNotFoundError(f"no source notebook solutions/{name}/{name}.ipynb for "
                                f"assignment {name!r}")
    tasks, tests, setup, manual, visible = [], [], [], [], {}
    for cell in read_notebook_cells(path.read_bytes()):
        meta = _nbgrader_meta(cell)
        gid = meta.get("grade_id")
        source = _source(cell)
        if cell.get("cell_type") == "code" and meta.get("solution") and not meta.get("grade"):
            tasks.append(gid)
        elif is_test_cell(cell):
            owner = max((t for t in tasks if gid == f"test_{t}" or gid.startswith(f"test_{t}_")),
                        key=len, default=None)
            if owner is None:
                raise ValueError(f"test cell {gid!r} in {path.name} follows no answer cell it names")
            tests.append(TestCell(gid, owner, float(meta.get("points", 0)), source,
                                  _docstring(source) or gid))
            visible[gid] = strip_hidden_tests(source)
        elif meta.get("grade") and meta.get("solution"):
            manual.append((gid, float(meta.get("points", 0))))
        elif cell.get("cell_type") == "code" and not meta.get("solution"):
            setup.append(source)
    return Assignment(name, path.name, tasks, tests, setup, manual, visible)


# ====================================================================== grading one notebook

#: Patterns that show an attempt to interfere with grading (reported; they earn nothing anyway).
#: Honest answers have no reason to touch these, so the feedback names them (they earn nothing
#: either way: the verdict is reached outside the student's process).
TAMPER_PATTERNS = {
    r"input_transformers|ast_transformers|input_transformer_manager": "rewrites IPython's input",
    r"\.run_code\b|\.run_cell\b|\.run_ast_nodes\b": "patches IPython's execution",
    r"display_formatter|\.displayhook\s*=|display_pub": "hijacks the display formatter",
    r"sys\.modules\s*\[[^]]*\]\s*=": "replaces modules in sys.modules",
    r"\bbuiltins\.\w+\s*=|__builtins__\s*\[": "replaces built-in functions",
    r"\b(numpy|np)(\.testing)?\.(isclose|allclose|array_equal|assert_\w+)\s*=": "monkeypatches numpy",
}

DELEGATION = ("uses the reference implementation (mlcourse_utils), which earns nothing: "
              "write the function yourself")


@dataclasses.dataclass
class TestResult:
    grade_id: str
    task: str
    points: float
    earned: float
    description: str
    message: str = ""
    warnings: list = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class GradeResult:
    student: str
    assignment: str
    tests: list = dataclasses.field(default_factory=list)
    reasons: dict = dataclasses.field(default_factory=dict)   # task -> reason for withheld points
    notes: list = dataclasses.field(default_factory=list)     # notebook-level remarks
    cell_errors: list = dataclasses.field(default_factory=list)
    cell_warnings: list = dataclasses.field(default_factory=list)
    output: str = ""
    seconds: float = 0.0

    def task_score(self, task):
        return sum(t.earned for t in self.tests if t.task == task)

    @property
    def score(self):
        return sum(t.earned for t in self.tests)


class _Fatal(Exception):
    """The sandbox died or timed out during a test cell."""

    def __init__(self, error):
        super().__init__(str(error))
        self.error = error


class _Session:
    """A student's sandbox with restart-on-failure, per-request deadlines and a total budget.

    Every request gets the earlier of two deadlines: ``timeout`` from now (per cell, per test
    cell) and the end of the student's budget (``student_timeout`` from the session's start),
    which covers starting the process, running the cells, running the tests and re-running
    cells after restarts. Once the budget is spent, every request fails at once with kind
    ``"budget"``.
    """

    def __init__(self, cells, hidden, memory_mb, timeout, student_timeout=None, max_restarts=4):
        self.cells = cells  # list of (index, source, task or None)
        self.hidden = hidden
        self.memory_mb = memory_mb
        self.timeout = timeout
        self.student_timeout = student_timeout or DEFAULT_BUDGET_FACTOR * timeout
        self.budget_end = time.monotonic() + self.student_timeout
        self.max_restarts = max_restarts
        self.restarts = -1
        self.skip = set()
        self.sandbox = None
        self.deadline = None
        self.current_task = None
        self.delegated = set()
        self.delegation_cells = set()
        self.cell_errors = {}
        self.executed = set()
        self.cell_warnings = []
        self.warnings = []
        self.outputs = []

    def _drain_events(self, task=None, cell=None):
        for event in self.sandbox.events:
            if event == "delegation":
                if task is not None:
                    self.delegated.add(task)
                elif cell is not None:
                    self.delegation_cells.add(cell)
        self.sandbox.events.clear()

    def _check_budget(self):
        if time.monotonic() >= self.budget_end:
            raise SandboxError("budget", "used up its total grading time")

    def _budget_kind(self, exc):
        """A timeout that ends at the budget's end is the budget's, not the cell's."""
        if exc.kind == "timeout" and time.monotonic() >= self.budget_end - 0.05:
            return SandboxError("budget", "used up its total grading time")
        return exc

    def ensure(self):
        """Make sure a sandbox runs with every cell executed: start it, or restart and replay.

        A cell that kills, stalls or breaks the process is skipped from then on (with its
        reason), and the process restarts; at most ``max_restarts`` restarts, all within the
        student's budget.
        """
        while self.sandbox is None:
            self._check_budget()
            self.restarts += 1
            if self.restarts > self.max_restarts:
                raise SandboxError("died", "the notebook's process failed too many times")
            box = Sandbox(hidden=self.hidden, memory_mb=self.memory_mb,
                          startup_timeout=max(self.timeout, 30))
            try:
                self.sandbox = box.start(deadline=self.budget_end)
            except SandboxError as exc:
                self.outputs.append(box.output())
                box.kill()
                raise self._budget_kind(exc) from None
            for index, source, task in self.cells:
                if index in self.skip:
                    continue
                try:
                    error, warns = self.sandbox.exec_cell(source, self.timeout, self.budget_end)
                except SandboxError as exc:
                    exc = self._budget_kind(exc)
                    self._collect_output()
                    self.sandbox = None
                    if exc.kind == "budget":
                        raise exc from None
                    self.skip.add(index)
                    self.cell_errors[index] = _sandbox_reason(exc, self)
                    break
                self._drain_events(task=task, cell=index)
                if index not in self.executed:  # report each cell once, whatever the restarts
                    self.executed.add(index)
                    if error is not None:
                        self.cell_errors[index] = f"{error.exc_type}: {error.message}"[:500]
                    self.cell_warnings.extend(f"cell {index + 1}: {w}" for w in warns)

    def call(self, name, args, kwargs):
        try:
            self.ensure()
        except SandboxError as exc:
            raise _Fatal(exc) from None
        deadline = min(self.deadline, self.budget_end)
        left = deadline - time.monotonic()
        if left <= 0:
            raise _Fatal(self._budget_kind(SandboxError("timeout", "timed out")))
        try:
            value, warns = self.sandbox.call(name, args, kwargs, left)
        except RemoteError as exc:
            self._drain_events(task=self.current_task)
            self.warnings.extend(getattr(exc, "warnings", []))
            raise
        except SandboxError as exc:
            self._collect_output()
            self.sandbox = None
            raise _Fatal(self._budget_kind(exc)) from None
        self._drain_events(task=self.current_task)
        self.warnings.extend(warns)
        return value

    def _collect_output(self):
        if self.sandbox is not None:
            self.outputs.append(self.sandbox.output())
            self.sandbox.kill()

    def close(self):
        self._collect_output()
        self.sandbox = None


#: The default total budget of a student (``--student-timeout``) is this many ``--timeout``s.
DEFAULT_BUDGET_FACTOR = 10


def _sandbox_reason(exc, session):
    if exc.kind == "timeout":
        return f"timed out after {session.timeout:g} s (the time limit per cell and per test)"
    if exc.kind == "budget":
        return (f"the notebook used up its total grading time of {session.student_timeout:g} s "
                "(cells, tests and re-runs after crashes); the remaining tests were not run")
    if exc.kind == "memory":
        return f"the notebook's process {exc}"
    if exc.kind == "died":
        hint = (f"; it may have exceeded the memory limit of {session.memory_mb} MB"
                if "signal" in str(exc) else "")
        return f"the notebook's process died: it {exc}{hint}"
    return f"grading of this task stopped: {exc}"


class _StudentFunction:
    def __init__(self, session, name):
        self._session = session
        self.__name__ = name

    def __call__(self, *args, **kwargs):
        try:
            return self._session.call(self.__name__, args, kwargs)
        except RemoteError as exc:
            if exc.exc_type == "MemoryError":
                exc.message = (exc.message + " " if exc.message else "") + \
                    f"(memory limit {self._session.memory_mb} MB)"
            raise


def uses_reference(source):
    """Whether code imports or names ``mlcourse_utils`` (comments and strings do not count).

    Disguised imports (``importlib.import_module("ml" + "course_utils")``) are caught at run
    time by the sandbox's decoy package instead.
    """
    try:
        tree = ast.parse(source)
    except SyntaxError:  # IPython syntax (magics): fall back to import lines
        return re.search(r"^\s*(from|import)\s+mlcourse_utils\b", source, re.MULTILINE) is not None
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "mlcourse_utils"
                                                for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "mlcourse_utils":
            return True
        if isinstance(node, ast.Name) and node.id == "mlcourse_utils":
            return True
    return False


def _static_checks(cells):
    """Delegation per task and tampering notes, read from the submitted sources."""
    delegated, notes = set(), []
    for index, source, task in cells:
        if uses_reference(source):
            if task is not None:
                delegated.add(task)
            else:
                notes.append(f"cell {index + 1} imports mlcourse_utils, which is not available "
                             "while grading")
        for pattern, what in TAMPER_PATTERNS.items():
            if re.search(pattern, source):
                notes.append(f"cell {index + 1} {what}: tampering detected (it has no effect on "
                             "grading, which runs outside your notebook)")
    return delegated, notes


#: Largest notebook file accepted from a student.
MAX_NOTEBOOK_BYTES = 16 * 2**20


@dataclasses.dataclass
class Refused:
    """A submission that is not graded, with the reason (a link, not a regular file, ...)."""

    reason: str


def read_submitted_file(path, limit=MAX_NOTEBOOK_BYTES):
    """The bytes of a submitted file, read as data: no links, no devices or pipes, capped size.

    Raises ValueError with a reason in words.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ValueError("the notebook is a symbolic link, which is not accepted") from None
        raise ValueError(f"the notebook could not be opened ({exc.strerror})") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ValueError("the notebook is not a regular file")
        if info.st_size > limit:
            raise ValueError(f"the notebook is larger than {limit // 2**20} MB")
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:
            raise ValueError(f"the notebook is larger than {limit // 2**20} MB")
        return b"".join(chunks)
    finally:
        os.close(fd)


def grade_notebook(assignment, path, student="student", *, timeout=60.0, memory_mb=4096,
                   hidden=(), student_timeout=None):
    """Grade one submitted notebook file. Never modifies it; never raises for a bad submission.

    ``path`` may be None (nothing submitted) or a :class:`Refused` (not graded, with a reason).
    ``student_timeout`` is the student's total budget in seconds (default
    ``DEFAULT_BUDGET_FACTOR * timeout``).
    """
    start = time.monotonic()
    result = GradeResult(student, assignment.name)

    def zero_all(reason):
        result.tests = [TestResult(t.grade_id, t.task, t.points, 0.0, t.description)
                        for t in assignment.tests]
        for task in assignment.tasks:
            result.reasons.setdefault(task, reason)
        result.seconds = time.monotonic() - start
        return result

    if path is None:
        return zero_all("no notebook was submitted")
    if isinstance(path, Refused):
        return zero_all(path.reason)
    try:
        cells_in = read_notebook_cells(read_submitted_file(path))
    except Exception as exc:  # noqa: BLE001 (any unreadable file is a zero with a reason)
        detail = exc if isinstance(exc, ValueError) else f"{type(exc).__name__}: {exc}"
        return zero_all(f"the notebook could not be read ({clean_text(detail, 200)})")

    test_ids = {t.grade_id for t in assignment.tests}
    cells = []
    for index, cell in enumerate(cells_in):
        if cell.get("cell_type") != "code":
            continue
        meta = _nbgrader_meta(cell)
        gid = meta.get("grade_id")
        source = _source(cell)
        if gid in test_ids or is_test_cell(cell):
            if gid in assignment.visible_sources and \
                    source.strip() != assignment.visible_sources[gid].strip():
                result.notes.append(f"test cell {gid} was changed: tampering detected (the "
                                    "grader runs the original tests)")
            continue
        task = gid if gid in assignment.tasks else None
        cells.append((index, source, task))

    delegated, notes = _static_checks(cells)
    result.notes.extend(notes)
    session = _Session(cells, hidden, memory_mb, timeout, student_timeout)
    failed_fatally = {}
    spent = None  # the reason, once the student's total budget is used up
    try:
        try:
            session.ensure()
        except SandboxError as exc:
            return zero_all(_sandbox_reason(exc, session))
        for test in assignment.tests:
            tr = TestResult(test.grade_id, test.task, test.points, 0.0, test.description)
            result.tests.append(tr)
            if test.task in delegated or test.task in session.delegated:
                result.reasons[test.task] = DELEGATION
                continue
            if spent:
                tr.message = spent
                result.reasons.setdefault(test.task, spent)
                continue
            if test.task in failed_fatally:
                tr.message = f"not run: an earlier test of {test.task} {failed_fatally[test.task]}"
                continue
            namespace = {"__name__": "__mlcourse_test__"}
            for source in assignment.setup:
                exec(compile(source, "<setup>", "exec"), namespace)  # instructor code only
            for task in assignment.tasks:
                namespace[task] = _StudentFunction(session, task)
            session.current_task = test.task
            session.warnings = []
            session.deadline = time.monotonic() + timeout
            try:
                with np.errstate(all="ignore"):
                    exec(compile(test.source, f"<{test.grade_id}>", "exec"), namespace)
                tr.earned = test.points
            except _Fatal as exc:
                tr.message = _sandbox_reason(exc.error, session)
                failed_fatally[test.task] = tr.message
                result.reasons[test.task] = tr.message
                if exc.error.kind == "budget":
                    spent = tr.message
            except AssertionError as exc:
                tr.message = clean_text(str(exc), 2000) or f"a check failed: {test.description}"
            except RemoteError as exc:
                tr.message = f"your function raised {exc.exc_type}: {exc.message}"
            except Exception as exc:  # noqa: BLE001
                tr.message = ("the result could not be checked "
                              f"({type(exc).__name__}: {clean_text(str(exc), 500)})")
            tr.warnings = sorted(set(session.warnings))[:10]
            if test.task in session.delegated:
                result.reasons[test.task] = DELEGATION
        # A delegation seen late (e.g. in a later call) still voids the whole task.
        for tr in result.tests:
            if tr.task in session.delegated or tr.task in delegated:
                tr.earned = 0.0
                result.reasons[tr.task] = DELEGATION
    finally:
        session.close()
    for index in sorted(session.delegation_cells):
        result.notes.append(f"cell {index + 1} imports mlcourse_utils, which is not available "
                            "while grading")
    result.cell_errors = [(i + 1, msg) for i, msg in sorted(session.cell_errors.items())]
    result.cell_warnings = session.cell_warnings[:20]
    result.output = "\n".join(o for o in session.outputs if o.strip())[-20000:]
    result.seconds = time.monotonic() - start
    return result


# ====================================================================== grading a class


def _student_id(name):
    """A folder name as a student id: valid UTF-8, printable, at most 100 characters."""
    raw = os.fsencode(name)
    text = clean_text(raw, 100)
    if text != name or len(raw) > 100:  # an escaped or cut name: keep it unique and traceable
        text = f"{clean_text(raw, 80)}~{hashlib.sha256(raw).hexdigest()[:8]}"
    return text


def find_submissions(name, submissions, notebook):
    """``{student_id: notebook path, None (nothing submitted) or Refused}`` for both layouts.

    Submissions are data: a student folder, an assignment folder or a notebook that is a
    symbolic link is refused (it could point at the solutions or at another student's work),
    and so is anything that is not a regular file.
    """
    found = {}
    entries = sorted(os.scandir(submissions), key=lambda e: os.fsencode(e.name))
    for entry in entries:
        if entry.is_symlink():
            if os.path.isdir(entry.path):
                found[_student_id(entry.name)] = Refused(
                    "the submission folder is a symbolic link, which is not accepted")
            continue
        if not entry.is_dir(follow_symlinks=False):
            continue
        folder = Path(entry.path)
        student = _student_id(entry.name)
        nested = folder / name
        if nested.is_symlink():
            found[student] = Refused(f"the folder {name}/ is a symbolic link, which is not accepted")
            continue
        candidates = [folder / notebook, nested / notebook]
        path = next((c for c in candidates if c.is_symlink() or c.exists()), None)
        if path is None:
            others = sorted(folder.glob("*.ipynb")) or (
                sorted(nested.glob("*.ipynb")) if nested.is_dir() else [])
            path = others[0] if len(others) == 1 else None
        if path is not None and path.is_symlink():
            path = Refused("the notebook is a symbolic link, which is not accepted")
        while student in found:  # two folder names that clean to the same id
            student += "~"
        found[student] = path
    return found


def _safe_write(label, student, write, failures):
    """Run one student's ``write()``; a failure is that student's, with a reason, never the batch's."""
    try:
        write()
    except Exception as exc:  # noqa: BLE001
        failures.append(f"{student}: {label} could not be written ({type(exc).__name__}: "
                        f"{clean_text(str(exc), 300)})")


def grade_class(name, submissions, out, *, jobs=1, timeout=60.0, memory_mb=4096, root=None,
                progress=True, student_timeout=None):
    """Grade every student folder; write grades.csv, task_scores.csv and feedback/*.html.

    One student can only cost itself: its grading has deadlines and a total budget
    (``student_timeout``), its sandbox its own limits, and writing its feedback or its
    gradebook copy can fail only for it (the failure is reported; the CSVs are always written).
    """
    from tqdm import tqdm

    root = Path(root) if root else find_course_root()
    assignment = load_assignment(name, root)
    submissions, out = Path(submissions).resolve(), Path(out).resolve()
    if not submissions.is_dir():
        raise FileNotFoundError(f"submissions folder {submissions} does not exist")
    out.mkdir(parents=True, exist_ok=True)
    (out / "feedback").mkdir(exist_ok=True)
    students = find_submissions(name, submissions, assignment.notebook)
    hidden = sorted({root.resolve(), submissions, out})
    gradebook = _gradebook.start(out, root / "solutions" / name / assignment.notebook, name)
    results, failures = {}, []
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = {
            pool.submit(grade_notebook, assignment, path, student, timeout=timeout,
                        memory_mb=memory_mb, hidden=hidden,
                        student_timeout=student_timeout): student
            for student, path in students.items()
        }
        bar = tqdm(total=len(futures), desc=f"grading {name}", unit="student",
                   disable=not progress, file=sys.stderr)
        for fut in concurrent.futures.as_completed(futures):
            student = futures[fut]
            try:
                results[student] = fut.result()
            except Exception as exc:  # noqa: BLE001 (a grader bug must not stop the class)
                res = GradeResult(student, name)
                for t in assignment.tests:
                    res.tests.append(TestResult(t.grade_id, t.task, t.points, 0.0, t.description))
                for task in assignment.tasks:
                    res.reasons[task] = (f"internal grader error: {type(exc).__name__}: "
                                         f"{clean_text(str(exc), 300)}")
                results[student] = res
            _safe_write("the feedback page", student, functools.partial(
                write_feedback, results[student], assignment,
                out / "feedback" / f"{student}.html"), failures)
            bar.update(1)
        bar.close()
    write_csvs(results, assignment, out)
    # nbgrader's gradebook and a copy of each notebook under autograded/: formgrader and
    # `nbgrader export` work on `out` as a course folder (manual grading, final grades). The
    # copy holds the student's cells without outputs, attachments or unsafe HTML.
    for student, path in students.items():
        if path is not None and not isinstance(path, Refused):
            target = out / "autograded" / student / name / assignment.notebook
            _safe_write("the gradebook copy", student,
                        functools.partial(_write_sanitized_copy, path, target), failures)
    error = _gradebook.finish(
        gradebook, {s: {t.grade_id: t.earned for t in r.tests} for s, r in results.items()},
        [gid for gid, _ in assignment.manual])
    for line in failures:
        print(f"warning: {line}", file=sys.stderr)
    if error:  # the CSVs and the feedback are written: say so, but do not fail the batch
        print(f"warning: the nbgrader gradebook could not be written: {error}", file=sys.stderr)
    return assignment, results


_NBGRADER_KEYS = {"grade", "grade_id", "locked", "points", "schema_version", "solution", "task"}


def sanitized_notebook(data):
    """A submitted notebook (bytes) as a safe copy for formgrader: cells and their sources only.

    Outputs, attachments and execution counts are dropped, notebook and cell metadata are
    reduced to nbgrader's plain fields, text is made valid UTF-8, and HTML in Markdown and raw
    cells is sanitised with nbconvert's ``SanitizeHTML`` (bleach): no student script or markup
    reaches a teaching assistant's browser.
    """
    import nbformat
    from nbconvert.preprocessors.sanitize import SanitizeHTML

    cells = []
    for i, cell in enumerate(read_notebook_cells(data)):
        kind = cell.get("cell_type")
        if kind not in ("code", "markdown", "raw"):
            continue
        source = _source(cell).encode("utf-8", "backslashreplace").decode("utf-8")
        source = source.replace("\x00", "")
        meta = {k: v for k, v in _nbgrader_meta(cell).items()
                if k in _NBGRADER_KEYS and isinstance(v, (bool, int, float, str))
                and not (isinstance(v, str) and len(v) > 200)}
        if kind == "code":
            new = nbformat.v4.new_code_cell(source)
        elif kind == "markdown":
            new = nbformat.v4.new_markdown_cell(source)
        else:
            new = nbformat.v4.new_raw_cell(source)
        new.id = f"cell-{i}"
        if meta:
            new.metadata["nbgrader"] = meta
        cells.append(new)
    nb = nbformat.v4.new_notebook(cells=cells, metadata={
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"}})
    nb, _ = SanitizeHTML(strip=True).preprocess(nb, {})
    return nb


def _write_sanitized_copy(path, target):
    import nbformat

    nb = sanitized_notebook(read_submitted_file(path))
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target, "w", encoding="utf-8") as fh:
        nbformat.write(nb, fh)


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _csv_text(value):
    """A text cell a spreadsheet shows as text: a leading =, +, -, @ or tab is quoted with '."""
    text = str(value)
    return "'" + text if text.startswith(_FORMULA_START) else text


def write_csvs(results, assignment, out):
    with open(out / "grades.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["student_id", "assignment", "score", "max_score"])
        for student in sorted(results):
            w.writerow([_csv_text(student), assignment.name, _fmt(results[student].score),
                        _fmt(assignment.max_score)])
    with open(out / "task_scores.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["student_id", "assignment", "task", "score", "max_score"])
        for student in sorted(results):
            for task in assignment.tasks:
                w.writerow([_csv_text(student), assignment.name, task,
                            _fmt(results[student].task_score(task)),
                            _fmt(assignment.task_max(task))])


def _fmt(x):
    return f"{x:g}"


FEEDBACK_CSS = """
body{font-family:system-ui,sans-serif;max-width:900px;margin:2em auto;color:#222;line-height:1.45}
h1{font-size:1.5em} table{border-collapse:collapse;width:100%;margin:1em 0}
td,th{border-bottom:1px solid #ddd;padding:.4em .6em;text-align:left;vertical-align:top}
.ok{color:#1a7f37}.bad{color:#b42318}.warn{color:#8a6d00;font-size:.9em}
.reason{background:#fff4f2;border-left:4px solid #b42318;padding:.3em .6em;margin:.2em 0}
pre{background:#f6f8fa;padding:.6em;overflow-x:auto;font-size:.85em}
"""


def write_feedback(result, assignment, path):
    """One self-contained HTML page for a student: every task, each failing test in words."""
    e = html.escape
    rows = []
    for task in assignment.tasks:
        got, top = result.task_score(task), assignment.task_max(task)
        cls = "ok" if got == top else "bad"
        details = []
        if task in result.reasons:
            details.append(f'<div class="reason">{e(result.reasons[task])}</div>')
        for t in (t for t in result.tests if t.task == task):
            mark = "✓" if t.earned == t.points else "✗"
            line = f"{mark} {e(t.description)} ({_fmt(t.earned)}/{_fmt(t.points)})"
            if t.earned < t.points and t.message:
                line += f"<br><span class='bad'>{e(t.message)}</span>"
            if t.warnings:
                line += "<br><span class='warn'>warnings (they cost no points): " + \
                    e("; ".join(t.warnings)) + "</span>"
            details.append(f"<div>{line}</div>")
        rows.append(f"<tr><td><code>{e(task)}</code></td><td class='{cls}'>{_fmt(got)} / "
                    f"{_fmt(top)}</td><td>{''.join(details)}</td></tr>")
    notes = "".join(f"<li>{e(n)}</li>" for n in dict.fromkeys(result.notes))
    errors = "".join(f"<li>cell {i}: {e(m)}</li>" for i, m in result.cell_errors)
    cell_warnings = "".join(f"<li>{e(w)}</li>" for w in result.cell_warnings)
    manual = "".join(f"<li><code>{e(g)}</code> ({_fmt(p)} points)</li>" for g, p in assignment.manual)
    output = f"<h2>What your notebook printed</h2><pre>{e(result.output[-5000:])}</pre>" \
        if result.output.strip() else ""
    page = f"""<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<title>Feedback: {e(assignment.name)} — {e(result.student)}</title><style>{FEEDBACK_CSS}</style></head>
<body><h1>Feedback on <code>{e(assignment.name)}</code> for {e(result.student)}</h1>
<p><strong>Autograded score: {_fmt(result.score)} / {_fmt(assignment.max_score)}</strong></p>
<table><tr><th>task</th><th>points</th><th>tests</th></tr>{''.join(rows)}</table>
{f'<h2>Notes</h2><ul>{notes}</ul>' if notes else ''}
{f'<h2>Cells that raised an error when your notebook ran</h2><ul>{errors}</ul>' if errors else ''}
{f'<h2>Warnings while your notebook ran (they cost no points)</h2><ul>{cell_warnings}</ul>' if cell_warnings else ''}
{f'<h2>Graded by hand (not included above)</h2><ul>{manual}</ul>' if manual else ''}
{output}
<p style="color:#666;font-size:.85em">Hidden tests call your functions on new inputs and compare
the results with the expected values; only their descriptions and messages are shown here.</p>
</body></html>"""
    Path(path).write_text(page, encoding="utf-8")
