"""The class report's statistics: score distributions, item analysis, failing checks, lateness.

:func:`build_report` turns graded folders (:mod:`.graded.folder`) into the
:class:`~.class_model.ClassReport` that :mod:`.class_report` writes.
"""

from __future__ import annotations

import math
import re
import statistics
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..graded.model import GradedFolder, StudentRecord
from ..graded.out import TIMESTAMPS
from ..graded.reasons import (
    NOT_IMPLEMENTED,
    NOT_RUN,
    classify_reason,
    non_answer_failures,
    timeouts,
)
from ..text import plural
from .class_model import (
    ABSENT,
    DEFAULT_THRESHOLD,
    MAX_POINT_BARS,
    MIN_FAILING,
    MIN_STUDENTS,
    NEARLY_ALL_FAIL,
    SAME_RATE_MARGIN,
    AssignmentReport,
    CheckStats,
    ClassReport,
    Failure,
    IdFlag,
    Late,
    Override,
    ReportError,
    TaskStats,
    Timeout,
    is_full,
)

# ------------------------------------------------------------------ statistics


def _mean(values: Sequence[float]) -> float | None:
    return statistics.fmean(values) if values else None


def _median(values: Sequence[float]) -> float | None:
    return statistics.median(values) if values else None


def pearson(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Pearson's correlation of two equally long sequences; None when either is constant
    or there are fewer than three pairs (it is undefined or meaningless then)."""
    if len(x) != len(y):
        raise ValueError(f"x has {len(x)} values but y has {len(y)}")
    if len(x) < 3:
        return None
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    a, b = a - a.mean(), b - b.mean()
    sa, sb = math.sqrt(float(a @ a)), math.sqrt(float(b @ b))
    if sa == 0 or sb == 0:
        return None
    return float(np.clip((a @ b) / (sa * sb), -1.0, 1.0))


def task_stats(task: str, top: float, scores: Mapping[str, float],
               rest: Mapping[str, float]) -> TaskStats:
    """Distribution and item analysis of one task (see :class:`TaskStats`).

    ``scores`` and ``rest`` map the students who took part to their task score and to the
    rest of their assignment total. The top and bottom thirds are taken by the rest (ties in
    student order), each ``n // 3`` students.
    """
    students = sorted(scores)
    values = [scores[s] for s in students]
    n = len(values)
    full = sum(is_full(v, top) for v in values)
    zero = sum(v <= 0 for v in values) if top > 0 else 0
    partial = n - full - zero
    mean = _mean(values)
    difficulty = mean / top if mean is not None and top > 0 else None
    discrimination = pearson(values, [rest[s] for s in students])
    fail_top, fail_bottom = _thirds({s: not is_full(scores[s], top) for s in students}, rest)
    flags = []
    if n and full / n <= NEARLY_ALL_FAIL:
        flags.append("nearly everyone fails")
    elif (n >= MIN_STUDENTS and fail_top is not None and (n - full) / n >= MIN_FAILING
          and fail_top >= fail_bottom - SAME_RATE_MARGIN):
        flags.append("the strongest fail as often as the weakest")
    return TaskStats(task, top, n, mean, _median(values), full, partial, zero,
                     dict(sorted(Counter(values).items())), difficulty, discrimination,
                     fail_top, fail_bottom, flags)


def _histogram(totals: Sequence[float], top: float) -> list[tuple[float, float, int]]:
    """Counts of total scores: one bar per point for whole-point scores up to
    :data:`MAX_POINT_BARS` points, otherwise 20 equal bins (each [low, high), the last closed)."""
    if top <= 0:
        return [(0.0, 0.0, len(totals))]
    if top <= MAX_POINT_BARS and float(top).is_integer() and \
            all(float(t).is_integer() for t in totals):
        counts = Counter(int(t) for t in totals)
        return [(float(k), float(k), counts.get(k, 0)) for k in range(int(top) + 1)]
    width = top / 20
    counts = Counter(min(19, max(0, int(math.floor(t / width + 1e-9)))) for t in totals)
    return [(k * width, (k + 1) * width, counts.get(k, 0)) for k in range(20)]


def _thirds(failed: Mapping[str, bool], rest: Mapping[str, float]) -> tuple[float | None,
                                                                            float | None]:
    """Failed shares in the top and the bottom third of students by ``rest`` (n // 3 each;
    ties in student order); None when there are fewer than three students."""
    order = sorted(sorted(failed), key=lambda s: rest[s])
    k = len(order) // 3
    if not k:
        return None, None
    return (sum(failed[s] for s in order[-k:]) / k, sum(failed[s] for s in order[:k]) / k)


def _check_stats(graded: GradedFolder, participants: Iterable[str]) -> list[CheckStats]:
    """Each check's failures among the students who attempted its task, and its flags: failed
    by nearly everyone who attempted it, or by the strongest as often as by the weakest."""
    rows = {c.grade_id: CheckStats(c, 0, 0, 0, 0, 0) for c in graded.checks}
    failed_by: dict[str, dict[str, bool]] = {gid: {} for gid in rows}
    rest: dict[tuple[str, str], float] = {}
    for student in participants:
        rec = graded.students[student]
        for gid, outcome in rec.outcomes.items():
            row = rows.get(gid)
            if row is None:
                continue
            task = row.check.task
            if is_full(outcome.earned, row.check.points):
                row.attempted += 1
                failed_by[gid][student] = False
            elif (classify_reason(outcome.message) == "timeout"
                  and not outcome.message.startswith("not run")):  # it ran out of time here
                row.attempted += 1
                row.timed_out += 1
                failed_by[gid][student] = True
            elif (task in rec.reasons or outcome.message.startswith(NOT_RUN)
                  or "MemoryError" in outcome.message):
                row.not_answer += 1
                continue
            elif NOT_IMPLEMENTED.search(outcome.message):
                row.not_attempted += 1
                continue
            elif outcome.message.startswith(("your function raised",
                                             "the result could not be checked")):
                row.attempted += 1
                row.raised += 1
                failed_by[gid][student] = True
            else:
                row.attempted += 1
                row.wrong += 1
                failed_by[gid][student] = True
            rest[(student, task)] = rec.score - rec.task_scores.get(task, 0.0)
    for gid, row in rows.items():
        students = failed_by[gid]
        row.fail_top, row.fail_bottom = _thirds(
            students, {s: rest[(s, row.check.task)] for s in students})
        if row.attempted and row.failed / row.attempted >= 1 - NEARLY_ALL_FAIL:
            row.flags.append("nearly everyone who attempted it fails")
        elif (row.attempted >= MIN_STUDENTS and row.failed / row.attempted >= MIN_FAILING
              and row.fail_top is not None
              and row.fail_top >= row.fail_bottom - SAME_RATE_MARGIN):
            row.flags.append("the strongest fail it as often as the weakest")
    return list(rows.values())


def _took_part(rec: StudentRecord) -> bool:
    if rec.submitted is False:
        return False
    return not any(classify_reason(r) in ABSENT for r in rec.reasons.values())


def _late(graded: GradedFolder, config: Any, config_note: str) -> Late:
    """Late penalties of one folder under the export configuration (:mod:`.late`)."""
    sources = Counter(r.time_source or "unknown" for r in graded.students.values()
                      if r.submitted is not False and r.time)
    if config is None:
        return Late(False, config_note, [], sources=dict(sources))
    due = config.assignments.get(graded.name, {}).get("due")
    if due is None and not any(config.assignments.get(graded.name, {}).get("extensions", {})):
        return Late(False, f"the due-date configuration has no due date for {graded.name}", [],
                    sources=dict(sources))
    if not graded.has_times:
        return Late(False, f"the folder has no {TIMESTAMPS} (submission times are unknown)",
                    [], sources=dict(sources))
    from ..intake.times import parse_timestamp

    entries, undated = [], 0
    for student, rec in graded.students.items():
        if rec.submitted is False:
            continue
        when = config.aware(parse_timestamp(rec.time)) if rec.time else None
        deadline = config.deadline(graded.name, [student.strip().lower()])
        if when is None:
            undated += deadline is not None
            continue
        percent, days = config.late.percent(when, deadline)
        if percent > 0:
            entries.append((student, when.isoformat(" ", "minutes"),
                            deadline.isoformat(" ", "minutes"), days, percent))
    return Late(True, "", entries, undated, dict(sources))


def _slug(name: str, taken: set[str]) -> str:
    base = re.sub(r"[^A-Za-z0-9_-]+", "_", name).strip("_") or "assignment"
    slug, k = base, 2
    while slug in taken:
        slug, k = f"{base}_{k}", k + 1
    taken.add(slug)
    return slug


def assignment_report(graded: GradedFolder, slug: str, config: Any = None,
                      config_note: str = "") -> AssignmentReport:
    """The statistics of one graded folder (see the module docstring)."""
    students = list(graded.students)
    totals = {s: graded.students[s].score for s in students}
    values = [totals[s] for s in students]
    top = graded.max_score
    full = sum(is_full(v, top) for v in values) if top > 0 else 0
    zero = sum(v <= 0 for v in values)
    participants = [s for s in students if _took_part(graded.students[s])]
    tasks = []
    for task in graded.tasks:
        scores = {s: graded.students[s].task_scores[task] for s in participants
                  if task in graded.students[s].task_scores}
        rest = {s: totals[s] - scores[s] for s in scores}
        tasks.append(task_stats(task, graded.task_max[task], scores, rest))
    checks = _check_stats(graded, participants)
    for t in tasks:
        suspect = [c for c in checks if c.check.task == t.task and c.flags]
        if suspect and not t.flags:
            t.flags.append(f"{plural(len(suspect), 'suspect check')} "
                           "(see its failures)")
    checks_by_id = {c.grade_id: c for c in graded.checks}
    failures = [Failure(s, category, task, reason)
                for s in students
                for category, task, reason in non_answer_failures(graded.students[s],
                                                                   checks_by_id)]
    lost = [Timeout(s, task, where, reason) for s in participants
            for task, where, reason in timeouts(graded.students[s])]
    overrides = [Override(s, task, *graded.students[s].overrides[task])
                 for s in students for task in graded.tasks
                 if task in graded.students[s].overrides]
    for t in tasks:
        t.timed_out = sum(1 for x in lost if x.task == t.task)
        t.overridden = sum(1 for o in overrides if o.task == t.task)
    ids = [IdFlag(s, c.problem, c.typed) for s in students
           if (c := graded.students[s].id_check) is not None and c.problem]
    return AssignmentReport(
        graded, slug, students, participants, totals, _mean(values), _median(values), full,
        len(values) - full - zero, zero, _histogram(values, top), tasks,
        checks, failures, _late(graded, config, config_note), lost, overrides, ids)


def build_report(folders: Sequence[GradedFolder], threshold: float = DEFAULT_THRESHOLD,
                 config: Any = None, config_note: str = "") -> ClassReport:
    """The :class:`ClassReport` of graded folders (one per assignment).

    ``config`` is the due-date configuration of ``mlcourse export`` (:func:`.late.read_config`);
    without it, ``config_note`` says why late penalties are not shown. Raises ReportError when
    two folders hold the same assignment.
    """
    if not 0 < threshold <= 1:
        raise ReportError(f"threshold must be in (0, 1], not {threshold!r}")
    if not folders:
        raise ReportError("the report needs at least one graded folder")
    seen: dict[str, Path] = {}
    for graded in folders:
        if graded.name in seen:
            raise ReportError(f"{seen[graded.name]} and {graded.folder} both hold {graded.name}: "
                              "join the shards of one assignment with `mlcourse grade-merge` "
                              "first")
        seen[graded.name] = graded.folder
    taken: set[str] = {"overview"}
    reports = [assignment_report(g, _slug(g.name, taken), config, config_note) for g in folders]
    everyone = sorted({s for r in reports for s in r.students})
    fractions = {s: [r.totals[s] / r.graded.max_score if s in r.totals and r.graded.max_score > 0
                     else None for r in reports] for s in everyone}
    below = {s: sum(f is None or f < threshold for f in fs) for s, fs in fractions.items()}
    at_risk = {s: fractions[s] for s in everyone if below[s] >= 2} if len(reports) > 1 else {}
    gaps = [f"{g.name}: {gap}" for g in folders for gap in g.gaps]
    return ClassReport(reports, threshold, at_risk, dict(sorted(Counter(below.values()).items())),
                       config_note, gaps)


