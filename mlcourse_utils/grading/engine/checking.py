"""Test cells run in the grader, calling the student's functions in the sandbox: points or why."""

from __future__ import annotations

import time
from collections.abc import Collection
from typing import Any

import numpy as np

from ..checks import hidden_inputs
from ..graded.results import GradeResult, TestResult
from ..notebook import Assignment, compile_cell
from ..protocol import RemoteError, SandboxError
from ..selfcheck import is_emptied_hidden_test
from ..text import clean_text
from ..variants import ID_NAME

DELEGATION = ("uses the reference implementation (mlcourse_utils), which earns nothing: "
              "write the function yourself")


class Fatal(Exception):
    """The sandbox died or timed out during a test cell."""

    def __init__(self, error: SandboxError) -> None:
        super().__init__(str(error))
        self.error = error


def sandbox_reason(exc: SandboxError, session: Any) -> str:
    """The reason, in words, of a sandbox that stopped (``exc``) within ``session``'s limits."""
    limits = session.limits
    if exc.kind == "timeout":
        return f"timed out after {limits.timeout:g} s (the time limit per cell and per test)"
    if exc.kind == "budget":
        return (f"the notebook used up its total grading time of {limits.student_timeout:g} s "
                "(cells, tests and re-runs after crashes); the remaining tests were not run")
    if exc.kind == "memory":
        return f"the notebook's process {exc}"
    if exc.kind == "died":
        hint = (f"; it may have exceeded the memory limit of {limits.memory_mb} MB"
                if "signal" in str(exc) else "")
        return f"the notebook's process died: it {exc}{hint}"
    return f"grading of this task stopped: {exc}"


class _StudentFunction:
    def __init__(self, session, name):
        self._session = session
        self.__name__ = name

    def __call__(self, *args, **kwargs):
        try:
            return self._session.call(self.__name__, args, kwargs)
        except RemoteError as exc:
            if exc.exc_type == "MemoryError":
                exc.message = (exc.message + " " if exc.message else "") + \
                    f"(memory limit {self._session.limits.memory_mb} MB)"
            raise


def run_order(assignment: Assignment) -> list[Any]:
    """The test cells in the order grading runs them: those a student sees run in `mlcourse
    check` first, then those that hold only hidden tests (each group in notebook order), so a
    hidden test's time-out or time never decides a visible test that passed in the check."""
    hidden_only = {gid for gid, source in assignment.visible_sources.items()
                   if is_emptied_hidden_test(source)}
    return sorted(assignment.tests, key=lambda t: t.grade_id in hidden_only)


def run_tests(assignment: Assignment, student: str, session: Any, delegated: Collection[str],
              result: GradeResult) -> None:
    """Run the test cells into ``result.tests`` (kept in notebook order; the visible tests run
    first, :func:`run_order`). A task that uses the reference (``delegated`` found in its
    code, or seen at run time) earns nothing; a task whose test stopped the sandbox runs no
    more tests; once the budget is spent, no test runs."""
    result.tests = [TestResult(t.grade_id, t.task, t.points, 0.0, t.description)
                    for t in assignment.tests]
    by_id = {tr.grade_id: tr for tr in result.tests}
    failed_fatally = {}
    spent = None  # the reason, once the student's total budget is used up
    for test in run_order(assignment):
        tr = by_id[test.grade_id]
        if test.task in delegated or test.task in session.delegated:
            result.reasons[test.task] = DELEGATION
            continue
        if spent:
            tr.message = spent
            result.reasons.setdefault(test.task, spent)
            continue
        if test.task in failed_fatally:
            tr.message = f"not run: an earlier test of {test.task} {failed_fatally[test.task]}"
            continue
        error = _run_test(assignment, test, tr, session, student)
        if error is not None:
            failed_fatally[test.task] = tr.message
            result.reasons[test.task] = tr.message
            if error.kind == "budget":
                spent = tr.message
        if test.task in session.delegated:
            result.reasons[test.task] = DELEGATION
    # A delegation seen late (e.g. in a later call) still voids the whole task.
    for tr in result.tests:
        if tr.task in session.delegated or tr.task in delegated:
            tr.earned = 0.0
            result.reasons[tr.task] = DELEGATION


def setup_names(assignment: Assignment, student: str) -> dict[str, str | None]:
    """What the grader binds before the setup cells: ``STUDENT_ID``, the roster's id of the
    student graded (never the id typed in the notebook), or None when the assignment's variants
    are off (:mod:`~mlcourse_utils.grading.variants`)."""
    return {ID_NAME: student if assignment.variants else None}


def _run_test(assignment, test, tr, session, student):
    """Run one test cell here, in the grader, after the setup cells, with each task's name bound
    to the student's function in the sandbox: ``tr`` earns the test's points, or gets the
    message why not. Returns the sandbox's error when the sandbox stopped during the test."""
    namespace = {"__name__": "__mlcourse_test__", **setup_names(assignment, student)}
    for source in assignment.setup:
        exec(compile_cell(source, "<setup>"), namespace)  # instructor code only
    for task in assignment.tasks:
        namespace[task] = _StudentFunction(session, task)
    session.current_task = test.task
    session.warnings = []
    session.deadline = time.monotonic() + session.limits.timeout
    error = None
    try:
        with np.errstate(all="ignore"), hidden_inputs(session.limits.secret, student):
            exec(compile_cell(test.source, f"<{test.grade_id}>"), namespace)
        tr.earned = test.points
    except Fatal as exc:
        tr.message = sandbox_reason(exc.error, session)
        error = exc.error
    except AssertionError as exc:
        tr.message = clean_text(str(exc), 2000) or f"a check failed: {test.description}"
    except RemoteError as exc:
        tr.message = f"your function raised {exc.exc_type}: {exc.message}"
    except Exception as exc:  # noqa: BLE001
        tr.message = ("the result could not be checked "
                      f"({type(exc).__name__}: {clean_text(str(exc), 500)})")
    tr.warnings = sorted(set(session.warnings))[:10]
    return error
