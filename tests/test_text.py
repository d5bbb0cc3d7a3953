"""CSV cells a spreadsheet shows as text (grading/text.py)."""

from __future__ import annotations

import pytest

from mlcourse_utils.grading.text import csv_text


@pytest.mark.parametrize("text,expected", [
    ("=1+1", "'=1+1"), ("+3", "'+3"), ("-2", "'-2"), ("@SUM(A1)", "'@SUM(A1)"),
    ("\tx", "'\tx"), ("\rx", "'\rx"), ("alice", "alice"), ("a=b", "a=b"), ("", ""),
])
def test_csv_text_quotes_what_a_spreadsheet_would_run(text, expected):
    assert csv_text(text) == expected


def test_csv_text_takes_any_value():
    assert csv_text(-1.5) == "'-1.5" and csv_text(2) == "2"
