"""Time to start one grading sandbox and set up its watch on forbidden calls.

For each assignment, starts a sandbox ``--starts`` times (every defence this machine has, as
``mlcourse grade`` does), sends it the assignment's forbidden calls, and prints the median and the
spread of the start, of the watch's set-up and of the two together: forked from the prepared image
(``grading/sandbox/zygote.py``, where the grader is root; its own start, once per run, is not
counted) and started from scratch (``MLCOURSE_ZYGOTE=0``). Run by hand:

    .venv/bin/python benchmarks/sandbox_start.py [--starts 10] [--assignment mle ...]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def assignment(name):
    """The assignment (its forbidden calls and what the image imports)."""
    from mlcourse_utils.grading import notebook

    return notebook.load_assignment(name, ROOT)


def watched(found):
    """The calls the grader watches for one assignment (every task's, as the session does)."""
    return sorted({n for names in found.forbidden.values() for n in names})


def time_starts(names, starts, preload, scratch):
    import os

    from mlcourse_utils.grading.sandbox.channel import Sandbox

    os.environ["MLCOURSE_ZYGOTE"] = "0" if scratch else "1"
    Sandbox(hidden=[ROOT], memory_mb=2048, preload=preload).start().kill()  # (the image)
    start_times, watch_times = [], []
    for _ in range(starts):
        box = Sandbox(hidden=[ROOT], memory_mb=2048, preload=preload)
        try:
            t0 = time.perf_counter()
            box.start()
            t1 = time.perf_counter()
            box.monitor(names, 60)
            t2 = time.perf_counter()
        finally:
            box.kill()
        start_times.append(t1 - t0)
        watch_times.append(t2 - t1)
    return start_times, watch_times


def _summary(times):
    return (f"median {statistics.median(times):5.2f} s  (min {min(times):5.2f}, "
            f"max {max(times):5.2f})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=10)
    parser.add_argument("--assignment", nargs="*", default=["mle"])
    args = parser.parse_args()
    for name in args.assignment:
        found = assignment(name)
        names = watched(found)
        print(f"{name}: {len(names)} watched names, {args.starts} starts each way")
        for scratch in (False, True):
            starts, watches = time_starts(names, args.starts, found.preload, scratch)
            both = [a + b for a, b in zip(starts, watches, strict=True)]
            print(f"  {'from scratch' if scratch else 'from the image'}")
            print(f"    start          : {_summary(starts)}")
            print(f"    watch set-up   : {_summary(watches)}")
            print(f"    start + watch  : {_summary(both)}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
