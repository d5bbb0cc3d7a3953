"""What `mlcourse check` reads without running the notebook (grading/static_check.py): edited and
deleted tests named, edited read-only code, each task's rule, magics that are no syntax error.

The notebooks are the committed release of `mle` (each assignment's for the rules); each
expected value follows from how the notebook was changed (said in each test).
"""

from __future__ import annotations

import copy

import nbformat
import pytest

import assignment_support as sup
from mlcourse_utils.grading.notebook import is_test_cell, load_assignment
from mlcourse_utils.grading.static_check import (
    changed_tests,
    edited_locked_code,
    rule_lines,
    syntax_errors,
)

NAME = "mle"


def _node(nb_dict):
    return nbformat.from_dict(copy.deepcopy(nb_dict))


def _test_ids(nb):
    return [sup.grade_id(c) for c in nb["cells"] if is_test_cell(c)]


def test_changed_tests_are_named_from_the_release_checksums():
    """An edited test (its source now `pass`), one whose points were raised and a deleted one are
    named; the untouched tests are not."""
    nb = sup.release_notebook(NAME)
    tests = _test_ids(nb)
    edited, repointed, deleted = tests[0], tests[3], tests[4]
    for cell in nb["cells"]:
        if sup.grade_id(cell) == edited:
            cell["source"] = "pass"
        if sup.grade_id(cell) == repointed:
            cell["metadata"]["nbgrader"]["points"] = 100
    nb["cells"] = [c for c in nb["cells"] if sup.grade_id(c) != deleted]
    assert changed_tests(_node(nb)) == {edited: "edited", repointed: "edited",
                                         deleted: "deleted"}
    assert changed_tests(_node(sup.release_notebook(NAME))) == {}


def test_edited_read_only_code_is_a_warning():
    """mle's locked setup cell (`import numpy as np`) edited: one warning naming it."""
    nb = sup.release_notebook(NAME)
    assert edited_locked_code(_node(nb)) == []
    setup = next(c for c in nb["cells"] if sup.grade_id(c) == "setup")
    setup["source"] = "import numpy as np\nnp.seterr(all='ignore')"
    assert edited_locked_code(_node(nb)) == [
        "the read-only cell setup was edited; grading runs the original, so undo the edit"]


@pytest.mark.parametrize("name", sup.assignments())
def test_each_task_s_rule_is_one_line(name):
    """`mlcourse check` prints one line per task, in the order of the answer cells, that names
    every call the source notebook forbids in it (sklearn everywhere) and says the rest is
    allowed; read from the release's metadata, so a notebook without it gets none."""
    assignment = load_assignment(name, sup.ROOT)
    nb = _node(sup.release_notebook(name))
    lines = rule_lines(nb)
    assert [line.split(": ", 1)[0] for line in lines] == assignment.tasks
    for task, line in zip(assignment.tasks, lines, strict=True):
        assert "\n" not in line and line.endswith(
            "; the rest of numpy, scipy and the Python standard library is allowed"), line
        named = line.split("forbidden: ", 1)[1].split(";", 1)[0].split(", ")
        assert named == assignment.forbidden[task] and "sklearn" in named, (task, line)
    nb.metadata.pop("mlcourse")
    assert rule_lines(nb) == []


def test_magics_and_shell_escapes_are_not_syntax_errors():
    cells = [nbformat.v4.new_code_cell(s) for s in (
        "%matplotlib inline\nimport numpy as np", "!ls -l\nx = 1", "def f(:\n    pass")]
    assert syntax_errors(cells) == {2: "syntax error in cell 3, line 1: invalid syntax"}
