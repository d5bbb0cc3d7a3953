"""Grading a class: every student of SUBMISSIONS, in parallel, with progress, into one folder.

One student can only cost itself: its grading has deadlines and a total budget, its sandbox its
own limits, reading its notebook and writing its feedback, gradebook copy, manual-grading answer
and submission time can fail only for it (reported; every other student keeps theirs, and the
CSVs are always written). Ctrl-C or SIGTERM stops the run at once: no student starts, every
sandbox ends, nothing more is written, and no cgroup stays behind (``isolation.stop_all``).
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import functools
import hashlib
import sys
import tempfile
import time
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from ..._files import write_text
from ...course import find_course_root
from ..graded import gradebook, overrides
from ..graded.out import INTAKE, OutFolder
from ..graded.results import GradeResult
from ..intake.collect import Intake, collect, layouts
from ..intake.roster import Roster, read_roster
from ..notebook import Assignment, load_assignment
from ..reports import manual
from ..reports.feedback import NBGRADER_CONFIG, write_feedback
from ..sandbox import isolation
from ..sandbox.requirements import check_dependencies
from ..text import clean_text, plural
from .defences import _probe_defences
from .options import DEFAULTS, GradingOptions
from .progress import (
    _completed,
    _peak_memory_mb,
    _running,
    _sigterm_interrupts,
    _StallWatch,
    waiting_on,
)
from .session import check_setup, grade_notebook


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
        raise ValueError(f"--secret-file {path} holds {plural(len(data), 'byte')}; use at least "
                         f"{MIN_SECRET_BYTES} random ones (e.g. secrets.token_hex(32))")
    return data


def in_shard(student: str, shard: tuple[int, int]) -> bool:
    """Whether ``student`` belongs to shard ``(K, N)``: by a hash of the id, so a student stays
    in its shard when others join or leave the class."""
    k, n = shard
    digest = hashlib.sha256(student.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % n == k - 1


def _copy_path(out, name, notebook, student):
    return OutFolder(out).autograded_copy(student, name, notebook)


def _grade_one(assignment, submission, out, parts, failures, carried, options, hidden):
    """Grade one student, apply the teaching assistants' overrides of the folder's record to
    the result and write their feedback page (in the grading thread: the student's own time,
    not the class's). ``carried``: what the folder keeps across gradings (:class:`_Carried`)."""
    real = submission.submitted
    result = grade_notebook(
        assignment, submission, options, hidden=hidden,
        copy_to=_copy_path(out, assignment.name, assignment.notebook, submission.student)
        if real else None,
        manual_dir=parts if real and assignment.manual else None)
    if isolation.interrupted():
        return None  # (its sandbox was stopped under it: not a grade, nothing is written)
    overrides.apply_to(result, carried.record, _maxima(assignment))
    _write_feedback(result, assignment, out, failures, carried)
    return result



@dataclasses.dataclass
class _Carried:
    """What a graded folder keeps across gradings into it: the record of overrides and the
    late penalties of the last export, which every page written again shows."""

    record: dict
    late: dict

    @classmethod
    def read(cls, out):
        return cls(OutFolder(out).read_record(), OutFolder(out).read_late())


def _maxima(assignment):
    return {task: assignment.task_max(task) for task in assignment.tasks}


def _write_feedback(result, assignment, out, failures, carried):
    start = time.monotonic()
    _safe_write("the feedback page", result.student, functools.partial(
        write_feedback, result, assignment, OutFolder(out).feedback_page(result.student),
        late=carried.late.get(result.student)), failures)
    result.seconds += time.monotonic() - start


def grade_class(name: str, submissions: Path | str, out: Path | str,
                options: GradingOptions = DEFAULTS, *, roster: Path | str | None = None,
                root: Path | str | None = None) -> tuple[Assignment, dict[str, GradeResult]]:
    """Grade every student folder; write grades.csv, task_scores.csv and feedback/*.html.

    ``options`` (:class:`~.options.GradingOptions`, built once by the command line) says how.
    One student can only cost itself: its grading has deadlines (``options.timeout`` per cell
    and per test, default the assignment's limit) and a total budget
    (``options.student_timeout``, default :func:`~.session.grading_budget`; it also covers
    reading the notebook and writing its pages), its sandbox its own limits, and writing its
    feedback, gradebook copy, manual-grading answer or submission time can fail only for it
    (the failure is reported; the CSVs are always written).
    With ``options.shard=(K, N)`` only the K-th of N deterministic slices of the class is
    graded; :func:`~.merge.merge_outputs` joins the N folders into what one run writes.
    ``options.secret`` (bytes, see :func:`read_secret`) gives every student their own
    hidden-test inputs. The defences in force are printed in a sentence (by name with
    ``options.verbose``) and recorded in ``results.json``; with ``options.require_isolation`` a
    missing one raises :class:`~.defences.IsolationError` before any student is graded. While a
    student takes long, the progress line names them.

    SUBMISSIONS is read by :func:`~.collect.collect`: student folders, or a Canvas or
    Moodle download (a folder or its zip) whose files are mapped to student ids through
    ``roster`` (a CSV, :func:`.roster.read_roster`): a paragraph says how the submissions met
    the roster (:meth:`.collect.Intake.summary`), what could not be matched is printed, and who
    each student is in the LMS goes to ``out/intake.json``. An output folder inside
    SUBMISSIONS is refused, and so is one holding a teaching assistant's work (filled
    manual-grading CSVs, imported points) unless ``options.force`` (that work is then moved
    aside, :func:`.manual.set_aside`, never deleted). The overrides of autograded tasks in the
    folder's record (:mod:`.overrides`) are kept and applied to the new results; those that no
    longer fit are named and stay in the record. ``root``: the course (default: found).
    """
    check_dependencies()
    root = Path(root) if root else find_course_root()
    assignment = load_assignment(name, root)
    check_setup(assignment)
    submissions, out = Path(submissions).resolve(), Path(out).resolve()
    if not submissions.exists():
        raise FileNotFoundError(f"submissions folder {submissions} does not exist")
    if out == submissions or out.is_relative_to(submissions):
        raise ValueError(f"--out {out} is inside SUBMISSIONS {submissions}: the class's grades "
                         "and feedback would land among the submissions; choose another folder")
    if submissions.is_file() and not zipfile.is_zipfile(submissions):
        raise ValueError(f"SUBMISSIONS {submissions} is a file but not a zip; expected one of: "
                         f"{layouts()}")
    kept = manual.teaching_assistant_work(out)
    if kept and not options.force:
        raise ValueError(f"{out} holds work of a teaching assistant that grading again would "
                         "replace: " + "; ".join(kept) + ". Grade into another folder, or pass "
                         "--force (that work is then moved aside, not deleted)")
    carried = _Carried.read(out)  # a broken record stops before anything is graded
    people = Roster(read_roster(roster)) if roster is not None else None
    intake = collect(name, submissions, assignment.notebook, people)
    with _sigterm_interrupts():
        return _grade_intake(name, assignment, root, submissions, out, intake, kept, carried,
                             options)



def _grade_intake(name, assignment, root, submissions, out, intake, kept, carried, options):
    """Grade the students of ``intake`` into ``out`` (:func:`grade_class`, after its checks):
    say the defences, prepare the folder, grade the class, then write the class's files."""
    hidden = sorted({root.resolve(), submissions, out})
    found = _probe_defences(assignment, hidden, options)
    _prepare_out(out, kept)
    students = _students(intake, assignment, options.shard)
    book = gradebook.start(OutFolder(out).gradebook, root / "solutions" / name /
                           assignment.notebook, name, [gid for gid, _ in assignment.manual])
    failures = []
    baseline = _peak_memory_mb()
    watch = _StallWatch()
    watch.start()
    with tempfile.TemporaryDirectory(prefix="mlcourse-manual-") as parts:
        results = _grade_students(assignment, students, out, parts, failures, carried, book,
                                  options, hidden)
        book.done()  # it closes the gradebook while the class's files are written
        _keep_overrides(out, carried.record, results, assignment)
        OutFolder(out).write_csvs(results, assignment)
        # The manual-grading pages (each student's answer rendered while they were graded) and
        # the submission times found in the submissions (`mlcourse export` uses them only when
        # asked to): one student's failure is that student's reason on the page.
        failed = {s: results[s].refused for s in students if results[s].refused}
        _safe_write("the manual-grading pages", "the class", functools.partial(
            manual.write_bundle, out, assignment, list(students), root, parts, failed), failures)
    _safe_write("the submission times", "the class",
                functools.partial(OutFolder(out).write_timestamps, students), failures)
    _safe_write(INTAKE, "the class", functools.partial(
        write_intake, out, intake, list(students)), failures)
    run = {"longest_stall_seconds": round(watch.stop(), 3),
           "baseline_memory_mb": round(baseline, 1), "peak_memory_mb": round(_peak_memory_mb(), 1),
           "longest_student_seconds": round(max((r.seconds for r in results.values()),
                                                default=0.0), 3)}
    OutFolder(out).write_results(results, assignment, found, run)
    _finish_gradebook(book)
    for line in id_summary(results):
        print(line, file=sys.stderr)
    for line in failures:
        print(f"warning: {line}", file=sys.stderr)
    return assignment, results


#: Students named per line of :func:`id_summary` (the rest are counted).
MAX_NAMED = 10


def _named(items):
    shown = [clean_text(i, 150) for i in items[:MAX_NAMED]]
    more = len(items) - len(shown)
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "")


