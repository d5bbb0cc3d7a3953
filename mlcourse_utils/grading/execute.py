"""Running a notebook's cells in a fresh Python kernel, with a time limit per cell and in all.

``mlcourse check`` (a student's notebook) and ``mlcourse release`` (each solution notebook) run
notebooks through :func:`execute_notebook`, which drives nbclient's asynchronous client so that
every wait has a deadline and the run always ends:

* a cell may run ``timeout`` seconds (nbclient's own per-cell timeout); then the kernel is
  interrupted, and the run goes on with the next cell, unless the kernel is still busy a few
  seconds later (a loop that catches ``KeyboardInterrupt``): then the run stops there;
* the whole run, start-up included, may take ``budget`` seconds; then the kernel is killed;
* a kernel that is missing, exits while starting or never answers raises :class:`KernelError`,
  whose message is one line saying what to install;
* a kernel that dies while a cell runs (out of memory, ``os._exit``, a crash) stops the run
  with that cell named;
* Ctrl-C (and SIGTERM on POSIX) kills the kernel, removes the scratch folder and raises
  ``KeyboardInterrupt``.

The kernel is this Python (``sys.executable -m ipykernel_launcher``): the interpreter that runs
``mlcourse`` has the course package the test cells import, whatever kernels Jupyter has
registered elsewhere. It talks over local IPC sockets on POSIX (no TCP port to clash or to
warn about) and over TCP on 127.0.0.1 on Windows, which has no IPC transport.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import math
import os
import shutil
import signal
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..course import BUDGET_FACTOR, DEFAULT_TIMEOUT

#: Largest file next to a notebook that is copied into its scratch folder (data it may read).
MAX_COPIED_FILE = 5 * 2**20
#: Seconds a kernel may take to start and answer (less when the budget is smaller).
STARTUP_TIMEOUT = 60.0
#: Seconds an interrupted kernel has to become idle again before the run stops.
INTERRUPT_GRACE = 5.0
#: Seconds each step of stopping a kernel may take (stopping never waits longer than a few).
STOP_WAIT = 5.0
#: Unix socket paths are limited to 104 (macOS) or 108 (Linux) bytes; a longer scratch path
#: (a deep temporary folder) falls back to TCP on 127.0.0.1.
MAX_IPC_PATH = 96


class KernelError(RuntimeError):
    """No kernel could be started; the message is one line with what to install or do."""


@dataclasses.dataclass
class CellResult:
    """What happened to one code cell: "ok", "error", "timeout", "died" or "not run".

    ``error`` is ``"ename: evalue"`` for an error and the reason for the other statuses.
    """

    index: int
    status: str
    error: str = ""


@dataclasses.dataclass
class Execution:
    """The code cells of one run, in notebook order, and why it stopped early.

    ``stopped`` is '' when every cell ran, else a phrase such as "the kernel died";
    ``stopped_at`` is the position of the cell where it stopped (None: between cells).
    """

    cells: list[CellResult]
    stopped: str = ""
    stopped_at: int | None = None

    def result(self, index: int) -> CellResult | None:
        """The result of the cell at position ``index`` of the notebook (None: not a code cell)."""
        return next((c for c in self.cells if c.index == index), None)


def kernel_transport(platform: str, folder: str) -> tuple[str, str]:
    """``(transport, ip)`` for a kernel whose sockets may live in ``folder``.

    ``platform`` is ``os.name``: IPC sockets in ``folder`` on POSIX, TCP on 127.0.0.1 on
    Windows ("nt") and where the socket path would be too long for a Unix socket.
    """
    ip = os.path.join(folder, "kernel")
    if platform == "nt" or len(os.fsencode(ip)) + 4 > MAX_IPC_PATH:  # "-N" port suffixes
        return "tcp", "127.0.0.1"
    return "ipc", ip


def kernel_command(python: str | None = None) -> list[str]:
    """The command that starts an IPython kernel in ``python`` (default: this interpreter).

    Raises :class:`KernelError` when ipykernel is not installed in this interpreter.
    """
    python = python or sys.executable
    try:
        from ipykernel.kernelspec import make_ipkernel_cmd
    except ImportError:
        raise KernelError(
            "no Python kernel: the package ipykernel is not installed in this Python "
            f"({python}); install it with `python -m pip install ipykernel` in that "
            "environment") from None
    return make_ipkernel_cmd(executable=python)


def _kernel_spec_manager(argv: list[str]) -> Any:
    """A kernel-spec manager whose every kernel name means ``argv`` (this Python's kernel)."""
    from jupyter_client.kernelspec import KernelSpec, KernelSpecManager

    class ThisPython(KernelSpecManager):
        def get_kernel_spec(self, kernel_name: str) -> KernelSpec:
            return KernelSpec(argv=argv, display_name="Python 3", language="python",
                              resource_dir="")

    return ThisPython()


def _copy_data_files(folder: Path, scratch: str) -> None:
    """Copy the small non-notebook files next to a notebook (data it reads) into ``scratch``."""
    with contextlib.suppress(OSError):
        for item in folder.iterdir():
            with contextlib.suppress(OSError):
                if item.is_file() and item.suffix != ".ipynb" and \
                        item.stat().st_size <= MAX_COPIED_FILE:
                    shutil.copy(item, scratch)


def execute_notebook(nb: Any, folder: Path | str | None = None, *,
                     timeout: float = DEFAULT_TIMEOUT, budget: float | None = None,
                     on_cell: Callable[[int, Any], None] | None = None,
                     on_result: Callable[[CellResult], None] | None = None,
                     skip: Callable[[int, Any], str | None] | None = None,
                     prelude: str = "") -> Execution:
    """Run every code cell of ``nb`` (an nbformat notebook, given outputs in place).

    The kernel runs in a scratch folder that receives the small files next to the notebook
    (``folder``); ``folder`` itself is never written. ``timeout`` is the limit of one cell in
    seconds (whole seconds, rounded up), ``budget`` the limit of the whole run (default
    :data:`~mlcourse_utils.course.BUDGET_FACTOR` × ``timeout``). ``on_cell(index, cell)`` is
    called before each code cell runs, ``on_result(cell_result)`` as soon as each one's
    :class:`CellResult` is known (also for the cells not run), and a cell for which
    ``skip(index, cell)`` returns a reason is not run: its status is "not run" with that reason.
    ``prelude`` is code run silently before the first cell (``mlcourse check`` defines
    ``STUDENT_ID`` there in a notebook without its id cell); it is no cell of the notebook.
    Errors do not stop the run; a kernel that stays busy, dies or runs out of budget does (see
    the module docstring). Raises :class:`KernelError` when no kernel starts and
    ``KeyboardInterrupt`` on Ctrl-C (the kernel and the scratch folder are gone by then).
    """
    if not timeout > 0:
        raise ValueError(f"timeout must be positive, got {timeout}")
    budget = BUDGET_FACTOR * timeout if budget is None else budget
    if not budget > 0:
        raise ValueError(f"budget must be positive, got {budget}")
    argv = kernel_command()
    with tempfile.TemporaryDirectory(prefix="mlcourse-run-", ignore_cleanup_errors=True) as tmp:
        if folder is not None:
            _copy_data_files(Path(folder), tmp)
        run = _Run(nb, tmp, argv, timeout, budget, on_cell, on_result, skip, prelude)
        # Windows' default (proactor) event loop lacks what ZeroMQ's asyncio support needs.
        factory = asyncio.SelectorEventLoop if os.name == "nt" else None
        try:
            with asyncio.Runner(loop_factory=factory) as runner:
                return runner.run(run.main())
        except asyncio.CancelledError:  # SIGTERM; Ctrl-C arrives as KeyboardInterrupt
            raise KeyboardInterrupt from None
        finally:
            run.kill_leftovers()  # a second Ctrl-C can cut the clean-up short


def _quiet_logger() -> logging.Logger:
    """nbclient and jupyter_client log timeouts and dead kernels; the results say it instead."""
    log = logging.getLogger("mlcourse_utils.grading.execute")
    log.propagate = False
    if not log.handlers:
        log.addHandler(logging.NullHandler())
    return log


#: What nbclient records as the reply of a cell that ran out of time (it interrupts the kernel).
_TIMEOUT_REPLY = {"ename": "CellTimeout", "evalue": "", "traceback": []}


class _Kernel:
    """The kernel of one run and its nbclient client: started within a limit, asked whether it
    is idle, stopped (or killed) whatever state it is in; every task awaited on it is cancelled
    at the end."""

    def __init__(self, nb, scratch, argv, timeout, on_cell_executed):
        from jupyter_client.manager import AsyncKernelManager
        from nbclient import NotebookClient

        self.scratch = scratch
        self.log_path = os.path.join(scratch, "kernel.log")
        self.process = None      # the kernel's Popen, once started
        self.pending = set()     # tasks to cancel at the end
        log = _quiet_logger()
        transport, ip = kernel_transport(os.name, scratch)
        self.km = AsyncKernelManager(kernel_name="python3", transport=transport, ip=ip,
                                     kernel_spec_manager=_kernel_spec_manager(argv), log=log)
        self.km.connection_file = os.path.join(scratch, "kernel.json")
        self.client = NotebookClient(
            nb, km=self.km, timeout=math.ceil(timeout), allow_errors=True,
            interrupt_on_timeout=True, error_on_timeout=_TIMEOUT_REPLY, log=log,
            on_cell_executed=on_cell_executed, resources={"metadata": {"path": scratch}})

    async def within(self, coro, limit):
        """Run ``coro`` for at most ``limit`` seconds; its task, done or not (one that is not
        is cancelled by :meth:`stop`)."""
        task = asyncio.ensure_future(coro)
        self.pending.add(task)
        await asyncio.wait({task}, timeout=limit)
        if task.done():
            self.pending.discard(task)
        return task

    async def start(self, kernel_output, budget):
        async def start():
            await self.client.async_start_new_kernel(cwd=self.scratch, stdout=kernel_output,
                                                     stderr=kernel_output)
            self.process = getattr(self.km.provisioner, "process", None)
            await self.client.async_start_new_kernel_client()

        limit = min(STARTUP_TIMEOUT, budget)
        task = await self.within(start(), limit)
        if not task.done():
            raise KernelError(f"the Python kernel did not answer within {limit:g} s of starting; "
                              f"{self._hint()}")
        exc = task.exception()
        if isinstance(exc, OSError):
            raise KernelError(f"the Python kernel could not be started ({exc}); {self._hint()}")
        if exc is not None:
            code = self.process.poll() if self.process is not None else None
            status = f" (exit status {code})" if code is not None else ""
            raise KernelError(f"the Python kernel stopped while starting{status}; {self._hint()}")

    def _hint(self):
        """The kernel's last line of output, and how to repair the kernel."""
        last = ""
        with contextlib.suppress(OSError):
            with open(self.log_path, "rb") as fh:
                text = fh.read()[-4000:].decode("utf-8", "replace")
            last = next((ln.strip() for ln in reversed(text.splitlines()) if ln.strip()), "")
        fix = "reinstall it with `python -m pip install --force-reinstall ipykernel`"
        return f"it said: {last[:200]}; {fix}" if last else fix

    async def idle(self, grace):
        """Whether the (interrupted) kernel answers a no-op within ``grace`` seconds."""
        return await self.run_silently("", grace)

    async def run_silently(self, code, limit):
        """Run ``code`` without output or history; whether the kernel answered within
        ``limit`` seconds."""
        from queue import Empty

        loop = asyncio.get_running_loop()
        end = loop.time() + limit
        msg_id = self.client.kc.execute(code, silent=True, store_history=False)
        while (left := end - loop.time()) > 0:
            try:
                reply = await self.client.kc.get_shell_msg(timeout=left)
            except Empty:
                return False
            if reply.get("parent_header", {}).get("msg_id") == msg_id:
                return True
        return False

    async def stop(self):
        """Kill the kernel and close everything, whatever state the run is in (never raises)."""
        for task in self.pending:
            task.cancel()
        kc = getattr(self.client, "kc", None)
        if kc is not None:
            with contextlib.suppress(Exception):
                kc.stop_channels()
        with contextlib.suppress(Exception):
            if self.km.has_kernel:
                await asyncio.wait_for(self.km.shutdown_kernel(now=True), 10)
        if self.process is not None and self.process.poll() is None:  # not dead yet: kill it
            with contextlib.suppress(OSError):
                self.process.kill()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.km.cleanup_resources(), STOP_WAIT)
        if self.pending:  # (a task that ignores its cancellation is left behind, not awaited)
            await asyncio.wait(self.pending, timeout=STOP_WAIT)

    def kill_leftovers(self):
        """Kill the kernel's process group if it is still alive (synchronous, never raises)."""
        if self.process is None or self.process.poll() is not None:
            return
        with contextlib.suppress(OSError):
            if hasattr(os, "killpg"):  # the kernel leads its own process group on POSIX
                os.killpg(self.process.pid, signal.SIGKILL)
            else:
                self.process.kill()


