"""`mlcourse check`: a student runs a notebook's visible tests on their own machine."""

from __future__ import annotations

from pathlib import Path

from .notebook import grade_id, is_test_cell
from .release import run_notebook


def check_notebook(path, timeout=120):
    """Run a student's notebook and report its visible tests: returns ``(passed, failed)`` lists."""
    import nbformat

    path = Path(path)
    try:
        nb = nbformat.read(path, as_version=4)
        nbformat.validate(nb)
    except Exception as exc:  # noqa: BLE001
        raise ValueError(f"{path} is not a valid notebook: {exc}") from None
    tests = [grade_id(c) for c in nb.cells if is_test_cell(c)]
    if not tests:
        raise ValueError(f"{path} has no test cells: is it an assignment notebook?")
    errors = run_notebook(path, timeout=timeout)
    failed = [(gid, msg) for gid, msg, is_test in errors if is_test]
    bad = {gid for gid, _ in failed}
    passed = [gid for gid in tests if gid not in bad]
    other = [(gid, msg) for gid, msg, is_test in errors if not is_test]
    return passed, failed, other
