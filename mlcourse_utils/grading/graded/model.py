"""What a graded class is, as data: one GradedFolder, its students and checks, and one total.

The model is read by :mod:`.folder` (and the grader's own record by :mod:`.out`); nothing here
reads or writes a file. A student's total is decided here, once (:func:`student_total`, shown
by :func:`shown`): the export writes it and every feedback page shows it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from .results import GradeResult, IdCheck


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
    #: the id typed in the notebook against the roster's (None: not recorded)
    id_check: IdCheck | None = None


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
    """One graded assignment: the one model of a graded class, whoever reads it.

    Each reader fills what it reads (the rest keeps its default):
    :meth:`.out.OutFolder.read_results` the grader's own record (``name``, ``folder``,
    ``results``, ``defences``, ``run``, and the autograded ``max_score``, ``tasks`` and
    ``task_max`` its tests give); :func:`.folder.read_graded`, for the export, that and each
    student's :class:`Total` (``totals``), ``manual_max`` and the submission ``times``;
    :func:`.folder.read_graded_folder`, for the reports, every file read defensively into
    ``students``, ``checks``, ``manual`` and the ``gaps`` in words.
    """

    name: str
    folder: Path
    max_score: float = 0.0  # the autograded maximum
    tasks: list[str] = dataclasses.field(default_factory=list)
    task_max: dict[str, float] = dataclasses.field(default_factory=dict)
    checks: list[Check] = dataclasses.field(default_factory=list)
    students: dict[str, StudentRecord] = dataclasses.field(default_factory=dict)
    manual: list[ManualCell] = dataclasses.field(default_factory=list)
    has_times: bool = False
    #: Top-level entries of the grader's record other than the assignment and students (e.g.
    #: the defences that were in force), passed on as they are.
    extra: dict[str, Any] = dataclasses.field(default_factory=dict)
    gaps: list[str] = dataclasses.field(default_factory=list)
    #: Every student's full result, as the grader recorded it (overrides applied).
    results: dict[str, GradeResult] = dataclasses.field(default_factory=dict)
    defences: dict[str, bool] = dataclasses.field(default_factory=dict)  # {defence: in force}
    run: dict[str, Any] = dataclasses.field(default_factory=dict)        # figures of the run
    manual_max: float = 0.0  # the points graded by hand
    times: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)  # as recorded
    totals: dict[str, Total] = dataclasses.field(default_factory=dict)  # student -> Total

    def checks_of(self, task: str) -> list[Check]:
        return [c for c in self.checks if c.task == task]

    @property
    def total_max(self) -> float:
        """The assignment's maximum: autograded and graded by hand."""
        return self.max_score + self.manual_max

    @property
    def scores(self) -> dict[str, float]:
        """``{student: points earned}`` (before a late penalty) of the :attr:`totals`."""
        return {s: t.earned for s, t in self.totals.items()}

    @property
    def ungraded(self) -> list[str]:
        """Students with manually graded cells still to grade, sorted."""
        return sorted(s for s, t in self.totals.items() if t.pending)


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
