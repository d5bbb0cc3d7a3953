"""Every assignment, graded as a teaching assistant grades it: `mlcourse grade` on a folder of
generated submissions (built from the release notebook by replacing answer cells by grade_id).

For each assignment with a source notebook and a `tests/submissions/NAME.py` module:
the solution scores full marks and the release zero; each plausible wrong answer loses exactly
the points its mistake deserves in its own task and nothing elsewhere; honest answers written
differently (loops, scipy, lists, warnings) keep full marks; shortcuts (another formula, the
naive unstable one, the chapter's printed function where a task needs one more step) earn
exactly their derived score, below full marks; every tamper pattern earns nothing;
broken submissions (invalid JSON, infinite loops, memory hogs, dying kernels) get zero with a
reason for what they could not earn while the batch finishes; submissions are never modified.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
import shutil
from pathlib import Path

import pytest

import assignment_support as sup
from mlcourse_utils.grading.notebook import (
    HIDDEN_BEGIN,
    HIDDEN_END,
    is_answer_cell,
    load_assignment,
    strip_hidden_tests,
)

ASSIGNMENTS = sup.assignments()
TIMEOUT = "6"

#: Answers in tests/submissions/NAME.py (HONEST, WRONG) that call what their task now forbids
#: (metadata.mlcourse.forbidden of the source notebook): that task earns nothing, and the
#: feedback names the call. {(assignment, HONEST label or "wrong_<task>_<k>"): {task: call}}.
FORBIDDEN_IN_VARIANTS = {
    ("mle", "scipy_and_lists"): {"mvn_mle": "numpy.cov",
                                 "bernoulli_log_likelihood": "scipy.stats.bernoulli"},
    ("mle", "wrong_mvn_mle_0"): {"mvn_mle": "numpy.cov"},
    # posterior_predictive_heads: a frozen distribution's method, seen only at run time.
    ("bayes", "scipy_and_lists"): {"model_posterior": "scipy.special.softmax",
                                   "beta_credible_interval": "scipy.stats.beta.interval",
                                   "posterior_predictive_heads": "scipy.stats.beta.mean"},
    ("bayes", "warnings_and_prints"): {"model_posterior": "scipy.special.logsumexp"},
    ("bayes", "wrong_model_posterior_2"): {"model_posterior": "scipy.special.logsumexp"},
    ("bayes", "wrong_model_posterior_3"): {"model_posterior": "scipy.special.logsumexp"},
    ("naive_bayes", "scipy_and_lists"): {
        "bernoulli_nb_log_joint": "scipy.special.xlogy",
        "predict_proba_from_log_joint": "scipy.special.softmax",
        "nb_linear_weights": "scipy.special.logit"},
    ("naive_bayes", "warnings_and_prints"): {
        "predict_proba_from_log_joint": "scipy.special.logsumexp"},
    ("naive_bayes", "wrong_bernoulli_nb_log_joint_2"): {
        "bernoulli_nb_log_joint": "scipy.special.xlogy"},
    ("gda", "loops"): {"fit_qda": "numpy.cov", "gda_log_joint": "scipy.stats.multivariate_normal"},
    ("gda", "scipy_and_lists"): {"fit_lda": "numpy.cov"},
    ("gda", "warnings_and_prints"): {"nearest_centroid_predict": "scipy.spatial.distance"},
    ("gda", "wrong_fit_qda_0"): {"fit_qda": "numpy.cov"},
    ("gda", "wrong_gda_log_joint_1"): {"gda_log_joint": "scipy.stats.multivariate_normal"},
    ("gda", "wrong_gda_log_joint_2"): {"gda_log_joint": "scipy.stats.multivariate_normal"},
    ("logistic_regression", "scipy_and_lists"): {
        "sigmoid": "scipy.special.log_expit", "logistic_nll": "scipy.special.log_expit",
        "logistic_nll_grad": "scipy.special.expit", "softmax": "scipy.special.softmax",
        "fit_softmax_regression": "scipy.special.log_softmax"},
    ("logistic_regression", "warnings_and_prints"): {"softmax": "scipy.special.logsumexp"},
    ("logistic_regression", "shortcut_sigmoid_scipy_expit"): {"sigmoid": "scipy.special.expit"},
    ("logistic_regression", "shortcut_fit_logistic_lbfgs"): {
        "fit_logistic_regression": "scipy.optimize"},
    ("logistic_regression", "shortcut_fit_softmax_lbfgs"): {
        "fit_softmax_regression": "scipy.optimize"},
    ("logistic_regression", "shortcut_fit_probit_lbfgs"): {
        "fit_probit_regression": "scipy.optimize"},
    ("information_theory", "scipy_and_numpy_types"): {
        "entropy": "scipy.stats.entropy", "cross_entropy": "scipy.special.xlogy",
        "kl_divergence": "scipy.special.rel_entr"},
}

pytestmark = pytest.mark.slow


def _tamper_cells(name, module, tasks):
    """Student code that beats plain nbgrader (verified with nbgrader 0.9.6); here it earns 0."""
    solutions = f"{sup.ROOT}/solutions/{name}/{name}.ipynb"
    return {
        "tamper_input_transformer": {"extra": [
            "get_ipython().input_transformers_post.append(lambda lines: ['pass\\n'])"]},
        "tamper_strip_asserts": {"extra": [
            "import ast\n"
            "class NoAsserts(ast.NodeTransformer):\n"
            "    def visit_Assert(self, node):\n"
            "        return ast.Pass()\n"
            "get_ipython().ast_transformers.append(NoAsserts())"]},
        "tamper_run_code": {"extra": [
            "from IPython.core.interactiveshell import InteractiveShell\n"
            "_original = InteractiveShell.run_code\n"
            "async def run_code(self, code_obj, result=None, *, async_=False):\n"
            "    try:\n"
            "        return await _original(self, code_obj, result, async_=async_)\n"
            "    except BaseException:\n"
            "        return False\n"
            "InteractiveShell.run_code = run_code"]},
        "tamper_numpy": {"extra": [
            "import builtins, numpy, numpy.testing\n"
            "numpy.isclose = lambda *a, **k: numpy.True_\n"
            "numpy.allclose = lambda *a, **k: True\n"
            "numpy.testing.assert_allclose = lambda *a, **k: None\n"
            "numpy.array_equal = lambda *a, **k: True\n"
            "builtins.abs = lambda x: 0"]},
        "tamper_reference": {"extra": [
            f"import mlcourse_utils.grading as g, mlcourse_utils.{module} as ref\n"
            "g.check_close = g.check_equal = g.check_against_reference = lambda *a, **k: None\n"
            + "".join(f"ref.{t} = lambda *a, **k: None\n" for t in tasks)]},
        "tamper_sys_modules": {"extra": [
            "import sys, types\n"
            "fake = types.ModuleType('mlcourse_utils.grading')\n"
            "fake.check_close = fake.check_equal = fake.check_against_reference = "
            "fake.check_raises = lambda *a, **k: None\n"
            "fake.Case = lambda *a, **k: None\n"
            "sys.modules['mlcourse_utils.grading'] = fake"]},
        "tamper_display": {"extra": [
            "ip = get_ipython()\n"
            "ip.display_formatter.formatters['text/plain'].for_type(object, "
            "lambda obj, p, cycle: p.text('3'))"]},
        "tamper_numpy_file": {"files": {
            "numpy.py": "def isclose(*a, **k):\n    return True\nallclose = isclose\n"}},
        "tamper_always_equal": {"answers": {t: (
            f"def {t}(*args, **kwargs):\n"
            "    class Anything(float):\n"
            "        def __eq__(self, other): return True\n"
            "        def __ne__(self, other): return False\n"
            "        def __bool__(self): return True\n"
            "        def __len__(self): return 2\n"
            "        def __iter__(self): return iter([self, self])\n"
            "        def __getitem__(self, i): return self\n"
            "    return Anything()\n") for t in tasks}},
        "tamper_read_hidden": {"answers": {t: (
            f"def {t}(*args, **kwargs):\n"
            "    import json, re\n"
            f"    for path in [{solutions!r}, '../../solutions/{name}/{name}.ipynb']:\n"
            "        try:\n"
            "            nb = json.load(open(path))\n"
            "        except OSError:\n"
            "            continue\n"
            "        for cell in nb['cells']:\n"
            "            src = ''.join(cell['source'])\n"
            f"            if src.startswith('def {t}('):\n"
            "                ns = {}\n"
            "                exec(src, ns)\n"
            f"                return ns['{t}'](*args, **kwargs)\n"
            "    raise RuntimeError('no hidden tests found')\n") for t in tasks}},
        "tamper_edit_tests": {"edit_tests": "pass"},
        "delegate_plain": {"answers": {t: (
            f"from mlcourse_utils.{module} import {t} as _reference\n"
            f"def {t}(*args, **kwargs):\n"
            "    return _reference(*args, **kwargs)\n") for t in tasks}},
        "delegate_disguised": {"answers": {t: (
            f"def {t}(*args, **kwargs):\n"
            "    import importlib\n"
            f"    mod = importlib.import_module('ml' + 'course' + '_utils.' + {module!r})\n"
            f"    return getattr(mod, {t!r})(*args, **kwargs)\n") for t in tasks}},
    }


def _digest(folder):
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(Path(folder).rglob("*")) if p.is_file()}


class Batch:
    """All generated submissions of one assignment, graded in one `mlcourse grade --jobs 2`."""

    def __init__(self, name, tmp):
        self.name = name
        self.assignment = load_assignment(name, sup.ROOT)
        self.tasks = self.assignment.tasks
        self.v = sup.variants(name)
        self.solution = sup.solution_answers(name)
        self.expected = {}   # student -> {task: expected score}
        self.subs = Path(tmp) / "submissions"
        self.out = Path(tmp) / "out"
        full = {t: self.assignment.task_max(t) for t in self.tasks}
        zero = {t: 0.0 for t in self.tasks}

        def add(student, expected, **kw):
            self.expected[student] = expected
            sup.write_submission(self.subs, student, name, **kw)

        add("solution", full, nb=sup.make_submission(name, self.solution))
        add("solution_nested", full, nb=sup.make_submission(name, self.solution), nested=True)
        # The solution under another student's id: flagged, graded as its roster id's, full.
        add("other_id", full, nb=sup.typed_id(sup.make_submission(name, self.solution),
                                              "solution"))
        add("release", zero, nb=sup.release_notebook(name))
        # Warnings never cost points: every answer starts with a line that makes numpy warn
        # (log 0, overflow, 0 * inf), as the np.where idiom does in its discarded branch.
        add("solution_warnings", full, nb=sup.make_submission(
            name, {t: sup.warning_first(src, t) for t, src in self.solution.items()}))
        def forbidden_zero(label):
            return dict.fromkeys(FORBIDDEN_IN_VARIANTS.get((name, label), {}), 0.0)

        for task, wrongs in self.v.WRONG.items():
            for k, (src, score) in enumerate(wrongs):
                add(f"wrong_{task}_{k}", {**full, task: float(score),
                                          **forbidden_zero(f"wrong_{task}_{k}")},
                    nb=sup.make_submission(name, {**self.solution, task: src}))
        for label, answers in self.v.HONEST.items():
            add(f"honest_{label}", {**full, **forbidden_zero(label)},
                nb=sup.make_submission(name, {**self.solution, **answers}))
        # Shortcuts through a forbidden call (by name, alias, getattr, or a name built at run
        # time): that task earns nothing, the others keep full marks.
        for task, shortcuts in getattr(self.v, "FORBIDDEN_SHORTCUTS", {}).items():
            for k, (src, *_call) in enumerate(shortcuts):
                add(f"forbidden_{task}_{k}", {**full, task: 0.0},
                    nb=sup.make_submission(name, {**self.solution, task: src}))
        for label, (task, src, score) in getattr(self.v, "SHORTCUTS", {}).items():
            add(f"shortcut_{label}", {**full, task: float(score),
                                      **forbidden_zero(f"shortcut_{label}")},
                nb=sup.make_submission(name, {**self.solution, task: src}))
        test_ids = [t.grade_id for t in self.assignment.tests]
        for student, spec in _tamper_cells(name, self.v.MODULE, self.tasks).items():
            replace = {g: spec["edit_tests"] for g in test_ids} if "edit_tests" in spec else None
            add(student, zero, nb=sup.make_submission(
                name, spec.get("answers"), extra_cells=spec.get("extra", ()), replace=replace),
                files=spec.get("files"))
        # Broken submissions and failures: they lose only what they could not earn.
        t0, t1, t2, t3 = (self.tasks * 4)[:4]
        add("invalid_json", zero, raw=b'{"cells": [ this is not json')
        (self.subs / "missing_notebook").mkdir()
        self.expected["missing_notebook"] = zero
        add("exit_cell", full, nb=sup.make_submission(
            name, self.solution, append_cells=["import os\nos._exit(0)"]))
        add("top_level_loop", full, nb=sup.make_submission(
            name, self.solution, append_cells=["while True:\n    pass"]))
        add("timeout_task", {**full, t0: 0.0}, nb=sup.make_submission(name, {
            **self.solution, t0: f"def {t0}(*args, **kwargs):\n    while True:\n        pass\n"}))
        add("memory_task", {**full, t1: 0.0}, nb=sup.make_submission(name, {
            **self.solution, t1: f"import numpy as np\ndef {t1}(*args, **kwargs):\n"
                                 "    return np.ones(50 * 2**30)\n"}))
        add("killed_task", {**full, t2: 0.0}, nb=sup.make_submission(name, {
            **self.solution, t2: f"import os, signal\ndef {t2}(*args, **kwargs):\n"
                                 "    os.kill(os.getpid(), signal.SIGKILL)\n"}))
        add("exit_task", {**full, t3: 0.0}, nb=sup.make_submission(name, {
            **self.solution, t3: f"import os\ndef {t3}(*args, **kwargs):\n    os._exit(3)\n"}))
        before = _digest(self.subs)
        self.proc = sup.grade(name, self.subs, self.out, "--jobs", "2", "--timeout", TIMEOUT,
                              "--memory", "2048")
        self.unchanged = before == _digest(self.subs)
        self.grades, self.task_scores = (sup.read_scores(self.out) if self.proc.returncode == 0
                                         else ({}, {}))

    def feedback(self, student):
        return (self.out / "feedback" / f"{student}.html").read_text()


@pytest.fixture
def batches(graded_batch):
    """``batches(name)``: the assignment's batch, graded once per test session."""
    return lambda name: graded_batch(f"assignment-{name}", lambda tmp: Batch(name, tmp))


