"""What graders hand in after `mlcourse grade`: the manual-grading pages, `mlcourse grade-import`
and `mlcourse export` (Canvas, Moodle) with the late policy.

One small `mle` class is graded once for the module: honest answers, an answer that attacks the
teaching assistant's browser (scripts, remote images, links, an SVG posing as an attachment), an
untouched derivation, a spreadsheet-formula student id, a folder named by e-mail, a submission
without a roster entry and an empty folder; with nbgrader timestamps (one naive, read in the
configured time zone) and one notebook's file time.
"""

from __future__ import annotations

import base64
import csv
import datetime as dt
import html
import json
import os
import re
import shutil
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

import assignment_support as sup
from mlcourse_utils.grading.lms import LatePolicy, read_config, read_roster
from mlcourse_utils.grading.manual import render_markdown
from mlcourse_utils.grading.notebook import load_assignment

NAME = "mle"
#: The first manually graded cell of the assignment (a derivation) and its points.
MANUAL, MANUAL_POINTS = load_assignment(NAME, sup.ROOT).manual[0]
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("handin")]


def _png(width=3, height=2):
    """A valid PNG (red pixels), built by hand."""
    def chunk(kind, data):
        return (len(data).to_bytes(4, "big") + kind + data
                + zlib.crc32(kind + data).to_bytes(4, "big"))
    rows = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n"
            + chunk(b"IHDR", width.to_bytes(4, "big") + height.to_bytes(4, "big")
                    + b"\x08\x02\x00\x00\x00")
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


PNG = base64.b64encode(_png()).decode()
SVG = base64.b64encode(b"<svg xmlns='http://www.w3.org/2000/svg' onload='alert(1)'/>").decode()

HOSTILE_ANSWER = (
    "The log-likelihood is $\\ell(\\btheta) = N_H \\log\\theta + N_T \\log(1-\\theta)$ and\n\n"
    "$$\\hat\\theta = \\frac{N_H}{N}$$\n\n"
    "ANSWER-MARKER <script>alert('xss')</script> <b onclick=alert(1)>bold</b>\n\n"
    "<img src=\"http://evil.example/track.png\"> ![remote](https://evil.example/r.png)\n\n"
    "[click](javascript:alert(1)) ![pasted](attachment:plot.png) ![svg](attachment:evil.svg)\n"
)


def _with_manual(nb, source, attachments=None):
    for cell in nb["cells"]:
        if sup.grade_id(cell) == MANUAL:
            cell["source"] = source
            if attachments:
                cell["attachments"] = attachments
    return nb


