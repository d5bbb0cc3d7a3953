"""What grading writes: grades.csv, task_scores.csv, the feedback pages and results.json."""

from __future__ import annotations

import csv
import dataclasses
import functools
import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .session import GradeResult, TestResult

if TYPE_CHECKING:
    from .notebook import Assignment

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_text(value: object) -> str:
    """A text cell a spreadsheet shows as text: a leading =, +, -, @ or tab is quoted with '."""
    text = str(value)
    return "'" + text if text.startswith(_FORMULA_START) else text


def write_csvs(results: Mapping[str, GradeResult], assignment: Assignment, out: Path) -> None:
    """``out/grades.csv`` and ``out/task_scores.csv``: a row per student (and task), sorted."""
    with open(out / "grades.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["student_id", "assignment", "score", "max_score"])
        for student in sorted(results):
            w.writerow([csv_text(student), assignment.name, _fmt(results[student].score),
                        _fmt(assignment.max_score)])
    with open(out / "task_scores.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["student_id", "assignment", "task", "score", "max_score"])
        for student in sorted(results):
            for task in assignment.tasks:
                w.writerow([csv_text(student), assignment.name, task,
                            _fmt(results[student].task_score(task)),
                            _fmt(assignment.task_max(task))])


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
    (Path(out) / "results.json").write_text(json.dumps(data, indent=1, ensure_ascii=False),
                                            encoding="utf-8")


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


def _fmt(x):
    return f"{x:g}"


@functools.lru_cache(maxsize=1)
def _template():
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(Path(__file__).with_name("templates")),
        autoescape=True, trim_blocks=True, lstrip_blocks=True, undefined=jinja2.StrictUndefined)
    env.filters["points"] = _fmt
    return env.get_template("feedback.html")


def write_feedback(result: GradeResult, assignment: Assignment, path: Path | str) -> None:
    """One self-contained HTML page for a student: every task, each failing test in words.

    Rendered from ``templates/feedback.html`` with autoescaping: whatever a student's code
    printed or raised appears as text, and the page's content security policy allows no
    script. Its size is bounded by the result's caps (:meth:`GradeResult.bound`).
    """
    page = _template().render(result=result, assignment=assignment,
                              notes=list(dict.fromkeys(result.notes)),
                              output=result.output[-5000:] if result.output.strip() else "")
    Path(path).write_text(page, encoding="utf-8")

