"""`mlcourse check` in words: syntax errors first, edited and deleted tests named, never passing.

The notebooks are the committed release of `mle` with answers from its solution notebook; each
expected status follows from how the notebook was changed (said in each test).
"""

from __future__ import annotations

import copy
import hashlib
import json

import nbformat
import pytest

import assignment_support as sup
from mlcourse_utils.grading.notebook import is_test_cell, nbgrader_checksum
from mlcourse_utils.grading.selfcheck import check_notebook, read_notebook
from mlcourse_utils.grading.static_check import rule_lines
from mlcourse_utils.grading.variants import QUESTIONS

NAME = "mle"


def _node(nb_dict):
    return nbformat.from_dict(copy.deepcopy(nb_dict))


def _test_ids(nb):
    return [sup.grade_id(c) for c in nb["cells"] if is_test_cell(c)]


def test_nbgrader_checksum_is_nbgrader_s():
    """Our checksum equals the one nbgrader stored in every cell of every release notebook,
    and nbgrader's own compute_checksum on cells we edit (source, points, type)."""
    from nbgrader.utils import compute_checksum

    checked = 0
    for name in sup.assignments():
        nb = nbformat.read(sup.ROOT / "exercises" / name / f"{name}.ipynb", as_version=4)
        for cell in nb.cells:
            meta = cell.metadata.get("nbgrader")
            if not meta or "checksum" not in meta:
                continue
            assert nbgrader_checksum(cell) == meta["checksum"], (name, meta["grade_id"])
            edited = copy.deepcopy(cell)
            edited.source += "\n# edited: déjà vu"
            if meta.get("grade"):
                edited.metadata.nbgrader["points"] = meta["points"] + 1
            assert nbgrader_checksum(edited) == compute_checksum(edited) != meta["checksum"]
            checked += 1
    assert checked > 100


def test_release_lists_its_test_cells_with_their_checksums():
    """The manifest `mlcourse release` writes is every test cell, in order, with nbgrader's
    checksum: what a deleted cell is found by."""
    nb = sup.release_notebook(NAME)
    manifest = nb["metadata"]["mlcourse"]["test_cells"]
    assert [gid for gid, _ in manifest] == _test_ids(nb)
    cells = {sup.grade_id(c): c for c in nb["cells"]}
    assert all(cells[gid]["metadata"]["nbgrader"]["checksum"] == checksum
               for gid, checksum in manifest)


def test_a_file_that_is_not_a_notebook_is_one_line(tmp_path):
    bad = tmp_path / "mle.ipynb"
    bad.write_text('{"cells": [')
    with pytest.raises(ValueError) as info:
        read_notebook(bad)
    assert "is not a valid notebook" in str(info.value) and "\n" not in str(info.value)
    with pytest.raises(ValueError, match="does not exist"):
        read_notebook(tmp_path / "nope.ipynb")
    plain = tmp_path / "plain.ipynb"
    plain.write_text(json.dumps(nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell("1")])))
    with pytest.raises(ValueError, match="no test cells"):
        check_notebook(plain)


@pytest.mark.slow
def test_syntax_error_is_reported_first_once_with_its_line(tmp_path):
    """An unclosed parenthesis on line 6 of gaussian_mle's cell (the solution has five lines):
    one problem line naming it comes first, its two visible tests fail because it is not
    defined, and no NameError is shown; the other tasks still pass."""
    answers = sup.solution_answers(NAME)
    assert len(answers["gaussian_mle"].splitlines()) == 5
    answers["gaussian_mle"] += "\n    mu = (x.mean()\n"
    path = sup.write_submission(tmp_path, "s", NAME, nb=sup.make_submission(NAME, answers))
    result = check_notebook(path, timeout=60)
    assert result.problems == ["syntax error in gaussian_mle, line 6: '(' was never closed"]
    failed = {t.grade_id: t.message for t in result.tests if t.status == "failed"}
    assert set(failed) == {"test_gaussian_mle", "test_gaussian_mle_edge"}
    assert all(m.startswith("gaussian_mle is not defined because cell gaussian_mle has a "
                            "syntax error") for m in failed.values())
    text = json.dumps([t.message for t in result.tests]) + json.dumps(result.other)
    assert "NameError" not in text and "Traceback" not in text
    assert result.count("passed") == 14 and not result.ok  # 16 visible tests, 2 failed
    assert result.rules == rule_lines(_node(sup.release_notebook(NAME)))  # printed by check


@pytest.mark.slow
def test_edited_and_deleted_tests_never_pass(tmp_path):
    """A visible test edited to `pass` would pass if run: it is reported as changed instead;
    a deleted one is reported, in its place, as changed; neither counts as passed."""
    nb = sup.make_submission(NAME, sup.solution_answers(NAME),
                             replace={"test_bernoulli_mle": "pass"})
    nb["cells"] = [c for c in nb["cells"] if sup.grade_id(c) != "test_mvn_mle_edge"]
    path = sup.write_submission(tmp_path, "s", NAME, nb=nb)
    result = check_notebook(path, timeout=60)
    status = {t.grade_id: t.status for t in result.tests}
    assert status["test_bernoulli_mle"] == "changed" and status["test_mvn_mle_edge"] == "changed"
    order = [t.grade_id for t in result.tests]
    assert order == _test_ids(sup.release_notebook(NAME))  # the deleted one in its place
    messages = {t.grade_id: t.message for t in result.tests}
    assert "edited" in messages["test_bernoulli_mle"]
    assert "deleted" in messages["test_mvn_mle_edge"]
    assert result.count("passed") == 14 and result.count("changed") == 2 and not result.ok


