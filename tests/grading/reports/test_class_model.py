"""What the class report holds (grading/reports/class_model.py): bands, failure counts, check
order."""

from __future__ import annotations

from pathlib import Path

from mlcourse_utils.grading.graded.model import Check, GradedFolder
from mlcourse_utils.grading.reports.class_model import (
    AssignmentReport,
    CheckStats,
    Failure,
    Late,
    is_full,
)


def test_full_marks_allow_for_rounding_of_summed_points():
    assert is_full(0.1 + 0.2, 0.3)          # 0.30000000000000004
    assert is_full(0.1 + 0.1 + 0.1, 0.3)    # 0.30000000000000004 the other way round
    assert not is_full(0.29, 0.3)
    assert is_full(0, 0)


def _report(totals, *, max_score=10.0, checks=(), failures=(), late=None):
    graded = GradedFolder(name="mle", folder=Path("/g"), max_score=max_score, tasks=[],
                          task_max={}, checks=[], students={}, manual=[], has_times=False,
                          extra={}, gaps=[])
    return AssignmentReport(graded, "mle", list(totals), list(totals), dict(totals), None, None,
                            0, 0, 0, [], [], list(checks), list(failures),
                            late or Late(False, "", []))


def test_bands_split_at_half_four_fifths_and_full():
    report = _report({"a": 0, "b": 4.99, "c": 5, "d": 7.99, "e": 8, "f": 9.99, "g": 10})
    assert report.bands() == [2, 2, 2, 1]


def test_failure_counts_count_students_once_per_category_in_order():
    failures = [Failure("a", "timeout", "fit", "timed out"),
                Failure("a", "timeout", "predict", "timed out"),
                Failure("b", "memory", "fit", "memory"),
                Failure("c", "timeout", "fit", "timed out")]
    late = Late(True, "", [("b", "2026-01-02", "2026-01-01", 1, 10.0)])
    report = _report({"a": 0, "b": 0, "c": 0}, failures=failures, late=late)
    assert report.failure_counts() == {"timeout": 2, "memory": 1, "late": 1}
    assert list(report.failure_counts()) == ["timeout", "memory", "late"]  # CATEGORIES order
    # late entries are not counted when late penalties are not available
    assert "late" not in _report({}, late=Late(False, "no config", [("b", "", "", 1, 5.0)])
                                 ).failure_counts()


def test_failures_by_student_join_the_tasks_of_one_reason():
    failures = [Failure("a", "timeout", "fit", "timed out"),
                Failure("a", "timeout", "predict", "timed out"),
                Failure("a", "tampering", "", "tampering detected")]
    assert _report({"a": 0}, failures=failures).failures_by_student() == [
        ("a", "timeout", ["fit", "predict"], "timed out"),
        ("a", "tampering", [], "tampering detected")]


def _check(gid, task, attempted, wrong, raised=0, flags=()):
    return CheckStats(Check(gid, task, 1.0, gid), attempted, wrong, raised, 0, 0,
                      flags=list(flags))


def test_check_share_and_failed():
    c = _check("t", "fit", attempted=8, wrong=1, raised=1)
    assert c.failed == 2 and c.share == 0.25
    assert _check("u", "fit", attempted=0, wrong=0).share is None


def test_top_checks_most_failed_first_then_by_share_then_in_order():
    checks = [_check("c1", "fit", 10, 2), _check("c2", "fit", 4, 2), _check("c3", "fit", 10, 5),
              _check("c4", "predict", 10, 0), _check("c5", "fit", 10, 2)]
    report = _report({}, checks=checks)
    # c3 fails 5; c2 fails 2 of 4 (share 0.5) before c1, c5 (2 of 10, in order); c4 never
    assert [c.check.grade_id for c in report.top_checks()] == ["c3", "c2", "c1", "c5"]
    assert [c.check.grade_id for c in report.top_checks(2)] == ["c3", "c2"]
    assert report.top_checks(task="predict") == []


def test_listed_checks_add_flagged_ones_beyond_the_top():
    checks = [_check("c1", "fit", 10, 5), _check("c2", "fit", 10, 4), _check("c3", "fit", 10, 3),
              _check("c4", "fit", 10, 2), _check("c5", "fit", 10, 1, flags=["suspect"])]
    listed = _report({}, checks=checks).listed_checks("fit", n=3)
    assert [c.check.grade_id for c in listed] == ["c1", "c2", "c3", "c5"]
