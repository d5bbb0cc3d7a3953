"""Overrides of autograded task scores: the teaching assistant's CSV checked, kept and applied.

After a regrade request a teaching assistant sets a task's points by hand:
``mlcourse grade-import OUT overrides.csv`` (:func:`.manual.import_points`) reads a CSV with
the columns ``student_id, task, points, reason`` (:data:`COLUMNS`): the student, the task (the
answer cell's grade_id, as in ``task_scores.csv``), its new points (any number from 0 to the
task's maximum) and the reason, which the student reads in the feedback. Every row is checked
first (:func:`read_overrides`: a known student, an autograded task, points a number in range, a
reason, no second row for the same student and task); one bad row and nothing is imported.

The record is one file in the graded folder, ``OUT/overrides.csv`` (its path is
:attr:`.out.OutFolder.overrides`): every override in force, with the import's four columns and
then what it replaced (``autograded``, the points the tests earned) and the task's
``max_score``. An import adds its rows to the record (a row for the same student and task
replaces the old one); ``mlcourse grade`` and ``grade-merge`` into the folder keep it and apply
it again to the new results (:func:`apply`), so an override survives a re-grade; a row that no
longer fits (the student was not graded in this run, the task is gone, its maximum shrank)
stays in the record and is named, never dropped. To withdraw an override, delete its row from
the record and import the record itself (``mlcourse grade-import OUT OUT/overrides.csv``).

Applied, an override is part of the student's result (:attr:`.results.GradeResult.overrides`):
:meth:`~.results.GradeResult.task_score` returns its points, so ``grades.csv``,
``task_scores.csv``, the feedback page, the export and the class report all show the same
points. In nbgrader's gradebook it is nbgrader's own override of an autograded cell, a
``manual_score`` on the task's test cells (:func:`cell_points`), so ``nbgrader export`` agrees.
"""

from __future__ import annotations

import csv
import dataclasses
from collections.abc import Collection, Iterable, Mapping
from pathlib import Path

from ..._files import atomic_open
from ..text import clean_text, csv_text, from_csv_text, parse_points
from .results import GradeResult, points

#: The columns of an overrides CSV (the import's; the record begins with them too).
COLUMNS = ("student_id", "task", "points", "reason")
#: The record's columns: the import's, then the points the tests earned and the task's maximum.
RECORD_COLUMNS = (*COLUMNS, "autograded", "max_score")


class OverridesCsvError(ValueError):
    """An overrides CSV that cannot be imported (every problem, one per line)."""


@dataclasses.dataclass(frozen=True)
class Override:
    """One task's points set by a teaching assistant, and where the row was read."""

    student: str
    task: str
    points: float
    reason: str
    where: str = ""  # "FILE, line N"


def is_overrides_csv(columns: Collection[str]) -> bool:
    """Whether a CSV with these columns is an overrides CSV (not a manual-grading one)."""
    return "task" in columns and "grade_id" not in columns


def task_maxima(results: Mapping[str, GradeResult]) -> dict[str, float]:
    """``{task: maximum}`` from the tests in the results (every result lists every test)."""
    cells: dict[str, tuple[str, float]] = {}
    for result in results.values():
        for t in result.tests:
            cells.setdefault(t.grade_id, (t.task, t.points))
    maxima: dict[str, float] = {}
    for task, top in cells.values():
        maxima[task] = maxima.get(task, 0.0) + top
    return maxima


def _rows(path: Path | str, problems: list[str]) -> list[tuple[str, str, str, str, str]]:
    """``(where, student, task, points, reason)`` of the non-blank rows of one CSV (texts as
    written); a file that cannot be read or lacks a column is a problem."""
    rows = []
    try:
        with open(path, newline="", encoding="utf-8-sig") as fh:
            reader = csv.DictReader(fh)
            missing = set(COLUMNS) - set(reader.fieldnames or [])
            if missing:
                problems.append(f"{path}: missing column(s) {', '.join(sorted(missing))} (an "
                                f"overrides CSV has the columns {','.join(COLUMNS)})")
                return []
            for line, row in enumerate(reader, start=2):
                values = [(row.get(c) or "").strip() for c in COLUMNS]
                if any(values):
                    rows.append((f"{path}, line {line}", *values))
    except OSError as exc:
        problems.append(f"{path}: cannot be read ({exc.strerror})")
    except (UnicodeDecodeError, csv.Error) as exc:
        problems.append(f"{path}: not a UTF-8 CSV file ({clean_text(str(exc), 200)})")
    return rows


def _parse(row, problems: list[str]) -> Override | None:
    """One row as an :class:`Override` (student and task as written), or None with a problem
    when its points are not a number or its reason is empty."""
    where, student, task, text, reason = row
    student = from_csv_text(clean_text(student, 300))
    task = clean_text(task, 100)
    value = parse_points(text)
    if value is None:
        problems.append(f"{where}: points {clean_text(text, 30)!r} for {student} / {task} are "
                        "not a number")
        return None
    reason = from_csv_text(clean_text(reason, 2000))
    if not reason:
        problems.append(f"{where}: the override of {student} / {task} has no reason (the "
                        "student reads it in the feedback)")
        return None
    return Override(student, task, value, reason, where)