@pytest.mark.slow
def test_a_function_that_ran_out_of_time_is_not_called_by_its_later_tests(tmp_path):
    """bernoulli_mle never returns. With a 10 s limit (from the argument: it overrides the
    notebook's), its first visible test fails on the limit and its second, test_bernoulli_mle_edge,
    is not run, naming the function and the test, as grading does: one cell in all runs out of
    time, not one per test. The other 14 of mle's 16 visible tests pass. The tests are handed on
    in notebook order, after the start, each once."""
    answers = sup.solution_answers(NAME)
    answers["bernoulli_mle"] = "def bernoulli_mle(x):\n    while True:\n        pass\n"
    path = sup.write_submission(tmp_path, "s", NAME, nb=sup.make_submission(NAME, answers))
    events = []
    result = check_notebook(path, timeout=10, on_start=lambda r: events.append(r.timeout),
                            on_test=lambda t: events.append(t.grade_id))
    status = {t.grade_id: t for t in result.tests}
    assert status["test_bernoulli_mle"].status == "failed"
    assert status["test_bernoulli_mle"].message.startswith("still running after 10 s")
    assert status["test_bernoulli_mle_edge"].status == "not run"
    assert status["test_bernoulli_mle_edge"].message.startswith(
        "bernoulli_mle ran out of time in test_bernoulli_mle")
    assert sum("still running" in t.message for t in result.tests) == 1
    assert result.count("passed") == 14 and result.count("failed") == 1 and not result.ok
    assert events == [10, *_test_ids(sup.release_notebook(NAME))]
    assert [t.grade_id for t in result.tests] == events[1:]


# ------------------------------------------------------------- the variant checked, first

class _Stopped(Exception):
    """Raised from on_start: the check ends there, before any kernel starts."""


def _start_of(path):
    """What on_start receives (the check stopped right after it, so no kernel ever starts)."""
    seen = []

    def on_start(result):
        seen.append(result)
        raise _Stopped

    with pytest.raises(_Stopped):
        check_notebook(path, timeout=60, on_start=on_start,
                       on_cell=lambda *a: pytest.fail("a cell ran before the first line"))
    return seen[0]


def _bayes_with_id(tmp_path, source, appended=()):
    """bayes solved (every visible test passes), its id cell holding ``source`` (None: the
    cell deleted), ``appended`` code cells at the end."""
    nb = sup.make_submission("bayes", sup.solution_answers("bayes"), append_cells=appended)
    if source is None:
        nb["cells"] = [c for c in nb["cells"] if c.get("id") != "student-id"]
    else:
        next(c for c in nb["cells"] if c.get("id") == "student-id")["source"] = source
    return sup.write_submission(tmp_path, "s", "bayes", nb=nb)


def test_the_variant_line_comes_before_the_kernel_and_an_id_syntax_error_is_said_once(tmp_path):
    """on_start has the variant line before any cell runs (the command prints it first); an id
    cell that does not parse is said there (the default variant is checked) and is not also a
    syntax problem, since the run executes STUDENT_ID = "" in its place."""
    start = _start_of(_bayes_with_id(tmp_path, 'STUDENT_ID = "s1234567'))
    assert start.variant.startswith('the id cell is not valid Python (STUDENT_ID = "your id"), '
                                    "so this checks the default variant (")
    assert start.problems == []
    fine = _start_of(_bayes_with_id(tmp_path / "b", 'STUDENT_ID = "s1234567"'))
    assert fine.variant.startswith("checking as student s1234567 (your variant: section 10: ")


def _choice(assignment, question, name, student_id):
    """A parameter's choice for ``student_id``, as variants.py documents it (sha256, the first
    8 bytes little-endian, modulo the number of choices)."""
    choices = QUESTIONS[assignment][question].params[name]
    key = f"mlcourse variant\0{assignment}\0{question}\0{name}\0{student_id}".encode()
    return choices[int.from_bytes(hashlib.sha256(key).digest()[:8], "little") % len(choices)]


@pytest.mark.slow
@pytest.mark.parametrize("case", ["own", "malformed", "missing"])
def test_the_run_uses_the_variant_the_first_line_names(tmp_path, case):
    """bayes solved, with a course id (S1234567: student s1234567), an id cell of two statements
    (`STUDENT_ID = "s1234567"; EXTRA = 1`, which would run as student s1234567) or none. A cell
    appended at the end asserts, in the kernel, the STUDENT_ID and the variant V the notebook's
    setup made: s1234567's own prior (computed here with hashlib), or the default variant from
    STUDENT_ID = "" run in the cell's place or before the first cell. It passes (no error in
    other cells), every visible test passes, and the student's file is unchanged."""
    question = "interpretation_breast_cancer_posterior"
    prior = _choice("bayes", question, "prior", "s1234567")
    source = {"own": 'STUDENT_ID = "S1234567"', "missing": None,
              "malformed": 'STUDENT_ID = "s1234567"; EXTRA = 1'}[case]
    expect = (f'assert STUDENT_ID == "S1234567" and V.student_id == "s1234567" '
              f'and V["prior"] == {prior!r}, dict(V)' if case == "own" else
              'assert STUDENT_ID == "" and V.is_default and V.problem == "STUDENT_ID is empty", '
              "(STUDENT_ID, dict(V))")
    path = _bayes_with_id(tmp_path, source, appended=[expect])
    before = path.read_bytes()
    events = []
    result = check_notebook(path, timeout=120, on_start=lambda r: events.append(r.variant),
                            on_test=lambda t: events.append(t.grade_id))
    assert result.other == [] and result.ok, (result.other, result.tests)
    assert events[0] == result.variant and len(events) == 1 + len(result.planned)
    assert result.variant.startswith("checking as student s1234567 (your variant: "
                                     if case == "own" else "the ")
    assert path.read_bytes() == before
