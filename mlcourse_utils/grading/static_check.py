"""What `mlcourse check` reads in a notebook without running it: syntax, edited tests, rules."""

from __future__ import annotations

import ast
import warnings
from typing import Any

from .notebook import (
    cell_source,
    grade_id,
    is_answer_cell,
    is_locked,
    is_test_cell,
    nbgrader_checksum,
    nbgrader_meta,
    task_rule,
)

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
