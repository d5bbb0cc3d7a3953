"""The teaching assistant's round trip, as one scenario: Canvas's bulk download (a zip) → grade
→ manual points filled → grade-import → overrides after regrade requests (grade-import) →
feedback (pages and the zip for Canvas) → export with a late penalty → report → grade again,
with what each step wrote checked, one total on each page equal to the export's, and nothing a
teaching assistant wrote lost on the way (the overrides stay in force after grading again).

One small class of the `mle` assignment: alice submits the reference answers (every autograded
point), bob the released notebook untouched (none; Canvas marked his file late), and the roster
(Canvas's gradebook export) has a student who submitted nothing. The download also holds a file
that is no submission.
"""

from __future__ import annotations

import csv
import html
import json
import os
import re
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

    # 3b. Overrides after regrade requests: a file with one bad row imports nothing ...
    bad = _overrides(tmp_path / "bad.csv", [("bob", BOB_TASK, "1", "fine"),
                                            ("bob", ALICE_TASK, "99", "too many")])
    before = _tree(graded)
    proc = run("grade-import", graded, bad)
    assert proc.returncode == 1 and "nothing was imported" in proc.stderr
    assert f"{bad}, line 3: points 99 for bob / {ALICE_TASK} must be from 0 to " in proc.stderr
    assert _tree(graded) == before and not (graded / "overrides.csv").exists()
    # ... and good ones set the points everywhere: the record, the grade files, the pages.
    proc = run("grade-import", graded, _overrides(tmp_path / "regrades.csv", OVERRIDES))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "imported 2 overrides" in proc.stdout and "2 in force" in proc.stdout
    _check_overrides(graded, manual_total)
    total_alice = ASSIGNMENT.max_score + manual_total - ALICE_AUTO + 1
    total_bob = 1 + ASSIGNMENT.task_max(BOB_TASK)
    alice = (graded / "feedback" / "alice.html").read_text()
    bob = (graded / "feedback" / "bob.html").read_text()
    assert _stated_totals(alice) == [(f"{total_alice:g}", f"{total:g}")]
    assert _stated_totals(bob) == [(f"{total_bob:g}", f"{total:g}")]

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

    # 5. export: the assignment's column as Canvas names it, every roster student; bob's file
    # (marked late by Canvas, its time in the zip: 2 started days after the due date) loses
    # 20 % of all his points, overrides included. The page states the number of the file.
    (tmp_path / "due.toml").write_text(DUE)
    proc = _export(graded, tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = _rows(tmp_path / "canvas.csv")
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", COLUMN]
    assert float(rows[1][5]) == total
    body = {r[0]: r for r in rows[2:]}
    assert float(body["Smith-Jones, Alice"][5]) == total_alice
    assert body["Brown, Bob"][5] == f"{round(total_bob * 0.8, 2):g}"
    assert body["Never, Nobody"][5] == "" and "Never, Nobody" in proc.stdout
    assert "bob: marked late in the LMS's download: penalised 20 %" in proc.stdout
    assert "needs" not in proc.stdout  # no contradiction: the penalty was applied
    assert f"bob is 2 days late: penalty 20 % applied ({total_bob:g} -> " in proc.stdout
    assert "1 submission with manual cells still to grade (counted 0): bob" in proc.stdout
    assert "included for alice, bob" in proc.stdout
    lines = proc.stdout.splitlines()
    assert lines.index(next(x for x in lines if "submission times" in x)) < \
        lines.index(next(x for x in lines if "penalty 20 % applied" in x))
    assert stat.S_IMODE((tmp_path / "canvas.csv").stat().st_mode) == 0o666 & ~_umask()
    bob = (graded / "feedback" / "bob.html").read_text()
    assert _stated_totals(bob) == [(body["Brown, Bob"][5], f"{total:g}")]
    assert f"{total_bob:g} becomes {body['Brown, Bob'][5]} / {total:g}" in _text(bob)
    assert _stated_totals((graded / "feedback" / "alice.html").read_text()) == [
        (f"{total_alice:g}", f"{total:g}")]

    # 6. report: the overrides listed, the task scores and item analysis on the final points.
    proc = run("report", graded, "--out", tmp_path / "report", "--config", tmp_path / "due.toml")
    assert proc.returncode == 0, proc.stderr[-3000:]
    listed = _rows(tmp_path / "report" / "tables" / "mle_overrides.csv")
    assert sorted((r[0], r[1], float(r[2]), float(r[3])) for r in listed[1:]) == [
        ("alice", ALICE_TASK, 1.0, ALICE_AUTO), ("bob", BOB_TASK, ASSIGNMENT.task_max(BOB_TASK),
                                                 0.0)]
    tasks = {r["task"]: r for r in csv.DictReader(open(tmp_path / "report" / "tables" /
                                                       "mle_tasks.csv", newline=""))}
    assert int(tasks[ALICE_TASK]["overridden"]) == 1 and int(tasks[BOB_TASK]["overridden"]) == 1
    assert float(tasks[ALICE_TASK]["mean"]) == (1 + 0) / 2  # alice's override, bob's 0
    assert float(tasks[BOB_TASK]["mean"]) == ASSIGNMENT.task_max(BOB_TASK)  # both full

    # --force: graded again, the TA's manual work moved to kept/, nothing deleted; the
    # overrides stay in force, applied to the new results, the pages and the gradebook.
    proc = run("grade", "mle", download, "--out", graded, "--roster", tmp_path / "roster.csv",
               "--force")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "overrides: 2 overrides in" in proc.stderr and "applied again" in proc.stderr
    (kept,) = (graded / "kept").iterdir()
    assert sorted(p.name for p in kept.iterdir()) == sorted(
        [f"{gid}.csv" for gid, _ in ASSIGNMENT.manual] + ["gradebook.db"])
    assert before[f"manual/{ASSIGNMENT.manual[0][0]}.csv"] == \
        (kept / f"{ASSIGNMENT.manual[0][0]}.csv").read_bytes()
    _check_overrides(graded, manual_total)
    # The manual points went to kept/ with the old gradebook; the late penalty of the last
    # export stays on the pages, and the export writes the same number again.
    bob = (graded / "feedback" / "bob.html").read_text()
    bob_auto = ASSIGNMENT.task_max(BOB_TASK)
    assert _stated_totals(bob) == [(f"{round(bob_auto * 0.8, 2):g}", f"{total:g}")]
    proc = _export(graded, tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    body = {r[0]: r for r in _rows(tmp_path / "canvas.csv")[2:]}
    assert body["Brown, Bob"][5] == f"{round(bob_auto * 0.8, 2):g}"
    assert float(body["Smith-Jones, Alice"][5]) == ASSIGNMENT.max_score - ALICE_AUTO + 1
    assert _nbgrader_totals(graded) == {"alice": ASSIGNMENT.max_score - ALICE_AUTO + 1,
                                        "bob": bob_auto}

    # Withdrawing an override: delete its row from the record, then import the record.
    record = graded / "overrides.csv"
    kept_rows = [line for line in record.read_text().splitlines(keepends=True)
                 if not line.startswith("alice,")]
    record.write_text("".join(kept_rows))
    proc = run("grade-import", graded, record)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "1 in force" in proc.stdout
    grades, _ = sup.read_scores(graded)
    assert grades["alice"][0] == ASSIGNMENT.max_score and grades["bob"][0] == bob_auto
    assert "set by a teaching assistant" not in (graded / "feedback" / "alice.html").read_text()
    assert _nbgrader_totals(graded)["alice"] == ASSIGNMENT.max_score


#: Regrade requests: alice's first task was copied (1 point left), bob's last task was right
#: but ran into an exploration cell's error (full points).
ALICE_TASK, BOB_TASK = ASSIGNMENT.tasks[0], ASSIGNMENT.tasks[-1]
ALICE_AUTO = ASSIGNMENT.task_max(ALICE_TASK)  # alice submitted the reference answers
OVERRIDES = [("alice", ALICE_TASK, "1", "copied from the worked example (meeting on 3 March)"),
             ("bob", BOB_TASK, f"{ASSIGNMENT.task_max(BOB_TASK):g}",
              "regrade: the function is right, an exploration cell broke the run")]
DUE = '[late_penalty]\npercent_per_day = 10\n[assignments.mle]\ndue = 2026-03-02T23:59:00\n'


def _overrides(path, rows):
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["student_id", "task", "points", "reason"])
        w.writerows(rows)
    return path


def _rows(path):
    with open(path, newline="") as fh:
        return list(csv.reader(fh))


def _text(page):
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page)))


