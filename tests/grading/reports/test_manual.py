"""Manual grading offline (grading/reports/manual.py): the rubric without nbgrader's solution
markers, points and comments entered in the page and saved as the CSV that `grade-import` reads, and
a teaching assistant's work never replaced by grading again.

The page is written by `write_bundle` from answer fragments made here (no grading runs) and
driven in headless Chromium (skipped without it): the page's own script, under the page's
unchanged Content-Security-Policy, with the network blocked.
"""

from __future__ import annotations

import csv
import io
import json
import shutil
import sqlite3
import time

import pytest

import assignment_support as sup
from mlcourse_utils.grading.notebook import load_assignment
from mlcourse_utils.grading.reports import manual

ASSIGNMENT = load_assignment("mle", sup.ROOT)
GID, POINTS = ASSIGNMENT.manual[0]
STUDENTS = ["alice", "=cmd|calc", "smith, j"]
needs_chromium = pytest.mark.skipif(shutil.which("chromium") is None,
                                    reason="Chromium is not installed")


def test_the_rubric_has_no_solution_markers():
    cell = {"cell_type": "markdown", "source": "### BEGIN SOLUTION\nThe MLE is $N_H/N$.\n"
                                               "### END SOLUTION\n"}
    kind, text = manual.rubric(cell)
    assert kind == "model answer and grading notes" and text == "The MLE is $N_H/N$."
    scheme = {"cell_type": "markdown", "source": "answer\n=== BEGIN MARK SCHEME ===\n"
                                                 "1 point each\n=== END MARK SCHEME ===\n"}
    assert manual.rubric(scheme) == ("mark scheme", "1 point each")


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    """The manual-grading pages of three students (fragments written by hand)."""
    out = tmp_path_factory.mktemp("bundle")
    parts = out / "parts"
    for n, student in enumerate(STUDENTS):
        (parts / str(n)).mkdir(parents=True)
        for k in range(len(ASSIGNMENT.manual)):
            (parts / str(n) / f"{k}.html").write_text(f"<p>answer of {student}</p>")
    pages = manual.write_bundle(out, ASSIGNMENT, STUDENTS, sup.ROOT, parts, {})
    return out, pages


def test_the_page_shows_the_rubric_and_a_form_for_every_student(bundle):
    out, pages = bundle
    page = (out / "manual" / f"{GID}.html").read_text()
    assert "BEGIN SOLUTION" not in page and "END SOLUTION" not in page
    assert page.count('class="grade" data-student=') == len(STUDENTS)
    assert 'data-student="&#39;=cmd|calc"' in page  # as the CSV writes it (no formula)
    assert "script-src file: 'self'" in page and "<script>" not in page  # no inline script
    assert (out / "manual" / manual.GRADING_SCRIPT).is_file()


def _csv_rows(text):
    return list(csv.DictReader(io.StringIO(text)))


def _fill_script(values):
    """JavaScript that types ``values`` ({student: (points, comment)}) into the page."""
    return f"""(() => {{
  const values = {json.dumps(values)};
  for (const row of document.querySelectorAll('.grade[data-student]')) {{
    const v = values[row.dataset.student];
    if (!v) continue;
    row.querySelector('[name=points]').value = v[0];
    row.querySelector('[name=comment]').value = v[1];
    row.querySelector('[name=comment]').dispatchEvent(new Event('input', {{bubbles: true}}));
  }}
  return document.getElementById('progress').textContent;
}})()"""


@needs_chromium
def test_points_typed_in_the_page_are_saved_as_the_csv_grade_import_reads(bundle, tmp_path):
    from mlcourse_utils.book.chromium import Browser

    out, _ = bundle
    url = (out / "manual" / f"{GID}.html").as_uri()
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    values = {"alice": ["2.5", 'good; "quoted", and =SUM(A1)'], "'=cmd|calc": ["0", ""],
              "smith, j": ["", "a comment, points still to come"]}
    with Browser(timeout=60) as browser:
        page = browser.open(url)
        assert page.evaluate("typeof window.mlcourseManual") == "object"
        progress = page.evaluate(_fill_script(values))
        assert progress == f"2 / {len(STUDENTS)} graded"
        text = page.evaluate("window.mlcourseManual.csv()")
        # Points out of range are marked and block the download.
        bad = page.evaluate(_fill_script({"smith, j": [str(POINTS + 1), "too many"]}))
        assert "1 with points outside 0 to" in bad
        page.evaluate(_fill_script({"smith, j": ["", "a comment, points still to come"]}))
        # The Save button downloads the same file, named as grade-import expects.
        browser.call("Browser.setDownloadBehavior",
                     {"behavior": "allow", "downloadPath": str(downloads)})
        page.evaluate("document.getElementById('save-csv').click()")
        target = downloads / f"{GID}.csv"
        deadline = time.monotonic() + 30  # a wait for the file, not a timed assertion
        while not target.is_file() and time.monotonic() < deadline:
            time.sleep(0.1)
        # Typed values are kept in the browser: a reload shows them again.
        again = browser.open(url)
        kept = again.evaluate("document.querySelector('.grade[data-student=alice] "
                              "[name=comment]').value")
        remote = page.remote_requests() + again.remote_requests()
    assert not remote, remote
    assert kept == values["alice"][1]
    assert target.read_bytes().decode("utf-8") == text
    rows = _csv_rows(text)
    assert [r["student_id"] for r in rows] == ["alice", "'=cmd|calc", "smith, j"]
    assert {r["grade_id"] for r in rows} == {GID}
    # What grade-import makes of the file: points, comments (formula quote undone), the
    # student with only a comment not graded yet.
    filled = manual.read_filled([target], STUDENTS, dict(ASSIGNMENT.manual))
    assert filled == {("alice", GID): (2.5, 'good; "quoted", and =SUM(A1)'),
                      ("=cmd|calc", GID): (0.0, "")}


