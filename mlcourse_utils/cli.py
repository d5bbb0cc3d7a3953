"""The ``mlcourse`` command: build the website, release, grade and check assignments.

Shaped like pip's ``cli/``: :data:`COMMANDS` is a table from each command's name to the module
that runs it, its options, help and example. A command's module is imported only when that
command runs, so ``mlcourse --help`` imports nothing of numpy, nbformat or the grader, and a
student's ``mlcourse check`` never loads the grader (whose sandbox needs POSIX-only modules).
:func:`main` is the one wrapper that turns every expected error into one line and an exit
status: 0 done, 1 failed (a failed check, bad input, a failed build), 2 a usage error or a
missing part of the installation, 130 interrupted (Ctrl-C).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from .course import BUDGET_FACTOR, COURSE_ENV, DEFAULT_MEMORY_MB, DEFAULT_TIMEOUT

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130

#: Defaults shown in the help, kept equal to the modules' own (tests/test_cli.py checks it):
#: grading.similarity.pairs.THRESHOLD and MIN_TOKENS. (The time limits are the course's, course.py.)
SIMILARITY_THRESHOLD = 0.8
SIMILARITY_MIN_TOKENS = 30
#: The documented example of `export --config`, in the repository
#: (tests/grading/graded/test_late.py reads it through the export's parser).
EXAMPLE_DUE = "examples/due.toml"


class UsageError(Exception):
    """A command was called with options that cannot work together (exit status 2)."""


class Command(NamedTuple):
    """One ``mlcourse`` command: what ``--help`` says about it and what runs it."""

    summary: str                                   # one line in `mlcourse --help`
    module: str                                    # imported only when the command runs
    run: Callable[[Any, argparse.Namespace], int]  # run(module, args) -> exit status
    options: Callable[[argparse.ArgumentParser], None]
    example: str | Callable[[], str]               # shown by `mlcourse COMMAND --help`
    extra: tuple[str, str] | None = None           # (pip extra, a module it installs)
    error_prefix: str = ""                         # put before an expected error's message
    course: bool = False                           # works in the course folder (--course DIR)


# ----------------------------------------------------------------------------- the commands


def _build_options(p):
    p.add_argument("--instructor", action="store_true",
                   help="instructor edition: show in-text solutions, teaching notes and the "
                        "solution notebooks")
    p.add_argument("--out", default=None, metavar="DIR",
                   help="output folder; the HTML goes to DIR/html (default: _build for the "
                        "student edition, _build/instructor for the instructor edition)")


def _build(build, args):
    from .book.wheel import WHEEL_DIR
    from .course import ROOT, student_wheel_name

    edition = "instructor" if args.instructor else "student"
    html = build.build_book(instructor=args.instructor, out=args.out)
    print(f"\nbuilt the {edition} edition: {_shown(html)}{os.sep}")
    print(f"  open {_shown(html / 'index.html')} in a browser (it works offline)")
    print(f"  the course wheel students install (linked from Getting started): "
          f"{_shown(ROOT / WHEEL_DIR / student_wheel_name())}")
    if args.instructor:
        print("  for lectures only: never publish it, nor its PDFs")
    else:
        print("  the instructor edition (solutions, teaching notes, solution notebooks): "
              "make instructor")
    return EXIT_OK


def _shown(path):
    """``path`` relative to the working folder when it is inside it (shorter to read)."""
    try:
        return os.path.relpath(path) if Path(path).resolve().is_relative_to(Path.cwd()) \
            else str(path)
    except ValueError:  # another drive (Windows)
        return str(path)


def _pdf_options(p):
    p.add_argument("--instructor", action="store_true",
                   help="instructor edition: with in-text solutions, teaching notes and the "
                        "solution notebooks")
    p.add_argument("--out", default=None, metavar="DIR",
                   help="where the PDFs go (default: _build/pdf, or _build/instructor/pdf)")


def _pdf(pdf, args):
    edition = "instructor" if args.instructor else "student"
    result = pdf.build_pdfs(instructor=args.instructor, out=args.out,
                            progress=lambda line: print(line, flush=True))
    print(f"wrote the {edition} edition's lecture notes in {result.seconds:.0f} s: "
          f"{result.book} ({result.pages['book']} pages) and {len(result.chapters)} chapter PDFs "
          f"in {result.book.parent}{os.sep}")
    return EXIT_OK


def plural(n: int, noun: str, nouns: str | None = None) -> str:
    """``"1 student"``, ``"2 students"``: :func:`mlcourse_utils.grading.text.plural`, imported
    when a command prints a count (its command has loaded the grading package by then)."""
    from .grading.text import plural as counted

    return counted(n, noun, nouns)


def _add_time_limits(p, what, default):
    p.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                   help=f"time limit of one cell of {what} (default: {default}; "
                        f"{DEFAULT_TIMEOUT} unless the assignment sets its own)")
    p.add_argument("--budget", type=float, default=None, metavar="SECONDS",
                   help=f"time limit of the whole run of {what}, kernel start included "
                        f"(default {BUDGET_FACTOR} x the limit of one cell)")


def _check_time_limits(args):
    if (args.timeout is not None and not args.timeout > 0) or \
            (args.budget is not None and not args.budget > 0):
        raise UsageError("--timeout and --budget must be positive numbers of seconds")


def _release_options(p):
    p.add_argument("names", nargs="*", metavar="NAME", help="assignments (default: all)")
    _add_time_limits(p, "a solution notebook",
                     "the assignment's, metadata.mlcourse.timeout of its source notebook")


def _release(release, args):
    _check_time_limits(args)
    release.release(args.names or None, timeout=args.timeout, budget=args.budget)
    return EXIT_OK


def _lmses():
    """The registry of learning management systems (``grading/lms``), for the options of the
    commands that take one (imported only when such a command's parser is built)."""
    from .grading import lms

    return lms


def _grade_options(p):
    lms = _lmses()
    p.add_argument("name", metavar="NAME", help="assignment name, e.g. mle")
    p.add_argument("submissions", metavar="SUBMISSIONS",
                   help="a folder with one subfolder per student holding the notebook, or the "
                        f"bulk download of {lms.labels()} (the folder or its zip)")
    p.add_argument("--out", required=True, metavar="DIR",
                   help="where grades and feedback go (not inside SUBMISSIONS)")
    p.add_argument("--roster", default=None, metavar="ROSTER.csv",
                   help="the class list ("
                        + ", ".join(each.roster_export for each in lms.every())
                        + " or student_id,name,email,...): maps the LMS's names and ids in a "
                        "download to student ids")
    p.add_argument("--force", action="store_true",
                   help="grade again into a folder holding filled manual-grading CSVs or "
                        "imported points (they are moved to DIR/kept/, not deleted)")
    p.add_argument("--jobs", type=int, default=1, help="students graded at once (default 1)")
    p.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                   help="time limit per cell and per test (default: the assignment's, "
                        "metadata.mlcourse.timeout of solutions/NAME/NAME.ipynb, as "
                        f"`mlcourse check` uses it; {DEFAULT_TIMEOUT} unless it sets its own)")
    p.add_argument("--student-timeout", type=float, default=None, metavar="SECONDS",
                   help="total time for one student: start-up, cells, tests and re-runs after "
                        f"crashes (default: what `mlcourse check` allows, {BUDGET_FACTOR} x "
                        "--timeout, plus one --timeout for reading the notebook)")
    p.add_argument("--memory", type=int, default=DEFAULT_MEMORY_MB, metavar="MB",
                   help="memory limit of each student's sandbox, shared memory included "
                        f"(default {DEFAULT_MEMORY_MB})")
    p.add_argument("--secret-file", default=None, metavar="PATH",
                   help="a file with the term's grading secret: hidden tests draw each student's "
                        "inputs from it (without it: the public development seed)")
    p.add_argument("--shard", default=None, metavar="K/N",
                   help="grade only the K-th of N deterministic slices of the class (for a "
                        "Slurm array or a Kubernetes Indexed Job); join them with grade-merge")
    p.add_argument("--require-isolation", action="store_true",
                   help="stop before grading when a sandbox defence (namespaces, unprivileged "
                        "user, seccomp, cgroups, ...) is missing on this machine")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="also name each sandbox defence in force and what a missing one does "
                        "(results.json records them either way)")


