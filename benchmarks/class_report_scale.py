"""Class report on a synthetic term: time for N students x the seven assignments.

Writes one graded folder per assignment as `mlcourse grade` writes it (grades.csv,
task_scores.csv and results.json through the grader's own writers, timestamps.json, a feedback
page per student, manual/<cell>.csv partly filled) for N synthetic students, from the real
assignments' tasks and check descriptions. Each student has an ability; each check fails with a
probability that falls with it (a logistic item model), except planted cases the report should
find: per assignment one misconception (a check half the class fails), one broken check (failed
by 60 % of students whatever their ability), a few stubs, timeouts, memory errors, calls to the
reference, missing and unreadable notebooks, late submissions.

Then times `make_report` (the report as `mlcourse report` writes it) against reading its inputs
(every results.json parsed and every CSV read once, in the same run) and prints the ratio, with
the report's top failure per assignment and whether the planted broken check was flagged.
Run by hand:

    .venv/bin/python benchmarks/class_report_scale.py [--students 500] [--screenshot PNG]

With ``--screenshot`` it also opens the report in headless Chromium and saves the top of the
page (the README's picture is made with ``--students 120 --screenshot
docs/images/class_report.png``).
"""

from __future__ import annotations

import argparse
import base64
import csv
import datetime as dt
import io
import json
import math
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ASSIGNMENTS = ["mle", "bayes", "naive_bayes", "gda", "logistic_regression", "information_theory",
               "ridge_lasso"]
DUE = dt.datetime(2026, 3, 2, 23, 59, tzinfo=dt.UTC)


def _sigmoid(t):
    return 1 / (1 + math.exp(-t))


