"""The class report (``mlcourse report``): what a class got wrong, as an offline page with figures.

From one or more graded folders (read by :mod:`.graded_folder`), :func:`build_report` computes
for each assignment

* the distribution of total and task scores (mean, median, shares of full, partial and zero);
* the checks that failed most often, in the words the feedback uses (each test cell's
  description), counted over the students who attempted the task;
* an item analysis per task: difficulty (mean score / max) and discrimination (the correlation
  of the task score with the rest of the assignment), with flags for tasks that nearly everyone
  fails and for tasks the strongest students fail as often as the weakest;
* the failures that are not about the answer (time and memory limits, refused or unreadable
  notebooks, forbidden calls, delegation, tampering, late penalties when a due-date
  configuration is given);
* manual-grading progress per manually graded cell;

and across assignments the students below a threshold on two or more. :func:`write_report` writes
``DIR/index.html`` (no script, no network: a content security policy allows only the files next
to it), ``DIR/report.css``, every figure as SVG and PNG with the numbers behind it as CSV in
``DIR/figures/``, and the tables as CSV in ``DIR/tables/``. With ``anonymous=True`` the output
holds aggregates only: no student id, no reason text, no link to a feedback page.
"""

from __future__ import annotations

import csv
import dataclasses
import math
import os
import re
import shutil
import statistics
import textwrap
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .._files import atomic_open, write_bytes, write_text
from .graded_folder import (
    CATEGORIES,
    NOT_IMPLEMENTED,
    NOT_RUN,
    Check,
    GradedFolder,
    GradedFolderError,
    StudentRecord,
    classify_reason,
    non_answer_failures,
    read_graded_folder,
)
from .report import csv_text

#: Default share of the maximum below which an assignment counts against a student.
DEFAULT_THRESHOLD = 0.5
#: Checks listed per task in "most frequent failures".
TOP_CHECKS = 3
#: Checks in the figure of an assignment's most frequent failures.
TOP_FIGURE = 8
#: A task is flagged as failed by nearly everyone when at most this share has full marks.
NEARLY_ALL_FAIL = 0.10
#: Item-analysis flags on the top and bottom thirds need at least this many students (thirds
#: of fewer than ten students say more about who they are than about the task).
MIN_STUDENTS = 30
#: ... and at least this share of them without full marks on the task.
MIN_FAILING = 0.10
#: "As often": the top third fails at least as often as the bottom third, less this margin.
SAME_RATE_MARGIN = 0.10
#: Histogram of total scores: one bar per point up to this maximum (whole-point scores).
MAX_POINT_BARS = 40
#: Bands of the overview figure (total score as a share of the maximum).
BANDS = ["below 50 %", "50 % to under 80 %", "80 % to under full", "full marks"]
#: Categories whose students took no part (nothing was graded): left out of the item analysis.
ABSENT = {"no_submission", "refused", "unreadable"}


class ReportError(ValueError):
    """The report cannot be made from the given folders (the message says why)."""


# ------------------------------------------------------------------ what the report holds


@dataclasses.dataclass
class TaskStats:
    """One task's score distribution and item analysis over the students who took part."""

    task: str
    max_score: float
    n: int
    mean: float | None
    median: float | None
    full: int
    partial: int
    zero: int
    counts: dict[float, int]          # score -> students
    difficulty: float | None          # mean / max
    discrimination: float | None      # Pearson r of task score and rest of the assignment
    fail_top: float | None            # share without full marks in the top third (by the rest)
    fail_bottom: float | None         # ... in the bottom third
    flags: list[str]


@dataclasses.dataclass
class CheckStats:
    """How often one check failed among the students who attempted its task."""

    check: Check
    attempted: int       # answers that ran (passed + wrong + raised)
    wrong: int           # a wrong result
    raised: int          # the function raised an error or returned something uncheckable
    not_attempted: int   # the stub was left (NotImplementedError)
    not_answer: int      # lost for a reason that is not the answer (timeout, memory, ...)
    fail_top: float | None = None     # failed share in the top third of those who attempted
    fail_bottom: float | None = None  # ... in the bottom third (thirds by the rest score)
    flags: list[str] = dataclasses.field(default_factory=list)

    @property
    def failed(self) -> int:
        return self.wrong + self.raised

    @property
    def share(self) -> float | None:
        return self.failed / self.attempted if self.attempted else None