def _grade(batch, args):
    from .grading.engine.options import GradingOptions
    from .grading.graded.out import FEEDBACK, GRADES, MANUAL, TASK_SCORES

    if args.jobs < 1 or (args.timeout is not None and args.timeout <= 0) or args.memory <= 0 \
            or (args.student_timeout is not None and args.student_timeout <= 0):
        raise UsageError("--jobs, --timeout, --student-timeout and --memory must be positive")
    shard = batch.parse_shard(args.shard) if args.shard else None
    _warn_if_tracked(args.out, "the class's grades, feedback and submissions' copies")
    secret = batch.read_secret(args.secret_file) if args.secret_file else None
    options = GradingOptions(timeout=args.timeout, student_timeout=args.student_timeout,
                             memory_mb=args.memory, secret=secret, jobs=args.jobs, shard=shard,
                             require_isolation=args.require_isolation, force=args.force,
                             verbose=args.verbose)
    assignment, results = batch.grade_class(args.name, args.submissions, args.out,
                                            options=options, roster=args.roster)
    print(f"graded {plural(len(results), 'submission')} of {args.name} (max "
          f"{assignment.max_score:g} autograded points); wrote {args.out}/{GRADES}, "
          f"{TASK_SCORES} and {FEEDBACK}/"
          + (f", and {MANUAL}/ for the manually graded cells" if assignment.manual else ""))
    return EXIT_OK


