"""The command line: light to start, one line per error, portable student path, clean Ctrl-C.

What cannot run on this Linux machine is simulated: the modules Windows lacks are made
unimportable in the `mlcourse` process, and folder names carry backslashes, a drive colon,
spaces and non-ASCII letters (legal in a Linux file name), with output to a cp1252 pipe as on a
Windows console.
"""

from __future__ import annotations

import argparse
import glob
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import assignment_support as sup
from mlcourse_utils import __version__, cli

PYTHON = sys.executable

#: Modules of the standard library that exist on POSIX only (Windows has none of them).
POSIX_ONLY = ("resource", "fcntl", "termios", "pwd", "grp", "pty", "tty", "_posixshmem",
              "syslog")

#: Modules that `mlcourse --help` must not import: numpy, the notebook stack, the grader.
HEAVY = ("numpy", "nbformat", "nbclient", "jupyter_client", "resource",
         "mlcourse_utils.grading")

#: Runs `mlcourse` (argv from the command line) with the POSIX-only modules unimportable.
BLOCKED_MAIN = f"""
import runpy, sys
for name in {POSIX_ONLY!r}:
    sys.modules[name] = None
sys.argv[0] = "mlcourse"
runpy.run_module("mlcourse_utils", run_name="__main__")
"""


def run(args, **kwargs):
    kwargs.setdefault("timeout", 300)
    return subprocess.run(args, capture_output=True, text=True, **kwargs)


def test_help_imports_nothing_heavy():
    """`mlcourse --help` loads neither numpy, nbformat nor the grader (nor resource)."""
    code = ("import sys\nfrom mlcourse_utils.cli import main\ntry:\n    main(['--help'])\n"
            "except SystemExit:\n    pass\nprint('\\n'.join(sorted(sys.modules)), file=sys.stderr)")
    proc = run([PYTHON, "-c", code])
    modules = set(proc.stderr.split())
    assert "mlcourse_utils.cli" in modules and "argparse" in modules
    loaded = sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY))
    assert not loaded, f"mlcourse --help imported {loaded}"


def _subparsers(parser):
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return action.choices


def test_every_command_and_option_has_help_and_an_example():
    parser = cli.make_parser()
    commands = _subparsers(parser)
    assert set(commands) == set(cli.COMMANDS)
    for name, sub in commands.items():
        assert sub.description and "example:" in sub.epilog, name
        assert f"mlcourse {name}" in sub.epilog or f"mlcourse_utils {name}" in sub.epilog, name
        for action in sub._actions:
            if not isinstance(action, argparse._HelpAction):
                assert action.help, f"mlcourse {name}: {action.dest} has no help text"
    for action in parser._actions:
        assert action.help, action.dest


def test_help_defaults_are_the_modules_own():
    """The defaults printed in the help are those the modules use (they are not imported for
    --help, so the numbers are repeated in cli.py)."""
    from mlcourse_utils.grading import execute, release, session, similarity

    assert cli.GRADE_BUDGET_FACTOR == session.DEFAULT_BUDGET_FACTOR
    assert cli.SIMILARITY_THRESHOLD == similarity.THRESHOLD
    assert cli.SIMILARITY_MIN_TOKENS == similarity.MIN_TOKENS
    assert cli.CHECK_TIMEOUT == release.DEFAULT_TIMEOUT
    assert cli.CHECK_BUDGET_FACTOR == execute.BUDGET_FACTOR


def test_python_dash_m_mlcourse_utils():
    proc = run([PYTHON, "-m", "mlcourse_utils", "--version"])
    assert proc.returncode == 0 and proc.stdout.strip() == f"mlcourse {__version__}"
    proc = run([PYTHON, "-m", "mlcourse_utils", "check", "nope.ipynb"])
    assert proc.returncode == 1
    assert proc.stderr.strip() == "mlcourse check: nope.ipynb does not exist"


def _fake(monkeypatch, action, module="json"):
    """Add a command `fake` whose run function does ``action()``."""
    def runner(_module, _args):
        action()
        return 0
    monkeypatch.setitem(cli.COMMANDS, "fake", cli.Command(
        "a command for this test", module, runner, lambda p: None, "mlcourse fake"))


