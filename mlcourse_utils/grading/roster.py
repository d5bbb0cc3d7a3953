"""The class list: its rows (:func:`read_roster`), graded folders matched to them, download names.

The roster (``--roster ROSTER.csv``: Canvas's gradebook export, Moodle's grading worksheet or
the course's own list) is read into :class:`Student` rows; :func:`match_roster` finds the row of
each graded submission by any of its ids.

A bulk download names each student the LMS's way: Canvas by a login made of the sortable name
(``smithjonesalice``) and its numeric user id (the ``ID`` column of Canvas's gradebook), Moodle by
the full name and a participant number (``Participant 12345`` in its grading worksheet). The
roster maps them to the course's student ids, by the
number first and by the name only when the roster has no number for anybody (names are not
unique, so a name that two roster rows share matches neither).
"""

from __future__ import annotations

import csv
import dataclasses
import re
import unicodedata
from collections.abc import Iterable, Sequence
from pathlib import Path


@dataclasses.dataclass
class Student:
    """One row of the roster."""

    name: str
    student_id: str = ""     # the course's id: the submission folder's name
    email: str = ""
    lms_id: str = ""         # Canvas "ID"
    sis_user_id: str = ""
    sis_login_id: str = ""
    section: str = ""
    idnumber: str = ""       # Moodle "ID number"
    participant: str = ""    # Moodle's participant number ("Identifier": "Participant 12345")

    def keys(self) -> list[str]:
        """Every value a submission folder may be named by, lower-cased."""
        values = (self.student_id, self.email, self.sis_login_id, self.sis_user_id,
                  self.idnumber, self.lms_id)
        return [v.strip().lower() for v in values if v and v.strip()]


_ROSTER_COLUMNS = {
    "name": ("name", "student", "full name", "fullname"),
    "student_id": ("student_id", "student id", "username", "login"),
    "email": ("email", "e-mail", "email address", "mail"),
    "lms_id": ("id", "canvas id", "user id", "userid"),
    "sis_user_id": ("sis user id", "sis_user_id"),
    "sis_login_id": ("sis login id", "sis_login_id"),
    "section": ("section", "group"),
    "idnumber": ("id number", "idnumber", "matriculation", "student number"),
    "participant": ("identifier", "participant", "participant id"),
}


