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
import queue
import signal
import subprocess
import sys
import threading
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
    --help, so the numbers are repeated in cli.py). The time limits are not repeated: every
    command's --timeout defaults to None, the assignment's own limit."""
    from mlcourse_utils.grading.similarity import pairs

    assert cli.SIMILARITY_THRESHOLD == pairs.THRESHOLD
    assert cli.SIMILARITY_MIN_TOKENS == pairs.MIN_TOKENS
    parser = cli.make_parser()
    for argv in (["check", "x.ipynb"], ["grade", "mle", "s", "--out", "o"], ["release"]):
        args = parser.parse_args(argv)
        assert args.timeout is None, argv
        assert getattr(args, "budget", None) is None and \
            getattr(args, "student_timeout", None) is None, argv


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
        "try:\n    import mlcourse_utils.grading.sandbox.channel\nexcept ImportError:\n"
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
def test_check_prints_each_test_as_it_finishes(tmp_path):
    """`mlcourse check` read through a pipe as it runs: the solved mle notebook, whose last answer
    cell (poisson_rate_mle's) waits until a file exists, and creates that file only after a
    test's result line has come through the pipe. Had the line been held back, the cell would
    give up waiting (after 120 s), fail, and poisson_rate_mle's two visible tests with it: all
    16 passing shows that the line came while the notebook still ran. The first line says which
    variant is checked (the release's id cell is empty: the default one, and what to do); the
    next names the notebook, its 26 test cells (10 hidden) and the per-cell limit of the command
    line."""
    go = tmp_path / "go"
    answers = sup.solution_answers("mle")
    answers["poisson_rate_mle"] = (
        "import os as _os, time as _time\n"
        "_start = _time.monotonic()\n"
        f"while not _os.path.exists({str(go)!r}) and _time.monotonic() - _start < 120:\n"
        "    _time.sleep(0.05)\n"
        f"if not _os.path.exists({str(go)!r}):\n"
        "    raise RuntimeError('the check held its output back')\n"
        + answers["poisson_rate_mle"])
    path = sup.write_submission(tmp_path, "s", "mle", nb=sup.make_submission("mle", answers))
    proc = subprocess.Popen([sup.MLCOURSE, "check", str(path), "--timeout", "300"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in proc.stdout] + [lines.put(None)],
                     daemon=True).start()
    seen = []
    try:
        while not any(line.startswith("  ok ") for line in seen):
            line = lines.get(timeout=240)  # (kernel start on a loaded machine: seconds to a minute)
            assert line is not None, "the check ended before printing a result: " + "".join(seen)
            seen.append(line)
        assert not go.exists() and proc.poll() is None  # poisson_rate_mle's cell is waiting
        go.touch()
        while (line := lines.get(timeout=300)) is not None:
            seen.append(line)
        proc.wait(timeout=60)
        err = proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
    output = "".join(seen)
    # write_submission types the folder's name, "s", in the id cell, as an honest student would
    assert seen[0].startswith("checking as student s (your variant: section 10: ")
    assert seen[1] == "checking mle.ipynb: 26 test cells (10 hidden: they run when graded), " \
                      "300 s per cell\n"
    assert proc.returncode == 0, output + err
    assert output.rstrip().endswith("16 passed, 0 failed, 10 hidden (hidden tests run when your "
                                    "notebook is graded)")
    assert "  ok       test_poisson_rate_mle_large\n" in output


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


def test_course_option_names_the_course_while_the_command_runs(monkeypatch, tmp_path, capsys):
    """`--course DIR` is what every command that works in the course sees (the environment
    variable, so the hidden tests' own look-up finds it too); it is gone afterwards."""
    from mlcourse_utils import course

    seen = []
    monkeypatch.delenv(course.COURSE_ENV, raising=False)
    monkeypatch.setitem(cli.COMMANDS, "fake", cli.Command(
        "a command for this test", "json", lambda m, a: seen.append(course.find_course_root()),
        lambda p: None, "mlcourse fake", course=True))
    (tmp_path / "solutions").mkdir()
    (tmp_path / "nbgrader_config.py").write_text("")
    cli.main(["fake", "--course", str(tmp_path)])
    assert seen == [tmp_path.resolve()]
    assert course.COURSE_ENV not in os.environ
    assert cli.main(["fake", "--course", str(tmp_path / "solutions")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("mlcourse fake: --course ") and "is not a course folder" in err


def test_every_command_that_reads_the_course_takes_course():
    parser = cli.make_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name in ("release", "grade", "grade-merge", "similarity", "grade-import", "feedback",
                 "export", "report"):
        assert "--course" in sub.choices[name].format_help(), name
    assert "--course" not in sub.choices["check"].format_help()  # a student's own notebook


def test_outside_a_course_one_line_says_how_to_name_it(monkeypatch, tmp_path, capsys):
    """As a TA with a non-editable install, in a folder of the term outside the repository."""
    from mlcourse_utils import course

    monkeypatch.setattr(course, "ROOT", tmp_path / "site-packages")
    monkeypatch.delenv(course.COURSE_ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    assert cli.main(["similarity", "mle", "submissions", "--out", "similar"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--course DIR" in err and "MLCOURSE_COURSE" in err


def test_build_ends_with_where_the_site_and_the_wheel_are(monkeypatch, tmp_path, capsys):
    """The closing block of `mlcourse build` (the build itself is test_website's)."""
    from mlcourse_utils.course import student_wheel_name

    monkeypatch.chdir(tmp_path)
    fake = argparse.Namespace(build_book=lambda instructor, out: tmp_path / "_build" / "html")
    cli._build(fake, argparse.Namespace(instructor=False, out=None))
    out = capsys.readouterr().out
    assert f"_build{os.sep}html{os.sep}" in out and "index.html" in out
    assert student_wheel_name() in out and "make instructor" in out
    cli._build(fake, argparse.Namespace(instructor=True, out=None))
    assert "never publish" in capsys.readouterr().out


def test_grade_builds_one_options_record_from_its_arguments(tmp_path):
    """Every grading flag lands in the GradingOptions that grade_class receives (the roster
    beside it, as an input); flags left out keep the record's defaults."""
    from mlcourse_utils.grading.engine.batch import parse_shard
    from mlcourse_utils.grading.engine.options import GradingOptions

    calls = []

    def grade_class(name, submissions, out, options, **inputs):
        calls.append((name, submissions, out, options, inputs))
        return argparse.Namespace(max_score=1, manual=[]), {}

    batch = argparse.Namespace(grade_class=grade_class, parse_shard=parse_shard,
                               read_secret=lambda path: b"s" * 32)
    out = str(tmp_path / "graded")
    cli._grade(batch, cli.make_parser().parse_args([
        "grade", "mle", "subs", "--out", out, "--jobs", "3", "--timeout", "7",
        "--student-timeout", "90", "--memory", "512", "--secret-file", "secret.txt",
        "--shard", "2/5", "--require-isolation", "--force", "-v", "--roster", "r.csv"]))
    cli._grade(batch, cli.make_parser().parse_args(["grade", "mle", "subs", "--out", out]))
    (name, subs, where, chosen, inputs), (*_, default, _) = calls
    assert (name, subs, where, inputs) == ("mle", "subs", out, {"roster": "r.csv"})
    assert chosen == GradingOptions(timeout=7, student_timeout=90, memory_mb=512,
                                    secret=b"s" * 32, jobs=3, shard=(2, 5),
                                    require_isolation=True, force=True, verbose=True)
    assert default == GradingOptions()


@pytest.mark.skipif(not __import__("shutil").which("git"), reason="git is not installed")
def test_grade_warns_before_writing_into_a_folder_git_would_track(tmp_path, capsys):
    """One line on stderr before grading starts (the grading itself is stubbed here)."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".gitignore").write_text("/private/\n")
    calls = []

    def grade_class(name, submissions, out, **options):
        calls.append(capsys.readouterr().err)  # what was printed before grading began
        return argparse.Namespace(max_score=1, manual=[]), {}

    batch = argparse.Namespace(grade_class=grade_class, parse_shard=None, read_secret=None)
    for out, warned in ((tmp_path / "graded", True), (tmp_path / "private" / "graded", False)):
        args = cli.make_parser().parse_args(["grade", "mle", "subs", "--out", str(out)])
        cli._grade(batch, args)
        assert ("warning: " in calls[-1] and "git add -A" in calls[-1]) is warned
