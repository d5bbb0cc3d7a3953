"""A class's run as it goes (grading/engine/progress.py): the progress line's note on who takes
long. Ctrl-C, SIGTERM and the run's measures are tested on whole batches in test_hostile."""

from __future__ import annotations

from mlcourse_utils.grading.engine.progress import waiting_on


def test_the_progress_line_names_the_student_graded_longest():
    """Nobody past 10 s: nothing; then the one who started first, with whole 5 s steps, and
    how many others are past 10 s as well."""
    assert waiting_on({"ann": 100.0, "bob": 105.0}, now=109.0) == ""
    assert waiting_on({"ann": 100.0, "bob": 105.0}, now=112.0) == "waiting for ann (10 s)"
    assert waiting_on({"ann": 100.0, "bob": 101.0, "cy": 160.0}, now=163.9) == \
        "waiting for ann (60 s) and 1 other over 10 s"
    assert waiting_on({}, now=1e9) == ""
