"""The course's catalogue (mlcourse_utils/course.py): assignments, reference modules, the root.

Expected values come from the repository itself, read independently of the module under test
(the assignment folders in solutions/, the reference modules' files).
"""

from __future__ import annotations

import importlib

import pytest

import assignment_support as sup
import mlcourse_utils
from mlcourse_utils import course


def test_the_catalogue_lists_every_assignment_of_the_course_once():
    on_disk = {p.name for p in (sup.ROOT / "solutions").iterdir()
               if (p / f"{p.name}.ipynb").is_file()}
    assert set(course.ASSIGNMENTS) == on_disk
    assert len(set(course.ASSIGNMENTS)) == len(course.ASSIGNMENTS)
    assert set(course.REFERENCE_MODULES) == set(course.ASSIGNMENTS)


@pytest.mark.parametrize("name", sorted(course.REFERENCE_MODULES))
def test_every_reference_module_exists(name):
    module = importlib.import_module(f"mlcourse_utils.{course.reference_module_name(name)}")
    assert (sup.ROOT / "mlcourse_utils" / f"{module.__name__.rsplit('.', 1)[1]}.py").is_file()


def test_a_missing_mapping_is_an_error_naming_the_table():
    with pytest.raises(ValueError, match=r"'no_such'.*REFERENCE_MODULES"):
        course.reference_module_name("no_such")
    with pytest.raises(TypeError, match="assignment"):
        course.reference_module_name(None)


def test_the_student_wheel_s_version_and_file_name_carry_the_student_label():
    """The wheel file name of PEP 427 (name-version-python-abi-platform), written by hand."""
    assert course.student_version("1.2.3") == "1.2.3+student"
    assert course.student_wheel_name("1.2.3") == "mlcourse_utils-1.2.3+student-py3-none-any.whl"
    assert course.student_version() == f"{mlcourse_utils.__version__}+student"


def test_course_order_puts_unknown_names_last():
    assert course.course_order(["zz", "gda", "mle", "aa"]) == ["mle", "gda", "aa", "zz"]


def test_the_course_root_is_found_upward_and_else_falls_back(tmp_path):
    (tmp_path / "solutions").mkdir()
    (tmp_path / "nbgrader_config.py").write_text("")
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    assert course.find_course_root(deep) == tmp_path.resolve()
    # Outside any course folder: the repository of this (editable) install.
    assert course.find_course_root(tmp_path.parent) == sup.ROOT.resolve() == course.ROOT


def _course(folder):
    (folder / "solutions").mkdir(parents=True)
    (folder / "nbgrader_config.py").write_text("")
    return folder


def test_the_environment_names_the_course_before_the_working_folder(tmp_path, monkeypatch):
    """MLCOURSE_COURSE (what `--course DIR` sets) wins over the folder a command runs in."""
    named, here = _course(tmp_path / "named"), _course(tmp_path / "here")
    monkeypatch.chdir(here)
    assert course.find_course_root() == here.resolve()
    monkeypatch.setenv(course.COURSE_ENV, str(named))
    assert course.find_course_root() == named.resolve()
    assert course.find_course_root(here) == here.resolve()  # an explicit start is searched


def test_a_named_folder_that_is_no_course_says_so(tmp_path, monkeypatch):
    monkeypatch.setenv(course.COURSE_ENV, str(tmp_path))
    with pytest.raises(FileNotFoundError, match=r"MLCOURSE_COURSE .* is not a course folder"):
        course.find_course_root()
    monkeypatch.setenv(course.COURSE_ENV, str(tmp_path / "missing"))
    with pytest.raises(FileNotFoundError, match="no such folder"):
        course.find_course_root()


def test_outside_every_course_the_error_says_how_to_name_one(tmp_path, monkeypatch):
    """As in a non-editable install, where the package's own folder is no course."""
    monkeypatch.setattr(course, "ROOT", tmp_path / "site-packages")
    monkeypatch.delenv(course.COURSE_ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileNotFoundError, match=r"--course DIR .*MLCOURSE_COURSE"):
        course.find_course_root()
