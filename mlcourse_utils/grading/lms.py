"""Grades for a learning management system (``mlcourse export``): late policy, Canvas/Moodle CSV.

A submission time decides a penalty, so it must come from someone other than the student:
``mlcourse export --times TIMES.csv`` reads the times the instructor has from the learning
management system or the exchange (``student_id,submitted_at``, and an ``assignment`` column when
several assignments are exported at once). A time found inside a submission (nbgrader's
``timestamp.txt``, which the student's machine writes, or the notebook file's modification time)
is recorded by ``mlcourse grade`` (:func:`write_timestamps`, into ``OUT/timestamps.json``) but used
only with ``--times-from-submission``, for students the times file lacks; the export says which
source each time came from. A time with an impossible UTC offset or year is that student's reason
(no time, no penalty, listed), never the class's. ``mlcourse export`` reads one graded folder per
assignment, the roster and a small TOML configuration with the due dates, per-student extensions
and the late rule::

    timezone = "Europe/Berlin"        # for times written without a zone (default UTC)

    [late_penalty]
    percent_per_day = 10              # of the points earned, per started day late
    max_percent = 50                  # the cap
    grace_minutes = 10

    [assignments.mle]
    due = 2026-03-02T23:59:00+01:00
    canvas_column = "Maximum likelihood (1234)"    # Canvas's name and id (or --canvas-assignment)
    moodle_column = "Maximum likelihood"           # optional
    [assignments.mle.extensions]                   # by student id or e-mail
    alice = 2026-03-04T23:59:00+01:00               # a new deadline ...
    "bob@uni.example" = 2                           # ... or extra days

The penalty is applied when grades are exported, not when they are graded, because due dates
and extensions are settled later than the grading runs; so the export also writes the penalty
into each late student's feedback page (a section it replaces on every export).

Totals are nbgrader's (``gradebook.db``: autograded plus the manual points that
``mlcourse grade-import`` loaded); without a gradebook, the autograded ``results.json``. A
time the LMS's own zip recorded (``mlcourse grade`` on a download) is the LMS's record and used
like ``--times``. :func:`write_feedback_zip` names the feedback pages for the LMS's bulk upload.
"""

from __future__ import annotations

import csv
import dataclasses
import datetime as dt
import json
import math
import os
import re
import sys
import tomllib
import warnings
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .._files import atomic_open, write_text
from .protocol import clean_text
from .report import csv_text, read_results
from .submissions import Refused, read_submitted_file

DAY = dt.timedelta(days=1)
FORMATS = ("canvas", "moodle")


# ------------------------------------------------------------------ timestamps


def _parse_time(text):
    """A timestamp as written by nbgrader (or ISO 8601) → datetime (naive if no zone), or None."""
    from dateutil import parser

    text = clean_text(text, 200).strip()
    if not text:
        return None
    try:
        return parser.parse(text)
    except (ValueError, OverflowError):
        return None


#: Submission times outside these years are impossible (a typo, or a forged file).
EARLIEST_YEAR = 2000


def time_problem(when: dt.datetime) -> str | None:
    """Why ``when`` cannot be a submission time (an impossible UTC offset or year), or None."""
    try:
        offset = when.utcoffset()
    except (ValueError, OverflowError, TypeError):
        offset = dt.timedelta(days=1)  # beyond what datetime allows
    if offset is not None and abs(offset) > dt.timedelta(hours=14):
        return "the UTC offset is impossible (real ones lie within 14 hours)"
    latest = dt.datetime.now(dt.UTC).year + 1
    if not EARLIEST_YEAR <= when.year <= latest:
        return f"the year {when.year} is impossible for a submission"
    return None


def parse_time(text: str) -> tuple[dt.datetime | None, str | None]:
    """``(time, None)`` for a possible submission time, else ``(None, reason)``."""
    when = _parse_time(text)
    if when is None:
        return None, f"{clean_text(text, 60)!r} is not a date and time"
    problem = time_problem(when)
    return (None, problem) if problem else (when, None)


def submission_time(path: Path | str | Refused | None) -> tuple[str | None, str]:
    """``(ISO time or None, source)`` found inside a submission at ``path`` (read as data).

    The student controls both sources (``timestamp.txt``, the file's time): the export uses
    them only when the instructor opts in. Raises ValueError for an impossible time.
    """
    if path is None or isinstance(path, Refused):
        return None, "none"
    path = Path(path)
    stamp = path.parent / "timestamp.txt"
    if stamp.exists() or stamp.is_symlink():
        try:
            text = read_submitted_file(stamp, limit=1000).decode("utf-8", "replace")
        except ValueError:
            text = ""
        if text.strip():
            when, problem = parse_time(text)
            if problem:
                raise ValueError(f"timestamp.txt: {problem}")
            return when.isoformat(), "timestamp.txt"
    try:
        mtime = os.stat(path, follow_symlinks=False).st_mtime
        return dt.datetime.fromtimestamp(mtime, dt.UTC).isoformat(), "file time"
    except (OSError, ValueError, OverflowError):
        return None, "none"


