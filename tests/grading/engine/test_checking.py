"""The test cells run in the grader (grading/engine/checking.py): the order grading runs them in,
visible before hidden-only.
"""

from __future__ import annotations

from mlcourse_utils.grading import notebook
from mlcourse_utils.grading.engine import checking, session


def test_visible_tests_run_before_the_hidden_only_ones():
    """In bayes, model_posterior's test cells are visible, hidden-only, then visible with hidden
    code (read off the source notebook); grading runs the two that `mlcourse check` runs first,
    and the budget gives one limit to each test cell with hidden code beyond the check's."""
    import assignment_support as sup
    from mlcourse_utils.course import BUDGET_FACTOR
    from mlcourse_utils.grading.notebook import HIDDEN_BEGIN
    from mlcourse_utils.grading.selfcheck import is_emptied_hidden_test

    assignment = notebook.load_assignment("bayes", sup.ROOT)
    hidden_only = [t.grade_id for t in assignment.tests
                   if is_emptied_hidden_test(assignment.visible_sources[t.grade_id])]
    with_hidden = [t.grade_id for t in assignment.tests
                   if HIDDEN_BEGIN in t.source]
    assert set(hidden_only) < set(with_hidden) == set(assignment.hidden_tests)
    order = [t.grade_id for t in checking.run_order(assignment)]
    assert sorted(order) == sorted(t.grade_id for t in assignment.tests)
    first = order[:len(order) - len(hidden_only)]
    assert set(first).isdisjoint(hidden_only) and order[len(first):] == hidden_only
    assert first == [t.grade_id for t in assignment.tests if t.grade_id not in hidden_only]
    mine = [t.grade_id for t in assignment.tests if t.task == "model_posterior"]
    assert [g in hidden_only for g in mine] == [False, True, False]
    assert session.grading_budget(assignment, 10) == 10 * (BUDGET_FACTOR + 1)
