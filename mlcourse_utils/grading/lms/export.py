"""Grades for a learning management system (``mlcourse export``): its grade file, feedback zip.

``mlcourse export`` reads one graded folder per assignment (:func:`.graded.folder.read_graded`:
each student's :class:`~.graded.folder.Total`, the autograded points with a teaching
assistant's overrides plus the manual points that ``mlcourse grade-import`` loaded), the roster
(:mod:`.roster`), the due dates and late rule (:mod:`.late`) and the submission times
(:mod:`.times`), and writes the grade file the LMS imports (:func:`export`), as the LMS's
module of this folder writes it (:class:`.base.Lms`, from the registry). Each late
student's penalty is recorded in the graded folder, and every feedback page is written again
by :mod:`.reports.feedback` with the same total as the file.
:func:`write_feedback_zip` names the feedback pages for the LMS's bulk upload.
"""

from __future__ import annotations

import csv
import dataclasses
import datetime as dt
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..._files import atomic_open
from ..graded.folder import read_graded
from ..graded.late import Cell, read_config
from ..graded.late import cells as late_cells
from ..graded.model import shown
from ..graded.out import OutFolder
from ..intake.roster import match_roster, read_roster
from ..intake.times import read_times
from ..reports.feedback import regenerate_feedback
from ..text import clean_text, csv_text, fold, plural
from . import every, get
from .base import GradeTable, zip_name_part
from .canvas import COLUMN as CANVAS_COLUMN  # noqa: F401 (its name here before lms/canvas.py)
from .moodle import IDENTIFIERS as MOODLE_IDENTIFIERS  # noqa: F401 (likewise)

# ------------------------------------------------------------------ export


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
    #: assignment -> {graded id the LMS marked late: what the export did about it, in words}
    lms_late_done: dict[str, dict[str, str]] = dataclasses.field(default_factory=dict)
    #: assignment -> [graded ids with task points set by a teaching assistant]
    overridden: dict[str, list[str]] = dataclasses.field(default_factory=dict)
    #: assignment -> why its feedback pages could not be written again (the grade file is)
    feedback_problems: dict[str, str] = dataclasses.field(default_factory=dict)
    #: assignment -> {graded id: why it is nobody's in the roster} (from an LMS download: its
    #: user the roster lacks, refused when graded, graded under the LMS's name)
    refused: dict[str, dict[str, str]] = dataclasses.field(default_factory=dict)


def _fmt(x):
    return "" if x is None else shown(x)


def _unidentified(roster, lms, options):
    """Names of the roster students the LMS could not find in the exported file."""
    return [s.name or s.email or s.student_id or f"row {i + 2}"
            for i, s in enumerate(roster)
            if not any(v.strip() for v in lms.grade_file_ids(s, options))]


def _check_ids(roster, lms, options, allow_missing_ids):
    """The roster students the LMS could not find (:func:`_unidentified`); ValueError naming
    them unless ``allow_missing_ids``."""
    unidentified = _unidentified(roster, lms, options)
    if unidentified and not allow_missing_ids:
        raise ValueError(f"{plural(len(unidentified), 'student')} of the roster "
                         f"{'has' if len(unidentified) == 1 else 'have'} no "
                         f"{lms.ids_wanted(options)}, by which {lms.label} finds them: "
                         f"{', '.join(unidentified)}. Add the ids "
                         "to the roster (export it from the LMS), or pass --allow-missing-ids "
                         "to leave these rows for the LMS to skip")
    return unidentified

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

    A graded submission from an LMS download (``intake.json``) goes to the roster student with
    its LMS user id, never to one whose id it merely resembles (:func:`.roster.match_roster`);
    one the roster cannot vouch for is listed in ``refused`` with the reason, not exported.
    """
    from ..sandbox.requirements import check_dependencies

    check_dependencies()
    lms = get(fmt)
    options = {"canvas_assignment": canvas_assignment, "moodle_identifier": moodle_identifier}
    for each in sorted(every(), key=lambda other: other.precedence):
        each.check_options(each is lms, options)
    if missing not in ("blank", "zero"):
        raise ValueError(f"--missing must be blank or zero, not {missing!r}")
    config = read_config(config_path)
    roster = read_roster(roster_path)
    times = read_times(times_path) if times_path is not None else None
    assignments = [read_graded(folder) for folder in graded_dirs]
    names = [g.name for g in assignments]
    if len(set(names)) != len(names):
        raise ValueError(f"two graded folders hold the same assignment: {names}")
    lms.check_columns(names, config.assignments, options)
    unidentified = _check_ids(roster, lms, options, allow_missing_ids)
    report = Export(len(roster), {}, {}, {}, {}, {}, unidentified=unidentified)
    columns, grades = [], []
    for graded in assignments:
        column, cells = _export_assignment(report, graded, lms, options, roster, config, missing,
                                           times, times_from_submission)
        columns.append(column)
        grades.append(cells)
    _write_grade_file(out, lms, roster, columns, grades, options)
    for graded in assignments:  # the late-penalty sections, through the page's own template
        try:
            regenerate_feedback(graded.folder)
        except (OSError, ValueError) as exc:  # the grade file stands; the pages wait
            report.feedback_problems[graded.name] = clean_text(str(exc), 300)
    return report


def _export_assignment(report, graded, lms, options, roster, config, missing, times,
                       times_from_submission):
    """One graded assignment in the export: its column ``(name, max)`` and each roster
    student's cell, with what it found recorded in ``report`` and the late penalties in its
    graded folder."""
    clashes, refused = {}, {}
    matched, unmatched = match_roster(roster, graded.scores, clashes,
                                      OutFolder(graded.folder).read_lms_entries(), refused)
    cells, late, undated, problems, sources = late_cells(
        graded, matched, roster, config, missing, times, times_from_submission)
    for i in clashes:  # one roster student, several submissions: none is exported
        cells[i] = Cell(None)
    column = lms.column(graded.name, config.assignments.get(graded.name, {}), options)
    report.without_roster[graded.name] = [g for g in unmatched if g not in refused]
    report.refused[graded.name] = refused
    report.without_submission[graded.name] = [
        roster[i].name or roster[i].email or roster[i].student_id
        for i in range(len(roster)) if cells[i].raw is None and i not in clashes]
    report.ungraded[graded.name] = [g for g in graded.ungraded
                                    if g in graded.scores and g not in refused]
    report.late[graded.name] = late
    OutFolder(graded.folder).write_late(late, graded.total_max)
    report.undated[graded.name] = undated
    report.time_problems[graded.name] = problems
    report.time_sources[graded.name] = sources
    report.lms_late[graded.name] = sorted(g for g, info in graded.times.items()
                                          if info.get("lms_late") and g in graded.scores)
    report.overridden[graded.name] = sorted(g for g, t in graded.totals.items()
                                            if t.overridden)
    by_graded = {gid: cells[i] for i, gid in matched.items()}
    report.lms_late_done[graded.name] = {
        g: _lms_late_done(g, by_graded.get(g), late, undated, clashes)
        for g in report.lms_late[graded.name]}
    report.conflicts[graded.name] = {
        roster[i].name or roster[i].email or roster[i].student_id: ids
        for i, ids in clashes.items()}
    return (column, graded.total_max), cells


def _write_grade_file(out, lms, roster, columns, grades, options):
    """The LMS's grade file at ``out``: one column per assignment, one row per roster student."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with atomic_open(out, "w", newline="", encoding="utf-8") as fh:
        table = GradeTable([csv_text(c) for c, _ in columns], [_fmt(m) for _, m in columns],
                           [[_fmt(cells[i].score) for cells in grades]
                            for i in range(len(roster))])
        lms.write_grades(csv.writer(fh), roster, table, options)