#: The source of a time the LMS's own download records (trusted like ``--times``).
LMS_SOURCE = "the LMS download"


def write_timestamps(out: Path | str, sources: Mapping[str, Path | str | Refused | None],
                     lms: Mapping[str, Any] | None = None) -> None:
    """``out/timestamps.json``: ``{student: {"submitted", "time": ISO|None, "source"}}`` (and
    ``"problem"``: why a time found in the submission was not kept), one student at a time.

    ``lms``: ``{student: LmsEntry}`` of a Canvas or Moodle download: the time its zip records
    for the file (source :data:`LMS_SOURCE`) and Canvas's late mark (``"lms_late"``) replace
    what a copy of the file could say."""
    data = {}
    lms = lms or {}
    for student, path in sorted(sources.items()):
        entry = {"submitted": path is not None and not isinstance(path, Refused),
                 "time": None, "source": "none"}
        if student in lms:
            info = lms[student]
            entry["lms_late"] = bool(info.late)
            if info.time:
                entry["time"], entry["source"] = info.time, LMS_SOURCE
            data[student] = entry
            continue
        try:
            entry["time"], entry["source"] = submission_time(path)
        except Exception as exc:  # noqa: BLE001 (one student's file is that student's problem)
            entry["problem"] = clean_text(str(exc), 300)
        data[student] = entry
    write_text(Path(out) / "timestamps.json", json.dumps(data, indent=1, ensure_ascii=False))


def merge_timestamps(outs: Iterable[Path | str], out: Path | str) -> None:
    """Join the shards' ``timestamps.json`` files into ``out`` (``mlcourse grade-merge``)."""
    data = {}
    for folder in outs:
        path = Path(folder) / "timestamps.json"
        if path.is_file():
            data.update(json.loads(path.read_text(encoding="utf-8")))
    write_text(Path(out) / "timestamps.json",
               json.dumps(dict(sorted(data.items())), indent=1, ensure_ascii=False))


@dataclasses.dataclass
class Times:
    """Trusted submission times (``--times TIMES.csv``): per assignment (None: any), per id."""

    source: str                                                  # the file's name, for reports
    times: dict[str | None, dict[str, dt.datetime]]              # assignment -> {id: time}
    problems: dict[str | None, dict[str, str]]                   # assignment -> {id: reason}

    def lookup(self, assignment: str, keys: Iterable[str]) -> tuple[dt.datetime | None, str | None]:
        """``(time, problem)`` of the student known by any of ``keys`` (lower-case)."""
        for scope in (assignment, None):
            for key in keys:
                if key in self.problems.get(scope, {}):
                    return None, self.problems[scope][key]
                if key in self.times.get(scope, {}):
                    return self.times[scope][key], None
        return None, None


def read_times(path: Path | str) -> Times:
    """``--times TIMES.csv``: ``student_id,submitted_at`` (optional ``assignment``) per row.

    A row whose time cannot be read, or is impossible, is that student's problem (kept as the
    reason); two rows with different times for one student and assignment are too. ValueError
    only when the file itself cannot be used (missing columns, not a UTF-8 CSV).
    """
    try:
        with open(path, newline="", encoding="utf-8-sig") as fh:
            rows = list(csv.DictReader(fh))
            fields = {f.strip().lower() for f in (rows[0].keys() if rows else [])}
    except OSError as exc:
        raise ValueError(f"--times {path}: cannot be read ({exc.strerror})") from None
    except (UnicodeDecodeError, csv.Error) as exc:
        raise ValueError(f"--times {path}: not a UTF-8 CSV file ({exc})") from None
    if rows and not {"student_id", "submitted_at"} <= fields:
        raise ValueError(f"--times {path}: needs the columns student_id and submitted_at")
    times, problems = {}, {}
    for row in rows:
        row = {str(k).strip().lower(): (v or "").strip() for k, v in row.items() if k}
        key = row.get("student_id", "").lower()
        if key[:1] == "'" and key[1:2] in ("=", "+", "-", "@"):  # written by csv_text
            key = key[1:]
        scope = row.get("assignment") or None
        if not key:
            continue
        when, problem = parse_time(row.get("submitted_at", ""))
        earlier = times.get(scope, {}).get(key)
        if problem is None and earlier is not None and earlier != when:
            problem = f"{Path(path).name} gives two different times"
        if problem is not None:
            problems.setdefault(scope, {})[key] = problem
            times.get(scope, {}).pop(key, None)
        elif key not in problems.get(scope, {}):
            times.setdefault(scope, {})[key] = when
    return Times(Path(path).name, times, problems)


# ------------------------------------------------------------------ configuration


@dataclasses.dataclass
class LatePolicy:
    """The late rule: a percentage of the points earned per started day late, capped."""

    percent_per_day: float = 0.0
    max_percent: float = 100.0
    grace: dt.timedelta = dt.timedelta(0)

    def percent(self, submitted: dt.datetime | None,
                deadline: dt.datetime | None) -> tuple[float, int]:
        """Penalty in percent and whole days late (each started day counts)."""
        if submitted is None or deadline is None:
            return 0.0, 0
        late = submitted - deadline - self.grace
        if late <= dt.timedelta(0):
            return 0.0, 0
        days = math.ceil(late / DAY)
        return min(self.max_percent, days * self.percent_per_day), days


@dataclasses.dataclass
class Config:
    """The export configuration (``due.toml``): time zone, late rule and each assignment's dates."""

    timezone: dt.tzinfo
    late: LatePolicy
    #: name -> {"due": datetime or None, "extensions": {key: datetime or days}, ...}
    assignments: dict[str, dict[str, Any]]

    def aware(self, when: dt.datetime | None) -> dt.datetime | None:
        return when if when is None or when.tzinfo else when.replace(tzinfo=self.timezone)

    def deadline(self, name: str, keys: Iterable[str]) -> dt.datetime | None:
        """The deadline of assignment ``name`` for a student known by any of ``keys``."""
        settings = self.assignments.get(name, {})
        due = self.aware(settings.get("due"))
        for key in keys:
            extension = settings.get("extensions", {}).get(key)
            if extension is None:
                continue
            if isinstance(extension, dt.datetime):
                return self.aware(extension)
            if due is not None:
                return due + extension * DAY
        return due


def _as_datetime(value, where):
    if isinstance(value, dt.datetime):
        return value
    if isinstance(value, dt.date):
        return dt.datetime.combine(value, dt.time(23, 59, 59))
    if isinstance(value, str):
        parsed = _parse_time(value)
        if parsed is not None:
            return parsed
    raise ValueError(f"{where} must be a date and time (e.g. 2026-03-02T23:59:00+01:00), "
                     f"not {value!r}")


def _number(value, where, low=0.0):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= low:
        raise ValueError(f"{where} must be a number >= {low:g}, not {value!r}")
    return float(value)


def read_config(path: Path | str | None = None) -> Config:
    """The due dates and late rule from a TOML file (None: no due dates, no penalty)."""
    if path is None:
        return Config(dt.UTC, LatePolicy(), {})
    try:
        raw = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ValueError(f"--config {path}: cannot be read ({exc.strerror})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"--config {path}: not valid TOML ({exc})") from None
    zone = dt.UTC
    if "timezone" in raw:
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        try:
            zone = ZoneInfo(str(raw["timezone"]))
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"--config {path}: unknown timezone {raw['timezone']!r}") from None
    rule = raw.get("late_penalty", {})
    late = LatePolicy(
        _number(rule.get("percent_per_day", 0), "late_penalty.percent_per_day"),
        min(100.0, _number(rule.get("max_percent", 100), "late_penalty.max_percent")),
        dt.timedelta(minutes=_number(rule.get("grace_minutes", 0), "late_penalty.grace_minutes")))
    assignments = {}
    for name, settings in raw.get("assignments", {}).items():
        if not isinstance(settings, dict):
            raise ValueError(f"--config {path}: [assignments.{name}] must be a table")
        entry = dict(settings)
        entry["due"] = _as_datetime(settings["due"], f"assignments.{name}.due") \
            if "due" in settings else None
        extensions = {}
        for key, value in settings.get("extensions", {}).items():
            where = f"assignments.{name}.extensions.{key}"
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                extensions[str(key).strip().lower()] = _number(value, where)
            else:
                extensions[str(key).strip().lower()] = _as_datetime(value, where)
        entry["extensions"] = extensions
        assignments[name] = entry
    return Config(zone, late, assignments)


# ------------------------------------------------------------------ roster


@dataclasses.dataclass
class Student:
    """One row of the roster."""

    name: str
    student_id: str = ""     # the course's id: the submission folder's name
    email: str = ""
    lms_id: str = ""         # Canvas "ID"
    sis_user_id: str = ""
    sis_login_id: str = ""
    section: str = ""
    idnumber: str = ""       # Moodle "ID number"
    participant: str = ""    # Moodle's participant number ("Identifier": "Participant 12345")

    def keys(self) -> list[str]:
        """Every value a submission folder may be named by, lower-cased."""
        values = (self.student_id, self.email, self.sis_login_id, self.sis_user_id,
                  self.idnumber, self.lms_id)
        return [v.strip().lower() for v in values if v and v.strip()]


