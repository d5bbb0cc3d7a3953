"""Installs students make: the course wheel the website offers, and the full package.

The wheel (built as `mlcourse build` builds it for the Getting started page) serves a student:
`mlcourse check` and what the release notebooks import, without the chapters' reference code.
The full package (`pip install .` in a clone) adds the reference modules, without the website
and grading tools (the `book` and `grading` extras).
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import shutil
import subprocess
import sys
import zipfile

import pytest

import assignment_support as sup
from mlcourse_utils.book.wheel import WHEEL_DIR, build_student_wheel
from mlcourse_utils.course import student_version, student_wheel_name
from mlcourse_utils.grading.notebook import load_assignment

pytestmark = [pytest.mark.xdist_group("fresh-venv")]

#: The chapters' reference modules: never in the wheel the website offers.
CHAPTER_MODULES = ("mle", "bayes", "naive_bayes", "gda", "logistic", "information",
                   "regularization")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    return build_student_wheel(tmp_path_factory.mktemp("site") / WHEEL_DIR)


def test_getting_started_offers_the_wheel_mlcourse_build_writes(wheel):
    """The page's download is the file build_book writes (Sphinx fails the build when a
    download is missing), under the name the release notebooks' first cells give."""
    page = (sup.ROOT / "book" / "getting-started.md").read_text(encoding="utf-8")
    target = f"../{WHEEL_DIR.as_posix()}/{wheel.name}"
    assert f"{{download}}`{wheel.name} <{target}>`" in page
    assert wheel.name == student_wheel_name()
    assert student_wheel_name() in sup.source(sup.release_notebook("mle")["cells"][0])
    assert "book/getting-started" in (sup.ROOT / "_toc.yml").read_text()


def test_wheel_holds_the_student_tools_and_no_reference_code(wheel):
    """No chapter module, and no `def` of a function any assignment asks for, in any file."""
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        texts = {n: zf.read(n).decode("utf-8") for n in names if n.endswith(".py")}
    for needed in ("cli.py", "__main__.py", "datasets.py", "plotting.py", "grading/__init__.py",
                   "grading/checks.py", "grading/selfcheck.py", "grading/execute.py"):
        assert f"mlcourse_utils/{needed}" in names
    assert not [n for n in names if n.split("/")[-1][:-3] in CHAPTER_MODULES]
    tasks = {t for name in sup.assignments() for t in load_assignment(name, sup.ROOT).tasks}
    assert len(tasks) >= 40
    defined = {m for text in texts.values() for m in re.findall(r"^\s*def (\w+)\(", text, re.M)}
    assert not tasks & defined, sorted(tasks & defined)


def test_wheel_follows_the_wheel_spec_and_is_reproducible(wheel, tmp_path):
    """RECORD lists every other file with its sha256 (urlsafe base64, no padding) and size;
    the console script is declared; a second build gives the same bytes."""
    with zipfile.ZipFile(wheel) as zf:
        info = "mlcourse_utils-" + wheel.name.split("-")[1] + ".dist-info"
        record = zf.read(f"{info}/RECORD").decode().splitlines()
        rows = dict((line.split(",")[0], line.split(",", 1)[1]) for line in record)
        assert set(rows) == set(zf.namelist())
        for name in zf.namelist():
            if name == f"{info}/RECORD":
                assert rows[name] == ","
                continue
            data = zf.read(name)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            assert rows[name] == f"sha256={digest.decode()},{len(data)}"
        assert "mlcourse = mlcourse_utils.cli:main" in zf.read(f"{info}/entry_points.txt").decode()
        assert "Tag: py3-none-any" in zf.read(f"{info}/WHEEL").decode()
    again = build_student_wheel(tmp_path)
    assert again.read_bytes() == wheel.read_bytes()


def _venv(tmp, install):
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    proc = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet",
                           str(install)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return venv


@pytest.fixture(scope="module")
def wheel_venv(wheel, tmp_path_factory):
    """A fresh virtual environment with the course wheel the website offers."""
    return _venv(tmp_path_factory.mktemp("wheel"), wheel)