def _group(*values, xfail=None):
    """One xdist group per assignment, so one worker grades each batch once; ``xfail``: the
    reason a case is expected to fail (strict: it fails the run once it passes)."""
    marks = [pytest.mark.xdist_group(f"grade-{values[0]}")]
    if xfail:
        marks.append(pytest.mark.xfail(strict=True, reason=xfail))
    return pytest.param(*values, marks=marks)


PER_ASSIGNMENT = [_group(name) for name in ASSIGNMENTS]


def students(kind):
    """(assignment, student) pairs for one kind of generated submission, for parametrize."""
    out = []
    for name in ASSIGNMENTS:
        v = sup.variants(name)
        tasks = load_assignment(name, sup.ROOT).tasks
        if kind == "wrong":
            out += [(name, f"wrong_{t}_{k}") for t, ws in v.WRONG.items() for k in range(len(ws))]
        elif kind == "honest":
            out += [(name, f"honest_{label}") for label in v.HONEST]
        elif kind == "forbidden":
            # (answer, call[, why the sandbox's watch misses it yet: expected to fail])
            out += [(name, f"forbidden_{t}_{k}", *entry[2:3])
                    for t, shortcuts in getattr(v, "FORBIDDEN_SHORTCUTS", {}).items()
                    for k, entry in enumerate(shortcuts)]
            out += [(name, label if label.startswith(("wrong_", "shortcut_")) else
                     f"honest_{label}") for (n, label) in FORBIDDEN_IN_VARIANTS if n == name]
        elif kind == "shortcut":
            out += [(name, f"shortcut_{label}") for label in getattr(v, "SHORTCUTS", {})]
        elif kind == "tamper":
            out += [(name, s) for s in _tamper_cells(name, v.MODULE, tasks)]
        elif kind == "failure":
            out += [(name, s) for s in ("invalid_json", "missing_notebook", "exit_cell",
                                        "top_level_loop", "timeout_task", "memory_task",
                                        "killed_task", "exit_task")]
    return [_group(name, student, xfail=gap[0] if gap else None)
            for name, student, *gap in out]


