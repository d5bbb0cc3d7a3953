"""The grader's own work on hostile notebooks near the 16 MB cap: time, memory and output sizes.

Builds notebooks of the `mle` assignment that made the old grader freeze or swell (a 15 MB cell,
80 cells of 190 kB to parse, 15 MB of text that pattern searches were quadratic on, a derivation
of pathological Markdown, 1999 cells), reads each as `mlcourse grade` does
(`analysis.analyse`, then `analysis.render_pages` for the formgrader copy and the
manual-grading answers) and prints, per notebook: the outcome and wall time of each (child
processes, each limited to the per-cell time), the time the grader itself spent decoding the
answer (the only part of the reading that runs in the grader, holding its lock), and the
grader's peak memory. Run by hand:

    .venv/bin/python benchmarks/grader_bounds.py [--timeout 60]
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import assignment_support as sup  # noqa: E402
from mlcourse_utils.grading.engine import analysis  # noqa: E402
from mlcourse_utils.grading.notebook import load_assignment  # noqa: E402

CAP = 16 * 2**20


def _cell(source, kind="code"):
    cell = {"cell_type": kind, "metadata": {}, "source": source}
    if kind == "code":
        cell.update(outputs=[], execution_count=None)
    return cell


def notebooks(assignment):
    """{label: notebook dict}: each just under the 16 MB cap (or as hostile as it gets)."""
    solution = sup.solution_answers("mle")
    manual = assignment.manual[0][0]

    def with_cells(cells):
        nb = sup.make_submission("mle", solution)
        nb["cells"] += cells
        return nb

    def with_derivation(text):
        nb = sup.make_submission("mle", solution)
        for cell in nb["cells"]:
            if sup.grade_id(cell) == manual:
                cell["source"] = text
        return nb

    return {
        "one 15 MB cell": with_cells([_cell("x = [" + "1," * (15 * 2**19) + "]")]),
        "80 cells of 190 kB to parse": with_cells(
            [_cell("x = [" + "1," * 95_000 + "]")] * 80),
        "15 MB of blank lines (not Python)": with_cells([_cell(" \n" * (5 * 2**20) + "$")]),
        "15 MB of near-miss tamper text": with_cells([_cell("sys.modules[" * (15 * 2**20 // 12))]),
        "pathological Markdown derivation": with_derivation(
            "[" * 30_000 + "*a " * 20_000 + "$" * 20_000 + "<" * 20_000),
        "1999 cells with errors": with_cells(
            [_cell("import warnings\nwarnings.warn('w')\nraise ValueError('e')")]
            * (analysis.MAX_CELLS - 1 - len(sup.make_submission("mle", solution)["cells"]))),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timeout", type=float, default=60.0,
                        help="the per-cell time limit the reader gets (mlcourse grade's default)")
    args = parser.parse_args()
    assignment = load_assignment("mle", ROOT)
    decode = analysis._decode
    spent = []

    def timed_decode(data):
        start = time.perf_counter()
        try:
            return decode(data)
        finally:
            spent.append(time.perf_counter() - start)

    analysis._decode = timed_decode
    analysis.warm_up()
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"grader memory before: {base:.0f} MB")
    print(f"{'notebook':34} {'size':>6} {'read':>6} {'grader':>7} {'pages':>6} {'peak':>6}  "
          "outcome (reading; pages)")
    with tempfile.TemporaryDirectory(prefix="mlcourse-bounds-") as tmp:
        for label, nb in notebooks(assignment).items():
            path = Path(tmp) / "mle.ipynb"
            path.write_text(json.dumps(nb))
            size = path.stat().st_size
            spent.clear()
            start = time.perf_counter()
            try:
                found = analysis.analyse(path.read_bytes(), assignment,
                                         timeout=args.timeout)
                outcome = f"read: {len(found.cells)} code cells"
            except analysis.AnalysisError as exc:
                outcome = f"zero: {exc}"
            read = time.perf_counter() - start
            start = time.perf_counter()
            problem = analysis.render_pages(path.read_bytes(), assignment, timeout=args.timeout,
                                            copy_to=Path(tmp) / "copy.ipynb",
                                            manual_dir=Path(tmp) / label.replace(" ", "_"))
            pages = time.perf_counter() - start
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            print(f"{label:34} {size / 2**20:4.1f}MB {read:5.2f}s {sum(spent):6.3f}s "
                  f"{pages:5.2f}s {peak:4.0f}MB  {outcome[:60]}; {problem or 'ok'}"[:200])

if __name__ == "__main__":
    main()