def _raise(exc):
    def action():
        raise exc
    return action


@pytest.mark.parametrize("exc,status,text", [
    (ValueError("X has 3 rows but y has 4 entries"), 1, "X has 3 rows but y has 4 entries"),
    (FileNotFoundError("no source notebook solutions/x/x.ipynb"), 1, "no source notebook"),
    (RuntimeError("the student edition did not build"), 1, "did not build"),
    (subprocess.CalledProcessError(3, ["nbgrader", "x"]), 1,
     "nbgrader failed with exit status 3"),
    (cli.UsageError("--timeout must be positive"), 2, "--timeout must be positive"),
    (KeyboardInterrupt(), 130, "interrupted"),
    (TypeError("unsupported operand"), 1, "unexpected error (TypeError: unsupported operand)"),
])
def test_one_wrapper_maps_errors_to_one_line_and_a_status(monkeypatch, capsys, exc, status,
                                                          text):
    _fake(monkeypatch, _raise(exc))
    assert cli.main(["fake"]) == status
    err = capsys.readouterr().err
    assert err.startswith("mlcourse fake: ") and text in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_traceback_option_shows_an_unexpected_error(monkeypatch):
    _fake(monkeypatch, _raise(TypeError("unsupported operand")))
    with pytest.raises(TypeError):
        cli.main(["--traceback", "fake"])


def test_a_command_missing_from_this_installation_says_what_to_install(monkeypatch, capsys):
    """The student wheel has no grader: its commands say to install the full package."""
    for module in ("mlcourse_utils.no_such_module", "mlcourse_utils.no_such_package.module"):
        _fake(monkeypatch, lambda: None, module=module)
        assert cli.main(["fake"]) == 2
        assert "install the full course package" in capsys.readouterr().err


def test_usage_errors_exit_2(capsys):
    assert cli.main(["check", "x.ipynb", "--timeout", "0"]) == 2
    with pytest.raises(SystemExit) as info:
        cli.main(["no-such-command"])
    assert info.value.code == 2


def test_student_modules_import_without_posix_only_modules():
    """What `mlcourse check` and the visible test cells import works where Windows lacks
    resource, fcntl, termios, pwd and grp; the grader's sandbox (Linux only) does not."""
    code = BLOCKED_MAIN.split("sys.argv")[0] + (
        "import mlcourse_utils.cli, mlcourse_utils.grading.selfcheck, "
        "mlcourse_utils.grading.execute, mlcourse_utils.grading, mlcourse_utils.datasets\n"
        "import nbclient, jupyter_client.manager, ipykernel.kernelspec\n"
        "try:\n    import mlcourse_utils.grading.sandbox\nexcept ImportError:\n"
        "    print('sandbox needs POSIX')\n")
    proc = run([PYTHON, "-c", code])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "sandbox needs POSIX"


def test_help_without_posix_only_modules():
    proc = run([PYTHON, "-c", BLOCKED_MAIN, "--help"])
    assert proc.returncode == 0, proc.stderr
    assert "check" in proc.stdout


@pytest.mark.slow
def test_check_with_windows_style_paths_and_no_posix_modules(tmp_path):
    """`python -m mlcourse_utils check` on the solved mle notebook in a folder named like a
    Windows path (backslashes, a drive colon, spaces, ß and ł), with the POSIX-only modules
    unimportable and output to a cp1252 pipe: every visible test passes (16 in mle)."""
    folder = tmp_path / "C:\\Users\\Jürgen Groß\\Übung 1 (Łódź)"
    nb = sup.make_submission("mle", sup.solution_answers("mle"))
    path = sup.write_submission(folder, "", "mle", nb=nb)
    env = dict(os.environ, PYTHONIOENCODING="cp1252")
    proc = run([PYTHON, "-c", BLOCKED_MAIN, "check", str(path)], env=env, cwd=folder)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "16 passed, 0 failed, 10 hidden" in proc.stdout
    # Each task's rule on calls, one line each (the forbidden calls of tests/test_forbidden).
    rule = next(ln for ln in proc.stdout.splitlines() if ln.startswith("  rule: poisson_rate_mle:"))
    assert "scipy.stats.poisson" in rule and rule.endswith("standard library is allowed")
    assert sum(ln.startswith("  rule: ") for ln in proc.stdout.splitlines()) == 8
    relative = run([PYTHON, "-c", BLOCKED_MAIN, "check", "mle.ipynb"], env=env, cwd=path.parent)
    assert relative.returncode == 0, relative.stdout + relative.stderr
    # A message with a letter cp1252 lacks (Ł) is escaped, not a UnicodeEncodeError.
    missing = run([PYTHON, "-c", BLOCKED_MAIN, "check", str(folder / "nope.ipynb")], env=env,
                  encoding="cp1252")
    assert missing.returncode == 1 and "Traceback" not in missing.stderr
    assert missing.stderr.strip().endswith(r"(\u0141" + "ód" + r"\u017a)/nope.ipynb does not exist")


