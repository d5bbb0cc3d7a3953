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
import stat
import unicodedata
from pathlib import Path

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
