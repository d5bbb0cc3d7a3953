"""Forbidden calls per task (metadata.mlcourse.forbidden of a source notebook).

By name: the scan of submitted code resolves aliases, getattr, __import__, importlib and
vars(...) strings where they are constants (mlcourse_utils/grading/names.py). At run time: the
sandbox replaces each forbidden function by a stand-in that reports its call through an audit
hook on the reply pipe (sandbox/runner/), so a name built at run time is caught too, and attempts to
disable that watch cost every task with forbidden calls. The release header lists the forbidden
calls and what each test checks; `mlcourse check` warns. Whole batches (one shortcut per task,
with the score it must get) are graded in tests/test_assignments.py from
tests/submissions/NAME.py's FORBIDDEN_SHORTCUTS.
"""

from __future__ import annotations

import functools
import json
import math
import subprocess
import sys
import textwrap

import pytest

import assignment_support as sup
from mlcourse_utils.grading import names, notebook, static_check
from mlcourse_utils.grading.engine import release
from mlcourse_utils.grading.graded.reasons import classify_reason
from mlcourse_utils.grading.sandbox.runner import runner_text

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
    ("import ctypes\nx = ctypes.cast(id(1), ctypes.py_object).value",
     ["ctypes.cast", "ctypes.py_object"]),
    ("import ctypes\nf = ctypes.pythonapi.PyFrame_LocalsToFast", [
        "ctypes.pythonapi", "ctypes.pythonapi.PyFrame_LocalsToFast"]),
    ("import signal\nsignal.signal(signal.SIGALRM, print)", ["signal.signal"]),
    ("import numpy as np\nf = np.cov._implementation", ["numpy.cov._implementation"]),
])
def test_names_that_could_disable_the_runtime_watch_are_reported(source, found):
    assert names.scan_code(source).monitor == found


def test_honest_code_touches_nothing_of_the_watch():
    """Nor do the pipe's descriptors, which the sandbox's seccomp filter guards instead, nor
    ctypes calling the C library."""
    assert names.scan_code("import os\nos.write(1, b'x')\nos.dup2(1, 2)").monitor == []
    assert names.scan_code("import ctypes\nlibc = ctypes.CDLL(None)\nlibc.getpid()\n"
                           "n = ctypes.c_long(3)").monitor == []
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
    found = static_check.forbidden_warnings(nb)
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
    assert static_check.forbidden_warnings(clean) == []


# ---------------------------------------------------------------- at run time, in the sandbox

#: Build the name at run time, so that only the sandbox's watch can see the call.
_RUNTIME_EXPIT = ("def sigmoid(t):\n"
                  "    module = __import__('scipy.special', fromlist=['x'])\n"
                  "    return getattr(module, ''.join(reversed('tipxe')))(t)\n")


def _grade(tmp_path, answers=None, extra=()):
    from mlcourse_utils.grading.engine.options import GradingOptions
    from mlcourse_utils.grading.engine.session import grade_notebook
    from mlcourse_utils.grading.intake.submissions import read_submission

    name = "logistic_regression"
    nb = sup.make_submission(name, {**sup.solution_answers(name), **(answers or {})},
                             extra_cells=extra)
    path = sup.write_submission(tmp_path, "student", name, nb=nb)
    assignment = notebook.load_assignment(name, sup.ROOT)
    return assignment, grade_notebook(assignment, read_submission(path),
                                      GradingOptions(timeout=30, memory_mb=2048))


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


# ---------------------------------------------------------------- routes around the watch
# Each route is tried as a student who has read docs/grading-security.md would: in a fresh
# interpreter that runs the runner's text (as the sandbox does), installs the watch on a
# pipe and runs the route's cells one by one, each as one request that ends like a test's call
# (so a forbidden call still running then is reported with it). Routes that leave nothing
# running share an interpreter; each gets its own namespace. What the pipe got is read after
# every cell.

