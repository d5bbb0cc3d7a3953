"""The one reader of a graded folder (what `mlcourse grade` or `grade-merge` wrote), for reports.

It also decides a student's total (:func:`student_total`, shown by :func:`shown`): the export
writes it and every feedback page shows it.

A graded folder holds ``grades.csv``, ``task_scores.csv`` (the autograded points, a teaching
assistant's overrides applied), ``results.json`` (every test's outcome, the reasons for
withheld points, the overrides, notes), ``timestamps.json``, ``feedback/``, ``manual/`` and
nbgrader's ``gradebook.db``. :func:`read_graded_folder` reads them all as data
into one :class:`GradedFolder`: any of them may be missing, older or written by a newer grader
(unknown keys are ignored, missing ones take defaults), and every gap is recorded in
``GradedFolder.gaps`` in words instead of raised. Only a folder that holds none of the grade
files, or whose files contradict each other, is a :class:`GradedFolderError`.

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
from .overrides import task_maxima
from .results import GradeResult


def penalised(points: float, percent: float) -> float:
    """``points`` less a late penalty of ``percent`` % of them (the one place that applies it;
    :mod:`.late` decides the percentage)."""
    return points * (1 - percent / 100)


class GradedFolderError(ValueError):
    """A folder that cannot be read as a graded folder (the message names what is missing)."""


@dataclasses.dataclass(frozen=True)
class Check:
    """One test cell of the assignment: what the feedback calls it and what it is worth."""

    grade_id: str
    task: str
    points: float
    description: str
    kind: str = ""  # "visible", "hidden", or "" when the source notebook is not at hand


@dataclasses.dataclass
class Outcome:
    """One student's result on one check."""

    earned: float
    message: str = ""


@dataclasses.dataclass
class StudentRecord:
    """Everything the folder says about one student (defaults where a file is silent)."""

    student: str
    score: float = 0.0
    task_scores: dict[str, float] = dataclasses.field(default_factory=dict)
    outcomes: dict[str, Outcome] = dataclasses.field(default_factory=dict)  # check -> outcome
    reasons: dict[str, str] = dataclasses.field(default_factory=dict)       # task -> reason
    #: task -> (points, the autograded points they replace, reason): a teaching assistant's
    #: override (the task's score above is already the override's points)
    overrides: dict[str, tuple[float, float, str]] = dataclasses.field(default_factory=dict)
    notes: list[str] = dataclasses.field(default_factory=list)
    in_results: bool = False      # has an entry in results.json
    submitted: bool | None = None  # timestamps.json: a notebook was found (None: unknown)
    time: str | None = None        # submission time (ISO), where recorded
    time_source: str = ""          # where that time came from
    feedback: Path | None = None   # the feedback page, when it exists


@dataclasses.dataclass
class ManualCell:
    """Progress of manual grading on one manually graded cell."""

    grade_id: str
    points: float | None   # the cell's maximum, when known
    graded: int | None     # answers with points (None: unknown)
    total: int             # answers to grade (students of the folder)
    source: str            # where ``graded`` was read ("" when unknown)


@dataclasses.dataclass
class GradedFolder:
    """One graded assignment, read defensively (see the module docstring)."""

    name: str
    folder: Path
    max_score: float
    tasks: list[str]
    task_max: dict[str, float]
    checks: list[Check]
    students: dict[str, StudentRecord]
    manual: list[ManualCell]
    has_times: bool
    #: Top-level entries of results.json other than the assignment and students (e.g. the
    #: defences that were in force), passed on as they are.
    extra: dict[str, Any]
    gaps: list[str]

    def checks_of(self, task: str) -> list[Check]:
        return [c for c in self.checks if c.task == task]


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


def _manual_cells(folder: Path, name: str, students: list[str], root, gaps) -> list[ManualCell]:
    """Each manually graded cell with how many of its answers have points."""
    found: dict[str, float | None] = {}
    for gid, points in _source_manual(name, root):
        found[gid] = points
    manual_dir = folder / "manual"
    if manual_dir.is_dir():
        for path in sorted(manual_dir.glob("*.csv")):
            found.setdefault(path.stem, None)
    db = folder / "gradebook.db"
    progress = gradebook.manual_progress(db, name) if db.is_file() else None
    if db.is_file() and progress is None:
        gaps.append("gradebook.db could not be read: manual-grading progress is taken from "
                    "manual/*.csv where filled in")
    for gid, (top, _) in (progress or {}).items():
        found.setdefault(gid, top)
    cells = []
    for gid, points in found.items():
        if progress is not None and gid in progress:
            top, done = progress[gid]
            cells.append(ManualCell(gid, points if points is not None else top, done,
                                    len(students), "gradebook.db"))
            continue
        done = _csv_progress(manual_dir / f"{gid}.csv", students) \
            if (manual_dir / f"{gid}.csv").is_file() else None
        cells.append(ManualCell(gid, points, done, len(students),
                                f"manual/{gid}.csv" if done is not None else ""))
    return cells