@dataclasses.dataclass
class Failure:
    """One failure of one student that is not about the answer."""

    student: str
    category: str
    task: str
    reason: str


@dataclasses.dataclass
class Late:
    """Late penalties of one assignment, or why they are not shown."""

    available: bool
    note: str
    entries: list[tuple[str, str, str, int, float]]  # student, submitted, deadline, days, %
    undated: int = 0
    sources: dict[str, int] = dataclasses.field(default_factory=dict)  # time source -> students


@dataclasses.dataclass
class AssignmentReport:
    """Everything the report shows about one graded assignment."""

    graded: GradedFolder
    slug: str
    students: list[str]
    participants: list[str]
    totals: dict[str, float]
    mean: float | None
    median: float | None
    full: int
    partial: int
    zero: int
    histogram: list[tuple[float, float, int]]   # (low, high, students); high inclusive at last
    tasks: list[TaskStats]
    checks: list[CheckStats]
    failures: list[Failure]
    late: Late

    @property
    def name(self) -> str:
        return self.graded.name

    def bands(self) -> list[int]:
        """Students per band of :data:`BANDS` (total score as a share of the maximum)."""
        top = self.graded.max_score
        counts = [0, 0, 0, 0]
        for v in self.totals.values():
            share = v / top if top > 0 else 0.0
            k = (3 if _is_full(v, top) and top > 0 else 0 if share < 0.5 else
                 1 if share < 0.8 else 2)
            counts[k] += 1
        return counts

    def failure_counts(self) -> dict[str, int]:
        """``{category: students}`` over :data:`CATEGORIES` and ``"late"`` (zeros left out)."""
        seen: dict[str, set[str]] = {}
        for f in self.failures:
            seen.setdefault(f.category, set()).add(f.student)
        if self.late.available and self.late.entries:
            seen["late"] = {e[0] for e in self.late.entries}
        order = [*CATEGORIES, "late"]
        return {c: len(seen[c]) for c in order if c in seen}

    def failures_by_student(self) -> list[tuple[str, str, list[str], str]]:
        """``(student, category, tasks, reason)``: the failures with one reason joined."""
        grouped: dict[tuple[str, str, str], list[str]] = {}
        for f in self.failures:
            grouped.setdefault((f.student, f.category, f.reason), []).append(f.task)
        return [(s, c, [t for t in tasks if t], reason)
                for (s, c, reason), tasks in grouped.items()]

    def top_checks(self, n: int | None = None, task: str | None = None) -> list[CheckStats]:
        """Checks with at least one failure, most failed first (by count, then share)."""
        rows = [c for c in self.checks if c.failed and (task is None or c.check.task == task)]
        rows.sort(key=lambda c: (-c.failed, -(c.share or 0), self._order(c)))
        return rows if n is None else rows[:n]

    def listed_checks(self, task: str, n: int = TOP_CHECKS) -> list[CheckStats]:
        """The ``n`` most failed checks of ``task`` and any flagged one, most failed first."""
        top = self.top_checks(n, task)
        return top + [c for c in self.top_checks(None, task) if c.flags and c not in top]

    def _order(self, c: CheckStats) -> int:
        return next(i for i, s in enumerate(self.checks) if s is c)


@dataclasses.dataclass
class ClassReport:
    """The whole report: one :class:`AssignmentReport` per folder and the students at risk."""

    assignments: list[AssignmentReport]
    threshold: float
    #: student -> [fraction of the maximum per assignment, None when absent], for those below
    #: the threshold (or absent) on two or more assignments; empty with a single assignment.
    at_risk: dict[str, list[float | None]]
    #: number of assignments below the threshold -> students (every student of any folder).
    below_counts: dict[int, int]
    config_note: str
    gaps: list[str]


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


