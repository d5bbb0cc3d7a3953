"""The teaching assistant's round trip, as one scenario: Canvas's bulk download (a zip) → grade
→ manual points filled → grade-import → feedback (pages and the zip for Canvas) → export, with
what each step wrote checked, and nothing a teaching assistant wrote lost on the way.

One small class of the `mle` assignment: alice submits the reference answers (every autograded
point), bob the released notebook untouched (none; Canvas marked his file late), and the roster
(Canvas's gradebook export) has a student who submitted nothing. The download also holds a file
that is no submission.
"""

from __future__ import annotations

import csv
import json
import os
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import assignment_support as sup
from mlcourse_utils.grading.notebook import load_assignment

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("roundtrip")]
ASSIGNMENT = load_assignment("mle", sup.ROOT)
COLUMN = "Maximum likelihood (4711)"
ROSTER = """\
Student,ID,SIS User ID,SIS Login ID,Section
    Points Possible,,,,
"Smith-Jones, Alice",101,S-1,alice,A
"Brown, Bob",102,S-2,bob,A
"Never, Nobody",106,S-6,nobody,B
"""
#: Points a teaching assistant gives by hand: {student: {grade_id: (points, comment)}}.
MANUAL = {"alice": {gid: (top, f"all of {gid}, well argued") for gid, top in ASSIGNMENT.manual},
          "bob": {ASSIGNMENT.manual[0][0]: (1.0, "the idea, but no derivation")}}


def run(*args, cwd=sup.ROOT):
    return subprocess.run([sup.MLCOURSE, *map(str, args)], capture_output=True, text=True,
                          cwd=cwd)


def _download(tmp):
    """Canvas's submissions.zip: ``login[_late]_userid_attachmentid_filename``."""
    alice = sup.make_submission("mle", sup.solution_answers("mle"))
    bob = sup.release_notebook("mle")
    path = tmp / "submissions.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(zipfile.ZipInfo("smithjonesalice_101_9001_mle.ipynb", (2026, 3, 2, 20, 0, 0)),
                   json.dumps(alice))
        z.writestr(zipfile.ZipInfo("brownbob_late_102_9002_mle-1.ipynb", (2026, 3, 4, 9, 0, 0)),
                   json.dumps(bob))
        z.writestr("smithjonesalice_101_9003_notes.txt", "not a notebook")
        z.writestr("readme.txt", "not a submission")
    return path


def _fill(csv_path, gid):
    with open(csv_path, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    for row in rows:
        points, comment = MANUAL.get(row["student_id"], {}).get(gid, ("", ""))
        row["points"], row["comment"] = str(points), comment
    with open(csv_path, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, ["student_id", "grade_id", "points", "comment"])
        w.writeheader()
        w.writerows(rows)


def _tree(folder):
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file()}


