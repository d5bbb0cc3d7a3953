"""What every learning management system (LMS) is to the grader: one interface, :class:`Lms`.

An LMS is known by what it writes and reads: the names of the files and folders of its bulk
download (parsed into a :class:`DownloadName`: who, under which name, which file, whether it
marked the file late), how a roster row carries its number for a student, the grade file its
import takes, and the names its bulk upload of feedback files expects. One module per LMS
subclasses :class:`Lms` (``canvas.py``, ``moodle.py``) and the registry (``lms/__init__.py``)
holds one instance of each; intake, the export and the command line ask the registry, never
compare names. This module imports nothing of the grader's but the text helpers, so that the
intake below the export can use it.
"""

from __future__ import annotations

import abc
import argparse
import dataclasses
import re
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from ..text import clean_text, csv_text, fold


@dataclasses.dataclass(frozen=True)
class DownloadName:
    """Who a file of an LMS's bulk download belongs to, read from its name (never its bytes)."""

    lms: str                   # the LMS's name (:attr:`Lms.name`)
    user_id: str               # its number for the student (Canvas's user id, Moodle's
    #                            participant number): what a roster row is matched by
    name: str                  # the student's name in the download (a login, a full name)
    attachment_id: str = ""    # the id of the submitted file, where the LMS gives one
    late: bool = False         # the LMS marked the file late in its name
    file: str = ""             # the file's own name (path within the student's files)
    time: str | None = None    # the time the name records (ISO, no zone), where it has one


@dataclasses.dataclass
class GradeTable:
    """The grades to write, one column per assignment: ``headers`` (as CSV cells),
    ``possible`` (each column's points possible, shown) and ``scores[i]`` (roster student
    ``i``'s cells, shown; "" for none)."""

    headers: list[str]
    possible: list[str]
    scores: list[list[str]]


