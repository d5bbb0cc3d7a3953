"""`mlcourse check`: a student runs a notebook's visible tests on their own machine.

The notebook is read, checked without running it (:mod:`.static_check`: which variant it is
checked as, from the course id in its id cell; syntax errors; test cells edited or deleted,
from the checksums nbgrader stores in each test cell and the list of test cells ``mlcourse
release`` stores in the notebook's metadata, as ``nbgrader validate`` does), then run from the
top in a fresh kernel with a time limit per cell and in all
(:mod:`.execute`): the assignment's limit, which the release copies into the notebook's
metadata (:func:`~.notebook.time_limit`).
Each test's result is handed on as soon as it is known, so the command prints it while the
later cells run. As in grading, a function whose test ran out of time is not called by its later
tests (they are "not run"), so an endless loop costs one limit, not one per test. An id cell
that is empty, malformed or missing is run as ``STUDENT_ID = ""`` (the default variant), in
the run's copy of the notebook only: the student's file is never written. The result
says, one line per problem and in words, what a student needs to act on; it never shows a
traceback.
"""

from __future__ import annotations

import ast
import dataclasses
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .notebook import (
    cell_source,
    grade_id,
    is_answer_cell,
    is_test_cell,
    parse_python,
    task_of,
    time_limit,
)
from .static_check import (
    cell_label,
    changed_tests,
    edited_locked_code,
    forbidden_warnings,
    id_check,
    one_line,
    release_order,
    rule_lines,
    syntax_errors,
)

_NAME_ERROR = re.compile(r"^NameError: name '(\w+)' is not defined")


@dataclasses.dataclass
class TestStatus:
    """One test cell as `mlcourse check` reports it.

    ``status`` is "passed", "failed", "hidden" (its tests run when graded), "changed" (edited or
    deleted: grading runs the original) or "not run" (the run stopped before it, or an earlier
    test of its function ran out of time).
    """

    grade_id: str
    status: str
    message: str = ""


@dataclasses.dataclass
class CheckResult:
    """What `mlcourse check` found, each entry one line, in the order it is printed."""

    problems: list[str]                 # syntax errors, a run cut short: reported first
    warnings: list[str]                 # things that may cost points although tests pass
    tests: list[TestStatus]             # every test cell of the release, in notebook order
    other: list[tuple[str, str]]        # (cell, message): errors in cells that are not tests
    notebook: str = ""                  # the notebook's file name
    timeout: float = 0.0                # the limit of one cell, in seconds
    planned: list[str] = dataclasses.field(default_factory=list)  # test cells, in order
    hidden: int = 0                     # how many of them hold only hidden tests
    rules: list[str] = dataclasses.field(default_factory=list)  # per task: calls it may make
    variant: str = ""                   # which variant is checked (static_check.id_check)

    @property
    def ok(self) -> bool:
        """Whether every visible test passed and nothing was changed or cut short."""
        return not self.problems and all(t.status in ("passed", "hidden") for t in self.tests)

    def count(self, status: str) -> int:
        return sum(t.status == status for t in self.tests)


def is_emptied_hidden_test(source: str) -> bool:
    """Whether a release's test cell holds no code: its tests were hidden (run when graded)."""
    try:
        body = parse_python(source).body
    except SyntaxError:
        return False
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]  # the cell's docstring
    return not body


def _explain(message: str) -> str:
    """An error as a student should read it: a bare NotImplementedError is a stub."""
    if message.strip() in ("NotImplementedError:", "NotImplementedError: None"):
        return "not implemented yet (the answer cell still raises NotImplementedError)"
    return one_line(message)


_DEFINED = re.compile(r"^(?:async\s+def|def|class)\s+(\w+)|^(\w+)\s*(?::[^=]*)?=(?!=)", re.M)


def _defined_names(source: str) -> set[str]:
    """Top-level names a cell defines (by a regular expression: the cell may not parse)."""
    return {a or b for a, b in _DEFINED.findall(source)}


def read_notebook(path: Path | str) -> Any:
    """The notebook at ``path`` (nbformat version 4), or ValueError with a one-line reason."""
    import nbformat

    path = Path(path)
    if not path.is_file():
        raise ValueError(f"{path} does not exist" if not path.exists() else f"{path} is not a file")
    try:
        nb = nbformat.read(path, as_version=4)
        nbformat.validate(nb)
    except Exception as exc:  # noqa: BLE001 (JSON, encoding or schema errors, all one message)
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ValueError(f"{path} is not a valid notebook: {one_line(first, 200)}") from None
    return nb