_ROUTES = textwrap.dedent("""
    import importlib.util, json, os, sys
    for name in json.loads(sys.argv[4]):  # what the prepared image imports before the watch
        __import__(name)
    runner = type(sys)("mlcourse_runner")  # (its text, compiled as `python -c` does)
    exec(compile(sys.argv[1], "<string>", "exec"), vars(runner))
    read_fd, write_fd = os.pipe()
    os.set_blocking(read_fd, False)
    runner._install_monitor(json.loads(sys.argv[2]), write_fd)

    def events():
        data = b""
        try:
            while chunk := os.read(read_fd, 1 << 16):
                data += chunk
        except BlockingIOError:
            pass
        found = []
        while data:
            n = int.from_bytes(data[:4], "big")
            event = json.loads(data[4:4 + n])
            data = data[4 + n:]
            found.append(f"{event['event']} {event.get('name', event.get('what'))}")
        return found

    report = {}
    for route, cells in json.loads(sys.argv[3]).items():
        namespace, steps = {}, []
        for cell in cells:
            sys.audit("mlcourse.request")
            try:  # (a cell's file name as IPython gives it: the student's code)
                exec(compile(cell, "<ipython-input-1-route>", "exec"), namespace)
                result = namespace.pop("result", None)
            except BaseException as exc:
                result = f"raised {type(exc).__name__}"
            sys.audit("mlcourse.done")
            steps.append([result, events()])
        report[route] = steps
    print(json.dumps(report))
""")