def test_round_trip(tmp_path):
    download = _download(tmp_path)
    zip_bytes = download.read_bytes()
    (tmp_path / "roster.csv").write_text(ROSTER)
    graded = tmp_path / "graded"
    manual_total = sum(top for _, top in ASSIGNMENT.manual)

    # 1. grade: the download is read through the roster, its extra files named.
    proc = run("grade", "mle", download, "--out", graded, "--roster", tmp_path / "roster.csv")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "readme.txt" in proc.stderr and "notes.txt" in proc.stderr
    assert "intake: Canvas download: 2 of 3 roster students matched" in proc.stderr
    assert "1 resubmission taken (bob: mle-1.ipynb)" in proc.stderr
    grades, _ = sup.read_scores(graded)
    assert grades == {"alice": (ASSIGNMENT.max_score, ASSIGNMENT.max_score),
                      "bob": (0.0, ASSIGNMENT.max_score)}
    intake = json.loads((graded / "intake.json").read_text())
    assert {s: (e["user_id"], e["attachment_id"], e["late"])
            for s, e in intake["students"].items()} == {"alice": ("101", "9001", False),
                                                        "bob": ("102", "9002", True)}
    times = json.loads((graded / "timestamps.json").read_text())
    assert times["bob"]["time"] == "2026-03-04T09:00:00" and times["bob"]["lms_late"]
    for gid, _ in ASSIGNMENT.manual:
        with open(graded / "manual" / f"{gid}.csv", newline="") as fh:
            assert [(r["student_id"], r["points"]) for r in csv.DictReader(fh)] == [
                ("alice", ""), ("bob", "")]
    for page in (graded / "feedback").iterdir():
        assert stat.S_IMODE(page.stat().st_mode) == 0o666 & ~_umask()
    assert download.read_bytes() == zip_bytes  # the download is never changed

    # 2. The TA fills the CSVs next to the pages; grading again into the folder is refused.
    for gid, _ in ASSIGNMENT.manual:
        _fill(graded / "manual" / f"{gid}.csv", gid)
    before = _tree(graded)
    proc = run("grade", "mle", download, "--out", graded, "--roster", tmp_path / "roster.csv")
    assert proc.returncode == 1 and "--force" in proc.stderr
    assert f"{ASSIGNMENT.manual[0][0]}.csv (2 filled rows)" in proc.stderr
    assert _tree(graded) == before

    # 3. grade-import: points into the gradebook, every feedback page written again with them.
    proc = run("grade-import", graded, *sorted((graded / "manual").glob("*.csv")))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "wrote 2 feedback pages" in proc.stdout and "still to grade by hand: bob" in proc.stdout
    alice = (graded / "feedback" / "alice.html").read_text()
    total = ASSIGNMENT.max_score + manual_total
    assert f"Total: {total:g} / {total:g}" in alice
    assert all(f"all of {gid}, well argued" in alice for gid, _ in ASSIGNMENT.manual)
    bob = (graded / "feedback" / "bob.html").read_text()
    assert f"Total: 1 / {total:g}" in bob and "the idea, but no derivation" in bob
    assert '<span class="warn">not graded yet</span>' in bob
    proc = run("grade", "mle", download, "--out", graded, "--roster", tmp_path / "roster.csv")
    assert proc.returncode == 1 and "gradebook.db" in proc.stderr  # imported points kept too

    # nbgrader's own feedback, run in the folder, goes elsewhere (one format in feedback/).
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    nbgrader = subprocess.run([str(Path(sys.executable).with_name("nbgrader")),
                               "generate_feedback", "mle"], capture_output=True, text=True,
                              cwd=graded, env=env)
    assert nbgrader.returncode == 0, nbgrader.stderr[-2000:]
    assert sorted(p.name for p in (graded / "feedback").iterdir()) == ["alice.html", "bob.html"]
    assert (graded / "nbgrader_feedback" / "alice").is_dir()

    # 4. feedback: the pages again (same content) and the zip for Canvas's bulk upload.
    proc = run("feedback", graded, "--lms", "canvas", "--out", tmp_path / "feedback.zip")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "2 feedback files" in proc.stdout and "not in the zip" not in proc.stdout
    assert (graded / "feedback" / "alice.html").read_text() == alice
    with zipfile.ZipFile(tmp_path / "feedback.zip") as z:
        names = sorted(z.namelist())
        assert names == ["brownbob_102_9002_feedback-mle.html",
                         "smithjonesalice_101_9001_feedback-mle.html"]
        assert z.read(names[1]).decode() == alice

    # 5. export: the assignment's column as Canvas names it, every roster student.
    proc = run("export", graded, "--format", "canvas", "--roster", tmp_path / "roster.csv",
               "--out", tmp_path / "canvas.csv", "--canvas-assignment", COLUMN)
    assert proc.returncode == 0, proc.stderr[-3000:]
    with open(tmp_path / "canvas.csv", newline="") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", COLUMN]
    assert float(rows[1][5]) == total
    body = {r[0]: r for r in rows[2:]}
    assert float(body["Smith-Jones, Alice"][5]) == total
    assert float(body["Brown, Bob"][5]) == 1.0
    assert body["Never, Nobody"][5] == "" and "Never, Nobody" in proc.stdout
    assert "marked late in the LMS's download: bob" in proc.stdout
    assert "1 submission with manual cells still to grade: bob" in proc.stdout
    assert stat.S_IMODE((tmp_path / "canvas.csv").stat().st_mode) == 0o666 & ~_umask()

    # --force: graded again, the TA's work moved to kept/, nothing deleted.
    proc = run("grade", "mle", download, "--out", graded, "--roster", tmp_path / "roster.csv",
               "--force")
    assert proc.returncode == 0, proc.stderr[-3000:]
    (kept,) = (graded / "kept").iterdir()
    assert sorted(p.name for p in kept.iterdir()) == sorted(
        [f"{gid}.csv" for gid, _ in ASSIGNMENT.manual] + ["gradebook.db"])
    assert before[f"manual/{ASSIGNMENT.manual[0][0]}.csv"] == \
        (kept / f"{ASSIGNMENT.manual[0][0]}.csv").read_bytes()


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask
