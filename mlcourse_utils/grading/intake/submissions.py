"""A class's submissions read as data, once: one :class:`Submission` record per student.

``SUBMISSIONS/<student_id>/NAME.ipynb`` or nbgrader's ``SUBMISSIONS/<student_id>/NAME/NAME.ipynb``.
Nothing in SUBMISSIONS is trusted: links are refused (they could point at the solutions or at
another student's work), only regular files of at most :data:`MAX_NOTEBOOK_BYTES` are read, and
folder names become clean, unique student ids, checked once here (:func:`find_submissions`): in
Unicode's composed form (NFC), and refused with a reason when they hold an invisible or control
character or when two of them differ only in case or Unicode form, compared as
:func:`.text.fold` compares names (both are refused: which one is the student's cannot be told).

Each student's notebook (its bytes), the reason it is refused and the time it was handed in
(with who says so, :mod:`.times`) are read here and nowhere else: the record is what the grading
session, the analysis children, the feedback, the gradebook copy, the manual-grading pages and
``timestamps.json`` (which the export reads) are made from, so they cannot disagree when a
folder changes during a run.
"""

from __future__ import annotations

import dataclasses
import errno
import hashlib
import os
import stat
import unicodedata
from pathlib import Path
from typing import Any

from ..text import clean_text, fold
from .times import time_in_submission

#: Largest notebook file accepted from a student.
MAX_NOTEBOOK_BYTES = 16 * 2**20
#: Largest ``timestamp.txt`` read beside a notebook.
MAX_TIMESTAMP_BYTES = 1000
#: The reason of a student without a notebook.
NOTHING_SUBMITTED = "no notebook was submitted"


@dataclasses.dataclass(frozen=True, eq=False)
class Submission:
    """One student's submission, read once (:func:`find_submissions`, :func:`~.collect.collect`).

    ``data`` holds the notebook's bytes (at most :data:`MAX_NOTEBOOK_BYTES`); it is None when
    nothing is graded: ``refused`` then says why ("" when nothing was submitted). The time it was
    handed in comes from the student's ``timestamp.txt`` or the notebook file's time (both
    student-controlled, used by the export only when asked) or from an LMS download's record
    (:data:`~.times.LMS_SOURCE`); ``time_problem`` says why a time found was not kept.
    """

    student: str
    data: bytes | None = None
    refused: str = ""
    time: str | None = None
    time_source: str = "none"
    time_problem: str = ""
    lms: LmsEntry | None = None
    #: a notebook file was handed in but cannot be read as data (too large, not a regular file):
    #: refused, yet submitted as far as the export's ``--missing`` is concerned
    unreadable: bool = False

    @property
    def submitted(self) -> bool:
        """Whether there is a notebook to grade."""
        return self.data is not None

    @property
    def reason(self) -> str:
        """Why the submission earns nothing without being run ("" when it is graded)."""
        if self.data is not None:
            return ""
        return self.refused or NOTHING_SUBMITTED

    def timestamp(self) -> dict[str, Any]:
        """Its entry in ``timestamps.json``: ``{"submitted", "time", "source"}`` and, where they
        apply, ``"problem"`` and Canvas's late mark ``"lms_late"``."""
        entry: dict[str, Any] = {"submitted": self.submitted or self.unreadable, "time": self.time,
                                 "source": self.time_source}
        if self.lms is not None:
            entry["lms_late"] = bool(self.lms.late)
        if self.time_problem:
            entry["problem"] = self.time_problem
        return entry


@dataclasses.dataclass
class LmsEntry:
    """Who a submission came from in the learning management system's download."""

    lms: str                   # "canvas" or "moodle"
    name: str                  # Canvas's login or Moodle's full name, as in the download
    user_id: str               # Canvas's user id or Moodle's participant number
    attachment_id: str = ""    # Canvas: the submitted file's id
    late: bool = False         # Canvas marked the file late
    file: str = ""             # the notebook's name in the download
    time: str | None = None    # the time the LMS's zip records for the file (ISO, no zone)
    roster: bool = False       # matched to a roster row (by the LMS's number, or its name)
    #: why the submission was refused rather than graded under a roster id (the roster lacks
    #: the user; several users would have had one id): the export never matches it to anyone
    problem: str = ""