def _grade_merge_options(p):
    p.add_argument("outs", nargs="+", metavar="OUT", help="the shards' output folders")
    p.add_argument("--out", required=True, metavar="DIR", help="where the joined results go")
    p.add_argument("--force", action="store_true",
                   help="merge into a folder holding filled manual-grading CSVs or imported "
                        "points (they are moved to DIR/kept/, not deleted)")


def _grade_merge(batch, args):
    _warn_if_tracked(args.out, "the class's grades, feedback and submissions' copies")
    assignment, results = batch.merge_outputs(args.outs, args.out, force=args.force)
    print(f"merged {plural(len(args.outs), 'folder')}: {plural(len(results), 'submission')} of "
          f"{assignment.name} into {args.out}")
    return EXIT_OK


def _similarity_options(p):
    p.add_argument("name", metavar="NAME", help="assignment name, e.g. mle")
    p.add_argument("submissions", metavar="SUBMISSIONS",
                   help="folder with one subfolder per student holding the notebook")
    p.add_argument("--out", required=True, metavar="DIR",
                   help="where similarity.csv and similarity.html go")
    p.add_argument("--roster", default=None, metavar="ROSTER.csv",
                   help="the class list, as for `grade --roster`: names the students of an "
                        "LMS's download by their course ids (which decide their variants)")
    p.add_argument("--threshold", type=float, default=SIMILARITY_THRESHOLD,
                   help=f"flag a task when this share of one answer's own code matches "
                        f"(default {SIMILARITY_THRESHOLD})")
    p.add_argument("--min-tokens", type=int, default=SIMILARITY_MIN_TOKENS,
                   help=f"... and the matching code is at least this many tokens long "
                        f"(default {SIMILARITY_MIN_TOKENS})")


def _similarity(similarity, args):
    from .grading.similarity.report import write_report

    if not 0 < args.threshold <= 1 or args.min_tokens < 1:
        raise UsageError("--threshold must be in (0, 1] and --min-tokens positive")
    _warn_if_tracked(args.out, "students' answers side by side")
    report = similarity.find_similar(args.name, args.submissions, threshold=args.threshold,
                                     min_tokens=args.min_tokens, roster=args.roster)
    csv_path, html_path = write_report(report, args.out)
    pairs = sum(m.kind == "student" for m in report.matches)
    print(f"compared the answers of {plural(len(report.students), 'student')} to {args.name} in "
          f"{report.seconds:.1f} s: {plural(pairs, 'row')} between students, "
          f"{len(report.matches) - pairs} against the reference and "
          f"{plural(len(report.variant_flags), 'notebook')} with another student's numbers or "
          f"id flagged (they change no grade); wrote {csv_path}, "
          f"{csv_path.with_name('similarity_variants.csv')} and {html_path}")
    return EXIT_OK


def _grade_import_options(p):
    p.add_argument("graded", metavar="GRADED_DIR", help="a folder written by `mlcourse grade`")
    p.add_argument("csvs", nargs="+", metavar="FILLED.csv",
                   help="manual points: student_id, grade_id, points, comment (blank points "
                        "are skipped); or overrides of autograded tasks: student_id, task, "
                        "points, reason (kept in GRADED_DIR/overrides.csv)")


def _grade_import(manual, args):
    from .grading.graded.out import GRADEBOOK, GRADES, RESULTS, TASK_SCORES
    from .grading.reports.feedback import regenerate_feedback

    done = manual.import_points(args.graded, args.csvs)
    if done.manual or done.record is None:
        counts = ", ".join(f"{gid}: {n}" for gid, n in sorted(done.manual.items()))
        print(f"imported manual points into {os.path.join(args.graded, GRADEBOOK)} "
              f"({counts or 'no filled rows'})")
    if done.record is not None:
        print(f"imported {plural(done.overrides, 'override')} of autograded tasks into "
              f"{done.record}"
              + (f" ({done.replaced} replacing earlier ones)" if done.replaced else "")
              + f"; {done.in_force} in force, written into {GRADES}, {TASK_SCORES}, "
                f"{RESULTS} and {GRADEBOOK}")
        for line in done.unfit:
            print(f"  warning: {line} (kept in the record)")
    _print_regenerated(args.graded, regenerate_feedback(args.graded))
    return EXIT_OK


