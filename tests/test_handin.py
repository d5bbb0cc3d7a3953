"""What graders hand in after `mlcourse grade`: the manual-grading pages, `mlcourse grade-import`
and `mlcourse export` (Canvas, Moodle) with the late policy.

One small `mle` class is graded once for the module: honest answers, an answer that attacks the
teaching assistant's browser (scripts, remote images, links, `javascript:` links inside
mathematics, an SVG posing as an attachment), an untouched derivation, a spreadsheet-formula
student id, an id with a comma, a folder named by e-mail, a submission without a roster entry, an
empty folder, two folders whose names differ only in case, a derivation turned into a code cell
whose saved output is not text, a notebook nested too deeply to read, and a `timestamp.txt` with an
impossible UTC offset. Submission times for the late policy come from the instructor's
`--times TIMES.csv` (the LMS's record); nbgrader's `timestamp.txt` (one of them lying about a late
submission, one naive in the configured time zone) and file times only with
`--times-from-submission`.
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
from mlcourse_utils.grading.graded.late import LatePolicy, read_config
from mlcourse_utils.grading.intake.roster import read_roster
from mlcourse_utils.grading.notebook import load_assignment
from mlcourse_utils.grading.reports.manual import render_markdown

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
    "Links in mathematics: $\\href{javascript:alert(document.domain)}{\\theta_{click}}$, "
    "$\\href{ jAvAsCrIpT:alert(3)}{x}$, $\\href{data:text/html,<script>alert(4)</script>}{y}$ and "
    "$\\href{https://example.org/ok}{\\text{fine}}$; "
    "in text \\\\(\\href{javascript:alert(5)}{z}\\\\)\n\n"
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
#: The learning management system's record (trusted): bob was two days late, whatever his
#: timestamp.txt says; =cmd|calc 31 minutes (naive: Berlin time; 10 minutes' grace).
TIMES = """\
student_id,submitted_at
alice,2026-03-02 23:05:00+01:00
bob,2026-03-04 10:00:00+01:00
carol,2026-03-09 12:00:00+00:00
'=cmd|calc,2026-03-03 00:30:00
dave@uni.example,2026-03-01 12:00:00+00:00
"""
#: Students whose notebooks break what comes after grading (they must cost only themselves).
DEEP = "deep_nesting"
ODD = "odd_output"
TWINS = ("Eve", "eve")
COMMA = "smith, j"


def _deeply_nested(nb, depth=100_000):
    """The notebook's JSON with a value nested ``depth`` levels deep (as text)."""
    text = json.dumps(nb)
    assert text.count('"nbformat": 4') == 1
    return text.replace('"nbformat": 4', '"deep": ' + "[" * depth + "]" * depth
                        + ', "nbformat": 4').encode()


