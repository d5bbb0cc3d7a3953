"""What the class report holds: its settings, the statistics of each task, check and assignment.

Computed by :mod:`.class_stats`, drawn by :mod:`.class_figures`, written by :mod:`.class_report`.
"""

from __future__ import annotations

import dataclasses

from ..graded.model import Check, GradedFolder
from ..graded.reasons import CATEGORIES

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


def is_full(score: float, top: float) -> bool:
    """Full marks: ``score`` equals ``top`` up to rounding (sums of float points)."""
    return score >= top - 1e-9 * max(1.0, abs(top))


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
    timed_out: int = 0                # students who lost points of it to a timeout
    overridden: int = 0               # students whose points of it a teaching assistant set


@dataclasses.dataclass
class CheckStats:
    """How often one check failed among the students who attempted its task."""

    check: Check
    attempted: int       # answers that ran (passed + wrong + raised)
    wrong: int           # a wrong result
    raised: int          # the function raised an error or returned something uncheckable
    not_attempted: int   # the stub was left (NotImplementedError)
    not_answer: int      # lost for a reason that is not the answer (memory, ...) or not run
    fail_top: float | None = None     # failed share in the top third of those who attempted
    fail_bottom: float | None = None  # ... in the bottom third (thirds by the rest score)
    flags: list[str] = dataclasses.field(default_factory=list)
    timed_out: int = 0   # the function ran out of time on this check

    @property
    def failed(self) -> int:
        return self.wrong + self.raised + self.timed_out

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
class Timeout:
    """One task of one student lost (in part) to a timeout: about the answer, not a regrade."""

    student: str
    task: str
    where: str   # "in the function" or "while its cell defined it"
    reason: str


@dataclasses.dataclass
class Override:
    """One task's points set by a teaching assistant (``overrides.csv``)."""

    student: str
    task: str
    points: float
    autograded: float
    reason: str


@dataclasses.dataclass
class IdFlag:
    """A notebook whose id cell does not hold the id it was handed in under (a flag for the
    teaching assistants, never points lost)."""

    student: str
    problem: str       # a key of results.ID_PROBLEMS
    typed: str | None  # the id typed (for "other")


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
    timeouts: list[Timeout] = dataclasses.field(default_factory=list)
    overrides: list[Override] = dataclasses.field(default_factory=list)
    ids: list[IdFlag] = dataclasses.field(default_factory=list)

    def id_counts(self) -> dict[str, int]:
        """``{problem: notebooks}`` of :attr:`ids`, in the order of ``ID_PROBLEMS``."""
        from ..graded.results import ID_PROBLEMS

        return {k: n for k in ID_PROBLEMS if (n := sum(f.problem == k for f in self.ids))}

    @property
    def name(self) -> str:
        return self.graded.name

    def bands(self) -> list[int]:
        """Students per band of :data:`BANDS` (total score as a share of the maximum)."""
        top = self.graded.max_score
        counts = [0, 0, 0, 0]
        for v in self.totals.values():
            share = v / top if top > 0 else 0.0
            k = (3 if is_full(v, top) and top > 0 else 0 if share < 0.5 else
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


