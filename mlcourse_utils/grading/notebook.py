"""The one reader of nbgrader metadata and markers: answer, test, manual, setup and id cells.

Every question "what kind of cell is this?" is answered here (as nbgrader answers it in
``nbgrader/utils.py``), for the grader, the release and self-check tools and the book.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import json
import re
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import CodeType
from typing import Any

from ..course import DEFAULT_TIMEOUT, find_course_root
from .variants import ID_NAME, parse_id_cell, variants_enabled

#: CPython 3.11 and 3.12 can fail with "SystemError: AST constructor recursion depth mismatch"
#: when ast.parse or compile run in several threads at once (python/cpython#106905, fixed in
#: 3.13). The grader grades students in threads, so every parse and compile takes this lock.
_PARSE_LOCK = threading.Lock()


def parse_python(source: str) -> ast.Module:
    """``ast.parse(source)``, safe to call from the grader's threads."""
    with _PARSE_LOCK:
        return ast.parse(source)


@functools.lru_cache(maxsize=1024)
def compile_cell(source: str, filename: str) -> CodeType:
    """``compile(source, filename, "exec")`` of instructor code, once per source, thread-safe."""
    with _PARSE_LOCK:
        return compile(source, filename, "exec")


HIDDEN_BEGIN = "### BEGIN HIDDEN TESTS"
HIDDEN_END = "### END HIDDEN TESTS"


@dataclasses.dataclass
class TestCell:
    """One autograded test cell of a source notebook and the task (answer cell) it tests."""

    grade_id: str
    task: str
    points: float
    source: str
    description: str


@dataclasses.dataclass
class Assignment:
    """What the grader needs from a source notebook."""

    name: str
    notebook: str                     # file name, e.g. "mle.ipynb"
    tasks: list[str]                  # answer cells' grade_ids, in order
    tests: list[TestCell]
    setup: list[str]                  # plain code cells before the first task (imports, data)
    manual: list[tuple[str, float]]   # manually graded cells: (grade_id, points)
    visible_sources: dict[str, str]   # test grade_id -> what students see of it
    #: task -> the calls that earn it nothing (qualified names or module prefixes, sorted), from
    #: the notebook's ``metadata.mlcourse.forbidden`` (:func:`forbidden_calls`)
    forbidden: dict[str, list[str]] = dataclasses.field(default_factory=dict)
    #: modules the solution's code imports (instructor code; never the course package): what a
    #: prepared sandbox image imports once for every student (``zygote.py``)
    imports: list[str] = dataclasses.field(default_factory=list)
    #: seconds one cell or test may run (:func:`time_limit` of the notebook's metadata)
    timeout: int = DEFAULT_TIMEOUT
    #: whether students get their own variants (``metadata.mlcourse.variants``, default true;
    #: :mod:`.variants`): the grader binds ``STUDENT_ID`` to the roster id before the setup
    #: cells, which never include the id cell
    variants: bool = True
    #: whether the notebook has an id cell (``STUDENT_ID = ...``, :func:`is_id_cell`)
    has_id_cell: bool = False

    @property
    def hidden_tests(self) -> list[str]:
        """grade_ids of the test cells that hold hidden tests (run only when graded)."""
        return [t.grade_id for t in self.tests
                if any(line.strip() == HIDDEN_BEGIN for line in t.source.splitlines())]

    @property
    def preload(self) -> list[str]:
        """What a prepared sandbox image imports: the solution's imports and the modules that
        hold the forbidden calls (so that their own import-time calls happen before the watch
        on forbidden calls starts, never in a student's cell)."""
        parents = [".".join(parts[:cut]) for names in self.forbidden.values() for name in names
                   for parts in [name.split(".")] for cut in range(1, len(parts))]
        return list(dict.fromkeys([*self.imports, *parents]))

    @property
    def max_score(self) -> float:
        return sum(t.points for t in self.tests)

    def task_max(self, task: str) -> float:
        return sum(t.points for t in self.tests if t.task == task)


def nbgrader_meta(cell: Mapping[str, Any]) -> dict[str, Any]:
    """A cell's nbgrader metadata as a dict whose ``grade_id`` is a string or absent."""
    meta = cell.get("metadata", {})
    meta = meta.get("nbgrader") if isinstance(meta, dict) else None
    if not isinstance(meta, dict):
        return {}
    if "grade_id" in meta and not isinstance(meta["grade_id"], str):
        meta = {k: v for k, v in meta.items() if k != "grade_id"}
    return meta


