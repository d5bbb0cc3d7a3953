"""Grading's results as data: the grader's record (every student's full result) and the grade
files (a row per student, and per student and task); :class:`.out.OutFolder` says where.

A task's points are :meth:`GradeResult.task_score`'s: what its tests earned, or a teaching
assistant's override of them (:mod:`.overrides`); the grade files and pages all take them
from there.

The result data model too (:class:`GradeResult`, :class:`TestResult`, capped by
:meth:`GradeResult.bound`): the grading engine (:mod:`.session`) fills them in; below it and
everything else that reads or writes them (the batch, the feedback writer, manual grading, the
exports, the class report).
"""

from __future__ import annotations

import csv
import dataclasses
import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..._files import atomic_open
from ..text import clean_text, csv_text, plural

if TYPE_CHECKING:
    from ..notebook import Assignment


#: What one student's result may hold: errors and warnings of cells, notes, distinct warnings per
#: test, characters of printed output (the feedback shows its end) and of results.json.
MAX_CELL_ERRORS = 50
MAX_CELL_WARNINGS = 20
MAX_NOTES = 50
MAX_TEST_WARNINGS = 10
MAX_OUTPUT = 20_000
MAX_RESULT_CHARS = 400_000


@dataclasses.dataclass
class TestResult:
    """One test cell's outcome for one student."""

    grade_id: str
    task: str
    points: float
    earned: float
    description: str
    message: str = ""
    warnings: list[str] = dataclasses.field(default_factory=list)


#: Kinds of :attr:`IdCheck.problem` in words (for the TA: the printed summary, the report).
ID_PROBLEMS = {"missing": "no id cell", "empty": "the id cell is empty",
               "malformed": "the id cell does not hold a course id",
               "other": "another student's id"}


@dataclasses.dataclass
class IdCheck:
    """The id typed in a notebook's id cell against the roster's id it was graded under.

    A flag for the teaching assistant, never a point lost: the notebook was graded with the
    roster id's variant whatever it says. ``typed``: the typed id, normalised (None when none
    could be read); ``matches``: it is the roster's id; ``problem``: "" or a key of
    :data:`ID_PROBLEMS`; ``detail``: why the id could not be read, in words.
    """

    typed: str | None
    matches: bool
    problem: str = ""
    detail: str = ""

    @classmethod
    def from_json(cls, data: Any) -> IdCheck | None:
        """An IdCheck from results.json (None when absent or not one: an older grader's)."""
        if not isinstance(data, dict):
            return None
        typed = data.get("typed")
        problem = data.get("problem")
        return cls(clean_text(typed, 200) if isinstance(typed, str) else None,
                   data.get("matches") is True,
                   problem if problem in ID_PROBLEMS else "",
                   clean_text(data.get("detail"), 300) if isinstance(data.get("detail"), str)
                   else "")