def _print_regenerated(graded, done):
    from .grading.graded.out import FEEDBACK

    print(f"wrote {plural(len(done.pages), 'feedback page')} with the points graded by hand and "
          f"the overrides into "
          f"{os.path.join(graded, FEEDBACK)}{os.sep} ({done.graded_by_hand} complete"
          + (f"; answers still to grade by hand: {', '.join(done.pending)}" if done.pending
             else "") + ")")
    if done.foreign:
        print(f"  note: {FEEDBACK}/ also holds {', '.join(done.foreign)}, not written by mlcourse "
              "(nbgrader's generate_feedback writes to nbgrader_feedback/ in a graded folder)")


def _feedback_options(p):
    lms = _lmses()
    p.add_argument("graded", metavar="GRADED_DIR", help="a folder written by `mlcourse grade`")
    p.add_argument("--lms", choices=lms.names(), default=None,
                   help="also write a zip of every student's page, named for this LMS's bulk "
                        "upload of feedback (needs --out)")
    p.add_argument("--out", default=None, metavar="FILE.zip", help="the zip to write")
    p.add_argument("--roster", default=None, metavar="ROSTER.csv",
                   help="who the students are in the LMS ("
                        + ", ".join(f"{each.label}'s {each.number_column}"
                                    for each in lms.every())
                        + "), for students not graded from the LMS's download")


def _feedback(feedback, args):
    if (args.lms is None) != (args.out is None):
        raise UsageError("--lms and --out go together (the zip of feedback files for the LMS)")
    if args.out is not None and not args.out.lower().endswith(".zip"):
        raise UsageError("--out names the zip to write: FILE.zip")
    if args.out is not None:
        _warn_if_tracked(args.out, "every student's feedback page")
    _print_regenerated(args.graded, feedback.regenerate_feedback(args.graded))
    if args.lms is not None:
        from .grading.lms.export import write_feedback_zip

        done = write_feedback_zip(args.graded, args.lms, args.out, args.roster)
        upload = _lmses().get(args.lms, "--lms").feedback_upload
        print(f"wrote {args.out}: {plural(len(done.files), 'feedback file')} for {upload}")
        for student, why in sorted(done.left_out.items()):
            print(f"  not in the zip: {student}: {why}")
    return EXIT_OK


def _export_options(p):
    lms = _lmses()
    p.add_argument("graded", nargs="+", metavar="GRADED_DIR",
                   help="one folder written by `mlcourse grade` per assignment")
    p.add_argument("--format", required=True, choices=lms.names(),
                   help="the learning management system whose import file to write")
    p.add_argument("--roster", required=True, metavar="ROSTER.csv",
                   help="the class list: a header row with name, student_id and/or email (and "
                        + " or ".join(each.roster_columns for each in lms.every()) + ")")
    p.add_argument("--out", required=True, metavar="FILE", help="the CSV file to write")
    p.add_argument("--config", default=None, metavar="DUE.toml",
                   help=f"due dates, extensions and the late penalty (every setting is shown "
                        f"and explained in {EXAMPLE_DUE} in the course repository); without "
                        "it, no penalty")
    p.add_argument("--missing", choices=["blank", "zero"], default="blank",
                   help="grade of a roster student without a submission (default: blank)")
    p.add_argument("--times", default=None, metavar="TIMES.csv",
                   help="the trusted submission times (student_id,submitted_at[,assignment]) "
                        "from the LMS or exchange, for the late penalty")
    for each in lms.every():  # each LMS's own options
        each.add_export_arguments(p)
    p.add_argument("--allow-missing-ids", action="store_true",
                   help="write roster students the LMS cannot find (no id) instead of stopping")
    p.add_argument("--times-from-submission", action="store_true",
                   help="also use the time found inside a submission (timestamp.txt or the "
                        "file's time), which the student controls, where TIMES.csv has none")


def _export(lms, args):
    _warn_if_tracked(args.out, "the class's grades")
    systems = _lmses()
    options = {k: v for each in systems.every() for k, v in each.export_keywords(args).items()}
    report = lms.export(args.graded, args.format, args.roster, args.out,
                        config_path=args.config, missing=args.missing, times_path=args.times,
                        times_from_submission=args.times_from_submission,
                        allow_missing_ids=args.allow_missing_ids, **options)
    print(f"wrote {args.out} ({args.format}): {plural(report.rows, 'student')} of the roster")
    print(f"  import: {systems.get(args.format).import_hint(options)}")
    if report.unidentified:
        print(f"  {plural(len(report.unidentified), 'student')} without an id the LMS finds "
              f"them by (--allow-missing-ids): {', '.join(report.unidentified)}")
    for name in report.without_roster:
        _print_export_of(report, name)
    return EXIT_OK


