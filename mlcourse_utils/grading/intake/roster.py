"""The class list: its rows (:func:`read_roster`), graded folders matched to them, download names.

The roster (``--roster ROSTER.csv``: Canvas's gradebook export, Moodle's grading worksheet or
the course's own list) is read into :class:`Student` rows; :func:`match_roster` finds the row of
each graded submission by any of its ids.

A bulk download names each student the LMS's way (:mod:`..lms`, one module per LMS): Canvas by
a login made of the sortable name (``smithjonesalice``) and its numeric user id (the ``ID``
column of Canvas's gradebook), Moodle by the full name and a participant number (``Participant
12345`` in its grading worksheet). The roster maps them to the course's student ids, by the
number first and by the name only when the roster has no number for anybody (names are not
unique, so a name that two roster rows share matches neither). Names and ids are compared in one
form (:func:`.text.fold`: Unicode NFKC, case-folded), so look-alikes are one key.

A roster id goes only to the roster student it belongs to: a graded submission that came from
an LMS download (its entry in ``intake.json``) is matched by the LMS's user id where the roster
has those numbers, whatever its id looks like (:func:`match_roster` with ``lms``).
"""

from __future__ import annotations

import csv
import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .. import lms as lmses
from ..text import clean_text, fold, plural


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
        """Every value a submission folder may be named by, folded (:func:`.text.fold`)."""
        values = (self.student_id, self.email, self.sis_login_id, self.sis_user_id,
                  self.idnumber, self.lms_id)
        return [fold(v) for v in values if v and v.strip()]

    def lms_number(self, lms: str) -> str:
        """The student's number in the downloads of the LMS named ``lms``: Canvas's user
        ``ID``, Moodle's participant number ("" when the roster does not give it)."""
        return lmses.get(lms).roster_number(self)

    @property
    def label(self) -> str:
        """How the student is named in messages: the name, else an id."""
        return self.name or self.email or course_id(self)


_ROSTER_COLUMNS = {
    "name": ("name", "student", "full name", "fullname"),
    "student_id": ("student_id", "student id", "username", "login"),
    "email": ("email", "e-mail", "email address", "mail"),
    "sis_user_id": ("sis user id", "sis_user_id"),
    "sis_login_id": ("sis login id", "sis_login_id"),
    "section": ("section", "group"),
    "idnumber": ("id number", "idnumber", "matriculation", "student number"),
}


def _columns() -> dict[str, tuple[str, ...]]:
    """``{Student field: the headers that name it}``: the course's own and every LMS's
    (:attr:`.lms.base.Lms.roster_headers`)."""
    columns = dict(_ROSTER_COLUMNS)
    for lms in lmses.every():
        for field, names in lms.roster_headers.items():
            columns[field] = (*columns.get(field, ()),
                              *(n for n in names if n not in columns.get(field, ())))
    return columns


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
    for field, names in _columns().items():
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
        for lms in lmses.every():  # as the LMS's export writes them ("Participant 12345")
            values = lms.roster_values(values)
        students.append(Student(**{"name": values.pop("name", "")}, **values))
    return students


def _lookup(roster: Sequence[Student]) -> dict[str, int]:
    """``{folded key: roster index}``; ValueError when the roster gives one key to two students."""
    lookup: dict[str, int] = {}
    for i, student in enumerate(roster):
        for key in student.keys():
            if lookup.get(key, i) != i:
                raise ValueError(f"the roster gives {key!r} to two students "
                                 f"({roster[lookup[key]].name!r} and {student.name!r})")
            lookup[key] = i
    return lookup


def _numbers(roster: Sequence[Student], lms: str) -> dict[str, int]:
    """``{LMS number: roster index}`` (empty when the roster has none of ``lms``'s numbers)."""
    table: dict[str, int] = {}
    for i, student in enumerate(roster):
        number = fold(student.lms_number(lms))
        if number and table.setdefault(number, i) != i:
            raise ValueError(f"the roster gives {lmses.get(lms).label} number {number} to two "
                             "students "
                             f"({roster[table[number]].name!r} and {student.name!r})")
    return table


def _by_lms(roster, entry, by_key, numbers):
    """``(roster index or None, why not)`` of a graded submission from an LMS download."""
    lms = entry["lms"]
    label, column = lmses.get(lms).label, lmses.get(lms).number_column
    who = (f"{label} user {clean_text(entry.get('user_id', ''), 40)} "
           f"({clean_text(entry.get('name', ''), 80)!r})")
    if entry.get("problem"):
        return None, f"refused when graded: {clean_text(entry['problem'], 300)}"
    if lms not in numbers:
        numbers[lms] = _numbers(roster, lms)
    if numbers[lms]:
        i = numbers[lms].get(fold(str(entry.get("user_id", ""))))
        return (i, "") if i is not None else (None, f"{who} is not in the roster")
    if entry.get("roster"):  # the roster of the grading gave it this id (by name: no numbers)
        return by_key, ""
    return None, (f"graded under the LMS's name of {who}, without --roster, and this roster has "
                  f"no {label} {column} to tell who that is: grade again "
                  "with --roster")


