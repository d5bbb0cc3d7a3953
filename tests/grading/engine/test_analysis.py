"""Reading a submitted notebook in a limited child (grading/engine/analysis.py): what it learns, and
what it refuses within its limits.
"""

from __future__ import annotations

import json
import time

import pytest

from mlcourse_utils.grading.engine import analysis


def _notebook(path, cells, extra=""):
    """A version-4 notebook file of ``cells`` (dicts); ``extra`` is JSON text added at the top."""
    body = json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    path.write_text("{" + extra + body[1:] if extra else body)
    return path


def _code(source, **nbgrader):
    cell = {"cell_type": "code", "metadata": {}, "source": source, "outputs": [],
            "execution_count": None}
    if nbgrader:
        cell["metadata"]["nbgrader"] = nbgrader
    return cell


@pytest.fixture(scope="module")
def demo_assignment():
    from mlcourse_utils.grading.notebook import Assignment, TestCell

    return Assignment("demo", "demo.ipynb", ["f", "g"],
                      [TestCell("test_f", "f", 1.0, "assert f(1) == 1", "f on 1"),
                       TestCell("test_g", "g", 1.0, "assert g(1) == 2", "g on 1")],
                      [], [], {"test_f": "assert f(1) == 1", "test_g": "assert g(1) == 2"})


def test_analyse_returns_the_code_cells_and_what_they_show(tmp_path, demo_assignment):
    """By hand: cells 0, 1 and 4 run (the test cells do not), g delegates, cell 4 tampers, and
    test_g was edited."""
    path = _notebook(tmp_path / "nb.ipynb", [
        _code("def f(x):\n    return x", grade_id="f", solution=True, grade=False),
        _code("from mlcourse_utils.mle import g", grade_id="g", solution=True, grade=False),
        _code("assert f(1) == 1", grade_id="test_f", grade=True, solution=False, points=1),
        _code("pass", grade_id="test_g", grade=True, solution=False, points=1),
        _code("import sys\nsys.modules['numpy'] = None\nimport scipy.special"),
        {"cell_type": "markdown", "metadata": {}, "source": "text"},
    ])
    found = analysis.analyse(path.read_bytes(), demo_assignment, timeout=60,
                             watch=["scipy.special"])
    assert [(i, t) for i, _, t in found.cells] == [(0, "f"), (1, "g"), (4, None)]
    assert found.cells[0][1] == "def f(x):\n    return x"
    assert found.delegated == {"g"}
    assert found.uses == {1: ["mlcourse_utils"], 4: ["scipy.special"]}
    assert any("test cell test_g was changed" in n for n in found.notes)
    assert any("cell 5 replaces modules in sys.modules" in n for n in found.notes)


def test_analyse_refuses_what_it_cannot_read_within_its_limits(tmp_path, demo_assignment):
    """Too many cells, JSON nested 100 000 deep, 280 MB of small lists against a 100 MB limit
    (5 million lists of 56 bytes each), and ten 190 kB cells to parse (about a second each)
    against half a second: each is the student's reason, never an exception of the grader."""
    many = _notebook(tmp_path / "many.ipynb", [_code("x = 1")] * (analysis.MAX_CELLS + 1))
    with pytest.raises(analysis.AnalysisError, match=f"at most {analysis.MAX_CELLS}"):
        analysis.analyse(many.read_bytes(), demo_assignment, timeout=60)
    deep = _notebook(tmp_path / "deep.ipynb", [], '"x": ' + "[" * 100_000 + "]" * 100_000 + ", ")
    with pytest.raises(analysis.AnalysisError, match="nested too deeply"):
        analysis.analyse(deep.read_bytes(), demo_assignment, timeout=60)
    swell = _notebook(tmp_path / "swell.ipynb", [], '"x": [' + "[]," * 5_000_000 + "[]], ")
    with pytest.raises(analysis.AnalysisError, match="more than 100 MB"):
        analysis.analyse(swell.read_bytes(), demo_assignment, timeout=60, memory_mb=100)
    slow = _notebook(tmp_path / "slow.ipynb", [_code("x = [" + "1," * 95_000 + "]")] * 10)
    with pytest.raises(analysis.AnalysisError, match="longer than 0.5 s"):
        analysis.analyse(slow.read_bytes(), demo_assignment, timeout=0.5)

    with pytest.raises(analysis.AnalysisError, match="total grading time"):
        analysis.analyse(slow.read_bytes(), demo_assignment, timeout=60,
                         deadline=time.monotonic() + 0.5)
    # ... and the reader still serves the next student.
    ok = _notebook(tmp_path / "ok.ipynb", [_code("x = 1")])
    assert len(analysis.analyse(ok.read_bytes(), demo_assignment, timeout=60).cells) == 1


