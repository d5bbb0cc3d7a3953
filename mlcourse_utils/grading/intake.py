"""What `mlcourse grade` reads from SUBMISSIONS, in any layout: student folders, or a Canvas or
Moodle download (a folder or its zip) matched to student ids through the roster.

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

from .submissions import (
    MAX_NOTEBOOK_BYTES,
    LmsEntry,
    Submission,
    find_submissions,
    id_problem,
    read_submitted_file,
)
from .text import clean_text
from .times import LMS_SOURCE

#: Canvas's bulk download: ``login[_late]_userid_attachmentid_filename`` (nbgrader's zip_collect
#: reads the same names).
CANVAS_FILE = re.compile(r"^(?P<login>[^_/]+?)(?P<late>_late)?_(?P<user>\d+)_(?P<attachment>\d+)"
                         r"_(?P<file>[^/]+)$", re.IGNORECASE)
#: Moodle's download: ``Full Name_12345_assignsubmission_file_`` (a folder; without the last
#: ``_`` since Moodle 4.1), or the prefix of a file name when the download is not in folders.
MOODLE_PREFIX = re.compile(r"^(?P<name>[^/]+?)_(?P<participant>\d+)_(?P<plugin>assignsubmission"
                           r"_[a-z]+)(?:_(?P<file>.*))?$")

LAYOUTS = ("SUBMISSIONS/<student>/NAME.ipynb (or <student>/NAME/NAME.ipynb); a Canvas bulk "
           "download (files named login_userid_attachmentid_NAME.ipynb, late ones "
           "login_late_userid_..., or its zip); a Moodle download (folders 'Full Name_12345_"
           "assignsubmission_file_' holding the notebook, file names with that prefix, or its zip)")


@dataclasses.dataclass
class Intake:
    """What :func:`collect` found: the submissions by student id, as :func:`find_submissions`
    gives them, and where they came from."""

    layout: str                                  # "folders", "canvas" or "moodle"
    found: dict[str, Submission]
    lms: dict[str, LmsEntry] = dataclasses.field(default_factory=dict)
    #: files or folders of the download that no student's submission is (in words)
    unmatched: list[str] = dataclasses.field(default_factory=list)


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
        if entry.is_dir(follow_symlinks=False) and MOODLE_PREFIX.match(entry.name):
            for inner in sorted(path.rglob("*")):
                if inner.is_file() or inner.is_symlink():
                    rel = inner.relative_to(submissions).as_posix()
                    items.append(_Item(rel, lambda p=inner: read_submitted_file(p)))
        elif entry.is_dir(follow_symlinks=False) or (entry.is_symlink()
                                                     and os.path.isdir(entry.path)):
            folders.append(path)
        elif entry.name.lower().endswith(".zip") and entry.is_file(follow_symlinks=False):
            items.extend(member_items(path))
        elif CANVAS_FILE.match(entry.name) or MOODLE_PREFIX.match(entry.name):
            items.append(_Item(entry.name, lambda p=path: read_submitted_file(p)))
        else:
            other.append(entry.name)
    return items, folders, other


def _parse(item: _Item) -> tuple[str, str, str, str, bool, str] | None:
    """``(lms, user id, name, attachment id, late, file)`` of a download's file, or None."""
    parts = item.name.split("/")
    if "__MACOSX" in parts or parts[-1].startswith("._"):  # macOS's metadata, not a file
        return None
    for k in range(len(parts)):  # Moodle: the prefix may be a folder or the file's own name
        m = MOODLE_PREFIX.match(parts[k])
        if m:
            rest = "/".join([m["file"] or "", *parts[k + 1:]]).strip("/")
            return "moodle", m["participant"], m["name"], "", False, rest
    m = CANVAS_FILE.match(parts[-1])
    if m:
        return ("canvas", m["user"], m["login"], m["attachment"], bool(m["late"]),
                m["file"])
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
    :class:`Submission`, with the time the LMS recorded, the student id coming from ``roster``
    (a :class:`.roster.Roster`) when it knows the student, else from the LMS's name (then
    listed in ``unmatched``). Files that are no student's notebook are listed in ``unmatched``
    too. A SUBMISSIONS in which nothing is
    recognised is a ValueError naming the layouts expected.
    """
    from .roster import course_id

    submissions = Path(submissions)
    if not submissions.exists():
        raise FileNotFoundError(f"submissions folder {submissions} does not exist")
    items, folders, other = _items(submissions)
    parsed = [(item, _parse(item)) for item in items]
    known = [(item, p) for item, p in parsed if p is not None]
    if not known:
        if folders:
            found = find_submissions(name, submissions, notebook)
            stray = [f"{clean_text(n, 100)} (not a student folder)" for n in other]
            stray += [f"{clean_text(i.name, 100)} (in a zip: not a file of a Canvas or Moodle "
                      "download)" for i in items]
            return Intake("folders", found, {}, stray)
        what = "is empty" if not (items or other) else "holds nothing mlcourse can read"
        raise ValueError(f"SUBMISSIONS {submissions} {what}; expected one of: {LAYOUTS}")
    unmatched = [f"{clean_text(i.name, 100)} (not named as Canvas or Moodle name their "
                 "files)" for i, p in parsed if p is None]
    unmatched += [f"{clean_text(f.name, 100)}/ (a folder beside an LMS download)"
                  for f in folders]
    unmatched += [f"{clean_text(n, 100)} (not named as Canvas or Moodle name their files)"
                  for n in other]
    lmses = {p[0] for _, p in known}
    if len(lmses) > 1:
        raise ValueError(f"SUBMISSIONS {submissions} mixes Canvas and Moodle downloads: grade "
                         "them separately")
    layout = lmses.pop()
    by_user: dict[str, list[tuple[_Item, tuple]]] = {}
    for item, p in known:
        by_user.setdefault(p[1], []).append((item, p))
    found, entries, taken = {}, {}, set()
    for user, files in sorted(by_user.items()):
        _, _, lms_name, _, _, _ = files[0][1]
        student = None
        if roster is not None:
            student = (roster.canvas(user, lms_name) if layout == "canvas"
                       else roster.moodle(user, lms_name))
        sid = course_id(student) if student is not None else clean_text(lms_name, 80).strip()
        sid = sid.replace("/", "_").replace("\\", "_") or f"user_{user}"
        if sid in (".", ".."):
            sid = f"user_{user}"
        if sid.casefold() in taken:  # two LMS users under one name: keep both, apart
            sid = f"{sid}_{user}"
        taken.add(sid.casefold())
        choice = _pick([(p[5], item) for item, p in files], notebook)
        picked = choice if isinstance(choice, tuple) else None
        p = next((p for i, p in files if picked and i is picked[1]), files[0][1])
        item = picked[1] if picked else None
        entries[sid] = LmsEntry(layout, clean_text(lms_name, 200), user, p[3], p[4],
                                clean_text(item.name, 300) if item else "",
                                item.time if item else None, student is not None)
        if roster is not None and student is None:
            unmatched.append(f"{clean_text(files[0][0].name, 100)}: {layout} user {user} "
                             f"({clean_text(lms_name, 80)!r}) is not in the roster; graded as "
                             f"{sid!r}")
        for other_item, _ in files:
            if item is not None and other_item is not item:
                unmatched.append(f"{clean_text(other_item.name, 100)} (another file of {sid}, "
                                 "not the notebook graded)")
        found[sid] = _read_item(sid, entries[sid], choice, item)
    return Intake(layout, found, entries, unmatched)


def _read_item(sid, entry, choice, item):
    """The :class:`Submission` of one student of an LMS download (its time: the LMS's)."""
    when = {"time": entry.time, "time_source": LMS_SOURCE} if entry.time else {}
    problem = id_problem(sid) or (choice if isinstance(choice, str) else None)
    if problem:
        return Submission(sid, refused=problem, lms=entry, **when)
    if item is None:
        return Submission(sid, lms=entry, **when)
    try:
        data = item.read()
    except ValueError as exc:
        return Submission(sid, refused=f"{clean_text(item.name, 100)}: {exc}", lms=entry, **when)
    return Submission(sid, data, lms=entry, **when)
