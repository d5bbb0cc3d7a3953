"""What `mlcourse grade` reads from SUBMISSIONS, in any layout: student folders, or a Canvas or
Moodle download (a folder or its zip) matched to student ids through the roster.

Which LMS named a download's files, and who each file is then, the LMS's module says
(:meth:`.lms.base.Lms.parse`, from the registry :mod:`..lms`); nothing here names an LMS.

Student folders are read by :func:`~.submissions.find_submissions`; a download is read here, as
data and bounded (:mod:`.archive` for zips), each student's notebook read once into their
:class:`~.submissions.Submission` with the time the LMS recorded (:func:`collect`). What could
not be matched is listed in words (:attr:`Intake.unmatched`).
"""

from __future__ import annotations

import dataclasses
import os
import re
from pathlib import Path
from typing import Any

from .. import lms as lmses
from ..text import clean_text, fold, plural
from .ids import graded_id, wanted_ids
from .roster import match_roster
from .submissions import (
    MAX_NOTEBOOK_BYTES,
    LmsEntry,
    Submission,
    find_submissions,
    read_submitted_file,
    refused,
)
from .times import LMS_SOURCE

#: How student folders are laid out (the LMSes' downloads follow, :func:`layouts`).
FOLDERS = "SUBMISSIONS/<student>/NAME.ipynb (or <student>/NAME/NAME.ipynb)"


def layouts() -> str:
    """The layouts of SUBMISSIONS that :func:`collect` reads, in words."""
    return "; ".join([FOLDERS, *(lms.layout for lms in lmses.every())])


LAYOUTS = layouts()


@dataclasses.dataclass
class Intake:
    """What :func:`collect` found: the submissions by student id, as :func:`find_submissions`
    gives them, where they came from, and how they met the roster (:meth:`summary`)."""

    layout: str                                  # "folders", or the LMS's name
    found: dict[str, Submission]
    lms: dict[str, LmsEntry] = dataclasses.field(default_factory=dict)
    #: files or folders of the download that no student's submission is (in words)
    unmatched: list[str] = dataclasses.field(default_factory=list)
    #: the roster's size (None: no roster was given)
    roster_size: int | None = None
    #: ids matched to a roster student (by the LMS's user id or name, or the folder's name)
    matched: list[str] = dataclasses.field(default_factory=list)
    #: roster students (their names) without a submission
    without_submission: list[str] = dataclasses.field(default_factory=list)
    #: {id: who, in words} of the submitters the roster lacks (refused)
    not_in_roster: dict[str, str] = dataclasses.field(default_factory=dict)
    #: {id: who, in words} of submitters refused because their ids collide with another's
    collisions: dict[str, str] = dataclasses.field(default_factory=dict)
    #: {id: the notebook taken} where it is not named as released (``mle-1.ipynb``: a
    #: resubmission, as Canvas renames it; any other name)
    renamed: dict[str, str] = dataclasses.field(default_factory=dict)

    def resubmissions(self, notebook: str) -> dict[str, str]:
        """The :attr:`renamed` notebooks named as an LMS names a resubmission
        (``mle-1.ipynb``)."""
        again = re.compile(re.escape(Path(notebook).stem) + r"-[0-9]+\.ipynb", re.IGNORECASE)
        return {s: f for s, f in self.renamed.items() if again.fullmatch(Path(f).name)}

    def summary(self, notebook: str) -> str:
        """One paragraph for the teaching assistant: matched, late, resubmissions taken, roster
        students without a submission, submitters not on the roster (and ids that collide)."""
        system = lmses.LMS_BY_NAME.get(self.layout)
        lms = system.label if system is not None else ""
        number = f"{lms} {system.number_name}" if system is not None else "folder name"
        source = f"{lms} download" if lms else plural(len(self.found), "student folder")
        parts = []
        if self.roster_size is None:
            parts.append(f"{source}, no --roster: "
                         + (f"{plural(len(self.found), 'submitter')}, each under their {lms} "
                            f"name (the export matches them to the roster by {number})"
                            if lms else "each student's id is the folder's name"))
        else:
            parts.append(f"{source}: {len(self.matched)} of "
                         f"{plural(self.roster_size, 'roster student')} matched (by {number})")
        if system is not None and system.marks_late:
            late = sorted(s for s, e in self.lms.items() if e.late)
            parts.append(_count(late, f"submission marked late by {lms}",
                                f"submissions marked late by {lms}"))
        elif system is not None:
            parts.append(f"late: not marked in {lms}'s download (the export decides from the "
                         "times it records and --config)")
        else:
            parts.append("late: decided by the export (--times, --config)")
        if lms:
            again = self.resubmissions(notebook)
            parts.append(_count([f"{s}: {f}" for s, f in again.items()], "resubmission taken",
                                "resubmissions taken"))
            other = {s: f for s, f in self.renamed.items() if s not in again}
            if other:
                parts.append(_count([f"{s}: {f}" for s, f in other.items()],
                                    "notebook taken under another name",
                                    "notebooks taken under another name"))
        if self.roster_size is not None:
            parts.append(_count([repr(n) for n in self.without_submission],
                                "roster student without a submission",
                                "roster students without a submission"))
            refused = _count(list(self.not_in_roster.values()), "submitter not on the roster",
                             "submitters not on the roster")
            if self.not_in_roster:
                refused += (", refused (no grade of theirs goes to anyone else; if they take the "
                            "course, add them to the roster and grade again)")
            parts.append(refused)
        if self.collisions:
            parts.append(_count(list(self.collisions.values()),
                                "submitter refused because ids collide",
                                "submitters refused because their ids collide")
                         + " (see their feedback)")
        return "intake: " + "; ".join(parts) + "."