def _stated_totals(page):
    """Every total a page states ("Total: x / y")."""
    return re.findall(r"Total: (\d+(?:\.\d+)?) / (\d+(?:\.\d+)?)", _text(page))


def _export(graded, tmp_path):
    return run("export", graded, "--format", "canvas", "--roster", tmp_path / "roster.csv",
               "--out", tmp_path / "canvas.csv", "--canvas-assignment", COLUMN,
               "--config", tmp_path / "due.toml")


def _check_overrides(graded, manual_total):
    """The record, the grade files, results.json and both pages hold the two overrides."""
    record = {(r["student_id"], r["task"]): r for r in csv.DictReader(
        open(graded / "overrides.csv", newline="", encoding="utf-8"))}
    assert {k: (float(r["points"]), r["reason"], float(r["autograded"]), float(r["max_score"]))
            for k, r in record.items()} == {
        ("alice", ALICE_TASK): (1.0, OVERRIDES[0][3], ALICE_AUTO, ALICE_AUTO),
        ("bob", BOB_TASK): (ASSIGNMENT.task_max(BOB_TASK), OVERRIDES[1][3], 0.0,
                            ASSIGNMENT.task_max(BOB_TASK))}
    grades, tasks = sup.read_scores(graded)
    assert grades == {"alice": (ASSIGNMENT.max_score - ALICE_AUTO + 1, ASSIGNMENT.max_score),
                      "bob": (ASSIGNMENT.task_max(BOB_TASK), ASSIGNMENT.max_score)}
    assert tasks["alice"][ALICE_TASK] == (1, ALICE_AUTO)
    assert tasks["bob"][BOB_TASK] == (ASSIGNMENT.task_max(BOB_TASK),) * 2
    results = json.loads((graded / "results.json").read_text())["students"]
    assert results["alice"]["overrides"] == {ALICE_TASK: {"points": 1.0,
                                                          "reason": OVERRIDES[0][3]}}
    for student, task, autograded, (_, _, points, reason) in (
            ("alice", ALICE_TASK, ALICE_AUTO, OVERRIDES[0]),
            ("bob", BOB_TASK, 0, OVERRIDES[1])):
        page = _text((graded / "feedback" / f"{student}.html").read_text())
        assert (f"A teaching assistant set this task's points to {points} / "
                f"{ASSIGNMENT.task_max(task):g}, replacing the {autograded:g} the tests gave. "
                f"Reason: {reason}") in page, student


def _nbgrader_totals(graded):
    """nbgrader's own totals of the gradebook (its overrides included)."""
    from mlcourse_utils.grading.graded.gradebook import totals

    return {s: pytest.approx(v) for s, v in totals(graded / "gradebook.db", "mle")[1].items()}


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask
