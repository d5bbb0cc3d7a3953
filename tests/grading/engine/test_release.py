"""The generated first cell of every release notebook: points per task, install and check.

(That exercises/ equals a fresh `mlcourse release`, and that each solution passes its own tests,
is tested in tests/test_assignments.py.)
"""

from __future__ import annotations

import json
import shutil

import pytest

import assignment_support as sup
from mlcourse_utils.course import student_wheel_name
from mlcourse_utils.grading.engine.release import HEADER_ID, RULE_ID, header_cell
from mlcourse_utils.grading.notebook import is_answer_cell, load_assignment


def _header(name):
    cell = sup.release_notebook(name)["cells"][0]
    assert cell["id"] == HEADER_ID and cell["cell_type"] == "markdown"
    return sup.source(cell)


def test_mle_header_lists_the_points_of_each_task():
    """mle's six tasks of the chapter each have a visible test (1 point), an edge-case test (1)
    and a hidden test (2); its two tasks beyond the chapter visible tests (2 + 2) and hidden
    ones (4 + 4), half of the 48 autograded points; read off the solution notebook's cell
    metadata. The three derivations are worth 3 points each and the interpretation 2, graded
    by hand."""
    text = _header("mle")
    assert text.startswith("**`mle.ipynb`: 48 autograded points in 8 functions, 11 graded by hand.")
    for task in ("sequence_likelihood", "bernoulli_mle", "bernoulli_log_likelihood",
                 "gaussian_mle", "mvn_mle", "linear_regression_mle"):
        assert f"| `{task}` | 4 | 2 |" in text
    for task in ("exponential_censored_mle", "poisson_rate_mle"):
        assert f"| `{task}` | 12 | 8 |" in text
    for derivation in ("exponential_mle", "censored_exponential", "poisson_exposure"):
        assert f"| derivation_{derivation} (by hand) | 3 | |" in text
    assert "| interpretation_diabetes_gaussian (by hand) | 2 | |" in text


def test_every_header_says_how_to_install_and_check():
    """Each release notebook's first cell names the wheel the website offers and gives the
    commands for a shell, PowerShell and a notebook service, and both ways to run the check."""
    wheel = student_wheel_name()
    for name in sup.assignments():
        text = _header(name)
        assert f".venv/bin/python -m pip install {wheel}" in text            # Linux, macOS
        assert f".venv\\Scripts\\python -m pip install {wheel}" in text      # PowerShell
        assert f"%pip install {wheel}" in text                              # JupyterHub, Colab
        assert f"mlcourse check {name}.ipynb" in text
        assert f"python -m mlcourse_utils check {name}.ipynb" in text
        assert "{{" not in text and "{%" not in text


def test_header_is_built_from_the_source_notebook():
    """The header of the committed release is what header_cell makes from the solution
    notebook (the test that exercises/ is fresh checks the rest of the file)."""
    source = json.loads((sup.ROOT / "solutions" / "mle" / "mle.ipynb").read_text())
    assert header_cell(source, "mle", "mle.ipynb")["source"] == _header("mle")


@pytest.mark.parametrize("name", sup.assignments())
def test_each_answer_cell_has_its_rule_above_it(name):
    """Right above each answer cell of the release, a generated Markdown cell (read-only)
    names every call the source notebook forbids in that task and says the rest of numpy,
    scipy and the standard library is allowed; the header points to it."""
    assignment = load_assignment(name, sup.ROOT)
    cells = sup.release_notebook(name)["cells"]
    answers = [i for i, c in enumerate(cells) if is_answer_cell(c)]
    assert [sup.grade_id(cells[i]) for i in answers] == assignment.tasks
    for i in answers:
        task, rule = sup.grade_id(cells[i]), cells[i - 1]
        assert rule["id"] == RULE_ID.format(task=task) and rule["cell_type"] == "markdown"
        assert rule["metadata"]["editable"] is False and rule["metadata"]["deletable"] is False
        text = sup.source(rule)
        assert text.startswith(f"*Calls in `{task}`:* forbidden: ")
        assert text.endswith("the rest of numpy, scipy and the Python standard library is allowed.")
        named = text.split("forbidden: ", 1)[1].split(";", 1)[0].split(", ")
        assert named == [f"`{call}`" for call in assignment.forbidden[task]], (task, text)
    assert sum(c["id"].startswith("mlcourse-rule-") for c in cells) == len(assignment.tasks)
    assert "Each function's rule is repeated above its answer cell" in _header(name)


