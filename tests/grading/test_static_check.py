"""What `mlcourse check` reads without running the notebook (grading/static_check.py): edited and
deleted tests named, edited read-only code, each task's rule, magics that are no syntax error.

The notebooks are the committed release of `mle` (each assignment's for the rules); each
expected value follows from how the notebook was changed (said in each test).
"""

from __future__ import annotations

import copy
import hashlib

import nbformat
import pytest

import assignment_support as sup
from mlcourse_utils.grading import variants
from mlcourse_utils.grading.notebook import cell_source, is_test_cell, load_assignment
from mlcourse_utils.grading.static_check import (
    IdCheck,
    changed_tests,
    edited_locked_code,
    id_check,
    rule_lines,
    syntax_errors,
)
from mlcourse_utils.grading.variants import QUESTIONS, variant

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


# ------------------------------------------------------------- which variant the check runs

VARIANTS = "bayes"  # its one question that varies: section 10, three parameters


def _chosen(assignment, student_id):
    """The parameters of each question that varies for ``student_id`` (already normalised),
    chosen as variants.py documents, computed here with hashlib: the choice of a parameter is
    the first 8 bytes of sha256("mlcourse variant\\0assignment\\0question\\0name\\0id"), read
    little-endian, modulo the number of choices; the empty id takes every first choice."""
    chosen = {}
    for question, q in QUESTIONS[assignment].items():
        chosen[question] = {}
        for name, choices in q.params.items():
            key = f"mlcourse variant\0{assignment}\0{question}\0{name}\0{student_id}".encode()
            index = int.from_bytes(hashlib.sha256(key).digest()[:8], "little") % len(choices)
            chosen[question][name] = choices[index] if student_id else choices[0]
    return chosen


def _words(assignment, student_id):
    """The variant in words as the check's first line gives it: per question, its section and
    its text with the chosen parameters."""
    return "; ".join(f"section {QUESTIONS[assignment][q].section}: "
                     f"{QUESTIONS[assignment][q].text.format(**params)}"
                     for q, params in _chosen(assignment, student_id).items())


def _with_id_cell(source, assignment=VARIANTS):
    nb = sup.release_notebook(assignment)
    cell = next(c for c in nb["cells"] if c.get("id") == "student-id")
    cell["source"] = source
    return _node(nb)


def _id_index(nb):
    return next(i for i, c in enumerate(nb.cells) if c.get("id") == "student-id")


def test_the_release_has_the_id_cell_and_an_empty_id():
    """Every release notebook has the id cell (`student-id`) as its first code cell, holding
    STUDENT_ID = "" and a comment; the check of a fresh download therefore says the id is
    empty."""
    for name in sup.assignments():
        nb = _node(sup.release_notebook(name))
        first_code = next(i for i, c in enumerate(nb.cells) if c.cell_type == "code")
        assert nb.cells[first_code].get("id") == "student-id", name
        assert cell_source(nb.cells[first_code]).startswith('STUDENT_ID = ""  # '), name
        assert id_check(nb, f"{name}.ipynb").line.startswith("STUDENT_ID is empty, so "), name


def test_a_course_id_names_the_student_and_their_variant():
    """`S1234567 ` (upper case, a space) is student s1234567 (NFC, stripped, case folded); the
    first line gives their variant's words, computed here with hashlib. The id cell runs as it
    is (run_as None)."""
    words = _words(VARIANTS, "s1234567")
    assert words != _words(VARIANTS, "")  # (this id's variant is not the default one)
    found = id_check(_with_id_cell('STUDENT_ID = "S1234567 "  # my id'), "bayes.ipynb")
    assert found.line == f"checking as student s1234567 (your variant: {words})"
    assert found.run_as is None and found.index == 2
    # The words agree with variant()'s own (the notebook's print(V)), shortened to one line.
    described = str(variant(VARIANTS, "s1234567")).splitlines()
    assert described[0] == "Your variant of bayes (student s1234567):"
    assert "; ".join(line.strip() for line in described[1:]) == words


def test_an_empty_id_checks_the_default_variant_and_says_what_to_do():
    """The release's own line: the default variant (every first choice of QUESTIONS), why, and
    what to do; the run executes STUDENT_ID = "" in its place."""
    nb = _with_id_cell(variants.ID_LINE)
    found = id_check(nb, "bayes.ipynb")
    default = _words(VARIANTS, "")
    assert default == "section 10: prior Beta(1, 1); the 30 tumours from row 0"  # by hand
    assert found.line == ("STUDENT_ID is empty, so this checks the default variant "
                          f"({default}) instead; to check your own, enter your course id in "
                          "the first code cell")
    assert found.run_as == 'STUDENT_ID = ""' and found.index == _id_index(nb)


@pytest.mark.parametrize(("source", "why"), [
    ('STUDENT_ID = "s12/34"', "STUDENT_ID = 's12/34' holds characters a course id does not "
                               "have (letters, digits and . _ @ + - only)"),
    ("STUDENT_ID = 1234567", 'STUDENT_ID must be your id in quotes, e.g. STUDENT_ID = '
                             '"s1234567"'),
    ('STUDENT_ID = "s1234567"; EXTRA = 1', 'the id cell must hold one line, STUDENT_ID = '
                                           '"your id"'),
    ('STUDENT_ID = "s1234567', 'the id cell is not valid Python (STUDENT_ID = "your id")'),
    ('STUDENT_ID = "' + "a" * 65 + '"', "STUDENT_ID has 65 characters; a course id has at "
                                         "most 64"),
    ('STUDENT_ID = "   "', "STUDENT_ID is empty"),
])
def test_a_malformed_id_checks_the_default_variant_and_says_why(source, why):
    """Each malformed id cell: its reason in words (not a traceback), the default variant, what
    to do, and the cell run as STUDENT_ID = "" (so "s1234567"; EXTRA = 1, which would run as
    student s1234567, runs as the default variant the line names)."""
    nb = _with_id_cell(source)
    found = id_check(nb, "bayes.ipynb")
    assert found.line == (f"{why}, so this checks the default variant "
                          f"({_words(VARIANTS, '')}) instead; to check your own, enter your "
                          "course id in the first code cell")
    assert found.run_as == 'STUDENT_ID = ""' and found.index == _id_index(nb)


def test_a_missing_id_cell_checks_the_default_variant_from_a_prelude():
    """The id cell deleted (and the notebook renamed by a download: its metadata names the
    assignment): the default variant, and STUDENT_ID = "" run before the first cell."""
    nb = sup.release_notebook(VARIANTS)
    nb["cells"] = [c for c in nb["cells"] if c.get("id") != "student-id"]
    found = id_check(_node(nb), "bayes (2).ipynb")
    assert found.line == ('the notebook has no id cell (STUDENT_ID = "your id"), so this checks '
                          f"the default variant ({_words(VARIANTS, '')}) instead; to check your "
                          'own, add a first code cell STUDENT_ID = "your course id" (or copy it '
                          "from a fresh download)")
    assert found.index is None and found.run_as == 'STUDENT_ID = ""'
    nb["metadata"]["mlcourse"].pop("assignment")  # then the file's name says which
    assert id_check(_node(nb), "bayes.ipynb").line == found.line


def test_variants_off_is_one_version_for_everyone():
    """The release's line when an assignment's variants are off (STUDENT_ID = None): one
    version for everyone, nothing about ids, the cell run as it is; with the metadata's
    `variants: false`, a typed id runs as None (as grading binds it) and a missing cell is
    defined as None. With `variants: true`, None is a malformed id."""
    nb = _with_id_cell(variants.ID_LINE_OFF)
    nb.metadata.mlcourse.pop("variants", None)  # the id line alone says it (an older release)
    found = id_check(nb, "bayes.ipynb")
    assert found.line == "one version for everyone: this assignment has no per-student variants"
    assert "id" not in found.line.split() and found.run_as is None
    nb.metadata.mlcourse["variants"] = False
    nb.cells[found.index].source = 'STUDENT_ID = "s1234567"'
    off = id_check(nb, "bayes.ipynb")
    assert off.line == found.line and off.run_as == "STUDENT_ID = None"
    del nb.cells[found.index]
    assert id_check(nb, "bayes.ipynb") == IdCheck(found.line, None, "STUDENT_ID = None")
    on = _with_id_cell(variants.ID_LINE_OFF)
    on.metadata.mlcourse["variants"] = True
    assert id_check(on, "bayes.ipynb").line.startswith(
        'STUDENT_ID must be your id in quotes, e.g. STUDENT_ID = "s1234567", so this checks the '
        "default variant (")


def test_a_notebook_without_variants_says_nothing():
    """No id cell and no assignment with variants (neither in the metadata nor the file's
    name): nothing to say and nothing to run; an id cell in such a notebook is read without
    words for the variant."""
    nb = sup.release_notebook(VARIANTS)
    nb["cells"] = [c for c in nb["cells"] if c.get("id") != "student-id"]
    nb["metadata"]["mlcourse"]["assignment"] = "unknown"
    assert id_check(_node(nb), "homework.ipynb") == IdCheck()
    with_cell = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell('STUDENT_ID = "s1"')])
    assert id_check(with_cell, "homework.ipynb") == IdCheck("checking as student s1", 0, None)
