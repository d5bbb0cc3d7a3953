"""The generated first cell of every release notebook: points per task, install and check; the
id cell where a student enters their course id, and what the release refuses about it.

(That exercises/ equals a fresh `mlcourse release`, and that each solution passes its own tests,
is tested in tests/test_assignments.py.)
"""

from __future__ import annotations

import json
import re
import shutil

import pytest

import assignment_support as sup
from mlcourse_utils.course import student_wheel_name
from mlcourse_utils.grading.engine.release import HEADER_ID, RULE_ID, header_cell
from mlcourse_utils.grading.notebook import is_answer_cell, is_id_cell, load_assignment
from mlcourse_utils.grading.variants import ID_LINE, ID_LINE_OFF, QUESTIONS, variant


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
    assert example[0].startswith("STUDENT_ID is empty, so this checks the default variant")
    assert example[1] == "checking mle.ipynb: 26 test cells (10 hidden: they run when graded), " \
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


def _section_words(name):
    """The sections of ``name`` whose questions vary, as the header says them."""
    sections = list(dict.fromkeys(q.section for q in QUESTIONS[name].values()))
    return (f"section {sections[0]}" if len(sections) == 1 else
            f"sections {', '.join(sections[:-1])} and {sections[-1]}")


@pytest.mark.parametrize("name", sup.assignments())
def test_the_release_starts_with_the_id_cell(name):
    """Each committed release notebook has one id cell, its first code cell, holding exactly
    variants.ID_LINE, marked by its role and not locked (the student types in it); the header
    says in one sentence to fill it first and which sections are the student's own numbers;
    the release's metadata says variants are on."""
    nb = sup.release_notebook(name)
    ids = [c for c in nb["cells"] if is_id_cell(c)]
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert len(ids) == 1 and ids[0] is code[0]
    assert sup.source(ids[0]) == ID_LINE
    assert ids[0]["metadata"] == {"mlcourse": {"role": "student_id"}}  # no nbgrader lock
    sentences = [p for p in _header(name).split("\n\n") if "course id" in p]
    assert sentences == [
        '**Your course id first.** Before you run anything, enter your course id between the '
        'quotes of `STUDENT_ID = ""` in the first code cell: the questions of '
        f"{_section_words(name)} are about your own numbers, and they are marked against your id."]
    assert nb["metadata"]["mlcourse"]["variants"] is True


def _course(tmp_path, name="mle", edit=None):
    """A course in ``tmp_path`` with one assignment's solution, edited by ``edit(nb)``."""
    import nbformat

    shutil.copytree(sup.ROOT / "solutions" / name, tmp_path / "solutions" / name)
    shutil.copy(sup.ROOT / "nbgrader_config.py", tmp_path)
    path = tmp_path / "solutions" / name / f"{name}.ipynb"
    if edit:
        nb = nbformat.read(path, as_version=4)
        edit(nb)
        nbformat.write(nb, path)
    return path


def _id_index(nb):
    return next(i for i, c in enumerate(nb.cells) if is_id_cell(c))


def test_variants_off(tmp_path):
    """One setting turns variants off: `"variants": false` in the solution's
    metadata.mlcourse. The release then writes ID_LINE_OFF (STUDENT_ID = None) in the id cell,
    whatever the instructor typed there, keeps its role, copies the setting into the release's
    metadata, and its header says nothing of ids or variants; the id cell's line, run, gives
    every student the default variant, without a problem to report."""
    from mlcourse_utils.grading.engine.release import release

    def off(nb):
        nb.metadata.setdefault("mlcourse", {})["variants"] = False
        nb.cells[_id_index(nb)].source = 'STUDENT_ID = "s999"  # the instructor tried an id'

    _course(tmp_path, edit=off)
    release(["mle"], root=tmp_path, check=False, quiet=True)
    nb = json.loads((tmp_path / "exercises" / "mle" / "mle.ipynb").read_text())
    cell = next(c for c in nb["cells"] if is_id_cell(c))
    assert sup.source(cell) == ID_LINE_OFF and ID_LINE_OFF.startswith("STUDENT_ID = None")
    assert cell["metadata"] == {"mlcourse": {"role": "student_id"}}
    assert nb["metadata"]["mlcourse"]["variants"] is False
    header = sup.source(nb["cells"][0])
    assert "course id" not in header and "STUDENT_ID" not in header
    assert "own numbers" not in header and "variant" not in header.lower()
    namespace = {}
    exec(sup.source(cell), namespace)
    v = variant("mle", namespace["STUDENT_ID"])
    assert v.is_default and not v.enabled and v.problem is None and v.student_id == ""
    assert v == variant("mle", "")  # the default variant: every parameter's first choice
    assert "enter your course id" not in str(v)