def id_summary(results: Mapping[str, GradeResult]) -> list[str]:
    """The lines `grade` prints after grading about the ids typed in the notebooks: those
    carrying another id than the one they were handed in under, and those whose id cell is
    missing, empty or malformed (none: nothing to say). The id is read where the notebook is
    read for grading (:func:`~.analysis.analyse`'s limited child), so it is said at the end
    of the run, below the intake paragraph; every page and results.json record it too."""
    other = sorted((s, r.id_check.typed) for s, r in results.items()
                   if r.id_check and r.id_check.problem == "other")
    lines = []
    if other:
        lines.append(f"ids: {plural(len(other), 'notebook')} "
                     f"{'carries' if len(other) == 1 else 'carry'} another id than the one "
                     "they were handed in under (graded with the roster id's variant; see "
                     "their feedback): " + _named([f"{s} (typed {t})" for s, t in other]))
    unread = {}
    for s, r in sorted(results.items()):
        if r.id_check and r.id_check.problem in ("missing", "empty", "malformed"):
            unread.setdefault(r.id_check.problem, []).append(s)
    if unread:
        words = {"empty": "empty", "malformed": "malformed", "missing": "no id cell"}
        lines.append(f"ids: {plural(sum(map(len, unread.values())), 'notebook')} without a "
                     "course id in the id cell (graded with the roster id's variant): "
                     + "; ".join(f"{words[k]}: {_named(v)}" for k, v in sorted(unread.items())))
    return lines


