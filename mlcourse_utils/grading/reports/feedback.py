"""The feedback pages grading writes (and writes again with manual points and late notes).

The grade files and ``results.json`` are :mod:`.results`; CSV quoting is :mod:`.text`.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..._files import write_text
from ..graded.out import FEEDBACK, OutFolder
from ..graded.results import GradeResult, points
from ..text import clean_text

if TYPE_CHECKING:
    from ..notebook import Assignment


@functools.lru_cache(maxsize=1)
def _template():
    import jinja2

    from ..graded.model import shown

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(Path(__file__).parents[1] / "templates"),
        autoescape=True, trim_blocks=True, lstrip_blocks=True, undefined=jinja2.StrictUndefined)
    env.filters["points"] = points
    env.filters["shown"] = shown  # a total, as the export writes it
    return env.get_template("feedback.html")


def warm_up() -> None:
    """Load and compile the feedback page's template now (``mlcourse grade`` does it in a thread
    while the defences are probed, so the first students do not wait for it)."""
    _template()


def write_feedback(result: GradeResult, assignment: Assignment, path: Path | str,
                   manual: Mapping[str, tuple[float | None, str]] | None = None,
                   late: Mapping[str, Any] | None = None) -> None:
    """One self-contained HTML page for a student: every task, each failing test in words.

    Rendered from ``templates/feedback.html`` with autoescaping: whatever a student's code
    printed or raised appears as text, and the page's content security policy allows no
    script. Its size is bounded by the result's caps (:meth:`GradeResult.bound`). ``manual``
    (``{grade_id: (points or None, comment)}``, what ``grade-import`` loaded; None: nothing
    yet) gives the points and comments of the answers graded by hand, ``late`` (the student's
    record in :func:`.late.read_late_notes`, written by ``mlcourse export``) the late penalty.
    The page shows one total at its top, :func:`.graded.folder.student_total`'s: the number
    the export writes. A task a teaching assistant overrode shows its points, the autograded
    points they replace and the reason.
    """
    from ..graded.model import student_total

    late = late if late and late.get("penalty", 0) > 0 else None
    given = manual or {}
    rows = [{"grade_id": gid, "max": top, "points": given.get(gid, (None, ""))[0],
             "comment": given.get(gid, (None, ""))[1]} for gid, top in assignment.manual]
    total = student_total(result, assignment.manual, manual, late["penalty"] if late else 0.0,
                          assignment.max_score)
    page = _template().render(result=result, assignment=assignment, total=total,
                              id_sentence=id_sentence(result),
                              notes=list(dict.fromkeys(result.notes)),
                              output=result.output[-5000:] if result.output.strip() else "",
                              manual=rows, late=late)
    write_text(path, page)


def id_sentence(result: GradeResult) -> str:
    """One sentence for the student when the id typed in the notebook is not the one it was
    handed in under ("" when it is, or when there is nothing to say). It costs no points: the
    notebook was graded with the variant of the id it was handed in under."""
    check = result.id_check
    if check is None or not check.problem:
        return ""
    you = clean_text(result.student, 200)
    by_hand = (f"the teaching assistants mark the answers graded by hand against the numbers "
               f"of {you}'s variant (the id it was handed in under)")
    if check.problem == "other":
        return (f"The notebook's STUDENT_ID says {clean_text(check.typed, 200)} but it was "
                f"handed in as {you}; it was graded with {you}'s variant (this costs no points "
                "by itself: a teaching assistant will look at it).")
    if check.problem == "empty":
        return f"STUDENT_ID is empty: {by_hand}."
    if check.problem == "missing":
        return f"The notebook has no STUDENT_ID cell: {by_hand}."
    return f"STUDENT_ID does not hold a course id ({clean_text(check.detail, 200)}): {by_hand}."


#: nbgrader's ``generate_feedback`` writes ``feedback/<student>/<assignment>/...`` in its course
#: folder; this file, written into every graded folder, sends it elsewhere so that ``feedback/``
#: holds one format only (the pages of this module).
NBGRADER_CONFIG = f"""\
# Written by `mlcourse grade`. The feedback pages of this folder are mlcourse's ({FEEDBACK}/,
# rebuilt with manual points by `mlcourse feedback`); nbgrader's own generate_feedback, if run
# here, writes its different pages to nbgrader_feedback/ instead of mixing them in.
c = get_config()  # noqa: F821
c.CourseDirectory.feedback_directory = "nbgrader_feedback"
"""


@dataclasses.dataclass
class Regenerated:
    """What :func:`regenerate_feedback` wrote."""

    pages: list[Path]
    graded_by_hand: int       # students with every manually graded answer graded
    pending: list[str]        # students with answers still to grade by hand
    foreign: list[str]        # entries of feedback/ that are not a student's page


def regenerate_feedback(graded: Path | str, root: Path | str | None = None) -> Regenerated:
    """Write every student's feedback page in ``graded/feedback/`` again, now with the points
    and comments of the answers graded by hand (from ``gradebook.db``), the overrides of
    ``results.json``, the late penalty of the last ``mlcourse export`` (``late.json``) and the
    one total they make."""
    from ..notebook import load_assignment
    from .manual import read_manual_grades

    out = OutFolder(graded)
    results = out.read_results()
    assignment = load_assignment(results.name, root)
    manual = read_manual_grades(graded)
    late = out.read_late()
    folder = out.feedback
    folder.mkdir(exist_ok=True)
    pages, complete, pending = [], 0, []
    for student, result in sorted(results.results.items()):
        if "/" in student or student in ("", ".", ".."):
            continue
        path = out.feedback_page(student)
        cells = manual.get(student, {}) if assignment.manual else None
        write_feedback(result, assignment, path, cells, late.get(student))
        pages.append(path)
        if assignment.manual:
            if all(cells.get(g, (None, ""))[0] is not None for g, _ in assignment.manual):
                complete += 1
            else:
                pending.append(student)
    ours = {p.name for p in pages}
    foreign = sorted(e.name for e in folder.iterdir() if e.name not in ours
                     and not e.name.startswith("."))
    return Regenerated(pages, complete, pending, foreign)
