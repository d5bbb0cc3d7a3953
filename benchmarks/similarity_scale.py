"""Similarity report on a synthetic class: time for N students, planted copies found.

Generates N submissions of an assignment from its release notebook: every student answers every
task with a distinct random answer (plausible numpy code of varying length that shares common
idioms, like real answers), except the planted copies:

- a ring of three: student 1's whole notebook copied by student 2 and student 2's by student 3,
  each time disguised (renamed, reordered, reformatted, comments and docstrings rewritten);
- a pair that copied two tasks only;
- two students who copied the instructor's solution notebook (disguised; so they also match
  each other) and one who copied the reference package's functions (with their helpers) for
  two tasks.

Then runs ``mlcourse similarity`` as a TA would, prints its wall time (also for N/5 students,
and the ratio), how many pairs were compared out of all pairs, and which planted copies were
flagged. Run by hand:

    .venv/bin/python benchmarks/similarity_scale.py [--students 500] [--assignment mle]
"""

from __future__ import annotations

import argparse
import ast
import csv
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from similarity_support import disguise, random_answer  # noqa: E402

import assignment_support as sup  # noqa: E402  (builds submissions from the release notebook)
from mlcourse_utils.grading.engine.references import reference_module, reference_source  # noqa: E402

BIN = Path(sys.executable).parent


def signatures(name):
    """{task: argument names} from the release notebook's answer cells."""
    found = {}
    for cell in sup.release_notebook(name)["cells"]:
        if sup.grade_id(cell) and cell["cell_type"] == "code":
            try:
                tree = ast.parse(sup.source(cell))
            except SyntaxError:
                continue
            for node in tree.body:
                if isinstance(node, ast.FunctionDef) and node.name == sup.grade_id(cell):
                    found[node.name] = [a.arg for a in node.args.args]
    return found


def make_class(name, folder, n):
    """Write n submissions; return the planted copies as {(student_a, student_b): tasks}."""
    sig = signatures(name)
    tasks = list(sig)
    solution = sup.solution_answers(name)
    module = reference_module(name)

    def student(i):
        return f"s{i:04d}"

    answers = {student(i): {t: random_answer(t, sig[t], seed=i * 1000 + k)
                            for k, t in enumerate(tasks)} for i in range(n)}
    planted = {}
    a, b, c = student(1), student(2), student(3)
    answers[b] = {t: disguise(answers[a][t], keep=[t], seed=2) for t in tasks}
    answers[c] = {t: disguise(answers[b][t], keep=[t], seed=3) for t in tasks}
    planted[(a, b)] = planted[(b, c)] = planted[(a, c)] = set(tasks)
    d, e = student(n // 2), student(n // 2 + 1)
    for t in tasks[:2]:
        answers[e][t] = disguise(answers[d][t], keep=[t], seed=5)
    planted[(d, e)] = set(tasks[:2])
    for i, seed in ((n - 3, 7), (n - 2, 8)):
        answers[student(i)] = {t: disguise(solution[t], keep=[t], seed=seed) for t in tasks}
        planted[(student(i), "reference")] = set(tasks)
    planted[(student(n - 3), student(n - 2))] = set(tasks)  # the same source, so each other too
    copier = student(n - 1)
    copied = [t for t in tasks if reference_source(module, t)][-2:]  # (tasks with a reference)
    for t in copied:
        answers[copier][t] = disguise(reference_source(module, t), keep=[t], seed=9)
    planted[(copier, "reference")] = set(copied)
    for s, task_answers in answers.items():
        sup.write_submission(folder, s, name, nb=sup.make_submission(name, task_answers))
    return planted


def run(name, folder, out):
    start = time.perf_counter()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run([BIN / "mlcourse", "similarity", name, str(folder), "--out", str(out)],
                          capture_output=True, text=True, cwd=ROOT)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode:
        raise SystemExit(proc.stderr)
    with open(Path(out) / "similarity.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    return seconds, cpu, rows, proc.stdout.strip()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--students", type=int, default=500)
    parser.add_argument("--assignment", default="mle")
    args = parser.parse_args()
    n, name = args.students, args.assignment
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        timings = {}
        for size in (max(10, n // 5), n):
            folder = tmp / f"class{size}"
            t0 = time.perf_counter()
            planted = make_class(name, folder, size)
            made = time.perf_counter() - t0
            seconds, cpu, rows, summary = run(name, folder, tmp / f"out{size}")
            timings[size] = seconds
            print(f"{size} students of {name}: wrote them in {made:.1f} s; "
                  f"mlcourse similarity took {seconds:.1f} s wall, {cpu:.1f} s CPU")
            print(f"  {summary}")
        flagged = {}
        for r in rows:
            flagged.setdefault((r["student_a"], r["student_b"]), set()).add(r["task"])
        found = 0
        for pair, tasks in sorted(planted.items()):
            got = flagged.get(pair, set())
            hit = bool(got)
            found += hit
            print(f"  planted {pair[0]} ~ {pair[1]} ({len(tasks)} tasks copied): "
                  f"{'FLAGGED' if hit else 'missed'} on {sorted(got) or '-'}")
        other = {p: t for p, t in flagged.items() if p not in planted}
        print(f"planted copies flagged: {found} of {len(planted)}; other flagged pairs: "
              f"{len(other)} ({sum(map(len, other.values()))} rows)")
        small, large = sorted(timings)
        print(f"time ratio {large} / {small} students: {timings[large] / timings[small]:.1f} "
              f"(all pairs ratio: {large * (large - 1) / (small * (small - 1)):.0f})")
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        print(f"peak memory of the largest run: {peak:.0f} MB")


if __name__ == "__main__":
    main()
