"""Canvas as the grader meets it: its download's names, its ``ID``, its grade file and comments.

Canvas's bulk download names each file ``login[_late]_userid_attachmentid_filename`` (nbgrader's
``zip_collect`` reads the same names): the login is the sortable name in letters and digits
(``smithjonesalice``, :func:`login`), the user id the ``ID`` column of its gradebook export, and
``_late`` its own late mark. Its gradebook import finds a student by ``ID``, ``SIS User ID`` or
``SIS Login ID`` and fills an assignment's column only when the header names it as Canvas does,
``Title (assignment id)``. Its bulk upload of comments takes files named as in its download.
"""

from __future__ import annotations

import argparse
import re
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

from .base import DownloadName, GradeTable, Lms, csv_cells, zip_name_part

#: Canvas's bulk download: ``login[_late]_userid_attachmentid_filename``.
FILE = re.compile(r"^(?P<login>[^_/]+?)(?P<late>_late)?_(?P<user>\d+)_(?P<attachment>\d+)"
                  r"_(?P<file>[^/]+)$", re.IGNORECASE | re.ASCII)
#: The header Canvas gives an assignment's column: ``Title (assignment id)``.
COLUMN = re.compile(r"^.*\S \((\d+)\)$")


def login(name: str) -> str:
    """The login Canvas puts in a download's file names for the sortable name ``name``
    (``"Smith-Jones, Alice"`` → ``"smithjonesalice"``): letters and digits, lower case."""
    text = unicodedata.normalize("NFKD", name)
    return re.sub(r"[^a-z0-9]", "", "".join(c for c in text if not unicodedata.combining(c))
                  .lower())


class Canvas(Lms):
    """Canvas (Instructure)."""

    name = "canvas"
    label = "Canvas"
    number_name = "user id"
    number_column = "ID"
    layout = ("a Canvas bulk download (files named login_userid_attachmentid_NAME.ipynb, late "
              "ones login_late_userid_..., or its zip)")
    roster_export = "Canvas's gradebook export"
    roster_columns = "Canvas' ID, SIS User ID, SIS Login ID, Section"
    feedback_upload = ("Canvas: the assignment's Submissions page, Upload Submission Comments "
                       "(each page becomes a comment on that student's submission)")
    roster_headers = {"lms_id": ("id", "canvas id", "user id", "userid")}
    marks_late = True
    precedence = 1

    def parse(self, parts: Sequence[str]) -> DownloadName | None:
        m = FILE.match(parts[-1])
        if m is None:
            return None
        return DownloadName(self.name, m["user"], m["login"], m["attachment"], bool(m["late"]),
                            m["file"])

    def roster_number(self, student: Any) -> str:
        return student.lms_id.strip()

    def name_keys(self, roster_name: str) -> set[str]:
        return {login(roster_name)}

    def download_name_key(self, name: str) -> str:
        return login(name)

    def add_export_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "--canvas-assignment", default=None, metavar="'TITLE (ID)'",
            help="the assignment's column as Canvas names it, e.g. 'Maximum likelihood (1234)' "
                 "(or canvas_column in DUE.toml): without the id, Canvas would make a new "
                 "column")

    def export_keywords(self, args: argparse.Namespace) -> dict[str, Any]:
        return {"canvas_assignment": args.canvas_assignment}

    def check_options(self, chosen: bool, options: Mapping[str, Any]) -> None:
        if options.get("canvas_assignment") is not None and not chosen:
            raise ValueError("--canvas-assignment is for --format canvas")

    def check_columns(self, assignments: Sequence[str],
                      settings: Mapping[str, Mapping[str, Any]],
                      options: Mapping[str, Any]) -> None:
        chosen = options.get("canvas_assignment")
        if chosen is not None and len(assignments) != 1:
            raise ValueError("--canvas-assignment names one assignment's column: export one "
                             "graded folder with it (or set canvas_column per assignment in "
                             "--config)")
        for name in assignments:
            column = chosen or settings.get(name, {}).get("canvas_column")
            if not column or not COLUMN.match(str(column)):
                raise ValueError(
                    f"Canvas fills the column of {name} only when the header names it as "
                    "Canvas does, 'Title (assignment id)' (the id is the number at the end of "
                    "the assignment's address, .../assignments/1234): pass --canvas-assignment "
                    f"'Title (1234)' or set canvas_column in [assignments.{name}] of "
                    f"--config (got {column!r})")

    def column(self, assignment: str, settings: Mapping[str, Any],
               options: Mapping[str, Any]) -> str:
        return options.get("canvas_assignment") or super().column(assignment, settings, options)

    def grade_file_ids(self, student: Any, options: Mapping[str, Any]) -> tuple[str, ...]:
        return (student.lms_id, student.sis_user_id, student.sis_login_id)

    def ids_wanted(self, options: Mapping[str, Any]) -> str:
        return "ID, SIS User ID or SIS Login ID"

    def write_grades(self, writer: Any, roster: Sequence[Any], table: GradeTable,
                     options: Mapping[str, Any]) -> None:
        writer.writerow(["Student", "ID", "SIS User ID", "SIS Login ID", "Section",
                         *table.headers])
        writer.writerow(["    Points Possible", "", "", "", "", *table.possible])
        for s, scores in zip(roster, table.scores, strict=True):
            writer.writerow([*csv_cells([s.name, s.lms_id, s.sis_user_id, s.sis_login_id,
                                         s.section]), *scores])

    def import_hint(self, options: Mapping[str, Any]) -> str:
        return ("Canvas, Grades, Import; students are found by ID, SIS User ID or SIS "
                "Login ID, the column by the assignment id in its header")

    def feedback_file_name(self, entry: Mapping[str, Any], page: str) -> str:
        """Canvas (Submissions → *Upload Submission Comments*, "re-upload submissions") reads
        the first two all-digit parts of a file name, split at ``_``, as the user id and the id
        of a file of that user's submission, as in its own download (``Assignment#
        infer_comment_context_from_filename``; a name without an existing file id is ignored):
        ``login_userid_attachmentid_feedback-NAME.html`` attaches the page to that submission
        as a comment."""
        name = zip_name_part(entry.get("name") or "student").replace("_", "")
        if name.isdigit():  # Canvas would read it as the user id
            name = f"s{name}"
        return f"{name}_{entry['user_id']}_{entry['attachment_id']}_{page}"

    def feedback_name(self, roster_name: str) -> str:
        return login(roster_name)

    def feedback_refusal(self, entry: Mapping[str, Any]) -> str | None:
        if not entry.get("attachment_id"):
            return ("Canvas attaches a comment only to a submitted file, whose id is in its "
                    "download: grade from Canvas's download")
        return None
