"""The registry of LMSes (grading/lms/__init__.py), and that only grading/lms/ names one.

Outside ``grading/lms/`` no code of the package spells an LMS's name: every string literal
(f-string parts too) is scanned with ``ast``; docstrings may mention them, as may comments.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from mlcourse_utils.grading import lms
from mlcourse_utils.grading.lms.canvas import Canvas
from mlcourse_utils.grading.lms.moodle import Moodle

PACKAGE = Path(__file__).resolve().parents[3] / "mlcourse_utils"
#: The names of the LMSes the package ships, in any case.
NAMES = re.compile(r"canvas|moodle", re.IGNORECASE)


def lms_literals(package: Path) -> list[str]:
    """``"path:line: literal"`` for every string literal under ``package`` outside
    ``grading/lms/`` that names Canvas or Moodle (docstrings apart)."""
    found = []
    for path in sorted(package.rglob("*.py")):
        if path.relative_to(package).parts[:2] == ("grading", "lms"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                      if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef,
                                           ast.AsyncFunctionDef))
                      and node.body and isinstance(node.body[0], ast.Expr)
                      and isinstance(node.body[0].value, ast.Constant)}
        for node in ast.walk(tree):
            if (isinstance(node, ast.Constant) and isinstance(node.value, str)
                    and id(node) not in docstrings and NAMES.search(node.value)):
                found.append(f"{path.relative_to(package)}:{node.lineno}: {node.value[:60]!r}")
    return found


def test_no_lms_is_named_outside_lms():
    found = lms_literals(PACKAGE)
    assert not found, "ask the registry (grading/lms) instead:\n" + "\n".join(found)


def test_the_scan_finds_names_in_literals_and_f_strings_not_in_docstrings(tmp_path):
    (tmp_path / "grading" / "lms").mkdir(parents=True)
    (tmp_path / "grading" / "lms" / "x.py").write_text('A = "canvas"\n')
    (tmp_path / "m.py").write_text(
        '"""Canvas and Moodle in the docstring."""\n'
        'def f(who):\n    """Moodle here too."""\n'
        '    return who == "Canvas" or f"{who} MOODLE file"  # canvas in a comment\n')
    assert [hit.split(":")[:2] for hit in lms_literals(tmp_path)] == [["m.py", "4"], ["m.py", "4"]]


def test_the_registry_knows_canvas_and_moodle_by_name():
    assert lms.names() == ["canvas", "moodle"] and list(lms.LMS_BY_NAME) == lms.names()
    assert isinstance(lms.get("canvas"), Canvas) and isinstance(lms.get("moodle"), Moodle)
    assert [x.name for x in lms.every()] == ["canvas", "moodle"]
    assert lms.labels() == "Canvas or Moodle" and lms.labels("and", {"moodle"}) == "Moodle"
    # Moodle's names are read first: "a_1_2_assignsubmission_file_x" fits both.
    assert lms.by_precedence()[0].name == "moodle"
    assert lms.by_precedence()[0].parse(["a_1_2_assignsubmission_file_x"]).user_id == "2"


def test_an_unknown_name_is_an_error_naming_the_option_and_the_choices():
    with pytest.raises(ValueError, match=r"^--lms must be one of canvas, moodle, not 'bb'$"):
        lms.get("bb", "--lms")


@pytest.mark.parametrize("name", ["Canvas", "two words", ""])
def test_a_name_is_a_lower_case_word(name):
    bad = type("Bad", (Canvas,), {"name": name})()
    with pytest.raises(ValueError, match="lower-case word"):
        lms.register(bad)
    assert lms.names() == ["canvas", "moodle"]