def test_pages_that_cannot_be_made_cost_only_the_pages(tmp_path, demo_assignment):
    """A derivation whose Markdown takes seconds to render, given 0.3 s: its page shows the
    reason in place of the answer, no half-written copy is left, and reading the code for
    grading is unaffected; an ordinary derivation renders (by hand: its text, escaped)."""
    import dataclasses

    a = dataclasses.replace(demo_assignment, manual=[("deriv", 2.0)])
    derivation = {"cell_type": "markdown", "source": "[" * 30_000 + "*a " * 20_000,
                  "metadata": {"nbgrader": {"grade_id": "deriv", "grade": True,
                                            "solution": True, "points": 2}}}
    slow = _notebook(tmp_path / "slow.ipynb", [_code("def f(x):\n    return x",
                                                     grade_id="f", solution=True), derivation])
    assert [t for _, _, t in analysis.analyse(slow.read_bytes(), a, timeout=60).cells] == ["f"]
    problem = analysis.render_pages(slow.read_bytes(), a, timeout=0.3,
                                    copy_to=tmp_path / "copy.ipynb", manual_dir=tmp_path / "pages")
    assert "longer than 0.3 s" in problem
    assert "No answer shown: reading the notebook took longer" in \
        (tmp_path / "pages" / "0.html").read_text()
    assert not (tmp_path / "copy.ipynb").exists() and not (tmp_path / "copy.ipynb.part").exists()
    derivation["source"] = "We get $a < b$ and <b>bold</b>."
    fine = _notebook(tmp_path / "fine.ipynb", [derivation])
    assert analysis.render_pages(fine.read_bytes(), a, timeout=60,
                                 manual_dir=tmp_path / "ok") is None
    page = (tmp_path / "ok" / "0.html").read_text()
    assert r'<span class="math">\(a &lt; b\)</span>' in page and "&lt;b&gt;bold" in page


# ------------------------------------------------------------------ the id cell and the variant


def _id_cell(source):
    return {"cell_type": "code", "metadata": {"mlcourse": {"role": "student_id"}},
            "source": source, "outputs": [], "execution_count": None}


@pytest.mark.parametrize("source,bound,expected", [
    # the release's line: one line, the roster's id in its place (repr: a Python literal)
    ('STUDENT_ID = "s7"  # your course id', "s2", "STUDENT_ID = 's2'"),
    # other code of the cell keeps its lines (cell line 2 is still line 2)
    ('STUDENT_ID = "s7"\nimport math', "s2", "STUDENT_ID = 's2'\nimport math"),
    ('STUDENT_ID = (\n    "s7")\nx = 1', "s2", "STUDENT_ID = 's2'\n\nx = 1"),
    ('STUDENT_ID: str = "s7"', None, "STUDENT_ID = None"),
    # what cannot be read that way becomes the one line: the typed value never runs
    ('STUDENT_ID = "s7"; import os', "s2", "STUDENT_ID = 's2'"),
    ('STUDENT_ID = __import__("os").getcwd(', "s2", "STUDENT_ID = 's2'"),
    ('%time\nSTUDENT_ID = "s7"', "s2", "STUDENT_ID = 's2'"),
    ('STUDENT_ID = "' + "x" * 300_000 + '"', "s2", "STUDENT_ID = 's2'"),
    # an odd roster id is still one literal
    ('STUDENT_ID = ""', "o'brien\"\\", "STUDENT_ID = 'o\\'brien\"\\\\'"),
])
def test_the_id_cell_binds_the_roster_id(source, bound, expected):
    """Expected sources written by hand; each is valid Python that binds ``bound``."""
    import ast

    got = analysis.id_cell_source(source, bound)
    assert got == expected
    namespace = {}
    exec(compile(ast.parse(got), "<id>", "exec"), namespace)  # (our own text)
    assert namespace["STUDENT_ID"] == bound


