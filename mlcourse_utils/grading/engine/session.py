"""Grading one notebook: its cells run in a sandbox, its tests in the grader, with reasons.

The student's code cells run in a :class:`~.channel.Sandbox`; the *source* notebook's test
cells run here, in the grader, with each answer function's name bound to a proxy that calls the
student's function in the sandbox and gets plain data back. A test cell earns its points when
it raises nothing. Failures cost only what they cost: a cell or call that stalls, dies or breaks
the protocol is skipped and the sandbox restarted (cells replayed), within a per-request time
limit and a total budget per student.
"""

from __future__ import annotations

import dataclasses
import functools
import time
from collections.abc import Collection
from pathlib import Path
from typing import Any

from ...course import BUDGET_FACTOR
from .. import variants
from ..graded.reasons import cell_stopped
from ..graded.results import MAX_CELL_WARNINGS, GradeResult, IdCheck
from ..intake.submissions import Submission
from ..names import REFERENCE, matches, scan_code
from ..notebook import Assignment, compile_cell
from ..protocol import RemoteError, SandboxError
from ..sandbox.channel import Sandbox
from ..text import clean_text
from .analysis import Analysis, AnalysisError, analyse, render_pages
from .checking import Fatal, run_tests, sandbox_reason, setup_names
from .options import DEFAULTS, GradingOptions


