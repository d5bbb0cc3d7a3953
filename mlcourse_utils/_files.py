"""Writing files whole: a temporary file in the same folder, renamed into place.

A reader (a teaching assistant's browser, an LMS upload, a second grading run) never sees a
half-written file, and an interrupted write leaves the previous file as it was. Files get the
usual permissions (``0666`` less the umask, as ``open`` gives), not the ``0600`` of
:func:`tempfile.mkstemp`. Plain standard library: this module is on the student path too.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def default_mode() -> int:
    """The mode ``open`` gives a new file: ``0o666`` less the process's umask."""
    return 0o666 & ~_umask()


@contextlib.contextmanager
def atomic_open(path: Path | str, mode: str = "w", **kwargs: Any) -> Iterator[IO[Any]]:
    """``open`` for writing ``path`` whole: the data go to a temporary file beside it, which
    replaces ``path`` when the block ends without an error (and is removed otherwise)."""
    if mode not in ("w", "wb"):
        raise ValueError(f"mode must be 'w' or 'wb', not {mode!r}")
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
    try:
        with os.fdopen(fd, mode, **kwargs) as fh:
            yield fh
            fh.flush()
        os.chmod(tmp, default_mode())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_text(path: Path | str, text: str, encoding: str = "utf-8") -> None:
    """Write ``text`` to ``path`` whole (see :func:`atomic_open`)."""
    with atomic_open(path, "w", encoding=encoding, newline="") as fh:
        fh.write(text)


def write_bytes(path: Path | str, data: bytes) -> None:
    """Write ``data`` to ``path`` whole (see :func:`atomic_open`)."""
    with atomic_open(path, "wb") as fh:
        fh.write(data)
