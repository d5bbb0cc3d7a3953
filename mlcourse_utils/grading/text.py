"""Text for spreadsheets: a cell that a spreadsheet shows as text, never as a formula.

At the base of the grading package (it imports nothing of it), for every module that writes CSV.
"""

from __future__ import annotations

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_text(value: object) -> str:
    """A text cell a spreadsheet shows as text: a leading =, +, -, @ or tab is quoted with '."""
    text = str(value)
    return "'" + text if text.startswith(_FORMULA_START) else text
