"""What `mlcourse check` reads in a notebook without running it: syntax, edited tests, rules,
the variant it checks."""

from __future__ import annotations

import ast
import dataclasses
import warnings
from collections.abc import Mapping
from pathlib import PurePath
from typing import Any

from .notebook import (
    cell_source,
    grade_id,
    is_answer_cell,
    is_id_cell,
    is_locked,
    is_test_cell,
    nbgrader_checksum,
    nbgrader_meta,
    read_student_id,
    task_rule,
)
from .variants import ID_NAME, QUESTIONS, variant

#: Key of the course's entries in a release notebook's metadata (see release.py).
METADATA_KEY = "mlcourse"
def one_line(text: str, limit: int = 300) -> str:
    """``text`` on one line (white space collapsed), cut to ``limit`` characters."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _python_source(source: str) -> str:
    """A cell's source as Python: IPython's magics and shell escapes become calls."""
    try:
        from IPython.core.inputtransformer2 import TransformerManager
    except ImportError:  # (ipykernel brings IPython; without it, parse the plain source)
        return source
    try:
        return TransformerManager().transform_cell(source)
    except Exception:  # noqa: BLE001 (a malformed magic: the parser below reports the line)
        return source


def cell_label(cell: Any, index: int) -> str:
    """How a cell is named to the student: its grade_id, else its number."""
    return grade_id(cell) or f"cell {index + 1}"


def syntax_errors(cells: list[Any]) -> dict[int, str]:
    """``{index: one line}`` for each code cell that does not parse."""
    errors = {}
    for index, cell in enumerate(cells):
        if cell.get("cell_type") != "code" or is_test_cell(cell):
            continue  # (a test cell that does not parse was edited: it is reported as changed)
        try:
            with warnings.catch_warnings():  # (invalid escapes and such are the kernel's to say)
                warnings.simplefilter("ignore")
                ast.parse(_python_source(cell_source(cell)))
        except SyntaxError as exc:
            where = f", line {exc.lineno}" if exc.lineno else ""
            errors[index] = (f"syntax error in {cell_label(cell, index)}{where}: "
                             f"{one_line(exc.msg or 'invalid syntax')}")
        except (ValueError, RecursionError, MemoryError) as exc:
            errors[index] = f"{cell_label(cell, index)} cannot be read as Python: {one_line(exc)}"
    return errors


def changed_tests(nb: Any) -> dict[str, str]:
    """``{grade_id: why}`` for test cells that were edited or deleted since the release."""
    manifest = nb.get("metadata", {}).get(METADATA_KEY, {}).get("test_cells", [])
    released = {}
    if isinstance(manifest, list):
        released = {e[0]: e[1] for e in manifest
                    if isinstance(e, list) and len(e) == 2 and isinstance(e[0], str)}
    changed = {}
    present = set()
    for cell in nb.cells:
        if not is_test_cell(cell) or not grade_id(cell):
            continue
        gid = grade_id(cell)
        present.add(gid)
        stored = nbgrader_meta(cell).get("checksum")
        try:
            actual = nbgrader_checksum(cell)
        except (KeyError, TypeError, ValueError):
            actual = None
        if (stored and is_locked(cell) and actual != stored) or \
                (gid in released and actual != released[gid]):
            changed[gid] = "edited"
    for gid in released:
        if gid not in present:
            changed[gid] = "deleted"
    return changed


def edited_locked_code(nb: Any) -> list[str]:
    """Warnings for read-only code cells (not tests) whose source differs from the release."""
    found = []
    for index, cell in enumerate(nb.cells):
        meta = nbgrader_meta(cell)
        if cell.get("cell_type") != "code" or is_test_cell(cell) or not is_locked(cell) or \
                not meta.get("checksum") or not meta.get("grade_id"):
            continue
        try:
            edited = nbgrader_checksum(cell) != meta["checksum"]
        except (KeyError, TypeError, ValueError):
            edited = True
        if edited:
            found.append(f"the read-only cell {cell_label(cell, index)} was edited; grading "
                         "runs the original, so undo the edit")
    return found


def release_order(nb: Any) -> list[str]:
    """The test cells' grade_ids in release order, deleted ones included (in their place)."""
    present = [grade_id(c) for c in nb.cells if is_test_cell(c) and grade_id(c)]
    manifest = nb.get("metadata", {}).get(METADATA_KEY, {}).get("test_cells", [])
    released = [e[0] for e in manifest if isinstance(e, list) and e and isinstance(e[0], str)] \
        if isinstance(manifest, list) else []
    order = list(dict.fromkeys(released))
    previous = None
    for gid in present:  # a test cell the release did not have goes after the one before it
        if gid not in order:
            order.insert(order.index(previous) + 1 if previous in order else 0, gid)
        previous = gid
    return order


