"""Grading one notebook (grading/session.py): the reference's use found in code, and setup
cells that must run on their own.
"""

from __future__ import annotations

import pytest

from mlcourse_utils.grading import (
    notebook,
    session,
)


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
