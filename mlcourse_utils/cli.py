"""The ``mlcourse`` command: build the website, release, grade and check assignments."""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
from collections.abc import Sequence

#: What each command needs beyond the base install, and the extra that provides it.
_EXTRAS = {"build": ("book", "jupyter_book"), "pdf": ("book", "pypdf"),
           "release": ("grading", "nbgrader"), "grade": ("grading", "nbgrader"),
           "grade-merge": ("grading", "nbgrader"), "grade-import": ("grading", "nbgrader"),
           "export": ("grading", "nbgrader")}


def _missing_extra(command):
    """One line saying what to install when ``command`` needs an extra that is not installed."""
    extra, module = _EXTRAS.get(command, (None, None))
    if extra is None or importlib.util.find_spec(module) is not None:
        return None
    return (f"mlcourse {command} needs the course's {extra} tools, which are not installed: "
            f"pip install 'mlcourse_utils[{extra}]' (or run `make`, which installs everything)")


def _cmd_build(args):
    from .book.build import BuildError, build_book

    edition = "instructor" if args.instructor else "student"
    try:
        html = build_book(instructor=args.instructor, out=args.out)
    except BuildError as exc:
        print(f"mlcourse build: {exc}", file=sys.stderr)
        return 1
    print(f"built the {edition} edition into {html}{os.sep}; open {html / 'index.html'}")
    return 0


def _cmd_pdf(args):
    from .book.build import BuildError
    from .book.chromium import ChromiumError
    from .book.pdf import PdfError, build_pdfs

    edition = "instructor" if args.instructor else "student"
    try:
        result = build_pdfs(instructor=args.instructor, out=args.out,
                            progress=lambda line: print(line, flush=True))
    except (BuildError, PdfError, ChromiumError) as exc:
        print(f"mlcourse pdf: {exc}", file=sys.stderr)
        return 1
    print(f"wrote the {edition} edition's lecture notes in {result.seconds:.0f} s: "
          f"{result.book} ({result.pages['book']} pages) and {len(result.chapters)} chapter PDFs "
          f"in {result.book.parent}{os.sep}")
    return 0


def _cmd_release(args):
    from .grading.release import release

    try:
        release(args.names or None)
    except (RuntimeError, FileNotFoundError) as exc:
        print(f"mlcourse release: {exc}", file=sys.stderr)
        return 1
    return 0


def _cmd_grade(args):
    from .grading.batch import grade_class, parse_shard, read_secret

    if args.jobs < 1 or args.timeout <= 0 or args.memory <= 0 or \
            (args.student_timeout is not None and args.student_timeout <= 0):
        print("mlcourse grade: --jobs, --timeout, --student-timeout and --memory must be positive",
              file=sys.stderr)
        return 2
    try:
        shard = parse_shard(args.shard) if args.shard else None
        secret = read_secret(args.secret_file) if args.secret_file else None
        assignment, results = grade_class(args.name, args.submissions, args.out, jobs=args.jobs,
                                          timeout=args.timeout, memory_mb=args.memory,
                                          student_timeout=args.student_timeout, shard=shard,
                                          secret=secret,
                                          require_isolation=args.require_isolation)
    except (FileNotFoundError, ValueError) as exc:
        print(f"mlcourse grade: {exc}", file=sys.stderr)
        return 1
    total = assignment.max_score
    print(f"graded {len(results)} submissions of {args.name} (max {total:g} autograded points); "
          f"wrote {args.out}/grades.csv, task_scores.csv and feedback/"
          + (", and manual/ for the manually graded cells" if assignment.manual else ""))
    return 0


def _cmd_grade_merge(args):
    from .grading.batch import merge_outputs

    try:
        assignment, results = merge_outputs(args.outs, args.out)
    except (FileNotFoundError, ValueError) as exc:
        print(f"mlcourse grade-merge: {exc}", file=sys.stderr)
        return 1
    print(f"merged {len(args.outs)} folders: {len(results)} submissions of {assignment.name} "
          f"into {args.out}")
    return 0


def _cmd_similarity(args):
    from .grading.similarity import find_similar
    from .grading.similarity_report import write_report

    if not 0 < args.threshold <= 1 or args.min_tokens < 1:
        print("mlcourse similarity: --threshold must be in (0, 1] and --min-tokens positive",
              file=sys.stderr)
        return 2
    try:
        report = find_similar(args.name, args.submissions, threshold=args.threshold,
                              min_tokens=args.min_tokens)
        csv_path, html_path = write_report(report, args.out)
    except (FileNotFoundError, ValueError, OSError) as exc:
        print(f"mlcourse similarity: {exc}", file=sys.stderr)
        return 1
    pairs = sum(m.kind == "student" for m in report.matches)
    print(f"compared the answers of {len(report.students)} students to {args.name} in "
          f"{report.seconds:.1f} s: {pairs} rows between students and "
          f"{len(report.matches) - pairs} against the reference flagged (they change no grade); "
          f"wrote {csv_path} and {html_path}")
    return 0


