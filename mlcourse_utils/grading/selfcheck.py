"""`mlcourse check`: a student runs a notebook's visible tests on their own machine."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

from .notebook import cell_source, grade_id, is_test_cell, parse_python
from .release import run_notebook


@dataclasses.dataclass
class TestStatus:
    """One test cell as `mlcourse check` reports it: "passed", "failed" or "hidden"."""

    grade_id: str
    status: str
    message: str = ""


def is_emptied_hidden_test(source: str) -> bool:
    """Whether a release's test cell holds no code: its tests were hidden (run when graded)."""
    try:
        body = parse_python(source).body
    except SyntaxError:
        return False
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]  # the cell's docstring
    return not body


def _explain(message):
    """An error as a student should read it: a bare NotImplementedError is a stub."""
    if message.strip() in ("NotImplementedError:", "NotImplementedError: None"):
        return "not implemented yet (the answer cell still raises NotImplementedError)"
    return message


def check_notebook(path: Path | str,
                   timeout: float = 120) -> tuple[list[TestStatus], list[tuple[str, str]]]:
    """Run a student's notebook: ``(tests, other_errors)`` in notebook order.

    ``tests`` is a list of :class:`TestStatus`; a test cell whose tests are hidden in the
    release is "hidden" (never "passed": it runs when graded). ``other_errors`` lists
    ``(cell, message)`` for cells that are not tests. Raises ValueError for a file that does
    not exist or is not a notebook.
    """
    import nbformat

    path = Path(path)
    if not path.is_file():
        raise ValueError(f"{path} does not exist" if not path.exists() else f"{path} is not a file")
    try:
        nb = nbformat.read(path, as_version=4)
        nbformat.validate(nb)
    except Exception as exc:  # noqa: BLE001
        raise ValueError(f"{path} is not a valid notebook: {exc}") from None
    cells = [c for c in nb.cells if is_test_cell(c)]
    if not cells:
        raise ValueError(f"{path} has no test cells: is it an assignment notebook?")
    errors = run_notebook(path, timeout=timeout)
    failed = {gid: _explain(msg) for gid, msg, is_test in errors if is_test}
    tests = []
    for cell in cells:
        gid = grade_id(cell)
        if is_emptied_hidden_test(cell_source(cell)):
            tests.append(TestStatus(gid, "hidden", "runs when graded"))
        elif gid in failed:
            tests.append(TestStatus(gid, "failed", failed[gid]))
        else:
            tests.append(TestStatus(gid, "passed"))
    other = [(gid, _explain(msg)) for gid, msg, is_test in errors if not is_test]
    return tests, other