def is_test_cell(cell: Mapping[str, Any]) -> bool:
    """An autograded test cell: code, graded, not a solution."""
    meta = nbgrader_meta(cell)
    return bool(meta.get("grade")) and not meta.get("solution") and cell.get("cell_type") == "code"


def is_answer_cell(cell: Mapping[str, Any]) -> bool:
    """An autograded answer cell: code, a solution, not graded itself (its tests are)."""
    meta = nbgrader_meta(cell)
    return cell.get("cell_type") == "code" and bool(meta.get("solution")) and not meta.get("grade")


def is_manual_cell(cell: Mapping[str, Any]) -> bool:
    """A manually graded answer (a derivation): graded and a solution."""
    meta = nbgrader_meta(cell)
    return bool(meta.get("grade")) and bool(meta.get("solution"))


#: ``metadata.mlcourse.role`` of the cell where a student enters their course id.
ID_ROLE = "student_id"


def is_id_cell(cell: Mapping[str, Any]) -> bool:
    """The cell where the student enters their course id: marked ``metadata.mlcourse.role:
    student_id`` by the release, or (when a student's copy lost the mark) a plain code cell
    whose code starts by assigning ``STUDENT_ID``."""
    if cell.get("cell_type") != "code" or nbgrader_meta(cell).get("grade_id"):
        return False
    meta = cell.get("metadata", {})
    mark = meta.get(METADATA_KEY) if isinstance(meta, dict) else None
    if isinstance(mark, dict) and mark.get("role") == ID_ROLE:
        return True
    return re.match(rf"\s*{ID_NAME}\s*=", cell_source(cell)) is not None


def read_student_id(cells: Sequence[Mapping[str, Any]]) -> tuple[str | None, str | None]:
    """The course id typed in a notebook's id cell (its first), or ``(None, why not)``
    (:func:`~.variants.parse_id_cell`)."""
    for cell in cells:
        if is_id_cell(cell):
            return parse_id_cell(cell_source(cell))
    return None, "the notebook has no id cell (STUDENT_ID = \"your id\")"


def grade_id(cell: Mapping[str, Any]) -> str | None:
    """The cell's nbgrader ``grade_id`` (a string), or None."""
    return nbgrader_meta(cell).get("grade_id")


def points(cell: Mapping[str, Any]) -> float:
    """The points of a graded cell (0.0 when absent or not a number)."""
    value = nbgrader_meta(cell).get("points", 0)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def nbgrader_checksum(cell: Mapping[str, Any]) -> str:
    """The checksum nbgrader stores in a cell it locks (``nbgrader.utils.compute_checksum``).

    The md5 of the source, the cell type, whether the cell is graded, a solution and locked,
    its grade_id and, for a graded cell, its points as a float. ``nbgrader validate`` and
    ``mlcourse check`` compare it with the stored ``checksum`` to tell that a locked cell (a
    test) was edited. ``cell`` must have nbgrader metadata with a ``grade_id``.
    """
    import hashlib

    meta = cell.get("metadata", {}).get("nbgrader", {})
    grade, solution = meta.get("grade", False), meta.get("solution", False)
    locked = False if solution else True if grade else meta.get("locked", False)
    digest = hashlib.md5(usedforsecurity=False)
    for part in (cell_source(cell), cell.get("cell_type", ""), str(grade), str(solution),
                 str(locked), meta["grade_id"]):
        digest.update(str(part).encode("utf-8"))
    if grade:
        digest.update(str(float(meta["points"])).encode("utf-8"))
    return digest.hexdigest()


def is_locked(cell: Mapping[str, Any]) -> bool:
    """Whether nbgrader locks the cell (a test or a read-only cell): its checksum is kept."""
    meta = nbgrader_meta(cell)
    if meta.get("solution"):
        return False
    return bool(meta.get("grade")) or bool(meta.get("locked"))


# nbgrader's delimiters (its defaults): whole lines, in code and Markdown cells.
_MARKER = re.compile(
    r"^[ \t]*(?:#+[ \t]*)?(?:BEGIN|END) (?:SOLUTION|HIDDEN TESTS)[ \t]*$"
    r"|^[ \t]*=+[ \t]*(?:BEGIN|END) MARK SCHEME[ \t]*=+[ \t]*$"
)


def strip_nbgrader_markers(source: str) -> str:
    """Remove nbgrader's marker lines (``### BEGIN SOLUTION`` and friends), keep the content."""
    lines = source.splitlines(keepends=True)
    kept = [line for line in lines if not _MARKER.match(line.rstrip("\r\n"))]
    return "".join(kept).rstrip("\n")


#: The paragraph of a derivation's model answer (the instructor's manual cell) that states its
#: key result: a line that starts with ``**Key result.**`` (or ``**Key results.**``), up to the
#: next blank line. Its math is what the student edition must never print
#: (tests/test_chapter_derivations.py); the instructor edition lists it (book/instructors.py).
_KEY_RESULT = re.compile(r"^\*\*Key results?\.\*\*(.*?)(?=\n[ \t]*\n|\n[ \t]*#|\Z)", re.M | re.S)
_MATH_SPAN = re.compile(r"\$\$(.+?)\$\$|\$(.+?)\$", re.S)


def key_result_text(source: str) -> str:
    """The ``**Key result.**`` paragraph of a model answer, without its label, on one line
    (``""`` when the answer has none)."""
    return " ".join(" ".join(p.split()) for p in _KEY_RESULT.findall(source)).strip()


def key_results(source: str) -> list[str]:
    """The equations of the ``**Key result.**`` paragraph of a model answer, one per math span
    (``$...$`` or ``$$...$$``), in order; ``[]`` when the answer has no such paragraph."""
    found = []
    for paragraph in _KEY_RESULT.findall(source):
        found += [(display or inline).strip() for display, inline in _MATH_SPAN.findall(paragraph)]
    return found


def strip_hidden_tests(source: str) -> str:
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
        doc = ast.get_docstring(parse_python(source)) or ""
    except SyntaxError:
        return ""
    return doc.strip().split("\n", 1)[0]


def cell_source(cell: Mapping[str, Any]) -> str:
    """A cell's source as one string (nbformat allows a list of lines; anything else is '')."""
    source = cell.get("source", "")
    if isinstance(source, list):
        return "".join(line for line in source if isinstance(line, str))
    return source if isinstance(source, str) else ""


def read_notebook_cells(data: bytes | str) -> list[dict[str, Any]]:
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


def load_assignment(name: str, root: Path | str | None = None) -> Assignment:
    """Read ``solutions/NAME/NAME.ipynb`` into an :class:`Assignment`."""
    root = Path(root) if root else find_course_root()
    path = root / "solutions" / name / f"{name}.ipynb"
    if not path.exists():
        raise FileNotFoundError(f"no source notebook solutions/{name}/{name}.ipynb for "
                                f"assignment {name!r}")
    data = path.read_bytes()
    metadata = json.loads(data).get("metadata", {})
    return assignment_from_cells(name, path.name, read_notebook_cells(data),
                                 metadata if isinstance(metadata, dict) else {})


#: Key of the course's own entries in a notebook's metadata.
METADATA_KEY = "mlcourse"
#: The key of ``metadata.mlcourse.forbidden`` whose calls are forbidden in every task.
EVERY_TASK = "*"
_QUALIFIED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")


def time_limit(metadata: Mapping[str, Any] | None, notebook: str = "the notebook") -> int:
    """Seconds one cell of an assignment may run: its notebook's ``metadata.mlcourse.timeout``,
    else the course's :data:`~mlcourse_utils.course.DEFAULT_TIMEOUT`.

    The one reader of that limit: `mlcourse release` (solution run and header) and `grade`
    read it from the source notebook, `mlcourse check` from the release notebook, to which the
    release copies it. A whole number of seconds (the kernel's per-cell limit is one); ValueError
    names anything else.
    """
    found = (metadata or {}).get(METADATA_KEY, {})
    value = found.get("timeout", DEFAULT_TIMEOUT) if isinstance(found, Mapping) else \
        DEFAULT_TIMEOUT
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ValueError(f"metadata.mlcourse.timeout of {notebook} must be a positive whole "
                         f"number of seconds, got {value!r}")
    return value


