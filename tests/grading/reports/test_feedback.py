"""What grading writes: the feedback pages (grading/reports/feedback.py) and, through
grading/graded/results.py, grades.csv, task_scores.csv and results.json, read back as a spreadsheet,
JSON and HTML would be.

Expected totals are sums of the mle assignment's test points, computed here from its tests.
"""

from __future__ import annotations

import csv
import html.parser
import json
import re

import pytest

from mlcourse_utils.grading.graded.late import Cell
from mlcourse_utils.grading.graded.out import OutFolder
from mlcourse_utils.grading.graded.results import GradeResult
from mlcourse_utils.grading.graded.results import TestResult as Outcome
from mlcourse_utils.grading.reports.feedback import regenerate_feedback, write_feedback

HOSTILE = '<script>alert(1)</script><img src=x onerror=alert(2)>'


def _result(assignment, student, share, **extra):
    return GradeResult(student, assignment.name, [
        Outcome(t.grade_id, t.task, t.points, t.points * share, t.description)
        for t in assignment.tests], **extra)


def test_grade_files_hold_a_row_per_student_and_task(tmp_path, mle_assignment):
    results = {"=cmd": _result(mle_assignment, "=cmd", 0.0),
               "alice": _result(mle_assignment, "alice", 1.0)}
    OutFolder(tmp_path).write_csvs(results, mle_assignment)
    with open(tmp_path / "grades.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    top = sum(t.points for t in mle_assignment.tests)
    assert [r["student_id"] for r in rows] == ["'=cmd", "alice"]
    assert [float(r["score"]) for r in rows] == [0.0, top]
    assert {float(r["max_score"]) for r in rows} == {top}
    with open(tmp_path / "task_scores.csv", newline="", encoding="utf-8") as fh:
        tasks = list(csv.DictReader(fh))
    assert len(tasks) == 2 * len(mle_assignment.tasks)
    alice = {r["task"]: float(r["score"]) for r in tasks if r["student_id"] == "alice"}
    assert alice == {task: sum(t.points for t in mle_assignment.tests if t.task == task)
                     for task in mle_assignment.tasks}


def test_results_json_round_trips_and_a_foreign_file_is_refused(tmp_path, mle_assignment):
    result = _result(mle_assignment, "bob", 0.5, cell_errors=[(3, "NameError")],
                     reasons={mle_assignment.tasks[0]: "not implemented"})
    OutFolder(tmp_path).write_results({"bob": result}, mle_assignment, {"seccomp": True},
                                      {"seconds": 2})
    back = OutFolder(tmp_path).read_results()
    assert back.name == "mle" and back.results == {"bob": result}
    assert back.defences == {"seccomp": True} and back.run == {"seconds": 2}
    (tmp_path / "results.json").write_text(json.dumps({"students": {}}))
    with pytest.raises(ValueError, match="not a results file"):
        OutFolder(tmp_path).read_results()


class _Text(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.text = [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)

    def handle_data(self, data):
        self.text.append(data)


def test_a_feedback_page_shows_student_output_as_text(tmp_path, mle_assignment):
    result = _result(mle_assignment, "eve", 0.0, output=HOSTILE, notes=[HOSTILE],
                     reasons={mle_assignment.tasks[0]: HOSTILE})
    write_feedback(result, mle_assignment, tmp_path / "eve.html")
    page = (tmp_path / "eve.html").read_text()
    parsed = _Text()
    parsed.feed(page)
    assert "script" not in parsed.tags and "img" not in parsed.tags
    assert "".join(parsed.text).count(HOSTILE) == 3  # shown, as text, three times
    assert "Late submission" not in page


def _totals(page):
    """Every "Total: x / y" a page states, and every "a becomes b / y" of a penalty."""
    text = re.sub(r"<[^>]+>", "", page)
    number = r"(\d+(?:\.\d+)?)"
    return (re.findall(rf"Total: {number} / {number}", text),
            re.findall(rf"{number} becomes {number} / {number}", text))


def test_the_late_section_is_part_of_the_page_only_with_a_penalty(tmp_path, mle_assignment):
    """A late student with every autograded point (48) and the manual answers not graded yet
    (counting 0 of their points): the page states one total, 48 less 20 % = 38.4 out of 48
    plus the manual points, at the top and in the late section alike."""
    result = _result(mle_assignment, "bob", 1.0)
    top = mle_assignment.max_score
    overall = top + sum(p for _, p in mle_assignment.manual)
    late = {**Cell(top * 0.8, top, 20.0, 2, "2026-03-04 10:00+00:00", "2026-03-02 23:59+00:00",
                   "<b>times.csv</b>").__dict__, "max_score": top}
    write_feedback(result, mle_assignment, tmp_path / "bob.html", late=late)
    page = (tmp_path / "bob.html").read_text()
    assert page.count("Late submission") == 1 and "2 days after the deadline" in page
    score = f"{round(top * 0.8, 2):g}"
    assert _totals(page) == ([(score, f"{overall:g}")], [(f"{top:g}", score, f"{overall:g}")])
    assert "&lt;b&gt;times.csv&lt;/b&gt;" in page  # escaped like everything else
    write_feedback(result, mle_assignment, tmp_path / "ok.html", late={**late, "penalty": 0.0})
    ok = (tmp_path / "ok.html").read_text()
    assert "Late submission" not in ok and _totals(ok) == ([(f"{top:g}", f"{overall:g}")], [])


def test_the_one_total_adds_manual_points_and_takes_the_penalty_of_all_points_earned(
        tmp_path, mle_assignment):
    """Half the autograded points (24 of 48), one manual answer graded (2 points), the other
    not yet; 10 % late. By hand: (24 + 2) * 0.9 = 23.4 out of 48 plus the manual maximum: the
    top of the page, the late section and the export's number (late.penalised on the same
    points, model.shown) agree, and no other total is stated (the manual section
    gives its own points only)."""
    from mlcourse_utils.grading.graded.late import penalised
    from mlcourse_utils.grading.graded.model import shown, student_total

    result = _result(mle_assignment, "carol", 0.5)
    (first, first_max), *rest = mle_assignment.manual
    manual = {first: (2.0, "a start")}
    overall = mle_assignment.max_score + sum(p for _, p in mle_assignment.manual)
    late = {**Cell(None, None, 10.0, 1, "a", "b", "times.csv").__dict__}
    write_feedback(result, mle_assignment, tmp_path / "carol.html", manual=manual, late=late)
    page = (tmp_path / "carol.html").read_text()
    expected = f"{round((mle_assignment.max_score / 2 + 2) * 0.9, 2):g}"
    earned = f"{mle_assignment.max_score / 2 + 2:g}"
    assert _totals(page) == ([(expected, f"{overall:g}")], [(earned, expected, f"{overall:g}")])
    total = student_total(result, mle_assignment.manual, manual, 10.0)
    assert shown(total.score) == shown(penalised(total.earned, 10.0)) == expected
    assert f"{len(rest)} answer" in page and "not graded yet" in page


def test_regenerated_pages_take_the_late_record_and_name_foreign_files(
        tmp_path, write_graded, mle_assignment):
    graded = write_graded(tmp_path / "graded", {"alice": 1.0, "bob": 0.5})
    (graded / "feedback" / "notes.txt").write_text("a TA's file")
    top = mle_assignment.max_score
    OutFolder(graded).write_late({"bob": Cell(top * 0.45, top * 0.5, 10.0, 1, "a", "b", "t")}, top)
    done = regenerate_feedback(graded)
    assert [p.name for p in done.pages] == ["alice.html", "bob.html"]
    assert done.foreign == ["notes.txt"]
    assert done.pending == ["alice", "bob"]  # mle has answers graded by hand, none graded yet
    assert "Late submission" in (graded / "feedback" / "bob.html").read_text()
    assert "Late submission" not in (graded / "feedback" / "alice.html").read_text()


def test_feedback_page_escapes_and_explains(tmp_path):
    from mlcourse_utils.grading.graded.results import GradeResult, TestResult
    from mlcourse_utils.grading.notebook import Assignment, TestCell
    from mlcourse_utils.grading.reports.feedback import write_feedback


    a = Assignment("demo", "demo.ipynb", ["f"], [TestCell("test_f", "f", 2.0, "secret_code()",
                                                          "f on the example")],
                   [], [("derivation", 3.0)], {"test_f": ""})
    r = GradeResult("<b>eve</b>", "demo")
    r.tests = [TestResult("test_f", "f", 2.0, 0.0, "f on the example",
                          message="f(1) should be 2, got <script>alert(1)</script>")]
    r.reasons = {"f": "timed out after 6 s"}
    r.output = "<img src=x onerror=alert(2)>"
    path = tmp_path / "page.html"
    write_feedback(r, a, path)
    page = path.read_text()
    assert "<script>" not in page and "<img" not in page and "<b>eve" not in page
    assert "&lt;script&gt;" in page and "timed out after 6 s" in page
    assert "0 / 2" in page and "derivation" in page and "secret_code" not in page


@pytest.mark.parametrize("check,expected", [
    (None, ""),
    (("s2", True, ""), ""),
    ((None, False, ""), ""),  # variants off: no id to compare, nothing to say
    (("s7", False, "other"), "The notebook's STUDENT_ID says s7 but it was handed in as s2; "
                             "it was graded with s2's variant"),
    ((None, False, "empty"), "STUDENT_ID is empty: the teaching assistants mark the answers "
                             "graded by hand against the numbers of s2's variant"),
    ((None, False, "missing"), "The notebook has no STUDENT_ID cell: the teaching assistants"),
    ((None, False, "malformed", "STUDENT_ID is 3"), "STUDENT_ID does not hold a course id "
                                                    "(STUDENT_ID is 3): the teaching"),
])
def test_the_feedback_says_when_the_notebook_s_id_is_not_the_one_handed_in(tmp_path, check,
                                                                          expected):
    """One sentence (written here by hand) on the page, above the tasks; never a point."""
    import html

    from mlcourse_utils.grading.graded.results import GradeResult, IdCheck, TestResult
    from mlcourse_utils.grading.notebook import Assignment, TestCell
    from mlcourse_utils.grading.reports.feedback import id_sentence, write_feedback

    a = Assignment("demo", "demo.ipynb", ["f"], [TestCell("test_f", "f", 2.0, "", "f")], [], [],
                   {"test_f": ""})
    r = GradeResult("s2", "demo", [TestResult("test_f", "f", 2.0, 2.0, "f")])
    r.id_check = IdCheck(*check) if check else None
    assert id_sentence(r).startswith(expected)
    write_feedback(r, a, tmp_path / "page.html")
    page = html.unescape((tmp_path / "page.html").read_text())
    assert (expected in page) if expected else "STUDENT_ID" not in page
    assert "2 / 2" in page


def test_a_hostile_id_is_escaped_and_bounded_on_the_feedback_page(tmp_path):
    """A 1 MB typed id and detail made of markup and quotes: shown as text, a few hundred
    characters at most (the page of a clean notebook plus the sentence)."""
    from mlcourse_utils.grading.graded.results import GradeResult, IdCheck, TestResult
    from mlcourse_utils.grading.notebook import Assignment, TestCell
    from mlcourse_utils.grading.reports.feedback import write_feedback

    a = Assignment("demo", "demo.ipynb", ["f"], [TestCell("test_f", "f", 2.0, "", "f")], [], [],
                   {"test_f": ""})
    evil = "<script>alert('\"x')</script>" * 40_000
    pages = {}
    for name, check in (("clean", None), ("other", IdCheck(evil, False, "other")),
                        ("malformed", IdCheck(None, False, "malformed", evil))):
        r = GradeResult("s2", "demo", [TestResult("test_f", "f", 2.0, 2.0, "f")])
        r.id_check = check
        write_feedback(r, a, tmp_path / f"{name}.html")
        pages[name] = (tmp_path / f"{name}.html").read_text()
    for name in ("other", "malformed"):
        assert "<script>" not in pages[name] and "&lt;script&gt;" in pages[name]
        assert len(pages[name]) - len(pages["clean"]) < 2000