def _misfit(o: Override, students: Mapping[str, str], maxima: Mapping[str, float],
            manual: Collection[str]) -> str:
    """Why an override does not fit the graded folder ("" when it does)."""
    if o.student not in students:
        return f"unknown student {o.student!r} (not graded in this folder)"
    if o.task not in maxima:
        if o.task in manual:
            return (f"{o.task!r} is graded by hand: its points go in a CSV with the columns "
                    "student_id, grade_id, points, comment")
        return (f"{o.task!r} is not an autograded task (expected one of "
                f"{', '.join(sorted(maxima))})")
    if not 0 <= o.points <= maxima[o.task]:
        return (f"points {o.points:g} for {o.student} / {o.task} must be from 0 to "
                f"{maxima[o.task]:g}")
    return ""


def _known(students: Iterable[str]) -> dict[str, str]:
    """A student as a CSV may write the id (quoted like :func:`~.text.csv_text`, or not)."""
    known = {}
    for s in students:
        known[csv_text(s)] = s
        known[s] = s
    return known


def read_overrides(paths: Iterable[Path | str], students: Collection[str],
                   maxima: Mapping[str, float],
                   manual: Collection[str] = ()) -> dict[tuple[str, str], Override]:
    """The rows of overrides CSVs as ``{(student, task): Override}``, every row checked.

    ``students``: the graded ids; ``maxima``: ``{task: maximum}`` (:func:`task_maxima`);
    ``manual``: the manually graded cells (named in the message when a row gives one). Raises
    :class:`OverridesCsvError` naming the file and line of every bad row: an unknown student
    or task, points that are not a number or out of range, an empty reason, a second row for
    the same student and task.
    """
    known = _known(students)
    problems: list[str] = []
    found: dict[tuple[str, str], Override] = {}
    for path in paths:
        for row in _rows(path, problems):
            o = _parse(row, problems)
            if o is None:
                continue
            o = dataclasses.replace(o, student=known.get(row[1], o.student))
            why = _misfit(o, known, maxima, manual)
            if why:
                problems.append(f"{o.where}: {why}")
                continue
            first = found.get((o.student, o.task))
            if first is not None:
                problems.append(f"{o.where}: a second override of {o.student} / {o.task} (the "
                                f"first is {first.where}): give each student and task one row")
                continue
            found[(o.student, o.task)] = o
    if problems:
        raise OverridesCsvError("\n".join(problems))
    return found


# ------------------------------------------------------------------ the record


def read_record(path: Path | str) -> dict[tuple[str, str], Override]:
    """The overrides in force, from the record at ``path`` (:attr:`.out.OutFolder.overrides`;
    empty when there is none). Raises :class:`OverridesCsvError` naming the line of a row that
    is not an override (points not a number, no reason, the same student and task twice): the
    record is edited by hand only to delete rows."""
    path = Path(path)
    if not path.is_file():
        return {}
    problems: list[str] = []
    found: dict[tuple[str, str], Override] = {}
    for row in _rows(path, problems):
        o = _parse(row, problems)
        if o is None:
            continue
        if (o.student, o.task) in found:
            problems.append(f"{o.where}: {o.student} / {o.task} is in the record twice (the "
                            f"first is {found[(o.student, o.task)].where})")
            continue
        found[(o.student, o.task)] = o
    if problems:
        raise OverridesCsvError("\n".join(problems))
    return found


def write_record(path: Path | str, record: Mapping[tuple[str, str], Override],
                 results: Mapping[str, GradeResult], maxima: Mapping[str, float]) -> Path:
    """Write the record at ``path`` (sorted by student and task), with the points the tests
    earned where the student's result is at hand. Returns its path."""
    path = Path(path)
    with atomic_open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(RECORD_COLUMNS)
        for (student, task), o in sorted(record.items()):
            result = results.get(student)
            auto = points(result.autograded_task_score(task)) \
                if result is not None and task in maxima else ""
            top = points(maxima[task]) if task in maxima else ""
            w.writerow([csv_text(student), task, points(o.points), csv_text(o.reason), auto, top])
    return path


def apply(results: Mapping[str, GradeResult], record: Mapping[tuple[str, str], Override],
          maxima: Mapping[str, float]) -> list[str]:
    """Set every result's overrides from the record (replacing any it had); returns, in words,
    each row of the record that does not fit these results (kept in the record, not applied)."""
    for result in results.values():
        result.overrides = {}
    students = {s: s for s in results}
    unfit = []
    for (student, task), o in sorted(record.items()):
        why = _misfit(o, students, maxima, ())
        if why:
            unfit.append(f"{o.where}: not applied: {why}")
            continue
        results[student].overrides[task] = {"points": o.points, "reason": o.reason}
    return unfit


def apply_to(result: GradeResult, record: Mapping[tuple[str, str], Override],
             maxima: Mapping[str, float]) -> None:
    """:func:`apply` for one student's result (as it is graded; the misfits are named once,
    for the class)."""
    apply({result.student: result}, {k: o for k, o in record.items()
                                     if k[0] == result.student}, maxima)


def cell_points(result: GradeResult) -> dict[str, float]:
    """``{test grade_id: points}`` for the test cells of the overridden tasks of ``result``:
    each task's points filled into its test cells in order, each up to its own points (4
    points over cells of 1, 2 and 2 give 1, 2 and 1), so that nbgrader's total of the cells is
    the override."""
    found = {}
    for task, entry in result.overrides.items():
        left = float(entry["points"])
        for t in (t for t in result.tests if t.task == task):
            found[t.grade_id] = piece = min(t.points, max(left, 0.0))
            left -= piece
    return found
