"""How long the website takes to build: cold, unchanged, and after editing one chapter.

Usage: ``.venv/bin/python benchmarks/book_build.py [--chapter book/mle.md] [--root DIR] [--keep]``

Copies the repository (without .venv, _build, .git) into a scratch folder and builds the
student edition there three times with ``mlcourse_utils.book.build.build_book``:

1. cold: empty ``_build`` (fresh Sphinx environment and execution cache);
2. no change: nothing edited (Sphinx reads nothing, executes nothing);
3. one chapter: a code cell appended to one chapter, which must be re-executed, alone.

It prints the three wall-clock times, their ratios to the cold build, and how many notebooks
each build executed (from the build log). Goal: the one-chapter rebuild takes at most 20 % of
the cold build. The repository itself is never touched.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

from mlcourse_utils.book.build import ROOT, build_book

IGNORE = shutil.ignore_patterns(".venv", "_build", ".git", "__pycache__", ".pytest_cache",
                                ".hypothesis")


def timed_build(root, log_path):
    with open(log_path, "w") as log:
        start = time.perf_counter()
        build_book(root=root, log=log)
        elapsed = time.perf_counter() - start
    text = log_path.read_text()
    # MyST-NB's own execution, or the parallel one of mlcourse_utils.book.execute
    executed = sorted(set(re.findall(r"(\S+): Executing notebook", text))
                      | {f"{d}.md" for d in re.findall(r"(\S+): executed in \d", text)})
    return elapsed, executed


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chapter", default="book/mle.md",
                        help="chapter to edit (default book/mle.md)")
    parser.add_argument("--root", type=Path, default=ROOT,
                        help="repository to copy (default: this one)")
    parser.add_argument("--keep", action="store_true",
                        help="keep the scratch copy and print its path")
    args = parser.parse_args(argv)

    scratch = Path(tempfile.mkdtemp(prefix="book-bench-"))
    root = scratch / "repo"
    shutil.copytree(args.root, root, ignore=IGNORE)
    chapter = root / args.chapter
    if not chapter.exists():
        parser.error(f"{args.chapter} does not exist")
    try:
        results = {}
        results["cold build (fresh cache)"] = timed_build(root, scratch / "cold.log")
        results["rebuild, no change"] = timed_build(root, scratch / "nochange.log")
        with open(chapter, "a", encoding="utf-8") as fh:
            fh.write("\n```{code-cell} ipython3\n# benchmark edit\n1 + 1\n```\n")
        results[f"rebuild, {args.chapter} edited"] = timed_build(root, scratch / "onechapter.log")
    finally:
        if not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)

    cold = results["cold build (fresh cache)"][0]
    print(f"\nstudent edition of {args.root}, built in a scratch copy\n")
    print(f"{'build':<40} {'seconds':>8} {'/ cold':>8}  executed notebooks")
    for name, (seconds, executed) in results.items():
        shown = ", ".join(Path(e).name for e in executed) or "none"
        print(f"{name:<40} {seconds:8.1f} {seconds / cold:8.1%}  {len(executed)}: {shown}")
    one = list(results.values())[2][0]
    verdict = "meets" if one <= 0.2 * cold else "misses"
    print(f"\none-chapter rebuild / cold build = {one / cold:.1%} ({verdict} the <= 20 % goal)")
    if args.keep:
        print(f"scratch copy kept in {scratch}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
