"""Text as people see it (grading/text.py): student text made safe, CSV cells a spreadsheet
shows as text, names compared as people read them, counts in words."""

from __future__ import annotations

import re

import pytest

from mlcourse_utils.grading.text import clean_text, csv_text, fold, plural


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


@pytest.mark.parametrize("a,b", [
    ("alice", "ALICE"),                        # case
    ("alice", "\uff41\uff4c\uff49\uff43\uff45"),  # full-width letters
    ("Jos\u00e9", "Jose\u0301"),                # composed and decomposed e-acute
    ("fin", "\ufb01n"),                        # the ligature fi
    ("strasse", "STRA\u00dfE"),                 # sharp s case-folds to ss
    ("M\u00fcller", "M\u00dcLLER"),
    ("bob@uni.example ", "Bob@Uni.Example"),   # outer spaces
])
def test_fold_makes_look_alikes_one_key(a, b):
    assert fold(a) == fold(b)


@pytest.mark.parametrize("a,b", [("alice", "alice2"), ("ann", "anne"), ("M\u00fcller", "Muller"),
                                 ("a b", "ab")])
def test_fold_keeps_different_names_apart(a, b):
    assert fold(a) != fold(b)


@pytest.mark.parametrize("n,noun,nouns,expected", [
    (0, "student", None, "0 students"), (1, "student", None, "1 student"),
    (2, "student", None, "2 students"), (1, "day", None, "1 day"), (3, "day", None, "3 days"),
    (1, "entry", "entries", "1 entry"), (5, "entry", "entries", "5 entries"),
])
def test_plural_says_the_count_with_its_noun(n, noun, nouns, expected):
    assert plural(n, noun, nouns) == expected


def test_counts_are_said_through_plural_everywhere_the_commands_print():
    """No hand-made plural is left in the command line and the grader: a count followed by
    "student(s)", "day(s)", or a noun given its "s" by hand (``{n} row{'s' if n != 1 else ''}``)."""
    from pathlib import Path

    import mlcourse_utils

    package = Path(mlcourse_utils.__file__).parent
    pattern = re.compile(r"\} [a-z]+\(s\)|\} [a-z ]+\{'s' if")
    found = [f"{path.name}:{n}: {line.strip()}"
             for path in [package / "cli.py", *sorted((package / "grading").rglob("*.py"))]
             if path.name != "static_check.py"  # the student's check: a verb, "mle forbid(s)"
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if pattern.search(line)]
    assert found == []