@pytest.mark.parametrize("name", PER_ASSIGNMENT)
def test_batch_finishes_and_leaves_submissions_untouched(batches, name):
    b = batches(name)
    assert b.proc.returncode == 0, b.proc.stderr[-2000:]
    assert b.unchanged, "mlcourse grade modified the submissions folder"
    assert set(b.grades) == set(b.expected), "every student needs a row in grades.csv"
    for student in b.expected:
        assert set(b.task_scores[student]) == set(b.tasks), student
        assert (b.out / "feedback" / f"{student}.html").is_file()


@pytest.mark.parametrize("name", PER_ASSIGNMENT)
def test_gradebook_holds_the_autograded_scores(batches, name, monkeypatch):
    """out/gradebook.db is an nbgrader gradebook: same scores, manual cells still to grade."""
    import os
    import sys

    from nbgrader.api import Gradebook

    b = batches(name)
    # nbgrader runs `alembic` from PATH to check the database schema.
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    manual = sum(points for _, points in b.assignment.manual)
    with Gradebook(f"sqlite:///{b.out / 'gradebook.db'}") as gb:
        for student, (score, top) in b.grades.items():
            submission = gb.find_submission(name, student)
            assert submission.score == pytest.approx(score)
            assert submission.max_score == pytest.approx(top + manual)
            assert submission.needs_manual_grade == bool(b.assignment.manual)


@pytest.mark.parametrize("name", PER_ASSIGNMENT)
def test_solution_full_marks_and_release_zero(batches, name):
    b = batches(name)
    total = b.assignment.max_score
    assert total > 0
    assert b.grades["solution"] == (total, total)
    assert b.grades["solution_nested"] == (total, total)
    assert b.grades["release"] == (0.0, total)


@pytest.mark.parametrize("name", PER_ASSIGNMENT)
def test_honest_students_run_their_own_variant_cleanly(batches, name):
    """Every honest notebook (the solution, honest variants: full marks, each typed its own
    id, each its own roster id) ran every cell without an error (the setup's variant import
    and ``V = variant(...)`` included; the stubs of code cells graded by hand, which these
    submissions leave as released, raise NotImplementedError) and earned no note about
    mlcourse_utils; its id is recorded as its own. The solution handed in as other_id but
    carrying the id "solution" keeps full marks and is flagged in the run's summary and its
    feedback."""
    import html

    b = batches(name)
    students = json.loads((b.out / "results.json").read_text())["students"]
    honest = ["solution", "solution_nested", *[s for s in b.expected if s.startswith("honest_")]]
    for student in honest:
        r = students[student]
        # (a code cell graded by hand is left as released, a stub: NotImplementedError)
        errors = [e for e in r["cell_errors"] if not e[1].startswith("NotImplementedError")]
        assert errors == [], (student, r["cell_errors"])
        assert not [n for n in r["notes"] if "mlcourse_utils" in n], (student, r["notes"])
        assert r["id_check"] == {"typed": student, "matches": True, "problem": "",
                                 "detail": ""}, student
    assert b.grades["other_id"] == b.grades["solution"]
    assert students["other_id"]["id_check"]["problem"] == "other"
    assert "other_id (typed solution)" in b.proc.stderr
    page = html.unescape(b.feedback("other_id"))
    assert "STUDENT_ID says solution but it was handed in as other_id" in page
    assert "STUDENT_ID" not in html.unescape(b.feedback("solution"))


