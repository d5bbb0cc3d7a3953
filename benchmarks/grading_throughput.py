"""Grading throughput: plain sequential `nbgrader autograde` vs `mlcourse grade --jobs 2`.

Generates 20 submissions of the `mle` assignment, grades the same notebooks both ways in this
run, alternating the two (nbgrader, ours, nbgrader, ours, ...: `--rounds` of each, at least 2, so
that a change in the machine's load between phases does not favour either side), and prints each
wall time, the medians and the ratio of the medians. By default every submission is honest (the
solution, or a correct answer written differently from tests/submissions/mle.py's HONEST that
calls nothing its task forbids), every one must get full marks (the run fails otherwise), and
`mlcourse grade` runs with every defence on (`--require-isolation`, where this machine has them
all: namespaces, nobody, seccomp, cgroups; it prints which ones held); `--mix` grades full
solutions, plausible mistakes and stubs instead. Run by hand:

    .venv/bin/python benchmarks/grading_throughput.py [--students 20] [--jobs 2] [--rounds 2]
        [--mix]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
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


def honest_variants():
    """tests/submissions/mle.py's HONEST answers, without those that call what their task
    forbids (metadata.mlcourse.forbidden: e.g. numpy.cov in mvn_mle), which earn nothing."""
    from mlcourse_utils.grading import names, notebook

    forbidden = notebook.load_assignment("mle", ROOT).forbidden
    kept = []
    for answers in variants.HONEST.values():
        allowed = {task: src for task, src in answers.items()
                   if not names.scan_code(src, forbidden.get(task, [])).uses}
        if allowed:
            kept.append(allowed)
    return kept


def make_submissions(folder, n, mix=False):
    """n students: honest ones (the solution, or it with one task answered differently but
    correctly); with ``mix``, every third a stub and the others the solution with one mistake
    or none."""
    solution = sup.solution_answers("mle")
    wrongs = [(task, src) for task, items in variants.WRONG.items() for src, _ in items]
    honest = honest_variants()
    for i in range(n):
        if not mix:
            answers = {**solution, **(honest[i % len(honest)] if i % 2 else {})}
            nb = sup.make_submission("mle", answers)
        elif i % 3 == 2:
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


def time_mlcourse(submissions, out, jobs, strict):
    """Wall time of `mlcourse grade`, students graded, full marks, and the defences it printed."""
    start = time.perf_counter()
    proc = subprocess.run([BIN / "mlcourse", "grade", "mle", str(submissions), "--out", str(out),
                           "--jobs", str(jobs), *(["--require-isolation"] if strict else [])],
                          cwd=ROOT, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(proc.stderr[-2000:])
    graded = len(list((out / "feedback").glob("*.html")))
    grades, _ = sup.read_scores(out)
    full = sum(score == top for score, top in grades.values())
    defences = [line for line in proc.stderr.splitlines() if line.startswith("defences")]
    return elapsed, graded, full, defences


def _all_defences_here():
    from mlcourse_utils.grading.sandbox import cgroups
    from mlcourse_utils.grading.sandbox.channel import namespace_flags

    return (namespace_flags() is not None and os.geteuid() == 0
            and set(cgroups.layout()[1]) >= {"memory", "pids", "cpu"})


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=20)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=2,
                        help="runs of each side, alternated (at least 2)")
    parser.add_argument("--mix", action="store_true",
                        help="solutions, mistakes and stubs instead of honest submissions")
    args = parser.parse_args()
    if args.rounds < 2:
        parser.error("--rounds must be at least 2 (alternated runs of each side)")
    strict = not args.mix and _all_defences_here()
    kind = "mixed" if args.mix else "honest"
    flag = " --require-isolation" if strict else ""
    print(f"submissions: {args.students} ({kind}); {args.rounds} alternated rounds", flush=True)
    t_nbs, t_mls, incomplete = [], [], []
    with tempfile.TemporaryDirectory(prefix="mlcourse-bench-") as tmp:
        tmp = Path(tmp)
        make_submissions(tmp / "submissions", args.students, args.mix)
        for r in range(args.rounds):
            t_nb, n_nb = time_nbgrader(tmp / f"course{r}", tmp / "submissions")
            print(f"round {r + 1}: nbgrader autograde (sequential)  : {t_nb:7.1f} s  "
                  f"({t_nb / args.students:.2f} s each, {n_nb} graded)", flush=True)
            t_ml, n_ml, full, defences = time_mlcourse(tmp / "submissions", tmp / f"out{r}",
                                                       args.jobs, strict)
            print(f"round {r + 1}: mlcourse grade --jobs {args.jobs}{flag}: {t_ml:7.1f} s  "
                  f"({t_ml / args.students:.2f} s each, {n_ml} graded, {full} with full marks; "
                  f"{t_nb / t_ml:.2f}x this round)", flush=True)
            if r == 0:
                for line in defences:
                    print(f"  {line}")
            t_nbs.append(t_nb)
            t_mls.append(t_ml)
            if not args.mix and (full != args.students or n_ml != args.students):
                incomplete.append(f"round {r + 1}: only {full} of {args.students} honest "
                                  f"submissions got full marks ({n_ml} graded)")
    m_nb, m_ml = statistics.median(t_nbs), statistics.median(t_mls)
    print(f"median nbgrader autograde        : {m_nb:7.1f} s")
    print(f"median mlcourse grade            : {m_ml:7.1f} s")
    print(f"speed-up (ratio of medians)      : {m_nb / m_ml:7.2f}x  (goal >= 5x on 2 cores)")
    if incomplete:
        sys.exit("; ".join(incomplete) + ": the comparison is not of honest grading")


if __name__ == "__main__":
    main()
