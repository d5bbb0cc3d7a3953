"""Grading a class: every student of SUBMISSIONS, in parallel, with progress, into one folder.

One student can only cost itself: its grading has deadlines and a total budget, its sandbox its
own limits, and writing its feedback or gradebook copy can fail only for it (reported; the CSVs
are always written).
"""

from __future__ import annotations

import concurrent.futures
import functools
import hashlib
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

from . import gradebook, manual
from .notebook import Assignment, find_course_root, load_assignment
from .protocol import clean_text
from .report import read_results, write_csvs, write_feedback, write_results
from .session import GradeResult, check_setup, grade_notebook
from .submissions import Refused, find_submissions


def _safe_write(label, student, write, failures):
    """Run one student's ``write()``: a failure is that student's (reported), not the batch's."""
    try:
        write()
    except Exception as exc:  # noqa: BLE001
        failures.append(f"{student}: {label} could not be written ({type(exc).__name__}: "
                        f"{clean_text(str(exc), 300)})")


def parse_shard(text: str) -> tuple[int, int]:
    """``"K/N"`` → ``(K, N)`` with 1 ≤ K ≤ N; ValueError otherwise."""
    try:
        k, n = (int(part) for part in str(text).split("/"))
    except ValueError:
        raise ValueError(f"--shard must look like K/N (e.g. 2/8), not {text!r}") from None
    if not 1 <= k <= n:
        raise ValueError(f"--shard K/N needs 1 <= K <= N, got {text!r}")
    return k, n


MIN_SECRET_BYTES = 16


def read_secret(path: Path | str) -> bytes:
    """The grading secret in a file (surrounding whitespace ignored); ValueError if too short.

    Make one with e.g. ``python -c "import secrets; print(secrets.token_hex(32))" > secret.txt``
    and keep it out of the repository: with it, each student's hidden inputs are unknowable from
    the public repository; re-grading with the same file reproduces them.
    """
    try:
        data = Path(path).read_bytes().strip()
    except OSError as exc:
        raise ValueError(f"--secret-file {path}: {exc.strerror}") from None
    if len(data) < MIN_SECRET_BYTES:
        raise ValueError(f"--secret-file {path} holds {len(data)} bytes; use at least "
                         f"{MIN_SECRET_BYTES} random ones (e.g. secrets.token_hex(32))")
    return data


def in_shard(student: str, shard: tuple[int, int]) -> bool:
    """Whether ``student`` belongs to shard ``(K, N)``: by a hash of the id, so a student stays
    in its shard when others join or leave the class."""
    k, n = shard
    digest = hashlib.sha256(student.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % n == k - 1


def grade_class(name: str, submissions: Path | str, out: Path | str, *, jobs: int = 1,
                timeout: float = 60.0, memory_mb: int = 4096, root: Path | str | None = None,
                progress: bool = True, student_timeout: float | None = None,
                shard: tuple[int, int] | None = None,
                secret: bytes | None = None) -> tuple[Assignment, dict[str, GradeResult]]:
    """Grade every student folder; write grades.csv, task_scores.csv and feedback/*.html.

    One student can only cost itself: its grading has deadlines and a total budget
    (``student_timeout``), its sandbox its own limits, and writing its feedback or its
    gradebook copy can fail only for it (the failure is reported; the CSVs are always written).
    With ``shard=(K, N)`` only the K-th of N deterministic slices of the class is graded;
    :func:`merge_outputs` joins the N folders into what one run writes. ``secret`` (bytes, see
    :func:`read_secret`) gives every student their own hidden-test inputs.
    """
    from tqdm import tqdm

    root = Path(root) if root else find_course_root()
    assignment = load_assignment(name, root)
    check_setup(assignment)
    submissions, out = Path(submissions).resolve(), Path(out).resolve()
    if not submissions.is_dir():
        raise FileNotFoundError(f"submissions folder {submissions} does not exist")
    out.mkdir(parents=True, exist_ok=True)
    (out / "feedback").mkdir(exist_ok=True)
    students = find_submissions(name, submissions, assignment.notebook)
    if shard is not None:
        students = {s: p for s, p in students.items() if in_shard(s, shard)}
    hidden = sorted({root.resolve(), submissions, out})
    book_proc = gradebook.start(out, root / "solutions" / name / assignment.notebook, name)
    results, failures = {}, []
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = {
            pool.submit(grade_notebook, assignment, path, student, timeout=timeout,
                        memory_mb=memory_mb, hidden=hidden,
                        student_timeout=student_timeout, secret=secret): student
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
    write_results(results, assignment, out)
    # nbgrader's gradebook and a copy of each notebook under autograded/: formgrader and
    # `nbgrader export` work on `out` as a course folder (manual grading, final grades). The
    # copy holds the student's cells without outputs, attachments or unsafe HTML.
    for student, path in students.items():
        if path is not None and not isinstance(path, Refused):
            target = out / "autograded" / student / name / assignment.notebook
            _safe_write("the gradebook copy", student,
                        functools.partial(gradebook.write_sanitized_copy, path, target), failures)
    # The manual-grading pages and the submission times (`mlcourse grade-import`, `export`).
    _safe_write("the manual-grading pages or submission times", "the class", functools.partial(
        manual.write_extras, out, assignment, students, root), failures)
    _finish_gradebook(book_proc, results, assignment)
    for line in failures:
        print(f"warning: {line}", file=sys.stderr)
    return assignment, results


def _finish_gradebook(book_proc, results, assignment):
    error = gradebook.finish(
        book_proc, {s: {t.grade_id: t.earned for t in r.tests} for s, r in results.items()},
        [gid for gid, _ in assignment.manual])
    if error:  # the CSVs and the feedback are written: say so, but do not fail the batch
        print(f"warning: the nbgrader gradebook could not be written: {error}", file=sys.stderr)


def merge_outputs(outs: Sequence[Path | str], out: Path | str,
                  root: Path | str | None = None) -> tuple[Assignment, dict[str, GradeResult]]:
    """Join the folders of shards (``mlcourse grade --shard K/N``) into one, as one run writes.

    The CSVs are written again from every shard's ``results.json`` (so they are byte for byte
    what one run writes), feedback pages and gradebook copies are copied, and the gradebook is
    built for the whole class. Raises ValueError when the folders are not shards of one
    assignment or a student appears twice.
    """
    root = Path(root) if root else find_course_root()
    results, name = {}, None
    for folder in outs:
        data = read_results(folder)
        if name is not None and data.name != name:
            raise ValueError(f"{folder} holds {data.name!r}, the others {name!r}")
        name = data.name
        twice = set(results) & set(data.results)
        if twice:
            raise ValueError(f"{folder} grades {sorted(twice)[0]!r} again: are these shards of "
                             "one class?")
        results.update(data.results)
    if name is None:
        raise ValueError("grade-merge needs at least one folder")
    assignment = load_assignment(name, root)
    out = Path(out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    book_proc = gradebook.start(out, root / "solutions" / name / assignment.notebook, name)
    for folder in outs:
        for sub in ("feedback", "autograded"):
            if (Path(folder) / sub).is_dir():
                shutil.copytree(Path(folder) / sub, out / sub, dirs_exist_ok=True)
    results = dict(sorted(results.items()))
    write_csvs(results, assignment, out)
    write_results(results, assignment, out)
    manual.merge_extras(outs, out, assignment, results, root)
    _finish_gradebook(book_proc, results, assignment)
    return assignment, results