@dataclasses.dataclass
class GradeResult:
    """One student's grading: every test's outcome and the reasons and remarks for the feedback."""

    student: str
    assignment: str
    tests: list[TestResult] = dataclasses.field(default_factory=list)
    reasons: dict[str, str] = dataclasses.field(default_factory=dict)  # task -> why points withheld
    notes: list[str] = dataclasses.field(default_factory=list)         # notebook-level remarks
    cell_errors: list[tuple[int, str]] = dataclasses.field(default_factory=list)
    cell_warnings: list[str] = dataclasses.field(default_factory=list)
    output: str = ""
    seconds: float = 0.0
    refused: str = ""  # why the notebook was not graded at all ("" when it was)
    #: task -> {"points": ..., "reason": ...}: a teaching assistant's override of the task's
    #: autograded points (``mlcourse grade-import OUT overrides.csv``, :mod:`.overrides`).
    overrides: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)
    #: the id typed in the notebook against the roster's (None: no notebook was read)
    id_check: IdCheck | None = None

    def autograded_task_score(self, task: str) -> float:
        """What the tests of ``task`` earned (before any override)."""
        return sum(t.earned for t in self.tests if t.task == task)

    def task_score(self, task: str) -> float:
        """The points of ``task``: a teaching assistant's override where there is one, else
        what its tests earned. Every grade file and page takes a task's points from here."""
        if task in self.overrides:
            return float(self.overrides[task]["points"])
        return self.autograded_task_score(task)

    @property
    def autograded_score(self) -> float:
        """What the tests earned, before any override."""
        return sum(t.earned for t in self.tests)

    @property
    def score(self) -> float:
        """The autograded part of the grade: each task's :meth:`task_score`."""
        if not self.overrides:
            return self.autograded_score
        return sum(self.task_score(task) for task in dict.fromkeys(t.task for t in self.tests))

    @classmethod
    def zero(cls, student: str, assignment: Assignment, reason: str) -> GradeResult:
        """Zero for every test of ``assignment``, with ``reason`` for every task."""
        result = cls(student, assignment.name)
        result.tests = [TestResult(t.grade_id, t.task, t.points, 0.0, t.description)
                        for t in assignment.tests]
        result.reasons = dict.fromkeys(assignment.tasks, reason)
        result.refused = reason
        return result

    def bound(self) -> GradeResult:
        """Cap what this result holds (see MAX_*), saying what was cut; returns ``self``."""
        notes = list(dict.fromkeys(self.notes))
        if len(notes) > MAX_NOTES:
            more = len(notes) - MAX_NOTES
            notes = notes[:MAX_NOTES] + [f"{plural(more, 'more note')} (not listed)"]
        if len(self.cell_errors) > MAX_CELL_ERRORS:
            more = len(self.cell_errors) - MAX_CELL_ERRORS
            self.cell_errors = self.cell_errors[:MAX_CELL_ERRORS]
            notes.append(f"{plural(more, 'more cell')} raised an error (not listed)")
        if len(self.cell_warnings) > MAX_CELL_WARNINGS:
            more = len(self.cell_warnings) - MAX_CELL_WARNINGS
            self.cell_warnings = self.cell_warnings[:MAX_CELL_WARNINGS]
            notes.append(f"{plural(more, 'more warning')} while the notebook ran (not listed)")
        self.notes = notes
        for t in self.tests:
            t.message = clean_text(t.message, 2000)
            t.warnings = [clean_text(w, 300) for w in t.warnings[:MAX_TEST_WARNINGS]]
        if len(self.output) > MAX_OUTPUT:
            self.output = "[... output cut]\n" + self.output[-MAX_OUTPUT:]
        size = len(self.output) + sum(len(t.message) + sum(map(len, t.warnings)) + 200
                                      for t in self.tests)
        size += sum(map(len, self.notes)) + sum(len(m) for _, m in self.cell_errors)
        size += sum(map(len, self.cell_warnings)) + sum(map(len, self.reasons.values()))
        if size > MAX_RESULT_CHARS:  # many tests with long messages: keep the verdicts
            self.output = ""
            for t in self.tests:
                t.message, t.warnings = t.message[:300], t.warnings[:2]
            self.notes.append("the messages were shortened to keep this page small")
        return self


def points(x: float) -> str:
    """A number of points as the grade files write it (``12``, ``3.5``)."""
    return f"{x:g}"


def write_csvs(results: Mapping[str, GradeResult], assignment: Assignment, grades: Path,
               task_scores: Path) -> None:
    """The grade files (paths from :class:`.out.OutFolder`): a row per student in ``grades``,
    per student and task in ``task_scores``, sorted."""
    with atomic_open(grades, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["student_id", "assignment", "score", "max_score"])
        for student in sorted(results):
            w.writerow([csv_text(student), assignment.name, points(results[student].score),
                        points(assignment.max_score)])
    with atomic_open(task_scores, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["student_id", "assignment", "task", "score", "max_score"])
        for student in sorted(results):
            for task in assignment.tasks:
                w.writerow([csv_text(student), assignment.name, task,
                            points(results[student].task_score(task)),
                            points(assignment.task_max(task))])


def results_json(results: Mapping[str, GradeResult], assignment: Assignment,
                 defences: Mapping[str, bool] | None = None,
                 run: Mapping[str, Any] | None = None) -> str:
    """The grader's record as JSON text: every student's full result, for tools (merging
    shards, exports), with the defences in force (:func:`~.channel.defences`) and figures of
    the run."""
    data = {"assignment": assignment.name, "defences": dict(defences or {}), "run": dict(run or {}),
            "students": {s: dataclasses.asdict(r) for s, r in sorted(results.items())}}
    return json.dumps(data, indent=1, ensure_ascii=False)


def parse_results(data: Any) -> tuple[str, dict[str, GradeResult], dict[str, bool],
                                      dict[str, Any]]:
    """``(assignment, {student: GradeResult}, defences, run)`` from the grader's record as
    :func:`results_json` wrote it (KeyError, TypeError or ValueError when it is not)."""
    results = {}
    for student, r in data["students"].items():
        r = dict(r)
        r["tests"] = [TestResult(**t) for t in r["tests"]]
        r["cell_errors"] = [tuple(e) for e in r["cell_errors"]]
        r["id_check"] = IdCheck.from_json(r.get("id_check"))
        results[student] = GradeResult(**r)
    defences = {str(k): v is True for k, v in data.get("defences", {}).items()}
    return data["assignment"], results, defences, dict(data.get("run", {}))
