"""The kinds of failure that are not about the answer, in words: what the reasons the grader
records (``session.py``, ``submissions.py``) say, one kind per failure (:func:`classify_reason`).

A timeout is named a timeout wherever it happened: in the student's function while a test
called it, or in the answer cell while it was defining the function (:func:`cell_stopped`
words that reason, :func:`timeout_where` tells the two apart). It is the answer's own doing
(an endless loop, a far too slow method): the class report counts it against the task and
lists it apart, never as a failure "not about the answer" (:data:`ANSWER_KINDS`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .model import Check, StudentRecord

#: Failures that are not about the answer: key -> words on the report (the kind of the reason).
CATEGORIES = {
    "no_submission": "nothing submitted",
    "refused": "submission refused (link, not a regular file or too large)",
    "unreadable": "notebook could not be read",
    "timeout": "time limit per cell or test",
    "budget": "total grading time used up",
    "memory": "memory limit",
    "died": "the notebook's process died",
    "forbidden": "forbidden call",
    "delegation": "called the reference implementation",
    "internal": "grader error",
    "tampering": "tampering detected",
    "other": "other reason",
}

#: Kinds of :data:`CATEGORIES` that are about the answer after all: a task lost to them counts
#: in the task's statistics and is listed on its own, not among the failures not about the
#: answer (which the report offers as regrade candidates).
ANSWER_KINDS = {"timeout"}

#: How the reason of a task whose answer cell did not finish begins (:func:`cell_stopped`).
CELL_STOPPED = "the cell that defines"

#: (pattern, category) in order: the first that matches a reason decides its kind.
_REASON_PATTERNS = [
    (r"no notebook was submitted|nothing was submitted", "no_submission"),
    (r"symbolic link|not a regular file|larger than \d+ ?MB|not accepted|refused", "refused"),
    (r"could not be read|could not be opened", "unreadable"),
    (r"used up its total grading time", "budget"),
    (r"timed out", "timeout"),
    (r"process died|failed too many times|killed by signal|exited \(status", "died"),
    (r"memory", "memory"),
    (r"forbidden", "forbidden"),
    (r"reference implementation|mlcourse_utils", "delegation"),
    (r"internal grader error", "internal"),
    (r"tampering detected", "tampering"),
]

#: A failure that means the task was not attempted: the stub as released, or no function of
#: that name at all (the runner's message, sandbox/runner/).
NOT_IMPLEMENTED = re.compile(r"\bNotImplementedError\b|the notebook does not define a function")
#: A test that was skipped because an earlier one of its task stopped the process.
NOT_RUN = "not run: an earlier test of"


def classify_reason(text: str) -> str:
    """The :data:`CATEGORIES` key of a reason the grader recorded (``"other"`` if none fits)."""
    for pattern, category in _REASON_PATTERNS:
        if re.search(pattern, text, flags=re.IGNORECASE):
            return category
    return "other"


def cell_stopped(task: str, cell: int, why: str) -> str:
    """The reason of a task whose answer cell (number ``cell``, from 1) did not finish, so
    that the function was never defined: ``why`` is what stopped it (a timeout, the process
    dying), as :func:`classify_reason` reads it."""
    return (f"{CELL_STOPPED} {task} (cell {cell}) did not finish: {why}; {task} was never "
            "defined, so its tests could not run")


def timeout_where(reason: str) -> str:
    """Where a timeout happened, in words: while the answer cell defined the function, or in
    the function while a test called it."""
    return "while its cell defined it" if reason.startswith(CELL_STOPPED) else "in the function"


def timeouts(rec: StudentRecord) -> list[tuple[str, str, str]]:
    """``(task, where, reason)`` for each task of a student lost (in part) to a timeout."""
    return [(task, timeout_where(reason), reason) for task, reason in rec.reasons.items()
            if classify_reason(reason) == "timeout"]


def non_answer_failures(rec: StudentRecord,
                        checks: Mapping[str, Check]) -> list[tuple[str, str, str]]:
    """``(category, task or "", reason)`` for each failure of a student not about the answer.

    Reasons recorded per task (memory, refusals, delegation, forbidden calls, ...; not
    timeouts, which are about the answer: :func:`timeouts`), memory errors raised inside a
    student's function (``checks``: the folder's checks by grade_id), and notebook-level
    tampering notes.
    """
    found = [(kind, task, reason) for task, reason in rec.reasons.items()
             if (kind := classify_reason(reason)) not in ANSWER_KINDS]
    seen = set(rec.reasons)
    for gid, outcome in rec.outcomes.items():
        task = checks[gid].task if gid in checks else ""
        if outcome.earned == 0 and "MemoryError" in outcome.message and task not in seen:
            seen.add(task)
            found.append(("memory", task, outcome.message))
    for note in dict.fromkeys(rec.notes):
        if classify_reason(note) == "tampering":
            found.append(("tampering", "", note))
    return found
