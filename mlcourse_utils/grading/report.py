"""What grading writes for people: grades.csv, task_scores.csv and the feedback pages."""

from __future__ import annotations

import csv
import functools
from pathlib import Path

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_text(value):
    """A text cell a spreadsheet shows as text: a leading =, +, -, @ or tab is quoted with '."""
    text = str(value)
    return "'" + text if text.startswith(_FORMULA_START) else text


def write_csvs(results, assignment, out):
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


def write_feedback(result, assignment, path):
    """One self-contained HTML page for a student: every task, each failing test in words.

    Rendered from ``templates/feedback.html`` with autoescaping: whatever a student's code
    printed or raised appears as text.
    """
    page = _template().render(result=result, assignment=assignment,
                              notes=list(dict.fromkeys(result.notes)),
                              output=result.output[-5000:] if result.output.strip() else "")
    Path(path).write_text(page, encoding="utf-8")