#: The most names a summary lists in one clause (intake.json has them all).
SUMMARY_NAMES = 10


def _count(names: list[str], noun: str, nouns: str | None = None) -> str:
    """``"2 roster students without a submission (a, b)"``: a count, its noun and the first
    :data:`SUMMARY_NAMES` names."""
    shown = ", ".join(names[:SUMMARY_NAMES])
    if len(names) > SUMMARY_NAMES:
        shown += f" and {len(names) - SUMMARY_NAMES} more"
    return plural(len(names), noun, nouns) + (f" ({shown})" if names else "")


@dataclasses.dataclass
class _Item:
    name: str                  # path within the download ("/" separated)
    read: Any                  # () -> bytes (ValueError with a reason)
    time: str | None = None


def _items(submissions: Path) -> tuple[list[_Item], list[Path], list[str]]:
    """``(files of an LMS download, student folders, other entries)`` of SUBMISSIONS (a folder
    or a zip file): zips are read member by member, bounded (:mod:`.archive`)."""
    from .archive import read_members

    def member_items(zip_path):
        out = []
        for m in read_members(zip_path, limit=MAX_NOTEBOOK_BYTES):
            def read(m=m):
                if m.data is None:
                    raise ValueError(m.problem)
                return m.data
            out.append(_Item(m.name.replace("\\", "/").strip("/"), read,
                             m.time.isoformat() if m.time else None))
        return out

    if submissions.is_file():
        return member_items(submissions), [], []
    items, folders, other = [], [], []
    for entry in sorted(os.scandir(submissions), key=lambda e: os.fsencode(e.name)):
        path = Path(entry.path)
        if entry.is_dir(follow_symlinks=False) and any(
                lms.student_folder(entry.name) for lms in lmses.every()):
            for inner in sorted(path.rglob("*")):
                if inner.is_file() or inner.is_symlink():
                    rel = inner.relative_to(submissions).as_posix()
                    items.append(_Item(rel, lambda p=inner: read_submitted_file(p)))
        elif entry.is_dir(follow_symlinks=False) or (entry.is_symlink()
                                                     and os.path.isdir(entry.path)):
            folders.append(path)
        elif entry.name.lower().endswith(".zip") and entry.is_file(follow_symlinks=False):
            items.extend(member_items(path))
        elif any(lms.parse([entry.name]) for lms in lmses.every()):
            items.append(_Item(entry.name, lambda p=path: read_submitted_file(p)))
        else:
            other.append(entry.name)
    return items, folders, other


def _parse(item: _Item) -> lmses.DownloadName | None:
    """Who a download's file is, as the LMS that named it reads its name, or None."""
    parts = item.name.split("/")
    if "__MACOSX" in parts or parts[-1].startswith("._"):  # macOS's metadata, not a file
        return None
    for lms in lmses.by_precedence():
        found = lms.parse(parts)
        if found is not None:
            return found
    return None


