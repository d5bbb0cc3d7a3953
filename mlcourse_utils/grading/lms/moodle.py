"""Moodle as the grader meets it: its download's names, its participant numbers, its CSV import.

Moodle's assignment download puts each student's files in a folder
``Full Name_12345_assignsubmission_file_`` (without the last ``_`` since Moodle 4.1), or
prefixes each file's name with it when the download is not in folders; 12345 is the
participant number (``Participant 12345`` in the ``Identifier`` column of its grading
worksheet). It marks nothing late in the names. Its grade import is a CSV file whose "Map from"
column (e-mail, ID number or username, :data:`IDENTIFIERS`) finds each student, and its
*Upload multiple feedback files in a zip* matches the participant number of the same prefix.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ..text import fold
from .base import DownloadName, GradeTable, Lms, csv_cells, folded_words, zip_name_part

#: Moodle's download: ``Full Name_12345_assignsubmission_file_`` (a folder; without the last
#: ``_`` since Moodle 4.1), or the prefix of a file name when the download is not in folders.
PREFIX = re.compile(r"^(?P<name>[^/]+?)_(?P<participant>\d+)_(?P<plugin>assignsubmission"
                    r"_[a-z]+)(?:_(?P<file>.*))?$", re.ASCII)
#: Moodle's CSV import: the user field the "Map from" column is mapped to, and its header.
IDENTIFIERS = {"email": "Email address", "idnumber": "ID number", "username": "Username"}


def full_names(name: str) -> set[str]:
    """``"Last, First"`` and ``"First Last"`` forms of a roster name, folded for comparing."""
    name = " ".join(name.split())
    forms = {name}
    if "," in name:
        last, first = (part.strip() for part in name.split(",", 1))
        forms.add(f"{first} {last}")
    return {fold(f) for f in forms if f}


class Moodle(Lms):
    """Moodle (its assignment activity)."""

    name = "moodle"
    label = "Moodle"
    number_name = "participant number"
    number_column = "Identifier"
    layout = ("a Moodle download (folders 'Full Name_12345_assignsubmission_file_' holding the "
              "notebook, file names with that prefix, or its zip)")
    roster_export = "Moodle's grading worksheet"
    roster_columns = "Moodle's ID number"
    feedback_upload = ("Moodle: View all submissions, Grading action 'Upload multiple feedback "
                       "files in a zip'")
    roster_headers = {"participant": ("identifier", "participant", "participant id")}
    precedence = 0  # its names are the more specific: "assignsubmission" in the prefix

    def parse(self, parts: Sequence[str]) -> DownloadName | None:
        for k in range(len(parts)):  # the prefix may be a folder or the file's own name
            m = PREFIX.match(parts[k])
            if m:
                rest = "/".join([m["file"] or "", *parts[k + 1:]]).strip("/")
                return DownloadName(self.name, m["participant"], m["name"], "", False, rest)
        return None

    def student_folder(self, name: str) -> bool:
        return PREFIX.match(name) is not None

    def roster_number(self, student: Any) -> str:
        return student.participant.strip()

    def name_keys(self, roster_name: str) -> set[str]:
        return full_names(roster_name)

    def download_name_key(self, name: str) -> str:
        return folded_words(name)

    def roster_values(self, values: dict[str, str]) -> dict[str, str]:
        if "participant" in values:  # the worksheet writes "Participant 12345"
            values = {**values, "participant": re.sub(r"(?i)^participant\s*", "",
                                                      values["participant"])}
        return values

    def number_cell(self, number: str) -> str:
        return f"Identifier 'Participant {number}'"

    def add_export_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--moodle-identifier", choices=list(IDENTIFIERS), default="email",
                            help="the column Moodle's CSV import maps students by, first in "
                                 "the file (default: email)")

    def export_keywords(self, args: argparse.Namespace) -> dict[str, Any]:
        return {"moodle_identifier": args.moodle_identifier}

    def check_options(self, chosen: bool, options: Mapping[str, Any]) -> None:
        identifier = options.get("moodle_identifier", "email")
        if identifier not in IDENTIFIERS:
            raise ValueError(f"--moodle-identifier must be one of {', '.join(IDENTIFIERS)}, "
                             f"not {identifier!r}")

    def _fields(self, options):
        """The identifier columns in the file's order: ``[(header, value of a student)]``."""
        fields = {"email": ("Email address", lambda s: s.email),
                  "idnumber": ("ID number", lambda s: s.idnumber or s.student_id),
                  "username": ("Username", lambda s: s.student_id)}
        first = options.get("moodle_identifier", "email")
        return [fields[k] for k in [first] + [k for k in ("email", "idnumber") if k != first]]

    def grade_file_ids(self, student: Any, options: Mapping[str, Any]) -> tuple[str, ...]:
        return (self._fields(options)[0][1](student),)

    def ids_wanted(self, options: Mapping[str, Any]) -> str:
        return IDENTIFIERS[options.get("moodle_identifier", "email")]

    def write_grades(self, writer: Any, roster: Sequence[Any], table: GradeTable,
                     options: Mapping[str, Any]) -> None:
        fields = self._fields(options)
        writer.writerow([header for header, _ in fields] + ["Full name"] + table.headers)
        for s, scores in zip(roster, table.scores, strict=True):
            writer.writerow(csv_cells([value(s) for _, value in fields] + [s.name]) + scores)

    def import_hint(self, options: Mapping[str, Any]) -> str:
        return (f"Moodle, Grades, Import, CSV file; map from "
                f"'{self.ids_wanted(options)}' to the same user field, "
                "and each assignment's column to its grade item")

    def feedback_file_name(self, entry: Mapping[str, Any], page: str) -> str:
        """Moodle (*Upload multiple feedback files in a zip*) matches the participant number in
        the prefix of its download, ``Full Name_12345_assignsubmission_file_/``, and keeps the
        rest as the file's name."""
        name = zip_name_part(entry.get("name") or "student").replace("_", " ")
        return f"{name}_{entry['user_id']}_assignsubmission_file_/{page}"
