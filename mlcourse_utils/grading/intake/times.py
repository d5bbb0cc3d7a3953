"""Submission times: read from the instructor's times file, the LMS's download or a submission.

A submission time decides a late penalty (:mod:`.late`), so it must come from someone other than
the student: ``mlcourse export --times TIMES.csv`` reads the times the instructor has from the
learning management system or the exchange (``student_id,submitted_at``, and an ``assignment``
column when several assignments are exported at once, :func:`read_times`). A time found inside a
submission (nbgrader's ``timestamp.txt``, which the student's machine writes, or the notebook
file's modification time, :func:`time_in_submission`) is recorded by ``mlcourse grade``
(:meth:`.graded.out.OutFolder.write_timestamps`, into ``OUT/timestamps.json``) but used only with
``--times-from-submission``, for students the times file lacks. A time the LMS's own zip recorded
(``mlcourse grade`` on a download) is the LMS's record (:data:`LMS_SOURCE`) and used like
``--times``. A time with an impossible UTC offset or year is that student's reason (no time, no
penalty, listed), never the class's.
"""

from __future__ import annotations

import csv
import dataclasses
import datetime as dt
from collections.abc import Iterable
from pathlib import Path

from ..text import clean_text, fold


def parse_timestamp(text: str) -> dt.datetime | None:
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
    when = parse_timestamp(text)
    if when is None:
        return None, f"{clean_text(text, 60)!r} is not a date and time"
    problem = time_problem(when)
    return (None, problem) if problem else (when, None)


def time_in_submission(stamp: bytes | None, mtime: float | None) -> tuple[str | None, str, str]:
    """``(ISO time or None, source, problem)`` found inside a submission: its ``timestamp.txt``
    (``stamp``, its bytes, None when there is none) or else the notebook file's modification
    time ``mtime`` (as :func:`~.submissions.find_submissions` read them, once).

    The student controls both sources: the export uses them only when the instructor opts in.
    An impossible time in ``timestamp.txt`` is the problem (and no time is kept).
    """
    text = stamp.decode("utf-8", "replace") if stamp is not None else ""
    if text.strip():
        when, problem = parse_time(text)
        if problem:
            return None, "none", clean_text(f"timestamp.txt: {problem}", 300)
        return when.isoformat(), "timestamp.txt", ""
    try:
        return dt.datetime.fromtimestamp(mtime, dt.UTC).isoformat(), "file time", ""
    except (TypeError, ValueError, OverflowError, OSError):
        return None, "none", ""


#: The source of a time the LMS's own download records (trusted like ``--times``).
LMS_SOURCE = "the LMS download"


@dataclasses.dataclass
class Times:
    """Trusted submission times (``--times TIMES.csv``): per assignment (None: any), per id."""

    source: str                                                  # the file's name, for reports
    times: dict[str | None, dict[str, dt.datetime]]              # assignment -> {id: time}
    problems: dict[str | None, dict[str, str]]                   # assignment -> {id: reason}

    def lookup(self, assignment: str, keys: Iterable[str]) -> tuple[dt.datetime | None, str | None]:
        """``(time, problem)`` of the student known by any of ``keys`` (folded,
        :func:`.text.fold`)."""
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
        key = fold(row.get("student_id", ""))
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