class _Run:
    """One execution: the notebook's code cells run one by one on a :class:`_Kernel`, each
    within its time limit and all within the budget."""

    def __init__(self, nb, scratch, argv, timeout, budget, on_cell, on_result, skip,
                 prelude=""):
        self.nb, self.scratch, self.argv, self.prelude = nb, scratch, argv, prelude
        self.timeout, self.budget, self.on_cell = timeout, budget, on_cell
        self.on_result, self.skip = on_result, skip
        self.kernel = None       # the _Kernel, once made
        self.timed_out = set()   # cells whose reply was nbclient's timeout reply

    async def main(self):
        loop = asyncio.get_running_loop()
        self.deadline = loop.time() + self.budget
        log = _quiet_logger()
        # Tasks nbclient leaves behind when a run is cut short end with errors nobody awaits.
        loop.set_exception_handler(lambda _loop, context: log.debug("%s", context))
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(signal.SIGTERM, asyncio.current_task().cancel)  # POSIX
        self.kernel = _Kernel(self.nb, self.scratch, self.argv, self.timeout, self._executed)
        try:
            with open(self.kernel.log_path, "wb") as kernel_output:
                await self.kernel.start(kernel_output, self.budget)
                if self.prelude:
                    await self._prelude(loop)
                return await self._cells()
        finally:
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.remove_signal_handler(signal.SIGTERM)
            await self.kernel.stop()

    async def _prelude(self, loop):
        limit = max(0.0, min(self.timeout, self.deadline - loop.time()))
        if not await self.kernel.run_silently(self.prelude, limit):
            raise KernelError(f"the Python kernel did not answer within {limit:g} s of starting; "
                              f"{self.kernel._hint()}")

    def _executed(self, cell, cell_index, execute_reply):
        if (execute_reply or {}).get("content", {}).get("ename") == _TIMEOUT_REPLY["ename"]:
            self.timed_out.add(cell_index)

    def _record(self, results, result):
        results.append(result)
        if self.on_result is not None:
            self.on_result(result)

    async def _cells(self):
        from nbclient.exceptions import DeadKernelError

        loop = asyncio.get_running_loop()
        todo = [i for i, c in enumerate(self.nb.cells)
                if c.cell_type == "code" and c.source.strip()]
        results, stopped, stopped_at = [], "", None
        for index in todo:
            cell = self.nb.cells[index]
            remaining = self.deadline - loop.time()
            if remaining <= 0:
                stopped = f"the run used its whole budget of {self.budget:g} s"
                break
            reason = self.skip(index, cell) if self.skip is not None else None
            if reason:
                self._record(results, CellResult(index, "not run", reason))
                continue
            if self.on_cell is not None:
                self.on_cell(index, cell)
            task = await self.kernel.within(self.kernel.client.async_execute_cell(cell, index),
                                            remaining)
            if not task.done():
                self._record(results, CellResult(index, "timeout", "still running when the run "
                                                 f"used its whole budget of {self.budget:g} s"))
                stopped = f"the run used its whole budget of {self.budget:g} s"
                stopped_at = index
                break
            exc = task.exception()
            if isinstance(exc, DeadKernelError):
                self._record(results, CellResult(index, "died", "the kernel died while this "
                                                 "cell ran (out of memory, a crash or os._exit)"))
                stopped, stopped_at = "the kernel died", index
                break
            if exc is not None:
                raise exc
            if index in self.timed_out:
                self._record(results, CellResult(index, "timeout", f"still running after "
                                                 f"{math.ceil(self.timeout)} s (the limit of "
                                                 "one cell)"))
                grace = min(INTERRUPT_GRACE, self.deadline - loop.time())
                if not await self.kernel.idle(grace):
                    stopped, stopped_at = "the kernel did not stop when interrupted", index
                    break
                continue
            error = _first_error(cell)
            self._record(results, CellResult(index, "error" if error else "ok", error or ""))
        done = {r.index for r in results}
        if stopped:
            for i in todo:
                if i not in done:
                    self._record(results, CellResult(i, "not run", stopped))
        return Execution(results, stopped, stopped_at)

    def kill_leftovers(self):
        """Kill the kernel's process group if it is still alive (synchronous, never raises)."""
        if self.kernel is not None:
            self.kernel.kill_leftovers()


def _first_error(cell):
    for out in cell.get("outputs", []):
        if out.get("output_type") == "error":
            return f"{out.get('ename')}: {out.get('evalue')}"
    return None
