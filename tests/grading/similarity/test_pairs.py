"""`mlcourse similarity`: disguised copies are flagged, honest answers and the release stub are
not, and hostile submissions never crash the report (nothing here runs student code)."""

from __future__ import annotations

import ast
import csv
import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from similarity_support import disguise, random_answer

import assignment_support as sup
from mlcourse_utils.course import REFERENCE_MODULES
from mlcourse_utils.grading.engine.references import (
    reference_module,
    reference_source,
    references,
    release_stubs,
)
from mlcourse_utils.grading.notebook import load_assignment
from mlcourse_utils.grading.similarity import pairs as sim
from mlcourse_utils.grading.similarity.report import CSV_COLUMNS, write_csv, write_report

ASSIGNMENTS = sup.assignments()


def analyse(name, answers, **options):
    """The report on a class given as {student: {task: source}}; missing tasks are the stub."""
    assignment = load_assignment(name, sup.ROOT)
    stubs = release_stubs(name, sup.ROOT)
    full = {s: {t: a.get(t, stubs[t]) for t in assignment.tasks} for s, a in answers.items()}
    return sim.analyse(name, assignment.tasks, full, stubs,
                       references(name, assignment.tasks, sup.ROOT), **options)


def flagged(report):
    return {(m.student, m.other, m.task) for m in report.matches}


