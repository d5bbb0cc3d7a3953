"""Building submissions for the assignment tests: start from the release notebook, replace
answer cells by grade_id, add cells or files, and grade a whole folder with `mlcourse grade`."""

from __future__ import annotations

import ast
import copy
import csv
import functools
import importlib
import importlib.util
import itertools
import json
import subprocess
import sys
from pathlib import Path

from mlcourse_utils.grading.notebook import cell_source, is_answer_cell, strip_nbgrader_markers
from mlcourse_utils.grading.notebook import grade_id as notebook_grade_id

ROOT = Path(__file__).resolve().parent.parent
MLCOURSE = str(Path(sys.executable).with_name("mlcourse"))

#: Why a shortcut in FORBIDDEN_SHORTCUTS (its name built at run time, so that only the sandbox's
#: watch can see it) is not caught: tests/test_assignments.py marks it xfail(strict=True), so a
#: watch that learns to catch it says so. A class compiled in C or Cython has no Python code to
#: change, and its constructor is not a function a stand-in could replace everywhere.
WATCH_GAP_EXTENSION = "watch gap: classes compiled in C or Cython, e.g. scipy.spatial.cKDTree"


def assignments():
    """Assignments that have a source notebook and a test-data module in tests/submissions."""
    return sorted(p.name for p in (ROOT / "solutions").iterdir()
                  if (p / f"{p.name}.ipynb").is_file()
                  and (ROOT / "tests" / "submissions" / f"{p.name}.py").is_file())


def variants(name):
    return importlib.import_module(f"submissions.{name}")


def load(path):
    return json.loads(Path(path).read_text())


source = cell_source
grade_id = notebook_grade_id