@pytest.mark.parametrize("name", PER_ASSIGNMENT)
def test_warnings_in_every_answer_cost_nothing(batches, name):
    """The solution with every autograded answer starting with a line that makes numpy warn
    (divide by zero, overflow, invalid value) keeps full marks in every task, and the warnings
    are in its results (so each answer did warn while its tests ran)."""
    b = batches(name)
    _assert_expected(b, "solution_warnings")
    entry = json.loads((b.out / "results.json").read_text())["students"]["solution_warnings"]
    warned = {t["task"] for t in entry["tests"]
              if any(w.startswith("RuntimeWarning: divide by zero") for w in t["warnings"])}
    assert warned == set(b.tasks)
    assert "warnings (they cost no points)" in b.feedback("solution_warnings")


def _assert_expected(b, student):
    got = {t: s for t, (s, _) in b.task_scores[student].items()}
    assert got == b.expected[student], f"{student}: {b.feedback(student)[-3000:]}"
    assert b.grades[student][0] == sum(b.expected[student].values())


@pytest.mark.parametrize("name,student", students("wrong"))
def test_wrong_answer_loses_only_its_task(batches, name, student):
    b = batches(name)
    _assert_expected(b, student)
    task = max((t for t in b.tasks if student.startswith(f"wrong_{t}_")), key=len)
    assert b.task_scores[student][task][0] < b.task_scores[student][task][1]
    assert "should" in b.feedback(student) or "expected" in b.feedback(student)