def test_the_instructor_s_id_is_never_released(tmp_path):
    """With variants on, an id the instructor typed in the solution's id cell (and any lock on
    the cell) is replaced by ID_LINE in the release."""
    import nbformat

    from mlcourse_utils.grading.engine.release import finish_release_notebook

    def typed(nb):
        cell = nb.cells[_id_index(nb)]
        cell.source = 'STUDENT_ID = "s999"'
        cell.metadata.update(editable=False, deletable=False)

    source = _course(tmp_path, edit=typed)
    release = tmp_path / "mle.ipynb"
    shutil.copy(source, release)  # as nbgrader leaves the id cell: untouched
    finish_release_notebook(release, source, "mle")
    nb = nbformat.read(release, as_version=4)
    cell = nb.cells[_id_index(nb)]
    assert cell.source == ID_LINE
    assert cell.metadata == {"mlcourse": {"role": "student_id"}}
    assert nb.metadata["mlcourse"]["variants"] is True


def _no_id_cell(nb):
    del nb.cells[_id_index(nb)]


def _id_cell_after_first_task(nb):
    cell = nb.cells.pop(_id_index(nb))
    first = next(i for i, c in enumerate(nb.cells) if is_answer_cell(c))
    nb.cells.insert(first + 1, cell)


def _id_cell_after_setup(nb):
    i = _id_index(nb)
    cell = nb.cells.pop(i)
    nb.cells.insert(i + 1, cell)  # below the setup cell, which reads STUDENT_ID


def _two_id_cells(nb):
    import copy

    i = _id_index(nb)
    twin = copy.deepcopy(nb.cells[i])
    twin.id = "student-id-2"
    nb.cells.insert(i + 1, twin)


def _question_not_graded_by_hand(nb):
    question = next(iter(QUESTIONS["mle"]))
    cell = next(c for c in nb.cells if sup.grade_id(c) == question)
    cell.metadata["nbgrader"].update(grade=False, solution=False, grade_id="plain_text")


def _malformed_setting(nb):
    nb.metadata.setdefault("mlcourse", {})["variants"] = "no"


@pytest.mark.parametrize("edit,message", [
    (_malformed_setting, r"metadata\.mlcourse\.variants of solutions/mle/mle\.ipynb must be "
                         r"true or false, got 'no'"),
    (_no_id_cell, r"solutions/mle/mle\.ipynb has no id cell: add, as its first code cell, a code "
                  r"cell `STUDENT_ID = \"\"` with metadata"),
    (_id_cell_after_first_task, r"solutions/mle/mle\.ipynb: the id cell \(cell \d+\) is after the "
                                r"first task; it must be the first code cell"),
    (_id_cell_after_setup, r"solutions/mle/mle\.ipynb: the id cell \(cell \d+\) is after 1 other "
                           r"code cell; it must be the first code cell, before the setup"),
    (_two_id_cells, r"solutions/mle/mle\.ipynb has 2 id cells"),
    (_question_not_graded_by_hand, r"solutions/mle/mle\.ipynb: QUESTIONS\['mle'\] in "
                                   r"mlcourse_utils/grading/variants\.py names "
                                   + re.escape(next(iter(QUESTIONS["mle"])))
                                   + ", not a cell graded by hand"),
], ids=["malformed-setting", "no-id-cell", "after-first-task", "after-setup", "two-id-cells",
        "question-not-by-hand"])
def test_release_refuses_what_variants_cannot_use(tmp_path, edit, message):
    """A variants setting that is not true or false, a missing, doubled or misplaced id cell
    and a varying question that is not graded by hand are refused, naming the notebook, before
    anything runs (the solution is not executed: check=True would take minutes) and before
    exercises/ is written."""
    from mlcourse_utils.grading.engine.release import release

    _course(tmp_path, edit=edit)
    with pytest.raises(ValueError, match=message):
        release(["mle"], root=tmp_path, quiet=True)
    assert not (tmp_path / "exercises").exists()


def test_without_variants_the_id_cell_is_not_required(tmp_path):
    """With variants off a notebook may have no id cell (it then needs none); two are still
    one too many."""
    import nbformat

    from mlcourse_utils.grading.engine.release import id_cell_problem

    path = _course(tmp_path, edit=_no_id_cell)
    nb = nbformat.read(path, as_version=4)
    cells = [dict(c) for c in nb.cells]
    assert "has no id cell" in id_cell_problem(cells, "mle", "mle.ipynb", nb.metadata)
    off = {"mlcourse": {"variants": False}}
    assert id_cell_problem(cells, "mle", "mle.ipynb", off) is None
    nb = nbformat.read(sup.ROOT / "solutions" / "mle" / "mle.ipynb", as_version=4)
    _two_id_cells(nb)
    assert "has 2 id cells" in id_cell_problem([dict(c) for c in nb.cells], "mle", "mle.ipynb",
                                               off)


def test_the_readme_quotes_the_id_lines():
    """The README's instructor section and the changelog quote the id cell's code as
    grading/variants.py writes it, on and off (one place decides those lines)."""
    for path in ("README.md", "CHANGELOG.md"):
        text = " ".join((sup.ROOT / path).read_text(encoding="utf-8").split())
        for line in (ID_LINE, ID_LINE_OFF):
            assert f"`{line.partition('#')[0].strip()}`" in text, (path, line)