def _odd_output(nb):
    """The derivation as a code cell whose saved output's text is not a string."""
    for cell in nb["cells"]:
        if sup.grade_id(cell) == MANUAL:
            cell.update(cell_type="code", execution_count=1, source="print('derivation')",
                        outputs=[{"output_type": "stream", "name": "stdout",
                                  "text": [1, {"a": 2}, None, "ODD-OUTPUT-MARKER"]}])
    return nb


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The class, graded once: ``(submissions, out, assignment)``."""
    tmp = tmp_path_factory.mktemp("handin")
    subs, out = tmp / "subs", tmp / "out"
    solution = sup.solution_answers(NAME)

    def submit(student, derivation, stamp=None, nested=False, attachments=None, mtime=None,
               change=None, raw=None):
        nb = _with_manual(sup.make_submission(NAME, solution), derivation, attachments)
        nb = change(nb) if change else nb
        path = sup.write_submission(subs, student, NAME, nb=nb, nested=nested,
                                    raw=raw(nb) if raw else None)
        if stamp is not None:
            (path.parent / "timestamp.txt").write_text(stamp)
        if mtime is not None:
            os.utime(path, (mtime.timestamp(), mtime.timestamp()))

    submit("alice", HOSTILE_ANSWER, "2026-03-02 23:05:00+01:00",
           attachments={"plot.png": {"image/png": PNG}, "evil.svg": {"image/png": SVG}})
    submit("bob", "YOUR ANSWER HERE", "2026-03-01 10:00:00+01:00", nested=True)  # a lie
    submit("carol", "N_H / N, by the derivative.", None,                       # file time, extended
           mtime=dt.datetime(2026, 3, 9, 12, 0, tzinfo=dt.UTC))
    submit("=cmd|calc", "Setting $\\ell'(\\theta) = 0$ gives $N_H/N$.",
           "2026-03-03 00:30:00")  # naive: Berlin time, 31 minutes late, 10 minutes' grace
    submit("dave@uni.example", "theta = N_H / N", "2026-03-01 12:00:00+00:00")
    submit("ghost", "I am not on the roster.", "2026-03-01 12:00:00+00:00")
    submit(COMMA, "A comma in my id.", "2026-03-01 12:00:00+00:00")
    submit(ODD, "", "2026-03-01 12:00:00+99:00", change=_odd_output)
    submit(DEEP, "Deep.", "2026-03-01 12:00:00+00:00", raw=_deeply_nested)
    for twin in TWINS:
        submit(twin, f"I am {twin}.", "2026-03-01 12:00:00+00:00")
    (subs / "nothing").mkdir()
    before = {p: p.read_bytes() for p in subs.rglob("*") if p.is_file()}
    proc = sup.grade(NAME, subs, out, "--jobs", "2", "--timeout", "30")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert {p: p.read_bytes() for p in subs.rglob("*") if p.is_file()} == before, \
        "grading changed SUBMISSIONS"
    return subs, out, load_assignment(NAME, sup.ROOT)


def test_broken_notebooks_cost_only_their_students(graded):
    """A notebook nested too deeply to read, and two folders that differ only in case, get zero
    with a reason; the honest students next to them keep full marks (48, the sum of the mle
    test cells' points)."""
    _, out, assignment = graded
    grades, _ = sup.read_scores(out)
    for student in ("alice", "bob", "carol", "'=cmd|calc", "dave@uni.example", ODD):
        assert grades[student] == (assignment.max_score, assignment.max_score), student
    for student in (DEEP, *TWINS):
        assert grades[student][0] == 0, student
    assert "nested too deeply" in (out / "feedback" / f"{DEEP}.html").read_text()
    eve = html.unescape((out / "feedback" / "eve.html").read_text())
    assert "'Eve' and 'eve' differ only in case" in eve


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
    assert "ODD-OUTPUT-MARKER" in page  # saved output of list items that are not all text
    # Every student whose answer cannot be shown has the reason in its place.
    articles = dict(re.findall(r'<span class="sid">(.*?)</span>(.*?)</article>', page, re.S))
    assert "No answer: no notebook was submitted" in articles["nothing"]
    assert "No answer: the notebook could not be read (nested too deeply)" in articles[DEEP]
    for twin in TWINS:
        assert "differ only in case" in html.unescape(articles[twin]), twin
    # Math is left for the local MathJax (with the book's macros) to typeset.
    assert ("\\(\\ell(\\btheta) = N_H \\log\\theta" in page
            and "\\[\\hat\\theta = \\frac{N_H}{N}\\]" in page)
    for name in ("tex-svg-full.js", "ui/safe.js", "config.js"):
        assert (out / "manual" / "mathjax" / name).is_file(), name
    assert '"btheta"' in (out / "manual" / "mathjax" / "config.js").read_text()


def _outside_math(page):
    """The page's body without the TeX of math elements (which MathJax reads, not the browser)."""
    body = page.split("</head>", 1)[1]
    return re.sub(r'<(span|div) class="math[^"]*">.*?</\1>', "", body, flags=re.S)


def test_manual_page_renders_nothing_hostile(graded):
    _, out, _ = graded
    page = (out / "manual" / f"{MANUAL}.html").read_text(encoding="utf-8")
    lowered = page.lower()
    assert "<script>alert" not in lowered and "onclick" not in lowered.replace("&lt;b onclick", "")
    assert "&lt;script&gt;" in page  # the student's HTML shows as text
    assert not re.search(r"""(href|src)\s*=\s*["']?\s*(javascript|data:text|vbscript)""", lowered)
    assert "javascript:" not in _outside_math(lowered).replace("(javascript:alert(1))", "") \
        .replace("\\(\\href{javascript:alert(5)}{z}\\)", "")
    assert 'src="http' not in lowered and "evil.example/r.png" not in lowered.replace(
        "https://evil.example/r.png)", "")
    assert f'src="data:image/png;base64,{PNG}"' in page, "the pasted PNG attachment is not shown"
    assert SVG not in page, "an SVG posing as a PNG was embedded"
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', page).group(1)
    assert "default-src 'none'" in csp
    script_src = re.search(r"script-src ([^;]*)", csp).group(1)
    assert "'unsafe-inline'" not in script_src and "'unsafe-eval'" not in script_src
    assert re.findall(r"<script\b[^>]*>", page) == [
        '<script src="mathjax/config.js">', '<script defer src="mathjax/tex-svg-full.js">',
        '<script defer src="grading.js">']  # the page's own: points and comments to the CSV


def test_render_markdown_sanitises():
    html = render_markdown("<iframe src=x></iframe> [a](data:text/html,x) "
                           "![i](data:image/png;base64,AAAA) **ok**")
    assert "<iframe" not in html and "data:text" not in html.replace("](data:text", "")
    assert "<strong>ok</strong>" in html
    assert 'src="data:image/png;base64,AAAA"' not in html  # not a PNG: dropped


#: Run in a page after MathJax has typeset it (if it has MathJax): the links and event handlers
#: in the rendered DOM, then a `javascript:` link and an inline handler are clicked: the content
#: security policy must stop both (they would change the title).
PROBE = """(async () => {
  const t = Date.now();
  if (document.querySelector('script[src*="mathjax"]')) {
    while (!(window.MathJax && MathJax.startup && MathJax.startup.promise)) {
      if (Date.now() - t > 30000) return null;
      await new Promise(r => setTimeout(r, 50));
    }
    await MathJax.startup.promise;
  }
  const title = document.title;
  const safe = !!(window.MathJax && MathJax.startup && MathJax.startup.document
                  && MathJax.startup.document.safe);
  const links = [...document.querySelectorAll('a, [href]')].map(e => e.getAttribute('href')
      || e.getAttributeNS('http://www.w3.org/1999/xlink', 'href') || '');
  const handlers = [...document.querySelectorAll('*')].filter(
      e => [...e.attributes].some(a => a.name.toLowerCase().startsWith('on'))).length;
  const a = document.createElement('a');
  a.href = "javascript:document.title='pwned by a link'";
  document.body.appendChild(a);
  a.click();
  const d = document.createElement('div');
  d.setAttribute('onclick', "document.title='pwned by a handler'");
  document.body.appendChild(d);
  d.click();
  await new Promise(r => setTimeout(r, 300));
  return {typeset: document.querySelectorAll('mjx-container').length,
          errors: document.querySelectorAll('mjx-merror, [data-mjx-error]').length,
          scripts: [...document.scripts].map(s => s.src ? s.src.split('/').slice(-2).join('/')
                                                         : 'inline'),
          links: links, handlers: handlers, title_kept: document.title === title, safe: safe,
          math_links: document.querySelectorAll('mjx-container a, mjx-container [href]').length,
          text: document.body.innerText};
})()"""


def _probe(url):
    from mlcourse_utils.book.chromium import Browser

    with Browser(timeout=60) as browser:
        page = browser.open(url)
        found = page.evaluate(PROBE)
        remote = page.remote_requests()
    assert found is not None, "MathJax did not load from the page's folder"
    assert not remote, remote
    return found


needs_chromium = pytest.mark.skipif(shutil.which("chromium") is None,
                                    reason="Chromium is not installed")


@needs_chromium
def test_manual_page_typesets_math_safely_in_chromium(graded):
    """After MathJax: the math is typeset, with MathJax's safe filter on and without the `html`
    package, so `\\href` makes no link at all (no `javascript:` or `data:` one either); the
    escaped `\\(...\\)` in text is left as text, no element has an event handler, and the
    policy stops both a `javascript:` link and an inline handler."""
    _, out, _ = graded
    found = _probe((out / "manual" / f"{MANUAL}.html").as_uri())
    assert found["typeset"] >= 4 and found["errors"] == 0, found
    assert found["scripts"] == ["mathjax/config.js", "mathjax/tex-svg-full.js",
                                "manual/grading.js", "ui/safe.js"]
    bad = [h for h in found["links"] if re.match(r"\s*(javascript|data|vbscript):", h, re.I)]
    assert not bad, bad
    assert found["safe"] and found["math_links"] == 0, found
    assert "\\href{javascript:alert(5)}{z}" in found["text"]
    assert found["handlers"] == 0 and found["title_kept"], found


@needs_chromium
def test_feedback_and_similarity_pages_run_no_script_in_chromium(graded, tmp_path):
    """The feedback page and the similarity page carry a policy without any script: a clicked
    `javascript:` link and an inline handler do nothing."""
    subs, out, _ = graded
    proc = subprocess.run([sup.MLCOURSE, "similarity", NAME, str(subs), "--out",
                           str(tmp_path)], capture_output=True, text=True, cwd=sup.ROOT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    for page in (out / "feedback" / "alice.html", tmp_path / "similarity.html"):
        text = page.read_text(encoding="utf-8")
        assert "script-src 'none'" in text and "<script" not in text.lower(), page
        found = _probe(page.as_uri())
        assert found["scripts"] == [] and found["handlers"] == 0, (page, found)
        assert found["title_kept"], page


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
    # nbgrader writes its CSV without quoting: every id must keep rows whole and formula-free.
    with open(target, newline="") as fh:
        rows = list(csv.reader(fh))
    header, body = rows[0], rows[1:]
    assert all(len(row) == len(header) for row in body), "a student id broke a row"
    for row in body:
        assert not any(field.startswith(("=", "+", "-", "@")) for field in row), row
    return {r["student_id"]: (float(r["score"]), float(r["max_score"]))
            for r in (dict(zip(header, row, strict=True)) for row in body)
            if r["assignment"] == NAME}


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
    assert len(totals) == len(auto)
    assert [s for s in totals if s.startswith("smith_ j~")], "the comma was not replaced"
    expected = {"alice": 2.5, "bob": 0.0, "'=cmd|calc": 3.0, "carol": 0.0}
    for student, manual_points in expected.items():
        score, top = totals[student]
        assert top == pytest.approx(assignment.max_score + manual_max)
        assert score == pytest.approx(auto[student][0] + manual_points), student
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


def test_submission_times_are_recorded_one_student_at_a_time(graded):
    """Times found in the submissions are recorded (for `--times-from-submission`); an impossible
    UTC offset (+99:00) is that student's problem, and the others keep their times."""
    _, out, _ = graded
    times = json.loads((out / "timestamps.json").read_text())
    assert times["bob"]["source"] == "timestamp.txt"  # nbgrader's layout: in the assignment folder
    assert times["carol"]["source"] == "file time"
    assert dt.datetime.fromisoformat(times["carol"]["time"]) == \
        dt.datetime(2026, 3, 9, 12, 0, tzinfo=dt.UTC)
    assert times["nothing"] == {"submitted": False, "time": None, "source": "none"}
    assert times[ODD]["time"] is None and "UTC offset" in times[ODD]["problem"]
    assert dt.datetime.fromisoformat(times["dave@uni.example"]["time"]) == \
        dt.datetime(2026, 3, 1, 12, 0, tzinfo=dt.UTC)


def test_late_policy_by_hand():
    due = dt.datetime(2026, 3, 2, 23, 59, tzinfo=dt.UTC)
    rule = LatePolicy(10, 30, dt.timedelta(minutes=10))
    assert rule.percent(due + dt.timedelta(minutes=10), due) == (0, 0)
    assert rule.percent(due + dt.timedelta(minutes=11), due) == (10, 1)
    assert rule.percent(due + dt.timedelta(days=1, minutes=10), due) == (10, 1)
    assert rule.percent(due + dt.timedelta(days=1, minutes=11), due) == (20, 2)
    assert rule.percent(due + dt.timedelta(days=9), due) == (30, 9)
    assert rule.percent(due - dt.timedelta(days=1), due) == (0, 0)


@pytest.mark.parametrize("text,problem", [
    ("2026-03-01 12:00:00+99:00", "UTC offset"),   # dateutil reads it; no zone is 99 h off
    ("2026-03-01 12:00:00+15:00", "UTC offset"),   # real offsets lie within 14 hours
    ("1900-01-01 00:00:00+00:00", "year 1900"),
    ("9999-12-31 23:59:00", "year 9999"),
    ("yesterday-ish", "not a date"),
    ("2026-03-01 12:00:00-12:00", None),
    ("2026-03-01 12:00:00", None),
])
def test_impossible_times_are_named(text, problem):
    from mlcourse_utils.grading.intake.times import parse_time

    when, reason = parse_time(text)
    if problem is None:
        assert reason is None and when is not None
    else:
        assert when is None and problem in reason


ROSTER = """\
Student,ID,SIS User ID,SIS Login ID,Section,Email,student_id
"Smith-Jones, Alice",101,S-1,alice,A,alice@uni.example,alice
"Brown, Bob",102,S-2,bob,A,bob@uni.example,bob
"Carol, Renamed",103,S-3,carol,B,carol@uni.example,carol
"Formula, F",104,S-4,=cmd|calc,B,f@uni.example,=cmd|calc
"Brown, Dave",105,S-5,d.brown,B,dave@uni.example,d.brown
"Never, Nobody",106,S-6,nobody,B,nobody@uni.example,nobody
"Empty, Folder",107,S-7,nothing,A,nothing@uni.example,nothing
"Case, Eve",108,S-8,eve,A,eve@uni.example,eve
"""


def _export(graded, tmp_path, fmt, *extra, times=TIMES):
    _, out, _ = graded
    (tmp_path / "due.toml").write_text(CONFIG)
    (tmp_path / "roster.csv").write_text(ROSTER)
    args = list(extra)
    if times is not None:
        (tmp_path / "times.csv").write_text(times)
        args += ["--times", str(tmp_path / "times.csv")]
    target = tmp_path / f"{fmt}.csv"
    proc = subprocess.run([sup.MLCOURSE, "export", str(out), "--format", fmt, "--roster",
                           str(tmp_path / "roster.csv"), "--config", str(tmp_path / "due.toml"),
                           "--out", str(target), *args], capture_output=True, text=True,
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
    assert len(body) == 8  # every roster student, nobody else
    assert "ghost" not in json.dumps(rows)
    auto = {s.lstrip("'"): v for s, (v, _) in sup.read_scores(out)[0].items()}
    from mlcourse_utils.grading.graded.folder import read_graded

    totals = read_graded(out).scores  # autograded + whatever manual points were imported
    assert totals["alice"] >= auto["alice"]
    # On time (alice, dave by e-mail), extended (carol), 2 days late by the LMS's record though
    # his timestamp.txt says otherwise (bob: 20 %), 31 minutes late in Berlin time with 10
    # minutes' grace (=cmd|calc: 10 %), no submission (blank).
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
    # Two folders match Eve (Eve/ and eve/): neither is exported, she is named, the rest is.
    assert body["Case, Eve"][5] == "" and "Case, Eve: not exported" in stdout
    assert "submission times: 5 from times.csv" in stdout
    assert "bob is 2 days late: penalty 20 % applied" in stdout
    assert "time from times.csv" in stdout
    # The page states one total, the number of the file (20 % of all bob's points off).
    bob_total = re.findall(r"Total: (\S+) / (\S+)</strong>",
                           (out / "feedback" / "bob.html").read_text())
    assert bob_total == [(body["Brown, Bob"][5], rows[1][5])]
    # The penalty is shown in the late students' feedback pages, once, and only there.
    bob = (out / "feedback" / "bob.html").read_text()
    assert bob.count("Late submission") == 1 and "20 %" in bob and "times.csv" in bob
    assert "Late submission" not in (out / "feedback" / "alice.html").read_text()
    assert "Late submission" not in (out / "feedback" / "carol.html").read_text()
    _export(graded, tmp_path, "canvas")  # exporting again replaces the section
    assert (out / "feedback" / "bob.html").read_text().count("Late submission") == 1


def test_times_inside_submissions_are_used_only_when_asked(graded, tmp_path):
    """Without --times, bob's timestamp.txt (which says he was on time) is not believed: no
    time, no penalty for anyone. With --times-from-submission it is (and marked so), and
    =cmd|calc's naive timestamp (31 minutes late in Berlin time) costs 10 %."""
    _, out, _ = graded
    from mlcourse_utils.grading.graded.folder import read_graded

    totals = read_graded(out).scores
    rows, stdout = _export(graded, tmp_path, "canvas", times=None)
    body = {r[0]: r for r in rows[2:]}
    assert float(body["Formula, F"][5]) == pytest.approx(totals["=cmd|calc"], abs=0.005)
    assert "submission times: none (no late penalty)" in stdout
    assert "Late submission" not in (out / "feedback" / "bob.html").read_text()
    rows, stdout = _export(graded, tmp_path, "canvas", "--times-from-submission", times=None)
    body = {r[0]: r for r in rows[2:]}
    assert float(body["Brown, Bob"][5]) == pytest.approx(totals["bob"], abs=0.005)
    assert float(body["Formula, F"][5]) == pytest.approx(totals["=cmd|calc"] * 0.9, abs=0.005)
    assert "time from the submission's timestamp.txt (--times-from-submission)" in stdout
    assert f"{ODD}: time not used: timestamp.txt: the UTC offset" in stdout


def test_an_impossible_time_costs_only_its_student(graded, tmp_path):
    """In TIMES.csv alice's offset and dave's year are impossible: each is named with the reason
    and gets no penalty; bob (2 days late) and =cmd|calc (31 minutes) keep theirs."""
    _, out, _ = graded
    from mlcourse_utils.grading.graded.folder import read_graded

    totals = read_graded(out).scores
    times = TIMES.replace("alice,2026-03-02 23:05:00+01:00", "alice,2026-03-05 23:05:00+99:00") \
        .replace("dave@uni.example,2026-03-01 12:00:00+00:00", "dave@uni.example,1900-01-01 0:00")
    rows, stdout = _export(graded, tmp_path, "moodle", times=times)
    by_email = {r[0]: r for r in rows[1:]}
    assert float(by_email["alice@uni.example"][3]) == pytest.approx(totals["alice"], abs=0.005)
    assert float(by_email["dave@uni.example"][3]) == pytest.approx(totals["dave@uni.example"],
                                                                    abs=0.005)
    assert float(by_email["bob@uni.example"][3]) == pytest.approx(totals["bob"] * 0.8, abs=0.005)
    assert float(by_email["f@uni.example"][3]) == pytest.approx(totals["=cmd|calc"] * 0.9,
                                                                 abs=0.005)
    assert "alice: time not used: the UTC offset" in stdout
    assert "dave@uni.example: time not used: the year 1900 is impossible" in stdout


def test_moodle_export_with_zero_for_missing(graded, tmp_path):
    _, out, _ = graded
    rows, _ = _export(graded, tmp_path, "moodle", "--missing", "zero")
    assert rows[0] == ["Email address", "ID number", "Full name", "mle"]
    by_email = {r[0]: r for r in rows[1:]}
    assert set(by_email) == {"alice@uni.example", "bob@uni.example", "carol@uni.example",
                             "f@uni.example", "dave@uni.example", "nobody@uni.example",
                             "nothing@uni.example", "eve@uni.example"}
    assert by_email["nobody@uni.example"][3] == "0" and by_email["nothing@uni.example"][3] == "0"
    assert by_email["f@uni.example"][1] == "'=cmd|calc"
    from mlcourse_utils.grading.graded.folder import read_graded

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
    from mlcourse_utils.grading.intake.roster import match_roster
    from mlcourse_utils.grading.intake.times import read_times

    with pytest.raises(ValueError, match="two students"):
        match_roster(read_roster(tmp_path / "dup.csv"), ["a@x"])
    (tmp_path / "times.csv").write_text("who,when\nalice,2026-03-01\n")
    with pytest.raises(ValueError, match="student_id and submitted_at"):
        read_times(tmp_path / "times.csv")
