"""The model of a graded class (grading/graded/model.py): a student's one total, the folder's."""

from __future__ import annotations

from pathlib import Path

import pytest

from mlcourse_utils.grading.graded.model import GradedFolder, Total


def test_the_one_total_by_hand(mle_assignment):
    """A result with 30 autograded points of 48 (by share), one task overridden from its
    autograded points to 1, the first manual answer graded 2 and the others not yet, 10 %
    late: autograded 30 - auto(task) + 1, plus 2 by hand, times 0.9; out of 48 plus every
    manual maximum. shown() rounds to two decimals, as the export writes."""
    from mlcourse_utils.grading.graded.model import shown, student_total
    from mlcourse_utils.grading.graded.results import GradeResult
    from mlcourse_utils.grading.graded.results import TestResult as Outcome

    share = 30 / mle_assignment.max_score
    result = GradeResult("alice", "mle", [Outcome(t.grade_id, t.task, t.points, t.points * share,
                                                  t.description) for t in mle_assignment.tests])
    task = mle_assignment.tasks[0]
    result.overrides = {task: {"points": 1.0, "reason": "r"}}
    (first, _), *rest = mle_assignment.manual
    total = student_total(result, mle_assignment.manual, {first: (2.0, "")}, penalty=10.0)
    autograded = 30 - mle_assignment.task_max(task) * share + 1
    assert total.autograded == pytest.approx(autograded, rel=1e-12)
    assert total.autograded_max == mle_assignment.max_score
    assert (total.manual, total.pending, total.overridden) == (2.0, tuple(g for g, _ in rest),
                                                               (task,))
    assert total.max_score == mle_assignment.max_score + sum(p for _, p in mle_assignment.manual)
    assert total.score == pytest.approx((autograded + 2) * 0.9, rel=1e-12)
    assert shown(total.score) == f"{round((autograded + 2) * 0.9, 2):g}"
    assert shown(38.40000001) == "38.4" and shown(12.0) == "12"


def test_the_folder_s_totals_give_scores_the_ungraded_and_the_maximum():
    """Two students by hand: alice 7 of 10 autograded with nothing left to grade, bob 3 with
    one manual cell pending; a manual maximum of 5 makes the assignment's 15."""
    graded = GradedFolder("mle", Path("/g"), 10.0, manual_max=5.0,
                          totals={"bob": Total(3.0, 10.0, 0.0, 5.0, ("derive",)),
                                  "alice": Total(5.0, 10.0, 2.0, 5.0)})
    assert graded.scores == {"bob": 3.0, "alice": 7.0}
    assert graded.ungraded == ["bob"]
    assert graded.total_max == 15.0
    assert GradedFolder("mle", Path("/g")).checks_of("fit") == []
