"""The learning management systems the grader knows, by name: the registry of :class:`Lms`.

One module per LMS (``canvas.py``, ``moodle.py``) subclasses :class:`~.base.Lms`; this registry
holds one instance of each (:data:`LMS_BY_NAME`), and intake, the export and the command line's
``--format``/``--lms`` choices come from it (:func:`get`, :func:`names`, :func:`every`).
``export.py`` writes what goes back to the LMS: grade files and the feedback zip. Adding an LMS:
CONTRIBUTING.md, "Adding an LMS".
"""

from __future__ import annotations

from collections.abc import Collection

from .base import DownloadName, GradeTable, Lms
from .canvas import Canvas
from .moodle import Moodle

#: ``{name: the LMS}``, in the order the command line lists them.
LMS_BY_NAME: dict[str, Lms] = {}


def register(lms: Lms) -> Lms:
    """Make ``lms`` known by its name (:attr:`.base.Lms.name`, lower case); return it."""
    if lms.name != lms.name.lower() or not lms.name.isidentifier():
        raise ValueError(f"an LMS's name is a lower-case word, not {lms.name!r}")
    LMS_BY_NAME[lms.name] = lms
    return lms


def unregister(name: str) -> None:
    """Forget the LMS ``name`` (a test's own LMS, when the test is done)."""
    LMS_BY_NAME.pop(name, None)


def names() -> list[str]:
    """The names of the LMSes known, as ``--format`` and ``--lms`` take them."""
    return list(LMS_BY_NAME)


def every() -> list[Lms]:
    """Every LMS known, in :func:`names`'s order."""
    return list(LMS_BY_NAME.values())


def get(name: str, option: str = "--format") -> Lms:
    """The LMS named ``name``; ValueError naming ``option`` and the names known otherwise."""
    try:
        return LMS_BY_NAME[name]
    except (KeyError, TypeError):
        raise ValueError(f"{option} must be one of {', '.join(LMS_BY_NAME)}, not {name!r}") \
            from None


def labels(word: str = "or", chosen: Collection[str] | None = None) -> str:
    """The labels of the LMSes known (or of those named in ``chosen``) in words:
    ``"Canvas or Moodle"``."""
    shown = [lms.label for lms in LMS_BY_NAME.values() if chosen is None or lms.name in chosen]
    return shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} {word} {shown[-1]}"


def by_precedence() -> list[Lms]:
    """Every LMS, the one whose names are the most specific first (who reads a download's
    name that fits several, :attr:`.base.Lms.precedence`)."""
    return sorted(LMS_BY_NAME.values(), key=lambda lms: lms.precedence)


register(Canvas())
register(Moodle())

__all__ = ["LMS_BY_NAME", "DownloadName", "GradeTable", "Lms", "by_precedence", "every", "get",
           "labels", "names", "register", "unregister"]
