"""The grader's reading of a submitted notebook, in a child process with time and memory limits.

Everything the grader learns from a student's file passes through here: the JSON, the cells,
the names the code uses and the tampering patterns (:func:`analyse`), the sanitised copy for
nbgrader's formgrader and the manual-grading answers as HTML (:func:`render_pages`). That work
grows with what the student hands in (up to the 16 MB notebook cap) and some of it (Python's
parser, Markdown and HTML sanitising) costs far more time and memory than the text's size, so
it never runs in the grader:

* a fresh child process (forked from a prepared server, :mod:`.forkserver`) gets the
  notebook's bytes through a pipe (the file was read once, :mod:`.submissions`), parses them
  and does all of it under an address-space limit (:data:`MEMORY_MB` above what it starts
  with) and a CPU-time limit, while the grader waits on a pipe without holding its global lock;
* the grader gives it the earlier of the per-cell time limit and the end of the student's total
  budget: a child that runs out of either, or of memory, is killed, and the student gets zero
  with that reason (:class:`AnalysisError`), as for a notebook that cannot be read;
* what comes back is bounded and cheap to decode: a small JSON header (at most
  :data:`MAX_CELLS` cells) and the code cells' sources as raw UTF-8 after it;
* the pages made from the notebook (the formgrader copy, the manual-grading answers) are made
  by a second child (:func:`render_pages`), so that a failure there costs the student only
  those pages (each answer that cannot be shown gets the reason in its place), never points.

For other checks of student code (e.g. forbidden calls), use :func:`~.names.scan_code` on a cell
*inside* the child (add the names to watch to :func:`analyse`'s ``watch``; the answer lists, per
code cell, the watched names it uses, resolved through the aliases all cells bind, and the names
that could disable the sandbox's watch on forbidden calls), never on student text in the
grader's own process.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
import resource
import struct
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from ..names import MAX_PARSED_CELL, REFERENCE, notebook_bindings, scan_code
from ..notebook import (
    cell_source,
    grade_id,
    is_id_cell,
    is_manual_cell,
    is_test_cell,
    parse_python,
    read_notebook_cells,
    read_student_id,
)
from ..sandbox import forkserver
from ..text import clean_text, plural
from ..variants import ID_NAME, IMPORT_LINE

if TYPE_CHECKING:
    from ..intake.submissions import Submission
    from ..notebook import Assignment

#: Cells (of any kind) accepted in one notebook: course notebooks have about a hundred.
MAX_CELLS = 2000
#: Memory the child may use beyond what it starts with, and its largest answer (bytes).
MEMORY_MB = 1024
MAX_REPLY = 48 * 2**20
#: Watched names reported per cell, and notes per notebook.
MAX_USES = 50
MAX_NOTES = 50
#: Characters of an id cell read for the typed id (one line holds far fewer).
MAX_ID_CELL = 10_000
class AnalysisError(Exception):
    """The notebook could not be read within the limits: the reason, in words, for the student."""


# ------------------------------------------------------------------ one notebook (inside the child)


@dataclasses.dataclass
class Request:
    """What the child is asked to do with one submitted notebook (its bytes, sent after the
    other fields: the child never opens a student's file)."""

    data: bytes
    tasks: list[str]
    tests: dict[str, str]          # test grade_id -> what students see of it
    manual: list[str]              # manually graded cells' grade_ids
    watch: list[str]
    copy_to: str | None = None     # pages: the sanitised copy for formgrader
    manual_dir: str | None = None  # pages: one HTML fragment per manual cell, <k>.html
    grade: bool = True             # True: read the code; False: make the pages
    scan: bool = True              # False: only the answer cells' sources (no code scan)
    #: what the sandbox binds to STUDENT_ID in place of the id typed in the notebook: the
    #: roster's id of the student graded, or None (variants off)
    student_id: str | None = None


def _notes_for(index, scan, task):
    notes = [f"cell {index + 1} {what}: tampering detected (it has no effect on grading, which "
             "runs outside your notebook)" for what in scan.tamper]
    if REFERENCE in scan.uses and task is None:
        notes.append(f"cell {index + 1} imports mlcourse_utils, which is not available while "
                     "grading")
    return notes


def _answer_cells(cells, request):
    """``(header, sources)`` of the first answer cell of each task, and nothing else."""
    run, sources = [], []
    for index, cell in enumerate(cells):
        gid = grade_id(cell)
        if cell.get("cell_type") == "code" and gid in request.tasks and \
                all(task != gid for _, task, _ in run):
            data = cell_source(cell).encode("utf-8", "surrogatepass")
            run.append([index, gid, len(data)])
            sources.append(data)
    return {"cells": run}, sources


#: What the sandbox runs in place of :data:`~.variants.IMPORT_LINE` outside answer cells: the
#: name the grader's first cell binds to :func:`~.variants.variant`, defined from that module's
#: text (:func:`.session.sandbox_prelude`). No quote and no bracket, so that the line means the
#: same wherever the import line stood (even inside a string).
VARIANT_BINDING = "variant = _mlcourse_variant"


_NEWLINE = re.compile(r"\r\n|\r|\n")


def _id_line(student_id):
    """The sandbox's ``STUDENT_ID = ...`` line (the roster's id, a Python literal)."""
    return f"{ID_NAME} = {student_id!r}"


def id_cell_source(source: str, student_id: str | None) -> str:
    """An id cell as the sandbox runs it: each top-level assignment to ``STUDENT_ID`` replaced
    by ``STUDENT_ID = <the roster's id>`` (the typed value never runs), the cell's other lines
    kept at their line numbers; a cell that cannot be read that way (it does not parse, it is
    too long, or an assignment shares a line with other code) becomes that one line."""
    line = _id_line(student_id)
    if len(source) > MAX_PARSED_CELL:
        return line
    try:
        body = parse_python(source).body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return line
    lines = _NEWLINE.split(source)  # Python's newlines only: ast's line numbers
    spans = [(node.lineno, node.end_lineno) for node in body]
    for k, node in enumerate(body):
        if not _assigns_id(node):
            continue
        first, last = spans[k]
        shares = any(not (b < first or a > last) for j, (a, b) in enumerate(spans) if j != k)
        if shares or node.col_offset != 0 or last is None:
            return line
        lines[first - 1] = line
        for n in range(first, last):
            lines[n] = ""
    return "\n".join(lines)


def _assigns_id(node):
    import ast

    targets = node.targets if isinstance(node, ast.Assign) else \
        [node.target] if isinstance(node, ast.AnnAssign) else []
    return any(isinstance(t, ast.Name) and t.id == ID_NAME for t in targets)


def without_import_line(source: str) -> str:
    """A cell that is not an answer with each line that is exactly :data:`IMPORT_LINE` (outer
    spaces aside) replaced by :data:`VARIANT_BINDING` at the same indentation: the notebook's
    setup works in the sandbox, where the course package is a decoy."""
    if IMPORT_LINE not in source:
        return source
    lines = source.split("\n")
    for n, text in enumerate(lines):
        if text.strip() == IMPORT_LINE:
            lines[n] = text[:len(text) - len(text.lstrip())] + VARIANT_BINDING
    return "\n".join(lines)


def _typed_id(cells):
    """``{"typed", "problem", "cell"}``: the id typed in the notebook (normalised, or None),
    why it is not one, and whether the notebook has an id cell (read in the child)."""
    found = next((cell_source(c) for c in cells if is_id_cell(c)), None)
    if found is not None and len(found) > MAX_ID_CELL:  # (no parse of a huge cell)
        typed, problem = None, f"the id cell has {len(found)} characters: it must hold one " \
            f"line, {ID_NAME} = \"your id\""
    else:
        typed, problem = read_student_id(cells)
    return {"typed": typed, "problem": clean_text(problem, 300) if problem else None,
            "cell": any(is_id_cell(c) for c in cells)}


def _analyse_cells(cells, request):
    """``(header, sources)``: the code cells to run (as the sandbox runs them: the id cell and
    the import line of :func:`~.variants.variant` replaced), delegation, notes, watched names
    and the id typed in the notebook."""
    test_ids = set(request.tests)
    run, sources, notes, delegated, uses, monitor = [], [], [], set(), [], []
    student = {}
    for index, cell in enumerate(cells):
        if cell.get("cell_type") == "code" and not is_test_cell(cell) \
                and grade_id(cell) not in test_ids:
            source = cell_source(cell)
            if grade_id(cell) not in request.tasks:
                source = id_cell_source(source, request.student_id) if is_id_cell(cell) \
                    else without_import_line(source)
            student[index] = source
    # The cells share one namespace: an alias bound in one cell is used in another.
    aliases, star = notebook_bindings(student.values())
    for index, cell in enumerate(cells):
        if cell.get("cell_type") != "code":
            continue
        gid = grade_id(cell)
        source = student.get(index, cell_source(cell))
        if gid in test_ids or is_test_cell(cell):
            if gid in request.tests and source.strip() != request.tests[gid].strip():
                notes.append(f"test cell {clean_text(gid, 100)} was changed: tampering detected "
                             "(the grader runs the original tests)")
            continue
        task = gid if gid in request.tasks else None
        scan = scan_code(source, request.watch, aliases, star)
        if scan.monitor:
            monitor.append([index, scan.monitor[:MAX_USES]])
        if REFERENCE in scan.uses and task is not None:
            delegated.add(task)
        notes += _notes_for(index, scan, task)
        if scan.uses:
            uses.append([index, scan.uses[:MAX_USES]])
        data = source.encode("utf-8", "surrogatepass")
        run.append([index, task, len(data)])
        sources.append(data)
    unique = list(dict.fromkeys(notes))
    if len(unique) > MAX_NOTES:
        unique = unique[:MAX_NOTES] + [f"... and {plural(len(unique) - MAX_NOTES, 'more note')}"]
    return {"cells": run, "notes": unique, "delegated": sorted(delegated), "uses": uses,
            "monitor": monitor, "student_id": _typed_id(cells)}, sources


def _child_work(request):
    """Everything the child does for one file; returns ``(header, sources)``."""
    from ..graded import notebook_copy
    from ..reports import answers

    cells = read_notebook_cells(request.data)
    if len(cells) > MAX_CELLS:
        raise ValueError(f"the notebook has {len(cells)} cells; at most {MAX_CELLS} are accepted")
    if request.grade:
        return _analyse_cells(cells, request) if request.scan else _answer_cells(cells, request)
    problems = []
    if request.manual_dir:
        folder = Path(request.manual_dir)
        folder.mkdir(parents=True, exist_ok=True)
        for k, gid in enumerate(request.manual):
            found = [c for c in cells if grade_id(c) == gid and is_manual_cell(c)]
            try:
                fragment = answers.answer_fragment(found)
            except MemoryError:
                fragment = _missing(f"rendering it needed more than {MEMORY_MB} MB")
                problems.append(f"{gid}: rendering it needed more than {MEMORY_MB} MB")
            except Exception as exc:  # noqa: BLE001 (this answer's problem, not the page's)
                reason = f"{type(exc).__name__}: {clean_text(str(exc), 200)}"
                fragment = _missing(f"it could not be rendered ({reason})")
                problems.append(f"{gid}: {reason}")
            (folder / f"{k}.html").write_text(fragment, encoding="utf-8")
    if request.copy_to:
        try:
            notebook_copy.write_sanitized_cells(cells, Path(request.copy_to))
        except (OSError, ValueError) as exc:
            problems.append(f"the copy for formgrader: {type(exc).__name__}: {exc}")
    return {"problems": [clean_text(p, 300) for p in problems]}, []


def _missing(reason):
    """The fragment shown in place of an answer that cannot be shown (our own text)."""
    import html

    return f'<p class="missing">No answer shown: {html.escape(reason)}.</p>\n'


def _frame(header, sources):
    head = json.dumps(header, ensure_ascii=True).encode()
    return b"".join([struct.pack(">I", len(head)), head, *sources])


def answer(message: bytes) -> bytes:
    """The fork server's job (:mod:`.forkserver`, in the child): limits, the work on one
    request and the framed answer, or a reason in words."""
    import warnings

    warnings.simplefilter("ignore")
    (n,) = struct.unpack(">I", message[:4])
    raw = json.loads(message[4:4 + n])
    raw["data"] = message[4 + n:]
    del message
    memory_mb, cpu = raw.pop("memory_mb"), raw.pop("cpu_seconds")
    forkserver.limit_memory(memory_mb)
    try:
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    except (ValueError, OSError):
        pass
    try:
        payload = _frame(*_child_work(Request(**raw)))
    except MemoryError:
        payload = _frame({"error": f"reading the notebook needed more than {memory_mb} MB"}, [])
    except RecursionError:
        payload = _frame({"error": "the notebook could not be read (nested too deeply)"}, [])
    except (ValueError, UnicodeError) as exc:
        payload = _frame({"error": "the notebook could not be read "
                                   f"({clean_text(str(exc), 200)})"}, [])
    except Exception as exc:  # noqa: BLE001 (a shape of data nobody foresaw: this student's)
        payload = _frame({"error": "the notebook could not be read "
                                   f"({type(exc).__name__}: {clean_text(str(exc), 200)})"}, [])
    if len(payload) > MAX_REPLY:
        payload = _frame({"error": "the notebook's code is too large to grade"}, [])
    return payload


# ------------------------------------------------------------------ the grader's side


#: Imported once by the fork server (a missing one is skipped, and imported when needed).
PRELOAD = ["mlcourse_utils.grading.engine.analysis", "mlcourse_utils.grading.reports.answers",
           "mlcourse_utils.grading.graded.notebook_copy", "nh3", "markdown_it",
           "mdit_py_plugins.dollarmath", "jinja2"]


_SERVER = forkserver.Server(PRELOAD, "mlcourse_utils.grading.engine.analysis:answer", MAX_REPLY)


def warm_up() -> None:
    """Start the process that forks the readers, so that the first student does not wait."""
    _SERVER.warm_up()


@dataclasses.dataclass
class Analysis:
    """What the grader learns from one submitted notebook (all of it bounded)."""

    cells: list[tuple[int, str, str | None]]  # code cells to run: (index, source, task or None)
    delegated: set[str]                       # tasks whose answer cell uses the reference
    notes: list[str]                          # tampering and other remarks for the feedback
    uses: dict[int, list[str]]                # cell index -> watched names it uses
    seconds: float = 0.0                      # the child's wall time
    #: cell index -> names it uses that could disable the watch on forbidden calls
    monitor: dict[int, list[str]] = dataclasses.field(default_factory=dict)
    #: the id typed in the notebook's id cell (normalised; None: none could be read), why not
    #: (:func:`~.notebook.read_student_id`'s words), and whether the notebook has an id cell
    typed_id: str | None = None
    id_problem: str | None = None
    has_id_cell: bool = False


def _decode(data):
    (n,) = struct.unpack(">I", data[:4])
    if n > len(data) - 4:
        raise AnalysisError("the notebook could not be read (its reader stopped while "
                            "answering)")
    header = json.loads(data[4:4 + n])
    if "error" in header:
        raise AnalysisError(str(header["error"]))
    cells, offset = [], 4 + n
    for index, task, size in header.get("cells", []):
        source = data[offset:offset + size].decode("utf-8", "surrogatepass")
        offset += size
        cells.append((int(index), source, task))
    if offset != len(data):
        raise AnalysisError("the notebook could not be read (its reader stopped while "
                            "answering)")
    typed = header.get("student_id") or {}
    return header, Analysis(cells, set(header.get("delegated", [])),
                            list(header.get("notes", [])),
                            {int(i): list(u) for i, u in header.get("uses", [])},
                            monitor={int(i): list(u) for i, u in header.get("monitor", [])},
                            typed_id=_text_or_none(typed.get("typed")),
                            id_problem=_text_or_none(typed.get("problem")),
                            has_id_cell=typed.get("cell") is True)


def _text_or_none(value):
    return value if isinstance(value, str) else None


def _run(request, timeout, deadline, memory_mb):
    """``(header, Analysis, seconds)`` of one request answered by a limited child."""
    start = time.monotonic()
    limit = start + timeout
    if deadline is not None and deadline < limit:
        limit = deadline
    fields = {f.name: getattr(request, f.name) for f in dataclasses.fields(request)
              if f.name != "data"}
    head = json.dumps({**fields, "memory_mb": memory_mb,
                       "cpu_seconds": max(1, math.ceil(limit - start) + 1)}).encode()
    data, timed_out = _SERVER.run(b"".join([struct.pack(">I", len(head)), head, request.data]),
                                  limit)
    seconds = time.monotonic() - start
    if timed_out:
        if deadline is not None and deadline < start + timeout:
            raise AnalysisError("used up its total grading time while the notebook was read")
        raise AnalysisError(f"reading the notebook took longer than {timeout:g} s (the time "
                            "limit per cell)")
    if data is None:
        raise AnalysisError(f"the notebook could not be read (its reader stopped; it may have "
                            f"needed more than {memory_mb} MB)")
    header, result = _decode(data)
    result.seconds = seconds
    return header, result


def _request(data, assignment, watch=(), grade=True, copy_to=None, manual_dir=None,
             student_id=None):
    if not isinstance(data, bytes):
        raise TypeError(f"notebook must be the notebook's bytes, not {type(data).__name__}")
    return Request(data, list(assignment.tasks),
                   {t.grade_id: assignment.visible_sources.get(t.grade_id, t.source)
                    for t in assignment.tests},
                   [gid for gid, _ in assignment.manual], sorted({REFERENCE, *watch}),
                   str(copy_to) if copy_to else None, str(manual_dir) if manual_dir else None,
                   grade, student_id=student_id)


def analyse(notebook: bytes, assignment: Assignment, *, timeout: float,
            deadline: float | None = None, watch: Iterable[str] = (),
            memory_mb: int = MEMORY_MB, student_id: str | None = None) -> Analysis:
    """Read a submitted notebook's code (``notebook``: its bytes, as
    :class:`~.submissions.Submission` holds them) in a limited child process (see the module's
    docstring).

    ``timeout`` (seconds) and ``deadline`` (a ``time.monotonic()`` value, the end of the
    student's budget) bound the child's wall time, ``memory_mb`` what it may allocate; ``watch``
    adds qualified names to report per cell (:attr:`Analysis.uses`). ``student_id`` is what
    the cells bind to ``STUDENT_ID`` in place of the id cell's value (the roster's id, or None
    when variants are off; :func:`id_cell_source`); the id typed in the notebook is read here
    (:attr:`Analysis.typed_id`). Raises :class:`AnalysisError` with the reason for the student
    (not a notebook, too many cells, out of time or memory).
    """
    return _run(_request(notebook, assignment, watch, student_id=student_id), timeout,
                deadline, memory_mb)[1]


def answer_sources(notebook: bytes, tasks: Iterable[str], *, timeout: float = 60.0,
                   memory_mb: int | None = None) -> dict[str, str]:
    """``{task: source}`` of a submitted notebook's answer cells (the first cell of each task),
    read in a limited child as :func:`analyse` reads (``mlcourse similarity``'s reading: the
    grader never decodes a student's JSON itself). Raises :class:`AnalysisError` with the
    reason."""
    if not isinstance(notebook, bytes):
        raise TypeError(f"notebook must be the notebook's bytes, not {type(notebook).__name__}")
    wanted = list(dict.fromkeys(tasks))
    request = Request(notebook, wanted, {}, [], [REFERENCE], scan=False)
    found = {}
    for _index, source, task in _run(request, timeout, None, memory_mb or MEMORY_MB)[1].cells:
        if task is not None and task not in found:
            found[task] = source
    return found


def render_pages(notebook: bytes, assignment: Assignment, *, timeout: float,
                 deadline: float | None = None, copy_to: Path | str | None = None,
                 manual_dir: Path | str | None = None, memory_mb: int = MEMORY_MB) -> str | None:
    """Write a submission's (``notebook``: its bytes) formgrader copy (``copy_to``) and its
    manual-grading answers
    (``manual_dir/<k>.html``, k: the cell's position in ``assignment.manual``) in a limited
    child process; returns None, or what could not be made and why (never raises).

    A failure costs only these pages, not the student's score: an answer that could not be
    rendered gets the reason in its place, and a copy left half-written is removed.
    """
    try:
        header, _ = _run(_request(notebook, assignment, grade=False, copy_to=copy_to,
                                  manual_dir=manual_dir), timeout, deadline, memory_mb)
        problem = "; ".join(header.get("problems", [])) or None
    except AnalysisError as exc:
        problem = str(exc)
        if copy_to:
            for leftover in (Path(copy_to), Path(f"{copy_to}.part")):
                leftover.unlink(missing_ok=True)
    if manual_dir:
        for k in range(len(assignment.manual)):
            fragment = Path(manual_dir) / f"{k}.html"
            if not fragment.is_file():
                fragment.parent.mkdir(parents=True, exist_ok=True)
                fragment.write_text(_missing(problem or "it was not rendered"), encoding="utf-8")
    return problem


def manual_fragments(assignment: Assignment, sources: Mapping[str, Submission], folder: Path,
                     timeout: float = 60.0) -> dict[str, str]:
    """Render every student's manual answers into ``folder/<n>/`` (n: the student's position in
    ``sources``); returns ``{student: reason}`` for those without a notebook to read."""
    failed = {}
    for n, (student, submission) in enumerate(sources.items()):
        if submission.data is None:
            failed[student] = submission.reason
            continue
        render_pages(submission.data, assignment, timeout=timeout, manual_dir=folder / str(n))
    return failed
