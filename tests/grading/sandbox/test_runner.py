"""grading/sandbox/runner/: its parts join into one program that fits one argument, importing
it does nothing, and its watch on forbidden calls is lazy but complete.

The watch (``_install_monitor``) imports nothing: a forbidden call whose module is not loaded
when the watch starts is resolved when the student first imports that module, however they do
it (in a function, through a private module, after putting another finder first). Each check
runs in a fresh interpreter that runs the runner's text (``runner_text()``, compiled as
``python -c`` does, without the package), installs the watch on a pipe, runs a student's code
and reports what the pipe got.
"""

from __future__ import annotations

import ast
import json
import math
import os
import subprocess
import symtable
import sys
import textwrap
from pathlib import Path

import pytest

from mlcourse_utils.grading.sandbox.runner import MAX_ARG_STRLEN, PARTS, runner_text
from tolerances import few_ops

ROOT = Path(__file__).resolve().parents[3]
#: The runner as the sandbox runs it: its parts joined into one text.
RUNNER = runner_text()

# ------------------------------------------------------------------ its parts, joined

PART_DIR = ROOT / "mlcourse_utils" / "grading" / "sandbox" / "runner"


def test_the_parts_join_into_one_program_that_fits_one_argument():
    """Every part of the folder is joined once, in PARTS' order, into a text that compiles and
    stays well under Linux's limit on one argument (it travels as one, inside the set-up
    script: ``test_isolation`` checks that whole argument)."""
    assert sorted(PARTS) == sorted(p.stem for p in PART_DIR.glob("*.py") if p.stem != "__init__")
    starts = [RUNNER.index((PART_DIR / f"{name}.py").read_text(encoding="utf-8").rstrip("\n"))
              for name in PARTS]
    assert starts == sorted(starts) and starts[0] == 0
    compile(RUNNER, "<string>", "exec")
    assert len(RUNNER.encode()) < MAX_ARG_STRLEN - 16384


def test_each_part_compiles_alone_and_names_only_earlier_parts():
    """A part is Python on its own (only the first holds the ``__future__`` import, which must
    open the joined text), and what it imports of other parts (for the reader and the linters
    only) comes from parts joined before it; but ``main``, which image.py's forked runner
    calls, and which is joined last."""
    for index, name in enumerate(PARTS):
        source = (PART_DIR / f"{name}.py").read_text(encoding="utf-8")
        tree = compile(source, f"{name}.py", "exec", ast.PyCF_ONLY_AST)
        future = [n for n in tree.body if isinstance(n, ast.ImportFrom) and
                  n.module == "__future__"]
        assert bool(future) == (index == 0), name
        named = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level}
        assert named <= set(PARTS[:index]), (name, named - set(PARTS[:index]))
        absolute = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        absolute |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and
                     not n.level}
        assert not any(m.startswith("mlcourse_utils") for m in absolute), name
    assert "main(" in (PART_DIR / "image.py").read_text(encoding="utf-8")


def _nested(table):
    """The functions defined inside ``table`` (a function's or a class's), at any depth."""
    for child in table.get_children():
        if child.get_type() == "function":
            yield child
        yield from _nested(child)


def test_the_watchs_closures_hold_only_what_they_use():
    """The watch is built by functions of the runner (one per part of it), but what runs when
    it watches are their closures: none holds the shared state ``w`` (a closure reaches only
    what it uses, as when the watch was one function), and none looks up a function or class
    of the runner by its global name (student code can rebind the runner's globals, reached
    through any of its functions, without an event; it cannot reach a closure's cells so).
    ``_Refused`` is the exception as it was before the split."""
    table = symtable.symtable(RUNNER, "<string>", "exec")
    runner_defs = {s.get_name() for s in table.get_symbols() if s.is_namespace()}
    builders = [t for t in table.get_children()
                if t.get_type() == "function" and t.get_name().startswith("_") and
                any(c.get_type() in ("function", "class") for c in t.get_children())]
    names = {b.get_name() for b in builders}
    assert {"_stand_ins", "_exemptions", "_tamper_events", "_audit_hook"} <= names
    for builder in builders:
        for fn in _nested(builder):
            where = f"{builder.get_name()}.{fn.get_name()}"
            assert "w" not in fn.get_frees(), where
            looked_up = {s.get_name() for s in fn.get_symbols() if s.is_global()}
            assert looked_up & runner_defs <= {"_Refused"}, (where, looked_up & runner_defs)