def _print_export_of(report, name):
    """What the export did for one assignment, in the order it did it: the submission times,
    the penalties they gave, who has none, what the LMS marked late, who is not in the file,
    and the feedback pages written again with the totals of the file."""
    from .grading.graded.model import shown
    from .grading.graded.out import OVERRIDES

    sources = ", ".join(f"{n} from {src}" for src, n in report.time_sources[name].items())
    print(f"  {name}: submission times: {sources or 'none (no late penalty)'}")
    for student, problem in sorted(report.time_problems[name].items()):
        print(f"  {name}: {student}: time not used: {problem}")
    for student, cell in sorted(report.late[name].items()):
        print(f"  {name}: {student} is {plural(cell.days_late, 'day')} late: penalty "
              f"{cell.penalty:g} % applied ({shown(cell.raw)} -> {shown(cell.score)}; time from "
              f"{cell.source})")
    if report.undated[name]:
        print(f"  {name}: no penalty for {plural(len(report.undated[name]), 'submission')} "
              f"without a time: {', '.join(report.undated[name])}")
    for student, done in sorted(report.lms_late_done.get(name, {}).items()):
        print(f"  {name}: {student}: marked late in the LMS's download: {done}")
    if report.overridden.get(name):
        print(f"  {name}: task points set by a teaching assistant ({OVERRIDES}) included for "
              f"{', '.join(report.overridden[name])}")
    lists = [(("submission without a roster entry (not exported)",
               "submissions without a roster entry (not exported)"), report.without_roster),
             (("student of the roster without a submission",
               "students of the roster without a submission"), report.without_submission),
             (("submission with manual cells still to grade (counted 0)",
               "submissions with manual cells still to grade (counted 0)"), report.ungraded)]
    for label, table in lists:
        if table[name]:
            print(f"  {name}: {plural(len(table[name]), *label)}: {', '.join(table[name])}")
    for student, why in sorted(report.refused.get(name, {}).items()):
        print(f"  {name}: {student}: not exported: {why}")
    for who, ids in sorted(report.conflicts[name].items()):
        print(f"  {name}: {who}: not exported: several submissions match ({', '.join(ids)})")
    if name in report.feedback_problems:
        print(f"  {name}: warning: the feedback pages were not written again (late "
              f"penalties not shown there): {report.feedback_problems[name]}; run "
              "`mlcourse feedback` on the folder in the course folder", file=sys.stderr)
    else:
        print(f"  {name}: feedback pages written again with the totals of this file")


def _report_options(p):
    p.add_argument("graded", nargs="+", metavar="GRADED_DIR",
                   help="one folder written by `mlcourse grade` (or grade-merge) per assignment")
    p.add_argument("--out", required=True, metavar="DIR",
                   help="where index.html, figures/ and tables/ go")
    p.add_argument("--anonymous", action="store_true",
                   help="aggregates only: no student id anywhere (to share with a class or a "
                        "committee)")
    p.add_argument("--threshold", type=float, default=50.0, metavar="PERCENT",
                   help="list students below this percentage of the maximum on two or more "
                        "assignments (default 50)")
    p.add_argument("--config", default=None, metavar="DUE.toml",
                   help=f"the due dates of `mlcourse export` ({EXAMPLE_DUE}), to show late "
                        "penalties")


def _report(class_report, args):
    if not 0 < args.threshold <= 100:
        raise UsageError("--threshold must be a percentage in (0, 100]")
    if not args.anonymous:
        _warn_if_tracked(args.out, "students' ids, scores and reasons")
    try:
        report = class_report.make_report(args.graded, args.out, anonymous=args.anonymous,
                                          threshold=args.threshold / 100,
                                          config_path=args.config)
    except (class_report.GradedFolderError, class_report.ReportError) as exc:
        raise UsageError(str(exc)) from None  # a folder that is not one: say what is missing
    students = len({s for r in report.assignments for s in r.students})
    print(f"wrote the {'anonymous ' if args.anonymous else ''}class report on "
          f"{plural(len(report.assignments), 'assignment')} and {plural(students, 'student')}: "
          f"{os.path.join(args.out, 'index.html')} (figures/ and tables/ beside it)")
    for gap in report.gaps:
        print(f"  note: {gap}")
    return EXIT_OK


def _check_options(p):
    p.add_argument("notebook", metavar="NOTEBOOK",
                   help="your assignment notebook (save it first: the saved file is checked)")
    _add_time_limits(p, "your notebook", "the assignment's, which the check prints first")


#: How `mlcourse check` labels each test cell's status.
CHECK_LABELS = {"passed": "ok", "failed": "FAIL", "hidden": "hidden", "changed": "CHANGED",
                "not run": "not run"}


