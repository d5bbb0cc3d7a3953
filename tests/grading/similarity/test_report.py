"""similarity.csv and similarity.html (grading/similarity/report.py)."""

from __future__ import annotations

import csv

from mlcourse_utils.grading.similarity import report as sr
from mlcourse_utils.grading.similarity.pairs import ALL_TASKS, Match, Report, Side

SETTINGS = {"threshold": 0.6, "common_fraction": 0.5, "min_common": 5, "min_tokens": 20,
            "min_tokens_total": 40, "k": 5, "window": 4}


def _report(matches):
    return Report(name="mle", tasks=["fit", "predict"], students=["a", "b", "c", "d"],
                  matches=matches, unread={}, notes=[], missing_references=[],
                  settings=dict(SETTINGS))


def _match(student, other, task="fit", kind="student", score=0.9, a=None, b=None):
    return Match(student=student, other=other, kind=kind, task=task, score=score, shared=7,
                 matched=42, a=a, b=b)


def test_csv_has_one_row_per_match_and_quotes_formulas(tmp_path):
    report = _report([_match("=HYPERLINK(1)", "b", score=0.876),
                      _match("c", "reference", kind="reference", task="-predict", score=1)])
    sr.write_csv(report, tmp_path / "s.csv")
    with open(tmp_path / "s.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    assert rows == [
        sr.CSV_COLUMNS,
        ["'=HYPERLINK(1)", "b", "fit", "0.88", "7", "42", "student"],
        ["c", "reference", "'-predict", "1.00", "7", "42", "reference"],
    ]


def test_groups_of_three_or_more_linked_students_per_task():
    matches = [_match("a", "b"), _match("b", "c"),          # a-b-c linked through b
               _match("d", "e", task="predict"),             # a pair only: no group
               _match("x", "y", task=ALL_TASKS), _match("y", "z", task=ALL_TASKS),
               _match("a", "reference", kind="reference")]   # the reference links no one
    assert sr._groups(matches) == [("fit", ["a", "b", "c"]), (ALL_TASKS, ["x", "y", "z"])]


def test_page_shows_student_code_as_text_with_regions(tmp_path):
    a = Side(label="a", text="x = 1\n<script>alert(1)</script>\n", lines={2: 8}, coverage=0.5)
    b = Side(label="b", text="y = 2\n", lines={}, coverage=0.25, note="<b>note</b>")
    report = _report([_match("<img src=x>", "b", a=a, b=b)])
    csv_path, html_path = sr.write_report(report, tmp_path / "out")
    assert csv_path == tmp_path / "out" / "similarity.csv" and csv_path.is_file()
    page = html_path.read_text(encoding="utf-8")
    assert "<script>alert(1)</script>" not in page and "<img src=x>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&lt;b&gt;note&lt;/b&gt;" in page
    # line 2 is in region 8, coloured 8 mod COLOURS = 2
    assert f'class="r{8 % sr.COLOURS}"><span class="n">2</span>' in page
    assert "50% of its own code matches" in page and "25% of its own code matches" in page


def test_a_long_answer_is_cut_to_the_lines_shown():
    side = Side(label="a", text="\n".join(f"line {i}" for i in range(sr.MAX_LINES + 10)),
                lines={1: 0}, coverage=1.0)
    lines, cut = sr._lines(side)
    assert cut and len(lines) == sr.MAX_LINES
    assert lines[0] == (1, "line 0", 0) and lines[-1] == (sr.MAX_LINES, f"line {sr.MAX_LINES - 1}",
                                                          None)
    short, cut = sr._lines(Side(label="b", text="a\x00b", lines={}, coverage=0.0))
    assert not cut and short == [(1, "a\\x00b", None)]  # control codes made visible