# ------------------------------------------------------------------ no side effects at import

#: Imports every module of the package in a fresh process whose sys.argv trips on any use, then
#: prints what the kernel says about seccomp and no_new_privs.
_IMPORT_ALL = textwrap.dedent("""
    import importlib, json, pkgutil, sys

    class Tripwire(list):
        used = []
        def _trip(self, *args):
            Tripwire.used.append(True)
            raise RuntimeError("sys.argv was read at import")
        __getitem__ = __iter__ = __len__ = __contains__ = _trip

    argv, sys.argv = sys.argv, Tripwire()
    import mlcourse_utils
    names = ["mlcourse_utils"] + [m.name for m in pkgutil.walk_packages(
        mlcourse_utils.__path__, "mlcourse_utils.")]
    failed = {}
    for name in names:
        try:
            importlib.import_module(name)
        except BaseException as exc:  # (SystemExit included)
            failed[name] = repr(exc)[:200]
    status = {}
    try:
        with open("/proc/self/status") as fh:
            status = dict(line.rstrip("\\n").split(":\\t", 1) for line in fh if ":\\t" in line)
    except OSError:
        pass
    print(json.dumps({"names": names, "failed": failed, "argv_read": len(Tripwire.used),
                      "seccomp": status.get("Seccomp"), "no_new_privs": status.get("NoNewPrivs")}))
""")