def _is_full(score: float, top: float) -> bool:
    return score >= top - 1e-9 * max(1.0, abs(top))


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
    full = sum(_is_full(v, top) for v in values)
    zero = sum(v <= 0 for v in values) if top > 0 else 0
    partial = n - full - zero
    mean = _mean(values)
    difficulty = mean / top if mean is not None and top > 0 else None
    discrimination = pearson(values, [rest[s] for s in students])
    fail_top, fail_bottom = _thirds({s: not _is_full(scores[s], top) for s in students}, rest)
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
            if _is_full(outcome.earned, row.check.points):
                row.attempted += 1
                failed_by[gid][student] = False
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
    """Late penalties of one folder under the export configuration (:mod:`.lms`)."""
    sources = Counter(r.time_source or "unknown" for r in graded.students.values()
                      if r.submitted is not False and r.time)
    if config is None:
        return Late(False, config_note, [], sources=dict(sources))
    due = config.assignments.get(graded.name, {}).get("due")
    if due is None and not any(config.assignments.get(graded.name, {}).get("extensions", {})):
        return Late(False, f"the due-date configuration has no due date for {graded.name}", [],
                    sources=dict(sources))
    if not graded.has_times:
        return Late(False, "the folder has no timestamps.json (submission times are unknown)",
                    [], sources=dict(sources))
    from .lms import _parse_time

    entries, undated = [], 0
    for student, rec in graded.students.items():
        if rec.submitted is False:
            continue
        when = config.aware(_parse_time(rec.time)) if rec.time else None
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
    full = sum(_is_full(v, top) for v in values) if top > 0 else 0
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
            t.flags.append(f"{len(suspect)} suspect check{'s' if len(suspect) > 1 else ''} "
                           "(see its failures)")
    checks_by_id = {c.grade_id: c for c in graded.checks}
    failures = [Failure(s, category, task, reason)
                for s in students
                for category, task, reason in non_answer_failures(graded.students[s],
                                                                   checks_by_id)]
    return AssignmentReport(
        graded, slug, students, participants, totals, _mean(values), _median(values), full,
        len(values) - full - zero, zero, _histogram(values, top), tasks,
        checks, failures, _late(graded, config, config_note))


