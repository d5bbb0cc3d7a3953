"""A class's submissions read as data: student folders, notebooks, links, sizes and ids.

``SUBMISSIONS/<student_id>/NAME.ipynb`` or nbgrader's ``SUBMISSIONS/<student_id>/NAME/NAME.ipynb``.
Nothing in SUBMISSIONS is trusted: links are refused (they could point at the solutions or at
another student's work), only regular files of at most :data:`MAX_NOTEBOOK_BYTES` are read, and
folder names become clean, unique student ids.
"""

from __future__ import annotations

import dataclasses
import errno
import hashlib
import os
import stat
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
    """A folder name as a student id: valid UTF-8, printable, at most 100 characters."""
    raw = os.fsencode(name)
    text = clean_text(raw, 100)
    if text != name or len(raw) > 100:  # an escaped or cut name: keep it unique and traceable
        text = f"{clean_text(raw, 80)}~{hashlib.sha256(raw).hexdigest()[:8]}"
    return text


def find_submissions(name: str, submissions: Path | str,
                     notebook: str) -> dict[str, Path | Refused | None]:
    """``{student_id: notebook path, None (nothing submitted) or Refused}`` for both layouts.

    Submissions are data: a student folder, an assignment folder or a notebook that is a
    symbolic link is refused (it could point at the solutions or at another student's work),
    and so is anything that is not a regular file.
    """
    found = {}
    entries = sorted(os.scandir(submissions), key=lambda e: os.fsencode(e.name))
    for entry in entries:
        if entry.is_symlink():
            if os.path.isdir(entry.path):
                found[student_id(entry.name)] = Refused(
                    "the submission folder is a symbolic link, which is not accepted")
            continue
        if not entry.is_dir(follow_symlinks=False):
            continue
        folder = Path(entry.path)
        student = student_id(entry.name)
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
        while student in found:  # two folder names that clean to the same id
            student += "~"
        found[student] = path
    return found