@pytest.mark.slow
def test_missing_kernel_from_the_command_line(tmp_path):
    path = sup.write_submission(tmp_path, "s", "mle", nb=sup.release_notebook("mle"))
    code = ("import sys\nsys.modules['ipykernel'] = None\n"
            "sys.modules['ipykernel.kernelspec'] = None\n"
            "from mlcourse_utils.cli import main\nsys.exit(main(['check', sys.argv[1]]))")
    proc = run([PYTHON, "-c", code, str(path)])
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.startswith("mlcourse check: no Python kernel")
    assert "pip install ipykernel" in proc.stderr and len(proc.stderr.splitlines()) == 1


def _kernels_using(folder):
    """Processes whose command line mentions ``folder`` (the kernel's connection file)."""
    found = []
    for cmdline in glob.glob("/proc/[0-9]*/cmdline"):
        try:
            text = Path(cmdline).read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if str(folder) in text:
            found.append(text)
    return found


@pytest.mark.slow
@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_interrupt_ends_the_check_its_kernel_and_its_scratch_folder(tmp_path, sig):
    """An endless loop with a long --timeout; Ctrl-C (SIGINT to the process group, as a terminal
    sends it) or SIGTERM ends `mlcourse check` with status 130, kills the kernel and removes the
    scratch folder. Waits are bounded (180 s for the kernel process to appear, as a loaded 2-core
    machine took over 30 s; 180 s for the exit, which takes 0.3 s even beside 16 CPU hogs; a
    check that hangs still fails, with its stacks)."""
    answers = sup.solution_answers("mle")
    answers["bernoulli_mle"] = "def bernoulli_mle(x):\n    while True:\n        pass\n"
    path = sup.write_submission(tmp_path, "s", "mle", nb=sup.make_submission("mle", answers))
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    # Started as from a terminal: with Ctrl-C's default action. A suite run as a background job
    # of a shell without job control (`make test &`) ignores SIGINT, and every process it starts
    # inherits that, so the check would never see the Ctrl-C. (PYTHONFAULTHANDLER: a check that
    # hangs is made to print where, see below.)
    as_from_a_terminal = ("import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
                          "os.execv(sys.argv[1], sys.argv[1:])")
    proc = subprocess.Popen([sys.executable, "-c", as_from_a_terminal, sup.MLCOURSE, "check",
                             str(path), "--timeout", "300"],
                            env=dict(os.environ, TMPDIR=str(scratch), PYTHONFAULTHANDLER="1"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        # The connection file is written before the kernel process starts: wait for the process.
        for _ in range(1800):
            if (glob.glob(str(scratch / "mlcourse-run-*" / "kernel.json"))
                    and _kernels_using(scratch)):
                break
            time.sleep(0.1)
        assert _kernels_using(scratch), "the kernel did not start"
        time.sleep(2)  # into the notebook's cells
        os.killpg(proc.pid, getattr(signal, sig))
        try:
            out, err = proc.communicate(timeout=180)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGABRT)  # every thread's stack, by faulthandler
            pytest.fail("mlcourse check did not end 180 s after the interrupt; it was at:\n"
                        + proc.communicate(timeout=60)[1][-8000:])
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, out + err
    assert err.strip() == "mlcourse check: interrupted"
    assert list(scratch.iterdir()) == []
    assert _kernels_using(scratch) == []
