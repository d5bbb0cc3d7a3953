"""`mlcourse report`: the class report, on synthetic graded folders and on a class graded for real.

The unit tests write graded folders with the grader's own writers (``OutFolder.write_csvs``,
``write_results``, ``write_feedback``) for a small made-up assignment whose expected statistics
are derived by hand in each test's docstring, or from scipy on the CSVs the test reads itself.
The scenario test (slow) grades a small class built from ``tests/submissions`` with
``mlcourse grade`` (one assignment in two shards joined by ``grade-merge``), loads manual points
with ``grade-import``, writes the report and its anonymous copy with the command line, opens the
page in headless Chromium (the figures load, axe-core finds no serious issue, nothing is fetched)
and compares the numbers behind the figures with counts computed here from the graded CSVs.
"""

from __future__ import annotations

import csv
import datetime as dt
import html
import json
import re
import shutil
import subprocess
import sys
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import markupsafe
import pytest
from scipy import stats
from test_assignments import FORBIDDEN_IN_VARIANTS

import assignment_support as sup
from mlcourse_utils import cli
from mlcourse_utils.grading import notebook
from mlcourse_utils.grading.engine.checking import DELEGATION
from mlcourse_utils.grading.graded.folder import GradedFolderError, read_graded_folder
from mlcourse_utils.grading.graded.out import OutFolder
from mlcourse_utils.grading.graded.reasons import cell_stopped, classify_reason
from mlcourse_utils.grading.graded.results import GradeResult
from mlcourse_utils.grading.graded.results import TestResult as Outcome
from mlcourse_utils.grading.reports.class_report import make_report
from mlcourse_utils.grading.reports.class_stats import build_report, pearson
from mlcourse_utils.grading.reports.feedback import write_feedback

# ----------------------------------------------------------------------------- a toy assignment

#: (grade_id, task, points, description): five checks of three tasks.
CHECKS = [
    ("test_f", "f", 1.0, "f reproduces the worked example"),
    ("test_f_hidden", "f", 2.0, "f divides by N, not N - 1, on random data"),
    ("test_g", "g", 1.0, "g of an empty input is 0"),
    ("test_g_hidden", "g", 1.0, "g agrees on random inputs"),
    ("test_h", "h", 1.0, "h returns a probability between 0 and 1"),
]
WRONG = "f returned 0.25 where 0.2 was expected"
RAISED = "your function raised ValueError: shapes do not match"
STUB = "your function raised NotImplementedError: "


def toy_assignment(name="toy", manual=()):
    tests = [notebook.TestCell(gid, task, points, "", description)
             for gid, task, points, description in CHECKS]
    return notebook.Assignment(name, f"{name}.ipynb", ["f", "g", "h"], tests, [], list(manual), {})


def student_result(student, assignment, outcomes=None, reasons=None, notes=()):
    """A GradeResult: ``outcomes`` maps a check to a failure message ('' or absent: passed)."""
    outcomes = outcomes or {}
    r = GradeResult(student, assignment.name)
    for t in assignment.tests:
        message = outcomes.get(t.grade_id, "")
        failed = t.grade_id in outcomes or t.task in (reasons or {})
        r.tests.append(Outcome(t.grade_id, t.task, t.points, 0.0 if failed else t.points,
                                  t.description, message))
    r.reasons = dict(reasons or {})
    r.notes = list(notes)
    return r


def write_folder(folder, results, assignment=None, times=None, feedback=True):
    """A graded folder as `mlcourse grade` writes it (the grader's writers), without gradebook."""
    assignment = assignment or toy_assignment()
    folder = Path(folder)
    (folder / "feedback").mkdir(parents=True, exist_ok=True)
    OutFolder(folder).write_csvs(results, assignment)
    OutFolder(folder).write_results(results, assignment)
    if feedback:
        for student, r in results.items():
            write_feedback(r, assignment, folder / "feedback" / f"{student}.html")
    times = times if times is not None else {
        s: {"submitted": True, "time": "2026-03-01T10:00:00+00:00", "source": "timestamp.txt"}
        for s in results}
    (folder / "timestamps.json").write_text(json.dumps(times), encoding="utf-8")
    return folder


def ranked_class(assignment=None, copies=3):
    """36 students designed for item analysis: three copies (``s01a``, ``s01b``, ``s01c``) of
    each rank r = 1..12 (12 the strongest). Per rank:

    test_f passes for r >= 5; test_f_hidden for r >= 7 (its failures: odd r raised an error,
    even r a wrong result); test_g for everyone; test_g_hidden for even r; test_h for r = 12.
    """
    assignment = assignment or toy_assignment()
    results = {}
    for r in range(1, 13):
        fails = {}
        if r < 5:
            fails["test_f"] = WRONG
        if r < 7:
            fails["test_f_hidden"] = RAISED if r % 2 else WRONG
        if r % 2:
            fails["test_g_hidden"] = WRONG
        if r != 12:
            fails["test_h"] = WRONG
        for copy in "abc"[:copies]:
            student = f"s{r:02d}{copy}"
            results[student] = student_result(student, assignment, fails)
    return results


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


class _Page(HTMLParser):
    """Tags, attributes, text and the data tables of a page (for structure checks)."""

    def __init__(self):
        super().__init__()
        self.tags, self.text, self.tables = [], [], {}
        self._table = None
        self._row = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append((tag, attrs))
        if tag == "table" and "data-figure" in attrs:
            self._table = self.tables.setdefault(attrs["data-figure"], [])
        elif tag == "tr" and self._table is not None:
            self._row = []
            self._table.append(self._row)
        elif tag == "td" and self._row is not None:
            self._row.append("")

    def handle_endtag(self, tag):
        if tag == "table":
            self._table = self._row = None

    def handle_data(self, data):
        self.text.append(data)
        if self._row is not None and self._row:
            self._row[-1] += data


def parse_page(path):
    page = _Page()
    page.feed(Path(path).read_text(encoding="utf-8"))
    page.tables = {k: [[cell.strip() for cell in row] for row in rows if row]
                   for k, rows in page.tables.items()}
    return page


# ----------------------------------------------------------------------------- statistics