def forbidden_calls(metadata: Mapping[str, Any] | None, tasks: list[str],
                    notebook: str = "the notebook") -> dict[str, list[str]]:
    """``{task: [forbidden qualified names]}`` from a notebook's metadata.

    ``metadata.mlcourse.forbidden`` maps a task (the answer cell's grade_id) or ``"*"`` (every
    task) to a list of qualified names: a function (``"scipy.special.expit"``), a method of a
    module-level object (``"scipy.stats.beta.interval"``) or a module, which forbids everything
    in it (``"sklearn"``). Tasks without an entry get an empty list. ValueError names a
    malformed entry or a key that is not a task.
    """
    found = (metadata or {}).get(METADATA_KEY, {})
    found = found.get("forbidden", {}) if isinstance(found, Mapping) else {}
    if not isinstance(found, Mapping):
        raise ValueError(f"metadata.mlcourse.forbidden of {notebook} must map tasks to lists")
    out = {task: set() for task in tasks}
    for key, names in found.items():
        if key != EVERY_TASK and key not in out:
            raise ValueError(f"metadata.mlcourse.forbidden of {notebook} names {key!r}, which "
                             f"is not a task (tasks: {', '.join(tasks)}; '*' means all)")
        if not isinstance(names, list) or not all(
                isinstance(n, str) and _QUALIFIED.fullmatch(n) for n in names):
            raise ValueError(f"metadata.mlcourse.forbidden[{key!r}] of {notebook} must be a "
                             "list of qualified names such as 'scipy.special.expit'")
        for task in (tasks if key == EVERY_TASK else [key]):
            out[task].update(names)
    return {task: sorted(names) for task, names in out.items()}


def task_of(test_id: str, tasks: Sequence[str]) -> str | None:
    """The task a test cell ``test_<task>[_<suffix>]`` tests: the longest of ``tasks`` it names
    (None: none)."""
    return max((t for t in tasks if test_id == f"test_{t}" or test_id.startswith(f"test_{t}_")),
               key=len, default=None)


#: What every task may call besides the calls it forbids (the rules of every assignment).
ALLOWED_LIBRARIES = "numpy, scipy and the Python standard library"


def task_rule(calls: Sequence[str], code: Any = str) -> str:
    """A task's rule on library calls in one line: what it forbids, and that the rest is allowed.

    ``calls`` are the task's forbidden calls (:func:`forbidden_calls`); ``code`` formats each
    name (``str`` for a terminal, backticks for Markdown). The one wording of the rule, which
    ``mlcourse check`` prints and the release states above each answer cell.
    """
    if not calls:
        return f"all of {ALLOWED_LIBRARIES} is allowed"
    names = ", ".join(code(c) for c in calls)
    return f"forbidden: {names}; the rest of {ALLOWED_LIBRARIES} is allowed"


def assignment_from_cells(name: str, notebook: str, cells: list[dict[str, Any]],
                          metadata: Mapping[str, Any] | None = None) -> Assignment:
    """An :class:`Assignment` from the cells (and metadata) of a source notebook ``notebook``."""
    tasks, tests, setup, manual, visible, solution = [], [], [], [], {}, []
    has_id_cell = False
    for cell in cells:
        gid = grade_id(cell)
        source = cell_source(cell)
        if is_id_cell(cell) and not tasks:
            has_id_cell = True  # the grader binds STUDENT_ID itself (the roster's id)
        elif is_answer_cell(cell):
            tasks.append(gid)
            solution.append(source)
        elif is_test_cell(cell):
            owner = task_of(gid, tasks)
            if owner is None:
                raise ValueError(
                    f"test cell {gid!r} in {notebook} follows no answer cell it names")
            tests.append(TestCell(gid, owner, points(cell), source, _docstring(source) or gid))
            visible[gid] = strip_hidden_tests(source)
        elif is_manual_cell(cell):
            manual.append((gid, points(cell)))
        elif cell.get("cell_type") == "code" and not nbgrader_meta(cell).get("solution") \
                and not tasks:
            setup.append(source)  # imports and data before the first task, run before each test
    imports = [m for m in imported_by(solution)
               if m.partition(".")[0] not in ("mlcourse_utils", "__future__")]
    return Assignment(name, notebook, tasks, tests, setup, manual, visible,
                      forbidden_calls(metadata, tasks, notebook), imports,
                      time_limit(metadata, notebook), variants_enabled(metadata, notebook),
                      has_id_cell)


def imported_by(sources: Sequence[str]) -> list[str]:
    """The absolute module names that instructor code (``sources``) imports, in order:
    ``from a import b`` gives ``a`` and ``a.b`` (b may be a module)."""
    names = []
    for source in sources:
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names += [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names.append(node.module)
                names += [f"{node.module}.{alias.name}" for alias in node.names
                          if alias.name != "*"]
    return list(dict.fromkeys(names))
