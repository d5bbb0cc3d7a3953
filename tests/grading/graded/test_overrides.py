"""Overrides of autograded task scores (grading/graded/overrides.py): every bad row refused with its
file and line, the record kept in the graded folder, applied to results and grade files.

The results are the mle assignment's, built by hand (each test earning a chosen share of its
points); expected points are sums of those test points, computed here.
"""

from __future__ import annotations

import csv

import pytest

from mlcourse_utils.grading.graded import overrides
from mlcourse_utils.grading.graded.out import OutFolder
from mlcourse_utils.grading.graded.results import GradeResult
from mlcourse_utils.grading.graded.results import TestResult as Outcome


def _result(assignment, student, share=1.0):
    return GradeResult(student, assignment.name, [
        Outcome(t.grade_id, t.task, t.points, t.points * share, t.description)
        for t in assignment.tests])


@pytest.fixture
def results(mle_assignment):
    return {"alice": _result(mle_assignment, "alice"),
            "=cmd": _result(mle_assignment, "=cmd", 0.0)}


def _csv(path, rows, header=overrides.COLUMNS):
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        w.writerows(rows)
    return path


def test_the_task_maxima_are_the_sums_of_the_test_points(results, mle_assignment):
    assert overrides.task_maxima(results) == {t: mle_assignment.task_max(t)
                                              for t in mle_assignment.tasks}


def test_good_rows_are_read_with_quoted_ids_and_decimal_commas(tmp_path, results,
                                                                mle_assignment):
    task = mle_assignment.tasks[0]
    path = _csv(tmp_path / "o.csv", [["'=cmd", task, "2,5", "regrade: the test was too strict"],
                                     ["", "", "", ""],  # a blank line is skipped
                                     ["alice", task, "0", "copied"]])
    found = overrides.read_overrides([path], results, overrides.task_maxima(results))
    assert {k: (o.points, o.reason) for k, o in found.items()} == {
        ("=cmd", task): (2.5, "regrade: the test was too strict"), ("alice", task): (0.0, "copied")}
    assert found[("=cmd", task)].where == f"{path}, line 2"


def _bad_rows(assignment):
    task, other = assignment.tasks[0], assignment.tasks[1]
    top = assignment.task_max(task)
    manual = assignment.manual[0][0]
    return [
        (["mallory", task, "1", "x"], "unknown student 'mallory'"),
        (["alice", "fit_everything", "1", "x"], "'fit_everything' is not an autograded task"),
        (["alice", manual, "1", "x"], f"'{manual}' is graded by hand"),
        (["alice", task, str(top + 1), "x"], f"must be from 0 to {top:g}"),
        (["alice", task, "-0.5", "x"], f"must be from 0 to {top:g}"),
        (["alice", other, "many", "x"], "points 'many' for alice / "),
        (["alice", other, "nan", "x"], "points 'nan' for alice / "),
        (["alice", other, "", "x"], "points '' for alice / "),
        (["=cmd", other, "1", "  "], f"the override of =cmd / {other} has no reason"),
        (["alice", "sequence_likelihood", "1", "twice"], "a second override of alice / "
                                                          "sequence_likelihood (the first is "),
    ]


def test_every_bad_row_is_refused_with_its_file_and_line(tmp_path, results, mle_assignment):
    """One good row first (it makes the duplicate a duplicate), then one bad row of each kind:
    the error names each by file and line; nothing is returned (so nothing is imported)."""
    bad = _bad_rows(mle_assignment)
    good = ["alice", "sequence_likelihood", "2", "a good row before the bad ones"]
    path = _csv(tmp_path / "bad.csv", [good, *(row for row, _ in bad)])
    with pytest.raises(overrides.OverridesCsvError) as error:
        overrides.read_overrides([path], results, overrides.task_maxima(results),
                                 dict(mle_assignment.manual))
    lines = str(error.value).splitlines()
    assert len(lines) == len(bad)
    for n, ((_, message), line) in enumerate(zip(bad, lines, strict=True), start=3):
        assert line.startswith(f"{path}, line {n}: ") and message in line, (message, line)


def test_a_file_without_the_columns_or_unreadable_is_refused(tmp_path, results):
    path = _csv(tmp_path / "o.csv", [["alice", "x", "1"]], ("student_id", "task", "points"))
    with pytest.raises(overrides.OverridesCsvError, match=r"o.csv: missing column\(s\) reason"):
        overrides.read_overrides([path], results, overrides.task_maxima(results))
    (tmp_path / "latin1.csv").write_bytes("student_id,task,points,reason\n\xe9".encode("latin-1"))
    with pytest.raises(overrides.OverridesCsvError, match="not a UTF-8 CSV"):
        overrides.read_overrides([tmp_path / "latin1.csv"], results, {})


def test_an_overrides_csv_is_told_from_a_manual_one_by_its_header():
    assert overrides.is_overrides_csv(["student_id", "task", "points", "reason"])
    assert overrides.is_overrides_csv(["student_id", "task", "points"])  # missing reason: said
    assert not overrides.is_overrides_csv(["student_id", "grade_id", "points", "comment"])