def rule_lines(nb: Any) -> list[str]:
    """One line per task: the calls it forbids and that the rest is allowed (the words of
    :func:`~.notebook.task_rule`), from the release's ``metadata.mlcourse.forbidden``, in the
    order of the answer cells; none for a notebook without that metadata."""
    declared = nb.get("metadata", {}).get(METADATA_KEY, {})
    declared = declared.get("forbidden") if isinstance(declared, dict) else None
    if not isinstance(declared, dict):
        return []
    forbidden = {task: [n for n in names if isinstance(n, str)]
                 for task, names in declared.items() if isinstance(task, str)
                 and isinstance(names, list)}
    tasks = [grade_id(c) for c in nb.cells if is_answer_cell(c) and grade_id(c)]
    tasks = list(dict.fromkeys(tasks + list(forbidden)))
    return [one_line(f"{task}: {task_rule(forbidden.get(task, []))}", 1000) for task in tasks]


def forbidden_warnings(nb: Any) -> list[str]:
    """One line per use of a call the release forbids (``metadata.mlcourse.forbidden``).

    The cells are read, not run (:func:`~.names.scan_code`, resolving names through the imports
    and aliases of every cell): an answer cell that uses a call its task forbids, another cell
    that uses a call some task forbids (it costs that task if the task calls it), and names
    that could disable the grader's watch on forbidden calls.
    """
    from .names import notebook_bindings, scan_code

    declared = nb.get("metadata", {}).get(METADATA_KEY, {})
    declared = declared.get("forbidden", {}) if isinstance(declared, dict) else {}
    if not isinstance(declared, dict):
        return []
    forbidden = {task: [n for n in names if isinstance(n, str)]
                 for task, names in declared.items() if isinstance(names, list)}
    every = sorted({n for names in forbidden.values() for n in names})
    if not every:
        return []
    cells = [(i, c) for i, c in enumerate(nb.cells)
             if c.get("cell_type") == "code" and not is_test_cell(c)]
    aliases, star = notebook_bindings(cell_source(c) for _, c in cells)
    found = []
    for index, cell in cells:
        gid = grade_id(cell)
        scan = scan_code(cell_source(cell), every, aliases, star)
        if gid in forbidden:
            names = [n for n in scan.uses if n in forbidden[gid]]
            if names:
                found.append(f"{gid} uses {', '.join(names)}, which this task forbids: graded, "
                             f"{gid} earns nothing")
        else:
            for name in scan.uses:
                tasks = [t for t, names in forbidden.items() if name in names]
                found.append(f"{cell_label(cell, index)} uses {name}, which "
                             f"{', '.join(tasks)} forbid{'s' if len(tasks) == 1 else ''}: a "
                             "task that calls it, even through this cell, earns nothing")
        if scan.monitor:
            found.append(f"{cell_label(cell, index)} uses {', '.join(scan.monitor[:3])}, which "
                         "could disable the grader's watch on forbidden calls: graded, every task "
                         "with forbidden calls earns nothing")
    return found


#: What the check runs as the id cell when the typed id is empty, malformed or missing: the
#: default variant's id (the student's file keeps what they typed).
DEFAULT_ID_SOURCE = f'{ID_NAME} = ""'
#: What it runs as the id cell when the assignment's variants are off (what the release writes).
OFF_ID_SOURCE = f"{ID_NAME} = None"


@dataclasses.dataclass
class IdCheck:
    """Which variant `mlcourse check` checks, from the notebook's id cell (:func:`id_check`).

    ``line`` is the check's first line ('' when the notebook has neither an id cell nor
    variants: nothing to say); ``index`` the id cell's position (None: there is none);
    ``run_as`` the source the run executes in the id cell's place, or before the first cell
    when there is no id cell (None: the cell runs as it is).
    """

    line: str = ""
    index: int | None = None
    run_as: str | None = None


def _assigns_none(source: str) -> bool:
    """Whether an id cell is ``STUDENT_ID = None`` (what the release writes when variants are
    off), comments aside."""
    try:
        body = ast.parse(source).body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return len(body) == 1 and isinstance(body[0], ast.Assign) and \
        [getattr(t, "id", None) for t in body[0].targets] == [ID_NAME] and \
        isinstance(body[0].value, ast.Constant) and body[0].value.value is None


def _assignment(nb: Any, notebook: str) -> str | None:
    """The assignment whose variants a notebook has: the release's ``metadata.mlcourse.
    assignment``, else the file's name (``bayes.ipynb``); None when neither has variants."""
    declared = nb.get("metadata", {}).get(METADATA_KEY, {})
    name = declared.get("assignment") if isinstance(declared, Mapping) else None
    for candidate in (name, PurePath(notebook).stem):
        if isinstance(candidate, str) and candidate in QUESTIONS:
            return candidate
    return None


def variant_words(assignment: str, student_id: str) -> str:
    """A variant in words on one line (:meth:`~.variants.Variant.describe` without its first
    line and its advice): ``section 10: prior Beta(2, 2); the 40 tumours from row 300``."""
    lines = variant(assignment, student_id).describe().splitlines()[1:]
    return "; ".join(line.strip() for line in lines if not line.strip().startswith("("))


def id_check(nb: Any, notebook: str = "") -> IdCheck:
    """Which variant `mlcourse check` runs ``nb`` as, and the line that says so.

    The id cell (:func:`~.notebook.read_student_id`) holds a course id: that student's variant.
    It is empty, malformed or missing: the default variant (the run executes
    ``STUDENT_ID = ""`` in its place, so the notebook's variant code runs rather than
    crashing), and the line says why and what to do. The assignment's variants are off
    (``metadata.mlcourse.variants: false``, or the id cell is ``STUDENT_ID = None`` and the
    metadata does not say they are on): one version for everyone.
    ``notebook`` is the file's name, which names the assignment when the metadata does not.
    """
    assignment = _assignment(nb, notebook)
    index = next((i for i, c in enumerate(nb.cells) if is_id_cell(c)), None)
    if index is None and assignment is None:
        return IdCheck()  # a notebook without variants: nothing to say
    declared = nb.get("metadata", {}).get(METADATA_KEY, {})
    switch = declared.get("variants") if isinstance(declared, Mapping) else None
    source = cell_source(nb.cells[index]) if index is not None else ""
    if switch is False or (switch is None and index is not None and _assigns_none(source)):
        run_as = None if index is not None and _assigns_none(source) else OFF_ID_SOURCE
        return IdCheck("one version for everyone: this assignment has no per-student variants",
                       index, run_as)
    student_id, problem = read_student_id(nb.cells)
    words = variant_words(assignment, student_id or "") if assignment else ""
    if problem is None:
        return IdCheck(one_line(f"checking as student {student_id}"
                                + (f" (your variant: {words})" if words else ""), 1000), index)
    todo = ("enter your course id in the first code cell" if index is not None else
            f'add a first code cell {ID_NAME} = "your course id" (or copy it from a fresh '
            "download)")
    default = "the default variant" + (f" ({words})" if words else "")
    return IdCheck(one_line(f"{problem}, so this checks {default} instead; to check your own, "
                            f"{todo}", 1000), index, DEFAULT_ID_SOURCE)
