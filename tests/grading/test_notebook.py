"""The one reader of nbgrader metadata (grading/notebook.py): cells, and the visible part of
tests.
"""

from __future__ import annotations

import pytest

from mlcourse_utils.grading import (
    notebook,
)


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


def _cell(kind, source, **nbgrader):
    return {"cell_type": kind, "source": source, "metadata": {"nbgrader": nbgrader}}


def test_preload_is_the_solutions_imports_and_the_modules_of_forbidden_calls():
    cells = [
        _cell("code", "import numpy as np"),  # setup: run in the grader, not preloaded
        _cell("code", "from scipy.special import gammaln\nimport mlcourse_utils.mle\n"
              "from __future__ import annotations\n", solution=True, grade_id="f"),
        _cell("code", "import heapq\nassert f() == 1", grade=True, grade_id="test_f",
              points=1),
    ]
    meta = {"mlcourse": {"forbidden": {"f": ["scipy.stats.beta.fit", "sklearn"]}}}
    assignment = notebook.assignment_from_cells("demo", "demo.ipynb", cells, meta)
    # The answer cell's imports (the course package and __future__ left out), then every
    # proper prefix of a forbidden name (a whole forbidden package is not imported).
    assert assignment.imports == ["scipy.special", "scipy.special.gammaln"]
    assert assignment.preload == ["scipy.special", "scipy.special.gammaln", "scipy",
                                  "scipy.stats", "scipy.stats.beta"]


def test_time_limit_is_the_notebook_s_or_the_course_s():
    """metadata.mlcourse.timeout in whole seconds (the kernel's limit is in whole seconds);
    without it the course's default; anything else is refused, naming the key and notebook."""
    from mlcourse_utils.course import DEFAULT_TIMEOUT
    from mlcourse_utils.grading.notebook import time_limit

    assert time_limit(None) == time_limit({}) == time_limit({"mlcourse": {}}) == DEFAULT_TIMEOUT
    assert time_limit({"mlcourse": {"timeout": 300}}) == 300
    assert time_limit({"mlcourse": {"timeout": 45.0}}) == 45
    for bad in (2.5, 0, -1, True, "120", None):
        with pytest.raises(ValueError, match=r"metadata.mlcourse.timeout of demo.ipynb"):
            time_limit({"mlcourse": {"timeout": bad}}, "demo.ipynb")


def _id_cell(source, marked=True):
    meta = {"mlcourse": {"role": "student_id"}} if marked else {}
    return {"cell_type": "code", "source": source, "metadata": meta}


def test_the_id_cell_is_found_by_its_mark_or_its_line():
    assert notebook.is_id_cell(_id_cell("x = 1"))  # the release's mark
    assert notebook.is_id_cell(_id_cell('  STUDENT_ID = "s1"', marked=False))
    assert not notebook.is_id_cell(_id_cell("x = 1", marked=False))
    assert not notebook.is_id_cell({"cell_type": "markdown", "source": 'STUDENT_ID = "s"',
                                    "metadata": {}})
    graded = _cell("code", 'STUDENT_ID = "s"', solution=True, grade_id="f")
    assert not notebook.is_id_cell(graded)


def test_read_student_id_reads_the_first_id_cell():
    cells = [_cell("markdown", "intro"), _id_cell('STUDENT_ID = " S9 "'),
             _id_cell('STUDENT_ID = "other"', marked=False)]
    assert notebook.read_student_id(cells) == ("s9", None)
    assert notebook.read_student_id(cells[:1]) == (
        None, 'the notebook has no id cell (STUDENT_ID = "your id")')
    assert notebook.read_student_id([_id_cell("STUDENT_ID = 5")])[0] is None


def test_the_id_cell_is_not_a_setup_cell_and_variants_are_on_by_default():
    """The grader binds STUDENT_ID itself (the roster id), so the id cell never runs there."""
    cells = [_id_cell('STUDENT_ID = ""'), _cell("code", "import numpy as np"),
             _cell("code", "def f(): pass", solution=True, grade_id="f"),
             _cell("code", "assert f() is None", grade=True, grade_id="test_f", points=1)]
    a = notebook.assignment_from_cells("x", "x.ipynb", cells)
    assert a.setup == ["import numpy as np"] and a.has_id_cell and a.variants
    off = notebook.assignment_from_cells("x", "x.ipynb", cells, {"mlcourse": {"variants": False}})
    assert not off.variants
    assert not notebook.assignment_from_cells("x", "x.ipynb", cells[1:]).has_id_cell