#: Assignments whose hidden tests compare with an instructor-only reference.
INSTRUCTOR_REFERENCES = ("mle", "bayes", "naive_bayes", "gda", "logistic_regression",
                         "information_theory", "ridge_lasso")


def test_instructor_references_are_never_released(tmp_path):
    """solutions/NAME/instructor_reference.py (what the hidden tests of the tasks beyond the
    chapter compare with) stays out of exercises/: nbgrader's copy of the assignment folder
    skips it (nbgrader_config.py), in a fresh release as in the committed one, and the released
    notebook does not name it (it is loaded only inside hidden tests)."""
    from mlcourse_utils.grading.engine.release import release

    for name in INSTRUCTOR_REFERENCES:
        assert (sup.ROOT / "solutions" / name / "instructor_reference.py").is_file(), name
        assert not (sup.ROOT / "exercises" / name / "instructor_reference.py").exists(), name
        assert "instructor_reference" not in json.dumps(sup.release_notebook(name)), name
    assert not list((sup.ROOT / "mlcourse_utils").rglob("instructor_reference*"))  # nor the package
    shutil.copytree(sup.ROOT / "solutions" / "mle", tmp_path / "solutions" / "mle")
    shutil.copy(sup.ROOT / "nbgrader_config.py", tmp_path)
    release(["mle"], root=tmp_path, check=False, quiet=True)
    released = sorted(p.name for p in (tmp_path / "exercises" / "mle").iterdir())
    assert released == ["mle.ipynb"]


def test_available_assignments_follow_the_course_catalogue(tmp_path):
    """Source notebooks are released in the catalogue's order (course.ASSIGNMENTS: ridge_lasso
    is the last chapter, mle the first), and one the catalogue lacks is an error naming it."""
    from mlcourse_utils.grading.engine.release import available_assignments

    for name in ("ridge_lasso", "mle"):
        (tmp_path / "solutions" / name).mkdir(parents=True)
        (tmp_path / "solutions" / name / f"{name}.ipynb").write_text("{}")
    (tmp_path / "solutions" / "notes").mkdir()  # no notebook of its name: not an assignment
    assert available_assignments(tmp_path) == ["mle", "ridge_lasso"]
    (tmp_path / "solutions" / "kernels").mkdir()
    (tmp_path / "solutions" / "kernels" / "kernels.ipynb").write_text("{}")
    with pytest.raises(ValueError, match="solutions/kernels/ is not .*mlcourse_utils/course.py"):
        available_assignments(tmp_path)


def test_one_time_limit_everywhere(tmp_path, monkeypatch, capsys):
    """The time limit of a cell is decided once per assignment (its source notebook's metadata,
    else the course's default) and every place states that number: the release notebook's first
    cell and metadata, the second line of `mlcourse check` (read as the check starts, before any
    cell runs), grading (whose --timeout defaults to None: the assignment's own limit, as
    load_assignment reads it), and, for the course's default, the Getting started page (its glued
    number and the first line of its example, computed by the page's code cells, run here) and
    the README's synopsis of `mlcourse grade`."""
    import inspect

    import jupytext
    import myst_nb

    from mlcourse_utils import cli
    from mlcourse_utils.course import DEFAULT_TIMEOUT
    from mlcourse_utils.grading import selfcheck
    from mlcourse_utils.grading.engine import batch, session
    from mlcourse_utils.grading.notebook import load_assignment

    class Started(Exception):
        pass

    def stop(result):  # (the first line says which variant is checked, the next the limit)
        raise Started(cli.check_start_lines(result)[1])

    for name in sup.assignments():
        limit = load_assignment(name, sup.ROOT).timeout
        assert f"**Time limit: {limit} seconds per cell**" in _header(name)
        assert sup.release_notebook(name)["metadata"]["mlcourse"]["timeout"] == limit
        path = sup.write_submission(tmp_path, name, name, nb=sup.release_notebook(name))
        with pytest.raises(Started) as started:
            selfcheck.check_notebook(path, on_start=stop)
        assert str(started.value).startswith(f"checking {name}.ipynb: ")
        assert str(started.value).endswith(f", {limit} s per cell")
    for grade in (session.grade_notebook, batch.grade_class):
        assert inspect.signature(grade).parameters["options"].default.timeout is None
    assert cli.make_parser().parse_args(["grade", "mle", "s", "--out", "o"]).timeout is None

    glued = {}
    monkeypatch.setattr(myst_nb, "glue", lambda key, value, display=True:
                        glued.__setitem__(key, value))
    monkeypatch.chdir(sup.ROOT / "book")
    page = jupytext.read(sup.ROOT / "book" / "getting-started.md")
    namespace = {}
    for cell in page.cells:
        if cell.cell_type == "code":
            exec(cell.source, namespace)
    assert glued["cell-limit"] == DEFAULT_TIMEOUT
    assert "{glue:text}`cell-limit` seconds" in " ".join(
        (sup.ROOT / "book" / "getting-started.md").read_text().split())
    example = capsys.readouterr().out.splitlines()
    assert example[0] == "checking mle.ipynb: 26 test cells (10 hidden: they run when graded), " \
                         f"{DEFAULT_TIMEOUT} s per cell"

    readme = " ".join((sup.ROOT / "README.md").read_text(encoding="utf-8").split())
    mle_budget = session.grading_budget(load_assignment("mle", sup.ROOT))
    assert f"[--timeout {DEFAULT_TIMEOUT}] [--student-timeout {mle_budget:g}]" in readme
    assert f"notebook: {mle_budget:g} s)" in readme
    assert f"the one grading uses: {DEFAULT_TIMEOUT} unless" in readme


