"""The base install serves a student: reference modules, data sets and `mlcourse check`, without
the website and grading tools (which are the `book` and `grading` extras)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

import assignment_support as sup

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("fresh-venv")]


@pytest.fixture(scope="module")
def student_venv(tmp_path_factory):
    """A fresh virtual environment with `pip install <this repository>` (no extras)."""
    tmp = tmp_path_factory.mktemp("student")
    # A copy of what the package is built from: pip builds in the source tree (build/, egg-info),
    # which must not be the repository.
    source = tmp / "source"
    shutil.copytree(sup.ROOT / "mlcourse_utils", source / "mlcourse_utils",
                    ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(sup.ROOT / name, source / name)
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    proc = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet",
                           str(source)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return venv


def _installed(venv):
    out = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "list", "--format", "json"],
                         capture_output=True, text=True, check=True).stdout
    return {p["name"].lower().replace("_", "-") for p in json.loads(out)}


def test_base_install_leaves_out_the_book_and_the_grader(student_venv):
    names = _installed(student_venv)
    assert {"numpy", "scipy", "matplotlib", "scikit-learn", "nbclient", "ipykernel"} <= names
    assert not names & {"jupyter-book", "sphinx", "nbgrader", "jupyterlab", "notebook"}


def test_student_checks_a_release_notebook(student_venv, tmp_path):
    name = sup.assignments()[0]
    notebook = sup.write_submission(tmp_path, "me", name, nb=sup.release_notebook(name))
    proc = subprocess.run([str(student_venv / "bin" / "mlcourse"), "check", str(notebook)],
                          capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr  # the stubs fail their visible tests
    assert "not implemented yet" in proc.stdout and " hidden" in proc.stdout
    module = sup.variants(name).MODULE
    imported = subprocess.run([str(student_venv / "bin" / "python"), "-c",
                               f"from mlcourse_utils import {module}, datasets, plotting"],
                              capture_output=True, text=True)
    assert imported.returncode == 0, imported.stderr


def test_tool_commands_say_what_to_install(student_venv, tmp_path):
    for args, extra in ((["build"], "book"), (["grade", "mle", ".", "--out", "x"], "grading")):
        proc = subprocess.run([str(student_venv / "bin" / "mlcourse"), *args],
                              capture_output=True, text=True, cwd=tmp_path)
        assert proc.returncode == 2
        assert f"mlcourse_utils[{extra}]" in proc.stderr
        assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