class _Session:
    """A student's sandbox with restart-on-failure, per-request deadlines and a total budget.

    Every request gets the earlier of two deadlines: ``limits.timeout`` from now (per cell,
    per test cell) and the end of the student's budget (``limits.student_timeout`` from the
    session's start), which covers starting the process, running the cells, running the tests
    and re-running cells after restarts. Once the budget is spent, every request fails at once
    with kind ``"budget"``. ``limits``: the run's options with both limits decided
    (:func:`_limits`); ``hidden``: the folders the sandbox must not see.
    """

    def __init__(self, cells, limits: GradingOptions, hidden, max_restarts=4, start=None,
                 watch=(), preload=()):
        self.preload = list(preload)  # Assignment.preload, for a prepared image
        self.cells = cells  # list of (index, source, task or None)
        self.watch = sorted(set(watch))  # forbidden calls, watched in the sandbox
        self.forbidden = {}  # task -> the watched calls it made (reported by the sandbox)
        self.monitor = set()  # what touched the watch on forbidden calls
        self.hidden = hidden
        self.limits = limits
        self.budget_end = (start or time.monotonic()) + limits.student_timeout
        self.max_restarts = max_restarts
        self.restarts = -1
        self.skip = set()
        self.sandbox = None
        self.deadline = None
        self.current_task = None
        self.delegated = set()
        self.delegation_cells = set()
        self.cell_errors = {}
        self.executed = set()
        self.cell_warnings = []
        self.warnings = []
        self.outputs = []

    def _drain_events(self, task=None, cell=None):
        for event in self.sandbox.events:
            if event == "delegation":
                if task is not None:
                    self.delegated.add(task)
                elif cell is not None:
                    self.delegation_cells.add(cell)
            elif event.startswith("forbidden ") and task is not None:
                self.forbidden.setdefault(task, set()).add(event.split(" ", 1)[1])
            elif event.startswith("monitor "):
                self.monitor.add(event.split(" ", 1)[1])
        self.sandbox.events.clear()

    def _check_budget(self):
        if time.monotonic() >= self.budget_end:
            raise SandboxError("budget", "used up its total grading time")

    def _budget_kind(self, exc):
        """A timeout that ends at the budget's end is the budget's, not the cell's."""
        if exc.kind == "timeout" and time.monotonic() >= self.budget_end - 0.05:
            return SandboxError("budget", "used up its total grading time")
        return exc

    def ensure(self) -> None:
        """Make sure a sandbox runs with every cell executed: start it, or restart and replay.

        A cell that kills, stalls or breaks the process is skipped from then on (with its
        reason), and the process restarts; at most ``max_restarts`` restarts, all within the
        student's budget.
        """
        while self.sandbox is None:
            self._check_budget()
            self.restarts += 1
            if self.restarts > self.max_restarts:
                raise SandboxError("died", "the notebook's process failed too many times")
            box = Sandbox(hidden=self.hidden, memory_mb=self.limits.memory_mb,
                          startup_timeout=max(self.limits.timeout, 30), preload=self.preload)
            try:
                self.sandbox = box.start(deadline=self.budget_end)
                if self.watch:  # before any cell: the student's code must not run unwatched
                    self.sandbox.monitor(self.watch, max(self.limits.timeout, 30),
                                         self.budget_end)
            except SandboxError as exc:
                self.outputs.append(box.output())
                box.kill()
                raise self._budget_kind(exc) from None
            for index, source, task in self.cells:
                if index in self.skip:
                    continue
                try:
                    error, warns = self.sandbox.exec_cell(source, self.limits.timeout,
                                                          self.budget_end)
                except SandboxError as exc:
                    exc = self._budget_kind(exc)
                    self._collect_output()
                    self.sandbox = None
                    if exc.kind == "budget":
                        raise exc from None
                    self.skip.add(index)
                    self.cell_errors[index] = sandbox_reason(exc, self)
                    break
                self._drain_events(task=task, cell=index)
                if index not in self.executed:  # report each cell once, whatever the restarts
                    self.executed.add(index)
                    if error is not None:
                        self.cell_errors[index] = f"{error.exc_type}: {error.message}"[:500]
                    self.cell_warnings.extend(f"cell {index + 1}: {w}" for w in warns
                                              if len(self.cell_warnings) <= MAX_CELL_WARNINGS)

    def call(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        restarting = self.sandbox is None
        try:
            self.ensure()
        except SandboxError as exc:
            raise Fatal(exc) from None
        if restarting:
            # Starting the process and replaying the cells had their own limits (per cell, and
            # the student's budget); the test's time starts now, not before the restart.
            self.deadline = time.monotonic() + self.limits.timeout
        deadline = min(self.deadline, self.budget_end)
        left = deadline - time.monotonic()
        if left <= 0:
            raise Fatal(self._budget_kind(SandboxError("timeout", "timed out")))
        try:
            value, warns = self.sandbox.call(name, args, kwargs, left)
        except RemoteError as exc:
            self._drain_events(task=self.current_task)
            self._warn(getattr(exc, "warnings", []))
            raise
        except SandboxError as exc:
            self._collect_output()
            self.sandbox = None
            raise Fatal(self._budget_kind(exc)) from None
        self._drain_events(task=self.current_task)
        self._warn(warns)
        return value

    def _warn(self, warns):
        if len(self.warnings) < 100:  # a test may call the function thousands of times
            self.warnings.extend(warns)

    def _collect_output(self):
        if self.sandbox is not None:
            self.outputs.append(self.sandbox.output())
            self.sandbox.kill()

    def close(self) -> None:
        self._collect_output()
        self.sandbox = None


def forbidden_reason(names: list[str]) -> str:
    """The reason a task earns nothing for a forbidden call (``names``: what it called)."""
    return (f"uses {', '.join(names)}, a forbidden call in this task (see the notebook's first "
            "cell): the task earns nothing")


def _forbid(result, forbidden, found, session):
    """Zero each task that used one of its forbidden calls, by name or at run time, and every
    task with forbidden calls when the notebook touched the watch on them."""
    if not forbidden:
        return
    used = {}
    for index, _source, task in found.cells:  # by name, in the task's own answer cell
        if task in forbidden:
            used.setdefault(task, set()).update(
                n for n in found.uses.get(index, []) if n in forbidden[task])
    for task, names in session.forbidden.items():  # at run time, while its tests ran
        if task in forbidden:
            used.setdefault(task, set()).update(
                n for n in names if any(matches(n, f) for f in forbidden[task]))
    tampered = sorted({f"cell {i + 1} uses {', '.join(n)}" for i, n in found.monitor.items()}
                      | {f"the notebook {what}" for what in session.monitor})
    for tr in result.tests:
        names = sorted(used.get(tr.task, ()))
        if names:
            reason = forbidden_reason(names)
        elif tampered and tr.task in forbidden:
            reason = (f"{'; '.join(tampered[:3])}, which could disable the grader's watch on "
                      "forbidden calls: every task with forbidden calls earns nothing")
        else:
            continue
        if tr.earned:
            tr.message = reason
        tr.earned = 0.0
        result.reasons[tr.task] = reason


def _stopped_answers(result, cells, session):
    """Name why a task's function is missing when its answer cell did not finish (a timeout,
    the process dying: the cell is skipped from then on, so the function was never defined):
    the task's reason, and the message of each of its tests that found no function."""
    for index, _source, task in cells:
        if task is None or index not in session.skip or index not in session.cell_errors:
            continue
        reason = cell_stopped(task, index + 1, session.cell_errors[index])
        result.reasons.setdefault(task, reason)
        for tr in result.tests:
            if tr.task == task and not tr.earned and "does not define a function" in tr.message:
                tr.message = f"not run: {reason}"


def uses_reference(source: str) -> bool:
    """Whether code imports or names ``mlcourse_utils`` (comments and strings do not count).

    Disguised imports (``importlib.import_module("ml" + "course_utils")``) are caught at run
    time by the sandbox's decoy package instead. (The grader runs this check on submitted
    code only inside :func:`~.analysis.analyse`'s limited child process.)
    """
    return REFERENCE in scan_code(source).uses


def check_setup(assignment: Assignment) -> None:
    """Run the source notebook's setup cells once in the grader; ValueError if one fails.

    Setup cells (imports and data before the first task) run before every test cell. One that
    fails would fail every student, so the batch stops before it starts, saying why.
    """
    namespace = {"__name__": "__mlcourse_test__", **setup_names(assignment, "")}
    for source in assignment.setup:
        try:
            exec(compile_cell(source, "<setup>"), namespace)  # instructor code only
        except Exception as exc:  # noqa: BLE001
            raise ValueError(f"a setup cell of solutions/{assignment.name}/{assignment.notebook} "
                             f"fails in the grader ({type(exc).__name__}: {exc}); setup cells "
                             "(plain code before the first task) must run on their own") from None


def grading_budget(assignment: Assignment, timeout: float | None = None) -> float:
    """A student's total grading time by default (``--student-timeout``), in seconds.

    ``timeout`` is the limit of one cell and one test (default: the assignment's). The budget
    is what `mlcourse check` allows a whole run (:data:`~mlcourse_utils.course.BUDGET_FACTOR`
    limits: the kernel's start, the cells, the visible tests) plus one limit for reading the
    notebook, which only grading does. With the visible tests run first (:func:`grade_notebook`),
    a visible test that passed in a check that ended within its budget is not cut short here
    by the budget; the hidden tests share what is left (more would let one student's slow code
    cost a class an hour).
    """
    timeout = assignment.timeout if timeout is None else timeout
    return (BUDGET_FACTOR + 1) * timeout


def _limits(assignment: Assignment, options: GradingOptions) -> GradingOptions:
    """``options`` with both limits decided: the time of one cell and one test (default the
    assignment's) and the student's budget (default :func:`grading_budget`)."""
    timeout = assignment.timeout if options.timeout is None else options.timeout
    return dataclasses.replace(options, timeout=timeout, student_timeout=options.student_timeout
                               or grading_budget(assignment, timeout))


def grade_notebook(assignment: Assignment, submission: Submission,
                   options: GradingOptions = DEFAULTS, *, hidden: Collection[Path | str] = (),
                   copy_to: Path | str | None = None,
                   manual_dir: Path | str | None = None) -> GradeResult:
    """Grade one student's submission (read once, :mod:`.submissions`); never raises for a bad
    one. A submission without a notebook (nothing submitted, or refused) earns zero with its
    reason.
    ``options`` (:class:`~.options.GradingOptions`) gives the limits: ``timeout``, of one cell
    and one test in seconds (default: the assignment's, :attr:`~.notebook.Assignment.timeout`);
    ``student_timeout``, the student's total budget in seconds (default
    :func:`grading_budget`): it starts now and covers reading the notebook
    (:func:`~.analysis.analyse`), writing the formgrader copy ``copy_to`` and the rendered
    manual answers into ``manual_dir`` (:func:`~.analysis.render_pages`), its cells and its
    tests; ``memory_mb``, the sandbox's. ``secret`` (bytes) seeds the hidden tests' random
    inputs together with the student id (:func:`~.checks.hidden_rng`); None: the development
    seed. It never leaves this process. ``hidden``: folders the sandbox must not see.

    The sandbox runs the variant of ``submission.student`` (the roster's id), never the id
    typed in the notebook: a first cell of the grader's (:func:`sandbox_prelude`) binds
    ``STUDENT_ID`` and defines ``variant``, the id cell runs the roster's id and the import
    line of ``variant`` outside answer cells binds the grader's (:func:`~.analysis.analyse`).
    The typed id is compared with the roster's in ``result.id_check`` (:func:`check_id`): a
    flag for the teaching assistants, never a point.
    """
    start = time.monotonic()
    result = GradeResult(submission.student, assignment.name)
    limits = _limits(assignment, options)
    if submission.data is None:
        return _zero(result, assignment, submission.reason, start)
    forbidden = {t: names for t, names in assignment.forbidden.items() if names}
    watched = sorted({n for names in forbidden.values() for n in names})
    deadline = start + limits.student_timeout
    bound_id = setup_names(assignment, submission.student)[variants.ID_NAME]
    try:
        found = analyse(submission.data, assignment, timeout=limits.timeout, deadline=deadline,
                        watch=watched, student_id=bound_id)
    except AnalysisError as exc:
        return _zero(result, assignment, clean_text(str(exc), 500), start)
    result.id_check = check_id(found, submission.student, assignment.variants)
    result.notes.extend(found.notes)
    if copy_to or manual_dir:  # a failure here costs only these pages, never points
        problem = render_pages(submission.data, assignment, timeout=limits.timeout,
                               deadline=deadline, copy_to=copy_to, manual_dir=manual_dir)
        if problem:
            result.notes.append("your notebook's copy for the teaching assistants (written "
                                f"answers, formgrader) could not be made in full: {problem}")
    cells = [(PRELUDE_CELL, sandbox_prelude(bound_id), None), *found.cells]
    session = _Session(cells, limits, hidden, start=start, watch=watched,
                       preload=assignment.preload)
    try:
        try:
            session.ensure()
        except SandboxError as exc:
            return _zero(result, assignment, sandbox_reason(exc, session), start)
        run_tests(assignment, submission.student, session, found.delegated, result)
        _stopped_answers(result, found.cells, session)
        _forbid(result, forbidden, found, session)
    finally:
        session.close()
    return _finished(result, session, start)


#: The index of the cell the grader runs before the student's (:func:`sandbox_prelude`): not
#: a cell of the notebook, so that "cell N" in every message is still the student's cell N.
PRELUDE_CELL = -1


@functools.lru_cache(maxsize=1)
def _variants_text() -> str:
    return Path(variants.__file__).read_text(encoding="utf-8")


def sandbox_prelude(student_id: str | None) -> str:
    """The cell the sandbox runs before the notebook's: ``STUDENT_ID`` bound to the roster's
    id (``student_id``; None when variants are off), and ``_mlcourse_variant``, the function
    :func:`~.variants.variant` defined from the text of its module (standard library only),
    which the notebook's import line stands for there (:data:`~.analysis.VARIANT_BINDING`):
    the course package itself is a decoy in the sandbox, whose import earns nothing."""
    return (f"{variants.ID_NAME} = {student_id!r}\n"
            "def _mlcourse_variant_module():\n"
            "    namespace = {'__name__': 'mlcourse_variants'}\n"
            f"    exec(compile({_variants_text()!r}, '<mlcourse variants>', 'exec'), namespace)\n"
            "    return namespace['variant']\n"
            "_mlcourse_variant = _mlcourse_variant_module()\n"
            "del _mlcourse_variant_module\n")


def check_id(found: Analysis, student: str, enabled: bool = True) -> IdCheck:
    """The id typed in the notebook (``found``: the child's reading, :func:`~.analysis.analyse`)
    against ``student``, the roster's id the submission is graded under. With variants off
    (``enabled`` False) only another student's id is a problem."""
    typed = found.typed_id
    matches = typed is not None and typed == variants.normalize_id(student)
    if matches:
        return IdCheck(typed, True)
    if typed is not None:
        return IdCheck(typed, False, "other")
    if not enabled:
        return IdCheck(None, False)
    if not found.has_id_cell:
        return IdCheck(None, False, "missing", found.id_problem or "")
    empty = found.id_problem == variants.id_problem("")
    return IdCheck(None, False, "empty" if empty else "malformed", found.id_problem or "")


def _zero(result, assignment, reason, start):
    """The student's result when nothing could be graded: zero for every task, with ``reason``
    (and the notes found so far)."""
    zero = GradeResult.zero(result.student, assignment, reason)
    zero.notes = result.notes
    zero.id_check = result.id_check
    zero.seconds = time.monotonic() - start
    return zero.bound()


def _finished(result, session, start):
    """``result`` with what the sandbox reported: cells that imported the reference, the
    cells' errors and warnings, the process's output, and the time it took."""
    for index in sorted(session.delegation_cells):
        result.notes.append(f"cell {index + 1} imports mlcourse_utils, which is not available "
                            "while grading")
    if PRELUDE_CELL in session.cell_errors:  # (the grader's own cell: not the student's)
        result.notes.append("the grader's first cell (STUDENT_ID and variant) failed: "
                            f"{session.cell_errors.pop(PRELUDE_CELL)}")
    result.cell_errors = [(i + 1, msg) for i, msg in sorted(session.cell_errors.items())]
    result.cell_warnings = session.cell_warnings
    result.output = "\n".join(o for o in session.outputs if o.strip())
    result.seconds = time.monotonic() - start
    return result.bound()