def _prepare_out(out, kept):
    """Make the output folder, with the teaching assistant's work ``kept`` in it moved aside."""
    out.mkdir(parents=True, exist_ok=True)
    if kept:
        for line in manual.set_aside(out):
            print(f"--force: {line}", file=sys.stderr)
    folder = OutFolder(out)
    folder.feedback.mkdir(exist_ok=True)
    if not folder.nbgrader_config.exists():  # nbgrader's feedback goes elsewhere
        write_text(folder.nbgrader_config, NBGRADER_CONFIG)


def _students(intake, assignment, shard):
    """The submissions to grade (those of ``shard`` only, when given), after saying how the
    intake met the roster and what it could not match."""
    students = intake.found
    print(intake.summary(assignment.notebook), file=sys.stderr)
    for line in intake.unmatched:
        print(f"not graded or not matched: {line}", file=sys.stderr)
    if shard is not None:
        students = {s: p for s, p in students.items() if in_shard(s, shard)}
    return students


def _grade_students(assignment, students, out, parts, failures, carried, book, options, hidden):
    """Grade ``students`` in parallel (``options.jobs`` at once) under a progress line that
    names who takes long; each result goes to the gradebook as it comes. A grader bug costs
    only its student (zero, with the error as the reason)."""
    from tqdm import tqdm

    results = {}
    started: dict[str, float] = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, options.jobs)) as pool:
        futures = {
            pool.submit(_running, started, student, _grade_one, assignment, submission, out,
                        Path(parts) / str(n), failures, carried, options, hidden): student
            for n, (student, submission) in enumerate(students.items())
        }
        bar = tqdm(total=len(futures), desc=f"grading {assignment.name}", unit="student",
                   disable=not options.progress, file=sys.stderr)
        note = ""

        def tick():  # who is taking long, by name
            nonlocal note
            now = waiting_on(started, time.monotonic())
            if now != note:
                note = now
                bar.set_postfix_str(note)

        for fut in _completed(futures, tick):
            student = futures[fut]
            try:
                results[student] = fut.result()
            except Exception as exc:  # noqa: BLE001 (a grader bug must not stop the class)
                results[student] = GradeResult.zero(
                    student, assignment,
                    f"internal grader error: {type(exc).__name__}: {clean_text(str(exc), 300)}")
                overrides.apply_to(results[student], carried.record, _maxima(assignment))
                _write_feedback(results[student], assignment, out, failures, carried)
            _to_gradebook(book, results[student])  # written while the others are graded
            bar.update(1)
        bar.close()
    return results


def _to_gradebook(book, result):
    book.write(result.student, {t.grade_id: t.earned for t in result.tests},
               overrides.cell_points(result))


def _keep_overrides(out, record, results, assignment):
    """Apply the record of overrides to the class's results (each student's was applied as
    they were graded) and write it again with the new autograded points; say what it did."""
    maxima = _maxima(assignment)
    unfit = overrides.apply(results, record, maxima)
    if not record:
        return
    path = OutFolder(out).write_record(record, results, maxima)
    kept = len(record) - len(unfit)
    print(f"overrides: {plural(kept, 'override')} in {path} applied again to the new results",
          file=sys.stderr)
    for line in unfit:
        print(f"warning: overrides: {line} (kept in {path.name})", file=sys.stderr)


def _finish_gradebook(book):
    error = book.finish()
    if error:  # the CSVs and the feedback are written: say so, but do not fail the batch
        print(f"warning: the nbgrader gradebook could not be written: {error}", file=sys.stderr)


def write_intake(out: Path | str, intake: Intake, students: Sequence[str]) -> None:
    """``out/intake.json``: the layout SUBMISSIONS had, who each student is in the LMS (for
    the feedback files of ``mlcourse feedback --lms`` and the export's check of who is who),
    what was not matched, and how the submissions met the roster (the whole class's, also in
    a shard)."""
    data = {"layout": intake.layout, "unmatched": intake.unmatched,
            "students": {s: dataclasses.asdict(intake.lms[s]) for s in sorted(students)
                         if s in intake.lms},
            "roster": intake.roster_size is not None, "matched": intake.matched,
            "without_submission": intake.without_submission,
            "not_in_roster": intake.not_in_roster, "collisions": intake.collisions,
            "renamed": intake.renamed}
    OutFolder(out).write_intake(data)

