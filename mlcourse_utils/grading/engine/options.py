"""GradingOptions: how `mlcourse grade` grades a class, chosen once and handed down."""

from __future__ import annotations

import dataclasses

from ...course import DEFAULT_MEMORY_MB


@dataclasses.dataclass(frozen=True)
class GradingOptions:
    """What the command line of `mlcourse grade` chose, in one record: ``cli.py`` builds it
    from its arguments; :func:`~.batch.grade_class` hands it to every student's
    :func:`~.session.grade_notebook`, which hands the limits to the student's sandbox session.

    A limit left ``None`` is decided where it is decided for `mlcourse check` and `release`
    (the assignment's time limit, :data:`~mlcourse_utils.course.DEFAULT_TIMEOUT` unless its
    source notebook sets one; the budget of :func:`~.session.grading_budget`).
    """

    #: Seconds one cell and one test may run; None: the assignment's limit (``--timeout``).
    timeout: float | None = None
    #: Seconds one student's whole grading may take: reading the notebook, start-up, cells,
    #: tests and re-runs after crashes; None: :func:`~.session.grading_budget`
    #: (``--student-timeout``).
    student_timeout: float | None = None
    #: Memory limit of each student's sandbox in MB, shared memory included (``--memory``).
    memory_mb: int = DEFAULT_MEMORY_MB
    #: The term's grading secret (:func:`~.batch.read_secret`): hidden tests draw each student's
    #: inputs from it; None: the public development seed. Never printed (``repr`` leaves it out).
    secret: bytes | None = dataclasses.field(default=None, repr=False)
    #: Students graded at once (``--jobs``).
    jobs: int = 1
    #: ``(K, N)``: grade only the K-th of N deterministic slices of the class (``--shard``,
    #: :func:`~.batch.in_shard`); None: the whole class.
    shard: tuple[int, int] | None = None
    #: Stop before any student is graded when a sandbox defence is missing
    #: (``--require-isolation``, :class:`~.defences.IsolationError`).
    require_isolation: bool = False
    #: Grade into a folder holding a teaching assistant's work, moving that work aside
    #: (``--force``, :func:`~mlcourse_utils.grading.reports.manual.set_aside`).
    force: bool = False
    #: Also name each sandbox defence in force and what a missing one does (``--verbose``).
    verbose: bool = False
    #: Show the progress line on stderr (the command line always does; tests turn it off).
    progress: bool = True

#: The options of a run that chose nothing (every limit the assignment's).
DEFAULTS = GradingOptions()
