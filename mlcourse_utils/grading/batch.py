"""Grading a class: every student of SUBMISSIONS, in parallel, with progress, into one folder.

One student can only cost itself: its grading has deadlines and a total budget, its sandbox its
own limits, and writing its feedback or gradebook copy can fail only for it (reported; the CSVs
are always written).
"""

from __future__ import annotations

import concurrent.futures
import functools
import sys
from pathlib import Path

from . import gradebook
from .notebook import find_course_root, load_assignment
from .protocol import clean_text
from .report import write_csvs, write_feedback
from .session import GradeResult, grade_notebook
from .submissions import Refused, find_submissions


def _safe_write(label, student, write, failures):
    """Run one student's ``write()``; a failure is that student's, with a reason, never the batch's."""
    try:
        write()
    except Exception as exc:  # noqa: BLE001
        failures.append(f"{student}: {label} could not be written ({type(exc).__name__}: "
                        f"{clean_text(str(exc), 300)})")


def grade_class(name, submissions, out, *, jobs=1, timeout=60.0, memory_mb=4096, root=None,
                progress=True, student_timeout=None):
    """Grade every student folder; write grades.csv, task_scores.csv and feedback/*.html.

    One student can only cost itself: its grading has deadlines and a total budget
    (``student_timeout``), its sandbox its own limits, and writing its feedback or its
    gradebook copy can fail only for it (the failure is reported; the CSVs are always written).
    """
    from tqdm import tqdm

    root = Path(root) if root else find_course_root()
    assignment = load_assignment(name, root)
    submissions, out = Path(submissions).resolve(), Path(out).resolve()
    if not submissions.is_dir():
        raise FileNotFoundError(f"submissions folder {submissions} does not exist")
    out.mkdir(parents=True, exist_ok=True)
    (out / "feedback").mkdir(exist_ok=True)
    students = find_submissions(name, submissions, assignment.notebook)
    hidden = sorted({root.resolve(), submissions, out})
    book_proc = gradebook.start(out, root / "solutions" / name / assignment.notebook, name)
    results, failures = {}, []
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = {
            pool.submit(grade_notebook, assignment, path, student, timeout=timeout,
                        memory_mb=memory_mb, hidden=hidden,
                        student_timeout=student_timeout): student
            for student, path in students.items()
        }
        bar = tqdm(total=len(futures), desc=f"grading {name}", unit="student",
                   disable=not progress, file=sys.stderr)
        for fut in concurrent.futures.as_completed(futures):
            student = futures[fut]
            try:
                results[student] = fut.result()
            except Exception as exc:  # noqa: BLE001 (a grader bug must not stop the class)
                results[student] = GradeResult.zero(
                    student, assignment,
                    f"internal grader error: {type(exc).__name__}: {clean_text(str(exc), 300)}")
            _safe_write("the feedback page", student, functools.partial(
                write_feedback, results[student], assignment,
                out / "feedback" / f"{student}.html"), failures)
            bar.update(1)
        bar.close()
    write_csvs(results, assignment, out)
    # nbgrader's gradebook and a copy of each notebook under autograded/: formgrader and
    # `nbgrader export` work on `out` as a course folder (manual grading, final grades). The
    # copy holds the student's cells without outputs, attachments or unsafe HTML.
    for student, path in students.items():
        if path is not None and not isinstance(path, Refused):
            target = out / "autograded" / student / name / assignment.notebook
            _safe_write("the gradebook copy", student,
                        functools.partial(gradebook.write_sanitized_copy, path, target), failures)
    error = gradebook.finish(
        book_proc, {s: {t.grade_id: t.earned for t in r.tests} for s, r in results.items()},
        [gid for gid, _ in assignment.manual])
    for line in failures:
        print(f"warning: {line}", file=sys.stderr)
    if error:  # the CSVs and the feedback are written: say so, but do not fail the batch
        print(f"warning: the nbgrader gradebook could not be written: {error}", file=sys.stderr)
    return assignment, results