@pytest.mark.parametrize("name,student", students("honest"))
def test_honest_variants_keep_full_marks(batches, name, student):
    _assert_expected(batches(name), student)


def _forbidden_calls(name, student):
    """{task: the call its answer makes, which the task forbids} for a generated student."""
    if student.startswith("forbidden_"):
        v = sup.variants(name)
        task = max((t for t in v.FORBIDDEN_SHORTCUTS if student.startswith(f"forbidden_{t}_")),
                   key=len)
        return {task: v.FORBIDDEN_SHORTCUTS[task][int(student.rsplit("_", 1)[1])][1]}
    label = student if student.startswith(("wrong_", "shortcut_")) else \
        student.removeprefix("honest_")
    return FORBIDDEN_IN_VARIANTS[(name, label)]


@pytest.mark.parametrize("name,student", students("forbidden"))
def test_forbidden_call_costs_its_task_and_is_named(batches, name, student):
    """A forbidden call gives its task zero (others untouched); the feedback and results.json
    name the call."""
    b = batches(name)
    _assert_expected(b, student)
    entry = json.loads((b.out / "results.json").read_text())["students"][student]
    for task, call in _forbidden_calls(name, student).items():
        assert call in entry["reasons"][task], entry["reasons"]
        assert "forbidden call" in entry["reasons"][task]
        assert call in b.feedback(student)


@pytest.mark.parametrize("name,student", students("shortcut"))
def test_shortcut_scores_below_full_marks(batches, name, student):
    """An answer that avoids the task's own step (another formula, the naive unstable one, the
    chapter's printed function for a task that needs one more step) gets exactly the score
    tests/submissions/NAME.py derives for it, and less than the task's full marks."""
    b = batches(name)
    task, _, score = sup.variants(name).SHORTCUTS[student.removeprefix("shortcut_")]
    assert score < b.assignment.task_max(task), f"{student} is expected to earn full marks"
    _assert_expected(b, student)


@pytest.mark.parametrize("name,student", students("tamper"))
def test_tampering_earns_nothing(batches, name, student):
    b = batches(name)
    _assert_expected(b, student)
    if student.startswith("delegate"):
        assert "reference implementation" in b.feedback(student)


@pytest.mark.parametrize("name,student", students("failure"))
def test_failures_lose_only_what_they_could_not_earn(batches, name, student):
    b = batches(name)
    _assert_expected(b, student)
    fb = b.feedback(student)
    reasons = {"invalid_json": "could not be read", "missing_notebook": "no notebook",
               "timeout_task": "timed out", "memory_task": "memory",
               "killed_task": "died", "exit_task": "died"}
    if student in reasons:
        assert reasons[student] in fb


@pytest.mark.parametrize("name", PER_ASSIGNMENT)
def test_feedback_never_shows_hidden_tests(batches, name):
    b = batches(name)
    hidden_lines = set()
    for t in b.assignment.tests:
        visible = set(strip_hidden_tests(t.source).splitlines())
        hidden_lines |= {line.strip() for line in t.source.splitlines()
                         if line not in visible and len(line.strip()) > 25
                         and line.strip() not in (HIDDEN_BEGIN, HIDDEN_END)}
    assert hidden_lines
    for html_file in (b.out / "feedback").glob("*.html"):
        text = html_file.read_text()
        assert HIDDEN_BEGIN not in text
        leaked = [line for line in hidden_lines if line in text]
        assert not leaked, f"{html_file.name} shows hidden test code: {leaked[:2]}"


@pytest.mark.parametrize("name", ASSIGNMENTS)
def test_source_notebook_passes_its_own_tests(name, tmp_path):
    """The solution notebook passes its own tests, visible and hidden, run in a plain kernel as
    `mlcourse check` runs them, also with every answer starting with a line that makes numpy
    warn: no test cell makes a warning an error (tests judge values)."""
    from mlcourse_utils.grading.engine.release import run_notebook

    folder = tmp_path / name
    shutil.copytree(sup.ROOT / "solutions" / name, folder)
    nb = sup.load(folder / f"{name}.ipynb")
    for cell in nb["cells"]:
        if is_answer_cell(cell):
            cell["source"] = sup.warning_first(sup.source(cell), sup.grade_id(cell))
    (folder / f"{name}.ipynb").write_text(json.dumps(nb))
    assert run_notebook(folder / f"{name}.ipynb") == []