def test_importing_every_module_does_nothing():
    """Each module of mlcourse_utils imports in a fresh process without reading sys.argv,
    exiting, or installing the sandbox's seccomp filter (the runner does that in main())."""
    proc = subprocess.run([sys.executable, "-c", _IMPORT_ALL], capture_output=True, text=True,
                          timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert "mlcourse_utils.grading.sandbox.runner" in report["names"]
    assert "mlcourse_utils.grading.sandbox.channel" in report["names"]
    assert report["failed"] == {}
    assert report["argv_read"] == 0
    if sys.platform == "linux":
        assert report["seccomp"] == "0", "an import installed a seccomp filter"
        assert report["no_new_privs"] == "0", "an import set no_new_privs"


def test_runner_main_reads_its_arguments_and_installs_the_filter(tmp_path):
    """The other side of the test above: main() still does the work (the filter holds on Linux,
    and the ready message names this process)."""
    script = textwrap.dedent("""
        import importlib.util, json, os, struct, sys
        runner = type(sys)("mlcourse_runner")
        exec(compile(sys.argv[1], "<string>", "exec"), vars(runner))
        to_r, to_w = os.pipe()
        from_r, from_w = os.pipe()
        if os.fork() == 0:
            runner.main([str(to_r), str(from_w), "fallback-probe"])
        (n,) = struct.unpack(">I", os.read(from_r, 4))
        print(os.read(from_r, n).decode())
    """)
    proc = subprocess.run([sys.executable, "-I", "-c", script, RUNNER], capture_output=True,
                          text=True, timeout=60, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    ready = json.loads(proc.stdout.strip().splitlines()[-1])
    assert ready["event"] == "ready"
    assert ready["seccomp"] is (sys.platform == "linux" and os.uname().machine in
                                ("x86_64", "aarch64"))


# ------------------------------------------------------------------ the watch, lazily

_WATCH = textwrap.dedent("""
    import importlib.util, json, os, sys
    runner = type(sys)("mlcourse_runner")  # (its text, compiled as `python -c` does)
    exec(compile(sys.argv[1], "<string>", "exec"), vars(runner))
    read_fd, write_fd = os.pipe()
    count, prefixes = runner._install_monitor(json.loads(sys.argv[2]), write_fd)
    loaded = sorted(m for m in sys.modules if m.partition(".")[0] in ("scipy", "sklearn"))
    results = []
    for cell in json.loads(sys.argv[3]):  # each cell as the sandbox runs one
        sys.audit("mlcourse.request")
        namespace = {}
        exec(compile(cell, "<ipython-input-1-cell>", "exec"), namespace)  # (as IPython names it)
        results.append(namespace.get("result"))
    os.set_blocking(read_fd, False)
    data = b""
    try:
        while chunk := os.read(read_fd, 1 << 16):
            data += chunk
    except BlockingIOError:
        pass
    events = []
    while data:
        n = int.from_bytes(data[:4], "big")
        events.append(json.loads(data[4:4 + n]))
        data = data[4 + n:]
    print(json.dumps({"loaded_by_watch": loaded, "results": results, "events": events}))
""")


def _watch(names, *cells):
    """Install the watch on ``names`` in a fresh interpreter, run ``cells``; returns
    ``(modules of scipy/sklearn loaded after the watch was installed, each cell's `result`,
    the events it reported as "kind what")``."""
    proc = subprocess.run(
        [sys.executable, "-I", "-c", _WATCH, RUNNER, json.dumps(names), json.dumps(cells)],
        capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    events = [f"{e['event']} {e.get('name', e.get('what'))}" for e in report["events"]]
    return report["loaded_by_watch"], report["results"], events


_NAMES = ["scipy.optimize", "scipy.special.logsumexp", "scipy.stats.beta.interval",
          "scipy.stats.norm"]


def test_watch_imports_nothing_and_catches_a_module_imported_later():
    """No scipy module is imported by the watch itself; a function that imports scipy.stats
    and calls norm.pdf later is reported, and the stand-in returns scipy's value."""
    loaded, results, events = _watch(
        _NAMES,
        "def answer(x):\n"
        "    from scipy.stats import norm\n"
        "    return norm.pdf(x)\n"
        "result = float(answer(0.0))\n")
    assert loaded == []
    assert events == ["forbidden scipy.stats.norm.pdf"]
    # The standard normal density at 0 is 1 / sqrt(2 pi) (two operations and a division).
    assert math.isclose(results[0], 1 / math.sqrt(2 * math.pi), rel_tol=few_ops(4))


def test_watch_catches_a_name_reached_through_another_module():
    """The function is replaced in every module that holds it once its module is imported: a
    private module's copy, a distribution reached through the module that defines its class, a
    method of a frozen distribution, and a function under a forbidden prefix."""
    loaded, results, events = _watch(
        _NAMES,
        "import importlib\n"
        "private = importlib.import_module('scipy.special._' + 'logsumexp')\n"
        "result = float(getattr(private, 'logsum' + 'exp')([1.0, 2.0]))\n",
        "import scipy.stats._continuous_distns as distns\n"
        "result = float(distns.norm.logpdf(0.0))\n",
        "from scipy import stats\n"
        "result = [float(v) for v in stats.beta(2.0, 2.0).interval(0.5)]\n",
        "from scipy.optimize import minimize_scalar\n"
        "result = float(minimize_scalar(lambda t: (t - 3.0) ** 2).x)\n")
    assert loaded == []
    assert events == ["forbidden scipy.special.logsumexp", "forbidden scipy.stats.norm.logpdf",
                      "forbidden scipy.stats.beta.interval",
                      "forbidden scipy.optimize.minimize_scalar"]
    # log(e + e^2) = 2 + log1p(e^-1); log of the normal density at 0 is -log(2 pi) / 2.
    assert math.isclose(results[0], 2 + math.log1p(math.exp(-1)), rel_tol=few_ops(6))
    assert math.isclose(results[1], -0.5 * math.log(2 * math.pi), rel_tol=few_ops(4))
    # Beta(2, 2) is symmetric about 1/2: its central interval is symmetric too.
    assert results[2][0] < 0.5 < results[2][1]
    assert math.isclose(results[2][0] + results[2][1], 1.0, rel_tol=1e-9)  # (a root finder's)
    assert abs(results[3] - 3.0) < 1e-6  # (Brent's method's default tolerance, 1.48e-8 in x)


def test_an_import_that_avoids_the_watch_hook_is_reported_and_still_caught():
    """A finder put before the watch's, or the watch's removed: either is reported (it could
    disable the watch); a module imported without the hook is still resolved before the next
    cell runs, so its forbidden call is caught there."""
    _, _, events = _watch(
        _NAMES,
        "import sys\n"
        "class First:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        return None\n"
        "sys.meta_path.insert(0, First())\n"
        "import scipy.stats\n"
        "result = float(scipy.stats.norm.cdf(0.0))\n")
    assert events == ["monitor puts an import hook before the watch",
                      "forbidden scipy.stats.norm.cdf"]
    _, _, events = _watch(
        _NAMES,
        "import sys\n"
        "sys.meta_path[:] = [f for f in sys.meta_path if type(f).__name__ != 'Finder']\n"
        "import scipy.special\n",
        "import scipy.special\n"
        "result = float(scipy.special.logsumexp([0.0, 0.0]))\n")
    assert events == ["monitor removes the import hook", "forbidden scipy.special.logsumexp"]


def test_watch_resolves_at_once_what_is_loaded():
    """A name whose module is loaded (numpy, imported by the runner before the watch) is
    watched when the watch starts (the function's own code becomes the stand-in's, behind
    numpy's dispatcher too); one not loaded is only watched on import."""
    proc = subprocess.run(
        [sys.executable, "-I", "-c", textwrap.dedent("""
            import importlib.util, json, os, sys
            import numpy
            runner = type(sys)("mlcourse_runner")  # (its text, compiled as `python -c` does)
            exec(compile(sys.argv[1], "<string>", "exec"), vars(runner))
            r, w = os.pipe()
            print(json.dumps(runner._install_monitor(
                ["numpy.cov", "numpy.loadtxt", "scipy.stats.norm"], w)))
            print(json.dumps(["mlcourse.forbidden" in f.__code__.co_consts
                              for f in (numpy.cov._implementation, numpy.loadtxt)]))
        """), RUNNER], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (count, prefixes), stand_ins = (json.loads(line) for line in proc.stdout.splitlines()[-2:])
    assert count == 2
    assert prefixes == ["scipy.stats.norm"]
    assert stand_ins == [True, True]


def test_watch_catches_a_numpy_function_with_array_dispatch():
    """numpy.cov is a callable object in numpy 2 (array-function dispatch), not a function: its
    implementation is watched, so a name built at run time is caught."""
    _, results, events = _watch(
        ["numpy.cov"],
        "import numpy as np\n"
        "result = float(getattr(np, 'c' + 'ov')([1.0, 2.0, 3.0]))\n")
    assert events == ["forbidden numpy.cov"]
    assert results == [1.0]  # the sample variance of 1, 2, 3: (1 + 0 + 1) / 2, exact


@pytest.mark.slow
def test_sandbox_watch_is_lazy_end_to_end(tmp_path):
    """Through the real sandbox: the watch loads no scipy module, and a function that imports
    scipy.stats at call time is reported while that call runs."""
    from mlcourse_utils.grading.sandbox.channel import Sandbox

    box = Sandbox(hidden=[ROOT, tmp_path], memory_mb=2048)
    try:
        box.start()
        box.monitor(_NAMES, 60)
        error, _ = box.exec_cell(
            "import sys\n"
            "def loaded():\n"
            "    return sorted(m for m in sys.modules if m.startswith('scipy'))\n"
            "def answer(x):\n"
            "    import scipy.stats as st\n"
            "    return st.norm.sf(x)\n", 60)
        assert error is None
        assert box.call("loaded", (), {}, 60)[0] == []
        assert box.events == []
        value, _ = box.call("answer", (0.0,), {}, 60)
        assert box.events == ["forbidden scipy.stats.norm.sf"]
        assert value == 0.5  # (the survival function at the median: exactly one half)
    finally:
        box.kill()
