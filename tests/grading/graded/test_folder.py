"""The one reader of a graded folder (grading/graded/folder.py), on folders written by hand."""

from __future__ import annotations

import json

import pytest

from mlcourse_utils.grading.graded.folder import (
    GradedFolderError,
    describe_gaps,
    read_graded_folder,
)

RESULTS = {
    "assignment": "mle",
    "defences": {"seccomp": True},
    "students": {
        "alice": {"tests": [
            {"grade_id": "test_fit", "task": "fit", "points": 2, "earned": 2, "message": "",
             "description": "fit returns the mean"},
            {"grade_id": "test_predict", "task": "predict", "points": 1, "earned": 0,
             "message": "wrong value"}],
            "reasons": {}, "notes": ["tampering detected: x", 7]},
        "=bob": {"tests": [
            {"grade_id": "test_fit", "task": "fit", "points": 2, "earned": 1},
            {"grade_id": "test_predict", "task": "predict", "points": 1, "earned": "NaN?"},
            "garbage", {"no": "grade_id"}],
            "reasons": {"predict": "timed out", "fit": 3}},
    },
}


def _write(folder, results=RESULTS, tasks=True, grades=True):
    folder.mkdir(parents=True, exist_ok=True)
    if results is not None:
        (folder / "results.json").write_text(
            results if isinstance(results, str) else json.dumps(results))
    if tasks:
        (folder / "task_scores.csv").write_text(
            "student_id,assignment,task,score,max_score\n"
            "alice,mle,fit,2,2\nalice,mle,predict,0,1\n"
            "'=bob,mle,fit,1,2\n'=bob,mle,predict,0,1\n")
    if grades:
        (folder / "grades.csv").write_text(
            "student_id,assignment,score,max_score\nalice,mle,2,3\n'=bob,mle,1,3\n")
    return folder


def test_a_whole_folder_is_read_with_quoted_ids_restored(tmp_path):
    graded = read_graded_folder(_write(tmp_path / "g"), root=tmp_path)
    assert graded.name == "mle" and graded.max_score == 3.0
    assert graded.tasks == ["fit", "predict"] and graded.task_max == {"fit": 2.0, "predict": 1.0}
    assert list(graded.students) == ["=bob", "alice"]  # the CSV's '=bob is results.json's =bob
    alice, bob = graded.students["alice"], graded.students["=bob"]
    assert (alice.score, alice.task_scores) == (2.0, {"fit": 2.0, "predict": 0.0})
    assert alice.outcomes["test_predict"].message == "wrong value"
    assert alice.notes == ["tampering detected: x"]        # not-strings dropped
    assert bob.reasons == {"predict": "timed out"}         # not-string reasons dropped
    assert bob.outcomes["test_predict"].earned == 0.0      # not a number: 0
    assert [(c.grade_id, c.task, c.points, c.description, c.kind) for c in graded.checks] == [
        ("test_fit", "fit", 2.0, "fit returns the mean", ""),
        ("test_predict", "predict", 1.0, "test_predict", "")]  # description defaults to the id
    assert graded.extra == {"defences": {"seccomp": True}}
    assert not graded.has_times
    assert any("no timestamps.json" in g for g in graded.gaps)
    assert any("2 students have no feedback page" in g for g in graded.gaps)
    assert any("checks are not marked visible or hidden" in g for g in graded.gaps)


def test_results_alone_give_task_scores_and_maximum_from_the_checks(tmp_path):
    graded = read_graded_folder(_write(tmp_path / "g", tasks=False, grades=False), root=tmp_path)
    assert graded.task_max == {"fit": 2.0, "predict": 1.0} and graded.max_score == 3.0
    assert graded.students["=bob"].task_scores == {"fit": 1.0, "predict": 0.0}
    assert graded.students["=bob"].score == 1.0
    assert any("no task_scores.csv" in g for g in graded.gaps)
    assert any("no grades.csv" in g for g in graded.gaps)


def test_a_broken_results_file_is_a_gap_not_an_error(tmp_path):
    graded = read_graded_folder(_write(tmp_path / "g", results="{not json"), root=tmp_path)
    assert graded.checks == [] and graded.students["alice"].score == 2.0
    assert any(g.startswith("results.json could not be read (JSONDecodeError)")
               for g in graded.gaps)