def _pick(files: list[tuple[str, _Item]], notebook: str) -> tuple[str, _Item] | str | None:
    """The student's notebook among their files: the one named as released, else the only
    ``.ipynb`` (an LMS renames resubmissions, ``mle-1.ipynb``); several others: the reason they
    are refused."""
    stem = Path(notebook).stem.lower()
    notebooks = [(f, i) for f, i in files if f.lower().endswith(".ipynb")]
    exact = [(f, i) for f, i in notebooks if Path(f).name.lower() == notebook.lower()]
    if len(exact) == 1:
        return exact[0]
    named = [(f, i) for f, i in notebooks if Path(f).name.lower().startswith(stem)]
    if len(notebooks) == 1:
        return notebooks[0]
    if len(named) == 1:
        return named[0]
    if notebooks:
        return "several notebooks were submitted (" + ", ".join(
            clean_text(f, 80) for f, _ in notebooks[:5]) + f"), none named {notebook}"
    return None


def collect(name: str, submissions: Path | str, notebook: str, roster: Any = None) -> Intake:
    """Every student's submission in SUBMISSIONS, in any layout :data:`LAYOUTS` lists.

    ``SUBMISSIONS/<student>/...`` is read in place (:func:`find_submissions`). A Canvas or
    Moodle download (a folder or a zip, found by the LMS's file names) is read as data (the
    download is never changed): each student's notebook is read once into their
    :class:`Submission`, with the time the LMS recorded. With ``roster`` (a
    :class:`.roster.Roster`) a roster id goes only to the roster student it belongs to, found by
    the LMS's user id (:meth:`.roster.Roster.find`): a submitter the roster lacks is refused
    under an id no roster student has (``not-in-roster-canvas-999``), with what to do; without
    a roster the LMS's name is the id. Submitters whose ids are equal up to case and Unicode
    form (:func:`.text.fold`), or who match one roster student, are all refused, each reason
    naming them all. Student folders meet the roster by their names: a folder the roster lacks
    is refused too. Files that are no student's notebook are listed in ``unmatched``. A
    SUBMISSIONS in which nothing is recognised is a ValueError naming the layouts expected.
    """
    submissions = Path(submissions)
    if not submissions.exists():
        raise FileNotFoundError(f"submissions folder {submissions} does not exist")
    items, folders, other = _items(submissions)
    parsed = [(item, _parse(item)) for item in items]
    known = [(item, p) for item, p in parsed if p is not None]
    size = len(roster.students) if roster is not None else None
    if not known:
        if folders:
            found = find_submissions(name, submissions, notebook)
            stray = [f"{clean_text(n, 100)} (not a student folder)" for n in other]
            stray += [f"{clean_text(i.name, 100)} (in a zip: not a file of a "
                      f"{lmses.labels()} download)" for i in items]
            intake = Intake("folders", found, {}, stray, roster_size=size)
            if roster is not None:
                _folders_meet_roster(intake, roster)
            return intake
        what = "is empty" if not (items or other) else "holds nothing mlcourse can read"
        raise ValueError(f"SUBMISSIONS {submissions} {what}; expected one of: {layouts()}")
    named = f"not named as {lmses.labels()} name their files"
    unmatched = [f"{clean_text(i.name, 100)} ({named})" for i, p in parsed if p is None]
    unmatched += [f"{clean_text(f.name, 100)}/ (a folder beside an LMS download)"
                  for f in folders]
    unmatched += [f"{clean_text(n, 100)} ({named})" for n in other]
    systems = {p.lms for _, p in known}
    if len(systems) > 1:
        raise ValueError(f"SUBMISSIONS {submissions} mixes {lmses.labels('and', systems)} "
                         "downloads: grade them separately")
    by_user: dict[str, list[tuple[_Item, lmses.DownloadName]]] = {}
    for item, p in known:
        by_user.setdefault(p.user_id, []).append((item, p))
    intake = Intake(systems.pop(), {}, {}, unmatched, roster_size=size)
    _users_meet_roster(intake, by_user, notebook, roster)
    return intake


