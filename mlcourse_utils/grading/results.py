"""Grading's results as data: ``results.json`` (every student's full result), ``grades.csv`` and
``task_scores.csv`` (a row per student and task).

Below everything that reads or writes them (the batch, the feedback writer, manual grading, the
exports, the class report); the result classes themselves are the grading engine's
(:class:`~.session.GradeResult`, :class:`~.session.TestResult`).
"""

from __future__ import annotations

import csv
import dataclasses
import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._files import atomic_open, write_text
from .session import GradeResult, TestResult
from .text import csv_text

if TYPE_CHECKING:
    from .notebook import Assignment


def points(x: float) -> str:
    """A number of points as the grade files write it (``12``, ``3.5``)."""
    return f"{x:g}"


def write_csvs(results: Mapping[str, GradeResult], assignment: Assignment, out: Path) -> None:
    """``out/grades.csv`` and ``out/task_scores.csv``: a row per student (and task), sorted."""
    with atomic_open(out / "grades.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["student_id", "assignment", "score", "max_score"])
        for student in sorted(results):
            w.writerow([csv_text(student), assignment.name, points(results[student].score),
                        points(assignment.max_score)])
    with atomic_open(out / "task_scores.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["student_id", "assignment", "task", "score", "max_score"])
        for student in sorted(results):
            for task in assignment.tasks:
                w.writerow([csv_text(student), assignment.name, task,
                            points(results[student].task_score(task)),
                            points(assignment.task_max(task))])


@dataclasses.dataclass
class Results:
    """What ``results.json`` holds: the assignment's name, every student's result, the defences
    the sandboxes had (``{defence: in force}``) and figures of the run."""

    name: str
    results: dict[str, GradeResult]
    defences: dict[str, bool] = dataclasses.field(default_factory=dict)
    run: dict[str, Any] = dataclasses.field(default_factory=dict)


def write_results(results: Mapping[str, GradeResult], assignment: Assignment,
                  out: Path | str, defences: Mapping[str, bool] | None = None,
                  run: Mapping[str, Any] | None = None) -> None:
    """``out/results.json``: every student's full result, for tools (merging shards, exports),
    with the defences in force (:func:`~.sandbox.defences`) and figures of the run."""
    data = {"assignment": assignment.name, "defences": dict(defences or {}), "run": dict(run or {}),
            "students": {s: dataclasses.asdict(r) for s, r in sorted(results.items())}}
    write_text(Path(out) / "results.json", json.dumps(data, indent=1, ensure_ascii=False))


def read_results(out: Path | str) -> Results:
    """Read ``out/results.json`` back (ValueError when it is missing or not ours)."""
    path = Path(out) / "results.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        results = {}
        for student, r in data["students"].items():
            r = dict(r)
            r["tests"] = [TestResult(**t) for t in r["tests"]]
            r["cell_errors"] = [tuple(e) for e in r["cell_errors"]]
            results[student] = GradeResult(**r)
        defences = {str(k): v is True for k, v in data.get("defences", {}).items()}
        return Results(data["assignment"], results, defences, dict(data.get("run", {})))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{path} is not a results file written by `mlcourse grade` ({exc})") \
            from None
