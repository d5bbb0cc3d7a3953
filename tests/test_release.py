"""The generated first cell of every release notebook: points per task, install and check.

(That exercises/ equals a fresh `mlcourse release`, and that each solution passes its own tests,
is tested in tests/test_assignments.py.)
"""

from __future__ import annotations

import json

import assignment_support as sup
from mlcourse_utils.book.wheel import student_wheel_name
from mlcourse_utils.grading.release import HEADER_ID, header_cell


def _header(name):
    cell = sup.release_notebook(name)["cells"][0]
    assert cell["id"] == HEADER_ID and cell["cell_type"] == "markdown"
    return sup.source(cell)


def test_mle_header_lists_the_points_of_each_task():
    """mle's six tasks each have a visible test (1 point), an edge-case test (1) and a hidden
    test (2), read off the solution notebook's cell metadata; the derivation is worth 3 points
    and the interpretation 2, graded by hand."""
    text = _header("mle")
    assert text.startswith("**`mle.ipynb`: 24 autograded points in 6 functions, 5 graded by hand.")
    for task in ("sequence_likelihood", "bernoulli_mle", "bernoulli_log_likelihood",
                 "gaussian_mle", "mvn_mle", "linear_regression_mle"):
        assert f"| `{task}` | 4 | 2 |" in text
    assert "| derivation_exponential_mle (by hand) | 3 | |" in text
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


def test_instructor_references_stay_out_of_the_release(tmp_path):
    """solutions/NAME/instructor_reference.py, the reference of the hidden tests of the tasks
    beyond the chapter, reaches neither exercises/ (nbgrader copies every other file of the
    assignment folder; nbgrader_config.py ignores this one) nor the package students install."""
    import shutil

    from mlcourse_utils.grading.release import release

    references = sorted((sup.ROOT / "solutions").glob("*/instructor_reference.py"))
    assert {p.parent.name for p in references} >= {"logistic_regression", "information_theory",
                                                   "ridge_lasso"}
    for name in sup.assignments():
        assert not (sup.ROOT / "exercises" / name / "instructor_reference.py").exists(), name
    assert not list((sup.ROOT / "mlcourse_utils").rglob("instructor_reference*"))
    name = "ridge_lasso"
    shutil.copytree(sup.ROOT / "solutions" / name, tmp_path / "solutions" / name)
    shutil.copy(sup.ROOT / "nbgrader_config.py", tmp_path)
    release([name], root=tmp_path, check=False, quiet=True)
    released = {p.name for p in (tmp_path / "exercises" / name).iterdir()}
    assert released == {f"{name}.ipynb"}
    text = (tmp_path / "exercises" / name / f"{name}.ipynb").read_text()
    assert "instructor_reference" not in text and "iref." not in text