def make_folder(name, out, abilities, seed):
    """Write one synthetic graded folder; return (broken check id, misconception check id)."""
    from mlcourse_utils.grading.engine.checking import DELEGATION
    from mlcourse_utils.grading.graded.results import (
        GradeResult,
        TestResult,
        write_csvs,
        write_results,
    )
    from mlcourse_utils.grading.notebook import load_assignment
    from mlcourse_utils.grading.reports.feedback import write_feedback

    rng = random.Random(seed)
    assignment = load_assignment(name, ROOT)
    tests = assignment.tests
    broken = tests[rng.randrange(len(tests))].grade_id
    misconception = rng.choice([t.grade_id for t in tests if t.grade_id != broken])
    difficulty = {t.grade_id: rng.uniform(-2.5, 0.5) for t in tests}
    out.mkdir(parents=True, exist_ok=True)
    (out / "feedback").mkdir(exist_ok=True)
    results, times = {}, {}
    for student, ability in abilities.items():
        r = GradeResult(student, name)
        u = rng.random()
        if u < 0.02:
            results[student] = GradeResult.zero(student, assignment, "no notebook was submitted")
            times[student] = {"submitted": False, "time": None, "source": "none"}
            continue
        if u < 0.03:
            results[student] = GradeResult.zero(
                student, assignment, "the notebook could not be read (Expecting value: line 1 "
                "column 1 (char 0))")
        else:
            stubbed = {t for t in assignment.tasks if rng.random() < 0.04}
            stopped = {}
            for t in assignment.tasks:
                v = rng.random()
                if v < 0.01:
                    stopped[t] = "timed out after 60 s (the time limit per cell and per test)"
                elif v < 0.015:
                    stopped[t] = DELEGATION
            for test in tests:
                tr = TestResult(test.grade_id, test.task, test.points, 0.0, test.description)
                if test.task in stubbed:
                    tr.message = "your function raised NotImplementedError: "
                elif test.task in stopped:
                    r.reasons[test.task] = stopped[test.task]
                else:
                    if test.grade_id == broken:
                        p_fail = 0.6
                    elif test.grade_id == misconception:
                        p_fail = _sigmoid(0.2 - 0.8 * ability)
                    else:
                        p_fail = _sigmoid(difficulty[test.grade_id] - 1.5 * ability)
                    if rng.random() < p_fail:
                        tr.message = ("your function raised ValueError: shapes (3,) and "
                                      "(4,) not aligned" if rng.random() < 0.2 else
                                      f"{test.task} returned 0.31 where 0.29 was expected")
                    else:
                        tr.earned = test.points
                r.tests.append(tr)
            if rng.random() < 0.005:
                victim = tests[rng.randrange(len(tests))]
                for tr in r.tests:
                    if tr.task == victim.task:
                        tr.earned = 0.0
                        tr.message = ("your function raised MemoryError: Unable to allocate "
                                      "40.0 GiB (memory limit 4096 MB)")
            results[student] = r
        late = rng.random() < 0.08
        when = DUE + dt.timedelta(hours=rng.uniform(1, 70)) if late else \
            DUE - dt.timedelta(hours=rng.uniform(0, 90))
        times[student] = {"submitted": True, "time": when.isoformat(), "source": "timestamp.txt"}
    write_csvs(results, assignment, out)
    write_results(results, assignment, out)
    (out / "timestamps.json").write_text(json.dumps(times, indent=1), encoding="utf-8")
    for student, r in results.items():
        write_feedback(r, assignment, out / "feedback" / f"{student}.html")
    (out / "manual").mkdir(exist_ok=True)
    for k, (gid, points) in enumerate(assignment.manual):
        share = [0.9, 0.4, 0.0][k % 3]
        with open(out / "manual" / f"{gid}.csv", "w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh)
            w.writerow(["student_id", "grade_id", "points", "comment"])
            for student in sorted(results):
                filled = rng.random() < share
                w.writerow([student, gid, f"{rng.randint(0, int(points))}" if filled else "", ""])
    return broken, misconception


def read_inputs(folders):
    """The peer: parse every results.json and read every CSV once (what the report must read)."""
    rows = 0
    for folder in folders:
        data = json.loads((folder / "results.json").read_text(encoding="utf-8"))
        rows += len(data["students"])
        for name in ("grades.csv", "task_scores.csv"):
            with open(folder / name, newline="", encoding="utf-8") as fh:
                rows += sum(1 for _ in csv.DictReader(fh))
    return rows


def screenshot(page_path, png, height=1500):
    from mlcourse_utils.book.chromium import Browser

    with Browser() as browser:
        page = browser.open(page_path.resolve().as_uri(), width=1100, height=height)
        shot = browser.call("Page.captureScreenshot", {
            "format": "png", "clip": {"x": 0, "y": 0, "width": 1100, "height": height,
                                      "scale": 1}}, session=page.session)
    from PIL import Image  # Pillow comes with matplotlib

    png.parent.mkdir(parents=True, exist_ok=True)
    image = Image.open(io.BytesIO(base64.b64decode(shot["data"]))).convert("RGB")
    # 128 colours are plenty for a page of text and flat plots, and a third of the bytes.
    image.quantize(colors=128, method=Image.Quantize.MEDIANCUT).save(png, optimize=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--students", type=int, default=500)
    parser.add_argument("--screenshot", type=Path, default=None)
    parser.add_argument("--keep", type=Path, default=None,
                        help="write the folders and the report here (default: a temporary one)")
    args = parser.parse_args(argv)
    from mlcourse_utils.grading.reports.class_report import make_report

    with tempfile.TemporaryDirectory() as tmp:
        base = args.keep or Path(tmp)
        rng = random.Random(2026)
        abilities = {f"s{i:04d}": rng.gauss(0, 1) for i in range(1, args.students + 1)}
        t0 = time.perf_counter()
        planted = {}
        folders = []
        for k, name in enumerate(ASSIGNMENTS):
            folders.append(base / "graded" / name)
            planted[name] = make_folder(name, folders[-1], abilities, seed=k)
        print(f"wrote {len(folders)} graded folders of {args.students} students in "
              f"{time.perf_counter() - t0:.1f} s")
        due = base / "due.toml"
        due.write_text("[late_penalty]\npercent_per_day = 10\nmax_percent = 50\n\n" + "".join(
            f'[assignments.{n}]\ndue = "{DUE.isoformat()}"\n\n' for n in ASSIGNMENTS))

        t0 = time.perf_counter()
        read_inputs(folders)
        peer = time.perf_counter() - t0
        t0, c0 = time.perf_counter(), time.process_time()
        report = make_report(folders, base / "report", config_path=due, root=ROOT)
        ours, cpu = time.perf_counter() - t0, time.process_time() - c0
        t0 = time.perf_counter()
        make_report(folders, base / "report_anonymous", anonymous=True, config_path=due,
                    root=ROOT)
        anonymous = time.perf_counter() - t0
        figures = len(list((base / "report" / "figures").glob("*.svg")))
        print(f"report on {args.students} students x {len(folders)} assignments: {ours:.1f} s "
              f"wall, {cpu:.1f} s CPU ({figures} figures as SVG and PNG); anonymous copy "
              f"{anonymous:.1f} s; reading "
              f"the inputs alone {peer:.2f} s (report / reading = {ours / peer:.0f})")
        for r in report.assignments:
            top = r.top_checks(1)
            broken, misconception = planted[r.name]
            flagged = [t.task for t in r.tasks if t.flags]
            broken_task = next(c.task for c in r.graded.checks if c.grade_id == broken)
            print(f"  {r.name}: top failure {top[0].check.grade_id} ({top[0].failed} of "
                  f"{top[0].attempted}); planted broken {broken} (task {broken_task}: "
                  f"{'flagged' if broken_task in flagged else 'not flagged'}), misconception "
                  f"{misconception}; flagged tasks {flagged}")
        if args.screenshot:
            screenshot(base / "report" / "index.html", args.screenshot)
            print(f"saved {args.screenshot}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
