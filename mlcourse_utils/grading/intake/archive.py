"""Reading a zip file from a learning management system as data: bounded, never trusted.

A bulk download (Canvas's ``submissions.zip``, Moodle's ``...-1234.zip``) is read member by
member, without extracting anything by name: a member's name is only parsed (never used as a
path), links and folders are skipped, and every member is read through a size cap, so a zip
bomb, a member that claims a small size but inflates to more, a name with ``..`` or an absolute
path, or a zip with too many members cannot fill the disk, escape a folder or stall the grading.
A member that breaks a limit is kept with a reason (that student's problem, not the class's); a
file that is not a zip, or one with too many members, is a ValueError.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import posixpath
import stat
import zipfile
from collections.abc import Iterator
from pathlib import Path

from ..text import clean_text

#: The largest member read by default: the notebook cap of :mod:`.submissions` (which passes
#: its own cap; this module imports nothing of the grader's but the text cleaner).
MAX_MEMBER_BYTES = 16 * 2**20
#: At most this many members (a class of a few thousand, a few files each).
MAX_MEMBERS = 20_000
#: At most this many bytes, all members inflated together.
MAX_TOTAL_BYTES = 4 * 2**30
#: A member inflating to more than this many times its compressed size is a zip bomb.
MAX_RATIO = 200


@dataclasses.dataclass
class Member:
    """One file of the zip: its name (as written, cleaned), its bytes or why it was refused."""

    name: str
    data: bytes | None
    problem: str = ""
    time: dt.datetime | None = None  # the member's time as the zip records it (no zone)


def safe_parts(name: str) -> list[str] | None:
    """The parts of a member's name, or None when the name could leave a folder (absolute,
    ``..``, a drive letter, a NUL)."""
    name = name.replace("\\", "/")
    if name.startswith("/") or "\x00" in name or (len(name) > 1 and name[1] == ":"):
        return None
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if any(p == ".." for p in parts) or posixpath.isabs(name):
        return None
    return parts


def read_members(path: Path | str, limit: int = MAX_MEMBER_BYTES,
                 max_members: int = MAX_MEMBERS,
                 max_total: int = MAX_TOTAL_BYTES) -> Iterator[Member]:
    """Every regular file of the zip at ``path`` as a :class:`Member` (see the module text).

    ``limit``: the largest member read (larger ones are refused with a reason). Raises
    ValueError when ``path`` is not a zip file or holds more than ``max_members`` entries.
    """
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise ValueError(f"{path} is not a zip file that can be read ({exc})") from None
    with archive:
        infos = archive.infolist()
        if len(infos) > max_members:
            raise ValueError(f"{path} holds {len(infos)} entries, more than the "
                             f"{max_members} accepted")
        total = 0
        for info in infos:
            name = clean_text(info.filename.encode("utf-8", "surrogateescape"), 300)
            if info.is_dir():
                continue
            kind = stat.S_IFMT(info.external_attr >> 16)
            if kind and kind != stat.S_IFREG:
                yield Member(name, None, "the file in the zip is a link or special file, "
                                         "which is not accepted")
                continue
            if safe_parts(info.filename) is None:
                yield Member(name, None, "its name in the zip leads outside the download "
                                         "(absolute or with ..)")
                continue
            if info.file_size > limit:
                yield Member(name, None, f"it is larger than {limit // 2**20} MB")
                continue
            if info.compress_size and info.file_size / info.compress_size > MAX_RATIO:
                yield Member(name, None, "it inflates more than a notebook can (a zip bomb?)")
                continue
            if total + info.file_size > max_total:
                yield Member(name, None, f"the zip inflates to more than {max_total:,} "
                                         "bytes; this file was not read")
                continue
            try:
                with archive.open(info) as fh:
                    data = fh.read(limit + 1)  # the header's size may lie: read one byte more
            except (zipfile.BadZipFile, OSError, RuntimeError, NotImplementedError,
                    EOFError, ValueError) as exc:  # damaged, encrypted or unknown compression
                yield Member(name, None, f"it could not be read from the zip "
                                         f"({clean_text(str(exc), 120)})")
                continue
            if len(data) > limit:
                yield Member(name, None, f"it is larger than {limit // 2**20} MB")
                continue
            total += len(data)
            try:
                when = dt.datetime(*info.date_time)
            except ValueError:
                when = None
            yield Member(name, data, "", when)