@needs_chromium
def test_a_saved_csv_can_be_loaded_back_into_the_page(bundle, tmp_path):
    from mlcourse_utils.book.chromium import Browser

    out, _ = bundle
    text = ('student_id,grade_id,points,comment\r\nalice,' + GID + ',1,"line one\nline two"\r\n'
            'smith,other_cell,3,ignored\r\n')
    with Browser(timeout=60) as browser:
        page = browser.open((out / "manual" / f"{GID}.html").as_uri())
        page.evaluate(f"window.mlcourseManual.load({json.dumps(text)})")
        comment = page.evaluate("document.querySelector('.grade[data-student=alice] "
                                "[name=comment]').value")
        message = page.evaluate("document.getElementById('message').textContent")
    assert comment == "line one\nline two" and message == "loaded 1 rows"


def test_comments_written_with_a_formula_quote_are_read_back_without_it(tmp_path):
    path = tmp_path / "filled.csv"
    path.write_text(f"student_id,grade_id,points,comment\nalice,{GID},1,'=not a formula\n"
                    f"bob,{GID},2,'plain quote kept\n")
    rows = manual.read_filled([path], ["alice", "bob"], dict(ASSIGNMENT.manual))
    assert rows[("alice", GID)][1] == "=not a formula"
    assert rows[("bob", GID)][1] == "'plain quote kept"


def _gradebook(path, scores=(), comments=(), overrides=()):
    """A database with nbgrader's tables that hold a teaching assistant's work: ``scores`` on
    a manually graded cell (a grade cell that is also a solution cell), ``overrides`` on a
    test cell (nbgrader's override of an autograded cell), comments."""
    with sqlite3.connect(path) as con:
        con.execute("CREATE TABLE base_cell (id TEXT, name TEXT, notebook_id TEXT)")
        con.execute("CREATE TABLE solution_cells (id TEXT)")
        con.executemany("INSERT INTO base_cell VALUES (?, ?, 'nb')",
                        [("g-manual", GID), ("s-manual", GID), ("g-test", "test_x")])
        con.execute("INSERT INTO solution_cells VALUES ('s-manual')")
        con.execute("CREATE TABLE grade (id TEXT, cell_id TEXT, manual_score FLOAT)")
        con.execute("CREATE TABLE comment (id TEXT, manual_comment TEXT)")
        con.executemany("INSERT INTO grade VALUES (?, 'g-manual', ?)",
                        [(str(i), s) for i, s in enumerate(scores)])
        con.executemany("INSERT INTO grade VALUES (?, 'g-test', ?)",
                        [(f"o{i}", s) for i, s in enumerate(overrides)])
        con.executemany("INSERT INTO comment VALUES (?, ?)", [(str(i), c) for i, c in
                                                              enumerate(comments)])
    return path


def test_a_teaching_assistants_work_is_found_and_moved_aside_not_deleted(tmp_path):
    out = tmp_path / "graded"
    (out / "manual").mkdir(parents=True)
    blank = f"student_id,grade_id,points,comment\nalice,{GID},,\n"
    (out / "manual" / "blank.csv").write_text(blank)
    # Overrides of autograded cells are not work that grading replaces: it applies them again.
    _gradebook(out / "gradebook.db", scores=[None, None], comments=[None, ""], overrides=[3.0])
    assert manual.teaching_assistant_work(out) == []  # nothing filled yet: grading may replace
    filled = f"student_id,grade_id,points,comment\nalice,{GID},2,ok\nbob,{GID},,\n"
    (out / "manual" / f"{GID}.csv").write_text(filled)
    (out / "gradebook.db").unlink()
    _gradebook(out / "gradebook.db", scores=[2.0, None], comments=["fine"])
    found = manual.teaching_assistant_work(out)
    assert len(found) == 2 and "(1 filled row)" in found[0] and "gradebook.db (2 " in found[1]
    moved = manual.set_aside(out)
    assert len(moved) == 2
    (kept,) = (out / "kept").iterdir()
    assert (kept / f"{GID}.csv").read_text() == filled
    assert (kept / "gradebook.db").is_file() and not (out / "gradebook.db").exists()
    assert (out / "manual" / "blank.csv").read_text() == blank  # not a TA's work: left
    assert manual.teaching_assistant_work(out) == []