def test_pearson_matches_scipy_and_is_none_when_undefined():
    """Against scipy.stats.pearsonr on the same data; undefined for constants and n < 3."""
    x = [0, 1, 1, 2, 3, 3, 4]
    y = [1, 0, 2, 2, 5, 3, 6]
    # Sums of 7 small products: a few units of 1e-16 relative.
    assert pearson(x, y) == pytest.approx(stats.pearsonr(x, y).statistic, rel=1e-12)
    assert pearson([1, 1, 1], [1, 2, 3]) is None
    assert pearson([1, 2], [2, 1]) is None
    with pytest.raises(ValueError, match="x has 3 values but y has 2"):
        pearson([1, 2, 3], [1, 2])


def test_item_analysis_matches_hand_derivation_and_scipy(tmp_path):
    """Difficulty, discrimination, thirds and flags of the ranked class (see ranked_class).

    By hand: task scores f = [r>=5] + 2[r>=7], g = 1 + [r even], h = [r = 12]. Difficulty is
    the mean over the ranks (each has 3 students) divided by the maximum: f = (2*1 + 6*3)/12/3
    = 20/36 (r = 5, 6 score 1, r >= 7 score 3), g = (6*1 + 6*2)/12/2 = 0.75, h = 1/12.
    Discrimination is compared with scipy's Pearson r of the task column of task_scores.csv
    against grades.csv's total minus that column.
    Thirds (12 students each, ordered by the rest score, ties by id). For g the rest is f + h:
    0 for r = 1..4 (the bottom third; r = 1, 3 lack full marks: 6/12), 1 for r = 5, 6, 3 for
    r = 7..11 and 4 for r = 12; the top third is r = 12 and the last 9 of the 15 with rest 3
    (r = 9, 10, 11), of whom r = 9, 11 lack full marks: 6/12. So the strongest fail as often as
    the weakest. For f the rest is g + h: 1 for odd r, 2 for even r < 12, 3 for r = 12; the
    bottom third is r = 1, 3, 5, 7 (9 of 12 lack full marks: 0.75), the top third r = 12 and
    r = 6, 8, 10 (3 of 12: 0.25): not flagged. h has 3 of 36 full marks (8 % <= 10 %): nearly
    everyone fails.
    """
    folder = write_folder(tmp_path / "toy", ranked_class())
    report = build_report([read_graded_folder(folder, root=tmp_path)])
    tasks = {t.task: t for t in report.assignments[0].tasks}
    assert tasks["f"].difficulty == pytest.approx(20 / 36, rel=1e-12)
    assert tasks["g"].difficulty == pytest.approx(0.75, rel=1e-12)
    assert tasks["h"].difficulty == pytest.approx(1 / 12, rel=1e-12)
    totals = {r["student_id"]: float(r["score"]) for r in read_csv(folder / "grades.csv")}
    for task in "fgh":
        rows = [r for r in read_csv(folder / "task_scores.csv") if r["task"] == task]
        x = [float(r["score"]) for r in rows]
        rest = [totals[r["student_id"]] - float(r["score"]) for r in rows]
        assert tasks[task].discrimination == pytest.approx(stats.pearsonr(x, rest).statistic,
                                                           rel=1e-12)
    assert (tasks["g"].fail_top, tasks["g"].fail_bottom) == (0.5, 0.5)
    assert (tasks["f"].fail_top, tasks["f"].fail_bottom) == (0.25, 0.75)
    assert tasks["g"].flags == ["the strongest fail as often as the weakest"]
    assert tasks["h"].flags == ["nearly everyone fails"]
    assert tasks["f"].flags == []
    assert (tasks["f"].full, tasks["f"].partial, tasks["f"].zero) == (18, 6, 12)


def test_failed_checks_are_counted_in_words(tmp_path):
    """Per check: failures of those who attempted it, split into wrong results and errors.

    By hand from ranked_class (3 students per rank): test_f fails for r = 1..4 (12 wrong);
    test_f_hidden for r = 1..6, odd r raised (9) and even r wrong (9); test_g_hidden for the
    18 of odd r; test_h for 33. The page shows the descriptions; a check's id appears only
    beside the figures. test_g_hidden is failed by the top third as often as by the bottom
    (6 of 12 each, the thirds of test_item_analysis_matches_hand_derivation_and_scipy's g) and
    test_h by 33 of 36 (>= 90 %): both are flagged.
    """
    folder = write_folder(tmp_path / "toy", ranked_class())
    out = tmp_path / "report"
    report = make_report([folder], out, root=tmp_path)
    checks = {c.check.grade_id: c for c in report.assignments[0].checks}
    assert (checks["test_f"].failed, checks["test_f"].wrong, checks["test_f"].raised) == \
        (12, 12, 0)
    assert (checks["test_f_hidden"].wrong, checks["test_f_hidden"].raised) == (9, 9)
    assert checks["test_g_hidden"].failed == 18 and checks["test_h"].failed == 33
    assert all(c.attempted == 36 for c in checks.values())
    assert (checks["test_g_hidden"].fail_top, checks["test_g_hidden"].fail_bottom) == (0.5, 0.5)
    assert checks["test_g_hidden"].flags == ["the strongest fail it as often as the weakest"]
    assert checks["test_h"].flags == ["nearly everyone who attempted it fails"]
    top = report.assignments[0].top_checks(1)[0]
    assert top.check.grade_id == "test_h"
    text = (out / "index.html").read_text(encoding="utf-8")
    for _, _, _, description in CHECKS[:2] + CHECKS[3:]:
        assert html.escape(description) in text
    assert "33 of 36" in text and "18 of 36" in text
    page = parse_page(out / "index.html")
    words = " ".join(page.text)
    in_data = " ".join(cell for rows in page.tables.values() for row in rows for cell in row)
    for gid in ("test_f_hidden", "test_g_hidden", "test_h"):  # ids only beside the figures
        assert words.count(gid) == in_data.count(gid)
    rows = read_csv(out / "tables" / "toy_checks.csv")
    assert {r["check"]: int(r["failed"]) for r in rows} == {
        "test_f": 12, "test_f_hidden": 18, "test_g": 0, "test_g_hidden": 18, "test_h": 33}


# ----------------------------------------------------------------------------- not the answer


