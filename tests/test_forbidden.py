"""Forbidden calls per task (metadata.mlcourse.forbidden of a source notebook).

By name: the scan of submitted code resolves aliases, getattr, __import__, importlib and
vars(...) strings where they are constants (mlcourse_utils/grading/names.py). At run time: the
sandbox replaces each forbidden function by a stand-in that reports its call through an audit
hook on the reply pipe (runner.py), so a name built at run time is caught too, and attempts to
disable that watch cost every task with forbidden calls. The release header lists the forbidden
calls and what each test checks; `mlcourse check` warns. Whole batches (one shortcut per task,
with the score it must get) are graded in tests/test_assignments.py from
tests/submissions/NAME.py's FORBIDDEN_SHORTCUTS.
"""

from __future__ import annotations

import pytest

import assignment_support as sup
from mlcourse_utils.grading import names, notebook, release, selfcheck
from mlcourse_utils.grading.reasons import classify_reason

ASSIGNMENTS = sup.assignments()


# ---------------------------------------------------------------- by name

@pytest.mark.parametrize("source", [
    "from scipy.special import expit as e\ndef f(t):\n    return e(t)",
    "import scipy.special as ss\ndef f(t):\n    return ss.expit(t)",
    "from scipy import special\nf = special.expit",
    "import scipy\ndef f(t):\n    return getattr(scipy.special, 'ex' + 'pit')(t)",
    "import scipy.special\ng = getattr(scipy.special, 'tipxe'[::-1])",
    "import scipy.special\ng = getattr(scipy.special, ''.join(['ex', 'pit']))",
    "import scipy.special\ng = getattr(scipy.special, f'{\"ex\"}pit')",
    "m = __import__('scipy.special', fromlist=['expit'])\ng = m.expit",
    "g = __import__('scipy.special').special.expit",
    "import importlib\nm = importlib.import_module('scipy.' + 'special')\ng = m.expit",
    "import sys\ng = sys.modules['scipy.special'].expit",
    "import scipy.special\ng = vars(scipy.special)['expit']",
    "import scipy.special\ng = scipy.special.__dict__['expit']",
    "import scipy.special._ufuncs as u\ng = u.expit",
    "from scipy.special import *\ndef f(t):\n    return expit(t)",
    "import scipy.special as ss\nalias = ss\nagain = alias\ng = again.expit",
    "%time 1\nfrom scipy.special import expit",
])
def test_scan_finds_a_forbidden_name_however_it_is_spelled(source):
    assert names.scan_code(source, ["scipy.special.expit"]).uses == ["scipy.special.expit"]


def test_scan_resolves_aliases_bound_in_other_cells_unless_hidden():
    aliases, star = names.notebook_bindings(["import scipy.special as ss",
                                             "from scipy.special import expit"])
    use = "def f(t):\n    return ss.expit(t) + expit(t)"
    assert names.scan_code(use, ["scipy.special.expit"], aliases, star).uses == [
        "scipy.special.expit"]
    # A function of the cell's own, of the same name, is not the library's.
    own = "def expit(t):\n    return t\ndef f(t):\n    return expit(t)"
    assert names.scan_code(own, ["scipy.special.expit"], aliases, star).uses == []


@pytest.mark.parametrize("source,watch", [
    ("from sklearn.linear_model import Ridge", "sklearn"),
    ("import sklearn.linear_model as lm\nlm.Lasso", "sklearn"),
    ("import scipy.optimize._minimize as m\nm.minimize", "scipy.optimize"),
    ("import numpy as np\nnp.cov", "numpy.cov"),
    ("import scipy.stats as st\nst.beta.interval", "scipy.stats.beta.interval"),
])
def test_a_module_prefix_forbids_what_it_holds(source, watch):
    assert names.scan_code(source, [watch]).uses == [watch]


@pytest.mark.parametrize("source", [
    "import numpy as np\nnp.covariance = 1\nnp.cov_x",           # other names
    "x = 'scipy.special.expit'  # scipy.special.expit in a comment",
    "import scipy.special\ng = getattr(scipy.special, ''.join(map(chr, (101, 120))))",
])
def test_scan_does_not_invent_uses(source):
    assert names.scan_code(source, ["scipy.special.expit", "numpy.cov"]).uses == []


@pytest.mark.parametrize("source,found", [
    ("f = lambda g: g.__closure__[0].cell_contents", ["g.__closure__"]),
    ("import gc\ngc.get_objects()", ["gc.get_objects"]),
    ("import gc\ngetattr(gc, 'get_' + 'referents')", ["gc.get_referents"]),
    ("import sys\nsys.meta_path.clear()", ["sys.meta_path", "sys.meta_path.clear"]),
    ("import inspect\ninspect.currentframe().f_back", ["inspect.currentframe"]),
    ("import importlib\nimportlib.reload(importlib)", ["importlib.reload"]),
])
def test_names_that_could_disable_the_runtime_watch_are_reported(source, found):
    assert names.scan_code(source).monitor == found


def test_honest_code_touches_nothing_of_the_watch():
    """Nor do the pipe's descriptors, which the sandbox's seccomp filter guards instead."""
    assert names.scan_code("import os\nos.write(1, b'x')\nos.dup2(1, 2)").monitor == []
    source = ("import numpy as np\nimport math, heapq\nfrom scipy import stats\n"
              "def f(x):\n    x = np.asarray(x)\n"
              "    return stats.beta.ppf(0.5, 2, 3) + math.log(2)")
    assert names.scan_code(source).monitor == []


# ---------------------------------------------------------------- declaration


def test_declaration_expands_every_task_and_rejects_unknown_tasks():
    meta = {"mlcourse": {"forbidden": {"*": ["sklearn"], "f": ["scipy.special.expit"]}}}
    assert notebook.forbidden_calls(meta, ["f", "g"]) == {
        "f": ["scipy.special.expit", "sklearn"], "g": ["sklearn"]}
    assert notebook.forbidden_calls({}, ["f"]) == {"f": []}
    with pytest.raises(ValueError, match="'h', which is not a task"):
        notebook.forbidden_calls({"mlcourse": {"forbidden": {"h": ["numpy.cov"]}}}, ["f"])
    with pytest.raises(ValueError, match="qualified names"):
        notebook.forbidden_calls({"mlcourse": {"forbidden": {"f": ["not a name"]}}}, ["f"])


@pytest.mark.parametrize("name", ASSIGNMENTS)
def test_every_task_forbids_something_the_solution_never_uses(name):
    """Each autograded task declares its shortcuts (scikit-learn at least), and the reference
    answer in the source notebook uses none of them (else it would score zero)."""
    assignment = notebook.load_assignment(name, sup.ROOT)
    assert set(assignment.forbidden) == set(assignment.tasks)
    solution = sup.solution_answers(name)
    for task in assignment.tasks:
        assert "sklearn" in assignment.forbidden[task], task
        assert names.scan_code(solution[task], assignment.forbidden[task]).uses == [], task
        assert names.scan_code(solution[task]).monitor == [], task


# ---------------------------------------------------------------- what students are told


@pytest.mark.parametrize("name", ASSIGNMENTS)
def test_release_header_states_the_rules(name):
    """The first cell names each task's forbidden calls, each test's description and points,
    and the release metadata carries the forbidden calls for `mlcourse check`."""
    assignment = notebook.load_assignment(name, sup.ROOT)
    nb = sup.release_notebook(name)
    header = sup.source(nb["cells"][0])
    assert nb["cells"][0]["id"] == release.HEADER_ID
    assert "**Rules.**" in header and "mlcourse check" in header
    table = header.split("| function | forbidden calls |", 1)[1].split("\n\n", 1)[0]
    for task, calls in assignment.forbidden.items():
        row = next(line for line in table.splitlines() if line.startswith(f"| `{task}` |"))
        assert all(f"`{call}`" in row for call in calls), (task, row)
    for test in assignment.tests:
        assert test.description.strip().replace("|", "/") in header, test.grade_id
    assert nb["metadata"]["mlcourse"]["forbidden"] == {
        t: c for t, c in assignment.forbidden.items() if c}
    # Which allowed functions are fine: those that call a forbidden one themselves, not those
    # that call what they are handed.
    rule = header.split(table, 1)[1].split("\n\n", 2)[1]
    assert "`numpy.corrcoef` calls `numpy.cov`" in rule and "that call is the library's" in rule
    assert all(f"`{f}`" in rule for f in ("map", "numpy.apply_along_axis", "scipy.integrate.quad"))


def test_check_warns_about_forbidden_calls_before_submission():
    """`mlcourse check` names the task and the call (read, not run)."""
    import nbformat

    nb = nbformat.from_dict(sup.make_submission(
        "logistic_regression",
        {"sigmoid": "import scipy.special as ss\ndef sigmoid(t):\n    return ss.expit(t)"},
        extra_cells=["from scipy.optimize import minimize as m",
                     "import gc\nobjects = gc.get_objects()"]))
    found = selfcheck.forbidden_warnings(nb)
    assert any(w.startswith("sigmoid uses scipy.special.expit, which this task forbids")
               for w in found), found
    fits = [t for t, calls in notebook.load_assignment("logistic_regression", sup.ROOT)
            .forbidden.items() if "scipy.optimize" in calls]
    assert "fit_logistic_regression" in fits
    assert any(f"uses scipy.optimize, which {', '.join(sorted(fits))} forbid" in w
               for w in found), found
    assert any("gc.get_objects" in w and "watch on forbidden calls" in w for w in found), found
    clean = nbformat.from_dict(sup.make_submission(
        "logistic_regression", sup.solution_answers("logistic_regression")))
    assert selfcheck.forbidden_warnings(clean) == []