def test_an_override_is_spread_over_the_tasks_test_cells_in_order(results, mle_assignment):
    """nbgrader totals cells, so the override's points are filled into the task's test cells
    in order, each up to its own points: their sum is the override (by hand per task)."""
    cells = {t: [x for x in mle_assignment.tests if x.task == t] for t in mle_assignment.tasks}
    task = next(t for t, c in cells.items() if len(c) >= 3)
    first, second, *rest = cells[task]
    value = first.points + second.points / 2
    alice = results["alice"]
    alice.overrides = {task: {"points": value, "reason": "r"}}
    pieces = overrides.cell_points(alice)
    assert pieces == {first.grade_id: first.points, second.grade_id: second.points / 2,
                      **{c.grade_id: 0.0 for c in rest}}
    assert sum(pieces.values()) == value


def test_applied_overrides_give_the_tasks_points_in_the_grade_files(tmp_path, results,
                                                                    mle_assignment):
    """alice (every point) loses all of task A's points; =cmd (none) gets 1.5 on task B: the
    task scores are the overrides, the totals change by exactly the difference, and the
    autograded points stay what the tests earned."""
    a, b = mle_assignment.tasks[:2]
    maxima = overrides.task_maxima(results)
    record = {("alice", a): overrides.Override("alice", a, 0.0, "copied"),
              ("=cmd", b): overrides.Override("=cmd", b, 1.5, "regrade")}
    assert overrides.apply(results, record, maxima) == []
    alice, cmd = results["alice"], results["=cmd"]
    assert alice.task_score(a) == 0 and alice.autograded_task_score(a) == maxima[a]
    assert alice.score == mle_assignment.max_score - maxima[a]
    assert cmd.task_score(b) == 1.5 and cmd.score == 1.5 and cmd.autograded_score == 0
    OutFolder(tmp_path).write_csvs(results, mle_assignment)
    with open(tmp_path / "task_scores.csv", newline="") as fh:
        rows = {(r["student_id"], r["task"]): float(r["score"]) for r in csv.DictReader(fh)}
    assert rows[("alice", a)] == 0 and rows[("'=cmd", b)] == 1.5
    with open(tmp_path / "grades.csv", newline="") as fh:
        totals = {r["student_id"]: float(r["score"]) for r in csv.DictReader(fh)}
    assert totals == {"alice": mle_assignment.max_score - maxima[a], "'=cmd": 1.5}
    # Applying a record without them takes them back out.
    overrides.apply(results, {}, maxima)
    assert alice.score == mle_assignment.max_score and cmd.score == 0


def test_the_record_round_trips_and_keeps_what_no_longer_fits(tmp_path, results,
                                                              mle_assignment):
    """The record lists each override with the autograded points it replaces and the task's
    maximum; read back it gives the same overrides. A row for a student not graded now, or a
    task whose maximum shrank, is named by apply and stays in the record."""
    a, b = mle_assignment.tasks[:2]
    maxima = overrides.task_maxima(results)
    record = {("alice", a): overrides.Override("alice", a, 1.0, "=not a formula, a reason"),
              ("=cmd", b): overrides.Override("=cmd", b, 1.5, "regrade, line 2\nof it"),
              ("gone", a): overrides.Override("gone", a, 1.0, "left the course")}
    path = OutFolder(tmp_path).write_record(record, results, maxima)
    assert path == tmp_path / "overrides.csv"
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert list(rows[0]) == list(overrides.RECORD_COLUMNS)
    by_key = {(r["student_id"], r["task"]): r for r in rows}
    assert by_key[("alice", a)]["autograded"] == f"{maxima[a]:g}"
    assert by_key[("'=cmd", b)]["autograded"] == "0"
    assert by_key[("gone", a)]["autograded"] == ""  # not graded here
    assert by_key[("alice", a)]["reason"] == "'=not a formula, a reason"  # no formula
    back = OutFolder(tmp_path).read_record()
    assert {k: (o.points, o.reason) for k, o in back.items()} == {
        k: (o.points, o.reason) for k, o in record.items()}
    unfit = overrides.apply(results, back, {**maxima, b: 1.0})  # b's maximum is now 1
    assert len(unfit) == 2
    assert "unknown student 'gone'" in unfit[1] and "line 4" in unfit[1]
    assert f"points 1.5 for =cmd / {b} must be from 0 to 1" in unfit[0]
    assert results["=cmd"].overrides == {} and results["alice"].task_score(a) == 1.0


def test_a_broken_record_is_named_by_line(tmp_path):
    _csv(tmp_path / "overrides.csv", [["alice", "f", "1", "ok"], ["alice", "f", "2", "again"],
                                      ["bob", "g", "x", "r"]])
    with pytest.raises(overrides.OverridesCsvError) as error:
        OutFolder(tmp_path).read_record()
    assert "line 3: alice / f is in the record twice" in str(error.value)
    assert "line 4: points 'x' for bob / g are not a number" in str(error.value)
    assert OutFolder(tmp_path / "nowhere").read_record() == {}
    assert overrides.read_record(tmp_path / "nowhere.csv") == {}