def _lms_late_done(gid, cell, late, undated, clashes):
    """What the export did about a submission the LMS marked late, in words (``cell``: its
    grade in the file, None when it is not exported)."""
    if cell is None or cell.score is None:
        clash = any(gid in ids for ids in clashes.values())
        return ("not exported (several submissions match one student)" if clash
                else "not exported (no roster entry)")
    if gid in late:
        return f"penalised {late[gid].penalty:g} % (time from {late[gid].source})"
    if gid in undated:
        return ("no penalty: no submission time (give --times, or grade from a zip download "
                "that records the times)")
    if cell.deadline is None:
        return "no penalty: no due date for it in --config"
    if cell.submitted is None:
        return "no penalty: no submission time"
    return f"no penalty: on time by its deadline {cell.deadline} (time from {cell.source})"


# ------------------------------------------------------------------ feedback files for the LMS


@dataclasses.dataclass
class FeedbackZip:
    """What :func:`write_feedback_zip` wrote: ``{student: name in the zip}`` and the students
    left out (no page, or not known to the LMS: no number of the LMS's for them)."""

    files: dict[str, str]
    left_out: dict[str, str]


def feedback_file_name(fmt: str, entry: Mapping[str, Any], assignment: str) -> str:
    """The name of a student's feedback page in the zip the LMS ``fmt`` takes for bulk feedback
    (:meth:`.base.Lms.feedback_file_name`: Canvas's comments, Moodle's feedback files)."""
    page = f"feedback-{zip_name_part(assignment)}.html"
    return get(fmt, "--lms").feedback_file_name(entry, page)


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

    lms = get(fmt, "--lms")
    graded = Path(graded)
    results = OutFolder(graded).read_results()
    known = {s: e for s, e in OutFolder(graded).read_lms_entries().items() if e.get("lms") == fmt}
    roster = read_roster(roster_path) if roster_path is not None else []
    lookup = {}
    for student in roster:
        number = lms.roster_number(student)
        if number:
            entry = {"name": lms.feedback_name(student.name), "user_id": number,
                     "attachment_id": ""}
            for key in student.keys():
                lookup.setdefault(key, entry)
    files, left_out = {}, {}
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with atomic_open(out, "wb") as fh, zipfile.ZipFile(fh, "w", zipfile.ZIP_DEFLATED) as archive:
        for student in sorted(results.results):
            page = OutFolder(graded).feedback_page(student)
            entry = known.get(student) or lookup.get(fold(student))
            if entry is None:
                left_out[student] = (f"not known to {fmt} (no {fmt} download entry and no "
                                     + f"{lms.number_column} in the roster)")
                continue
            if "/" in student or not page.is_file():
                left_out[student] = "no feedback page"
                continue
            refusal = lms.feedback_refusal(entry)
            if refusal:
                left_out[student] = refusal
                continue
            name = feedback_file_name(fmt, entry, results.name)
            when = dt.datetime.fromtimestamp(page.stat().st_mtime)
            info = zipfile.ZipInfo(name, date_time=(max(when.year, 1980), *when.timetuple()[1:6]))
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, page.read_bytes())
            files[student] = name
    return FeedbackZip(files, left_out)
