"""The class report's figures and the numbers behind them (grading/reports/class_figures.py)."""

from __future__ import annotations

from pathlib import Path

from mlcourse_utils.grading.graded.model import Check, GradedFolder, Outcome, StudentRecord
from mlcourse_utils.grading.reports import class_figures as cf
from mlcourse_utils.grading.reports.class_stats import assignment_report, build_report


def test_numbers_and_shares_in_words():
    assert cf.pct(None) == "—" and cf.pct(0.256) == "26\u00a0%"
    assert cf.num(None) == "—" and cf.num(2.0) == "2" and cf.num(1 / 3) == "0.33"
    assert cf.num(1 / 3, 4) == "0.3333"


def test_labels_are_wrapped_cut_and_keep_dollars_literal():
    assert cf._label("cost in $ and $x$") == r"cost in \$ and \$x\$"  # no mathtext
    long = cf._label("word " * 40, width=10, lines=2)
    first, second = long.split("\n")
    assert first == "word word" and second.endswith("…") and len(second) <= 10


def test_check_words_add_the_task_unless_the_description_names_it():
    assert cf.check_words(Check("t1", "fit", 1, "fit returns the mean")) == "fit returns the mean"
    assert cf.check_words(Check("t2", "fit", 1, "the shape is right")) == \
        "fit: the shape is right"


def _graded(name, scores, folder="/g"):
    """A folder with one task "fit" worth 2 points in one check; ``scores``: student -> points."""
    students = {s: StudentRecord(s, score=v, task_scores={"fit": v},
                                 outcomes={"test_fit": Outcome(v, "" if v == 2 else "wrong")})
                for s, v in scores.items()}
    return GradedFolder(name=name, folder=Path(folder), max_score=2.0, tasks=["fit"],
                        task_max={"fit": 2.0},
                        checks=[Check("test_fit", "fit", 2.0, "fit gives the $\\mu$")],
                        students=students, manual=[], has_times=False, extra={}, gaps=[])


def test_scores_figure_files_rows_and_alt_text(tmp_path):
    report = assignment_report(_graded("mle", {"a": 2.0, "b": 0.0, "c": 2.0}), "mle")
    figure = cf.scores_figure(report, tmp_path)
    assert (tmp_path / "mle_scores.svg").is_file() and (tmp_path / "mle_scores.png").is_file()
    assert figure.rows == [["0", "0", 1], ["1", "1", 0], ["2", "2", 2]]
    assert "3 students on mle (maximum 2)" in figure.alt
    assert "mean 1.33, median 2" in figure.alt
    assert "2 with full marks, 0 with partial marks, 1 with zero" in figure.alt


def test_failures_figure_lists_failed_checks_or_is_absent(tmp_path):
    passed = assignment_report(_graded("mle", {"a": 2.0}), "mle")
    assert cf.failures_figure(passed, tmp_path) is None
    report = assignment_report(_graded("mle", {"a": 2.0, "b": 0.0, "c": 0.0, "d": 2.0}), "mle")
    figure = cf.failures_figure(report, tmp_path)
    assert figure.rows == [["fit", "test_fit", "", "fit gives the $\\mu$", 2, 4, "0.5"]]
    assert "fit gives the $\\mu$ (2 of 4)" in figure.alt


def test_overview_counts_bands_and_assignments_below(tmp_path):
    report = build_report([_graded("mle", {"a": 2.0, "b": 0.5}),
                           _graded("gda", {"a": 1.0, "b": 0.0}, "/h")], threshold=0.5)
    scores, below = cf.overview_figures(report, tmp_path)
    # mle: a full, b 25 %; gda: a 50 %, b 0 %
    assert scores.rows == [["mle", 2, 1, 0, 0, 1], ["gda", 2, 1, 1, 0, 0]]
    # a below on none, b on both
    assert below.rows == [[0, 1], [1, 0], [2, 1]]
    assert (tmp_path / "overview_below.svg").is_file()
    one = build_report([_graded("mle", {"a": 2.0})])
    assert [f.slug for f in cf.overview_figures(one, tmp_path)] == ["overview_scores"]