# Students: (folder, nested nbgrader layout, derivation answer, timestamp.txt or file time)
DUE = "2026-03-02T23:59:00+01:00"
CONFIG = f"""
timezone = "Europe/Berlin"
[late_penalty]
percent_per_day = 10
max_percent = 30
grace_minutes = 10
[assignments.mle]
due = {DUE}
canvas_column = "Maximum likelihood (4711)"
[assignments.mle.extensions]
carol = 2026-03-10T23:00:00+01:00
"""


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The class, graded once: ``(submissions, out, assignment)``."""
    tmp = tmp_path_factory.mktemp("handin")
    subs, out = tmp / "subs", tmp / "out"
    solution = sup.solution_answers(NAME)

    def submit(student, derivation, stamp=None, nested=False, attachments=None, mtime=None):
        nb = _with_manual(sup.make_submission(NAME, solution), derivation, attachments)
        path = sup.write_submission(subs, student, NAME, nb=nb, nested=nested)
        if stamp is not None:
            (path.parent / "timestamp.txt").write_text(stamp)
        if mtime is not None:
            os.utime(path, (mtime.timestamp(), mtime.timestamp()))

    submit("alice", HOSTILE_ANSWER, "2026-03-02 23:05:00+01:00",
           attachments={"plot.png": {"image/png": PNG}, "evil.svg": {"image/png": SVG}})
    submit("bob", "YOUR ANSWER HERE", "2026-03-04 10:00:00+01:00", nested=True)  # 2 days late
    submit("carol", "N_H / N, by the derivative.", None,                       # file time, extended
           mtime=dt.datetime(2026, 3, 9, 12, 0, tzinfo=dt.UTC))
    submit("=cmd|calc", "Setting $\\ell'(\\theta) = 0$ gives $N_H/N$.",
           "2026-03-03 00:30:00")  # naive: Berlin time, 31 minutes late, 10 minutes' grace
    submit("dave@uni.example", "theta = N_H / N", "2026-03-01 12:00:00+00:00")
    submit("ghost", "I am not on the roster.", "2026-03-01 12:00:00+00:00")
    (subs / "nothing").mkdir()
    before = {p: p.read_bytes() for p in subs.rglob("*") if p.is_file()}
    proc = sup.grade(NAME, subs, out, "--jobs", "2", "--timeout", "30")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert {p: p.read_bytes() for p in subs.rglob("*") if p.is_file()} == before, \
        "grading changed SUBMISSIONS"
    return subs, out, load_assignment(NAME, sup.ROOT)


# ------------------------------------------------------------------ manual-grading pages


def test_manual_page_shows_every_answer_and_the_rubric(graded):
    _, out, assignment = graded
    assert MANUAL in [gid for gid, _ in assignment.manual]
    for gid, _ in assignment.manual:
        assert ((out / "manual" / f"{gid}.html").is_file()
                and (out / "manual" / f"{gid}.csv").is_file())
    page = (out / "manual" / f"{MANUAL}.html").read_text(encoding="utf-8")
    students = json.loads((out / "results.json").read_text())["students"]
    for student in students:
        assert f'<span class="sid">{html.escape(student)}</span>' in page, student
    assert page.count('class="answer"') == len(students)
    # The rubric is the instructor's cell (this one has no MARK SCHEME markers).
    nb = sup.load(sup.ROOT / "solutions" / NAME / f"{NAME}.ipynb")
    instructor = next(sup.source(c) for c in nb["cells"] if sup.grade_id(c) == MANUAL)
    plain = max(re.findall(r"[A-Za-z][A-Za-z ,]{15,}[A-Za-z]", instructor), key=len)
    assert "model answer" in page and plain in page, plain
    assert "ANSWER-MARKER" in page and "unchanged from the release" in page
    assert "nothing was submitted" in page
    # Math is left for the local MathJax (with the book's macros) to typeset.
    assert ("\\(\\ell(\\btheta) = N_H \\log\\theta" in page
            and "\\[\\hat\\theta = \\frac{N_H}{N}\\]" in page)
    assert (out / "manual" / "mathjax" / "tex-svg-full.js").is_file()
    assert '"btheta"' in page


def test_manual_page_renders_nothing_hostile(graded):
    _, out, _ = graded
    page = (out / "manual" / f"{MANUAL}.html").read_text(encoding="utf-8")
    lowered = page.lower()
    assert "<script>alert" not in lowered and "onclick" not in lowered.replace("&lt;b onclick", "")
    assert "&lt;script&gt;" in page  # the student's HTML shows as text
    assert "javascript:" not in lowered.split("</head>")[1].replace("(javascript:alert(1))", "")
    assert 'src="http' not in lowered and "evil.example/r.png" not in lowered.replace(
        "https://evil.example/r.png)", "")
    assert f'src="data:image/png;base64,{PNG}"' in page, "the pasted PNG attachment is not shown"
    assert SVG not in page, "an SVG posing as a PNG was embedded"
    assert "Content-Security-Policy" in page and "default-src 'none'" in page


def test_render_markdown_sanitises():
    html = render_markdown("<iframe src=x></iframe> [a](data:text/html,x) "
                           "![i](data:image/png;base64,AAAA) **ok**")
    assert "<iframe" not in html and "data:text" not in html.replace("](data:text", "")
    assert "<strong>ok</strong>" in html
    assert 'src="data:image/png;base64,AAAA"' not in html  # not a PNG: dropped


@pytest.mark.skipif(shutil.which("chromium") is None, reason="Chromium is not installed")
def test_manual_page_typesets_math_offline_in_chromium(graded):
    from mlcourse_utils.book.chromium import Browser

    _, out, _ = graded
    with Browser(timeout=60) as browser:
        page = browser.open((out / "manual" / f"{MANUAL}.html").as_uri())
        found = page.evaluate(
            "(async () => { const t = Date.now(); while (!(window.MathJax && MathJax.startup && "
            "MathJax.startup.promise)) { if (Date.now() - t > 30000) return null; "
            "await new Promise(r => setTimeout(r, 50)); } await MathJax.startup.promise; return {"
            "typeset: document.querySelectorAll('mjx-container').length, errors: "
            "document.querySelectorAll('mjx-merror, [data-mjx-error]').length, scripts: "
            "document.scripts.length}; })()")
        remote = page.remote_requests()
    assert found is not None, "MathJax did not load from the page's folder"
    assert found["typeset"] >= 4 and found["errors"] == 0, found
    assert found["scripts"] == 2  # the MathJax configuration and MathJax: none from students
    assert not remote, remote


def _fill(out, points, path):
    rows = list(csv.DictReader(open(out / "manual" / f"{MANUAL}.csv", encoding="utf-8")))
    for row in rows:
        row["points"], row["comment"] = points.get(row["student_id"], ("", ""))
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, ["student_id", "grade_id", "points", "comment"])
        w.writeheader()
        w.writerows(rows)
    return rows


def _nbgrader_export(out, tmp_path):
    """Run `nbgrader export` on the graded folder; return {student: (score, max_score)}."""
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    target = tmp_path / "nbgrader-grades.csv"
    proc = subprocess.run([str(Path(sys.executable).with_name("nbgrader")), "export",
                           f"--CourseDirectory.root={out}",
                           f"--db=sqlite:///{out / 'gradebook.db'}", f"--to={target}"],
                          capture_output=True, text=True, cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    with open(target) as fh:
        return {r["student_id"]: (float(r["score"]), float(r["max_score"]))
                for r in csv.DictReader(fh) if r["assignment"] == NAME}


def test_filled_csv_round_trips_into_nbgrader_export(graded, tmp_path):
    _, out, assignment = graded
    csv_path = tmp_path / "filled.csv"
    rows = _fill(out, {"alice": ("2.5", "good, = sign fine"), "bob": ("0", "no answer"),
                       "'=cmd|calc": ("3", "")}, csv_path)
    assert {r["student_id"] for r in rows} >= {"alice", "'=cmd|calc"}, "formula id not neutralised"
    proc = subprocess.run([sup.MLCOURSE, "grade-import", str(out), str(csv_path)],
                          capture_output=True, text=True, cwd=sup.ROOT)
    assert proc.returncode == 0, proc.stderr
    manual_max = sum(p for _, p in assignment.manual)
    auto = sup.read_scores(out)[0]
    totals = _nbgrader_export(out, tmp_path)
    expected = {"alice": 2.5, "bob": 0.0, "=cmd|calc": 3.0, "carol": 0.0}
    for student, manual_points in expected.items():
        score, top = totals[student]
        assert top == pytest.approx(assignment.max_score + manual_max)
        assert score == pytest.approx(auto[student if student != "=cmd|calc" else "'=cmd|calc"][0]
                                      + manual_points), student
    # Re-importing a corrected value replaces it.
    _fill(out, {"alice": ("3", "")}, csv_path)
    assert subprocess.run([sup.MLCOURSE, "grade-import", str(out), str(csv_path)],
                          capture_output=True, cwd=sup.ROOT).returncode == 0
    assert _nbgrader_export(out, tmp_path)["alice"][0] == pytest.approx(auto["alice"][0] + 3)


BAD_ROWS = [
    (["mallory", MANUAL, "1", ""], "unknown student 'mallory'"),
    (["alice", "test_bernoulli_mle", "1", ""], "is not a manually graded cell"),
    (["alice", MANUAL, "4", ""],
     f"points '4' for alice must be a number from 0 to {MANUAL_POINTS:g}"),
    (["bob", MANUAL, "-1", ""],
     f"points '-1' for bob must be a number from 0 to {MANUAL_POINTS:g}"),
    (["carol", MANUAL, "many", ""],
     f"points 'many' for carol must be a number from 0 to {MANUAL_POINTS:g}"),
    (["ghost", MANUAL, "nan", ""],
     f"points 'nan' for ghost must be a number from 0 to {MANUAL_POINTS:g}"),
    (["dave@uni.example", MANUAL, "1", ""], "already has 2 points in another row"),
]


def test_grade_import_rejects_bad_rows_and_writes_nothing(graded, tmp_path):
    """Every bad row is named (file and line), and a file with one bad row imports nothing."""
    _, out, _ = graded
    db_before = (out / "gradebook.db").read_bytes()
    path = tmp_path / "bad.csv"
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["student_id", "grade_id", "points", "comment"])
        w.writerow(["dave@uni.example", MANUAL, "2", "a good row before the bad ones"])
        w.writerows(row for row, _ in BAD_ROWS)
    proc = subprocess.run([sup.MLCOURSE, "grade-import", str(out), str(path)],
                          capture_output=True, text=True, cwd=sup.ROOT)
    assert proc.returncode == 1 and "nothing was imported" in proc.stderr
    for line, (_, message) in enumerate(BAD_ROWS, start=3):
        assert f"line {line}: " in proc.stderr and message in proc.stderr, (message, proc.stderr)
    assert (out / "gradebook.db").read_bytes() == db_before


# ------------------------------------------------------------------ late policy and export


def test_submission_times_are_recorded(graded):
    _, out, _ = graded
    times = json.loads((out / "timestamps.json").read_text())
    assert times["bob"]["source"] == "timestamp.txt"  # nbgrader's layout: in the assignment folder
    assert times["carol"]["source"] == "file time"
    assert dt.datetime.fromisoformat(times["carol"]["time"]) == \
        dt.datetime(2026, 3, 9, 12, 0, tzinfo=dt.UTC)
    assert times["nothing"] == {"submitted": False, "time": None, "source": "none"}


def test_late_policy_by_hand():
    due = dt.datetime(2026, 3, 2, 23, 59, tzinfo=dt.UTC)
    rule = LatePolicy(10, 30, dt.timedelta(minutes=10))
    assert rule.percent(due + dt.timedelta(minutes=10), due) == (0, 0)
    assert rule.percent(due + dt.timedelta(minutes=11), due) == (10, 1)
    assert rule.percent(due + dt.timedelta(days=1, minutes=10), due) == (10, 1)
    assert rule.percent(due + dt.timedelta(days=1, minutes=11), due) == (20, 2)
    assert rule.percent(due + dt.timedelta(days=9), due) == (30, 9)
    assert rule.percent(due - dt.timedelta(days=1), due) == (0, 0)


ROSTER = """\
Student,ID,SIS User ID,SIS Login ID,Section,Email,student_id
"Smith-Jones, Alice",101,S-1,alice,A,alice@uni.example,alice
"Brown, Bob",102,S-2,bob,A,bob@uni.example,bob
"Carol, Renamed",103,S-3,carol,B,carol@uni.example,carol
"Formula, F",104,S-4,=cmd|calc,B,f@uni.example,=cmd|calc
"Brown, Dave",105,S-5,d.brown,B,dave@uni.example,d.brown
"Never, Nobody",106,S-6,nobody,B,nobody@uni.example,nobody
"Empty, Folder",107,S-7,nothing,A,nothing@uni.example,nothing
"""


def _export(graded, tmp_path, fmt, *extra):
    _, out, _ = graded
    (tmp_path / "due.toml").write_text(CONFIG)
    (tmp_path / "roster.csv").write_text(ROSTER)
    target = tmp_path / f"{fmt}.csv"
    proc = subprocess.run([sup.MLCOURSE, "export", str(out), "--format", fmt, "--roster",
                           str(tmp_path / "roster.csv"), "--config", str(tmp_path / "due.toml"),
                           "--out", str(target), *extra], capture_output=True, text=True,
                          cwd=sup.ROOT)
    assert proc.returncode == 0, proc.stderr
    with open(target, newline="") as fh:
        return list(csv.reader(fh)), proc.stdout


def test_canvas_export(graded, tmp_path):
    _, out, assignment = graded
    rows, stdout = _export(graded, tmp_path, "canvas")
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section",
                       "Maximum likelihood (4711)"]
    assert rows[1][0].strip() == "Points Possible"
    assert float(rows[1][5]) == assignment.max_score + sum(p for _, p in assignment.manual)
    body = {r[0]: r for r in rows[2:]}
    assert len(body) == 7  # every roster student, nobody else
    assert "ghost" not in json.dumps(rows)
    auto = {s.lstrip("'"): v for s, (v, _) in sup.read_scores(out)[0].items()}
    from mlcourse_utils.grading.lms import read_graded

    totals = read_graded(out).scores  # autograded + whatever manual points were imported
    assert totals["alice"] >= auto["alice"]
    # On time (alice, dave by e-mail), extended (carol), 2 days late (bob: 20 %), 31 minutes
    # late in Berlin time with 10 minutes' grace (=cmd|calc: 10 %), no submission (blank).
    expected = {"Smith-Jones, Alice": totals["alice"], "Brown, Bob": totals["bob"] * 0.8,
                "Carol, Renamed": totals["carol"], "Formula, F": totals["=cmd|calc"] * 0.9,
                "Brown, Dave": totals["dave@uni.example"]}
    for name, points in expected.items():
        assert float(body[name][5]) == pytest.approx(points, abs=0.005), name
    assert body["Never, Nobody"][5] == "" and body["Empty, Folder"][5] == ""
    assert body["Formula, F"][3] == "'=cmd|calc", "a formula cell reached the CSV"
    assert body["Brown, Dave"][1:5] == ["105", "S-5", "d.brown", "B"]
    assert "ghost" in stdout and "without a roster entry" in stdout
    assert "Never, Nobody" in stdout and "Empty, Folder" in stdout
    # The penalty is shown in the late students' feedback pages, once, and only there.
    bob = (out / "feedback" / "bob.html").read_text()
    assert bob.count("Late submission") == 1 and "20 %" in bob
    assert "Late submission" not in (out / "feedback" / "alice.html").read_text()
    assert "Late submission" not in (out / "feedback" / "carol.html").read_text()
    _export(graded, tmp_path, "canvas")  # exporting again replaces the section
    assert (out / "feedback" / "bob.html").read_text().count("Late submission") == 1


def test_moodle_export_with_zero_for_missing(graded, tmp_path):
    _, out, _ = graded
    rows, _ = _export(graded, tmp_path, "moodle", "--missing", "zero")
    assert rows[0] == ["Email address", "ID number", "Full name", "mle"]
    by_email = {r[0]: r for r in rows[1:]}
    assert set(by_email) == {"alice@uni.example", "bob@uni.example", "carol@uni.example",
                             "f@uni.example", "dave@uni.example", "nobody@uni.example",
                             "nothing@uni.example"}
    assert by_email["nobody@uni.example"][3] == "0" and by_email["nothing@uni.example"][3] == "0"
    assert by_email["f@uni.example"][1] == "'=cmd|calc"
    from mlcourse_utils.grading.lms import read_graded

    totals = read_graded(out).scores
    assert float(by_email["bob@uni.example"][3]) == pytest.approx(totals["bob"] * 0.8, abs=0.005)
    assert float(by_email["dave@uni.example"][3]) == pytest.approx(totals["dave@uni.example"],
                                                                    abs=0.005)


def test_export_errors_are_clear(graded, tmp_path):
    _, out, _ = graded
    (tmp_path / "roster.csv").write_text("Student,Section\nA,B\n")
    proc = subprocess.run([sup.MLCOURSE, "export", str(out), "--format", "canvas", "--roster",
                           str(tmp_path / "roster.csv"), "--out", str(tmp_path / "x.csv")],
                          capture_output=True, text=True, cwd=sup.ROOT)
    assert proc.returncode == 1 and "needs a column" in proc.stderr
    (tmp_path / "bad.toml").write_text("[late_penalty]\npercent_per_day = -5\n")
    with pytest.raises(ValueError, match="percent_per_day"):
        read_config(tmp_path / "bad.toml")
    (tmp_path / "dup.csv").write_text("name,email\nA,a@x\nB,A@X\n")
    from mlcourse_utils.grading.lms import match_roster

    with pytest.raises(ValueError, match="two students"):
        match_roster(read_roster(tmp_path / "dup.csv"), ["a@x"])