@pytest.mark.parametrize("source,found", [
    ('with np.errstate(over="raise", invalid="raise"):\n    v = f(1e4)', "errstate(...) sets a "
     "floating-point error mode 'raise'"),
    ('numpy.seterr("raise")', "seterr(...) sets a floating-point error mode 'raise'"),
    ('np.seterr(divide="call")', "mode 'call'"),
    ('np.errstate(**{"under": "raise"})', "mode 'raise'"),
    ('mode = "raise"\nnp.errstate(all=mode)', "mode that is not a literal"),
    ('import warnings\nwarnings.simplefilter("error")', "simplefilter(...) sets a warnings action "
     "'error'"),
    ('warnings.filterwarnings(action="error", category=RuntimeWarning)', "action 'error'"),
    ('with warnings.catch_warnings(action="error"):\n    pass', "catch_warnings(...)"),
])
def test_a_test_cell_that_makes_warnings_errors_is_found(source, found):
    from mlcourse_utils.grading.engine.release import warnings_made_errors

    assert [found in line for line in warnings_made_errors(source)] == [True]


def test_harmless_warning_settings_are_allowed():
    """Silencing warnings, recording them or a mode given as None leaves a warning a warning."""
    from mlcourse_utils.grading.engine.release import warnings_made_errors

    assert warnings_made_errors(
        'with np.errstate(all="ignore", call=None):\n    v = f(0)\nnp.seterr(over="warn")\n'
        'warnings.simplefilter("ignore", RuntimeWarning)\nwarnings.filterwarnings("always")\n'
        'with warnings.catch_warnings(record=True):\n    pass\nnp.errstate(divide=None)\n'
        'def broken(:') == []
    assert warnings_made_errors('with np.errstate(all="ignore"):\n    v = f(0)\n') == []


def test_release_refuses_a_test_cell_that_makes_warnings_errors(tmp_path):
    """Warnings never cost points: `mlcourse release` refuses a source notebook whose test cell
    turns warnings into errors (an honest np.where idiom would fail it in `mlcourse check`),
    naming the cell and the line, before running anything; the exercises are not written."""
    import nbformat

    from mlcourse_utils.grading.engine.release import release

    shutil.copytree(sup.ROOT / "solutions" / "mle", tmp_path / "solutions" / "mle")
    shutil.copy(sup.ROOT / "nbgrader_config.py", tmp_path)
    path = tmp_path / "solutions" / "mle" / "mle.ipynb"
    nb = nbformat.read(path, as_version=4)
    cell = next(c for c in nb.cells if sup.grade_id(c) == "test_bernoulli_mle")
    cell.source = "import numpy as np\nnp.seterr(all='raise')\n" + cell.source
    nbformat.write(nb, path)
    with pytest.raises(ValueError, match=r"test_bernoulli_mle, line 2: seterr\(\.\.\.\) sets a "
                                         r"floating-point error mode 'raise'"):
        release(["mle"], root=tmp_path, check=False, quiet=True)
    assert not (tmp_path / "exercises").exists()