@pytest.mark.slow
def test_wheel_install_checks_a_release_notebook(wheel_venv, tmp_path):
    """A student's path: the stubs of a release notebook fail their visible tests in words,
    the solved notebook passes them (16 visible test cells and 10 hidden ones in mle), through both
    entry points."""
    folder = tmp_path / "Übung 1"
    stub = sup.write_submission(folder, "stub", "mle", nb=sup.release_notebook("mle"))
    proc = subprocess.run([str(wheel_venv / "bin" / "mlcourse"), "check", str(stub)],
                          capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "not implemented yet" in proc.stdout and " hidden " in proc.stdout
    solved = sup.write_submission(folder, "solved", "mle", nb=sup.make_submission(
        "mle", sup.solution_answers("mle")))
    proc = subprocess.run([str(wheel_venv / "bin" / "python"), "-m", "mlcourse_utils", "check",
                           "mle.ipynb"], capture_output=True, text=True, cwd=solved.parent)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "16 passed, 0 failed, 10 hidden" in proc.stdout and proc.stderr == ""


@pytest.mark.slow
def test_wheel_install_imports_what_notebooks_use_and_no_chapter(wheel_venv, tmp_path):
    """(Run outside the repository: `python -c` would import its mlcourse_utils folder.)"""
    python = str(wheel_venv / "bin" / "python")
    ok = subprocess.run([python, "-c", "import mlcourse_utils.grading, mlcourse_utils.datasets, "
                         "mlcourse_utils.plotting; from mlcourse_utils.datasets import "
                         "spam_ham_table; spam_ham_table()"], capture_output=True, text=True,
                        cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    for module in CHAPTER_MODULES:
        gone = subprocess.run([python, "-c", f"import mlcourse_utils.{module}"],
                              capture_output=True, text=True, cwd=tmp_path)
        assert gone.returncode == 1 and "ModuleNotFoundError" in gone.stderr, module


@pytest.mark.slow
def test_wheel_install_says_where_the_other_commands_are(wheel_venv, tmp_path):
    """Installed by pip: --version carries the wheel's label, --help lists `check` alone and
    names the others in one paragraph; each of them says where it is."""
    for args in (["grade", "mle", ".", "--out", "x"], ["build"], ["release"]):
        proc = subprocess.run([str(wheel_venv / "bin" / "mlcourse"), *args],
                              capture_output=True, text=True, cwd=tmp_path)
        assert proc.returncode == 2
        assert "install the full course package from the course repository" in proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1
    version = subprocess.run([str(wheel_venv / "bin" / "mlcourse"), "--version"],
                             capture_output=True, text=True, cwd=tmp_path)
    assert version.stdout == f"mlcourse {student_version()}\n"
    helped = subprocess.run([str(wheel_venv / "bin" / "mlcourse"), "--help"],
                            capture_output=True, text=True, cwd=tmp_path).stdout
    assert "    check " in helped and "    grade " not in helped
    assert "grading and instructor commands (build, pdf, release, grade," in \
        " ".join(helped.split())


@pytest.fixture(scope="module")
def full_venv(tmp_path_factory):
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


@pytest.mark.slow
def test_base_install_leaves_out_the_book_and_the_grader(full_venv):
    names = _installed(full_venv)
    assert {"numpy", "scipy", "matplotlib", "scikit-learn", "nbclient", "ipykernel"} <= names
    assert not names & {"jupyter-book", "sphinx", "nbgrader", "jupyterlab", "notebook"}


@pytest.mark.slow
def test_student_checks_a_release_notebook(full_venv, tmp_path):
    name = sup.assignments()[0]
    notebook = sup.write_submission(tmp_path, "me", name, nb=sup.release_notebook(name))
    proc = subprocess.run([str(full_venv / "bin" / "mlcourse"), "check", str(notebook)],
                          capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr  # the stubs fail their visible tests
    assert "not implemented yet" in proc.stdout and " hidden" in proc.stdout
    module = sup.variants(name).MODULE
    imported = subprocess.run([str(full_venv / "bin" / "python"), "-c",
                               f"from mlcourse_utils import {module}, datasets, plotting"],
                              capture_output=True, text=True, cwd=tmp_path)
    assert imported.returncode == 0, imported.stderr


@pytest.mark.slow
def test_tool_commands_say_what_to_install(full_venv, tmp_path):
    for args, extra in ((["build"], "book"), (["grade", "mle", ".", "--out", "x"], "grading")):
        proc = subprocess.run([str(full_venv / "bin" / "mlcourse"), *args],
                              capture_output=True, text=True, cwd=tmp_path)
        assert proc.returncode == 2
        assert f"pip install '.[{extra}]'" in proc.stderr  # installable from the repository
        assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