def build_report(folders: Sequence[GradedFolder], threshold: float = DEFAULT_THRESHOLD,
                 config: Any = None, config_note: str = "") -> ClassReport:
    """The :class:`ClassReport` of graded folders (one per assignment).

    ``config`` is the due-date configuration of ``mlcourse export`` (:func:`.lms.read_config`);
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


# ------------------------------------------------------------------ figures


@dataclasses.dataclass
class Figure:
    """A figure on the page: its files, alt text, caption and the numbers behind it."""

    slug: str
    title: str
    alt: str
    caption: str
    header: list[str]
    rows: list[list[Any]]


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:.0f}\u00a0%"


def _num(x: float | None, digits: int = 2) -> str:
    if x is None:
        return "—"
    return f"{round(x, digits):g}"


def _label(text: str, width: int = 48, lines: int = 2) -> str:
    """Text for a matplotlib label: wrapped, cut, and with ``$`` kept literal (no mathtext)."""
    wrapped = textwrap.wrap(text, width) or [""]
    if len(wrapped) > lines:
        wrapped = wrapped[:lines]
        wrapped[-1] = wrapped[-1][: width - 1] + "…"
    return "\n".join(wrapped).replace("$", r"\$")


def _check_words(check: Check) -> str:
    """A check in words with its task (descriptions usually start with the task's name)."""
    if check.description.startswith(check.task):
        return check.description
    return f"{check.task}: {check.description}"


def _scores_figure(r: AssignmentReport, folder: Path) -> Figure:
    from ..plotting import PALETTE, new_figure

    top = r.graded.max_score
    fig, ax = new_figure(width=6.4, height=3.2)
    if r.histogram and r.histogram[0][0] == r.histogram[0][1]:  # one bar per point
        xs = [low for low, _, _ in r.histogram]
        ax.bar(xs, [c for *_, c in r.histogram], width=0.8, color=PALETTE[0])
        rows = [[_num(low), _num(low), c] for low, _, c in r.histogram]
    else:
        lows = [low for low, _, _ in r.histogram]
        width = (r.histogram[0][1] - r.histogram[0][0]) if r.histogram else 1
        ax.bar(lows, [c for *_, c in r.histogram], width=width * 0.9, align="edge",
               color=PALETTE[0])
        rows = [[_num(low), _num(high), c] for low, high, c in r.histogram]
    for value, style, label in ((r.mean, "--", "mean"), (r.median, ":", "median")):
        if value is not None:
            ax.axvline(value, color=PALETTE[1], linestyle=style, linewidth=1.5,
                       label=f"{label} {value:.3g}")
    ax.set_xlabel(f"total autograded score (of {top:g})")
    ax.set_ylabel("students")
    ax.yaxis.get_major_locator().set_params(integer=True)
    if r.mean is not None:
        ax.legend()
    from ..plotting import save_figure

    slug = f"{r.slug}_scores"
    save_figure(fig, folder / slug)
    n = len(r.students)
    alt = (f"Histogram of the total autograded scores of {n} students on {r.name} (maximum "
           f"{top:g}): mean {_num(r.mean)}, median {_num(r.median)}; {r.full} with full marks, "
           f"{r.partial} with partial marks, {r.zero} with zero.")
    return Figure(slug, f"Total scores on {r.name}", alt,
                  "Students per total score; the dashed line is the mean, the dotted one the "
                  "median.", ["score_from", "score_to", "students"], rows)


def _tasks_figure(r: AssignmentReport, folder: Path) -> Figure:
    from ..plotting import PALETTE, new_figure, save_figure

    k = max(1, len(r.tasks))
    cols = min(3, k)
    nrows = math.ceil(k / cols)
    fig, axes = new_figure(nrows, cols, width=6.4, height=1.9 * nrows + 0.3, squeeze=False)
    rows = []
    for i, ax in enumerate(axes.ravel()):
        if i >= k or not r.tasks:
            ax.set_visible(False)
            continue
        t = r.tasks[i]
        values = sorted(set(t.counts) | {0.0, t.max_score})
        counts = [t.counts.get(v, 0) for v in values]
        ax.bar([_num(v) for v in values], counts, color=PALETTE[0], width=0.7)
        ax.set_title(_label(t.task, 30, 1), fontsize=9)
        ax.yaxis.get_major_locator().set_params(integer=True)
        ax.tick_params(labelsize=8)
        rows += [[t.task, _num(v), c] for v, c in zip(values, counts, strict=True)]
    fig.supxlabel("task score", fontsize=9)
    fig.supylabel("students", fontsize=9)
    slug = f"{r.slug}_tasks"
    save_figure(fig, folder / slug)
    parts = [f"{t.task}: {t.full} of {t.n} full, {t.zero} zero" for t in r.tasks]
    alt = (f"Bar charts of the students per score for each of the {len(r.tasks)} tasks of "
           f"{r.name}, over the {len(r.participants)} students who took part. "
           + "; ".join(parts) + ".")
    return Figure(slug, f"Task scores on {r.name}", alt,
                  "One panel per task: students per task score (students who took part).",
                  ["task", "score", "students"], rows)


def _items_figure(r: AssignmentReport, folder: Path) -> Figure:
    from ..plotting import PALETTE, new_figure, save_figure

    fig, ax = new_figure(width=6.4, height=3.6)
    rows, points = [], {}
    for t in r.tasks:
        y = t.discrimination
        rows.append([t.task, _num(t.difficulty, 3), _num(y, 3), "; ".join(t.flags)])
        if t.difficulty is not None:
            key = (round(t.difficulty, 2), None if y is None else round(y, 2), bool(t.flags))
            points.setdefault(key, []).append(t.task)
    for (x, y, flagged), tasks in points.items():
        shown = 0.0 if y is None else y
        ax.scatter([x], [shown], s=42, zorder=3,
                   marker="X" if flagged else ("o" if y is not None else "s"),
                   color=PALETTE[1] if flagged else PALETTE[0])
        ax.annotate(_label(", ".join(tasks), 34, 3), (x, shown), textcoords="offset points",
                    xytext=(5, 4), fontsize=7, va="bottom")
    ax.axhline(0, color="0.5", linewidth=0.8)
    ax.set_xlim(-0.05, 1.15)
    ax.set_ylim(-1.05, 1.05)
    ax.set_xlabel("difficulty (mean score / maximum; 1 = everyone full marks)")
    ax.set_ylabel("discrimination (r with the rest)")
    slug = f"{r.slug}_items"
    save_figure(fig, folder / slug)
    flagged = [f"{t.task} ({', '.join(t.flags)})" for t in r.tasks if t.flags]
    alt = (f"Scatter plot of the {len(r.tasks)} tasks of {r.name}: difficulty on the "
           "horizontal axis, discrimination on the vertical axis. "
           + ("Flagged: " + "; ".join(flagged) + "." if flagged else "No task is flagged."))
    return Figure(slug, f"Item analysis of {r.name}", alt,
                  "Each task at its difficulty and discrimination. Crosses are flagged tasks; "
                  "squares (drawn at 0) are tasks whose discrimination is undefined because "
                  "every student has the same score.",
                  ["task", "difficulty", "discrimination", "flags"], rows)


def _failures_figure(r: AssignmentReport, folder: Path) -> Figure | None:
    from ..plotting import PALETTE, new_figure, save_figure

    top = r.top_checks(TOP_FIGURE)
    if not top:
        return None
    fig, ax = new_figure(width=6.4, height=0.55 * len(top) + 0.9)
    labels = [_label(_check_words(c.check)) for c in top]
    shares = [100 * (c.share or 0) for c in top]
    ys = np.arange(len(top))[::-1]
    ax.barh(ys, shares, color=PALETTE[1], height=0.6)
    for y, c, s in zip(ys, top, shares, strict=True):
        ax.text(s + 1, y, f"{c.failed}/{c.attempted}", va="center", fontsize=8)
    ax.set_yticks(ys, labels, fontsize=7)
    ax.set_xlim(0, 112)
    ax.set_xlabel("% of the students who attempted the task")
    ax.grid(axis="y", visible=False)
    slug = f"{r.slug}_failures"
    save_figure(fig, folder / slug)
    words = [f"{c.check.description} ({c.failed} of {c.attempted})" for c in top[:3]]
    alt = (f"Bar chart of the {len(top)} most frequently failed checks of {r.name}, as the "
           "share of the students who attempted the task. Most failed: " + "; ".join(words)
           + ".")
    rows = [[c.check.task, c.check.grade_id, c.check.kind, c.check.description, c.failed,
             c.attempted, _num(c.share, 4)] for c in top]
    return Figure(slug, f"Most frequent failures on {r.name}", alt,
                  "The checks failed most often, labelled by task and by the description "
                  "students read in their feedback; the numbers are failed / attempted.",
                  ["task", "check", "kind", "description", "failed", "attempted", "share"],
                  rows)


def _overview_figures(report: ClassReport, folder: Path) -> list[Figure]:
    from ..plotting import PALETTE, new_figure, save_figure

    figures = []
    names = [r.name for r in report.assignments]
    fig, ax = new_figure(width=6.4, height=0.42 * len(names) + 1.2)
    ys = np.arange(len(names))[::-1]
    left = np.zeros(len(names))
    bands = [r.bands() for r in report.assignments]
    styles = [(PALETTE[1], ".."), (PALETTE[4], "//"), (PALETTE[5], ""), (PALETTE[2], "")]
    for k, (label, (colour, hatch)) in enumerate(zip(BANDS, styles, strict=True)):
        values = np.array([b[k] for b in bands], dtype=float)
        ax.barh(ys, values, left=left, color=colour, hatch=hatch, edgecolor="white",
                height=0.6, label=label)
        left += values
    ax.set_yticks(ys, [_label(n, 30, 1) for n in names])
    ax.set_xlabel("students")
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.grid(axis="y", visible=False)
    ax.legend(ncols=2, loc="lower center", bbox_to_anchor=(0.5, 1.0))
    save_figure(fig, folder / "overview_scores")
    rows = [[r.name, len(r.students), *b] for r, b in zip(report.assignments, bands, strict=True)]
    alt = ("Stacked bar chart: for each assignment, the students by total autograded score as a "
           "share of the maximum (" + ", ".join(BANDS) + "). " + "; ".join(
               f"{r.name}: " + ", ".join(f"{n} {label}" for label, n in zip(BANDS, b,
                                                                              strict=True))
               for r, b in zip(report.assignments, bands, strict=True)) + ".")
    figures.append(Figure("overview_scores", "Total scores per assignment", alt,
                          "Students per assignment by their total autograded score, as a share "
                          "of the maximum.",
                          ["assignment", "students", "below_50", "from_50_below_80",
                           "from_80_below_100", "full"], rows))
    if len(report.assignments) > 1:
        counts = report.below_counts
        ks = list(range(len(report.assignments) + 1))
        fig, ax = new_figure(width=6.4, height=3.0)
        ax.bar(ks, [counts.get(k, 0) for k in ks], color=PALETTE[0], width=0.7)
        ax.set_xticks(ks)
        ax.set_xlabel(f"assignments below {100 * report.threshold:g} % (or not submitted)")
        ax.set_ylabel("students")
        ax.yaxis.get_major_locator().set_params(integer=True)
        save_figure(fig, folder / "overview_below")
        rows = [[k, counts.get(k, 0)] for k in ks]
        alt = (f"Bar chart of the students by the number of assignments on which they scored "
               f"below {100 * report.threshold:g} % of the maximum or had no grade: "
               + "; ".join(f"{k}: {counts.get(k, 0)}" for k in ks) + ".")
        figures.append(Figure("overview_below", "Assignments below the threshold", alt,
                              "Students by how many assignments they scored below the "
                              "threshold on (an assignment without a grade counts).",
                              ["assignments_below", "students"], rows))
    return figures


# ------------------------------------------------------------------ writing


def _cell(value: Any) -> Any:
    """A CSV cell: numbers as they are, text as a spreadsheet shows text (no formulas)."""
    if isinstance(value, str):
        try:
            float(value)
        except ValueError:
            return csv_text(value)
    return value


def _write_csv(path: Path, header: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    with atomic_open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        for row in rows:
            w.writerow([_cell(v) for v in row])


def _tables(r: AssignmentReport, folder: Path, anonymous: bool) -> None:
    """The CSV files of an assignment's tables (per student only in the instructor's copy)."""
    _write_csv(folder / f"{r.slug}_tasks.csv",
               ["task", "max_score", "students", "mean", "median", "full", "partial", "zero",
                "difficulty", "discrimination", "fail_top_third", "fail_bottom_third", "flags"],
               [[t.task, _num(t.max_score), t.n, _num(t.mean, 4), _num(t.median, 4), t.full,
                 t.partial, t.zero, _num(t.difficulty, 4), _num(t.discrimination, 4),
                 _num(t.fail_top, 4), _num(t.fail_bottom, 4), "; ".join(t.flags)]
                for t in r.tasks])
    _write_csv(folder / f"{r.slug}_checks.csv",
               ["task", "check", "kind", "description", "points", "attempted", "failed",
                "wrong_result", "raised_error", "not_attempted", "lost_not_for_the_answer"],
               [[c.check.task, c.check.grade_id, c.check.kind, c.check.description,
                 _num(c.check.points), c.attempted, c.failed, c.wrong, c.raised,
                 c.not_attempted, c.not_answer] for c in r.checks])
    _write_csv(folder / f"{r.slug}_not_the_answer.csv", ["category", "what", "students"],
               [[k, CATEGORIES.get(k, "late penalty"), n]
                for k, n in r.failure_counts().items()])
    _write_csv(folder / f"{r.slug}_manual.csv", ["cell", "points", "answers", "with_points",
                                                  "source"],
               [[m.grade_id, _num(m.points), m.total, "" if m.graded is None else m.graded,
                 m.source] for m in r.graded.manual])
    if anonymous:
        return
    _write_csv(folder / f"{r.slug}_not_the_answer_students.csv",
               ["student_id", "category", "task", "reason"],
               [[f.student, f.category, f.task, f.reason] for f in r.failures])
    if r.late.available:
        _write_csv(folder / f"{r.slug}_late.csv",
                   ["student_id", "submitted", "deadline", "days_late", "penalty_percent"],
                   [[s, when, due, days, _num(pct)] for s, when, due, days, pct in r.late.entries])


def _template():
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(Path(__file__).with_name("templates")),
        autoescape=True, trim_blocks=True, lstrip_blocks=True, undefined=jinja2.StrictUndefined)
    env.filters["pct"] = _pct
    env.filters["num"] = _num
    env.filters["words"] = _check_words
    return env.get_template("class_report.html")


def write_report(report: ClassReport, out: Path | str, anonymous: bool = False) -> Path:
    """Write the report into ``out`` (see the module docstring); returns ``out/index.html``.

    Files of an earlier report in ``out`` (``index.html``, ``report.css``, ``figures/``,
    ``tables/``) are replaced, so an anonymous copy never keeps an instructor's file.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    for sub in ("figures", "tables"):
        if (out / sub).is_dir():
            shutil.rmtree(out / sub)
        (out / sub).mkdir()
    figures_dir, tables_dir = out / "figures", out / "tables"
    overview = _overview_figures(report, figures_dir)
    sections = []
    for r in report.assignments:
        figs = [_scores_figure(r, figures_dir), _tasks_figure(r, figures_dir),
                _items_figure(r, figures_dir)]
        failures = _failures_figure(r, figures_dir)
        if failures is not None:
            figs.append(failures)
        _tables(r, tables_dir, anonymous)
        sections.append((r, {f.slug.removeprefix(f"{r.slug}_"): f for f in figs}))
    for fig in overview + [f for _, figs in sections for f in figs.values()]:
        _write_csv(figures_dir / f"{fig.slug}.csv", fig.header, fig.rows)
    if not anonymous and report.at_risk:
        _write_csv(tables_dir / "at_risk.csv",
                   ["student_id", *[r.name for r in report.assignments]],
                   [[s, *["" if f is None else _num(f, 4) for f in fs]]
                    for s, fs in report.at_risk.items()])
    write_bytes(out / "report.css",
                (Path(__file__).with_name("templates") / "class_report.css").read_bytes())

    def feedback_link(r: AssignmentReport, student: str) -> str | None:
        page = r.graded.students[student].feedback
        if anonymous or page is None:
            return None
        return Path(os.path.relpath(page.resolve(), out.resolve())).as_posix()

    page = _template().render(
        report=report, sections=sections, overview=overview, anonymous=anonymous,
        categories=CATEGORIES, top_checks=TOP_CHECKS, feedback_link=feedback_link,
        nearly_all=NEARLY_ALL_FAIL, min_students=MIN_STUDENTS,
        margin=SAME_RATE_MARGIN)
    write_text(out / "index.html", page)
    return out / "index.html"


def make_report(graded_dirs: Sequence[Path | str], out: Path | str, *, anonymous: bool = False,
                threshold: float = DEFAULT_THRESHOLD, config_path: Path | str | None = None,
                root: Path | str | None = None) -> ClassReport:
    """Read the graded folders, build the report and write it (``mlcourse report``).

    Raises :class:`~.graded_folder.GradedFolderError` for a folder that is not a graded
    folder, ReportError for folders that do not fit together, ValueError for a bad
    configuration.
    """
    from .lms import read_config

    folders = [read_graded_folder(d, root) for d in graded_dirs]
    if config_path is None:
        config, note = None, ("no due-date configuration was given: add --config DUE.toml "
                              "(the file `mlcourse export` reads) to see late penalties")
    else:
        config, note = read_config(config_path), ""
    report = build_report(folders, threshold, config, note)
    write_report(report, out, anonymous=anonymous)
    return report


__all__ = ["AssignmentReport", "CheckStats", "ClassReport", "GradedFolderError", "ReportError",
           "TaskStats", "build_report", "make_report", "pearson", "task_stats", "write_report"]
