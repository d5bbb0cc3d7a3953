"""The id an LMS download's user is graded under (the roster's, the LMS's name) or why not."""

from __future__ import annotations

import unicodedata
from typing import Any

from .. import lms as lmses
from ..text import clean_text, fold
from .roster import course_id
from .submissions import id_problem, shown


def lms_id(name: str, user: str, layout: str) -> str:
    """The id of an LMS user graded under the LMS's name (no roster): the name, clean, in
    composed form, usable as a file name."""
    sid = unicodedata.normalize("NFC", clean_text(name, 80).strip())
    sid = sid.replace("/", "_").replace("\\", "_")
    return sid if sid not in ("", ".", "..") else f"{layout}-user-{user}"


def free_id(base: str, taken: set[str]) -> str:
    """``base``, made different (after folding) from every key in ``taken``; then taken."""
    while fold(base) in taken:
        base += "~"
    taken.add(fold(base))
    return base


#: ``{LMS user id: [(a file of theirs in the download, who the LMS's name of it says)]}``
ByUser = dict[str, list[tuple[Any, lmses.DownloadName]]]


def wanted_ids(by_user: ByUser, users: list[str], layout: str, roster: Any,
               ) -> tuple[dict[str, str], dict[str, Any], dict[str, str]]:
    """The id each LMS user would be graded under (``wanted``: the roster student's, or without
    a roster the LMS's name), the roster student of each (``students``) and why a user has none
    (``why_not``)."""
    wanted, students, why_not = {}, {}, {}
    for user in users:
        lms_name = by_user[user][0][1].name
        if roster is None:
            wanted[user] = lms_id(lms_name, user, layout)
            continue
        student, why = roster.find(layout, user, lms_name)
        if student is None:
            why_not[user] = why
            continue
        students[user] = student
        sid = course_id(student).replace("/", "_").replace("\\", "_")
        wanted[user] = sid if sid not in ("", ".", "..") else f"{layout}-user-{user}"
    return wanted, students, why_not


def graded_id(intake: Any, by_user: ByUser, user: str, student: Any, wanted: dict[str, str],
              groups: dict[str, list[str]], why_not: dict[str, str], taken: set[str],
              colliding: set[int]) -> tuple[str, str, str]:
    """``(id, problem, reason)``: the id ``user`` is graded under, and when they are not graded,
    the problem said in ``intake.json`` and the reason their submission is refused: not in the
    roster, an id that another user would share (up to case and Unicode form), or an id that
    cannot be one. A refused user's id is free (not in ``taken``, then taken)."""
    layout = intake.layout
    system = lmses.get(layout)
    label, column = system.label, system.number_column

    def who(user):
        return f"{label} user {user} ({clean_text(by_user[user][0][1].name, 80)!r})"

    problem = reason = ""
    if user in why_not:
        sid = free_id(f"not-in-roster-{layout}-{user}", taken)
        intake.not_in_roster[sid] = who(user)
        problem = f"{who(user)} {why_not[user]}"
        reason = (f"not graded: {who(user)} {why_not[user]}, so no grade of theirs can go "
                  f"to anyone else. If they take the course, export the roster from {label} "
                  f"again (or add a row with the {system.number_cell(user)}) and grade "
                  "again.")
    elif len(groups[fold(wanted[user])]) > 1:
        names = " and ".join(who(u) for u in groups[fold(wanted[user])])
        sid = free_id(f"duplicate-id-{layout}-{user}", taken)
        intake.collisions[sid] = names
        if student is not None:
            colliding.add(id(student))
        problem = f"{names} would all have been graded as {wanted[user]!r}"
        fix = (f"they all match the roster's {student.label}: check its {column} column"
               if student is not None else
               f"grade with --roster (the roster exported from {label}, with its {column} "
               "column) so that each is matched by user id")
        reason = (f"not graded: {names} would all be graded as "
                  f"{clean_text(wanted[user], 80)!r} (equal up to case and Unicode form), "
                  f"and which is whose cannot be told; {fix}")
    else:
        sid = wanted[user]
        bad = id_problem(sid, f"{label} name" if student is None else "roster id",
                         "grade with --roster so that the student is matched by user id"
                         if student is None else "correct the roster")
        if bad:  # shown escaped, so that it cannot pass for another id
            sid = free_id(shown(sid), taken)
            problem, reason = bad, f"not graded: {bad}"
    return sid, problem, reason
