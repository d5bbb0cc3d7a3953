"""The class report's statistics (grading/reports/class_stats.py), on small folders counted by
hand."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import scipy.stats

from mlcourse_utils.grading.graded.model import Check, GradedFolder, Outcome, StudentRecord
from mlcourse_utils.grading.reports import class_stats as cs
from mlcourse_utils.grading.reports.class_model import ReportError
from tolerances import few_ops


def test_pearson_of_a_small_example_by_hand():
    # x deviations (-1, 0, 1), y = (2, 4, 7) deviations (-7, -1, 8)/3: r = 5 / (sqrt 2 sqrt(114)/3)
    r = cs.pearson([1, 2, 3], [2, 4, 7])
    # about 20 rounded operations (means, deviations, two dot products, roots, a division)
    assert r == pytest.approx(15 / math.sqrt(228), rel=few_ops(20))
    assert cs.pearson([3, 2, 1], [2, 4, 7]) == pytest.approx(-15 / math.sqrt(228),
                                                              rel=few_ops(20))


def test_pearson_agrees_with_scipy():
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=40), rng.normal(size=40)
    # two algorithms over 40 terms: far within 1e-10 (sum_rtol(40) is about 1e-14 per sum)
    assert cs.pearson(x, y) == pytest.approx(scipy.stats.pearsonr(x, y)[0], rel=1e-10)


def test_pearson_is_undefined_for_constants_and_short_inputs():
    assert cs.pearson([1, 1, 1], [1, 2, 3]) is None
    assert cs.pearson([1, 2], [2, 1]) is None
    with pytest.raises(ValueError, match="x has 3 values but y has 2"):
        cs.pearson([1, 2, 3], [1, 2])


def test_task_stats_counts_a_small_class():
    scores = {"a": 2, "b": 1, "c": 0, "d": 2, "e": 2, "f": 0}
    rest = {"a": 10, "b": 5, "c": 1, "d": 9, "e": 2, "f": 8}
    t = cs.task_stats("fit", 2, scores, rest)
    assert (t.n, t.full, t.partial, t.zero) == (6, 3, 1, 2)
    assert t.mean == pytest.approx(7 / 6, rel=few_ops(8))
    assert t.median == 1.5 and t.counts == {0: 2, 1: 1, 2: 3}
    assert t.difficulty == pytest.approx(7 / 12, rel=few_ops(8))
    # by rest: bottom third c (1), e (2): c fails; top third d (9), a (10): none fails
    assert (t.fail_top, t.fail_bottom) == (0.0, 0.5)
    assert t.flags == []


def test_a_task_nearly_everyone_fails_is_flagged():
    scores = {f"s{i}": 0.0 for i in range(10)}
    scores["s0"] = 1.0  # one in ten has full marks: at NEARLY_ALL_FAIL
    t = cs.task_stats("fit", 1.0, scores, {s: 0.0 for s in scores})
    assert t.flags == ["nearly everyone fails"]
    assert t.discrimination is None  # the rest is constant


def test_histogram_one_bar_per_point_or_twenty_bins():
    assert cs._histogram([0, 3, 3, 1.0], 3) == [(0.0, 0.0, 1), (1.0, 1.0, 1), (2.0, 2.0, 0),
                                                (3.0, 3.0, 2)]
    bins = cs._histogram([0, 0.5, 10.5, 5.25], 10.5)
    assert len(bins) == 20 and sum(b[2] for b in bins) == 4
    assert bins[0][2] == 2 and bins[-1][2] == 1  # 0 and 0.5 < 0.525; 10.5 in the closed last
    assert bins[10][2] == 1  # 5.25 = 10 widths of 0.525
    assert cs._histogram([0, 0], 0) == [(0.0, 0.0, 2)]


def test_slugs_are_file_names_and_unique():
    taken = {"overview"}
    assert cs._slug("mle", taken) == "mle"
    assert cs._slug("mle", taken) == "mle_2"
    assert cs._slug("../x y", taken) == "x_y"
    assert cs._slug("overview", taken) == "overview_2"
    assert cs._slug("///", taken) == "assignment"


CHECKS = [Check("test_fit", "fit", 1.0, "fits"), Check("test_predict", "predict", 2.0, "predicts")]


def _folder(name="mle", students=None, folder="/graded/mle"):
    return GradedFolder(name=name, folder=Path(folder), max_score=3.0, tasks=["fit", "predict"],
                        task_max={"fit": 1.0, "predict": 2.0}, checks=list(CHECKS),
                        students=students or {}, manual=[], has_times=False, extra={}, gaps=[])


def _student(name, fit, predict, fit_msg="", predict_msg="", **kw):
    return StudentRecord(name, score=fit + predict, task_scores={"fit": fit, "predict": predict},
                         outcomes={"test_fit": Outcome(fit, fit_msg),
                                   "test_predict": Outcome(predict, predict_msg)}, **kw)


TIMED_OUT = "timed out after 6 s (the time limit per cell and per test)"


def test_check_failures_are_told_apart_by_their_message():
    """By hand: fit: a passes, b wrong, c a stub, d a MemoryError (not the answer); predict:
    b and c raised, d ran out of time on it (a failure of the answer: attempted, timed out),
    e lost it to a reason that is not a timeout (a forbidden call: not counted)."""
    students = {
        "a": _student("a", 1, 2),
        "b": _student("b", 0, 0, "wrong value", "your function raised ValueError"),
        "c": _student("c", 0, 0, "NotImplementedError", "the result could not be checked"),
        "d": _student("d", 0, 0, "MemoryError", TIMED_OUT, reasons={"predict": TIMED_OUT}),
        "e": _student("e", 1, 0, "", "", reasons={"predict": "uses numpy.cov, a forbidden "
                                                             "call in this task"}),
    }
    report = cs.assignment_report(_folder(students=students), "mle")
    fit, predict = report.checks
    assert (fit.attempted, fit.wrong, fit.raised, fit.not_attempted, fit.not_answer) == \
        (3, 1, 0, 1, 1)
    assert (predict.attempted, predict.wrong, predict.raised, predict.timed_out,
            predict.not_answer) == (4, 0, 2, 1, 1)
    assert predict.failed == 3
    # The timeout is not a failure "not about the answer": it is listed apart, by task.
    assert [(f.student, f.category, f.task) for f in report.failures] == [
        ("d", "memory", "fit"), ("e", "forbidden", "predict")]
    assert [(t.student, t.task, t.where) for t in report.timeouts] == [
        ("d", "predict", "in the function")]
    assert [t.timed_out for t in report.tasks] == [0, 1]
    assert (report.full, report.partial, report.zero) == (1, 1, 3)
    assert report.histogram == [(0.0, 0.0, 3), (1.0, 1.0, 1), (2.0, 2.0, 0), (3.0, 3.0, 1)]


def test_students_who_submitted_nothing_are_left_out_of_the_item_analysis():
    students = {"a": _student("a", 1, 2), "b": _student("b", 0, 0, submitted=False),
                "c": _student("c", 0, 0, reasons={"fit": "no notebook was submitted"})}
    report = cs.assignment_report(_folder(students=students), "mle")
    assert report.participants == ["a"] and report.students == ["a", "b", "c"]
    assert report.tasks[0].n == 1 and report.checks[0].attempted == 1


def test_build_report_finds_students_at_risk_over_assignments():
    first = _folder("mle", {"a": _student("a", 1, 2), "b": _student("b", 1, 0)})
    second = _folder("gda", {"a": _student("a", 0, 0), "b": _student("b", 0, 1)}, "/g/gda")
    report = cs.build_report([first, second], threshold=0.5)
    # b: 1/3 and 1/3, below 0.5 twice; a: 1 and 0, below once
    assert report.at_risk == {"b": [pytest.approx(1 / 3), pytest.approx(1 / 3)]}
    assert report.below_counts == {1: 1, 2: 1}
    assert [r.slug for r in report.assignments] == ["mle", "gda"]
    assert cs.build_report([first]).at_risk == {}  # one assignment: nobody at risk


def test_build_report_refuses_bad_input():
    with pytest.raises(ReportError, match="threshold"):
        cs.build_report([_folder()], threshold=0)
    with pytest.raises(ReportError, match="at least one"):
        cs.build_report([])
    with pytest.raises(ReportError, match="both hold mle.*grade-merge"):
        cs.build_report([_folder(), _folder(folder="/other")])
