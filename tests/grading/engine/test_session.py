"""Grading one notebook (grading/engine/session.py): the reference's use found in code, and setup
cells that must run on their own.
"""

from __future__ import annotations

import pytest

from mlcourse_utils.grading import notebook
from mlcourse_utils.grading.engine import session
from mlcourse_utils.grading.engine.options import GradingOptions


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


@pytest.mark.slow
def test_the_assignment_s_limit_is_the_check_s_and_the_grader_s(tmp_path):
    """One limit, set in the source notebook's metadata (6 s here, to keep the test short), used
    by `mlcourse check` (through the release's copy of it) and by grading, both with their
    default options. `slow` takes 4 s: more than half the limit (as 70 s is more than the 60 s
    grading once allowed against the check's 120) but within it, so its visible test passes in
    both; `late` takes 30 s and fails in both, each naming the 6 s limit (not the course's
    default). Grading's default budget follows from the same limit."""
    import json
    import shutil

    from mlcourse_utils.course import BUDGET_FACTOR, DEFAULT_TIMEOUT
    from mlcourse_utils.grading.engine.release import finish_release_notebook
    from mlcourse_utils.grading.intake.submissions import read_submission
    from mlcourse_utils.grading.selfcheck import check_notebook

    limit = 6
    assert limit != DEFAULT_TIMEOUT
    root = _course_with(tmp_path / "course", [
        _cell("import time"),
        _cell("def slow():\n    return 1", grade_id="slow", solution=True, grade=False),
        _cell('"""slow() is 1."""\nassert slow() == 1', grade_id="test_slow", grade=True,
              solution=False, points=1),
        _cell("def late():\n    return 2", grade_id="late", solution=True, grade=False),
        _cell('"""late() is 2."""\nassert late() == 2', grade_id="test_late", grade=True,
              solution=False, points=1),
    ])
    source = root / "solutions" / "demo" / "demo.ipynb"
    nb = json.loads(source.read_text())
    nb["metadata"]["mlcourse"] = {"timeout": limit}
    source.write_text(json.dumps(nb))
    answers = {"slow": "def slow():\n    time.sleep(4)\n    return 1",
               "late": "def late():\n    time.sleep(30)\n    return 2"}
    for cell in nb["cells"]:
        cell["source"] = answers.get(cell["metadata"].get("nbgrader", {}).get("grade_id"),
                                     cell["source"])
    student = tmp_path / "subs" / "s" / "demo.ipynb"
    student.parent.mkdir(parents=True)
    student.write_text(json.dumps(nb))
    shutil.copy(student, tmp_path / "submitted.ipynb")
    finish_release_notebook(student, source, "demo")  # the header and the limit, as released
    assert json.loads(student.read_text())["metadata"]["mlcourse"]["timeout"] == limit

    checked = check_notebook(student)
    assert checked.timeout == limit
    status = {t.grade_id: t for t in checked.tests}
    assert status["test_slow"].status == "passed"
    assert status["test_late"].status == "failed"
    assert status["test_late"].message.startswith(f"still running after {limit} s")

    assignment = notebook.load_assignment("demo", root)
    assert assignment.timeout == limit
    assert session.grading_budget(assignment) == (BUDGET_FACTOR + 1) * limit  # no hidden tests
    graded = session.grade_notebook(assignment, read_submission(tmp_path / "submitted.ipynb"))
    earned = {t.grade_id: t for t in graded.tests}
    assert earned["test_slow"].earned == 1, earned["test_slow"].message
    assert earned["test_late"].earned == 0
    assert earned["test_late"].message.startswith(f"timed out after {limit} s")


def test_limits_left_open_are_the_assignments_and_those_given_are_kept():
    """mle's limit T (its source notebook's): options without limits grade with T per cell and
    (BUDGET_FACTOR + 1) T in all; a --timeout t gives (BUDGET_FACTOR + 1) t; a
    --student-timeout is kept as given; the other options pass through unchanged."""
    import assignment_support as sup
    from mlcourse_utils.course import BUDGET_FACTOR

    assignment = notebook.load_assignment("mle", sup.ROOT)
    limit = assignment.timeout
    limits = session._limits(assignment, GradingOptions(memory_mb=700, secret=b"x" * 16))
    assert (limits.timeout, limits.student_timeout) == (limit, (BUDGET_FACTOR + 1) * limit)
    assert (limits.memory_mb, limits.secret) == (700, b"x" * 16)
    limits = session._limits(assignment, GradingOptions(timeout=limit + 2))
    assert limits.student_timeout == (BUDGET_FACTOR + 1) * (limit + 2)
    limits = session._limits(assignment, GradingOptions(timeout=4, student_timeout=9))
    assert (limits.timeout, limits.student_timeout) == (4, 9)


@pytest.mark.slow
def test_a_timeout_is_named_a_timeout_in_the_function_and_in_its_cell(tmp_path):
    """Two tasks lost to the time limit (3 s, which reading the notebook fits in too):
    ``f``'s answer cell defines f and then loops (the cell never finishes, so f is never
    defined: before, "does not define a function", counted as not attempted), ``g`` loops
    when called. Both reasons say "timed out" and are classified as timeouts, at the cell
    and in the function; ``h`` keeps its point."""
    import json

    from mlcourse_utils.grading.graded.reasons import classify_reason, timeout_where
    from mlcourse_utils.grading.intake.submissions import Submission

    root = _course_with(tmp_path, [
        _cell("import math"),
        _cell("def f(x):\n    return x", grade_id="f", solution=True, grade=False),
        _cell("assert f(1) == 1", grade_id="test_f", grade=True, solution=False, points=1),
        _cell("def g(x):\n    return x", grade_id="g", solution=True, grade=False),
        _cell("assert g(1) == 1", grade_id="test_g", grade=True, solution=False, points=1),
        _cell("def h(x):\n    return x", grade_id="h", solution=True, grade=False),
        _cell("assert h(1) == 1", grade_id="test_h", grade=True, solution=False, points=1),
    ])
    a = notebook.load_assignment("demo", root)
    nb = json.loads((root / "solutions" / "demo" / "demo.ipynb").read_text())
    sources = {"f": "def f(x):\n    return x\nwhile True:\n    pass\n",
               "g": "def g(x):\n    while True:\n        pass\n"}
    for cell in nb["cells"]:
        gid = cell["metadata"].get("nbgrader", {}).get("grade_id")
        if gid in sources:
            cell["source"] = sources[gid]
    limits = GradingOptions(timeout=3, student_timeout=120, memory_mb=1024)
    result = session.grade_notebook(a, Submission("s", json.dumps(nb).encode()), limits)
    scores = {t: result.task_score(t) for t in a.tasks}
    assert scores == {"f": 0, "g": 0, "h": 1}, (result.reasons, result.refused, result.notes)
    f_reason, g_reason = result.reasons["f"], result.reasons["g"]
    assert f_reason.startswith("the cell that defines f (cell 2) did not finish: timed out "
                               "after 3 s"), f_reason
    assert g_reason.startswith("timed out after 3 s"), g_reason
    assert [classify_reason(r) for r in (f_reason, g_reason)] == ["timeout", "timeout"]
    assert [timeout_where(r) for r in (f_reason, g_reason)] == [
        "while its cell defined it", "in the function"]
    (test_f,) = [t for t in result.tests if t.task == "f"]
    assert test_f.message == f"not run: {f_reason}"
    assert "does not define" not in test_f.message
    assert (2, "timed out after 3 s (the time limit per cell and per test)") in \
        result.cell_errors


# ------------------------------------------------------------------ the student's variant


def test_the_sandbox_prelude_defines_variant_as_the_package_does():
    """The grader's first cell, run in a bare namespace (no course package needed), binds the
    roster id and a variant that gives the package's variant (same parameters, same rows)."""
    from mlcourse_utils.grading import variants

    namespace = {}
    exec(session.sandbox_prelude("S2"), namespace)  # (our own text)
    assert namespace["STUDENT_ID"] == "S2"
    theirs = namespace["_mlcourse_variant"]("bayes", "S2")
    ours = variants.variant("bayes", "S2")
    assert dict(theirs) == dict(ours) and theirs.student_id == "s2"
    assert theirs.rows(569, 300, "start") == ours.rows(569, 300, "start")
    namespace = {}
    exec(session.sandbox_prelude(None), namespace)
    assert namespace["STUDENT_ID"] is None
    assert namespace["_mlcourse_variant"]("mle", None).enabled is False


def _variant_course(tmp_path, variants_on=True):
    """A course whose answers return what the sandbox holds: STUDENT_ID (f) and the setup's
    variant (g); h imports the variant in its answer cell (delegation)."""
    import nbformat

    line = "from mlcourse_utils.grading import variant"
    id_cell = nbformat.v4.new_code_cell('STUDENT_ID = ""')
    id_cell.metadata["mlcourse"] = {"role": "student_id"}
    root = _course_with(tmp_path, [
        id_cell,
        _cell(f"import math\n{line}\nV = variant('bayes', STUDENT_ID)"),
        _cell("def f():\n    return STUDENT_ID", grade_id="f", solution=True, grade=False),
        _cell("assert f() == STUDENT_ID, f()", grade_id="test_f", grade=True, solution=False,
              points=1),
        _cell("def g():\n    return [V.student_id, list(V['prior']), V['start']]", grade_id="g",
              solution=True, grade=False),
        _cell("assert g() == [V.student_id, list(V['prior']), V['start']], g()",
              grade_id="test_g", grade=True, solution=False, points=1),
        _cell(f"{line}\ndef h():\n    return 1", grade_id="h", solution=True, grade=False),
        _cell("assert h() == 1", grade_id="test_h", grade=True, solution=False, points=1),
    ])
    path = root / "solutions" / "demo" / "demo.ipynb"
    nb = nbformat.read(path, as_version=4)
    nb.metadata["mlcourse"] = {"variants": variants_on}
    nbformat.write(nb, path)
    return root, nb


def _typed(nb, source, append=()):
    import json

    import nbformat

    nb = nbformat.from_dict(json.loads(json.dumps(nb)))
    nb.cells[0].source = source
    nb.cells += [nbformat.v4.new_code_cell(s) for s in append]
    return json.dumps(nb).encode()


@pytest.mark.slow
def test_the_sandbox_runs_the_roster_student_s_variant(tmp_path):
    """A notebook handed in as s2 whose id cell says s7: its cells see STUDENT_ID = 's2' and
    s2's variant (f and g earn their points: the tests compare with the grader's variant of
    s2, from the package), the setup's import line earns no note, the answer importing the
    package earns nothing; the id is flagged, never costs a point; "cell N" is the student's
    cell N (an error in the appended cell 10)."""
    import json

    from mlcourse_utils.grading import variants
    from mlcourse_utils.grading.graded.results import IdCheck
    from mlcourse_utils.grading.intake.submissions import Submission

    root, nb = _variant_course(tmp_path)
    a = notebook.load_assignment("demo", root)
    assert variants.variant("bayes", "s2") != variants.variant("bayes", "s7")  # (else moot)
    limits = GradingOptions(timeout=20, student_timeout=120, memory_mb=1024)
    data = _typed(nb, 'STUDENT_ID = "s7"', ["print('sandbox:', STUDENT_ID, V.student_id)",
                                           "1 / 0"])
    copy = tmp_path / "copy.ipynb"
    result = session.grade_notebook(a, Submission("s2", data), limits, copy_to=copy)
    copied = [c["source"] for c in json.loads(copy.read_text())["cells"]]
    assert copied[0] == 'STUDENT_ID = "s7"'  # the formgrader copy keeps what was written
    assert "from mlcourse_utils.grading import variant" in copied[1]
    assert {t: result.task_score(t) for t in a.tasks} == {"f": 1, "g": 1, "h": 0}, \
        (result.tests, result.notes, result.cell_errors, result.output)
    assert "sandbox: s2 s2" in result.output
    assert not any("mlcourse_utils" in n for n in result.notes), result.notes
    assert "mlcourse_utils" in result.reasons["h"]
    assert [n for n, _ in result.cell_errors] == [7, 10]  # h's import, then 1 / 0
    assert result.cell_errors[1] == (10, "ZeroDivisionError: division by zero")
    assert result.id_check == IdCheck("s7", False, "other")
    # its own id: no flag; an id cell left empty: flagged, the same points
    same = session.grade_notebook(a, Submission("s2", _typed(nb, 'STUDENT_ID = "S2"')), limits)
    assert same.id_check == IdCheck("s2", True) and same.score == 2
    empty = session.grade_notebook(a, Submission("s2", _typed(nb, 'STUDENT_ID = ""')), limits)
    assert empty.id_check.problem == "empty" and empty.score == 2


@pytest.mark.slow
def test_with_variants_off_the_sandbox_binds_none_and_an_empty_id_is_no_problem(tmp_path):
    """variants: false: STUDENT_ID is None in the sandbox (f() == None earns its point), the
    release's ``STUDENT_ID = None`` is no problem; another student's id still is."""
    from mlcourse_utils.grading.intake.submissions import Submission

    root, nb = _variant_course(tmp_path, variants_on=False)
    a = notebook.load_assignment("demo", root)
    assert a.variants is False
    limits = GradingOptions(timeout=20, student_timeout=120, memory_mb=1024)
    result = session.grade_notebook(a, Submission("s2", _typed(nb, "STUDENT_ID = None")), limits)
    assert result.task_score("f") == 1 and result.task_score("g") == 1, result.tests
    assert result.id_check.problem == "" and result.id_check.typed is None
    other = session.grade_notebook(a, Submission("s2", _typed(nb, 'STUDENT_ID = "s7"')), limits)
    assert other.id_check.problem == "other"
