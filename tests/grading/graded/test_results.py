"""The result data model (grading/graded/results.py): a result capped, saying what was cut.
"""

from __future__ import annotations

from mlcourse_utils.grading.graded import results


def test_grade_result_is_capped_with_a_note():
    r = results.GradeResult("s", "demo")
    r.cell_errors = [(i, "ValueError: x" * 10) for i in range(300)]
    r.cell_warnings = [f"cell {i}: UserWarning" for i in range(100)]
    r.notes = [f"note {i}" for i in range(200)]
    r.output = "y" * 100_000
    r.bound()
    assert len(r.cell_errors) == results.MAX_CELL_ERRORS
    assert len(r.cell_warnings) == results.MAX_CELL_WARNINGS
    assert r.notes[results.MAX_NOTES:] == ["150 more notes (not listed)",
                                           "250 more cells raised an error (not listed)",
                                           "80 more warnings while the notebook ran (not listed)"]
    assert r.output.startswith("[... output cut]") and len(r.output) < results.MAX_OUTPUT + 50