@pytest.mark.parametrize("name", ASSIGNMENTS)
def test_exercises_equal_a_fresh_generation(tmp_path, name):
    """exercises/NAME is exactly what nbgrader generates from solutions/NAME today."""
    from mlcourse_utils.grading.engine.release import release

    shutil.copytree(sup.ROOT / "solutions" / name, tmp_path / "solutions" / name)
    shutil.copy(sup.ROOT / "nbgrader_config.py", tmp_path)
    release([name], root=tmp_path, check=False, quiet=True)
    generated = tmp_path / "exercises"
    fresh = sorted(p.relative_to(generated) for p in generated.rglob("*")
                   if p.is_file())
    committed = sorted(p.relative_to(sup.ROOT / "exercises") for p in
                       (sup.ROOT / "exercises" / name).rglob("*") if p.is_file())
    assert fresh == committed
    for rel in fresh:
        a, b = tmp_path / "exercises" / rel, sup.ROOT / "exercises" / rel
        if rel.suffix == ".ipynb":
            assert json.loads(a.read_text()) == json.loads(b.read_text()), \
                f"exercises/{rel} is stale: run `mlcourse release {name}`"
        else:
            assert a.read_bytes() == b.read_bytes()


@pytest.mark.parametrize("name", ASSIGNMENTS)
def test_release_has_stubs_and_no_solutions(name):
    nb = sup.release_notebook(name)
    text = json.dumps(nb)
    assert "BEGIN SOLUTION" not in text and "BEGIN HIDDEN TESTS" not in text
    tasks = load_assignment(name, sup.ROOT).tasks
    answers = {sup.grade_id(c): sup.source(c) for c in nb["cells"] if sup.grade_id(c) in tasks}
    assert set(answers) == set(tasks)
    for task, src in answers.items():
        assert src.lstrip().startswith(f"def {task}("), task
        assert "raise NotImplementedError()" in src
    assert all(not c.get("outputs") for c in nb["cells"] if c["cell_type"] == "code")


def test_check_command_reports_visible_tests(tmp_path):
    """`mlcourse check` passes the solution's visible tests and fails the release's stubs in
    words; emptied hidden-test cells show as hidden and never count as passed."""
    import subprocess

    name = ASSIGNMENTS[0]
    visible = load_assignment(name, sup.ROOT).visible_sources.values()
    n_hidden = sum(len(ast.parse(v).body) <= 1 for v in visible)  # a docstring, no test code
    assert n_hidden > 0
    solved = sup.write_submission(tmp_path, "me", name, nb=sup.make_submission(
        name, sup.solution_answers(name)))
    ok = subprocess.run([sup.MLCOURSE, "check", str(solved)], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert f" 0 failed, {n_hidden} hidden" in ok.stdout
    assert "TCP" not in ok.stdout + ok.stderr and "WARNING" not in ok.stderr
    stub = sup.write_submission(tmp_path, "stub", name, nb=sup.release_notebook(name))
    bad = subprocess.run([sup.MLCOURSE, "check", str(stub)], capture_output=True, text=True)
    assert bad.returncode == 1
    assert len(re.findall(r"^  hidden +test_", bad.stdout, flags=re.M)) == n_hidden
    assert "0 passed" in bad.stdout and "not implemented yet" in bad.stdout
    assert not re.search(r"^  ok +test_", bad.stdout, flags=re.M)
    missing = subprocess.run([sup.MLCOURSE, "check", str(tmp_path / "nope.ipynb")],
                             capture_output=True, text=True)
    assert missing.returncode == 1 and "does not exist" in missing.stderr


def test_plain_nbgrader_generates_in_a_fresh_clone(tmp_path):
    """`nbgrader generate_assignment NAME` works with the committed config and no _build/."""
    import os
    import subprocess
    import sys

    name = ASSIGNMENTS[0]
    shutil.copytree(sup.ROOT / "solutions" / name, tmp_path / "solutions" / name)
    shutil.copy(sup.ROOT / "nbgrader_config.py", tmp_path)
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    proc = subprocess.run([str(Path(sys.executable).with_name("nbgrader")), "generate_assignment",
                           name], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert (tmp_path / "exercises" / name / f"{name}.ipynb").is_file()