_ROSTER_COLUMNS = {
    "name": ("name", "student", "full name", "fullname"),
    "student_id": ("student_id", "student id", "username", "login"),
    "email": ("email", "e-mail", "email address", "mail"),
    "lms_id": ("id", "canvas id", "user id", "userid"),
    "sis_user_id": ("sis user id", "sis_user_id"),
    "sis_login_id": ("sis login id", "sis_login_id"),
    "section": ("section", "group"),
    "idnumber": ("id number", "idnumber", "matriculation", "student number"),
    "participant": ("identifier", "participant", "participant id"),
}


def read_roster(path: Path | str) -> list[Student]:
    """The roster CSV (a header row; columns named as Canvas or Moodle name them, or
    ``student_id, name, email, ...``) as a list of :class:`Student`."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as fh:
            rows = list(csv.reader(fh))
    except OSError as exc:
        raise ValueError(f"--roster {path}: cannot be read ({exc.strerror})") from None
    except (UnicodeDecodeError, csv.Error) as exc:
        raise ValueError(f"--roster {path}: not a UTF-8 CSV file ({exc})") from None
    if not rows:
        raise ValueError(f"--roster {path} is empty")
    header = [h.strip().lower() for h in rows[0]]
    index = {}
    for field, names in _ROSTER_COLUMNS.items():
        for name in names:
            if name in header:
                index[field] = header.index(name)
                break
    if not {"student_id", "email", "sis_login_id", "sis_user_id", "idnumber"} & set(index):
        raise ValueError(f"--roster {path}: needs a column student_id, email, SIS Login ID, "
                         f"SIS User ID or ID number to match submissions (found {rows[0]})")
    students = []
    for row in rows[1:]:
        if not any(cell.strip() for cell in row) or (row and "points possible" in row[0].lower()):
            continue
        values = {f: row[i].strip() if i < len(row) else "" for f, i in index.items()}
        if "participant" in values:  # Moodle's worksheet writes "Participant 12345"
            values["participant"] = re.sub(r"(?i)^participant\s*", "", values["participant"])
        students.append(Student(**{"name": values.pop("name", "")}, **values))
    return students


def match_roster(roster: Sequence[Student], graded_ids: Iterable[str],
                 conflicts: dict[int, list[str]] | None = None,
                 ) -> tuple[dict[int, str], list[str]]:
    """``({roster index: graded id}, [graded ids without a roster entry])``.

    A submission matches the roster row whose student id, e-mail, SIS login, SIS id, ID number
    or LMS id equals its folder name (case-insensitive). ValueError when the roster gives one
    key to two students. Two submissions that match one roster row raise ValueError too, unless
    ``conflicts`` is given: then neither is matched, and ``conflicts[roster index]`` lists them
    (that student's problem; every other student is matched).
    """
    lookup = {}
    for i, student in enumerate(roster):
        for key in student.keys():
            if lookup.get(key, i) != i:
                raise ValueError(f"the roster gives {key!r} to two students "
                                 f"({roster[lookup[key]].name!r} and {student.name!r})")
            lookup[key] = i
    matched, unmatched, clashes = {}, [], {}
    for gid in sorted(graded_ids):
        i = lookup.get(gid.strip().lower())
        if i is None:
            unmatched.append(gid)
        elif i in clashes:
            clashes[i].append(gid)
        elif i in matched:
            if conflicts is None:
                raise ValueError(f"two submissions, {matched[i]!r} and {gid!r}, belong to "
                                 f"{roster[i].name or roster[i].email!r}")
            clashes[i] = [matched.pop(i), gid]
        else:
            matched[i] = gid
    if conflicts is not None:
        conflicts.update(clashes)
    return matched, unmatched


# ------------------------------------------------------------------ scores


@dataclasses.dataclass
class Graded:
    """One graded folder: the assignment's totals per student."""

    name: str
    folder: Path
    max_score: float
    scores: dict[str, float]          # student -> points (autograded + manual)
    ungraded: list[str]               # students with manual cells still to grade
    times: dict[str, dict[str, Any]]  # student -> {"submitted", "time", "source"}


def _gradebook_scores(db, name):
    """``(max_score, {student: score}, [students needing manual grading])`` from nbgrader."""
    from .gradebook import _alembic_head_in_process

    scripts = str(Path(sys.executable).parent)
    if scripts not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = scripts + os.pathsep + os.environ.get("PATH", "")
    import nbgrader.api
    from nbgrader.api import Gradebook

    _alembic_head_in_process(nbgrader.api)
    with warnings.catch_warnings(), Gradebook(f"sqlite:///{db}") as gb:
        warnings.simplefilter("ignore")
        assignment = gb.find_assignment(name)
        scores, ungraded = {}, []
        for submission in assignment.submissions:
            scores[submission.student_id] = float(submission.score)
            if submission.needs_manual_grade:
                ungraded.append(submission.student_id)
        return float(assignment.max_score), scores, sorted(ungraded)


def read_graded(folder: Path | str) -> Graded:
    """A folder written by ``mlcourse grade`` as :class:`Graded` (ValueError if it is not)."""
    folder = Path(folder)
    results = read_results(folder)
    db = folder / "gradebook.db"
    if db.is_file():
        from .gradebook import gradebook_id

        max_score, by_book, ungraded = _gradebook_scores(db, results.name)
        ours = {gradebook_id(s): s for s in results.results}
        scores = {ours[b]: v for b, v in by_book.items() if b in ours}
        ungraded = sorted(ours[b] for b in ungraded if b in ours)
        # A student the gradebook lacks (its row could not be written) keeps the autograded
        # score and is listed with the ones still to grade by hand.
        for student in sorted(set(results.results) - set(scores)):
            scores[student] = results.results[student].score
            ungraded.append(student)
    else:
        from .notebook import load_assignment

        max_score = load_assignment(results.name).max_score
        scores = {s: r.score for s, r in results.results.items()}
        ungraded = []
    times_path = folder / "timestamps.json"
    times = json.loads(times_path.read_text(encoding="utf-8")) if times_path.is_file() else {}
    return Graded(results.name, folder, max_score, scores, ungraded, times)


# ------------------------------------------------------------------ export


@dataclasses.dataclass
class Cell:
    """One student's grade for one assignment."""

    score: float | None      # after the penalty; None: no submission
    raw: float | None = None
    penalty: float = 0.0     # percent
    days_late: int = 0
    submitted: str | None = None
    deadline: str | None = None
    source: str = ""         # where the time came from ("" when there is none)
    problem: str = ""        # why there is no time (an impossible one, ...)


@dataclasses.dataclass
class Export:
    """What :func:`export` wrote and found."""

    rows: int
    without_submission: dict[str, list[str]]  # assignment -> [roster names]
    without_roster: dict[str, list[str]]      # assignment -> [graded ids]
    ungraded: dict[str, list[str]]            # assignment -> [graded ids, manual cells to grade]
    late: dict[str, dict[str, Cell]]          # assignment -> {graded id: Cell}
    undated: dict[str, list[str]]             # assignment -> [graded ids without a time]
    #: assignment -> {graded id: why its time was not used}
    time_problems: dict[str, dict[str, str]] = dataclasses.field(default_factory=dict)
    #: assignment -> {source of the times: how many students}
    time_sources: dict[str, dict[str, int]] = dataclasses.field(default_factory=dict)
    #: assignment -> {roster name: [graded ids that all match that student]} (none exported)
    conflicts: dict[str, dict[str, list[str]]] = dataclasses.field(default_factory=dict)
    #: roster students the LMS cannot find (no id; written only with --allow-missing-ids)
    unidentified: list[str] = dataclasses.field(default_factory=list)
    #: assignment -> [graded ids the LMS's download marked late] (Canvas's ``_late_``)
    lms_late: dict[str, list[str]] = dataclasses.field(default_factory=dict)


def _fmt(x):
    return "" if x is None else f"{round(x, 2):g}"


LATE_BEGIN = "<!-- mlcourse-late-penalty -->"
LATE_END = "<!-- /mlcourse-late-penalty -->"


def _late_block(cell, max_score):
    import jinja2

    template = jinja2.Environment(autoescape=True).from_string(
        '<section class="late"><h2>Late submission</h2><p>Submitted {{ c.submitted }}, '
        '{{ c.days_late }} day{{ "s" if c.days_late != 1 }} after the deadline '
        '{{ c.deadline }} (time from {{ c.source }}). Late penalty: {{ pct }} % of the points '
        'earned, so {{ raw }} becomes <strong>{{ score }} / {{ top }}</strong>.</p></section>')
    return template.render(c=cell, pct=_fmt(cell.penalty), raw=_fmt(cell.raw),
                           score=_fmt(cell.score), top=_fmt(max_score))


def annotate_feedback(graded: Graded, student: str, cell: Cell | None) -> None:
    """Put (or replace, or remove) the late-penalty section in a student's feedback page."""
    page = graded.folder / "feedback" / f"{student}.html"
    if not page.is_file() or "/" in student or student in ("", ".", ".."):
        return
    text = page.read_text(encoding="utf-8")
    text = re.sub(re.escape(LATE_BEGIN) + ".*?" + re.escape(LATE_END) + "\n?", "", text,
                  flags=re.S)
    if cell is not None and cell.penalty > 0:
        block = f"{LATE_BEGIN}{_late_block(cell, graded.max_score)}{LATE_END}\n"
        text = text.replace("<table>", block + "<table>", 1) if "<table>" in text \
            else text.replace("</body>", block + "</body>", 1)
    write_text(page, text)


def _submission_source(source):
    return f"the submission's {source} (--times-from-submission)"


def _time_of(graded, gid, keys, times, from_submission):
    """``(time, source, problem)`` of one student's submission (naive: the config's zone)."""
    if times is not None:
        when, problem = times.lookup(graded.name, keys)
        if when is not None or problem is not None:
            return when, times.source if when is not None else "", problem or ""
    info = graded.times.get(gid, {})
    if info.get("source") == LMS_SOURCE and info.get("time"):
        when, problem = parse_time(str(info["time"]))
        return (when, LMS_SOURCE, "") if problem is None else (None, "", problem)
    if not from_submission:
        return None, "", ""
    if info.get("problem"):
        return None, "", str(info["problem"])
    if not info.get("time"):
        return None, "", ""
    when, problem = parse_time(str(info["time"]))
    if problem:
        return None, "", problem
    return when, _submission_source(info.get("source", "file")), ""


def _cells(graded, matched, roster, config, missing, times=None, from_submission=False):
    """``{roster index: Cell}`` for one assignment, its late and undated students, the reasons
    for times not used and how many times came from each source."""
    cells, late, undated, problems, sources = {}, {}, [], {}, {}
    by_graded = {gid: i for i, gid in matched.items()}
    for gid in sorted(graded.scores):
        time_info = graded.times.get(gid, {"submitted": True})
        i = by_graded.get(gid)
        if not time_info.get("submitted", True):
            if i is not None:
                cells[i] = Cell(0.0 if missing == "zero" else None)
            continue
        keys = [gid.lower()] + (roster[i].keys() if i is not None else [])
        try:
            when, source, problem = _time_of(graded, gid, keys, times, from_submission)
            submitted = config.aware(when)
            deadline = config.deadline(graded.name, keys)
            percent, days = config.late.percent(submitted, deadline)
        except (ValueError, OverflowError, TypeError) as exc:  # this student's time only
            submitted, source, problem = None, "", clean_text(str(exc), 200)
            deadline = config.deadline(graded.name, keys)
            percent, days = 0.0, 0
        if problem:
            problems[gid] = problem
        if submitted is None and deadline is not None:
            undated.append(gid)
        if source:
            sources[source] = sources.get(source, 0) + 1
        raw = graded.scores[gid]
        cell = Cell(raw * (1 - percent / 100), raw, percent, days,
                    submitted.isoformat(" ", "minutes") if submitted else None,
                    deadline.isoformat(" ", "minutes") if deadline else None, source, problem)
        annotate_feedback(graded, gid, cell)
        if percent > 0:
            late[gid] = cell
        if i is not None:
            cells[i] = cell
    for i in range(len(roster)):
        cells.setdefault(i, Cell(0.0 if missing == "zero" else None))
    return cells, late, undated, problems, sources


#: The header Canvas gives an assignment's column: ``Title (assignment id)``.
CANVAS_COLUMN = re.compile(r"^.*\S \((\d+)\)$")
#: Moodle's CSV import: the user field the "Map from" column is mapped to, and its header.
MOODLE_IDENTIFIERS = {"email": "Email address", "idnumber": "ID number", "username": "Username"}


def _unidentified(roster, fmt, moodle_identifier):
    """Names of the roster students the LMS could not find in the exported file."""
    def ids(s):
        if fmt == "canvas":
            return (s.lms_id, s.sis_user_id, s.sis_login_id)
        return ({"email": s.email, "idnumber": s.idnumber or s.student_id,
                 "username": s.student_id}[moodle_identifier],)
    return [s.name or s.email or s.student_id or f"row {i + 2}"
            for i, s in enumerate(roster) if not any(v.strip() for v in ids(s))]


def export(graded_dirs: Iterable[Path | str], fmt: str, roster_path: Path | str, out: Path | str,
           config_path: Path | str | None = None, missing: str = "blank",
           times_path: Path | str | None = None,
           times_from_submission: bool = False, canvas_assignment: str | None = None,
           moodle_identifier: str = "email", allow_missing_ids: bool = False) -> Export:
    """Write the grade file of ``fmt`` (canvas or moodle) for the roster; return an
    :class:`Export`.

    Late penalties use the submission times of ``times_path`` (``--times``, from the learning
    management system or the exchange); times found inside the submissions only with
    ``times_from_submission`` (for students the file lacks). Without a time, no penalty.

    Canvas fills an assignment's column only when the file's header names it as Canvas does,
    ``Title (assignment id)`` (``canvas_assignment``, or ``canvas_column`` in the configuration);
    a header without the id would create a new column, so it is an error. Canvas finds each
    student by ``ID``, ``SIS User ID`` or ``SIS Login ID``, Moodle's CSV import by the column
    ``moodle_identifier`` (email, idnumber or username) that the import's "Map from" is set to:
    roster students without one are an error naming them, unless ``allow_missing_ids``.
    """
    from .requirements import check_dependencies

    check_dependencies()
    if fmt not in FORMATS:
        raise ValueError(f"--format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    if moodle_identifier not in MOODLE_IDENTIFIERS:
        raise ValueError(f"--moodle-identifier must be one of {', '.join(MOODLE_IDENTIFIERS)}, "
                         f"not {moodle_identifier!r}")
    if canvas_assignment is not None and fmt != "canvas":
        raise ValueError("--canvas-assignment is for --format canvas")
    if missing not in ("blank", "zero"):
        raise ValueError(f"--missing must be blank or zero, not {missing!r}")
    config = read_config(config_path)
    roster = read_roster(roster_path)
    times = read_times(times_path) if times_path is not None else None
    assignments = [read_graded(folder) for folder in graded_dirs]
    names = [g.name for g in assignments]
    if len(set(names)) != len(names):
        raise ValueError(f"two graded folders hold the same assignment: {names}")
    if canvas_assignment is not None and len(assignments) != 1:
        raise ValueError("--canvas-assignment names one assignment's column: export one graded "
                         "folder with it (or set canvas_column per assignment in --config)")
    if fmt == "canvas":
        for graded in assignments:
            column = canvas_assignment or config.assignments.get(graded.name, {}).get(
                "canvas_column")
            if not column or not CANVAS_COLUMN.match(str(column)):
                raise ValueError(
                    f"Canvas fills the column of {graded.name} only when the header names it as "
                    "Canvas does, 'Title (assignment id)' (the id is the number at the end of "
                    "the assignment's address, .../assignments/1234): pass --canvas-assignment "
                    f"'Title (1234)' or set canvas_column in [assignments.{graded.name}] of "
                    f"--config (got {column!r})")
    unidentified = _unidentified(roster, fmt, moodle_identifier)
    if unidentified and not allow_missing_ids:
        what = ("ID, SIS User ID or SIS Login ID" if fmt == "canvas"
                else MOODLE_IDENTIFIERS[moodle_identifier])
        raise ValueError(f"{len(unidentified)} student(s) of the roster have no {what}, by which "
                         f"{fmt.capitalize()} finds them: {', '.join(unidentified)}. Add the ids "
                         "to the roster (export it from the LMS), or pass --allow-missing-ids "
                         "to leave these rows for the LMS to skip")
    report = Export(len(roster), {}, {}, {}, {}, {}, unidentified=unidentified)
    columns, grades = [], []
    for graded in assignments:
        clashes = {}
        matched, unmatched = match_roster(roster, graded.scores, clashes)
        cells, late, undated, problems, sources = _cells(
            graded, matched, roster, config, missing, times, times_from_submission)
        for i in clashes:  # one roster student, several submissions: none is exported
            cells[i] = Cell(None)
        settings = config.assignments.get(graded.name, {})
        column = canvas_assignment if fmt == "canvas" and canvas_assignment else \
            settings.get(f"{fmt}_column") or graded.name
        columns.append((column, graded.max_score))
        grades.append(cells)
        report.without_roster[graded.name] = unmatched
        report.without_submission[graded.name] = [
            roster[i].name or roster[i].email or roster[i].student_id
            for i in range(len(roster)) if cells[i].raw is None and i not in clashes]
        report.ungraded[graded.name] = [g for g in graded.ungraded if g in graded.scores]
        report.late[graded.name] = late
        report.undated[graded.name] = undated
        report.time_problems[graded.name] = problems
        report.time_sources[graded.name] = sources
        report.lms_late[graded.name] = sorted(g for g, info in graded.times.items()
                                              if info.get("lms_late") and g in graded.scores)
        report.conflicts[graded.name] = {
            roster[i].name or roster[i].email or roster[i].student_id: ids
            for i, ids in clashes.items()}
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with atomic_open(out, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        if fmt == "canvas":
            w.writerow(["Student", "ID", "SIS User ID", "SIS Login ID", "Section",
                        *[csv_text(c) for c, _ in columns]])
            w.writerow(["    Points Possible", "", "", "", "", *[_fmt(m) for _, m in columns]])
            for i, s in enumerate(roster):
                w.writerow([csv_text(s.name), csv_text(s.lms_id), csv_text(s.sis_user_id),
                            csv_text(s.sis_login_id), csv_text(s.section),
                            *[_fmt(cells[i].score) for cells in grades]])
        else:
            fields = {"email": ("Email address", lambda s: s.email),
                      "idnumber": ("ID number", lambda s: s.idnumber or s.student_id),
                      "username": ("Username", lambda s: s.student_id)}
            order = [moodle_identifier] + [k for k in ("email", "idnumber")
                                           if k != moodle_identifier]
            w.writerow([fields[k][0] for k in order] + ["Full name"]
                       + [csv_text(c) for c, _ in columns])
            for i, s in enumerate(roster):
                w.writerow([csv_text(fields[k][1](s)) for k in order] + [csv_text(s.name)]
                           + [_fmt(cells[i].score) for cells in grades])
    return report


# ------------------------------------------------------------------ feedback files for the LMS


@dataclasses.dataclass
class FeedbackZip:
    """What :func:`write_feedback_zip` wrote: ``{student: name in the zip}`` and the students
    left out (no page, or not known to the LMS: no Canvas user or Moodle participant number)."""

    files: dict[str, str]
    left_out: dict[str, str]


def _zip_name_part(text):
    """A name as a part of a file name in the zip: no folder separators, no control codes."""
    return re.sub(r"[/\\\x00-\x1f]", "_", clean_text(text, 120)).strip() or "student"


def feedback_file_name(fmt: str, entry: Mapping[str, Any], assignment: str) -> str:
    """The name of a student's feedback page in the zip an LMS takes for bulk feedback.

    Canvas (Submissions → *Upload Submission Comments*, "re-upload submissions") reads the
    first two all-digit parts of a file name, split at ``_``, as the user id and the id of a
    file of that user's submission, as in its own download (``Assignment#
    infer_comment_context_from_filename``; a name without an existing file id is ignored):
    ``login_userid_attachmentid_feedback-NAME.html`` attaches the page to that submission as a
    comment. Moodle (*Upload multiple feedback
    files in a zip*) matches the participant number in the prefix of its download,
    ``Full Name_12345_assignsubmission_file_/``, and keeps the rest as the file's name."""
    page = f"feedback-{_zip_name_part(assignment)}.html"
    if fmt == "canvas":
        login = _zip_name_part(entry.get("name") or "student").replace("_", "")
        if login.isdigit():  # Canvas would read it as the user id
            login = f"s{login}"
        return f"{login}_{entry['user_id']}_{entry['attachment_id']}_{page}"
    if fmt == "moodle":
        name = _zip_name_part(entry.get("name") or "student").replace("_", " ")
        return f"{name}_{entry['user_id']}_assignsubmission_file_/{page}"
    raise ValueError(f"--lms must be one of {', '.join(FORMATS)}, not {fmt!r}")


def write_feedback_zip(graded: Path | str, fmt: str, out: Path | str,
                       roster_path: Path | str | None = None) -> FeedbackZip:
    """Write ``out``, a zip of every student's feedback page named for ``fmt``'s bulk upload
    (:func:`feedback_file_name`).

    Who a student is in the LMS comes from ``graded/intake.json`` (written when SUBMISSIONS was
    the LMS's download), else from the roster (Moodle's ``Identifier``; Canvas needs the id of
    the submitted file too, which only its download gives); a student known to neither is left
    out and named.
    """
    import zipfile

    from .roster import canvas_login

    if fmt not in FORMATS:
        raise ValueError(f"--lms must be one of {', '.join(FORMATS)}, not {fmt!r}")
    graded = Path(graded)
    results = read_results(graded)
    intake_path = graded / "intake.json"
    known = {}
    if intake_path.is_file():
        data = json.loads(intake_path.read_text(encoding="utf-8"))
        known = {s: e for s, e in data.get("students", {}).items() if e.get("lms") == fmt}
    roster = read_roster(roster_path) if roster_path is not None else []
    lookup = {}
    for student in roster:
        number = student.lms_id if fmt == "canvas" else student.participant
        if number.strip():
            entry = {"name": canvas_login(student.name) if fmt == "canvas" else student.name,
                     "user_id": number.strip(), "attachment_id": ""}
            for key in student.keys():
                lookup.setdefault(key, entry)
    files, left_out = {}, {}
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with atomic_open(out, "wb") as fh, zipfile.ZipFile(fh, "w", zipfile.ZIP_DEFLATED) as archive:
        for student in sorted(results.results):
            page = graded / "feedback" / f"{student}.html"
            entry = known.get(student) or lookup.get(student.strip().lower())
            if entry is None:
                left_out[student] = (f"not known to {fmt} (no {fmt} download entry and no "
                                     + ("ID" if fmt == "canvas" else "Identifier")
                                     + " in the roster)")
                continue
            if "/" in student or not page.is_file():
                left_out[student] = "no feedback page"
                continue
            if fmt == "canvas" and not entry.get("attachment_id"):
                left_out[student] = ("Canvas attaches a comment only to a submitted file, whose "
                                     "id is in its download: grade from Canvas's download")
                continue
            name = feedback_file_name(fmt, entry, results.name)
            when = dt.datetime.fromtimestamp(page.stat().st_mtime)
            info = zipfile.ZipInfo(name, date_time=(max(when.year, 1980), *when.timetuple()[1:6]))
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, page.read_bytes())
            files[student] = name
    return FeedbackZip(files, left_out)
