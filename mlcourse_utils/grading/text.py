"""Text as people see it: a student's text made safe, names compared as people read them, counts
in words.

Clean UTF-8 without control codes (:func:`clean_text`), CSV cells that a spreadsheet shows as
text, never as a formula (:func:`csv_text`), the one form in which names and ids are compared
(:func:`fold`), and a count with its noun (:func:`plural`). At the base of the grading package
(it imports nothing of it), for every module that shows a student's text, writes CSV or prints
a count.
"""

from __future__ import annotations

import math
import re
import unicodedata

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_text(value: object) -> str:
    """A text cell a spreadsheet shows as text: a leading =, +, -, @ or tab is quoted with '."""
    text = str(value)
    return "'" + text if text.startswith(_FORMULA_START) else text


def from_csv_text(text: str) -> str:
    """A cell written by :func:`csv_text` (or by a page or spreadsheet that quotes the same way)
    read back: the ``'`` put before a leading formula character is removed."""
    return text[1:] if text[:1] == "'" and text[1:2] in _FORMULA_START else text


def parse_points(text: object) -> float | None:
    """A number of points typed into a CSV (``2.5`` or ``2,5``); None when it is not a finite
    number."""
    try:
        value = float(str(text).strip().replace(",", "."))
    except ValueError:
        return None
    return value if math.isfinite(value) else None


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def clean_text(value: object, limit: int = 1000) -> str:
    """``value`` as valid UTF-8 text of at most ``limit`` characters, without control codes.

    Every string that comes from a student (messages, warnings, output, folder names) passes
    through here where it enters the grader: lone surrogates and undecodable bytes become
    backslash escapes, control characters other than tab and newline become ``\\xNN``.
    """
    if isinstance(value, bytes):
        text = value[: 4 * limit + 4].decode("utf-8", "backslashreplace")
    else:
        text = value if isinstance(value, str) else str(value)
    cut = len(text) > limit
    text = text[:limit].encode("utf-8", "backslashreplace").decode("utf-8")
    text = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)
    return text + " [...]" if cut else text


def fold(value: str) -> str:
    """The form in which names and ids are compared: Unicode NFKC, case-folded, outer spaces
    stripped, so that look-alikes (``Alice``/``alice``, full-width ``ａｌｉｃｅ``, a ligature
    ``ﬁ``/``fi``, a composed or decomposed ``é``) are one key."""
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", value).casefold()).strip()


def plural(n: int, noun: str, nouns: str | None = None) -> str:
    """``n`` with its noun in the right number: ``plural(1, "student")`` is ``"1 student"``,
    ``plural(2, "student")`` ``"2 students"``; ``nouns`` for an irregular plural
    (``plural(3, "entry", "entries")``)."""
    return f"{n} {noun if n == 1 else (nouns or noun + 's')}"