def test_reasons_the_grader_writes_are_classified():
    """Each reason text the grader produces (checking.py, submissions.py) maps to its kind."""
    from types import SimpleNamespace

    from mlcourse_utils.grading.engine.checking import sandbox_reason
    from mlcourse_utils.grading.engine.options import GradingOptions
    from mlcourse_utils.grading.protocol import SandboxError

    session = SimpleNamespace(limits=GradingOptions(timeout=6, student_timeout=60,
                                                    memory_mb=2048))
    expected = {
        sandbox_reason(SandboxError("timeout", "timed out"), session): "timeout",
        sandbox_reason(SandboxError("budget", "used up its total grading time"),
                        session): "budget",
        sandbox_reason(SandboxError("memory", "was stopped for exceeding the memory limit of "
                                               "2048 MB"), session): "memory",
        sandbox_reason(SandboxError("died", "was killed by signal 9"), session): "died",
        sandbox_reason(SandboxError("died", "exited (status 3)"), session): "died",
        "no notebook was submitted": "no_submission",
        "the notebook is a symbolic link, which is not accepted": "refused",
        "the notebook could not be read (the notebook is larger than 16 MB)": "refused",
        "the notebook could not be read (Expecting value: line 1 column 1 (char 0))":
            "unreadable",
        DELEGATION: "delegation",
        "internal grader error: KeyError: 'x'": "internal",
        "cell 3 rewrites IPython's input: tampering detected (it has no effect on grading, "
        "which runs outside your notebook)": "tampering",
        "calls scipy.special.expit, a forbidden call for this task": "forbidden",
        "something nobody foresaw": "other",
    }
    for reason, kind in expected.items():
        assert classify_reason(reason) == kind, reason


TIMED_OUT = "timed out after 6 s (the time limit per cell and per test)"


def test_failures_not_about_the_answer_are_listed_by_kind(tmp_path):
    """One student of each kind (by hand: one per category), besides two honest ones.

    A timeout is not among them: ``slow``'s function ran out of time on test_f (a failed
    check, "timed out"; test_f_hidden was not run), ``stalled``'s answer cell of g ran out of
    time while defining it (neither check of g ran: not counted, but the task is lost to a
    timeout). Both are listed apart with where it happened, and counted per task. The stub's
    and a deleted function's checks are not attempted, not failed. The anonymous copy shows
    the counts only.
    """
    a = toy_assignment()
    stopped = cell_stopped("g", 4, TIMED_OUT)
    results = {
        "ok1": student_result("ok1", a),
        "ok2": student_result("ok2", a),
        "nothing": GradeResult.zero("nothing", a, "no notebook was submitted"),
        "slow": student_result("slow", a, {"test_f": TIMED_OUT,
                                           "test_f_hidden": f"not run: an earlier test of f "
                                                            f"{TIMED_OUT}"},
                               reasons={"f": TIMED_OUT}),
        "stalled": student_result("stalled", a, {"test_g": f"not run: {stopped}",
                                                 "test_g_hidden": f"not run: {stopped}"},
                                  reasons={"g": stopped}),
        "stub": student_result("stub", a, {"test_g": STUB, "test_g_hidden": STUB,
                                           "test_h": "your function raised NameError: the "
                                                     "notebook does not define a function 'h'"}),
        "greedy": student_result("greedy", a, {"test_h": "your function raised MemoryError: "
                                               "(memory limit 2048 MB)"}),
        "copier": student_result("copier", a, reasons={"h": DELEGATION}),
        "hacker": student_result("hacker", a, notes=[
            "cell 2 monkeypatches numpy: tampering detected (it has no effect on grading, "
            "which runs outside your notebook)"]),
        "shortcut": student_result("shortcut", a, reasons={
            "g": "uses scipy.special.expit, which is forbidden for this task"}),
    }
    times = {s: {"submitted": s != "nothing", "time": None, "source": "none"} for s in results}
    folder = write_folder(tmp_path / "toy", results, times=times)
    report = make_report([folder], tmp_path / "report", root=tmp_path)
    r = report.assignments[0]
    assert r.failure_counts() == {"no_submission": 1, "memory": 1, "forbidden": 1,
                                  "delegation": 1, "tampering": 1}
    checks = {c.check.grade_id: c for c in r.checks}
    assert (checks["test_f"].timed_out, checks["test_f"].failed, checks["test_f"].attempted) \
        == (1, 1, 9)  # everyone who took part but "nothing"; slow ran out of time on it
    assert checks["test_f_hidden"].not_answer == 1 and checks["test_f_hidden"].failed == 0
    assert checks["test_g"].not_attempted == 1 and checks["test_g"].failed == 0
    assert checks["test_g"].not_answer == 2  # the forbidden call, and stalled's (not run)
    assert checks["test_h"].not_answer == 2  # memory and delegation
    assert checks["test_h"].not_attempted == 1 and checks["test_h"].failed == 0  # no function
    assert len(r.participants) == 9  # everyone but "nothing"
    assert [(x.student, x.task, x.where) for x in r.timeouts] == [
        ("slow", "f", "in the function"), ("stalled", "g", "while its cell defined it")]
    tasks = {t.task: t for t in r.tasks}
    assert (tasks["f"].timed_out, tasks["g"].timed_out, tasks["h"].timed_out) == (1, 1, 0)
    # The task scores of the item analysis count them as lost: f has 8 of 9 full, g 6 of 9
    # (the stub, the forbidden call and stalled lose it).
    assert (tasks["f"].full, tasks["f"].n, tasks["g"].full) == (8, 9, 6)
    text = (tmp_path / "report" / "index.html").read_text(encoding="utf-8")
    assert "feedback/slow.html" in text and "forbidden" in text
    rows = read_csv(tmp_path / "report" / "tables" / "toy_not_the_answer_students.csv")
    assert {(row["student_id"], row["category"]) for row in rows} == {
        ("nothing", "no_submission"), ("greedy", "memory"), ("copier", "delegation"),
        ("hacker", "tampering"), ("shortcut", "forbidden")}
    rows = read_csv(tmp_path / "report" / "tables" / "toy_timeouts.csv")
    assert [(row["student_id"], row["task"], row["where"]) for row in rows] == [
        ("slow", "f", "in the function"), ("stalled", "g", "while its cell defined it")]
    assert {row["task"]: int(row["lost_to_a_timeout"])
            for row in read_csv(tmp_path / "report" / "tables" / "toy_tasks.csv")} == \
        {"f": 1, "g": 1, "h": 0}
    # Neither timeout is offered as a regrade candidate: their rows are not in that list.
    candidates = text.split("rows: regrade candidates", 1)[1].split("</details>", 1)[0]
    assert "feedback/slow.html" not in candidates and "feedback/stalled.html" not in candidates
    make_report([folder], tmp_path / "anonymous", anonymous=True, root=tmp_path)
    assert not (tmp_path / "anonymous" / "tables" / "toy_not_the_answer_students.csv").exists()
    assert not (tmp_path / "anonymous" / "tables" / "toy_timeouts.csv").exists()
    text = (tmp_path / "anonymous" / "index.html").read_text(encoding="utf-8")
    assert "monkeypatches" not in text and "feedback/" not in text