def _cmd_grade_import(args):
    from .grading.manual import import_points

    try:
        counts = import_points(args.graded, args.csvs)
    except (FileNotFoundError, ValueError) as exc:
        print(f"mlcourse grade-import: nothing was imported:\n{exc}", file=sys.stderr)
        return 1
    done = ", ".join(f"{gid}: {n}" for gid, n in sorted(counts.items())) or "no filled rows"
    print(f"imported manual points into {args.graded}/gradebook.db ({done})")
    return 0


def _cmd_export(args):
    from .grading.lms import export

    try:
        report = export(args.graded, args.format, args.roster, args.out,
                        config_path=args.config, missing=args.missing, times_path=args.times,
                        times_from_submission=args.times_from_submission)
    except (FileNotFoundError, ValueError) as exc:
        print(f"mlcourse export: {exc}", file=sys.stderr)
        return 1
    print(f"wrote {args.out} ({args.format}): {report.rows} students of the roster")
    for name in report.without_roster:
        lists = [("submissions without a roster entry (not exported)", report.without_roster),
                 ("students of the roster without a submission", report.without_submission),
                 ("submissions with manual cells still to grade", report.ungraded),
                 ("submissions without a time (no penalty applied)", report.undated)]
        for label, table in lists:
            if table[name]:
                print(f"  {name}: {len(table[name])} {label}: {', '.join(table[name])}")
        sources = ", ".join(f"{n} from {src}" for src, n in report.time_sources[name].items())
        print(f"  {name}: submission times: {sources or 'none (no late penalty)'}")
        for student, problem in sorted(report.time_problems[name].items()):
            print(f"  {name}: {student}: time not used: {problem}")
        for who, ids in sorted(report.conflicts[name].items()):
            print(f"  {name}: {who}: not exported: several submissions match ({', '.join(ids)})")
        for student, cell in sorted(report.late[name].items()):
            print(f"  {name}: {student} is {cell.days_late} day(s) late: -{cell.penalty:g} % "
                  f"({cell.raw:g} -> {cell.score:.4g}; time from {cell.source})")
    return 0


def _cmd_check(args):
    from .grading.selfcheck import check_notebook

    try:
        tests, other = check_notebook(args.notebook, timeout=args.timeout)
    except (ValueError, FileNotFoundError) as exc:
        print(f"mlcourse check: {exc}", file=sys.stderr)
        return 1
    labels = {"passed": "ok    ", "failed": "FAIL  ", "hidden": "hidden"}
    for t in tests:
        print(f"  {labels[t.status]}  {t.grade_id}" + (f": {t.message}" if t.message else ""))
    for gid, msg in other:
        print(f"  error in {gid}: {msg}")
    count = {s: sum(t.status == s for t in tests) for s in labels}
    print(f"{count['passed']} passed, {count['failed']} failed, {count['hidden']} hidden "
          "(hidden tests run when your notebook is graded)")
    return 0 if not count["failed"] else 1


