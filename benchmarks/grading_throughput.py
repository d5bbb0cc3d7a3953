"""Grading throughput: plain sequential `nbgrader autograde` vs `mlcourse grade --jobs 2`.

Generates 20 submissions of the `mle` assignment (full solutions, plausible mistakes and
stubs, built from the release notebook), grades the same 20 notebooks both ways in this run
and prints both wall times and their ratio. Run by hand:

    .venv/bin/python benchmarks/grading_throughput.py [--students 20] [--jobs 2]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import assignment_support as sup  # noqa: E402  (builds submissions from the release notebook)
from submissions import mle as variants  # noqa: E402

BIN = Path(sys.executable).parent


def make_submissions(folder, n):
    """n students: every third a stub, the others the solution with one mistake or none."""
    solution = sup.solution_answers("mle")
    wrongs = [(task, src) for task, items in variants.WRONG.items() for src, _ in items]
    for i in range(n):
        if i % 3 == 2:
            nb = sup.release_notebook("mle")
        elif i % 3 == 1:
            task, src = wrongs[i % len(wrongs)]
            nb = sup.make_submission("mle", {**solution, task: src})
        else:
            nb = sup.make_submission("mle", solution)
        sup.write_submission(folder, f"student{i:02d}", "mle", nb=nb, nested=True)


def time_nbgrader(course, submissions):
    """Plain nbgrader: one `nbgrader autograde` over every student, sequentially."""
    shutil.copytree(ROOT / "solutions" / "mle", course / "solutions" / "mle")
    (course / "nbgrader_config.py").write_text(
        "c = get_config()\n"
        "c.CourseDirectory.source_directory = 'solutions'\n"
        "c.CourseDirectory.release_directory = 'exercises'\n"
        "c.CourseDirectory.submitted_directory = 'submitted'\n"
        "c.ExecutePreprocessor.timeout = 60\n")
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ['PATH']}")
    subprocess.run([BIN / "nbgrader", "generate_assignment", "mle", "--force"], cwd=course,
                   env=env, check=True, capture_output=True)
    shutil.copytree(submissions, course / "submitted")
    start = time.perf_counter()
    proc = subprocess.run([BIN / "nbgrader", "autograde", "mle", "--force"], cwd=course, env=env,
                          capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        print(proc.stderr[-2000:], file=sys.stderr)
    graded = len(list((course / "autograded").glob("*/mle/mle.ipynb")))
    return elapsed, graded


def time_mlcourse(submissions, out, jobs):
    start = time.perf_counter()
    subprocess.run([BIN / "mlcourse", "grade", "mle", str(submissions), "--out", str(out),
                    "--jobs", str(jobs)], cwd=ROOT, check=True, capture_output=True)
    elapsed = time.perf_counter() - start
    graded = len(list((out / "feedback").glob("*.html")))
    return elapsed, graded


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=20)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="mlcourse-bench-") as tmp:
        tmp = Path(tmp)
        make_submissions(tmp / "submissions", args.students)
        t_nb, n_nb = time_nbgrader(tmp / "course", tmp / "submissions")
        t_ml, n_ml = time_mlcourse(tmp / "submissions", tmp / "out", args.jobs)
    print(f"submissions                      : {args.students}")
    print(f"nbgrader autograde (sequential)  : {t_nb:7.1f} s  ({t_nb / args.students:.2f} s each, "
          f"{n_nb} graded)")
    each = t_ml / args.students
    print(f"mlcourse grade --jobs {args.jobs:<2}         : {t_ml:7.1f} s  ({each:.2f} s each, "
          f"{n_ml} graded)")
    print(f"speed-up                         : {t_nb / t_ml:7.2f}x  (goal >= 2.2x on 2 cores)")


if __name__ == "__main__":
    main()