def test_only_the_exact_import_line_is_bound_to_the_sandbox_variant():
    """By hand: the release's line (outer spaces aside, indentation kept) becomes the binding;
    an edited import stays what it was (and meets the decoy)."""
    line = "from mlcourse_utils.grading import variant"
    assert analysis.without_import_line(f"import numpy as np\n{line}\nV = 1") == \
        "import numpy as np\nvariant = _mlcourse_variant\nV = 1"
    assert analysis.without_import_line(f"if True:\n    {line}  ") == \
        "if True:\n    variant = _mlcourse_variant"
    for edited in (f"{line} as v", "from mlcourse_utils.grading import variant, hidden_rng",
                   f"{line}; import mlcourse_utils.mle"):
        assert analysis.without_import_line(edited) == edited


def test_analyse_runs_the_roster_id_and_reads_the_typed_one(tmp_path, demo_assignment):
    """The id cell (cell 1) runs the roster's id, the setup's import line is bound to the
    sandbox's variant outside answer cells only (no note, no delegation); the answer cell g
    that imports it still delegates. The typed id is read, normalised (NFC, case folded)."""
    line = "from mlcourse_utils.grading import variant"
    path = _notebook(tmp_path / "nb.ipynb", [
        _id_cell('STUDENT_ID = " S7 "'),
        _code(f"import math\n{line}\nV = variant('mle', STUDENT_ID)"),
        _code("def f(x):\n    return x", grade_id="f", solution=True, grade=False),
        _code(f"{line}\ndef g(x):\n    return 2", grade_id="g", solution=True, grade=False),
    ])
    found = analysis.analyse(path.read_bytes(), demo_assignment, timeout=60, student_id="s2")
    sources = {i: s for i, s, _ in found.cells}
    assert sources[0] == "STUDENT_ID = 's2'"
    assert sources[1] == "import math\nvariant = _mlcourse_variant\nV = variant('mle', STUDENT_ID)"
    assert sources[3].startswith(line)
    assert found.delegated == {"g"}
    assert not any("imports mlcourse_utils" in n for n in found.notes), found.notes
    assert (found.typed_id, found.id_problem, found.has_id_cell) == ("s7", None, True)


@pytest.mark.parametrize("cells,typed,problem", [
    ([_code("x = 1")], None, "no id cell"),
    ([_id_cell('STUDENT_ID = ""')], None, "STUDENT_ID is empty"),
    ([_id_cell('STUDENT_ID = "<script>alert(1)</script>"')], None, "characters"),
    ([_id_cell('STUDENT_ID = "' + "<b>" * 400_000 + '"')], None, "1200015 characters"),
    ([_id_cell('STUDENT_ID = "' + "a" * 65 + '"')], None, "65 characters"),
])
def test_analyse_says_why_the_typed_id_is_not_one(tmp_path, demo_assignment, cells, typed,
                                                  problem):
    """A missing, empty, hostile (markup, 1.2 MB) or too long id: no id, the reason bounded."""
    path = _notebook(tmp_path / "nb.ipynb", cells)
    found = analysis.analyse(path.read_bytes(), demo_assignment, timeout=60, student_id="s2")
    assert found.typed_id is typed
    assert problem in found.id_problem and len(found.id_problem) <= 300
    assert found.cells[0][1] == ("x = 1" if found.has_id_cell is False else "STUDENT_ID = 's2'")