def check_start_lines(result: Any) -> list[str]:
    """`mlcourse check`'s first lines, before the notebook runs: which variant it checks (the
    student's, from their course id, or the default one and why:
    :func:`~.grading.static_check.id_check`), the notebook, its test cells and the time limit of
    one cell, then the problems and warnings found without running it, then each task's rule on
    library calls (:func:`~.grading.static_check.rule_lines`)."""
    lines = [result.variant] if result.variant else []
    lines += [f"checking {result.notebook}: {len(result.planned)} test cells"
             + (f" ({result.hidden} hidden: they run when graded)" if result.hidden else "")
             + f", {result.timeout:g} s per cell"]
    lines += [f"  problem: {line}" for line in result.problems]
    lines += [f"  warning: {line}" for line in result.warnings]
    lines += [f"  rule: {line}" for line in result.rules]  # each task's calls (selfcheck)
    return lines


def check_test_line(status: Any) -> str:
    """One line of `mlcourse check` for one test cell (a TestStatus), printed once it is known."""
    width = max(len(label) for label in CHECK_LABELS.values())
    return (f"  {CHECK_LABELS[status.status]:<{width}}  {status.grade_id}"
            + (f": {status.message}" if status.message and status.status != "hidden" else ""))


def check_end_lines(result: Any) -> list[str]:
    """`mlcourse check`'s last lines: errors in cells that are not tests, and the counts."""
    lines = [f"  error in {cell}: {message}" for cell, message in result.other]
    counts = [f"{result.count('passed')} passed", f"{result.count('failed')} failed",
              f"{result.count('hidden')} hidden"]
    counts += [f"{result.count(s)} {s}" for s in ("changed", "not run") if result.count(s)]
    return lines + [", ".join(counts) + " (hidden tests run when your notebook is graded)"]


def _check(selfcheck, args):
    _check_time_limits(args)
    show = _progress_line(sys.stderr)

    def say(*lines):  # at once: a terminal or a pipe sees each line as the check goes on
        show("")
        for line in lines:
            print(line, flush=True)

    try:
        result = selfcheck.check_notebook(
            args.notebook, timeout=args.timeout, budget=args.budget,
            on_cell=lambda index, cell: show(f"running cell {index + 1}"),
            on_start=lambda started: say(*check_start_lines(started)),
            on_test=lambda status: say(check_test_line(status)),
            on_problem=lambda line: say(f"  problem: {line}"))
    finally:
        show("")
    say(*check_end_lines(result))
    return EXIT_OK if result.ok else EXIT_FAILED


def _warn_if_tracked(path, what):
    """Warn (stderr) when ``path`` is in a git work tree that would track ``what``."""
    from .grading.graded.privacy import warning

    line = warning(path, what)
    if line:
        print(line, file=sys.stderr)


def _progress_line(stream):
    """A function that shows one changing status line on a terminal (and does nothing else)."""
    if not getattr(stream, "isatty", lambda: False)():
        return lambda text: None
    width = [0]

    def show(text):
        stream.write("\r" + text.ljust(width[0]) + ("\r" if not text else ""))
        stream.flush()
        width[0] = len(text)
    return show