def test_late_penalties_follow_the_export_configuration(tmp_path):
    """Due 2026-03-02 23:59 UTC, 10 % per started day, 30 % at most; ``b`` has an extension.

    By hand: a at 03-03 10:00 is 1 started day late (10 %); b at 03-04 10:00 is within its
    extension to 03-05; c at 03-06 00:00 is 4 started days late (40 %, capped at 30 %); d has
    no time (counted as undated); e at 03-02 12:00 is on time.
    """
    a = toy_assignment()
    results = {s: student_result(s, a) for s in "abcde"}
    stamp = {"a": "2026-03-03T10:00:00+00:00", "b": "2026-03-04T10:00:00+00:00",
             "c": "2026-03-06T00:00:00+00:00", "d": None, "e": "2026-03-02T12:00:00+00:00"}
    times = {s: {"submitted": True, "time": t, "source": "timestamp.txt"} for s, t in stamp.items()}
    folder = write_folder(tmp_path / "toy", results, times=times)
    due = tmp_path / "due.toml"
    due.write_text('[late_penalty]\npercent_per_day = 10\nmax_percent = 30\n\n[assignments.toy]\n'
                   'due = 2026-03-02T23:59:00Z\n[assignments.toy.extensions]\nb = 3\n')
    report = make_report([folder], tmp_path / "report", config_path=due, root=tmp_path)
    late = report.assignments[0].late
    assert late.available and late.undated == 1
    assert [(s, days, pct) for s, _, _, days, pct in late.entries] == [("a", 1, 10.0),
                                                                       ("c", 4, 30.0)]
    assert report.assignments[0].failure_counts() == {"late": 2}
    without = make_report([folder], tmp_path / "plain", root=tmp_path)
    assert not without.assignments[0].late.available
    text = (tmp_path / "plain" / "index.html").read_text(encoding="utf-8")
    assert "no due-date configuration was given" in text


# ----------------------------------------------------------------------------- several assignments


def test_students_below_the_threshold_on_two_assignments(tmp_path):
    """Two assignments of 6 points; threshold 50 %. By hand: ``low`` has 1/6 and 2/6, ``half``
    3/6 (not below) and 0/6, ``gone`` 1/6 and no grade at all (absent from the second),
    ``good`` full marks: only ``low`` and ``gone`` are below on two."""
    a1, a2 = toy_assignment("first"), toy_assignment("second")
    all_fail = {gid: WRONG for gid, *_ in CHECKS}
    r1 = {"low": student_result("low", a1, {g: WRONG for g, *_ in CHECKS[1:]}),   # 1 / 6
          "half": student_result("half", a1, {"test_f_hidden": WRONG, "test_h": WRONG}),
          "gone": student_result("gone", a1, {g: WRONG for g, *_ in CHECKS[1:]}),
          "good": student_result("good", a1)}
    r2 = {"low": student_result("low", a2, dict.fromkeys(
              ["test_f_hidden", "test_g_hidden", "test_h"], WRONG)),               # 2 / 6
          "half": student_result("half", a2, all_fail),
          "good": student_result("good", a2)}
    f1 = write_folder(tmp_path / "first", r1, a1)
    f2 = write_folder(tmp_path / "second", r2, a2)
    report = make_report([f1, f2], tmp_path / "report", root=tmp_path)
    # One division each, the same as here: equal to the last bit.
    assert report.at_risk == {"gone": [1 / 6, None], "low": [1 / 6, 2 / 6]}
    assert report.below_counts == {0: 1, 1: 1, 2: 2}
    rows = read_csv(tmp_path / "report" / "tables" / "at_risk.csv")
    assert [r["student_id"] for r in rows] == ["gone", "low"]
    single = make_report([f1], tmp_path / "single", root=tmp_path)
    assert single.at_risk == {}


