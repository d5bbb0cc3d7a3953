"""A class's submissions read as data: student folders, notebooks, links, sizes and ids.

``SUBMISSIONS/<student_id>/NAME.ipynb`` or nbgrader's ``SUBMISSIONS/<student_id>/NAME/NAME.ipynb``.
Nothing in SUBMISSIONS is trusted: links are refused (they could point at the solutions or at
another student's work), only regular files of at most :data:`MAX_NOTEBOOK_BYTES` are read, and
folder names become clean, unique student ids, checked once here (:func:`find_submissions`): in
Unicode's composed form (NFC), and refused with a reason when they hold an invisible or control
character or when two of them differ only in case or Unicode form (both are refused: which one
is the student's cannot be told).
"""

from __future__ import annotations

import dataclasses
import errno
import hashlib
import os
import re
import stat
import unicodedata
from pathlib import Path
from typing import Any

from .protocol import clean_text

#: Largest notebook file accepted from a student.
MAX_NOTEBOOK_BYTES = 16 * 2**20


@dataclasses.dataclass
class Refused:
    """A submission that is not graded, with the reason (a link, not a regular file, ...)."""

    reason: str


def read_submitted_file(path: Path | str, limit: int = MAX_NOTEBOOK_BYTES) -> bytes:
    """The bytes of a submitted file, read as data: no links, no devices or pipes, capped size.

    Raises ValueError with a reason in words.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ValueError("the notebook is a symbolic link, which is not accepted") from None
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
        return b"".join(chunks)
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


def id_problem(name: str) -> str | None:
    """Why a folder name cannot be a student id (an invisible character, surrounding spaces),
    or None."""
    bad = [c for c in name if _invisible(c)]
    if bad:
        first = bad[0]
        label = unicodedata.name(first, "a control character")
        return (f"the folder name {shown(name)!r} contains an invisible or control character "
                f"(U+{ord(first):04X} {label}): rename the folder")
    if name != name.strip(" "):
        return f"the folder name {name!r} begins or ends with a space: rename the folder"
    return None


def find_submissions(name: str, submissions: Path | str,
                     notebook: str) -> dict[str, Path | Refused | None]:
    """``{student_id: notebook path, None (nothing submitted) or Refused}`` for both layouts.

    Submissions are data: a student folder, an assignment folder or a notebook that is a
    symbolic link is refused (it could point at the solutions or at another student's work),
    and so is anything that is not a regular file. A folder name with an invisible or control
    character is refused, and so are folder names that differ only in case or Unicode form
    (each with a reason naming all of them); the other students are graded.
    """
    found, folders = {}, {}
    entries = sorted(os.scandir(submissions), key=lambda e: os.fsencode(e.name))
    names = {e.name for e in entries}
    for entry in entries:
        if entry.is_symlink():
            if os.path.isdir(entry.path):
                student = _unique(_id_for(entry.name, names), found)
                found[student] = Refused(
                    "the submission folder is a symbolic link, which is not accepted")
                folders[student] = entry.name
            continue
        if not entry.is_dir(follow_symlinks=False):
            continue
        folder = Path(entry.path)
        problem = id_problem(entry.name)
        student = _unique(_id_for(entry.name, names, problem), found)
        folders[student] = entry.name
        if problem:
            found[student] = Refused(problem)
            continue
        nested = folder / name
        if nested.is_symlink():
            found[student] = Refused(
                f"the folder {name}/ is a symbolic link, which is not accepted")
            continue
        candidates = [folder / notebook, nested / notebook]
        path = next((c for c in candidates if c.is_symlink() or c.exists()), None)
        if path is None:
            others = sorted(folder.glob("*.ipynb")) or (
                sorted(nested.glob("*.ipynb")) if nested.is_dir() else [])
            path = others[0] if len(others) == 1 else None
        if path is not None and path.is_symlink():
            path = Refused("the notebook is a symbolic link, which is not accepted")
        found[student] = path
    _refuse_lookalikes(found, folders)
    return found


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
    """Refuse every folder whose name equals another's up to case and Unicode form."""
    groups = {}
    for student, folder in folders.items():
        key = unicodedata.normalize("NFC", folder).casefold()
        groups.setdefault(key, []).append(student)
    for members in groups.values():
        if len(members) < 2:
            continue
        names = " and ".join(repr(shown(folders[s])) for s in members)
        for student in members:
            found[student] = Refused(
                f"the folder names {names} differ only in case or Unicode form, so they may be "
                "one student's or two: rename them to distinct ids (none of them was graded)")


# ------------------------------------------------------------------ downloads of an LMS

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
class LmsEntry:
    """Who a submission came from in the learning management system's download."""

    lms: str                   # "canvas" or "moodle"
    name: str                  # Canvas's login or Moodle's full name, as in the download
    user_id: str               # Canvas's user id or Moodle's participant number
    attachment_id: str = ""    # Canvas: the submitted file's id
    late: bool = False         # Canvas marked the file late
    file: str = ""             # the notebook's name in the download
    time: str | None = None    # the time the LMS's zip records for the file (ISO, no zone)
    roster: bool = False       # matched to a roster row


@dataclasses.dataclass
class Intake:
    """What :func:`collect` found: the submissions by student id, as :func:`find_submissions`
    gives them, and where they came from."""

    layout: str                                  # "folders", "canvas" or "moodle"
    found: dict[str, Path | Refused | None]
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


def _pick(files: list[tuple[str, _Item]], notebook: str) -> tuple[str, _Item] | None | Refused:
    """The student's notebook among their files: the one named as released, else the only
    ``.ipynb`` (an LMS renames resubmissions, ``mle-1.ipynb``); several others: refused."""
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
        return Refused("several notebooks were submitted (" + ", ".join(
            clean_text(f, 80) for f, _ in notebooks[:5]) + f"), none named {notebook}")
    return None


def collect(name: str, submissions: Path | str, notebook: str, workdir: Path | str,
            roster: Any = None) -> Intake:
    """Every student's submission in SUBMISSIONS, in any layout :data:`LAYOUTS` lists.

    ``SUBMISSIONS/<student>/...`` is read in place (:func:`find_submissions`). A Canvas or
    Moodle download (a folder or a zip, found by the LMS's file names) is read as data: each
    student's notebook is copied into ``workdir/<student id>/`` (the download is never
    changed), the student id coming from ``roster`` (a :class:`.roster.Roster`) when it knows
    the student, else from the LMS's name (then listed in ``unmatched``). Files that are no
    student's notebook are listed in ``unmatched`` too. A SUBMISSIONS in which nothing is
    recognised is a ValueError naming the layouts expected.
    """
    from .roster import course_id

    submissions, workdir = Path(submissions), Path(workdir)
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
        problem = id_problem(sid)
        if problem:
            found[sid] = Refused(problem)
            continue
        if isinstance(choice, Refused) or choice is None:
            found[sid] = choice
            continue
        try:
            data = item.read()
        except ValueError as exc:
            found[sid] = Refused(f"{clean_text(item.name, 100)}: {exc}")
            continue
        folder = workdir / sid
        folder.mkdir(parents=True, exist_ok=True)
        (folder / notebook).write_bytes(data)
        found[sid] = folder / notebook
    return Intake(layout, found, entries, unmatched)