# ---------------------------------------------------------------- at run time, in the sandbox

#: Build the name at run time, so that only the sandbox's watch can see the call.
_RUNTIME_EXPIT = ("def sigmoid(t):\n"
                  "    module = __import__('scipy.special', fromlist=['x'])\n"
                  "    return getattr(module, ''.join(reversed('tipxe')))(t)\n")


def _grade(tmp_path, answers=None, extra=()):
    from mlcourse_utils.grading.session import grade_notebook
    from mlcourse_utils.grading.submissions import read_submission

    name = "logistic_regression"
    nb = sup.make_submission(name, {**sup.solution_answers(name), **(answers or {})},
                             extra_cells=extra)
    path = sup.write_submission(tmp_path, "student", name, nb=nb)
    assignment = notebook.load_assignment(name, sup.ROOT)
    return assignment, grade_notebook(assignment, read_submission(path), timeout=30,
                                      memory_mb=2048)


@pytest.mark.slow
def test_a_name_built_at_run_time_is_caught_by_the_sandbox(tmp_path):
    """The scan cannot see the call; the sandbox's watch does: sigmoid earns nothing, with the
    call named, and every other task keeps full marks."""
    assert names.scan_code(_RUNTIME_EXPIT, ["scipy.special.expit"]).uses == []
    assignment, result = _grade(tmp_path, {"sigmoid": _RUNTIME_EXPIT})
    assert result.task_score("sigmoid") == 0
    assert "scipy.special.expit" in result.reasons["sigmoid"]
    for task in assignment.tasks:
        if task != "sigmoid":
            assert result.task_score(task) == assignment.task_max(task), (task, result.reasons)
    assert "a forbidden call in this task" in result.reasons["sigmoid"]
    assert classify_reason(result.reasons["sigmoid"]) == "forbidden"


_FORGE = (
    # Attempts on the record, with every name built at run time (so that the scan sees none):
    # replace sys.audit, send a forged reply and events of our own, and close or replace the
    # reply pipe's descriptor (refused by seccomp).
    "import sys\n"
    "os_ = __import__(''.join(reversed('so')))\n"
    "sys.audit = lambda *a, **k: None\n"
    "fd = int(sys.argv[2])\n"
    "for name, args in (('cl' + 'ose', (fd,)), ('du' + 'p2', (1, fd))):\n"
    "    try:\n"
    "        getattr(os_, name)(*args)\n"
    "    except OSError:\n"
    "        pass\n"
    "data = b'{\"event\": \"clean\"}'\n"
    "getattr(os_, 'wr' + 'ite')(fd, len(data).to_bytes(4, 'big') + data)\n"
)

_REACH_HOOK = (
    # The hook's originals are out of reach but through the garbage collector: looking there
    # is reported, and costs every task with forbidden calls.
    "gc_ = __import__(''.join(reversed('cg')))\n"
    "found = [o for o in getattr(gc_, 'get_' + 'objects')() if callable(o)\n"
    "         and getattr(o, '__name__', '') == 'hook']\n"
)


@pytest.mark.slow
def test_forging_or_disabling_the_record_does_not_restore_points(tmp_path):
    """A hostile notebook tries to silence the watch before its forbidden call; the call is
    still reported and sigmoid earns nothing. Searching the garbage collector for the hook's
    state voids every task with forbidden calls."""
    assert names.scan_code(_FORGE).monitor == [] and names.scan_code(_REACH_HOOK).monitor == []
    assignment, result = _grade(tmp_path / "forge", {"sigmoid": _RUNTIME_EXPIT}, extra=[_FORGE])
    assert result.task_score("sigmoid") == 0, result.reasons
    assert "scipy.special.expit" in result.reasons["sigmoid"]
    assert result.task_score("softmax") == assignment.task_max("softmax"), result.reasons

    assignment, result = _grade(tmp_path / "gc", {"sigmoid": _RUNTIME_EXPIT},
                                extra=[_REACH_HOOK])
    assert result.score == 0, result.reasons
    assert all("watch on forbidden calls" in result.reasons[t] or "expit" in result.reasons[t]
               for t in assignment.tasks), result.reasons
    assert "gc.get_objects" in result.reasons["softmax"]