COMMANDS: dict[str, Command] = {
    "build": Command("build the course website", "mlcourse_utils.book.build", _build,
                     _build_options, "mlcourse build\nmlcourse build --instructor --out "
                     "_build/instructor", extra=("book", "jupyter_book")),
    "pdf": Command("the chapters as PDF lecture notes (one per chapter, one book)",
                   "mlcourse_utils.book.pdf", _pdf, _pdf_options, "mlcourse pdf --out notes",
                   extra=("book", "pypdf")),
    "release": Command("regenerate exercises/ from solutions/ (after checking them)",
                       "mlcourse_utils.grading.engine.release", _release, _release_options,
                       "mlcourse release mle bayes", extra=("grading", "nbgrader"), course=True),
    "grade": Command("autograde every student's submission in a folder",
                     "mlcourse_utils.grading.engine.batch", _grade, _grade_options,
                     "mlcourse grade mle submissions/ --out graded --jobs 2\n"
                     "mlcourse grade mle ~/term/mle.zip --roster ~/term/roster.csv --out "
                     "~/term/graded/mle --course ~/pml-course",
                     extra=("grading", "nbgrader"), course=True),
    "grade-merge": Command("join the output folders of `grade --shard K/N` runs",
                           "mlcourse_utils.grading.engine.merge", _grade_merge,
                           _grade_merge_options,
                           "mlcourse grade-merge shards/* --out graded",
                           extra=("grading", "nbgrader"), course=True),
    "similarity": Command("flag answers that match beyond renaming and reformatting, between "
                          "students and with the reference (never grades)",
                          "mlcourse_utils.grading.similarity.pairs", _similarity,
                          _similarity_options,
                          "mlcourse similarity mle submissions/ --out similar", course=True),
    "grade-import": Command("load a teaching assistant's manual points (manual/<grade_id>.csv, "
                            "filled) or overrides of autograded tasks (student_id, task, "
                            "points, reason) into a graded folder",
                            "mlcourse_utils.grading.reports.manual", _grade_import,
                            _grade_import_options,
                            "mlcourse grade-import graded graded/manual/derivation_bernoulli_mle"
                            ".csv\nmlcourse grade-import graded regrades.csv",
                            extra=("grading", "nbgrader"),
                            error_prefix="nothing was imported:\n", course=True),
    "feedback": Command("write every student's feedback page again with the points and "
                        "comments graded by hand, and a zip of them for the LMS's bulk upload",
                        "mlcourse_utils.grading.reports.feedback", _feedback, _feedback_options,
                        lambda: "mlcourse feedback graded\nmlcourse feedback graded --lms "
                                f"{_lmses().names()[0]} --out {_lmses().names()[0]}-feedback.zip",
                        extra=("grading", "nbgrader"), course=True),
    "export": Command("grade files for the LMS, with late penalties",
                      "mlcourse_utils.grading.lms.export", _export, _export_options,
                      lambda: "mlcourse export graded/mle graded/bayes --format "
                              f"{_lmses().names()[0]} --roster roster.csv --config due.toml "
                              f"--out {_lmses().names()[0]}.csv",
                      extra=("grading", "nbgrader"), course=True),
    "report": Command("the class report after grading: score distributions, the most "
                      "frequent failed checks in words, item analysis, failures not about the "
                      "answer (an offline page with figures and their data)",
                      "mlcourse_utils.grading.reports.class_report", _report, _report_options,
                      "mlcourse report graded/mle graded/bayes --out report\n"
                      "mlcourse report graded/mle graded/bayes --out shared --anonymous\n"
                      "mlcourse report graded/mle --config due.toml --out report",
                      extra=("grading", "jinja2"), course=True),
    "check": Command("run a notebook's visible tests (for students)",
                     "mlcourse_utils.grading.selfcheck", _check, _check_options,
                     "mlcourse check mle.ipynb\nmlcourse check mle.ipynb --timeout 30\n"
                     "python -m mlcourse_utils check mle.ipynb"),
}


# ----------------------------------------------------------------------------- the wrapper


def installed(module: str) -> bool:
    """Whether ``module`` is part of this installation, found without importing it.

    A module of this package (``mlcourse_utils.grading.engine.batch``) is looked up file by file in
    the package's folders, so that neither it nor its parent packages run (the grading package
    imports numpy) and no other copy of the package on the path answers for this one: the
    student wheel (book/wheel.py) has neither the grader nor the book tools.
    """
    import importlib.machinery
    import importlib.util

    top, _, rest = module.partition(".")
    if top != __package__ or not rest:
        try:
            return importlib.util.find_spec(module) is not None
        except ModuleNotFoundError:
            return False
    paths, name = list(sys.modules[__package__].__path__), top
    for part in rest.split("."):
        name = f"{name}.{part}"
        spec = importlib.machinery.PathFinder.find_spec(name, paths)
        if spec is None:
            return False
        paths = list(spec.submodule_search_locations or [])
    return True


def installed_version() -> str:
    """This installation's version: its distribution's (``0.1.0+student`` for the student
    wheel), else the package's ``__version__`` (a source tree run without installing it)."""
    from importlib import metadata

    from . import __version__

    try:
        version = metadata.version(__package__)
    except metadata.PackageNotFoundError:
        return __version__
    # (Another install's metadata found first on the path does not speak for this package.)
    return version if version.partition("+")[0] == __version__ else __version__


