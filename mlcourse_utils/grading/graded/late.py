"""The late policy of ``mlcourse export``: due dates, extensions, the penalty, each student's cell.

The configuration is a small TOML file (``--config DUE.toml``): the time zone of times written
without an offset, the late rule (``[late_penalty]``: ``percent_per_day`` of the points earned
per started day late, ``max_percent``, ``grace_minutes``) and per assignment
(``[assignments.NAME]``) its ``due`` date, the LMS's column (``canvas_column``,
``moodle_column``) and per-student ``extensions`` (a new deadline or extra days). The
repository's ``examples/due.toml`` shows and explains every setting (``mlcourse export --help``
points to it; ``tests/grading/graded/test_late.py`` reads it through :func:`read_config`).

The penalty is applied when grades are exported, not when they are graded, because due dates
and extensions are settled later than the grading runs. The times come from :mod:`.times`. The
export records each late student's penalty in the graded folder (:func:`write_late_notes`,
``late.json``, replaced on every export), from which :mod:`.reports.feedback` writes the
late-penalty section of the feedback page through the page's own template.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import math
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..._files import write_text
from ..intake.times import LMS_SOURCE, Times, parse_time, parse_timestamp
from ..text import clean_text, fold
from .model import penalised

if TYPE_CHECKING:
    from ..intake.roster import Student
    from .model import GradedFolder

DAY = dt.timedelta(days=1)


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
        """The deadline of assignment ``name`` for a student known by any of ``keys`` (ids
        compared folded, :func:`.text.fold`)."""
        settings = self.assignments.get(name, {})
        due = self.aware(settings.get("due"))
        for key in keys:
            extension = settings.get("extensions", {}).get(fold(key))
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
        parsed = parse_timestamp(value)
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
                extensions[fold(str(key))] = _number(value, where)
            else:
                extensions[fold(str(key))] = _as_datetime(value, where)
        entry["extensions"] = extensions
        assignments[name] = entry
    return Config(zone, late, assignments)



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


def cells(graded: GradedFolder, matched: Mapping[int, str], roster: Sequence[Student],
          config: Config, missing: str, times: Times | None = None, from_submission: bool = False,
          ) -> tuple[dict[int, Cell], dict[str, Cell], list[str], dict[str, str], dict[str, int]]:
    """``{roster index: Cell}`` for one assignment (``graded``), its late and undated students,
    the reasons for times not used and how many times came from each source."""
    found, late, undated, problems, sources = {}, {}, [], {}, {}
    by_graded = {gid: i for i, gid in matched.items()}
    for gid in sorted(graded.scores):
        time_info = graded.times.get(gid, {"submitted": True})
        i = by_graded.get(gid)
        if not time_info.get("submitted", True):
            if i is not None:
                found[i] = Cell(0.0 if missing == "zero" else None)
            continue
        keys = [fold(gid)] + (roster[i].keys() if i is not None else [])
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
        cell = Cell(penalised(raw, percent), raw, percent, days,
                    submitted.isoformat(" ", "minutes") if submitted else None,
                    deadline.isoformat(" ", "minutes") if deadline else None, source, problem)
        if percent > 0:
            late[gid] = cell
        if i is not None:
            found[i] = cell
    for i in range(len(roster)):
        found.setdefault(i, Cell(0.0 if missing == "zero" else None))
    return found, late, undated, problems, sources


def write_late_notes(path: Path | str, late: Mapping[str, Cell], max_score: float) -> None:
    """Record the late students of one export at ``path`` (:attr:`.out.OutFolder.late`,
    replacing the last): ``{student: Cell as a dict, with "max_score"}``."""
    data = {s: {**dataclasses.asdict(c), "max_score": max_score} for s, c in sorted(late.items())}
    write_text(path, json.dumps(data, indent=1, ensure_ascii=False))


def read_late_notes(path: Path | str) -> dict[str, dict[str, Any]]:
    """``{student: late-penalty record}`` of the last export, at ``path`` (empty when none, or
    unreadable)."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(s): dict(c) for s, c in data.items() if isinstance(c, dict)} \
        if isinstance(data, dict) else {}
