"""The one reader of a graded folder as a whole (what `mlcourse grade` or `grade-merge` wrote).

Every file is read through its owner, :class:`.out.OutFolder`, into the one model,
:class:`.model.GradedFolder`: for the reports by :func:`read_graded_folder`, for the export by
:func:`read_graded` (each student's :class:`.model.Total`).

A graded folder holds ``grades.csv``, ``task_scores.csv`` (the autograded points, a teaching
assistant's overrides applied), ``results.json`` (every test's outcome, the reasons for
withheld points, the overrides, notes), ``timestamps.json``, ``feedback/``, ``manual/`` and
nbgrader's ``gradebook.db``. :func:`read_graded_folder` reads them all as data: any of them
may be missing, older or written by a newer grader (unknown keys are ignored, missing ones take
defaults), and every gap is recorded in ``GradedFolder.gaps`` in words instead of raised. Only
a folder that holds none of the grade files, or whose files contradict each other, is a
:class:`.model.GradedFolderError`.

Everything read here (ids, messages, reasons) is student-controlled text: callers escape it.
The words for a failure are in :mod:`.reasons`.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import math
from collections.abc import Collection, Iterable, Mapping
from pathlib import Path
from typing import Any

from ..text import plural
from . import gradebook
from .model import (
    Check,
    GradedFolder,
    GradedFolderError,
    ManualCell,
    Outcome,
    StudentRecord,
    student_total,
)
from .out import GRADEBOOK, GRADES, MANUAL, RESULTS, TASK_SCORES, TIMESTAMPS, OutFolder
from .results import IdCheck

# ------------------------------------------------------------------ small readers


def _number(text: Any) -> float | None:
    if isinstance(text, bool):
        return None
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def _csv_id(text: str, known: Collection[str] = ()) -> str:
    """A student id as the grader wrote it in a CSV (``csv_text`` quotes formula starts with
    ``'``); an id of results.json (``known``) as it is."""
    if text in known:
        return text
    if text.startswith("'") and text[1:2] in ("=", "+", "-", "@", "\t", "\r"):
        return text[1:]
    return text


def _read_csv(path: Path, columns: Iterable[str]) -> list[dict[str, str]]:
    """Rows of a CSV with the given columns; GradedFolderError naming the file otherwise."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as fh:
            reader = csv.DictReader(fh)
            missing = set(columns) - set(reader.fieldnames or [])
            if missing:
                raise GradedFolderError(f"{path} lacks the column(s) {', '.join(sorted(missing))}")
            return list(reader)
    except OSError as exc:
        raise GradedFolderError(f"{path} cannot be read ({exc.strerror})") from None
    except (UnicodeDecodeError, csv.Error) as exc:
        raise GradedFolderError(f"{path} is not a UTF-8 CSV file ({exc})") from None


def _read_json(path: Path, gaps: list[str], what: str) -> Any:
    """The JSON in ``path``, or None (with a gap) when it is missing or broken."""
    if not path.is_file():
        gaps.append(f"no {path.name}: {what}")
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        gaps.append(f"{path.name} could not be read ({type(exc).__name__}): {what}")
        return None


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _source_checks(name: str, root: Path | str | None) -> dict[str, tuple[str, str]]:
    """``{test grade_id: (kind, description)}`` from the source notebook, when it is found."""
    from ..notebook import HIDDEN_BEGIN, load_assignment

    try:
        assignment = load_assignment(name, root)
    except (OSError, ValueError):
        return {}
    return {t.grade_id: ("hidden" if HIDDEN_BEGIN in t.source else "visible", t.description)
            for t in assignment.tests}


def _source_manual(name: str, root: Path | str | None) -> list[tuple[str, float]]:
    from ..notebook import load_assignment

    try:
        return load_assignment(name, root).manual
    except (OSError, ValueError):
        return []


# ------------------------------------------------------------------ manual grading


def _csv_progress(path: Path, students: Iterable[str]) -> int | None:
    """Answers with points in a (filled) ``manual/<grade_id>.csv``; None if unreadable."""
    known = set(students)
    try:
        with open(path, newline="", encoding="utf-8-sig") as fh:
            rows = list(csv.DictReader(fh))
    except (OSError, UnicodeDecodeError, csv.Error):
        return None
    done = {_csv_id(r.get("student_id") or "") for r in rows
            if _number((r.get("points") or "").strip().replace(",", ".")) is not None}
    return len(done & known)


def _manual_cells(out: OutFolder, name: str, students: list[str], root,
                  gaps: list[str]) -> list[ManualCell]:
    """Each manually graded cell with how many of its answers have points."""
    found: dict[str, float | None] = {}
    for gid, points in _source_manual(name, root):
        found[gid] = points
    if out.manual.is_dir():
        for path in out.manual_csvs():
            found.setdefault(path.stem, None)
    db = out.gradebook
    progress = gradebook.manual_progress(db, name) if db.is_file() else None
    if db.is_file() and progress is None:
        gaps.append(f"{GRADEBOOK} could not be read: manual-grading progress is taken from "
                    f"{MANUAL}/*.csv where filled in")
    for gid, (top, _) in (progress or {}).items():
        found.setdefault(gid, top)
    cells = []
    for gid, points in found.items():
        if progress is not None and gid in progress:
            top, done = progress[gid]
            cells.append(ManualCell(gid, points if points is not None else top, done,
                                    len(students), GRADEBOOK))
            continue
        path = out.manual_csv(gid)
        done = _csv_progress(path, students) if path.is_file() else None
        cells.append(ManualCell(gid, points, done, len(students),
                                f"{MANUAL}/{gid}.csv" if done is not None else ""))
    return cells


# ------------------------------------------------------------------ the folder, file by file


@dataclasses.dataclass
class _Reading:
    """What the files of one graded folder said so far (the parts of :func:`read_graded_folder`)."""

    out: OutFolder
    gaps: list[str] = dataclasses.field(default_factory=list)
    names: dict[str, str] = dataclasses.field(default_factory=dict)  # assignment -> file naming it
    students: dict[str, StudentRecord] = dataclasses.field(default_factory=dict)
    checks: dict[str, Check] = dataclasses.field(default_factory=dict)
    extra: dict[str, Any] = dataclasses.field(default_factory=dict)
    data: Any = None  # results.json as read (None: missing or broken)
    tasks: list[str] = dataclasses.field(default_factory=list)
    task_max: dict[str, float] = dataclasses.field(default_factory=dict)
    task_rows_of: dict[str, set[str]] = dataclasses.field(default_factory=dict)
    totals: dict[str, float] = dataclasses.field(default_factory=dict)  # grades.csv's
    max_score: float | None = None

    def record(self, student: str) -> StudentRecord:
        if student not in self.students:
            self.students[student] = StudentRecord(student)
        return self.students[student]

    def results_json(self) -> None:
        """Every check's outcome, the reasons and notes."""
        data = self.data = _read_json(
            self.out.results, self.gaps,
            "the failed checks and the reasons for withheld points are unknown")
        if data is not None and not isinstance(data, dict):
            self.gaps.append(f"{RESULTS} is not a results file: the failed checks are unknown")
        if not isinstance(data, dict):
            return
        if isinstance(data.get("assignment"), str):
            self.names.setdefault(data["assignment"], RESULTS)
        self.extra = {k: v for k, v in data.items() if k not in ("assignment", "students")}
        entries = data.get("students") if isinstance(data.get("students"), dict) else {}
        if not entries and "students" not in data:
            self.gaps.append(f"{RESULTS} lists no students")
        for student, entry in entries.items():
            if isinstance(entry, dict):
                self._entry(self.record(str(student)), entry)

    def _entry(self, rec: StudentRecord, entry: dict[str, Any]) -> None:
        """One student's entry of results.json."""
        rec.in_results = True
        tests = entry.get("tests") if isinstance(entry.get("tests"), list) else []
        for test in tests:
            if not isinstance(test, dict) or not isinstance(test.get("grade_id"), str):
                continue
            gid, task = test["grade_id"], _str(test.get("task"))
            points = _number(test.get("points")) or 0.0
            if gid not in self.checks:
                self.checks[gid] = Check(gid, task, points, _str(test.get("description")) or gid)
            rec.outcomes[gid] = Outcome(_number(test.get("earned")) or 0.0,
                                        _str(test.get("message")))
        reasons = entry.get("reasons") if isinstance(entry.get("reasons"), dict) else {}
        rec.reasons = {str(k): v for k, v in reasons.items() if isinstance(v, str)}
        given = entry.get("overrides") if isinstance(entry.get("overrides"), dict) else {}
        for task, o in given.items():
            value = _number(o.get("points")) if isinstance(o, dict) else None
            if value is not None:
                auto = sum(out.earned for gid, out in rec.outcomes.items()
                           if self.checks[gid].task == task)
                rec.overrides[str(task)] = (value, auto, _str(o.get("reason")))
        notes = entry.get("notes") if isinstance(entry.get("notes"), list) else []
        rec.notes = [n for n in notes if isinstance(n, str)]
        rec.id_check = IdCheck.from_json(entry.get("id_check"))

    def _rows(self, path: Path, columns: tuple[str, ...]) -> Iterable[tuple[str, dict, float,
                                                                               float]]:
        """``(student, row, score, max_score)`` of a grade file, each naming the assignment."""
        known = {s for s, r in self.students.items() if r.in_results}  # results.json's ids
        for line, row in enumerate(_read_csv(path, columns), start=2):
            score, top = _number(row["score"]), _number(row["max_score"])
            if score is None or top is None:
                raise GradedFolderError(f"{path}, line {line}: score and max_score must be numbers")
            self.names.setdefault(row["assignment"], path.name)
            yield _csv_id(row["student_id"], known), row, score, top

    def task_scores(self) -> None:
        """Per student and task: the grade (results.json adds the why)."""
        path = self.out.task_scores
        if not path.is_file():
            self.gaps.append(f"no {TASK_SCORES}: task scores are taken from {RESULTS}")
            return
        columns = ("student_id", "assignment", "task", "score", "max_score")
        for student, row, score, top in self._rows(path, columns):
            task = row["task"]
            if task not in self.task_max:
                self.tasks.append(task)
                self.task_max[task] = top
            self.record(student).task_scores[task] = score
            self.task_rows_of.setdefault(student, set()).add(task)

    def grades(self) -> None:
        """The total per student."""
        path = self.out.grades
        if not path.is_file():
            self.gaps.append(f"no {GRADES}: totals are the sums of the task scores")
            return
        for student, _, score, top in self._rows(path, ("student_id", "assignment", "score",
                                                        "max_score")):
            self.max_score = top if self.max_score is None else max(self.max_score, top)
            self.record(student)
            self.totals[student] = score

    def name(self) -> str:
        """The one assignment the files name (GradedFolderError when they name several, or
        none)."""
        distinct = sorted(self.names)
        if len(distinct) > 1:
            raise GradedFolderError(
                f"{self.out.path}: its files name different assignments ("
                + ", ".join(f"{self.names[n]}: {n!r}" for n in distinct) + ")")
        if not distinct:
            raise GradedFolderError(f"{self.out.path}: no file names the assignment (empty "
                                    f"{GRADES}, {TASK_SCORES} and {RESULTS}?)")
        return distinct[0]

    def fill_in(self) -> None:
        """Tasks and totals where the CSVs are silent."""
        for check in self.checks.values():
            if check.task and check.task not in self.task_max:
                self.tasks.append(check.task)
                self.task_max[check.task] = 0.0
        for task in self.tasks:
            from_checks = sum(c.points for c in self.checks.values() if c.task == task)
            if self.task_max[task] == 0.0 and from_checks:
                self.task_max[task] = from_checks
        for rec in self.students.values():
            for task in self.tasks:
                if task not in rec.task_scores and task in rec.overrides:
                    rec.task_scores[task] = rec.overrides[task][0]
                elif task not in rec.task_scores and rec.outcomes:
                    rec.task_scores[task] = sum(o.earned for gid, o in rec.outcomes.items()
                                                if self.checks[gid].task == task)
            rec.score = self.totals.get(rec.student, sum(rec.task_scores.values()))
        if self.max_score is None:
            self.max_score = sum(self.task_max.values())

    def kinds(self, name: str, root: Path | str | None) -> list[Check]:
        """The checks, marked hidden or visible from the source notebook (descriptions:
        results.json's)."""
        kinds = _source_checks(name, root)
        if self.checks and not kinds:
            self.gaps.append(f"no source notebook solutions/{name}/{name}.ipynb here: checks "
                             "are not marked visible or hidden")
        return [Check(c.grade_id, c.task, c.points, c.description,
                      kinds.get(c.grade_id, ("", ""))[0]) for c in self.checks.values()]

    def partly_graded(self) -> None:
        """Gaps for students without a row, tasks without a score."""
        graded_ids = set(self.totals) | set(self.task_rows_of)
        in_results = {s for s, r in self.students.items() if r.in_results}
        if self.data is not None and graded_ids - in_results:
            n = len(graded_ids - in_results)
            self.gaps.append(f"{plural(n, 'student')} of the CSVs {'is' if n == 1 else 'are'} "
                             f"not in {RESULTS}: their failed checks are unknown")
        if self.task_rows_of:
            short = [s for s in self.students
                     if self.task_rows_of.get(s, set()) != set(self.tasks)]
            if short:
                self.gaps.append(
                    f"{plural(len(short), 'student')} {'lacks' if len(short) == 1 else 'lack'}"
                    f" a row of {TASK_SCORES} for some task (counted with the score "
                    f"{RESULTS} gives, or left out)")
        if self.out.grades.is_file() and set(self.students) - set(self.totals):
            n = len(set(self.students) - set(self.totals))
            self.gaps.append(f"{plural(n, 'student')} {'has' if n == 1 else 'have'} no row in "
                             f"{GRADES}")

    def times_and_pages(self) -> bool:
        """Submission times and feedback pages; whether the times are known."""
        times = _read_json(self.out.timestamps, [], "")
        has_times = isinstance(times, dict)
        if not has_times:
            self.gaps.append(f"no {TIMESTAMPS}: submission times (and late penalties) are "
                             "unknown")
        for student, rec in self.students.items():
            info = times.get(student) if has_times else None
            if isinstance(info, dict):
                rec.submitted = info.get("submitted") \
                    if isinstance(info.get("submitted"), bool) else None
                rec.time = _str(info.get("time")) or None
                rec.time_source = _str(info.get("source"))
            page = self.out.feedback_page(student)
            if "/" not in student and student not in ("", ".", "..") and page.is_file():
                rec.feedback = page
        missing = sum(r.feedback is None for r in self.students.values())
        if missing:
            self.gaps.append(f"{plural(missing, 'student')} "
                             f"{'has' if missing == 1 else 'have'} no feedback page")
        return has_times


def read_graded_folder(folder: Path | str, root: Path | str | None = None) -> GradedFolder:
    """Read a folder written by ``mlcourse grade`` (or ``grade-merge``) as a
    :class:`.model.GradedFolder`, defensively (see the module docstring).

    ``root`` is the course folder, whose source notebook says which checks are hidden (found
    from the working directory when None; without it the kinds are left blank). Raises
    :class:`.model.GradedFolderError` when the folder does not exist, holds none of
    ``grades.csv``, ``task_scores.csv`` and ``results.json``, or its files name different
    assignments.
    """
    out = OutFolder(folder)
    if not out.path.is_dir():
        raise GradedFolderError(f"{out.path} is not a folder" if out.path.exists()
                                else f"{out.path} does not exist")
    if not out.is_graded():
        raise GradedFolderError(f"{out.path} holds no {GRADES}, {TASK_SCORES} or {RESULTS}: "
                                "is it a folder written by `mlcourse grade`?")
    reading = _Reading(out)
    reading.results_json()
    reading.task_scores()
    reading.grades()
    name = reading.name()
    reading.fill_in()
    checks = reading.kinds(name, root)
    reading.partly_graded()
    has_times = reading.times_and_pages()
    manual = _manual_cells(out, name, sorted(reading.students), root, reading.gaps)
    return GradedFolder(name, out.path, float(reading.max_score), reading.tasks,
                        reading.task_max, checks, dict(sorted(reading.students.items())), manual,
                        has_times, reading.extra, reading.gaps)


def describe_gaps(folders: Mapping[str, GradedFolder]) -> list[str]:
    """Every gap of every folder, prefixed with its assignment."""
    return [f"{name}: {gap}" for name, graded in folders.items() for gap in graded.gaps]


# ------------------------------------------------------------------ totals for an export


def read_graded(folder: Path | str, root: Path | str | None = None) -> GradedFolder:
    """A folder written by ``mlcourse grade`` with each student's :class:`.model.Total`
    (ValueError if it is not one): the grader's record (overrides applied) and the manual
    points of the gradebook; without a gradebook the manually graded cells are the source
    notebook's (``root``: the course folder; found from the working directory when None), all
    still to grade. Fills ``totals``, ``manual_max`` and ``times`` besides the record."""
    out = OutFolder(folder)
    graded = out.read_results()
    if out.gradebook.is_file():
        manual_max, _ = gradebook.manual_layout(out.gradebook, graded.name)
        manual = list(manual_max.items())
        points = gradebook.manual_points(out.gradebook, graded.name, graded.results)
    else:
        from ..notebook import load_assignment

        manual, points = load_assignment(graded.name, root).manual, {}
    graded.totals = {s: student_total(r, manual, points.get(s), autograded_max=graded.max_score)
                     for s, r in graded.results.items()}
    graded.manual_max = sum(m for _, m in manual)
    graded.times = out.read_timestamps() or {}
    return graded