def _try_routes(watch, routes, preload=("numpy",)):
    """{route: [[the `result` each cell left (or "raised E"), the events it caused], ...]}."""
    proc = subprocess.run([sys.executable, "-I", "-c", _ROUTES, runner_text(), json.dumps(watch),
                           json.dumps(routes), json.dumps(list(preload))],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@functools.cache
def _routes(group):
    watch, routes, preload = _GROUPS[group]
    return _try_routes(watch, {r: cells for r, (cells, _) in routes.items()}, preload)


def _route_params(group):
    return [pytest.param(group, route, id=f"{group}-{route}") for route in _GROUPS[group][1]]


_FILE = "import numpy.lib._function_base_impl as fb\nsource = open(fb.__file__).read()\n"
_X = "import numpy as np\nX = np.array([[1.0, 2.0, 3.0, 4.0], [1.0, 3.0, 2.0, 5.0]])\n"
#: A route's cells, then what must be true: ("refused", label) the copy does not run and is
#: reported as that call; ("reported", label) the last cell reports the call; ("tampering",
#: what) the route is reported as touching the watch; ("fine",) nothing is reported.
_GROUPS = {
    # A copy of a forbidden function's code, however it is made to run.
    "copies": (["numpy.cov"], {
        "exec_of_its_file": ([_FILE + "ns = {}\nexec(source, ns)\nresult = float("
                              "ns['cov']([1.0, 2.0, 3.0]))"], ("refused", "numpy.cov")),
        "module_type_and_exec": ([_FILE + "import types\nm = types.ModuleType('copy')\n"
                                  "exec(compile(source, 'copy.py', 'exec'), vars(m))\n"
                                  "result = float(m.cov([1.0, 2.0, 3.0]))"],
                                 ("refused", "numpy.cov")),
        "importlib_reload": (["import importlib, numpy.lib._function_base_impl as fb\n"
                              "importlib.reload(fb)\nresult = float(fb.cov([1.0, 2.0, 3.0]))"],
                             ("refused", "numpy.cov")),
        "spec_from_file_location": ([
            "import importlib.util, numpy.lib._function_base_impl as fb\n"
            "spec = importlib.util.spec_from_file_location(fb.__name__, fb.__file__)\n"
            "m = importlib.util.module_from_spec(spec)\nspec.loader.exec_module(m)\n"
            "result = float(m.cov([1.0, 2.0, 3.0]))"], ("refused", "numpy.cov")),
        "function_from_its_code": ([_FILE + "import types\nmodule = compile(source, 'x', 'exec')\n"
                                    "code = [c for c in module.co_consts if getattr(c, 'co_name',"
                                    " '') == 'cov'][0]\nf = types.FunctionType(code, vars(fb))\n"
                                    "result = float(f([1.0, 2.0, 3.0]))"],
                                   ("refused", "numpy.cov")),
        "renamed_copy_of_its_code": ([_FILE + "module = compile(source, 'x', 'exec')\n"
                                      "code = [c for c in module.co_consts if getattr(c, "
                                      "'co_name', '') == 'cov'][0]\n"
                                      "result = code.replace(co_name='kov').co_name"],
                                     ("refused", None)),
    }, ("numpy",)),
    # Objects that lead back to the function: the watch's own, numpy's and scipy's tables.
    "registries": (["numpy.cov", "scipy.special.expit"], {
        "dispatcher_implementation": (["import numpy as np\nf = getattr(np.cov, '_implem' + "
                                       "'entation')", "result = float(f([1.0, 2.0, 3.0]))"],
                                      ("reported", "numpy.cov")),
        "wrapped": (["import numpy as np\nf = getattr(np.cov, '__wra' + 'pped__')",
                     "result = float(f([1.0, 2.0, 3.0]))"], ("reported", "numpy.cov")),
        "numpy_array_functions_table": (["import numpy._core.overrides as o\n"
                                         "f = [g for g in o.ARRAY_FUNCTIONS if g.__name__ == "
                                         "'cov'][0]", "result = float(f([1.0, 2.0, 3.0]))"],
                                        ("reported", "numpy.cov")),
        "array_function_protocol": (["import numpy as np\ngot = []\nclass T:\n"
                                     "    def __array_function__(self, func, types, a, k):\n"
                                     "        got.append(func)\n        return 0\nnp.cov(T())",
                                     "result = float(got[0]([1.0, 2.0, 3.0]))"],
                                    ("reported", "numpy.cov")),
        "scipy_special_tables": (["import scipy.special._support_alternative_backends as b\n"
                                  "found = [v for info in vars(b).values() if type(info) is tuple"
                                  " for x in info for v in vars(x).values() if getattr(v, "
                                  "'__name__', '') == 'expit' if hasattr(x, '__dict__')]",
                                  "result = [float(f(0.0)) for f in found]"],
                                 ("reported", "scipy.special.expit")),
        "the_watch_s_own_objects": ([
            # Everything reachable from the import hook, the loaders it wrapped and a stand-in
            # (closures, globals, attributes, constants), then each callable named expit.
            "import sys, types, scipy.special\n"
            "seen, todo, found = set(), [sys.meta_path[0], type(sys.meta_path[0]),\n"
            "    scipy.special.__spec__.loader, scipy.special.expit], []\n"
            "while todo and len(seen) < 20000:\n"
            "    o = todo.pop()\n"
            "    if id(o) in seen or isinstance(o, types.ModuleType):\n"
            "        continue\n"
            "    seen.add(id(o))\n"
            "    if callable(o) and getattr(o, '__name__', '') == 'expit':\n"
            "        found.append(o)\n"
            "    for a in ('__closure__', '__globals__', '__dict__', '__wrapped__', '__self__',\n"
            "              '__func__', 'cell_contents', 'loader', '__code__', 'co_consts'):\n"
            "        try:\n"
            "            v = getattr(o, a)\n"
            "        except Exception:\n"
            "            continue\n"
            "        todo.extend(v.values() if isinstance(v, dict) else v\n"
            "                    if isinstance(v, (tuple, list)) else [v])",
            "result = [float(f(0.0)) for f in found]"], ("reported", "scipy.special.expit")),
        "array_ufunc_protocol": (["import scipy.special as sp\ngot = []\nclass T:\n"
                                  "    def __array_ufunc__(self, ufunc, method, *a, **k):\n"
                                  "        got.append(ufunc)\n        return 0\nsp.expit(T())"],
                                 ("tampering", "__array_ufunc__")),
    }, ("numpy", "scipy.special")),
    # Frozen distributions call private methods; a frozen object can be made from its class.
    "frozen": (["scipy.stats.multivariate_normal", "scipy.stats.invwishart.mode",
                "scipy.stats.poisson.logpmf"], {
        "multivariate_normal_frozen": (["import numpy as np, scipy.stats as st\n"
                                        "f = st.multivariate_normal(np.zeros(2), np.eye(2))",
                                        "result = float(f.logpdf([0.0, 0.0]))"],
                                       ("reported", "scipy.stats.multivariate_normal.logpdf")),
        "multivariate_normal_frozen_class": (["import numpy as np, scipy.stats as st\n"
                                              "F = type(st.multivariate_normal(np.zeros(2)))",
                                              "result = float(F(np.zeros(2), np.eye(2))"
                                              ".logpdf([0.0, 0.0]))"],
                                             ("reported", "scipy.stats.multivariate_normal")),
        "invwishart_frozen_mode": (["import numpy as np, scipy.stats as st\n"
                                    "f = st.invwishart(5, np.eye(2))",
                                    "result = f.mode().tolist()"],
                                   ("reported", "scipy.stats.invwishart.mode")),
        "poisson_frozen": (["import scipy.stats as st\nf = st.poisson(3.0)",
                            "result = float(f.logpmf(2))"],
                           ("reported", "scipy.stats.poisson.logpmf")),
        "poisson_private_method": (["import scipy.stats as st\n"
                                    "f = getattr(st.poisson, '_log' + 'pmf')",
                                    "result = float(f(2, 3.0))"],
                                   ("reported", "scipy.stats.poisson.logpmf")),
    }, ("numpy", "scipy.stats")),
    # Allowed library functions that call a forbidden one (fine), and the abuse routes.
    "library_calls": (["numpy.cov", "scipy.stats.poisson.logpmf", "scipy.special.xlogy"], {
        "numpy_corrcoef": ([_X + "result = np.corrcoef(X).tolist()"], ("fine",)),
        "poisson_pmf": (["import scipy.stats as st\nresult = float(st.poisson.pmf(2, 3.0))"],
                        ("fine",)),
        "gamma_logpdf": (["import scipy.stats as st\nresult = float(st.gamma.logpdf(2.0, 3.0))"],
                         ("fine",)),
        "numpy_apply_along_axis": ([_X + "result = np.apply_along_axis(np.cov, 1, X).tolist()"],
                                   ("reported", "numpy.cov")),
        "functools_reduce": ([_X + "import functools\nresult = float(functools.reduce("
                              "lambda a, f: f(a), [np.cov], X[0]))"], ("reported", "numpy.cov")),
        "map": ([_X + "result = [float(v) for v in map(np.cov, X)]"], ("reported", "numpy.cov")),
        "numpy_vectorize": ([_X + "result = np.vectorize(np.cov, signature='(n)->()')(X)"
                             ".tolist()"], ("reported", "numpy.cov")),
        "scipy_integrate_quad": ([_X + "import scipy.integrate as si\nresult = si.quad("
                                  "lambda t: float(np.cov(X[0] * t)), 0.0, 1.0)[0]"],
                                 ("reported", "numpy.cov")),
        "corrcoef_with_its_module_changed": ([
            _X + "import numpy.lib._function_base_impl as fb\nkept = fb.diag\n"
            "setattr(fb, 'di' + 'ag', lambda c: np.ones(len(c)))\n"  # (no more normalising)
            "result = (np.corrcoef(X / 10) * 100).tolist()\nsetattr(fb, 'diag', kept)"],
            ("reported", "numpy.cov")),
        "allowed_method_of_a_student_subclass": ([
            "import scipy.stats as st\nclass P(type(st.poisson)):\n"
            "    def _pmf(self, k, mu):\n        return self._logpmf(k, mu)\n"
            "result = float(P(name='p').pmf(2, 3.0))"], ("reported", "scipy.stats.poisson.logpmf")),
    }, ("numpy", "scipy.stats", "scipy.integrate")),
    # What could reach the hook's state or run unwatched: reported (or refused and reported).
    "tampering": (["scipy.special.expit", "scipy.optimize"], {
        "frames_during_a_forbidden_call": ([
            "import sys, scipy.optimize as so\n"
            "so.minimize_scalar(lambda t: len([sys._getframe(1)]) + (t - 1) ** 2)"],
            ("tampering", "inspects frames during a forbidden call")),
        "frames_taken_directly": (["import sys\nf = getattr(sys, '_get' + 'frame')()"],
                                  ("tampering", "uses frames")),
        "generator_frame": (["def g():\n    yield 1\nf = getattr(g(), 'gi_' + 'frame')"],
                            ("tampering", "uses frames")),
        "tracer": (["import sys\nset_ = getattr(sys, 'set' + 'trace')\nset_(lambda *a: None)\n"
                    "set_(None)"], ("tampering", "installs a tracer")),
        "signal_handler": (["import signal\nsignal.signal(signal.SIGUSR1, lambda *a: None)\n"
                            "signal.signal(signal.SIGUSR1, signal.SIG_DFL)"],
                           ("tampering", "installs a signal handler")),
        "another_audit_hook": (["import sys, scipy.special as sp\nseen = []\n"
                                "sys.addaudithook(lambda e, a: seen.extend(a) if "
                                "e.startswith('mlcourse') else None)\nsp.expit(0.0)\n"
                                "result = len(seen)"], ("tampering", "adds an audit hook")),
        "compiled_code_loaded_by_hand": (["import marshal, importlib.util, scipy.special as sp\n"
                                          "p = importlib.util.cache_from_source(sp.__file__)\n"
                                          "code = marshal.loads(open(p, 'rb').read()[16:])"],
                                         ("tampering", "loads compiled code itself")),
        "code_under_a_library_file_s_name": ([
            "import scipy.special as sp\ncode = compile('def f():\\n    return 1', "
            "sp.__file__.replace('__init__', 'elsewhere'), 'exec')"],
            ("tampering", "compiles code under the name of a library file")),
        "ctypes_python_api": (["import ctypes\nf = getattr(ctypes, 'python' + 'api').Py_IncRef"],
                              ("tampering", "reaches Pythons C API through ctypes")),
        "ctypes_memory": (["import ctypes\nx = ctypes.c_char.from_address(id(1))"],
                          ("tampering", "reads memory through ctypes")),
        "own_memory_file": (["f = open('/proc/self/mem', 'rb')\nf.close()"],
                            ("tampering", "reads its own memory")),
        "another_program": (["import subprocess, sys\nsubprocess.run([sys.executable, '-c', "
                             "'pass'])"], ("tampering", "starts another program")),
        "honest_code_that_looks_alike": ([
            "import collections, typing, traceback, ctypes, signal, cProfile\n"
            "P = collections.namedtuple('P', 'x y')\nT = typing.TypeVar('T')\n"
            "try:\n    1 / 0\nexcept ZeroDivisionError:\n    text = traceback.format_exc()\n"
            "pid = ctypes.CDLL(None).getpid()\nsignal.signal(signal.SIGUSR1, signal.SIG_DFL)\n"
            "cProfile.run('sum(range(10))')"], ("fine",)),
    }, ("numpy", "scipy.special")),
}


@pytest.mark.parametrize("group,route", [p for g in _GROUPS for p in _route_params(g)])
def test_a_route_around_the_watch_is_closed_or_reported(group, route):
    """Each route to an unwatched original, or to the watch's state, is closed (the original is
    not reached, or the copy does not run) and the call reported, or is reported as tampering;
    honest code that touches the same machinery reports nothing."""
    steps = _routes(group)[route]
    expected = _GROUPS[group][1][route][1]
    every = [e for _, events in steps for e in events]
    result, last = steps[-1]
    if expected[0] == "refused":
        assert result.startswith("raised"), steps  # (the copy never ran)
        if expected[1] is not None:
            assert f"forbidden {expected[1]}" in last, steps
    elif expected[0] == "reported":
        assert not str(result).startswith("raised") and result != [], steps
        assert f"forbidden {expected[1]}" in last, steps
    elif expected[0] == "tampering":
        assert any(e.startswith("monitor") and expected[1] in e for e in every), steps
    else:
        assert not str(result).startswith("raised") and every == [], steps


_STUCK_THREAD = (  # a thread left inside a forbidden call, serving the answers from there
    "import threading, queue, scipy.optimize as so, scipy.special as sp\n"
    "jobs, out = queue.Queue(), queue.Queue()\n"
    "def serve(x):\n"
    "    while True:\n"
    "        out.put(float(sp.expit(jobs.get())))\n"
    "threading.Thread(target=lambda: so.minimize_scalar(serve), daemon=True).start()\n")


def test_a_thread_left_inside_a_forbidden_call_silences_no_later_call():
    """The watch's state is per thread: a thread waiting inside scipy.optimize (forbidden for
    another task) no longer hides the expit calls it makes for the answer, and the call it is
    still inside counts for every test that ends while it runs."""
    steps = _try_routes(["scipy.special.expit", "scipy.optimize"], {"stuck": [
        _STUCK_THREAD, "jobs.put(0.0)\nresult = out.get()",
        "jobs.put(1.0)\nresult = out.get()"]}, ("numpy", "scipy.special"))["stuck"]
    assert [r for r, _ in steps[1:]] == [0.5, pytest.approx(1 / (1 + math.exp(-1)))]
    for _, events in steps[1:]:
        assert "forbidden scipy.special.expit" in events
        assert "forbidden scipy.optimize.minimize_scalar" in events


def test_a_forbidden_ufunc_keeps_its_methods_and_a_call_through_one_counts():
    """numpy.logaddexp forbidden for one task: honest code of another task still finds its
    methods and attributes (reduce, outer, nin), and a call through a method is the forbidden
    call (log-sum-exp in one line), named as such."""
    steps = _try_routes(["numpy.logaddexp"], {"methods": [
        "import numpy as np\nresult = [np.logaddexp.nin, np.logaddexp.nout]",
        "result = float(np.logaddexp.reduce(np.log([1.0, 3.0])))",
        "result = np.logaddexp.outer([0.0], [0.0]).tolist()",
        "result = float(np.logaddexp(0.0, 0.0))"]}, ("numpy",))["methods"]
    assert steps[0] == [[2, 1], []]
    assert steps[1][0] == pytest.approx(math.log(4.0))
    assert steps[2][0] == [[pytest.approx(math.log(2.0))]]
    assert steps[3][0] == pytest.approx(math.log(2.0))
    for _, events in steps[1:]:
        assert events == ["forbidden numpy.logaddexp"]


def test_a_forbidden_call_still_running_when_a_test_ends_counts():
    """A forbidden call started elsewhere and still running in another thread counts for the
    test during which it runs, though that test makes no forbidden call itself."""
    steps = _try_routes(["scipy.optimize"], {"running": [
        "import threading, scipy.optimize as so\nhold = threading.Event()\n"
        "threading.Thread(target=lambda: so.minimize_scalar(lambda t: hold.wait() and 0.0),\n"
        "                 daemon=True).start()",
        "result = 1 + 1"]}, ("numpy",))["running"]
    assert steps[1] == [2, ["forbidden scipy.optimize.minimize_scalar"]]


def test_a_forked_child_reports_every_forbidden_call_it_makes():
    """A child forked outside the tests, serving answers, reports each call it makes during a
    test (it never hears of the requests, so nothing it reports is held back)."""
    steps = _try_routes(["scipy.special.expit"], {"fork": [
        "import os, scipy.special as sp\nask, hear = os.pipe()\nback, answer = os.pipe()\n"
        "child = os.fork()\nif child == 0:\n    while True:\n"
        "        t = float(os.read(ask, 32))\n"
        "        os.write(answer, repr(float(sp.expit(t))).encode().ljust(32))",
        "os.write(hear, b'0.0'.ljust(32))\nresult = float(os.read(back, 32))",
        "os.write(hear, b'0.0'.ljust(32))\nresult = float(os.read(back, 32))\n"
        "os.kill(child, 9)\nos.waitpid(child, 0)"]}, ("numpy", "scipy.special"))["fork"]
    assert steps[0][1] == []
    for result, events in steps[1:]:
        assert result == 0.5 and events == ["forbidden scipy.special.expit"]


@pytest.mark.slow
def test_no_new_program_starts_in_the_sandbox():
    """A fresh Python would run without the watch: the sandbox's seccomp filter refuses
    execve, so subprocess, os.system and os.exec* fail (an honest `!` cell only errs)."""
    from mlcourse_utils.grading.sandbox.channel import Sandbox

    box = Sandbox(hidden=[sup.ROOT], memory_mb=2048).start()
    try:
        if not box.info["seccomp"]:
            pytest.skip("no seccomp filter on this machine")
        error, _ = box.exec_cell(
            "import os, subprocess, sys\nfailed = []\n"
            "for start in (lambda: subprocess.run([sys.executable, '-c', 'pass']),\n"
            "              lambda: os.execv(sys.executable, [sys.executable, '-c', 'pass'])):\n"
            "    try:\n        start()\n    except PermissionError:\n"
            "        failed.append(True)\n"
            "def starts():\n    return len(failed), os.system('exit 0')", 30)
        assert error is None, error
        refused, status = box.call("starts", (), {}, 30)[0]
        assert refused == 2
        assert status != 0  # (the shell itself cannot start: 127 << 8)
    finally:
        box.kill()


@pytest.mark.slow
def test_a_reply_forged_on_the_pipe_cannot_outrun_the_watch():
    """The runner's reply follows the watch's last events (a forbidden call still running is
    reported before it). A reply the notebook writes itself, to end the test before that, names
    a request id it cannot know: the grader refuses it instead of taking its value."""
    from mlcourse_utils.grading.sandbox.channel import Sandbox, SandboxError

    box = Sandbox(hidden=[sup.ROOT], memory_mb=2048).start()
    try:
        box.monitor(["scipy.optimize"], 60)
        error, _ = box.exec_cell(
            "import json, os, struct, sys, time\n"
            "def answer():\n"
            "    for guess in range(1, 4):\n"
            "        data = json.dumps({'ok': True, 'value': 42.0, 'id': guess}).encode()\n"
            "        os.write(int(sys.argv[2]), struct.pack('>I', len(data)) + data)\n"
            "    time.sleep(60)\n", 30)
        assert error is None, error
        with pytest.raises(SandboxError, match="out of turn"):
            box.call("answer", (), {}, 30)
    finally:
        box.kill()