def read_roster(path: Path | str) -> list[Student]:
    """The roster CSV (a header row; columns named as Canvas or Moodle name them, or
    ``student_id, name, email, ...``) as a list of :class:`Student`."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as fh:
            rows = list(csv.reader(fh))
    except OSError as exc:
        raise ValueError(f"--roster {path}: cannot be read ({exc.strerror})") from None
    except (UnicodeDecodeError, csv.Error) as exc:
        raise ValueError(f"--roster {path}: not a UTF-8 CSV file ({exc})") from None
    if not rows:
        raise ValueError(f"--roster {path} is empty")
    header = [h.strip().lower() for h in rows[0]]
    index = {}
    for field, names in _ROSTER_COLUMNS.items():
        for name in names:
            if name in header:
                index[field] = header.index(name)
                break
    if not {"student_id", "email", "sis_login_id", "sis_user_id", "idnumber"} & set(index):
        raise ValueError(f"--roster {path}: needs a column student_id, email, SIS Login ID, "
                         f"SIS User ID or ID number to match submissions (found {rows[0]})")
    students = []
    for row in rows[1:]:
        if not any(cell.strip() for cell in row) or (row and "points possible" in row[0].lower()):
            continue
        values = {f: row[i].strip() if i < len(row) else "" for f, i in index.items()}
        if "participant" in values:  # Moodle's worksheet writes "Participant 12345"
            values["participant"] = re.sub(r"(?i)^participant\s*", "", values["participant"])
        students.append(Student(**{"name": values.pop("name", "")}, **values))
    return students


def match_roster(roster: Sequence[Student], graded_ids: Iterable[str],
                 conflicts: dict[int, list[str]] | None = None,
                 ) -> tuple[dict[int, str], list[str]]:
    """``({roster index: graded id}, [graded ids without a roster entry])``.

    A submission matches the roster row whose student id, e-mail, SIS login, SIS id, ID number
    or LMS id equals its folder name (case-insensitive). ValueError when the roster gives one
    key to two students. Two submissions that match one roster row raise ValueError too, unless
    ``conflicts`` is given: then neither is matched, and ``conflicts[roster index]`` lists them
    (that student's problem; every other student is matched).
    """
    lookup = {}
    for i, student in enumerate(roster):
        for key in student.keys():
            if lookup.get(key, i) != i:
                raise ValueError(f"the roster gives {key!r} to two students "
                                 f"({roster[lookup[key]].name!r} and {student.name!r})")
            lookup[key] = i
    matched, unmatched, clashes = {}, [], {}
    for gid in sorted(graded_ids):
        i = lookup.get(gid.strip().lower())
        if i is None:
            unmatched.append(gid)
        elif i in clashes:
            clashes[i].append(gid)
        elif i in matched:
            if conflicts is None:
                raise ValueError(f"two submissions, {matched[i]!r} and {gid!r}, belong to "
                                 f"{roster[i].name or roster[i].email!r}")
            clashes[i] = [matched.pop(i), gid]
        else:
            matched[i] = gid
    if conflicts is not None:
        conflicts.update(clashes)
    return matched, unmatched


def canvas_login(name: str) -> str:
    """The login Canvas puts in a download's file names for the sortable name ``name``
    (``"Smith-Jones, Alice"`` → ``"smithjonesalice"``): letters and digits, lower case."""
    text = unicodedata.normalize("NFKD", name)
    return re.sub(r"[^a-z0-9]", "", "".join(c for c in text if not unicodedata.combining(c))
                  .lower())


def _full_names(name: str) -> set[str]:
    """``"Last, First"`` and ``"First Last"`` forms of a roster name, folded for comparing."""
    name = " ".join(name.split())
    forms = {name}
    if "," in name:
        last, first = (part.strip() for part in name.split(",", 1))
        forms.add(f"{first} {last}")
    return {unicodedata.normalize("NFC", f).casefold() for f in forms if f}


def course_id(student: Student) -> str:
    """The id a roster student's submission is graded under: the course's id, or else the
    e-mail, SIS login, SIS id, ID number or LMS id (what :func:`match_roster` matches)."""
    for value in (student.student_id, student.email, student.sis_login_id, student.sis_user_id,
                  student.idnumber, student.lms_id):
        if value and value.strip():
            return value.strip()
    return ""


class Roster:
    """Look-ups of a roster by the names and numbers of Canvas and Moodle downloads."""

    def __init__(self, students: Sequence[Student]) -> None:
        self.students = list(students)
        self._canvas = {s.lms_id.strip(): s for s in self.students if s.lms_id.strip()}
        self._moodle = {s.participant.strip(): s for s in self.students if s.participant.strip()}
        self._logins, self._names = {}, {}
        for s in self.students:
            for table, keys in ((self._logins, {canvas_login(s.name)}),
                                (self._names, _full_names(s.name))):
                for key in keys - {""}:
                    table.setdefault(key, []).append(s)

    def canvas(self, user_id: str, login: str) -> Student | None:
        """The roster student of a Canvas file (user id, then the login when unambiguous)."""
        if user_id in self._canvas:
            return self._canvas[user_id]
        if self._canvas:  # the roster has Canvas ids: a user it lacks is not in it
            return None
        found = self._logins.get(login.lower(), [])
        return found[0] if len(found) == 1 else None

    def moodle(self, participant: str, full_name: str) -> Student | None:
        """The roster student of a Moodle file (participant number, then the full name when
        unambiguous)."""
        if participant in self._moodle:
            return self._moodle[participant]
        if self._moodle:
            return None
        found = self._names.get(unicodedata.normalize("NFC", " ".join(full_name.split()))
                                .casefold(), [])
        return found[0] if len(found) == 1 else None