def check_notebook(path: Path | str, timeout: float | None = None, budget: float | None = None,
                   on_cell: Callable[[int, Any], None] | None = None,
                   on_start: Callable[[CheckResult], None] | None = None,
                   on_test: Callable[[TestStatus], None] | None = None,
                   on_problem: Callable[[str], None] | None = None) -> CheckResult:
    """Check and run a student's notebook; see :class:`CheckResult`.

    ``timeout`` is the time limit of one cell in seconds (default: the assignment's, from the
    notebook's metadata), ``budget`` of the whole run (default
    :data:`~mlcourse_utils.course.BUDGET_FACTOR` × ``timeout``). As the check goes on:
    ``on_start(result)`` once the notebook has been read and checked without running it, before
    the kernel starts (the result then holds the variant checked, the notebook's name, the
    limit, the test cells planned and the problems and warnings found so far),
    ``on_cell(index, cell)`` as each code cell starts, ``on_test(status)`` for each test cell,
    in notebook order, as soon as its status is known, and ``on_problem(line)`` when the run
    stops early (before the tests it did not reach).
    Raises ValueError for a file that does not exist or is not an assignment notebook,
    :class:`~mlcourse_utils.grading.execute.KernelError` when no kernel starts and
    ``KeyboardInterrupt`` on Ctrl-C.
    """
    from .execute import execute_notebook, kernel_command

    path = Path(path)
    nb = read_notebook(path)
    order = release_order(nb)
    if not order:
        raise ValueError(f"{path} has no test cells: is it an assignment notebook?")
    kernel_command()  # no kernel to run it: that one line, before anything has been said
    limit = time_limit(nb.get("metadata", {}), path.name) if timeout is None else timeout
    changed = changed_tests(nb)
    syntax = syntax_errors(nb.cells)
    ids = id_check(nb, path.name)
    prelude = ""
    if ids.run_as is not None and ids.index is not None:
        nb.cells[ids.index].source = ids.run_as  # (the run's copy: the file is not written)
        syntax.pop(ids.index, None)  # (the first line says what is wrong with the id cell)
    elif ids.run_as is not None:
        prelude = ids.run_as  # no id cell: STUDENT_ID defined before the first cell
    by_id = {grade_id(c): (i, c) for i, c in enumerate(nb.cells) if is_test_cell(c)}
    hidden = {gid for gid in order if gid not in changed
              and is_emptied_hidden_test(cell_source(by_id[gid][1]))}
    result = CheckResult(problems=list(syntax.values()), warnings=edited_locked_code(nb),
                         tests=[], other=[], notebook=path.name, timeout=limit,
                         planned=order, hidden=len(hidden), variant=ids.line)
    # Warnings about the answers found without running them (one line each).
    result.warnings += forbidden_warnings(nb)
    result.rules = rule_lines(nb)
    if on_start is not None:
        on_start(result)
    progress = _Progress(nb, result, by_id, changed, hidden, syntax, on_test)
    progress.report()  # the edited, deleted and hidden tests before the first cell runs
    run = execute_notebook(nb, path.parent, timeout=limit, budget=budget, on_cell=on_cell,
                           on_result=progress.on_result, skip=progress.skip, prelude=prelude)
    if run.stopped:
        where = f" in {cell_label(nb.cells[run.stopped_at], run.stopped_at)}" \
            if run.stopped_at is not None else ""
        result.problems.append(f"the check stopped early: {run.stopped}{where}; the cells after "
                               "it did not run")
        if on_problem is not None:
            on_problem(result.problems[-1])
    progress.ended = True
    progress.report()  # (every cell has a result by now)
    result.other.extend(_other_failures(nb, run, syntax))
    return result


def _other_failures(nb: Any, run: Any, syntax: dict[int, str]) -> list[tuple[str, str]]:
    """The cells other than tests that failed in the run (a syntax error is reported apart):
    ``(label, message)`` each."""
    found = []
    for index, cell in enumerate(nb.cells):
        outcome = run.result(index)
        if is_test_cell(cell) or index in syntax or outcome is None or \
                outcome.status in ("ok", "not run"):
            continue
        message = _explain(outcome.error) if outcome.status == "error" else outcome.error
        found.append((cell_label(cell, index), message))
    return found


