"""nbgrader's database (grading/graded/gradebook.py), the one module that opens it: ids safe in
nbgrader's CSV, and a gradebook written, given manual points and read back (totals, manual
points, progress).

The gradebook here is written by gradebook.start and Writer.write/finish (one student at a
time) for the mle source notebook with scores chosen by hand; the expected totals are sums of
those scores and of the manual points given.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import assignment_support as sup
from mlcourse_utils.grading.graded import gradebook


@pytest.mark.parametrize("student", ["alice", "a.b@uni.example", "Zoë"])
def test_a_plain_id_is_kept(student):
    assert gradebook.gradebook_id(student) == student


@pytest.mark.parametrize("student", ['a,b', 'say "hi"', "tab\there", "new\nline"])
def test_an_id_nbgrader_would_break_its_csv_with_is_made_safe_and_unique(student):
    safe = gradebook.gradebook_id(student)
    assert not set(safe) & set(',"\t\n') and "~" in safe
    assert gradebook.gradebook_id(student + "x") != safe


@pytest.mark.parametrize("student", ["=cmd|calc", "+1", "-x", "@SUM"])
def test_a_formula_id_is_quoted(student):
    assert gradebook.gradebook_id(student).startswith("'")


@pytest.fixture(scope="module")
def book(tmp_path_factory, mle_assignment):
    """A gradebook of mle for alice (every autograded point) and =x (half of them)."""
    out = tmp_path_factory.mktemp("book")
    source = sup.ROOT / "solutions" / "mle" / "mle.ipynb"
    scores = {"alice": {t.grade_id: t.points for t in mle_assignment.tests},
              "=x": {t.grade_id: t.points / 2 for t in mle_assignment.tests}}
    book = gradebook.start(out / "gradebook.db", source, "mle",
                           [g for g, _ in mle_assignment.manual])
    for student, grades in scores.items():
        book.write(student, grades)
    assert book.finish() is None
    return out / "gradebook.db"


@pytest.mark.slow  # the gradebook fixture starts nbgrader (about 15 s)
def test_totals_are_the_autograded_points_until_manual_ones_arrive(book, mle_assignment):
    top_auto = mle_assignment.max_score
    top_manual = sum(p for _, p in mle_assignment.manual)
    top, scores, ungraded = gradebook.totals(book, "mle")
    assert top == pytest.approx(top_auto + top_manual)
    assert scores == {"alice": pytest.approx(top_auto), "'=x": pytest.approx(top_auto / 2)}
    assert ungraded == ["'=x", "alice"]
    manual, students = gradebook.manual_layout(book, "mle")
    assert manual == dict(mle_assignment.manual) and students == {"alice", "'=x"}
    assert gradebook.imported_count(book) == 0
    assert gradebook.manual_progress(book, "mle") == {g: (p, 0) for g, p in mle_assignment.manual}


@pytest.mark.slow  # the gradebook fixture starts nbgrader (about 15 s)
def test_manual_points_are_written_read_back_and_counted(tmp_path, book, mle_assignment):
    db = tmp_path / "gradebook.db"
    db.write_bytes(book.read_bytes())  # this test's own copy
    (gid, top), *_ = mle_assignment.manual
    written = gradebook.write_manual_points(db, "mle", {("alice", gid): (top, "well argued")})
    assert written == {gid: 1}
    found = gradebook.manual_points(db, "mle", ["alice", "=x"])
    assert found["alice"][gid] == (top, "well argued") and found["=x"][gid] == (None, "")
    assert gradebook.totals(db, "mle")[1]["alice"] == pytest.approx(mle_assignment.max_score
                                                                   + top)
    assert gradebook.manual_progress(db, "mle")[gid] == (top, 1)
    assert gradebook.imported_count(db) == 2  # the points and the comment
    with pytest.raises(ValueError, match="ghost has no submission of mle"):
        gradebook.write_manual_points(db, "mle", {("ghost", gid): (1.0, "")})


@pytest.mark.slow  # the gradebook fixture starts nbgrader (about 15 s)
def test_reading_the_gradebook_leaves_path_and_nbgrader_of_other_processes_alone(book):
    """The owner opens the database in this process without changing PATH (nbgrader's schema
    check is answered here, not by an `alembic` found on PATH)."""
    code = ("import os, sys; from mlcourse_utils.grading.graded import gradebook; "
            "before = os.environ['PATH']; "
            f"print(gradebook.totals({str(book)!r}, 'mle')[0]); "
            "sys.exit(0 if os.environ['PATH'] == before else 3)")
    env = dict(os.environ, PATH="/usr/bin:/bin")  # no venv scripts: no `alembic` to find
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          cwd=sup.ROOT)
    assert proc.returncode == 0, proc.stderr
    assert float(proc.stdout) > 0


def test_unreadable_databases_read_as_nothing(tmp_path):
    (tmp_path / "bad.db").write_text("not sqlite")
    assert gradebook.imported_count(tmp_path / "bad.db") == 0
    assert gradebook.manual_progress(tmp_path / "bad.db", "mle") is None


def test_gradebook_ids_are_safe_for_nbgrader_export():
    """nbgrader export writes ids unquoted: commas, quotes and line breaks would break rows and
    a leading = + - @ is a formula (by hand: each case below)."""
    from mlcourse_utils.grading.graded.gradebook import gradebook_id


    assert gradebook_id("alice") == "alice"
    assert gradebook_id("dave@uni.example") == "dave@uni.example"
    assert gradebook_id("Ana Lima") == "Ana Lima"
    assert gradebook_id("=1+2") == "'=1+2"
    assert gradebook_id("-2") == "'-2"
    for raw in ("smith, j", 'say "hi"', "tab\there"):
        safe = gradebook_id(raw)
        assert not any(c in safe for c in ',"\t') and safe.startswith(raw[:3])
    assert gradebook_id("a,b") != gradebook_id("a_b")


@pytest.mark.slow  # starts nbgrader (several seconds)
def test_a_gradebook_process_that_stops_is_reported_at_finish_and_writing_to_it_never_raises(
        tmp_path):
    book = gradebook.start(tmp_path / "gradebook.db", tmp_path / "no-such-source.ipynb", "mle")
    for n in range(200):  # more than a pipe holds once the process is gone
        book.write(f"s{n}", {"g": 1.0})
    error = book.finish()
    assert error is not None and "no-such-source.ipynb" in error
    assert book.finish() is not None  # asking again is harmless


@pytest.mark.slow  # starts nbgrader (about 15 s)
def test_scores_written_one_by_one_keep_every_student_but_the_one_that_failed(
        tmp_path, mle_assignment):
    source = sup.ROOT / "solutions" / "mle" / "mle.ipynb"
    full = {t.grade_id: t.points for t in mle_assignment.tests}
    book = gradebook.start(tmp_path / "gradebook.db", source, "mle",
                           [g for g, _ in mle_assignment.manual])
    book.write("zed", full)
    book.write("bob", {"no-such-cell": 1.0})
    book.write("amy", {gid: 0.0 for gid in full})
    error = book.finish()
    assert error is not None and "bob" in error and "zed" not in error
    top, scores, ungraded = gradebook.totals(tmp_path / "gradebook.db", "mle")
    assert scores["zed"] == pytest.approx(mle_assignment.max_score) and scores["amy"] == 0.0
    assert {"amy", "zed"} <= set(ungraded)  # (both still have the manual cells to grade)


@pytest.mark.slow  # the gradebook fixture starts nbgrader (about 15 s)
def test_overrides_are_nbgraders_own_and_count_in_its_totals(tmp_path, book, mle_assignment):
    """An override of a task is nbgrader's manual_score on its test cells: alice (every
    autograded point) gets 0 on two cells, =x (half) the full points of one; nbgrader's totals
    change by exactly that. Manual-grading progress and the work that blocks a re-grade stay
    as they were, and writing the overrides again without =x's withdraws it."""
    db = tmp_path / "gradebook.db"
    db.write_bytes(book.read_bytes())
    t1, t2 = mle_assignment.tests[:2]
    missing = gradebook.write_overrides(db, "mle", {"alice": {t1.grade_id: 0.0, t2.grade_id: 0.0},
                                                    "=x": {t1.grade_id: t1.points},
                                                    "ghost": {t1.grade_id: 1.0}})
    assert missing == ["ghost"]
    top = mle_assignment.max_score
    _, scores, _ = gradebook.totals(db, "mle")
    assert scores["alice"] == pytest.approx(top - t1.points - t2.points)
    assert scores["'=x"] == pytest.approx(top / 2 + t1.points / 2)
    assert gradebook.imported_count(db) == 0
    assert gradebook.manual_progress(db, "mle") == {g: (p, 0) for g, p in mle_assignment.manual}
    gradebook.write_overrides(db, "mle", {"alice": {t1.grade_id: 0.0}})
    _, scores, _ = gradebook.totals(db, "mle")
    assert scores["alice"] == pytest.approx(top - t1.points)
    assert scores["'=x"] == pytest.approx(top / 2)
