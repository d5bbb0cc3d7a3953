"""Text from students made safe, and CSV cells a spreadsheet shows as text (grading/text.py)."""

from __future__ import annotations

import pytest

from mlcourse_utils.grading.text import clean_text, csv_text


@pytest.mark.parametrize("text,expected", [
    ("=1+1", "'=1+1"), ("+3", "'+3"), ("-2", "'-2"), ("@SUM(A1)", "'@SUM(A1)"),
    ("\tx", "'\tx"), ("\rx", "'\rx"), ("alice", "alice"), ("a=b", "a=b"), ("", ""),
])
def test_csv_text_quotes_what_a_spreadsheet_would_run(text, expected):
    assert csv_text(text) == expected


def test_csv_text_takes_any_value():
    assert csv_text(-1.5) == "'-1.5" and csv_text(2) == "2"


@pytest.mark.parametrize("raw", ["\ud800", "ok \udcff end", b"caf\xe9", b"\xff\xfe\x00\x1b[31m"])
def test_clean_text_always_gives_valid_utf8(raw):
    text = clean_text(raw)
    text.encode("utf-8")  # would raise UnicodeEncodeError for a lone surrogate
    assert "\x00" not in text and "\x1b" not in text
    assert "\\" in text  # what could not be kept is shown as an escape, not dropped silently


def test_clean_text_caps_the_length_and_keeps_lines():
    assert clean_text("a\tb\nc") == "a\tb\nc"
    long = clean_text("x" * 5000, limit=100)
    assert long.startswith("x" * 100) and long.endswith("[...]") and len(long) < 120