def match_roster(roster: Sequence[Student], graded_ids: Iterable[str],
                 conflicts: dict[int, list[str]] | None = None,
                 lms: Mapping[str, Mapping[str, Any]] | None = None,
                 refused: dict[str, str] | None = None,
                 ) -> tuple[dict[int, str], list[str]]:
    """``({roster index: graded id}, [graded ids without a roster entry])``.

    A submission matches the roster row whose student id, e-mail, SIS login, SIS id, ID number
    or LMS id equals its folder name (compared folded, :func:`.text.fold`). ValueError when the
    roster gives one key to two students. Two submissions that match one roster row raise
    ValueError too, unless ``conflicts`` is given: then neither is matched, and
    ``conflicts[roster index]`` lists them (that student's problem; every other student is
    matched).

    ``lms`` (``{graded id: its entry of intake.json}``) names the submissions that came from an
    LMS download: such a one is matched by the LMS's user id where the roster has that LMS's
    numbers (Canvas's ID, Moodle's participant number), never by an id that merely looks like a
    roster student's; where the roster has none, by its id only when a roster gave it that id
    when it was graded. One refused when graded (``problem``: not in that roster, a collision),
    whose user the roster lacks, or graded under the LMS's name is not matched, and
    ``refused[graded id]`` says why in words.
    """
    lookup = _lookup(roster)
    numbers: dict[str, dict[str, int]] = {}
    matched, unmatched, clashes = {}, [], {}
    for gid in sorted(graded_ids):
        i = lookup.get(fold(gid))
        entry = (lms or {}).get(gid)
        if entry is not None and entry.get("lms") in lmses.LMS_BY_NAME:
            i, why = _by_lms(roster, entry, i, numbers)
            if why and refused is not None:
                refused[gid] = why
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


def course_id(student: Student) -> str:
    """The id a roster student's submission is graded under: the course's id, or else the
    e-mail, SIS login, SIS id, ID number or LMS id (what :func:`match_roster` matches)."""
    for value in (student.student_id, student.email, student.sis_login_id, student.sis_user_id,
                  student.idnumber, student.lms_id):
        if value and value.strip():
            return value.strip()
    return ""


class Roster:
    """Look-ups of a roster by the names and numbers of an LMS's download (:mod:`..lms`)."""

    def __init__(self, students: Sequence[Student]) -> None:
        self.students = list(students)
        self._numbers: dict[str, dict[str, Student]] = {}
        self._names: dict[str, dict[str, list[Student]]] = {}

    def _tables(self, lms: lmses.Lms) -> tuple[dict[str, Student], dict[str, list[Student]]]:
        """``({folded number: student}, {name key: students})`` for ``lms``, made once."""
        if lms.name not in self._numbers:
            self._numbers[lms.name] = {fold(lms.roster_number(s)): s for s in self.students
                                       if lms.roster_number(s)}
            names: dict[str, list[Student]] = {}
            for s in self.students:
                for key in lms.name_keys(s.name) - {""}:
                    names.setdefault(key, []).append(s)
            self._names[lms.name] = names
        return self._numbers[lms.name], self._names[lms.name]

    def find(self, lms: str, user_id: str, name: str) -> tuple[Student | None, str]:
        """``(the roster student, "")`` of a file of the download of the LMS named ``lms``, by
        its user id (Canvas's ID, Moodle's participant number); by the name (Canvas's login,
        Moodle's full name) only when the roster has no such numbers and one row has that name.
        ``(None, why not)`` otherwise."""
        system = lmses.get(lms)
        numbers, names = self._tables(system)
        if numbers:  # the roster has the LMS's numbers: a user it lacks is not in it
            found = numbers.get(fold(user_id))
            return (found, "") if found is not None else (None, "is not in the roster")
        rows = names.get(system.download_name_key(name), [])
        if len(rows) == 1:
            return rows[0], ""
        what = f"{system.label} {system.number_column}"
        if rows:
            return None, (f"shares the name with {plural(len(rows), 'roster row')}, and the "
                          f"roster has no {what} to tell which")
        return None, (f"is not in the roster (no row has the name, and the roster has no "
                      f"{what} to match by)")