def refused(student: str, reason: str) -> Submission:
    """A student's submission that is not graded, with the reason (a link, a folder name, ...)."""
    return Submission(student, refused=reason)


def read_submitted_file(path: Path | str, limit: int = MAX_NOTEBOOK_BYTES) -> bytes:
    """The bytes of a submitted file, read as data: no links, no devices or pipes, capped size.

    Raises ValueError with a reason in words.
    """
    try:
        return _read(path, limit)[0]
    except FileNotFoundError as exc:
        raise ValueError(f"the notebook could not be opened ({exc.strerror})") from None


class _LinkError(ValueError):
    """A submitted file that is a symbolic link."""


def _read(path, limit):
    """``(bytes, modification time)`` of a submitted file (see :func:`read_submitted_file`);
    FileNotFoundError when there is none."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except FileNotFoundError:
        raise
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _LinkError("the notebook is a symbolic link, which is not accepted") from None
        raise ValueError(f"the notebook could not be opened ({exc.strerror})") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ValueError("the notebook is not a regular file")
        if info.st_size > limit:
            raise ValueError(f"the notebook is larger than {limit // 2**20} MB")
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:
            raise ValueError(f"the notebook is larger than {limit // 2**20} MB")
        return b"".join(chunks), info.st_mtime
    finally:
        os.close(fd)


def student_id(name: str) -> str:
    """A folder name as a student id: valid UTF-8 in composed form (NFC), printable, at most
    100 characters (escaped or cut names get a short hash to stay unique and traceable)."""
    raw = os.fsencode(name)
    text = clean_text(raw, 100)
    if text != name or len(raw) > 100:  # an escaped or cut name: keep it unique and traceable
        return f"{clean_text(raw, 80)}~{hashlib.sha256(raw).hexdigest()[:8]}"
    normal = unicodedata.normalize("NFC", name)
    if len(normal.encode("utf-8")) > 100:
        return f"{normal[:80]}~{hashlib.sha256(raw).hexdigest()[:8]}"
    return normal


def _invisible(char):
    kind = unicodedata.category(char)
    # (Undecodable bytes, lone surrogates here, are shown escaped by student_id: not invisible.)
    return kind in ("Cc", "Cf", "Co", "Cn", "Zl", "Zp") or (kind == "Zs" and char != " ")


def shown(name: str) -> str:
    """A folder name as people can read it: invisible, control and non-ASCII characters escaped
    when the name has any invisible one or is not in composed form (so look-alikes differ)."""
    if any(_invisible(c) for c in name) or unicodedata.normalize("NFC", name) != name:
        return name.encode("unicode_escape", "backslashreplace").decode("ascii")
    return name


def id_problem(name: str, what: str = "folder name",
               fix: str = "rename the folder") -> str | None:
    """Why a folder name (or ``what``: an LMS's name) cannot be a student id (an invisible
    character, surrounding spaces), or None; the reason ends with ``fix``."""
    bad = [c for c in name if _invisible(c)]
    if bad:
        first = bad[0]
        label = unicodedata.name(first, "a control character")
        return (f"the {what} {shown(name)!r} contains an invisible or control character "
                f"(U+{ord(first):04X} {label}): {fix}")
    if name != name.strip(" "):
        return f"the {what} {name!r} begins or ends with a space: {fix}"
    return None


def find_submissions(name: str, submissions: Path | str, notebook: str) -> dict[str, Submission]:
    """``{student_id: Submission}`` for both layouts, each student's files read once.

    Submissions are data: a student folder, an assignment folder or a notebook that is a
    symbolic link is refused (it could point at the solutions or at another student's work),
    and so is anything that is not a regular file or is larger than :data:`MAX_NOTEBOOK_BYTES`.
    A folder name with an invisible or control character is refused, and so are folder names
    that differ only in case or Unicode form (each with a reason naming all of them); the other
    students are graded. The time of a submission is its ``timestamp.txt`` (beside the
    notebook), else the notebook file's time.
    """
    found, folders = {}, {}
    entries = sorted(os.scandir(submissions), key=lambda e: os.fsencode(e.name))
    names = {e.name for e in entries}
    for entry in entries:
        if entry.is_symlink():
            if os.path.isdir(entry.path):
                student = _unique(_id_for(entry.name, names), found)
                found[student] = refused(
                    student, "the submission folder is a symbolic link, which is not accepted")
                folders[student] = entry.name
            continue
        if not entry.is_dir(follow_symlinks=False):
            continue
        problem = id_problem(entry.name)
        student = _unique(_id_for(entry.name, names, problem), found)
        folders[student] = entry.name
        found[student] = refused(student, problem) if problem else \
            _read_folder(student, Path(entry.path), name, notebook)
    _refuse_lookalikes(found, folders)
    return found


def _listing(folder):
    """``{name: DirEntry}`` of a student's folder (one listing; empty if it cannot be listed)."""
    try:
        with os.scandir(folder) as it:
            return {e.name: e for e in it}
    except OSError:
        return {}


def _read_folder(student, folder, name, notebook):
    """The :class:`Submission` in one student's folder: the notebook (``NAME.ipynb``, in the
    folder or in ``NAME/``, else the only ``.ipynb`` there) and its time, each file read once."""
    top = _listing(folder)
    nested = top.get(name)
    if nested is not None and nested.is_symlink():
        return refused(student, f"the folder {name}/ is a symbolic link, which is not accepted")
    inner = _listing(nested.path) if nested is not None and nested.is_dir() else {}
    chosen = top.get(notebook) or inner.get(notebook)
    if chosen is None:
        others = sorted(n for n in top if n.endswith(".ipynb"))
        listing = top if others else inner
        others = others or sorted(n for n in inner if n.endswith(".ipynb"))
        if len(others) != 1:
            return Submission(student)
        chosen = listing[others[0]]
    if chosen.is_symlink():
        return refused(student, "the notebook is a symbolic link, which is not accepted")
    return read_submission(chosen.path, student)


def read_submission(path: Path | str, student: str = "student") -> Submission:
    """The :class:`Submission` of one notebook file: its bytes and its time (``timestamp.txt``
    beside it, else the file's time), each file opened once; a file that cannot be read as
    data (a link, not a regular file, too large) is refused with the reason, and a missing one
    is nothing submitted."""
    reason = ""
    try:
        data, mtime = _read(path, MAX_NOTEBOOK_BYTES)
    except FileNotFoundError:
        return Submission(student)
    except _LinkError as exc:
        return refused(student, f"the notebook could not be read ({exc})")
    except ValueError as exc:  # handed in, but not as data: refused, its time still recorded
        data, reason = None, f"the notebook could not be read ({exc})"
        try:
            mtime = os.stat(path, follow_symlinks=False).st_mtime
        except OSError:
            mtime = None
    try:
        stamp = _read(Path(path).with_name("timestamp.txt"), MAX_TIMESTAMP_BYTES)[0]
    except (FileNotFoundError, ValueError):
        stamp = None
    when, source, problem = time_in_submission(stamp, mtime)
    return Submission(student, data, reason, when, source, problem, unreadable=data is None)


def _id_for(name, names, problem=None):
    """The id of folder ``name``: :func:`student_id`, escaped where the name is refused or where
    its composed form is another folder's name (so the two stay apart and look different)."""
    student = student_id(name)
    if problem or (student != name and student in names):
        student = shown(name)
        if student != student.strip(" "):
            student = student.replace(" ", "\\x20")
    return student


def _unique(student, found):
    """``student``, made unique among ``found`` (names that clean to one id)."""
    while student in found:
        student += "~"
    return student


def _refuse_lookalikes(found, folders):
    """Refuse every folder whose name equals another's up to case and Unicode form
    (:func:`.text.fold`: NFKC and case folding, so full-width and ligature look-alikes too)."""
    groups = {}
    for student, folder in folders.items():
        groups.setdefault(fold(folder), []).append(student)
    for members in groups.values():
        if len(members) < 2:
            continue
        names = " and ".join(repr(shown(folders[s])) for s in members)
        for student in members:
            found[student] = refused(student, (
                f"the folder names {names} differ only in case or Unicode form, so they may be "
                "one student's or two: rename them to distinct ids (none of them was graded)"))