def test_times_and_feedback_pages_are_attached(tmp_path):
    folder = _write(tmp_path / "g")
    (folder / "timestamps.json").write_text(json.dumps({
        "alice": {"submitted": True, "time": "2026-01-01T10:00:00+00:00", "source": "lms"},
        "=bob": {"submitted": "yes"}}))
    (folder / "feedback").mkdir()
    (folder / "feedback" / "alice.html").write_text("<p>ok</p>")
    graded = read_graded_folder(folder, root=tmp_path)
    alice, bob = graded.students["alice"], graded.students["=bob"]
    assert graded.has_times
    assert (alice.submitted, alice.time, alice.time_source) == (
        True, "2026-01-01T10:00:00+00:00", "lms")
    assert alice.feedback == folder / "feedback" / "alice.html"
    assert (bob.submitted, bob.time, bob.feedback) == (None, None, None)
    assert describe_gaps({"mle": graded}) == [f"mle: {g}" for g in graded.gaps]


def test_manual_progress_counts_answers_with_points(tmp_path):
    folder = _write(tmp_path / "g")
    (folder / "manual").mkdir()
    (folder / "manual" / "derivation.csv").write_text(
        "student_id,points,comment\nalice,\"1,5\",good\n'=bob,,\nstranger,2,\n")
    (cell,) = read_graded_folder(folder, root=tmp_path).manual
    # alice has points (a decimal comma counts), bob none, a stranger is not of this folder
    assert (cell.grade_id, cell.graded, cell.total, cell.source) == (
        "derivation", 1, 2, "manual/derivation.csv")


@pytest.mark.parametrize(("setup", "message"), [
    (lambda f: None, "does not exist"),
    (lambda f: f.mkdir(), "holds no grades.csv, task_scores.csv or results.json"),
    (lambda f: (_write(f), (f / "grades.csv").write_text(
        "student_id,assignment,score,max_score\nalice,gda,2,3\n")),
     r"different assignments \(grades.csv: 'gda', results.json: 'mle'\)"),
    (lambda f: (_write(f), (f / "grades.csv").write_text(
        "student_id,assignment,score,max_score\nalice,mle,two,3\n")),
     r"grades.csv, line 2: score and max_score must be numbers"),
    (lambda f: (_write(f), (f / "task_scores.csv").write_text("student_id,score\n")),
     r"task_scores.csv lacks the column\(s\) assignment, max_score, task"),
])
def test_folders_that_cannot_be_read_are_errors_naming_why(tmp_path, setup, message):
    folder = tmp_path / "g"
    setup(folder)
    with pytest.raises(GradedFolderError, match=message):
        read_graded_folder(folder, root=tmp_path)


def test_overrides_are_read_with_the_points_they_replace(tmp_path):
    """alice's predict (autograded 0 of 1) set to 0.5 by a teaching assistant: the record holds
    the points, the autograded 0 and the reason; without task_scores.csv the task score is the
    override's, and the total 2 + 0.5."""
    results = json.loads(json.dumps(RESULTS))
    results["students"]["alice"]["overrides"] = {"predict": {"points": 0.5, "reason": "typo"},
                                                 "fit": "garbage"}
    graded = read_graded_folder(_write(tmp_path / "g", json.dumps(results), tasks=False,
                                       grades=False), root=tmp_path)
    alice = graded.students["alice"]
    assert alice.overrides == {"predict": (0.5, 0.0, "typo")}
    assert alice.task_scores == {"fit": 2.0, "predict": 0.5} and alice.score == 2.5


def test_the_export_s_reading_gives_each_total_without_a_gradebook(tmp_path, mle_assignment):
    """Without gradebook.db every manually graded cell is still to grade: alice's total is
    her autograded points (all of them, written by hand as the sum of the tests' points) and
    the maximum adds the source notebook's manual points; the times are the file's."""
    import assignment_support as sup
    from mlcourse_utils.grading.graded.folder import read_graded
    from mlcourse_utils.grading.graded.out import OutFolder
    from mlcourse_utils.grading.graded.results import GradeResult, TestResult

    out = OutFolder(tmp_path / "g")
    out.path.mkdir()
    full = GradeResult("alice", "mle", [TestResult(t.grade_id, t.task, t.points, t.points,
                                                   t.description) for t in mle_assignment.tests])
    out.write_results({"alice": full}, mle_assignment)
    (out.path / "timestamps.json").write_text('{"alice": {"submitted": true}}')
    graded = read_graded(out.path, root=sup.ROOT)
    autograded = sum(t.points for t in mle_assignment.tests)
    assert graded.scores == {"alice": autograded}
    assert graded.max_score == autograded
    assert graded.total_max == autograded + sum(p for _, p in mle_assignment.manual)
    assert graded.ungraded == (["alice"] if mle_assignment.manual else [])
    assert graded.times == {"alice": {"submitted": True}}
    with pytest.raises(ValueError, match="not a results file"):
        read_graded(tmp_path / "nowhere", root=sup.ROOT)