@functools.cache
def instructor_reference(name):
    """``solutions/NAME/instructor_reference.py`` as a module (the hidden tests' references and
    ``variant_numbers``), loaded once per test process by its path, as the grader loads it."""
    path = ROOT / "solutions" / name / "instructor_reference.py"
    spec = importlib.util.spec_from_file_location(f"{name}_instructor_reference_test", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def every_variant_params(question):
    """Every parameter combination of a question that varies (a ``variants.Question``), as
    dicts in the table's order: what ``Question.count`` counts."""
    names = list(question.params)
    return [dict(zip(names, values, strict=True))
            for values in itertools.product(*question.params.values())]


def cell_by_id(notebook, cell_id):
    """The source of the cell with id ``cell_id`` of a notebook (a dict, as :func:`load` reads
    it)."""
    return cell_source(next(c for c in notebook["cells"] if c.get("id") == cell_id))


def solution_answers(name):
    """{task: answer source} from the instructor notebook, nbgrader markers removed."""
    nb = load(ROOT / "solutions" / name / f"{name}.ipynb")
    return {grade_id(cell): strip_nbgrader_markers(source(cell))
            for cell in nb["cells"] if is_answer_cell(cell)}


#: Two lines that make numpy warn (divide by zero, overflow, invalid value), as the np.where
#: idiom does in the branch it throws away; :func:`warning_first` puts them first in a function.
WARNING_LINES = ("import numpy as _np",
                 "_np.where(True, 0.0, _np.log(_np.zeros(2)) * _np.exp(_np.full(2, 1e3)) * 0.0)")


def warning_first(source, name):
    """``source`` with :data:`WARNING_LINES` as the first statements of its function ``name``:
    every call of it warns three times before it computes its answer."""
    func = next(n for n in ast.parse(source).body
                if isinstance(n, ast.FunctionDef) and n.name == name)
    first = func.body[0]
    lines = source.splitlines(keepends=True)
    lines.insert(first.lineno - 1, "".join(f"{' ' * first.col_offset}{line}\n"
                                           for line in WARNING_LINES))
    return "".join(lines)


def release_notebook(name):
    return load(ROOT / "exercises" / name / f"{name}.ipynb")


def make_submission(name, answers=None, extra_cells=(), append_cells=(), replace=None):
    """A release notebook with the given answer cells replaced (others stay stubs).

    ``extra_cells`` are code cells inserted right after the first code cell, ``append_cells``
    at the end; ``replace`` maps any grade_id to a new source (test cells included).
    """
    nb = release_notebook(name)
    changes = dict(answers or {})
    changes.update(replace or {})
    first_code = None
    for i, cell in enumerate(nb["cells"]):
        gid = grade_id(cell)
        if gid in changes:
            cell["source"] = changes[gid]
        if first_code is None and cell["cell_type"] == "code":
            first_code = i
    new = [{"cell_type": "code", "execution_count": None, "id": f"extra-{k}", "metadata": {},
            "outputs": [], "source": src} for k, src in enumerate(extra_cells)]
    nb["cells"][first_code + 1:first_code + 1] = new
    nb["cells"] += [{"cell_type": "code", "execution_count": None, "id": f"appended-{k}",
                     "metadata": {}, "outputs": [], "source": src}
                    for k, src in enumerate(append_cells)]
    return nb


def typed_id(nb, student_id):
    """``nb`` with its id cell (left as the release wrote it) holding ``student_id``, as a
    student types it; ``nb`` itself when it has no such cell."""
    from mlcourse_utils.grading.notebook import is_id_cell
    from mlcourse_utils.grading.variants import ID_LINE

    for cell in nb["cells"]:
        source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        if is_id_cell(cell) and source == ID_LINE:
            cell["source"] = f"STUDENT_ID = {json.dumps(student_id)}"
            break
    return nb


def write_submission(folder, student, name, nb=None, raw=None, files=None, nested=False):
    """``folder/student[/name]/name.ipynb`` holding ``nb`` (its id cell, if left as released,
    filled with ``student``: honest students type their own id) or the bytes ``raw``."""
    target = Path(folder) / student / (name if nested else "")
    target.mkdir(parents=True, exist_ok=True)
    path = target / f"{name}.ipynb"
    if raw is not None:
        path.write_bytes(raw)
    else:
        path.write_text(json.dumps(typed_id(copy.deepcopy(nb), student), indent=1))
    for fname, content in (files or {}).items():
        (target / fname).write_text(content)
    return path


def grade(name, submissions, out, *extra):
    """Run `mlcourse grade` as a teaching assistant would; returns the CompletedProcess."""
    return subprocess.run([MLCOURSE, "grade", name, str(submissions), "--out", str(out), *extra],
                          capture_output=True, text=True, cwd=ROOT)


def read_scores(out):
    with open(Path(out) / "grades.csv") as fh:
        grades = {r["student_id"]: (float(r["score"]), float(r["max_score"]))
                  for r in csv.DictReader(fh)}
    tasks = {}
    with open(Path(out) / "task_scores.csv") as fh:
        for r in csv.DictReader(fh):
            tasks.setdefault(r["student_id"], {})[r["task"]] = (float(r["score"]),
                                                                float(r["max_score"]))
    return grades, tasks


#: A Canvas gradebook export of two students (alice 101, bob 102), as the LMS tests' roster.
CANVAS_ROSTER = """\
Student,ID,SIS User ID,SIS Login ID,Section,Email
"Smith-Jones, Alice",101,S-1,alice,A,alice@uni.example
"Brown, Bob",102,S-2,bob,A,bob@uni.example
"""


def export_rows(write_graded, tmp_path, fmt, roster=CANVAS_ROSTER, **options):
    """Export a graded folder of alice (1 point) and bob (0.5) for the LMS ``fmt`` with
    ``roster``; return the grade file's rows and the export's report."""
    from mlcourse_utils.grading.lms import export

    graded = tmp_path / "graded"
    if not graded.exists():
        write_graded(graded, {"alice": 1.0, "bob": 0.5})
    (tmp_path / "roster.csv").write_text(roster)
    target = tmp_path / f"{fmt}.csv"
    report = export.export([graded], fmt, tmp_path / "roster.csv", target, **options)
    with open(target, newline="", encoding="utf-8") as fh:
        return list(csv.reader(fh)), report