def test_anonymous_copy_holds_no_student_id(tmp_path):
    """Every file of the anonymous output is searched for every student id (as bytes).

    The ids are distinctive strings, so a hit can only be a leak; the instructor's copy of the
    same folders must contain them (else the search proves nothing). The ids are also in
    notes, reasons, times, manual points and comments, which the anonymous copy must not show.
    """
    a1, a2 = toy_assignment("first"), toy_assignment("second")
    ids = [f"stu-{k}-q7zx{k * 37}" for k in range(8)]
    r1, r2 = {}, {}
    for k, s in enumerate(ids):
        fails = {g: WRONG for g, *_ in CHECKS[: k % 5]}
        r1[s] = student_result(s, a1, fails, notes=[f"cell 1 of {s}: tampering detected"])
        r2[s] = student_result(s, a2, fails, reasons={"h": f"timed out ({s})"} if k == 3 else {})
    times = {s: {"submitted": True, "time": "2026-03-09T10:00:00+00:00", "source": "file time"}
             for s in ids}
    f1 = write_folder(tmp_path / "first", r1, a1, times=times)
    f2 = write_folder(tmp_path / "second", r2, a2, times=times)
    (f1 / "manual").mkdir()
    with open(f1 / "manual" / "derivation.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["student_id", "grade_id", "points", "comment"])
        for s in ids:
            w.writerow([s, "derivation", "1", f"good, {s}"])
    due = tmp_path / "due.toml"
    due.write_text('[late_penalty]\npercent_per_day = 10\n[assignments.first]\n'
                   'due = 2026-03-02T23:59:00Z\n')
    for anonymous in (False, True):
        out = tmp_path / ("anonymous" if anonymous else "instructor")
        code = cli.main(["report", str(f1), str(f2), "--out", str(out), "--config", str(due)]
                        + (["--anonymous"] if anonymous else []))
        assert code == 0
        found = {s for path in out.rglob("*") if path.is_file()
                 for s in ids if s.encode() in path.read_bytes()}
        if anonymous:
            assert found == set(), f"student ids in the anonymous copy: {sorted(found)}"
            assert sorted(p.name for p in (out / "tables").iterdir()) == sorted(
                f"{n}_{t}.csv" for n in ("first", "second")
                for t in ("checks", "manual", "not_the_answer", "tasks"))
        else:
            assert found == set(ids)
    # An anonymous copy written over an instructor's copy keeps none of its files.
    out = tmp_path / "instructor"
    assert cli.main(["report", str(f1), str(f2), "--out", str(out), "--anonymous"]) == 0
    assert not [p for p in out.rglob("*") if p.is_file()
                for s in ids if s.encode() in p.read_bytes()]


def test_hostile_text_is_shown_as_text_and_the_page_runs_nothing(tmp_path):
    """Ids, reasons and descriptions with markup appear escaped; the page has no script, no
    event handler, no remote reference, and a content security policy that forbids both."""
    evil_id = '"><img src=x onerror=alert(1)><script>alert(2)</script>'
    formula_id = "=HYPERLINK(\"http://evil\")"
    a = toy_assignment()
    a.tests[0].description = "f <b>bold</b> with $x^2$ and \\frac{a}{b} in it"
    results = {evil_id: student_result(evil_id, a, {"test_f": "<script>alert(3)</script>"},
                                       reasons={"g": "timed out <iframe src=//evil>"}),
               formula_id: student_result(formula_id, a, reasons={"h": DELEGATION}),
               "ok": student_result("ok", a)}
    folder = write_folder(tmp_path / "toy", results, a, feedback=False)
    out = tmp_path / "report"
    make_report([folder], out, root=tmp_path)
    text = (out / "index.html").read_text(encoding="utf-8")
    page = parse_page(out / "index.html")
    tags = [t for t, _ in page.tags]
    assert "script" not in tags and "iframe" not in tags and "b" not in tags
    assert not [attrs for _, attrs in page.tags if any(k.startswith("on") for k in attrs)]
    assert all(attrs.get("src", "").startswith("figures/") for t, attrs in page.tags
               if t == "img")
    assert not re.search(r"(src|href)=\"(https?:)?//", text)
    csp = next(attrs["content"] for t, attrs in page.tags
               if t == "meta" and attrs.get("http-equiv") == "Content-Security-Policy")
    assert "default-src 'none'" in csp and "script-src" not in csp
    assert str(markupsafe.escape(evil_id)) in text
    assert "&lt;b&gt;bold&lt;/b&gt;" in text
    rows = read_csv(out / "tables" / "toy_not_the_answer_students.csv")
    assert {r["student_id"] for r in rows} == {"'" + formula_id}
    rows = read_csv(out / "tables" / "toy_timeouts.csv")  # its reason says "timed out"
    assert [(r["student_id"], r["reason"]) for r in rows] == [
        (evil_id, "timed out <iframe src=//evil>")]
    # The figures were drawn (a "$" in a label is not mathtext) and hold no markup either.
    for svg in (out / "figures").glob("*.svg"):
        assert "<script" not in svg.read_text(encoding="utf-8")


def test_ids_other_than_the_one_handed_in_under_are_listed_and_counted(tmp_path):
    """By hand: of five notebooks, one carries another student's id (s2, typed s7), one an
    empty id cell, one a hostile 1 MB id (markup); two are fine. The instructor's copy counts
    them (another student's id: 1; the id cell is empty: 1; not a course id: 1) and lists who
    with the typed id (escaped, cut); the anonymous copy counts only, with no id anywhere.
    No point is lost for an id."""
    from mlcourse_utils.grading.graded.results import IdCheck

    a = toy_assignment()
    evil = "<script>alert(1)</script>" * 40_000
    ids = {"stu-ok-q7zx1": IdCheck("stu-ok-q7zx1", True), "stu-two-q7zx2":
           IdCheck("stu-seven-q7zx7", False, "other"),
           "stu-empty-q7zx3": IdCheck(None, False, "empty", "STUDENT_ID is empty"),
           "stu-evil-q7zx4": IdCheck(None, False, "malformed", evil), "stu-old-q7zx5": None}
    results = {}
    for s, check in ids.items():
        results[s] = student_result(s, a)
        results[s].id_check = check
    folder = write_folder(tmp_path / "toy", results, a)
    data = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    data["students"]["stu-evil-q7zx4"]["id_check"]["typed"] = evil  # (as a forged file would)
    (folder / "results.json").write_text(json.dumps(data), encoding="utf-8")
    report = make_report([folder], tmp_path / "instructor", root=tmp_path)
    (r,) = report.assignments
    assert r.id_counts() == {"empty": 1, "malformed": 1, "other": 1}
    assert all(v == a.max_score for v in r.totals.values())
    text = (tmp_path / "instructor" / "index.html").read_text(encoding="utf-8")
    section = text.split("<h3>Notebooks whose id", 1)[1].split("<h3>", 1)[0]
    plain = html.unescape(re.sub(r"<[^>]+>", " ", section))
    assert "another student's id: 1" in plain and "the id cell is empty: 1" in plain
    assert "stu-two-q7zx2" in plain and "stu-seven-q7zx7" in plain
    assert "<script>" not in text and len(section) < 5000
    rows = read_csv(tmp_path / "instructor" / "tables" / "toy_ids.csv")
    assert {(x["student_id"], x["problem"]) for x in rows} == {
        ("stu-two-q7zx2", "other"), ("stu-empty-q7zx3", "empty"),
        ("stu-evil-q7zx4", "malformed")}
    make_report([folder], tmp_path / "anonymous", anonymous=True, root=tmp_path)
    out = tmp_path / "anonymous"
    text = (out / "index.html").read_text(encoding="utf-8")
    assert "another student&#39;s id: 1" in text or "another student's id: 1" in text
    assert not (out / "tables" / "toy_ids.csv").exists()
    assert not [p for p in out.rglob("*") if p.is_file() and b"q7zx" in p.read_bytes()]


# ----------------------------------------------------------------------------- figures and files


def test_every_figure_is_svg_png_and_csv_with_alt_text(tmp_path):
    """Each <img> has alt text and an SVG beside a PNG and a CSV; the CSV holds the numbers of
    the page's table for that figure; the histogram counts equal a count of grades.csv."""
    folder = write_folder(tmp_path / "toy", ranked_class())
    out = tmp_path / "report"
    make_report([folder], out, root=tmp_path)
    page = parse_page(out / "index.html")
    images = [attrs for tag, attrs in page.tags if tag == "img"]
    assert len(images) == 5  # overview, scores, tasks, items, failures
    for attrs in images:
        assert len(attrs.get("alt", "").strip()) > 40
        stem = (out / attrs["src"]).with_suffix("")
        assert (out / attrs["src"]).read_bytes().lstrip().startswith(b"<?xml")
        assert stem.with_suffix(".png").read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
        rows = [list(r.values()) for r in read_csv(stem.with_suffix(".csv"))]
        assert rows == page.tables[stem.name]
    totals = Counter(float(r["score"]) for r in read_csv(folder / "grades.csv"))
    histogram = {float(r["score_from"]): int(r["students"])
                 for r in read_csv(out / "figures" / "toy_scores.csv")}
    assert histogram == {float(k): totals.get(float(k), 0) for k in range(7)}


# ----------------------------------------------------------------------------- robustness


def test_older_partial_and_merged_folders_are_read(tmp_path):
    """results.json without reasons, notes or cell_errors and with unknown keys; a student
    missing from results.json; a student without task rows; no feedback, no timestamps.json,
    no manual cells. The report is written and says what it could not know."""
    folder = write_folder(tmp_path / "toy", ranked_class(), feedback=False)
    (folder / "timestamps.json").unlink()
    data = json.loads((folder / "results.json").read_text())
    data["defences"] = {"namespaces": True}
    for entry in data["students"].values():
        for key in ("reasons", "notes", "cell_errors", "cell_warnings", "output"):
            entry.pop(key)
        entry["caps"] = {"events": 100}
        for t in entry["tests"]:
            t.pop("warnings")
    del data["students"]["s05a"]
    (folder / "results.json").write_text(json.dumps(data))
    rows = read_csv(folder / "task_scores.csv")
    with open(folder / "task_scores.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(r for r in rows if not (r["student_id"] == "s06a" and r["task"] == "h"))
    graded = read_graded_folder(folder, root=tmp_path)
    assert graded.extra["defences"] == {"namespaces": True}
    assert any("not in results.json" in g for g in graded.gaps)
    assert any("no feedback page" in g for g in graded.gaps)
    assert any("timestamps.json" in g for g in graded.gaps)
    report = make_report([folder], tmp_path / "report", root=tmp_path)
    assert len(report.assignments[0].students) == 36
    checks = {c.check.grade_id: c for c in report.assignments[0].checks}
    assert checks["test_h"].attempted == 35  # s05a's outcomes are unknown
    h = next(t for t in report.assignments[0].tasks if t.task == "h")
    assert h.n == 36  # s06a's h score comes from results.json
    text = (tmp_path / "report" / "index.html").read_text(encoding="utf-8")
    assert "What the graded folders did not say" in text
    assert "no manually graded cell" in text

    only_csv = tmp_path / "csv_only"
    only_csv.mkdir()
    for name in ("grades.csv", "task_scores.csv"):
        shutil.copy(folder / name, only_csv / name)
    report = make_report([only_csv], tmp_path / "report2", root=tmp_path)
    assert report.assignments[0].checks == []
    assert "The failed checks are unknown" in (tmp_path / "report2" / "index.html").read_text()


def test_manual_progress_is_read_from_filled_csvs(tmp_path):
    """manual/derivation.csv with rows for 4 of the 36 students (one blank, one not a number,
    one with a decimal comma): 2 of 36 have points; an untouched CSV: 0 of 36."""
    folder = write_folder(tmp_path / "toy", ranked_class())
    (folder / "manual").mkdir()
    with open(folder / "manual" / "derivation.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["student_id", "grade_id", "points", "comment"])
        for s, p in [("s01a", "2"), ("s02a", "1,5"), ("s03a", " "), ("s04a", "n/a")]:
            w.writerow([s, "derivation", p, ""])
    with open(folder / "manual" / "figure.csv", "w", newline="") as fh:
        fh.write("student_id,grade_id,points,comment\ns01a,figure,,\n")
    graded = read_graded_folder(folder, root=tmp_path)
    assert [(m.grade_id, m.graded, m.total) for m in graded.manual] == [
        ("derivation", 2, 36), ("figure", 0, 36)]


def _missing(p):
    return p / "missing"


def _empty(p):
    (p / "empty").mkdir()
    return p / "empty"


def _bad_csv(p):
    (p / "bad").mkdir()
    (p / "bad" / "task_scores.csv").write_text("a,b\n1,2\n")
    return p / "bad"


@pytest.mark.parametrize("make, fragment", [
    (_missing, "does not exist"),
    (_empty, "holds no grades.csv, task_scores.csv or results.json"),
    (_bad_csv, "task_scores.csv lacks the column(s) assignment, max_score, score, student_id, "
               "task"),
])
def test_a_bad_folder_is_one_line_and_exit_status_2(tmp_path, capsys, make, fragment):
    """No traceback: one line on stderr naming the folder and what is missing."""
    folder = make(tmp_path)
    code = cli.main(["report", str(folder), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("mlcourse report: ") and fragment in err
    assert "Traceback" not in err
    assert not (tmp_path / "out" / "index.html").exists()


def test_two_folders_of_one_assignment_ask_for_grade_merge(tmp_path, capsys):
    f1 = write_folder(tmp_path / "a", ranked_class())
    f2 = write_folder(tmp_path / "b", ranked_class())
    assert cli.main(["report", str(f1), str(f2), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "grade-merge" in err and err.count("\n") == 1


def test_report_command_writes_the_page_without_a_traceback_in_a_subprocess(tmp_path):
    """The console script, as an instructor runs it: exit 0, the page and a summary line."""
    folder = write_folder(tmp_path / "toy", ranked_class())
    proc = subprocess.run([str(Path(sys.executable).with_name("mlcourse")), "report",
                           str(folder), "--out", str(tmp_path / "out")],
                          capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "class report on 1 assignment and 36 students" in proc.stdout
    assert (tmp_path / "out" / "index.html").is_file()
    with pytest.raises(GradedFolderError, match="does not exist"):
        read_graded_folder(tmp_path / "nowhere")


# ----------------------------------------------------------------------------- a real class

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
AXE_JS = sup.ROOT / ".tools" / "node_modules" / "axe-core" / "axe.min.js"
SERIOUS = {"serious", "critical"}
P = "id-"  # every student id of the real class starts with it: a leak is easy to find


def _grade_class(tmp_path):
    """mle (two shards, merged) and bayes: the solution, the release, every wrong answer of
    tests/submissions, a timeout in a function and one in an answer cell, a memory hog, an
    unreadable and a missing notebook."""
    graded = {}
    for name in ("mle", "bayes"):
        v = sup.variants(name)
        solution = sup.solution_answers(name)
        subs = tmp_path / "subs" / name
        tasks = list(solution)

        def add(student, subs=subs, name=name, **kw):
            sup.write_submission(subs, P + student, name, **kw)

        add("solution", nb=sup.make_submission(name, solution))
        add("release", nb=sup.release_notebook(name))
        for task, wrongs in v.WRONG.items():
            for k, (src, _) in enumerate(wrongs):
                add(f"wrong_{task}_{k}", nb=sup.make_submission(name, {**solution, task: src}))
        add("invalid_json", raw=b'{"cells": [ not json')
        (subs / f"{P}missing_notebook").mkdir(parents=True)
        if name == "mle":
            loop = f"def {tasks[0]}(*a, **k):\n    while True:\n        pass\n"
            add("timeout_task", nb=sup.make_submission(name, {**solution, tasks[0]: loop}))
            stall = f"{solution[tasks[2]]}\nwhile True:  # exploring, never ends\n    pass\n"
            add("timeout_cell", nb=sup.make_submission(name, {**solution, tasks[2]: stall}))
            add("memory_task", nb=sup.make_submission(name, {
                **solution, tasks[1]: f"import numpy as np\ndef {tasks[1]}(*a, **k):\n"
                                      "    return np.ones(50 * 2**30)\n"}))
            shards = []
            for k in (1, 2):
                out = tmp_path / "shards" / f"mle{k}"
                proc = sup.grade(name, subs, out, "--jobs", "2", "--timeout", "6",
                                 "--memory", "2048", "--shard", f"{k}/2")
                assert proc.returncode == 0, proc.stderr[-2000:]
                shards.append(out)
            out = tmp_path / "graded" / name
            proc = subprocess.run([sup.MLCOURSE, "grade-merge", *map(str, shards), "--out",
                                   str(out)], capture_output=True, text=True, cwd=sup.ROOT)
            assert proc.returncode == 0, proc.stderr[-2000:]
        else:
            out = tmp_path / "graded" / name
            proc = sup.grade(name, subs, out, "--jobs", "2", "--timeout", "6", "--memory", "2048")
            assert proc.returncode == 0, proc.stderr[-2000:]
        graded[name] = out
    return graded


def _browser_measure(index):
    """Open the report in Chromium: images, remote requests, data tables, axe violations."""
    from mlcourse_utils.book.chromium import Browser

    with Browser() as browser:
        page = browser.open(index.as_uri(), width=1200, height=1600)
        seen = page.evaluate("""(() => ({
            lang: document.documentElement.lang,
            css: getComputedStyle(document.body).maxWidth,
            images: Array.from(document.images).map(i => ({src: i.getAttribute('src'),
                complete: i.complete, width: i.naturalWidth, alt: i.alt})),
            tables: Object.fromEntries(Array.from(document.querySelectorAll('table[data-figure]'))
                .map(t => [t.dataset.figure, Array.from(t.tBodies[0].rows)
                    .map(r => Array.from(r.cells).map(c => c.textContent))]))
        }))()""")
        seen["remote"] = page.remote_requests()
        if AXE_JS.is_file():
            page.evaluate(AXE_JS.read_text(encoding="utf-8") + ";0")
            seen["axe"] = page.evaluate(
                "axe.run(document, {resultTypes: ['violations']}).then(r => r.violations.map("
                "v => ({id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.length})))",
                timeout=120)
    return seen


@pytest.mark.slow
@pytest.mark.xdist_group("class-report")
@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (apt-get install -y "
                    "chromium); .ci/run installs it")
def test_report_on_a_class_graded_from_tests_submissions(tmp_path):
    """The report of a class graded for real, checked in a browser against the graded CSVs.

    Expected from tests/submissions: in mle every task has one wrong answer that reaches its
    checks (mvn_mle's second uses numpy.cov, forbidden there, and is counted as "forbidden"), so
    no check fails for more than one student and the top failure is a task with a wrong answer;
    in bayes beta_credible_interval has four wrong answers scoring 0.
    Late: mle is due 30 hours before the notebooks were written (2 started days, 20 %) except
    for ``solution`` (an extension of 3 days) and ``missing_notebook`` (nothing submitted).
    Manual: 2 answers of one of mle's manual cells are given points with grade-import.
    """
    graded = _grade_class(tmp_path)
    mle, bayes = graded["mle"], graded["bayes"]
    manual_cell = sorted((mle / "manual").glob("*.csv"))[0]
    filled = tmp_path / "filled.csv"
    filled.write_text(f"student_id,grade_id,points,comment\n{P}solution,{manual_cell.stem},1,ok\n"
                      f"{P}release,{manual_cell.stem},0,empty\n")
    proc = subprocess.run([sup.MLCOURSE, "grade-import", str(mle), str(filled)],
                          capture_output=True, text=True, cwd=sup.ROOT)
    assert proc.returncode == 0, proc.stderr
    written = min(dt.datetime.fromisoformat(t["time"]) for t in json.loads(
        (mle / "timestamps.json").read_text()).values() if t["time"])
    due = tmp_path / "due.toml"
    due.write_text("[late_penalty]\npercent_per_day = 10\n\n[assignments.mle]\n"
                   f"due = {(written - dt.timedelta(hours=30)).isoformat()}\n"
                   f"[assignments.mle.extensions]\n{P}solution = 3\n")
    out, anonymous = tmp_path / "report", tmp_path / "anonymous"
    for target, extra in ((out, []), (anonymous, ["--anonymous"])):
        proc = subprocess.run([sup.MLCOURSE, "report", str(mle), str(bayes), "--out",
                               str(target), "--config", str(due), *extra],
                              capture_output=True, text=True, cwd=sup.ROOT)
        assert proc.returncode == 0, proc.stderr

    # Counts computed here from the graded CSVs.
    grades = {n: {r["student_id"]: float(r["score"]) for r in read_csv(f / "grades.csv")}
              for n, f in graded.items()}
    maxima = {n: float(read_csv(f / "grades.csv")[0]["max_score"]) for n, f in graded.items()}
    absent = {P + "invalid_json", P + "missing_notebook"}
    task_counts = {}
    for n, f in graded.items():
        for r in read_csv(f / "task_scores.csv"):
            if r["student_id"] not in absent:
                task_counts.setdefault(n, Counter())[(r["task"], float(r["score"]))] += 1

    seen = _browser_measure(out / "index.html")
    assert seen["lang"] == "en" and seen["css"] == "1060px"
    assert seen["remote"] == []
    assert len(seen["images"]) == 2 + 2 * 4
    for image in seen["images"]:
        assert image["complete"] and image["width"] > 0 and len(image["alt"]) > 40, image
    if "axe" in seen:
        bad = [v for v in seen["axe"] if v["impact"] in SERIOUS]
        assert not bad, f"serious or critical axe-core violations: {bad}"
    tables = seen["tables"]
    for n in graded:
        hist = {round(float(row[0]), 6): int(row[2]) for row in tables[f"{n}_scores"]}
        if maxima[n] <= 40:  # one bar per point
            assert hist == {float(k): sum(1 for v in grades[n].values() if v == k)
                            for k in range(int(maxima[n]) + 1)}
        else:  # more points than bars: 20 equal bins [low, high), the last one closed
            width = maxima[n] / 20
            assert hist == {round(k * width, 6): sum(
                1 for v in grades[n].values()
                if k * width <= v < (k + 1) * width or (k == 19 and v == maxima[n]))
                for k in range(20)}
        assert {(row[0], float(row[1])): int(row[2]) for row in tables[f"{n}_tasks"]
                if int(row[2])} == dict(task_counts[n])
        bands = [0, 0, 0, 0]
        for v in grades[n].values():
            bands[3 if v == maxima[n] else 0 if v < maxima[n] / 2 else
                  1 if v < 0.8 * maxima[n] else 2] += 1
        row = next(r for r in tables["overview_scores"] if r[0] == n)
        assert [int(x) for x in row[1:]] == [len(grades[n]), *bands]
    everyone = set(grades["mle"]) | set(grades["bayes"])
    below = Counter(sum(1 for n in graded if grades[n].get(s, 0) < maxima[n] / 2)
                    for s in everyone)
    assert {int(r[0]): int(r[1]) for r in tables["overview_below"]} == \
        {k: below.get(k, 0) for k in range(3)}

    # A wrong answer that uses a call forbidden in its task is filed under "forbidden", not as
    # failed checks; every other wrong answer of tests/submissions scores 0 or part of its task.
    wrong = Counter(task for task, answers in sup.variants("mle").WRONG.items()
                    for k, _ in enumerate(answers)
                    if ("mle", f"wrong_{task}_{k}") not in FORBIDDEN_IN_VARIANTS)
    forbidden = sum(1 for (name, label) in FORBIDDEN_IN_VARIANTS
                    if name == "mle" and label.startswith("wrong_"))
    checks = read_csv(out / "tables" / "mle_checks.csv")
    # The endless loop fails the one check it ran out of time on ("timed out").
    assert [(c["task"], int(c["timed_out"])) for c in checks if int(c["timed_out"])] == [
        (next(iter(sup.solution_answers("mle"))), 1)]
    most = max(int(c["failed"]) - int(c["timed_out"]) for c in checks)
    assert most == max(wrong.values())
    assert {c["task"] for c in checks if int(c["failed"]) - int(c["timed_out"]) == most} \
        <= set(wrong)
    assert read_csv(out / "figures" / "mle_failures.csv")[0]["task"] in wrong
    checks = read_csv(out / "tables" / "bayes_checks.csv")
    assert max(int(c["failed"]) for c in checks) == 4
    most = {c["check"] for c in checks if int(c["failed"]) == 4}
    assert most >= {c["check"] for c in checks if c["task"] == "beta_credible_interval"}
    top = read_csv(out / "figures" / "bayes_failures.csv")[0]
    assert top["check"] in most
    text = (out / "index.html").read_text(encoding="utf-8")
    assert str(markupsafe.escape(top["description"])) in text
    late = read_csv(out / "tables" / "mle_late.csv")
    assert {r["student_id"] for r in late} == set(grades["mle"]) - {P + "solution",
                                                                     P + "missing_notebook"}
    assert {r["penalty_percent"] for r in late} == {"20"}
    manual = read_csv(out / "tables" / "mle_manual.csv")
    assert [(m["cell"], m["with_points"], m["source"]) for m in manual
            if m["cell"] == manual_cell.stem] == [(manual_cell.stem, "2", "gradebook.db")]
    kinds = {r["category"]: int(r["students"])
             for r in read_csv(out / "tables" / "mle_not_the_answer.csv")}
    assert "timeout" not in kinds and kinds["memory"] == 1 and kinds["unreadable"] == 1
    # Both endless loops are timeouts of the answer, listed apart with where they happened,
    # counted against their tasks, not regrade candidates; the pages name them.
    lost = read_csv(out / "tables" / "mle_timeouts.csv")
    assert sorted((r["student_id"], r["where"]) for r in lost) == [
        (P + "timeout_cell", "while its cell defined it"), (P + "timeout_task", "in the function")]
    mle_tasks = list(sup.solution_answers("mle"))
    lost_per_task = {r["task"]: int(r["lost_to_a_timeout"])
                     for r in read_csv(out / "tables" / "mle_tasks.csv")}
    assert lost_per_task == {t: int(t in (mle_tasks[0], mle_tasks[2])) for t in mle_tasks}
    page = html.unescape((mle / "feedback" / f"{P}timeout_cell.html").read_text())
    assert f"the cell that defines {mle_tasks[2]}" in page and "timed out after 6 s" in page
    assert "does not define a function" not in page
    assert kinds["no_submission"] == 1 and kinds["late"] == len(late)
    assert kinds.get("forbidden", 0) == forbidden

    leaks = {s for p in anonymous.rglob("*") if p.is_file() for s in everyone
             if s.encode() in p.read_bytes()}
    assert all(s.startswith(P) for s in everyone)
    assert any(P.encode() in p.read_bytes() for p in out.rglob("*.html"))
    assert leaks == set(), f"student ids in the anonymous copy: {sorted(leaks)}"
    seen = _browser_measure(anonymous / "index.html")
    assert all(i["complete"] and i["width"] > 0 for i in seen["images"])
    if "axe" in seen:
        assert not [v for v in seen["axe"] if v["impact"] in SERIOUS]