def _users_meet_roster(intake: Intake, by_user, notebook: str, roster) -> None:
    """Fill ``intake`` with one :class:`Submission` per LMS user of a download (see
    :func:`collect`)."""
    layout = intake.layout
    users = sorted(by_user, key=lambda u: (len(u), u))  # user ids are ASCII digits
    wanted, students, why_not = wanted_ids(by_user, users, layout, roster)
    groups: dict[str, list[str]] = {}
    for user, sid in wanted.items():
        groups.setdefault(fold(sid), []).append(user)
    # Roster keys and the ids given are taken: a refused submitter's id is none of them.
    taken = {k for s in roster.students for k in s.keys()} if roster is not None else set()
    taken |= {key for key, members in groups.items() if len(members) == 1}
    handed_in, colliding = set(), set()
    for user in users:
        files = by_user[user]
        lms_name = files[0][1].name
        choice = _pick([(p.file, item) for item, p in files], notebook)
        picked = choice if isinstance(choice, tuple) else None
        p = next((p for i, p in files if picked and i is picked[1]), files[0][1])
        item = picked[1] if picked else None
        student = students.get(user)
        sid, problem, reason = graded_id(intake, by_user, user, student, wanted, groups,
                                          why_not, taken, colliding)
        entry = LmsEntry(layout, clean_text(lms_name, 200), user, p.attachment_id, p.late,
                         clean_text(item.name, 300) if item else "",
                         (p.time or item.time) if item else None,
                         student is not None and not problem, problem)
        intake.lms[sid] = entry
        for other_item, _ in files:
            if item is not None and other_item is not item:
                intake.unmatched.append(f"{clean_text(other_item.name, 100)} (another file of "
                                        f"{sid}, not the notebook graded)")
        submission = _read_item(sid, entry, reason or choice, item)
        intake.found[sid] = submission
        if submission.submitted and Path(picked[0]).name.lower() != notebook.lower():
            intake.renamed[sid] = clean_text(Path(picked[0]).name, 100)
        if entry.roster and (submission.submitted or submission.refused):
            intake.matched.append(sid)
            handed_in.add(id(student))
    if roster is not None:
        intake.without_submission = [s.label for s in roster.students
                                     if id(s) not in handed_in and id(s) not in colliding]


def _folders_meet_roster(intake: Intake, roster) -> None:
    """Student folders against the roster (:func:`collect`): a folder the roster lacks is
    refused, and so are folders that match one roster student."""
    conflicts: dict[int, list[str]] = {}
    matched, unmatched = match_roster(roster.students, intake.found, conflicts)
    for sid in unmatched:
        intake.not_in_roster[sid] = f"folder {sid!r}"
        if not intake.found[sid].refused:
            intake.found[sid] = refused(sid, (
                f"not graded: the folder name {sid!r} is no student id, e-mail or LMS id of the "
                "roster, so no grade of theirs can go to anyone else. Rename the folder to the "
                "student's id (or add them to the roster) and grade again."))
    for i, sids in conflicts.items():
        names = " and ".join(repr(s) for s in sids)
        for sid in sids:
            intake.collisions[sid] = f"folders {names} of {roster.students[i].label}"
            if intake.found[sid].refused:  # (look-alike names: refused already, naming both)
                continue
            intake.found[sid] = refused(sid, (
                f"not graded: the folders {names} all belong to the roster's "
                f"{roster.students[i].label}, and which one is theirs cannot be told: keep one "
                "and grade again"))
    handed_in = {i for i, sid in matched.items()
                 if intake.found[sid].submitted or intake.found[sid].unreadable
                 or intake.found[sid].refused}
    intake.matched = sorted(matched[i] for i in handed_in)
    intake.without_submission = [s.label for i, s in enumerate(roster.students)
                                 if i not in handed_in and i not in conflicts]


def _read_item(sid, entry, choice, item):
    """The :class:`Submission` of one student of an LMS download (its time: the LMS's);
    ``choice`` is the reason it is refused when it is text."""
    when = {"time": entry.time, "time_source": LMS_SOURCE} if entry.time else {}
    problem = choice if isinstance(choice, str) else None
    if problem:
        return Submission(sid, refused=problem, lms=entry, **when)
    if item is None:
        return Submission(sid, lms=entry, **when)
    try:
        data = item.read()
    except ValueError as exc:
        return Submission(sid, refused=f"{clean_text(item.name, 100)}: {exc}", lms=entry, **when)
    return Submission(sid, data, lms=entry, **when)


def lms_entries(data: Any) -> dict[str, dict[str, Any]]:
    """``{graded id: who they were in the LMS's download}`` from what ``grade`` recorded of the
    intake (``OUT/intake.json`` as read by :meth:`.out.OutFolder.read_lms_entries`; empty when
    the folder was graded from student folders)."""
    students = data.get("students") if isinstance(data, dict) else None
    return {str(s): e for s, e in students.items() if isinstance(e, dict)} \
        if isinstance(students, dict) else {}