def make_parser() -> argparse.ArgumentParser:
    from .grading.session import DEFAULT_BUDGET_FACTOR
    parser = argparse.ArgumentParser(prog="mlcourse", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("build", help="build the course website")
    p.add_argument(
        "--instructor",
        action="store_true",
        help="instructor edition: show in-text solutions, teaching notes and the solution "
        "notebooks",
    )
    p.add_argument(
        "--out",
        default=None,
        metavar="DIR",
        help="output folder; the HTML goes to DIR/html (default: _build for the student edition, "
        "_build/instructor for the instructor edition)",
    )
    p.set_defaults(func=_cmd_build)
    p = sub.add_parser("pdf", help="the chapters as PDF lecture notes (one per chapter, one book)")
    p.add_argument("--instructor", action="store_true",
                   help="instructor edition: with in-text solutions, teaching notes and the "
                        "solution notebooks")
    p.add_argument("--out", default=None, metavar="DIR",
                   help="where the PDFs go (default: _build/pdf, or _build/instructor/pdf)")
    p.set_defaults(func=_cmd_pdf)
    p = sub.add_parser("release",
                       help="regenerate exercises/ from solutions/ (after checking them)")
    p.add_argument("names", nargs="*", metavar="NAME", help="assignments (default: all)")
    p.set_defaults(func=_cmd_release)

    p = sub.add_parser("grade", help="autograde every student's submission in a folder")
    p.add_argument("name", metavar="NAME", help="assignment name, e.g. mle")
    p.add_argument("submissions", metavar="SUBMISSIONS",
                   help="folder with one subfolder per student holding the notebook")
    p.add_argument("--out", required=True, metavar="DIR", help="where grades and feedback go")
    p.add_argument("--jobs", type=int, default=1, help="students graded at once (default 1)")
    p.add_argument("--timeout", type=float, default=60.0, metavar="SECONDS",
                   help="time limit per cell and per test (default 60)")
    p.add_argument("--student-timeout", type=float, default=None, metavar="SECONDS",
                   help="total time for one student: start-up, cells, tests and re-runs after "
                        f"crashes (default {DEFAULT_BUDGET_FACTOR} x --timeout)")
    p.add_argument("--memory", type=int, default=4096, metavar="MB",
                   help="memory limit of each student's sandbox, shared memory included "
                        "(default 4096)")
    p.add_argument("--secret-file", default=None, metavar="PATH",
                   help="a file with the term's grading secret: hidden tests draw each student's "
                        "inputs from it (without it: the public development seed)")
    p.add_argument("--shard", default=None, metavar="K/N",
                   help="grade only the K-th of N deterministic slices of the class (for a "
                        "Slurm array or a Kubernetes Indexed Job); join them with grade-merge")
    p.add_argument("--require-isolation", action="store_true",
                   help="stop before grading when a sandbox defence (namespaces, unprivileged "
                        "user, seccomp, cgroups, ...) is missing on this machine")
    p.set_defaults(func=_cmd_grade)

    p = sub.add_parser("grade-merge", help="join the output folders of `grade --shard K/N` runs")
    p.add_argument("outs", nargs="+", metavar="OUT", help="the shards' output folders")
    p.add_argument("--out", required=True, metavar="DIR", help="where the joined results go")
    p.set_defaults(func=_cmd_grade_merge)

    from .grading.similarity import MIN_TOKENS, THRESHOLD
    p = sub.add_parser("similarity", help="flag answers that match beyond renaming and "
                       "reformatting, between students and with the reference (never grades)")
    p.add_argument("name", metavar="NAME", help="assignment name, e.g. mle")
    p.add_argument("submissions", metavar="SUBMISSIONS",
                   help="folder with one subfolder per student holding the notebook")
    p.add_argument("--out", required=True, metavar="DIR",
                   help="where similarity.csv and similarity.html go")
    p.add_argument("--threshold", type=float, default=THRESHOLD,
                   help=f"flag a task when this share of one answer's own code matches "
                        f"(default {THRESHOLD})")
    p.add_argument("--min-tokens", type=int, default=MIN_TOKENS,
                   help=f"... and the matching code is at least this many tokens long "
                        f"(default {MIN_TOKENS})")
    p.set_defaults(func=_cmd_similarity)

    p = sub.add_parser("grade-import",
                       help="load a teaching assistant's manual points (manual/<grade_id>.csv, "
                            "filled) into the gradebook of a graded folder")
    p.add_argument("graded", metavar="GRADED_DIR", help="a folder written by `mlcourse grade`")
    p.add_argument("csvs", nargs="+", metavar="FILLED.csv",
                   help="student_id, grade_id, points, comment (blank points are skipped)")
    p.set_defaults(func=_cmd_grade_import)

    p = sub.add_parser("export", help="grades for Canvas or Moodle, with late penalties")
    p.add_argument("graded", nargs="+", metavar="GRADED_DIR",
                   help="one folder written by `mlcourse grade` per assignment")
    p.add_argument("--format", required=True, choices=["canvas", "moodle"])
    p.add_argument("--roster", required=True, metavar="ROSTER.csv",
                   help="the class list: a header row with name, student_id and/or email (and "
                        "Canvas' ID, SIS User ID, SIS Login ID, Section or Moodle's ID number)")
    p.add_argument("--out", required=True, metavar="FILE", help="the CSV file to write")
    p.add_argument("--config", default=None, metavar="DUE.toml",
                   help="due dates, extensions and the late penalty (see "
                        "mlcourse_utils/grading/lms.py); without it, no penalty")
    p.add_argument("--missing", choices=["blank", "zero"], default="blank",
                   help="grade of a roster student without a submission (default: blank)")
    p.add_argument("--times", default=None, metavar="TIMES.csv",
                   help="the trusted submission times (student_id,submitted_at[,assignment]) "
                        "from the LMS or exchange, for the late penalty")
    p.add_argument("--times-from-submission", action="store_true",
                   help="also use the time found inside a submission (timestamp.txt or the "
                        "file's time), which the student controls, where TIMES.csv has none")
    p.set_defaults(func=_cmd_export)

    p = sub.add_parser("check", help="run a notebook's visible tests (for students)")
    p.add_argument("notebook", metavar="NOTEBOOK")
    p.add_argument("--timeout", type=float, default=120.0, metavar="SECONDS")
    p.set_defaults(func=_cmd_check)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from ._imports import skip_slow_optional_imports

    skip_slow_optional_imports()
    args = make_parser().parse_args(argv)
    missing = _missing_extra(args.command)
    if missing:
        print(missing, file=sys.stderr)
        return 2
    try:
        return args.func(args)
    except subprocess.CalledProcessError as exc:
        print(f"mlcourse {args.command}: {exc.cmd[0]} failed with exit status {exc.returncode}",
              file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