class Lms(abc.ABC):
    """One learning management system: its download's names, roster numbers, grade file and
    feedback file names. Subclass it in a module of its own and register an instance
    (:func:`mlcourse_utils.grading.lms.register`); the ``students`` here are
    :class:`~mlcourse_utils.grading.intake.roster.Student` rows of the roster."""

    #: The name on the command line (``--format``, ``--lms``) and in ``intake.json``.
    name: ClassVar[str]
    #: The name in messages (``"Canvas"``).
    label: ClassVar[str]
    #: What its download numbers a student by, in words (``"user id"``).
    number_name: ClassVar[str]
    #: The roster column (of the LMS's own roster export) with that number (``"ID"``).
    number_column: ClassVar[str]
    #: Its download, as :data:`~mlcourse_utils.grading.intake.collect.LAYOUTS` describes it.
    layout: ClassVar[str]
    #: Its roster export, in words (``"Canvas's gradebook export"``).
    roster_export: ClassVar[str]
    #: The roster columns it brings, in words (``"Canvas' ID, SIS User ID, ..."``).
    roster_columns: ClassVar[str]
    #: Where its bulk upload of the feedback zip is, in words.
    feedback_upload: ClassVar[str]
    #: Whether its download's names mark late files (:attr:`DownloadName.late`).
    marks_late: ClassVar[bool] = False
    #: ``{Student field: headers}`` of the columns its roster export has (lower case, the
    #: preferred first): the roster reader takes them beside the course's own.
    roster_headers: ClassVar[Mapping[str, tuple[str, ...]]] = {}
    #: When a name fits several LMSes, the lowest precedence reads it (the most specific names).
    precedence: ClassVar[int] = 10

    # -------------------------------------------------------------- its download

    @abc.abstractmethod
    def parse(self, parts: Sequence[str]) -> DownloadName | None:
        """Who the download's file at ``parts`` (its path within the download, split at ``/``)
        belongs to, or None when it is not named as this LMS names its files."""

    def student_folder(self, name: str) -> bool:
        """Whether a folder of the download named ``name`` holds one student's files (read
        whole, each file's path parsed from that folder)."""
        return False

    # -------------------------------------------------------------- its roster numbers

    @abc.abstractmethod
    def roster_number(self, student: Any) -> str:
        """The roster student's number in this LMS's downloads ("" when the roster lacks it)."""

    @abc.abstractmethod
    def name_keys(self, roster_name: str) -> set[str]:
        """The keys under which a roster name may appear in the download (compared as
        :meth:`download_name_key` gives them); a roster without numbers is matched by them."""

    @abc.abstractmethod
    def download_name_key(self, name: str) -> str:
        """The key of a student's name as the download writes it (:attr:`DownloadName.name`)."""

    def roster_values(self, values: dict[str, str]) -> dict[str, str]:
        """A roster row's values (``{Student field: cell}``) with this LMS's own writing of
        them undone (Moodle's ``Participant 12345``); by default as they are."""
        return values

    def number_cell(self, number: str) -> str:
        """A roster cell with a student's number, as the LMS's roster export writes it."""
        return f"{self.number_column} {number}"

    # -------------------------------------------------------------- its grade file

    def add_export_arguments(  # noqa: B027 (a hook: by default nothing)
            self, parser: argparse.ArgumentParser) -> None:
        """Add this LMS's own options of ``mlcourse export`` (none by default)."""

    def export_keywords(self, args: argparse.Namespace) -> dict[str, Any]:
        """This LMS's options of :func:`~.export.export`, from the parsed command line."""
        return {}

    def check_options(  # noqa: B027 (a hook: by default nothing)
            self, chosen: bool, options: Mapping[str, Any]) -> None:
        """ValueError when the export's options (``options``: its LMS keywords) are wrong for
        this LMS (``chosen``: it is the one exported to)."""

    def check_columns(  # noqa: B027 (a hook: by default nothing)
            self, assignments: Sequence[str], settings: Mapping[str, Mapping[str, Any]],
            options: Mapping[str, Any]) -> None:
        """ValueError when the grade file's columns of ``assignments`` (``settings``: the
        ``[assignments.NAME]`` tables of ``--config``) would not be the LMS's columns."""

    def column(self, assignment: str, settings: Mapping[str, Any],
               options: Mapping[str, Any]) -> str:
        """The grade file's column of ``assignment``: ``<name>_column`` of its ``settings``,
        else its name."""
        return settings.get(f"{self.name}_column") or assignment

    @abc.abstractmethod
    def grade_file_ids(self, student: Any, options: Mapping[str, Any]) -> tuple[str, ...]:
        """The student's values the LMS's import finds them by (any one, non-blank, is
        enough)."""

    @abc.abstractmethod
    def ids_wanted(self, options: Mapping[str, Any]) -> str:
        """Those ids' columns, in words (``"ID, SIS User ID or SIS Login ID"``)."""

    @abc.abstractmethod
    def write_grades(self, writer: Any, roster: Sequence[Any], table: GradeTable,
                     options: Mapping[str, Any]) -> None:
        """Write the grade file's rows with ``writer`` (a :func:`csv.writer`): a header, then
        one row per roster student."""

    @abc.abstractmethod
    def import_hint(self, options: Mapping[str, Any]) -> str:
        """How to import the file, in one line (printed after ``mlcourse export``)."""

    # -------------------------------------------------------------- its feedback files

    @abc.abstractmethod
    def feedback_file_name(self, entry: Mapping[str, Any], page: str) -> str:
        """The name in the feedback zip of the page named ``page`` of a student whose download
        entry (``intake.json``: ``name``, ``user_id``, ``attachment_id``) is ``entry``."""

    def feedback_name(self, roster_name: str) -> str:
        """A roster name as the download would give it (for students known from the roster)."""
        return roster_name

    def feedback_refusal(self, entry: Mapping[str, Any]) -> str | None:
        """Why a feedback page cannot go into the zip for ``entry`` (None: it can)."""
        return None


def csv_cells(values: Sequence[str]) -> list[str]:
    """Values from a roster as CSV cells (:func:`.text.csv_text`)."""
    return [csv_text(v) for v in values]


def zip_name_part(text: str) -> str:
    """A name as a part of a file name in a zip: no folder separators, no control codes."""
    return re.sub(r"[/\\\x00-\x1f]", "_", clean_text(text, 120)).strip() or "student"


def folded_words(name: str) -> str:
    """A name with its runs of spaces made one, folded (:func:`.text.fold`)."""
    return fold(" ".join(name.split()))