# ------------------------------------------------------------------ the folder


def read_graded_folder(folder: Path | str, root: Path | str | None = None) -> GradedFolder:
    """Read a folder written by ``mlcourse grade`` (or ``grade-merge``) as a :class:`GradedFolder`.

    ``root`` is the course folder, whose source notebook says which checks are hidden (found
    from the working directory when None; without it the kinds are left blank). Raises
    :class:`GradedFolderError` when the folder does not exist, holds none of ``grades.csv``,
    ``task_scores.csv`` and ``results.json``, or its files name different assignments.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise GradedFolderError(f"{folder} is not a folder" if folder.exists()
                                else f"{folder} does not exist")
    grade_files = ("grades.csv", "task_scores.csv", "results.json")
    if not any((folder / f).is_file() for f in grade_files):
        raise GradedFolderError(f"{folder} holds no grades.csv, task_scores.csv or results.json: "
                                "is it a folder written by `mlcourse grade`?")
    gaps: list[str] = []
    names: dict[str, str] = {}
    students: dict[str, StudentRecord] = {}
    tasks: list[str] = []
    task_max: dict[str, float] = {}
    max_score = None

    def record(student: str) -> StudentRecord:
        if student not in students:
            students[student] = StudentRecord(student)
        return students[student]

    # results.json: every check's outcome, the reasons and notes.
    data = _read_json(folder / "results.json", gaps,
                      "the failed checks and the reasons for withheld points are unknown")
    checks: dict[str, Check] = {}
    extra: dict[str, Any] = {}
    if isinstance(data, dict):
        if isinstance(data.get("assignment"), str):
            names.setdefault(data["assignment"], "results.json")
        extra = {k: v for k, v in data.items() if k not in ("assignment", "students")}
        entries = data.get("students") if isinstance(data.get("students"), dict) else {}
        if not entries and "students" not in data:
            gaps.append("results.json lists no students")
        for student, entry in entries.items():
            if not isinstance(entry, dict):
                continue
            rec = record(str(student))
            rec.in_results = True
            tests = entry.get("tests") if isinstance(entry.get("tests"), list) else []
            for test in tests:
                if not isinstance(test, dict) or not isinstance(test.get("grade_id"), str):
                    continue
                gid, task = test["grade_id"], _str(test.get("task"))
                points = _number(test.get("points")) or 0.0
                if gid not in checks:
                    checks[gid] = Check(gid, task, points,
                                        _str(test.get("description")) or gid)
                rec.outcomes[gid] = Outcome(_number(test.get("earned")) or 0.0,
                                            _str(test.get("message")))
            reasons = entry.get("reasons") if isinstance(entry.get("reasons"), dict) else {}
            rec.reasons = {str(k): v for k, v in reasons.items() if isinstance(v, str)}
            given = entry.get("overrides") if isinstance(entry.get("overrides"), dict) else {}
            for task, o in given.items():
                value = _number(o.get("points")) if isinstance(o, dict) else None
                if value is not None:
                    auto = sum(out.earned for gid, out in rec.outcomes.items()
                               if checks[gid].task == task)
                    rec.overrides[str(task)] = (value, auto, _str(o.get("reason")))
            notes = entry.get("notes") if isinstance(entry.get("notes"), list) else []
            rec.notes = [n for n in notes if isinstance(n, str)]
    elif data is not None:
        gaps.append("results.json is not a results file: the failed checks are unknown")

    known = set(students)  # the ids of results.json
    # task_scores.csv: per student and task (the grade; results.json adds the why).
    path = folder / "task_scores.csv"
    task_rows_of: dict[str, set[str]] = {}
    if path.is_file():
        for line, row in enumerate(_read_csv(path, ("student_id", "assignment", "task", "score",
                                                    "max_score")), start=2):
            score, top = _number(row["score"]), _number(row["max_score"])
            if score is None or top is None:
                raise GradedFolderError(f"{path}, line {line}: score and max_score must be numbers")
            names.setdefault(row["assignment"], "task_scores.csv")
            task = row["task"]
            if task not in task_max:
                tasks.append(task)
                task_max[task] = top
            student = _csv_id(row["student_id"], known)
            record(student).task_scores[task] = score
            task_rows_of.setdefault(student, set()).add(task)
    else:
        gaps.append("no task_scores.csv: task scores are taken from results.json")

    # grades.csv: the total per student.
    path = folder / "grades.csv"
    totals: dict[str, float] = {}
    if path.is_file():
        for line, row in enumerate(_read_csv(path, ("student_id", "assignment", "score",
                                                    "max_score")), start=2):
            score, top = _number(row["score"]), _number(row["max_score"])
            if score is None or top is None:
                raise GradedFolderError(f"{path}, line {line}: score and max_score must be numbers")
            names.setdefault(row["assignment"], "grades.csv")
            max_score = top if max_score is None else max(max_score, top)
            student = _csv_id(row["student_id"], known)
            record(student)
            totals[student] = score
    else:
        gaps.append("no grades.csv: totals are the sums of the task scores")

    distinct = sorted(names)
    if len(distinct) > 1:
        raise GradedFolderError(f"{folder}: its files name different assignments ("
                                + ", ".join(f"{names[n]}: {n!r}" for n in distinct) + ")")
    if not distinct:
        raise GradedFolderError(f"{folder}: no file names the assignment (empty grades.csv, "
                                "task_scores.csv and results.json?)")
    name = distinct[0]

    # Tasks and totals where the CSVs are silent.
    for check in checks.values():
        if check.task and check.task not in task_max:
            tasks.append(check.task)
            task_max[check.task] = 0.0
    for task in tasks:
        from_checks = sum(c.points for c in checks.values() if c.task == task)
        if task_max[task] == 0.0 and from_checks:
            task_max[task] = from_checks
    for rec in students.values():
        for task in tasks:
            if task not in rec.task_scores and task in rec.overrides:
                rec.task_scores[task] = rec.overrides[task][0]
            elif task not in rec.task_scores and rec.outcomes:
                rec.task_scores[task] = sum(o.earned for gid, o in rec.outcomes.items()
                                            if checks[gid].task == task)
        rec.score = totals.get(rec.student, sum(rec.task_scores.values()))
    if max_score is None:
        max_score = sum(task_max.values())

    # Which checks are hidden, from the source notebook (descriptions: results.json's).
    kinds = _source_checks(name, root)
    ordered = [Check(c.grade_id, c.task, c.points, c.description,
                     kinds.get(c.grade_id, ("", ""))[0]) for c in checks.values()]
    if checks and not kinds:
        gaps.append(f"no source notebook solutions/{name}/{name}.ipynb here: checks are not "
                    "marked visible or hidden")

    # Partly graded: students without a row, tasks without a score.
    graded_ids = set(totals) | set(task_rows_of)
    in_results = {s for s, r in students.items() if r.in_results}
    if data is not None and graded_ids - in_results:
        n = len(graded_ids - in_results)
        gaps.append(f"{plural(n, 'student')} of the CSVs {'is' if n == 1 else 'are'} not in "
                    "results.json: their failed checks are unknown")
    if task_rows_of:
        short = [s for s in students if task_rows_of.get(s, set()) != set(tasks)]
        if short:
            gaps.append(f"{plural(len(short), 'student')} {'lacks' if len(short) == 1 else 'lack'}"
                        " a row of task_scores.csv for some task (counted with the score "
                        "results.json gives, or left out)")
    if (folder / "grades.csv").is_file() and set(students) - set(totals):
        n = len(set(students) - set(totals))
        gaps.append(f"{plural(n, 'student')} {'has' if n == 1 else 'have'} no row in grades.csv")

    # Submission times and feedback pages.
    times = _read_json(folder / "timestamps.json", [], "")
    has_times = isinstance(times, dict)
    if not has_times:
        gaps.append("no timestamps.json: submission times (and late penalties) are unknown")
    for student, rec in students.items():
        info = times.get(student) if has_times else None
        if isinstance(info, dict):
            rec.submitted = info.get("submitted") if isinstance(info.get("submitted"), bool) \
                else None
            rec.time = _str(info.get("time")) or None
            rec.time_source = _str(info.get("source"))
        page = folder / "feedback" / f"{student}.html"
        if "/" not in student and student not in ("", ".", "..") and page.is_file():
            rec.feedback = page
    missing_feedback = sum(r.feedback is None for r in students.values())
    if missing_feedback:
        gaps.append(f"{plural(missing_feedback, 'student')} "
                    f"{'has' if missing_feedback == 1 else 'have'} no feedback page")

    manual = _manual_cells(folder, name, sorted(students), root, gaps)
    return GradedFolder(name, folder, float(max_score), tasks, task_max, ordered,
                        dict(sorted(students.items())), manual, has_times, extra, gaps)


def describe_gaps(folders: Mapping[str, GradedFolder]) -> list[str]:
    """Every gap of every folder, prefixed with its assignment."""
    return [f"{name}: {gap}" for name, graded in folders.items() for gap in graded.gaps]


# ------------------------------------------------------------------ one total


def shown(points: float) -> str:
    """A total as the export writes it and every page shows it: to two decimals (``38.4``)."""
    return f"{round(points, 2):g}"


@dataclasses.dataclass(frozen=True)
class Total:
    """One student's total on one assignment: the one number the export writes and every page
    shows (decided here, by :func:`student_total`).

    The autograded points (each task's, a teaching assistant's override where there is one),
    plus the points graded by hand (an answer not graded yet counts 0 until it is), less the
    late penalty of the last export (a percentage of the points earned, :func:`penalised`).
    """

    autograded: float
    autograded_max: float
    manual: float = 0.0
    manual_max: float = 0.0
    pending: tuple[str, ...] = ()   # manually graded cells without points yet
    penalty: float = 0.0            # percent of the points earned
    overridden: tuple[str, ...] = ()  # tasks whose points a teaching assistant set

    @property
    def earned(self) -> float:
        """Autograded plus graded by hand, before a late penalty."""
        return self.autograded + self.manual

    @property
    def score(self) -> float:
        """The total: :attr:`earned` less the late penalty."""
        return penalised(self.earned, self.penalty)

    @property
    def max_score(self) -> float:
        return self.autograded_max + self.manual_max


def student_total(result: GradeResult, manual: Iterable[tuple[str, float]],
                  points: Mapping[str, tuple[float | None, str]] | None = None,
                  penalty: float = 0.0, autograded_max: float | None = None) -> Total:
    """The :class:`Total` of one student's ``result``.

    ``manual``: the assignment's manually graded cells ``(grade_id, maximum)``; ``points``:
    what ``grade-import`` loaded for this student (``{grade_id: (points or None, comment)}``,
    :func:`.gradebook.manual_points`; None: nothing yet); ``penalty``: the late penalty in
    percent (``late.json`` of the last export); ``autograded_max``: the assignment's autograded
    maximum (default: the points of the result's tests, which are every test).
    """
    cells = list(manual)
    given = points or {}
    got = {gid: given.get(gid, (None, ""))[0] for gid, _ in cells}
    top = sum(t.points for t in result.tests) if autograded_max is None else autograded_max
    return Total(result.score, float(top), float(sum(p for p in got.values() if p is not None)),
                 float(sum(m for _, m in cells)),
                 tuple(gid for gid, p in got.items() if p is None), float(penalty),
                 tuple(result.overrides))


# ------------------------------------------------------------------ totals for an export


@dataclasses.dataclass
class Graded:
    """One graded folder: the assignment's totals per student."""

    name: str
    folder: Path
    max_score: float                  # autograded and manual
    scores: dict[str, float]          # student -> points earned (before a late penalty)
    ungraded: list[str]               # students with manual cells still to grade
    times: dict[str, dict[str, Any]]  # student -> {"submitted", "time", "source"}
    totals: dict[str, Total] = dataclasses.field(default_factory=dict)  # student -> Total


def read_graded(folder: Path | str, root: Path | str | None = None) -> Graded:
    """A folder written by ``mlcourse grade`` as :class:`Graded` (ValueError if it is not):
    each student's :class:`Total` from ``results.json`` (overrides applied) and the manual
    points of ``gradebook.db``; without a gradebook the manually graded cells are the source
    notebook's (``root``: the course folder; found from the working directory when None), all
    still to grade."""
    folder = Path(folder)
    from .results import read_results

    results = read_results(folder)
    db = folder / "gradebook.db"
    if db.is_file():
        manual_max, _ = gradebook.manual_layout(db, results.name)
        manual = list(manual_max.items())
        points = gradebook.manual_points(db, results.name, results.results)
    else:
        from ..notebook import load_assignment

        manual, points = load_assignment(results.name, root).manual, {}
    autograded_max = sum(task_maxima(results.results).values())
    totals = {s: student_total(r, manual, points.get(s), autograded_max=autograded_max)
              for s, r in results.results.items()}
    times_path = folder / "timestamps.json"
    times = json.loads(times_path.read_text(encoding="utf-8")) if times_path.is_file() else {}
    return Graded(results.name, folder, autograded_max + sum(m for _, m in manual),
                  {s: t.earned for s, t in totals.items()},
                  sorted(s for s, t in totals.items() if t.pending), times, totals)
