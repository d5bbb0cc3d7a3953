"""Running a notebook in a kernel always ends: cell timeouts, a budget, dead and missing kernels.

The kernels are real (ipykernel in this environment); every run is bounded by a small budget,
and every test waits for it in a thread with a generous upper bound, so a regression fails the
test instead of hanging the suite. No assertion is about speed.
"""

from __future__ import annotations

import os
import sys
import threading

import nbformat
import pytest

from mlcourse_utils.grading.execute import (
    MAX_IPC_PATH,
    KernelError,
    execute_notebook,
    kernel_transport,
)

#: Upper bound on any one run in these tests (their budgets are a few seconds).
BOUND = 180


def notebook(*sources):
    return nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources])


def run_bounded(nb, **kwargs):
    """execute_notebook in a thread, failing the test if it has not returned within BOUND s."""
    box = {}

    def target():
        try:
            box["result"] = execute_notebook(nb, **kwargs)
        except BaseException as exc:  # noqa: BLE001 (handed to the test)
            box["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(BOUND)
    assert not thread.is_alive(), f"execute_notebook did not return within {BOUND} s"
    if "error" in box:
        raise box["error"]
    return box["result"]


def statuses(run):
    return [(c.index, c.status) for c in run.cells]


def stdout_of(cell):
    return "".join(o.get("text", "") for o in cell.outputs if o.get("output_type") == "stream")


def test_kernel_transport_by_platform(tmp_path):
    """IPC sockets in the scratch folder on POSIX; TCP on Windows ("nt"), which has no IPC, and
    where the socket path would exceed the Unix-socket limit (104 bytes on macOS)."""
    assert kernel_transport("posix", str(tmp_path)) == ("ipc", os.path.join(tmp_path, "kernel"))
    assert kernel_transport("nt", str(tmp_path)) == ("tcp", "127.0.0.1")
    deep = os.path.join(str(tmp_path), "d" * MAX_IPC_PATH)
    assert kernel_transport("posix", deep) == ("tcp", "127.0.0.1")


def test_bad_limits_are_rejected():
    with pytest.raises(ValueError, match="timeout"):
        execute_notebook(notebook("1"), timeout=0)
    with pytest.raises(ValueError, match="budget"):
        execute_notebook(notebook("1"), timeout=1, budget=-1)


@pytest.mark.slow
def test_errors_do_not_stop_the_run_and_data_files_are_copied(tmp_path):
    """Each cell's first error is recorded and later cells still run; a small file beside the
    notebook is readable by name; the notebook's folder is not written."""
    (tmp_path / "data.txt").write_text("7")
    before = sorted(p.name for p in tmp_path.iterdir())
    nb = notebook("x = int(open('data.txt').read())", "1 / 0", "print(x * 6)")
    run = run_bounded(nb, folder=tmp_path, timeout=30, budget=60)
    assert statuses(run) == [(0, "ok"), (1, "error"), (2, "ok")]
    assert run.cells[1].error == "ZeroDivisionError: division by zero"
    assert stdout_of(nb.cells[2]).strip() == "42"
    assert run.stopped == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == before


@pytest.mark.slow
def test_the_prelude_runs_first_and_is_no_cell():
    """A prelude (what `mlcourse check` runs when a notebook lacks its id cell) defines a name
    the first cell reads; it prints nothing, gets no result, and it is not in the history (In
    holds '' and the two cells) nor counted (the first cell's execution count is 1)."""
    nb = notebook("print(repr(STUDENT_ID))", "print(len(In))")
    run = run_bounded(nb, timeout=30, budget=60, prelude='STUDENT_ID = ""')
    assert statuses(run) == [(0, "ok"), (1, "ok")]
    assert stdout_of(nb.cells[0]).strip() == "''"
    assert nb.cells[0].execution_count == 1
    assert stdout_of(nb.cells[1]).strip() == "3"


@pytest.mark.slow
def test_endless_loop_is_interrupted_and_the_run_goes_on():
    """A cell over its time limit is interrupted; the kernel keeps its state (x) for the rest."""
    nb = notebook("x = 5", "while True:\n    pass", "print(x + 1)")
    run = run_bounded(nb, timeout=2, budget=60)
    assert statuses(run) == [(0, "ok"), (1, "timeout"), (2, "ok")]
    assert "2 s" in run.cells[1].error
    assert stdout_of(nb.cells[2]).strip() == "6"


@pytest.mark.slow
def test_loop_that_ignores_interrupts_stops_the_run():
    """A loop that swallows KeyboardInterrupt keeps the kernel busy: the run stops there and
    names the later cells as not run (instead of timing out on every one of them)."""
    stubborn = ("import time\nwhile True:\n    try:\n        time.sleep(5)\n"
                "    except KeyboardInterrupt:\n        pass")
    run = run_bounded(notebook("x = 1", stubborn, "print(x)", "print(2)"), timeout=2, budget=60)
    assert statuses(run) == [(0, "ok"), (1, "timeout"), (2, "not run"), (3, "not run")]
    assert run.stopped == "the kernel did not stop when interrupted" and run.stopped_at == 1


@pytest.mark.slow
def test_budget_ends_the_run():
    """With a budget below the per-cell limit, the budget ends a long cell and the run."""
    run = run_bounded(notebook("import time\ntime.sleep(120)", "print(1)"), timeout=100,
                      budget=8)
    assert statuses(run) == [(0, "timeout"), (1, "not run")]
    assert "budget of 8 s" in run.cells[0].error and run.stopped_at == 0


@pytest.mark.slow
def test_kernel_that_dies_in_a_cell_stops_the_run():
    run = run_bounded(notebook("x = 1", "import os\nos._exit(1)", "print(x)"), timeout=30,
                      budget=60)
    assert statuses(run) == [(0, "ok"), (1, "died"), (2, "not run")]
    assert run.stopped == "the kernel died"


def test_missing_kernel_is_one_line(monkeypatch):
    """Without ipykernel there is no kernel: a KernelError of one line naming the package."""
    monkeypatch.setitem(sys.modules, "ipykernel", None)
    monkeypatch.setitem(sys.modules, "ipykernel.kernelspec", None)
    with pytest.raises(KernelError) as info:
        execute_notebook(notebook("1"), timeout=5)
    message = str(info.value)
    assert "pip install ipykernel" in message and "\n" not in message


FAKE_LAUNCHER = """\
import sys
print("ImportError: libzmq.so.5: cannot open shared object file", file=sys.stderr)
sys.exit(3)
"""


@pytest.mark.slow
def test_kernel_that_dies_at_start_is_one_line(tmp_path, monkeypatch):
    """A broken kernel install (simulated: an ipykernel_launcher that exits at once, first on
    the kernel's PYTHONPATH) gives one line with its exit status, its last words and the fix."""
    (tmp_path / "ipykernel_launcher.py").write_text(FAKE_LAUNCHER)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    with pytest.raises(KernelError) as info:
        run_bounded(notebook("1"), timeout=5, budget=30)
    message = str(info.value)
    assert "stopped while starting (exit status 3)" in message
    assert "libzmq.so.5" in message and "pip install --force-reinstall ipykernel" in message
    assert "\n" not in message


@pytest.mark.slow
def test_kernel_that_never_answers_is_one_line(tmp_path, monkeypatch):
    (tmp_path / "ipykernel_launcher.py").write_text("import time\ntime.sleep(600)\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    with pytest.raises(KernelError, match="did not answer within 4 s"):
        run_bounded(notebook("1"), timeout=5, budget=4)