def body_lines(source):
    """Lines spanned by the statements of the answer's function (docstring left out)."""
    tree = ast.parse(source)
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef))
    body = [s for s in fn.body
            if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    return body[-1].end_lineno - body[0].lineno + 1


# ---------------------------------------------------------------- planted copies

@pytest.mark.parametrize("name", ASSIGNMENTS)
def test_disguised_copies_are_flagged_against_each_other(name):
    """A notebook copied with every name changed, statements reordered, reformatted and new
    comments: every task of five lines or more is flagged, and so is the whole notebook."""
    assignment = load_assignment(name, sup.ROOT)
    original = sup.solution_answers(name)
    copy = {t: disguise(original[t], keep=[t], seed=7) for t in assignment.tasks}
    assert all(copy[t] != original[t] for t in assignment.tasks)
    report = analyse(name, {"original": original, "=copy": copy})
    found = flagged(report)
    for task in assignment.tasks:
        if body_lines(original[task]) >= 5:
            assert ("=copy", "original", task) in found, task
    assert ("=copy", "original", sim.ALL_TASKS) in found


@pytest.mark.parametrize("name", ASSIGNMENTS)
def test_disguised_copies_of_the_reference_and_the_solution_are_flagged(name):
    assignment = load_assignment(name, sup.ROOT)
    module = reference_module(name)
    solution = sup.solution_answers(name)
    # Tasks beyond the chapter have no function in the package (their reference is
    # instructor-only): a copy of the package covers the others.
    public = [t for t in assignment.tasks if reference_source(module, t)]
    answers = {
        "from_package": {t: disguise(reference_source(module, t), keep=[t], seed=3)
                         for t in public},
        "from_solution": {t: disguise(solution[t], keep=[t], seed=4) for t in assignment.tasks},
    }
    found = flagged(analyse(name, answers))
    for student in answers:
        assert (student, "reference", sim.ALL_TASKS) in found, student
        for task in answers[student]:
            if body_lines(solution[task]) >= 5:
                assert (student, "reference", task) in found, (student, task)


def test_copying_many_short_answers_adds_up():
    """mle's answers are mostly a few lines: too short to flag one by one, not all together."""
    solution = sup.solution_answers("mle")
    short = [t for t in solution if body_lines(solution[t]) <= 3]
    assert len(short) >= 3
    copy = {t: disguise(solution[t], keep=[t], seed=11) for t in short}
    found = flagged(analyse("mle", {"copier": copy}))
    assert not any(("copier", "reference", t) in found for t in short)
    assert ("copier", "reference", sim.ALL_TASKS) in found


def test_a_reordered_helper_function_does_not_hide_the_reference():
    """sequence_likelihood's reference calls a helper; a copy with both, helper last."""
    module = reference_module("mle")
    source = reference_source(module, "sequence_likelihood")
    assert "def _count_flips" in source
    found = flagged(analyse("mle", {"s": {"sequence_likelihood": disguise(
        source, keep=["sequence_likelihood"], seed=5)}}))
    assert ("s", "reference", "sequence_likelihood") in found


# ---------------------------------------------------------------- honest answers

@pytest.mark.parametrize("name", ASSIGNMENTS)
def test_honest_variants_are_not_flagged(name):
    """tests/submissions' HONEST answers: written independently of the reference, all correct."""
    answers = {f"honest_{label}": dict(task_answers)
               for label, task_answers in sup.variants(name).HONEST.items()}
    report = analyse(name, answers)
    assert report.matches == [], [(m.student, m.other, m.task, m.score) for m in report.matches]


DIFFERENT_REGRESSIONS = [
    # normal equations with an explicit column of ones
    "def linear_regression_mle(X, y):\n"
    "    X = np.asarray(X, dtype=float)\n"
    "    y = np.asarray(y, dtype=float)\n"
    "    A = np.hstack([X, np.ones((X.shape[0], 1))])\n"
    "    coef = np.linalg.solve(A.T @ A, A.T @ y)\n"
    "    w, b = coef[:-1], coef[-1]\n"
    "    sigma2 = np.mean((y - A @ coef) ** 2)\n"
    "    return w, float(b), float(sigma2)\n",
    # covariances of the centred data
    "def linear_regression_mle(X, y):\n"
    "    X = np.array(X, float)\n"
    "    y = np.array(y, float)\n"
    "    mx = X.mean(0)\n"
    "    my = y.mean()\n"
    "    Sxx = (X - mx).T @ (X - mx)\n"
    "    Sxy = (X - mx).T @ (y - my)\n"
    "    w = np.linalg.pinv(Sxx) @ Sxy\n"
    "    intercept = my - mx.dot(w)\n"
    "    res = y - (X.dot(w) + intercept)\n"
    "    return w, float(intercept), float(res.dot(res) / len(y))\n",
    # a QR factorisation, loops for the residual
    "import numpy as np\n"
    "def linear_regression_mle(X, y):\n"
    "    design = np.column_stack((np.ones(len(y)), np.asarray(X, dtype=float)))\n"
    "    q, r = np.linalg.qr(design)\n"
    "    theta = np.linalg.solve(r, q.T @ np.asarray(y, dtype=float))\n"
    "    total = 0.0\n"
    "    for row, target in zip(design, y):\n"
    "        total += (target - row @ theta) ** 2\n"
    "    return theta[1:], float(theta[0]), total / len(y)\n",
]


def test_different_correct_implementations_are_not_flagged():
    answers = {f"student{i}": {"linear_regression_mle": source}
               for i, source in enumerate(DIFFERENT_REGRESSIONS)}
    report = analyse("mle", answers)
    assert report.matches == []


@pytest.mark.parametrize("name", ASSIGNMENTS)
def test_the_release_stub_alone_never_matches(name):
    """Five students who hand in the release notebook untouched: nothing is even compared."""
    report = analyse(name, {f"student{i}": {} for i in range(5)})
    assert report.matches == [] and report.candidates == 0


def test_code_most_of_the_class_shares_is_not_evidence():
    """An idiom in every answer of a large class is ignored between students; the same code
    in a small class (below the common-code limit) is evidence. A planted copy still shows."""
    common = ("    x = np.asarray(x, dtype=float)\n"
              "    y = np.asarray(y, dtype=float)\n"
              "    if x.ndim != 1 or y.shape != x.shape:\n"
              "        raise ValueError('x and y must be 1-D arrays of the same length')\n"
              "    mask = np.isfinite(x) & np.isfinite(y)\n"
              "    x, y = x[mask], y[mask]\n")

    def answer(seed):
        head, _, rest = random_answer("mvn_mle", ["x", "y"], seed).partition("\n")
        return {"mvn_mle": f"{head}\n{common}{rest}"}

    large = {f"s{i:02d}": answer(i) for i in range(40)}
    large["s07"] = {"mvn_mle": "def mvn_mle(x, y):\n" + common + (
        "    n = x.shape[0]\n"
        "    mu = np.array([x.sum() / n, y.sum() / n])\n"
        "    d = np.stack([x - mu[0], y - mu[1]])\n"
        "    return mu, d @ d.T / n\n")}
    large["copy"] = {"mvn_mle": disguise(large["s07"]["mvn_mle"], keep=["mvn_mle"], seed=1)}
    found = flagged(analyse("mle", large, min_common=10, common_fraction=0.2))
    assert found == {("copy", "s07", "mvn_mle")}
    # With a lower threshold the shared block flags three students of a small class, and
    # none of the same three in the large class.
    trio = {("s01", "s02", "mvn_mle"), ("s01", "s03", "mvn_mle"), ("s02", "s03", "mvn_mle")}
    small = {s: large[s] for s in ("s01", "s02", "s03")}
    options = {"min_common": 10, "common_fraction": 0.2, "threshold": 0.5}
    assert flagged(analyse("mle", small, **options)) == trio
    assert not flagged(analyse("mle", large, **options)) & trio


def test_the_report_is_the_same_every_time(tmp_path):
    solution = sup.solution_answers("gda")
    answers = {"a": solution, "b": {t: disguise(s, keep=[t], seed=2) for t, s in solution.items()},
               "c": dict(sup.variants("gda").HONEST["loops"])}
    texts = []
    for k in range(2):
        write_csv(analyse("gda", answers), tmp_path / f"{k}.csv")
        texts.append((tmp_path / f"{k}.csv").read_bytes())
    assert texts[0] == texts[1] and texts[0].count(b"\n") > 5


# ---------------------------------------------------------------- references

@pytest.mark.parametrize("name", ASSIGNMENTS)
def test_every_task_has_its_reference_function(name):
    """Every task has a reference: a package function, or (a task beyond the chapter) a function
    of the instructor-only solutions/NAME/instructor_reference.py, never both."""
    assert REFERENCE_MODULES[name] == sup.variants(name).MODULE
    module = reference_module(name)
    instructor = sup.ROOT / "solutions" / name / "instructor_reference.py"
    private = ({node.name for node in ast.parse(instructor.read_text()).body
                if isinstance(node, ast.FunctionDef)} if instructor.is_file() else set())
    for task in load_assignment(name, sup.ROOT).tasks:
        source = reference_source(module, task)
        if task in private:
            assert source is None, f"{task} is instructor-only but the package has it"
        else:
            assert source and f"def {task}(" in source


# ---------------------------------------------------------------- the command

def run_similarity(*args):
    return subprocess.run([sup.MLCOURSE, "similarity", *map(str, args)], capture_output=True,
                          text=True, cwd=sup.ROOT)


def _write(folder, student, nb=None, raw=None):
    target = Path(os.fsdecode(os.path.join(os.fsencode(folder), os.fsencode(student))))
    target.mkdir(parents=True, exist_ok=True)
    path = target / "gda.ipynb"
    if raw is not None:
        path.write_bytes(raw)
    else:
        path.write_text(json.dumps(nb), encoding="utf-8", errors="surrogatepass")


def test_a_hostile_class_gets_a_report(tmp_path):
    """Formula-like and markup folder names, broken notebooks, huge, undecodable and
    syntactically wrong cells, links: the report is written, escaped and neutralised."""
    name = "gda"
    solution = sup.solution_answers(name)
    subs = tmp_path / "subs"
    injected = solution["fit_qda"] + "\n# </div><script>alert('code')</script>\n"
    _write(subs, '=HYPERLINK("evil")', sup.make_submission(name, {"fit_qda": injected}))
    copy = {"fit_qda": disguise(solution["fit_qda"], keep=["fit_qda"], seed=1)}
    _write(subs, "<img src=x onerror=alert(1)>", sup.make_submission(name, copy))
    _write(subs, "+SUM(A1)", sup.make_submission(name, {
        "fit_lda": "def fit_lda(X, y):\n    return [[[" + "x, " * 100_000 + "\n",  # huge, broken
        "regularized_cov": "def regularized_cov(S, eps):\n    return '\udcff' + S\n"}))
    _write(subs, "-1", sup.make_submission(name, {
        "fit_lda": "def fit_lda(X, y):\n" + "    X = X + 1\n" * 30_000}))
    _write(subs, "@bad_json", raw=b'{"cells": [ not json')
    _write(subs, b"latin1_\xe9", raw=b'{"nbformat": 4, "cells": [{"source": "\xe9\xff"}]}')
    _write(subs, "deep", raw=b"[" * 100_000 + b"]" * 100_000)
    nb = sup.make_submission(name, {"fit_qda": solution["fit_qda"]})
    for cell in nb["cells"]:
        if sup.grade_id(cell) == "fit_lda":
            cell["source"] = 12345
        if sup.grade_id(cell) == "gda_log_joint":
            cell["metadata"]["nbgrader"]["grade_id"] = ["not", "a", "string"]
    _write(subs, "odd_types", nb)
    _write(subs, "stub_only", sup.release_notebook(name))
    (subs / "linked").symlink_to(subs / "odd_types")
    out = tmp_path / "out"
    proc = run_similarity(name, subs, "--out", out)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr

    with open(out / "similarity.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == CSV_COLUMNS
    assert all(not cell.startswith(("=", "+", "-", "@")) for row in rows[1:] for cell in row)
    pairs = {(frozenset(r[:2]), r[2]) for r in rows[1:]}
    assert (frozenset({"'=HYPERLINK(\"evil\")", "<img src=x onerror=alert(1)>"}),
            "fit_qda") in pairs
    assert (frozenset({"<img src=x onerror=alert(1)>", "reference"}), "fit_qda") in pairs

    page = (out / "similarity.html").read_text(encoding="utf-8")
    assert "<script" not in page.lower() and "<img" not in page.lower()
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
    assert "&lt;/div&gt;&lt;script&gt;alert(&#39;code&#39;)" in page
    assert "never changes a grade" in page
    assert re.search(r'class="r0"', page)               # matching lines are coloured
    for student in ("@bad_json", "deep", "linked"):     # not read, with a reason
        assert re.search(rf"<li>{re.escape(student)}: [^<]+</li>", page), student
    assert "latin1_\\xe9" in page
    assert "not valid Python" in page


def test_the_page_works_offline(tmp_path):
    solution = sup.solution_answers("gda")
    report = analyse("gda", {"a": solution,
                             "b": {t: disguise(s, keep=[t], seed=1) for t, s in solution.items()}})
    _, html = write_report(report, tmp_path)
    page = html.read_text(encoding="utf-8")
    assert report.matches
    # No external assets: every link is a fragment of the page itself.
    for attr in re.findall(r'(?:src|href)\s*=\s*"([^"]*)"', page, flags=re.I):
        assert attr.startswith("#"), attr
    assert not re.search(r"<(script|link|img|iframe|object)\b", page, flags=re.I)
    assert "@import" not in page and "url(" not in page


def test_the_command_explains_its_errors(tmp_path):
    (tmp_path / "subs").mkdir()
    unknown = run_similarity("no_such_assignment", tmp_path / "subs", "--out", tmp_path / "o")
    assert unknown.returncode == 1 and "no_such_assignment" in unknown.stderr
    assert "Traceback" not in unknown.stderr
    missing = run_similarity("mle", tmp_path / "nothing_here", "--out", tmp_path / "o")
    assert missing.returncode == 1 and "does not exist" in missing.stderr
    bad = run_similarity("mle", tmp_path / "subs", "--out", tmp_path / "o", "--threshold", "0")
    assert bad.returncode == 2 and "--threshold" in bad.stderr


def test_csv_quotes_cells_a_spreadsheet_would_run(tmp_path):
    report = sim.Report("x", ["t"], [], [sim.Match("=1+1", "-2", "student", "@t", 1.0, 3, 40),
                                         sim.Match("+A1", "reference", "reference", "t", 0.9, 2,
                                                   31)], {}, [], [], {})
    write_csv(report, tmp_path / "s.csv")
    with open(tmp_path / "s.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    assert rows[1][:3] == ["'=1+1", "'-2", "'@t"] and rows[2][:2] == ["'+A1", "reference"]
    assert rows[1][3:] == ["1.00", "3", "40", "student"]


def test_notebooks_are_read_in_a_limited_child_never_in_this_process(tmp_path, monkeypatch):
    """Decoding a student's JSON costs far more than its size: similarity reads each notebook
    as grading does, in a child with time and memory limits. With this process's own reader
    broken the class is still read, and a notebook that swells past the child's memory is only
    its own student's reason."""
    from mlcourse_utils.grading import notebook
    from mlcourse_utils.grading.engine import analysis
    from mlcourse_utils.grading.similarity import pairs

    def not_here(*args, **kwargs):
        raise AssertionError("a student's notebook was decoded in the grader's process")

    monkeypatch.setattr(notebook, "read_notebook_cells", not_here)
    monkeypatch.setattr(analysis, "MEMORY_MB", 100)  # (the child's limit above its start)
    name = "gda"
    solution = sup.solution_answers(name)
    subs = tmp_path / "subs"
    _write(subs, "honest", sup.make_submission(name, {"fit_qda": solution["fit_qda"]}))
    _write(subs, "swell", raw=b'{"cells": [], "x": [' + b"[]," * 3_000_000 + b"[]]}")
    answers, unread = pairs.read_answers(name, subs, f"{name}.ipynb", ["fit_qda"])
    assert answers == {"honest": {"fit_qda": solution["fit_qda"]}}
    assert list(unread) == ["swell"] and "more than 100 MB" in unread["swell"]