class _VersionAction(argparse.Action):
    """``--version``: the installation's version, looked up only when asked for."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS,
                 help=None):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"mlcourse {installed_version()}")
        parser.exit()


def make_parser(commands: Collection[str] | None = None) -> argparse.ArgumentParser:
    """The argument parser of every command (builds from :data:`COMMANDS`).

    ``--help`` lists the commands of this installation (:func:`installed`); the others are
    named in one line that says where they are, and still parse, so that running one says the
    same (:func:`_not_installed`). The options of only the ``commands`` named (all when None)
    are added: those of the LMS commands come from the grader's registry of LMSes, which
    ``mlcourse --help`` and a student's ``mlcourse check`` never import (:func:`main` names
    the command it runs).
    """
    have = {name: installed(command.module) for name, command in COMMANDS.items()}
    missing = [name for name, ok in have.items() if not ok]
    parser = argparse.ArgumentParser(
        prog="mlcourse",
        description="The course's command line: build the website, release, grade and check "
                    "assignments." if not missing else
                    "The course's command line, as this installation has it: "
                    + ", ".join(name for name, ok in have.items() if ok) + ".",
        epilog=(f"grading and instructor commands ({', '.join(missing)}): install the full "
                "course package from the course repository (see its README). " if missing
                else "") + "Run `mlcourse COMMAND --help` for a command's options and an example.")
    parser.add_argument("--version", action=_VersionAction,
                        help="print the version of this installation of the course package "
                             "(+student: the course wheel from the website) and exit")
    parser.add_argument("--traceback", action="store_true",
                        help="on an unexpected error, show Python's traceback (for a bug "
                             "report) instead of one line")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                help="one of the commands below")
    for name, command in COMMANDS.items():
        if not have[name]:  # not listed (no help=); its arguments are not this install's
            p = sub.add_parser(name, description=_not_installed(name, command))
            p.add_argument("arguments", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
            continue
        if commands is not None and name not in commands:  # listed; not run now
            sub.add_parser(name, help=command.summary)
            continue
        example = command.example() if callable(command.example) else command.example
        p = sub.add_parser(name, help=command.summary, description=command.summary,
                           epilog="example:\n" + "".join(f"  {line}\n" for line in
                                                         example.splitlines()),
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        command.options(p)
        if command.course:
            p.add_argument("--course", default=None, metavar="DIR",
                           help="the course repository (its nbgrader_config.py and solutions/ "
                                f"hold the hidden tests); default: the environment variable "
                                f"{COURSE_ENV}, else the folder you are in or one above it")
    return parser


def _not_installed(name: str, command: Command) -> str | None:
    """One line saying what to install when ``command`` cannot run in this installation."""
    import importlib.util

    if not installed(command.module):
        return (f"mlcourse {name} is not part of this installation (the course wheel from the "
                "website has only the students' commands): install the full course package "
                "from the course repository (see its README)")
    if command.extra is not None and importlib.util.find_spec(command.extra[1]) is None:
        extra = command.extra[0]
        return (f"mlcourse {name} needs the course's {extra} tools, which are not installed: "
                f"in the course repository, pip install '.[{extra}]' (the package is not on "
                "PyPI; or run `make` there, which installs everything)")
    return None


@contextlib.contextmanager
def _course(command: Command, args: argparse.Namespace):
    """The course folder for a command that works in one: ``--course DIR`` is put in the
    environment (:data:`~.course.COURSE_ENV`) while the command runs, so that everything it
    runs finds the same folder; without a course, a :class:`UsageError` says how to name it."""
    if not command.course:
        yield
        return
    from .course import COURSE_ENV, course_folder, find_course_root

    before = os.environ.get(COURSE_ENV)
    try:
        if args.course is not None:
            os.environ[COURSE_ENV] = str(course_folder(args.course))
        find_course_root()
    except FileNotFoundError as exc:
        _restore(COURSE_ENV, before)
        raise UsageError(str(exc)) from None
    try:
        yield
    finally:
        _restore(COURSE_ENV, before)


def _restore(variable: str, value: str | None) -> None:
    if value is None:
        os.environ.pop(variable, None)
    else:
        os.environ[variable] = value


def _print_error(name: str, message: str) -> None:
    print(f"mlcourse {name}: {message}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``mlcourse`` with ``argv`` (default: the command line); return the exit status."""
    from ._imports import skip_slow_optional_imports

    for stream in (sys.stdout, sys.stderr):  # a Windows console or pipe may not be UTF-8
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    skip_slow_optional_imports()
    argv = sys.argv[1:] if argv is None else list(argv)
    running = next((a for a in argv if not a.startswith("-")), None)  # the command's name
    args = make_parser({running} if running else set()).parse_args(argv)
    name = args.command
    command = COMMANDS[name]
    try:
        missing = _not_installed(name, command)
        if missing:
            print(missing, file=sys.stderr)
            return EXIT_USAGE
        with _course(command, args):
            import importlib

            module = importlib.import_module(command.module)
            return command.run(module, args)
    except KeyboardInterrupt:
        _print_error(name, "interrupted")
        return EXIT_INTERRUPTED
    except UsageError as exc:
        _print_error(name, str(exc))
        return EXIT_USAGE
    except (OSError, ValueError, RuntimeError) as exc:  # bad input, a failed build or kernel
        _print_error(name, command.error_prefix + (str(exc) or type(exc).__name__))
        return EXIT_FAILED
    except Exception as exc:  # noqa: BLE001 (a bug: one line unless asked for the traceback)
        import subprocess

        if isinstance(exc, subprocess.CalledProcessError):  # a tool the command runs failed
            _print_error(name, f"{exc.cmd[0]} failed with exit status {exc.returncode}")
            return EXIT_FAILED
        if args.traceback:
            raise
        _print_error(name, f"unexpected error ({type(exc).__name__}: {exc}); please report it, "
                           f"with the output of `mlcourse --traceback {name} ...`")
        return EXIT_FAILED


if __name__ == "__main__":
    sys.exit(main())