class _Progress:
    """What a check knows as its notebook runs: each cell's outcome, the tasks that ran out of
    time (their later tests are skipped, as in grading), the names left undefined by a cell
    that failed. It hands on each test's status in notebook order as soon as it is known."""

    def __init__(self, nb: Any, result: CheckResult, by_id: dict[str, tuple[int, Any]],
                 changed: dict[str, str], hidden: set[str], syntax: dict[int, str],
                 on_test: Callable[[TestStatus], None] | None) -> None:
        self.nb, self.result, self.by_id, self.on_test = nb, result, by_id, on_test
        self.changed, self.hidden, self.syntax = changed, hidden, syntax
        self.tasks = [grade_id(c) for c in nb.cells if is_answer_cell(c) and grade_id(c)]
        self.outcomes = {}   # cell index -> its CellResult, as the run goes on
        self.timed_out = {}  # task -> the test cell in which it ran out of time
        self.skipped = {}    # cell index -> why it was not run (its function ran out of time)
        self.ended = False   # set once the run has ended (its tests not run then are known)
        self.broken = {}     # name -> why it is not defined (its cell has a syntax error or failed)
        for index in syntax:
            _mark_broken(self.broken, nb.cells[index], index, "has a syntax error (see above)")

    def status(self, gid: str) -> TestStatus | None:
        """The test's status, or None while its cell has not run yet."""
        if gid in self.changed:
            return TestStatus(gid, "changed", (
                "this test cell was deleted; grading runs it anyway: copy it back from a fresh "
                "download" if self.changed[gid] == "deleted" else
                "this test cell was edited; grading runs the original, so its result here does "
                "not count: undo the edit or copy the cell from a fresh download"))
        if gid in self.hidden:
            return TestStatus(gid, "hidden", "runs when graded")
        index, cell = self.by_id[gid]
        if not cell_source(cell).strip():  # an empty cell: nothing to fail
            return TestStatus(gid, "passed")
        if index in self.skipped:
            return TestStatus(gid, "not run", self.skipped[index])
        if index not in self.outcomes or (self.outcomes[index].status == "not run"
                                          and not self.ended):
            return None  # (not run as the run stopped: reported after the problem that says so)
        return _test_status(gid, self.outcomes[index], self.broken)

    def report(self) -> None:
        """Hand on every test whose status is now known, in order, up to the first unknown."""
        tests, order = self.result.tests, self.result.planned
        while len(tests) < len(order):
            found = self.status(order[len(tests)])
            if found is None:
                return
            tests.append(found)
            if self.on_test is not None:
                self.on_test(found)

    def skip(self, index: int, cell: Any) -> str | None:
        """Why the cell is not run (a test of a task that ran out of time), or None."""
        task = task_of(grade_id(cell) or "", self.tasks) if is_test_cell(cell) else None
        if task in self.timed_out:
            self.skipped[index] = (f"{task} ran out of time in {self.timed_out[task]}; its later "
                                   "tests are skipped, as in grading")
            return self.skipped[index]
        return None

    def on_result(self, outcome: Any) -> None:
        """Record a cell's outcome as the run reports it, and hand on what is now known."""
        self.outcomes[outcome.index] = outcome
        cell = self.nb.cells[outcome.index]
        if is_test_cell(cell):
            task = task_of(grade_id(cell) or "", self.tasks)
            if outcome.status == "timeout" and task is not None:
                self.timed_out.setdefault(task, grade_id(cell))
        elif outcome.index not in self.syntax and outcome.status not in ("ok", "not run"):
            _mark_broken(self.broken, cell, outcome.index, "failed (see below)")
        self.report()


def _mark_broken(broken: dict[str, str], cell: Any, index: int, what: str) -> None:
    """Record the names a cell defines as not defined, because the cell ``what``."""
    for name in _defined_names(cell_source(cell)) | {grade_id(cell)} - {None}:
        broken.setdefault(name, f"cell {cell_label(cell, index)} {what}")


def _test_status(gid: str, outcome: Any, broken: dict[str, str]) -> TestStatus:
    if outcome.status == "ok":
        return TestStatus(gid, "passed")
    if outcome.status == "not run":
        return TestStatus(gid, "not run", "the check stopped before this test (see above)")
    if outcome.status == "timeout":
        return TestStatus(gid, "failed", f"{outcome.error}: does a loop never end?")
    if outcome.status == "died":
        return TestStatus(gid, "failed", outcome.error)
    match = _NAME_ERROR.match(outcome.error)
    if match and match.group(1) in broken:
        return TestStatus(gid, "failed", f"{match.group(1)} is not defined because "
                                         f"{broken[match.group(1)]}")
    return TestStatus(gid, "failed", _explain(outcome.error))
