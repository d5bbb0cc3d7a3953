"""Who a file of an LMS download belongs to: Canvas and Moodle names and ids → the course's ids.

A bulk download names each student the LMS's way: Canvas by a login made of the sortable name
(``smithjonesalice``) and its numeric user id (the ``ID`` column of Canvas's gradebook), Moodle by
the full name and a participant number (``Participant 12345`` in its grading worksheet). The
roster (``--roster ROSTER.csv``, :func:`.lms.read_roster`: Canvas's gradebook export, Moodle's
grading worksheet or the course's own list) maps them to the course's student ids, by the
number first and by the name only when the roster has no number for anybody (names are not
unique, so a name that two roster rows share matches neither).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from .lms import Student


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
    e-mail, SIS login, SIS id, ID number or LMS id (what :func:`.lms.match_roster` matches)."""
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
