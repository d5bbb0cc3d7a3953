"""Grading a class: every student of SUBMISSIONS, in parallel, with progress, into one folder.

One student can only cost itself: its grading has deadlines and a total budget, its sandbox its
own limits, reading its notebook and writing its feedback, gradebook copy, manual-grading answer
and submission time can fail only for it (reported; every other student keeps theirs, and the
CSVs are always written). Ctrl-C or SIGTERM stops the run at once: no student starts, every
sandbox ends, nothing more is written, and no cgroup stays behind (``isolation.stop_all``).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import dataclasses
import functools
import hashlib
import json
import resource
import shutil
import signal
import sys
import tempfile
import threading
import time
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from ..._files import write_text
from ...course import find_course_root
from ..graded import gradebook, overrides
from ..graded.late import read_late_notes
from ..graded.results import GradeResult, read_results, write_csvs, write_results
from ..intake import times
from ..intake.collect import Intake, collect, layouts
from ..intake.roster import Roster, read_roster
from ..intake.submissions import Submission, refused, write_timestamps
from ..notebook import Assignment, imported_by, load_assignment
from ..reports import manual
from ..reports.feedback import NBGRADER_CONFIG, write_feedback
from ..sandbox import channel, isolation
from ..sandbox.requirements import check_dependencies
from ..text import clean_text, plural
from . import analysis
from .session import check_setup, grade_notebook


class IsolationError(ValueError):
    """``--require-isolation``: a defence is missing on this machine (nothing was graded)."""


def describe_defences(found: Mapping[str, bool], verbose: bool = False) -> list[str]:
    """What ``mlcourse grade`` says about the sandbox defences: one plain sentence (whether
    every defence is in force, and in words which are missing); with ``verbose``, also the
    defences by name with what each does (as results.json records them)."""
    missing = [name for name, ok in found.items() if not ok]
    total = plural(len(found), "defence")
    if not missing:
        lines = [f"Each student's code runs in its own sandbox with all {total} in force: no "
                 "network, no view of host files or other processes, an unprivileged user, and "
                 "its own memory, process and CPU limits (--verbose names them)."]
    else:
        words = [channel.IN_WORDS.get(name, name) for name in missing]
        lines = [f"Each student's code runs in its own sandbox, but on this machine without "
                 f"{_and(words)} ({len(missing)} of {total} missing; see docs/grading-security.md, "
                 "'What each defence needs'; --require-isolation refuses to grade without them)."]
    if verbose:
        held = [name for name, ok in found.items() if ok]
        lines.append(f"defences in force: {', '.join(held) or 'none'}")
        if missing:
            lines.append("defences MISSING: " + "; ".join(
                f"{name} ({channel.DEFENCES.get(name, name)})" for name in missing))
    return lines


def _and(words: Sequence[str]) -> str:
    """``"a, b and c"``."""
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


class _StallWatch(threading.Thread):
    """Measures how long the grader's threads could not run (the longest late wake-up)."""

    def __init__(self, tick: float = 0.05) -> None:
        super().__init__(name="mlcourse-stall-watch", daemon=True)
        self.tick, self.longest, self._done = tick, 0.0, threading.Event()

    def run(self) -> None:
        while True:
            before = time.monotonic()
            if self._done.wait(self.tick):
                return
            self.longest = max(self.longest, time.monotonic() - before - self.tick)

    def stop(self) -> float:
        self._done.set()
        self.join()
        return self.longest


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
    return out / "autograded" / gradebook.gradebook_id(student) / name / notebook


def _grade_one(assignment, submission, out, parts, failures, carried, **options):
    """Grade one student, apply the teaching assistants' overrides of the folder's record to
    the result and write their feedback page (in the grading thread: the student's own time,
    not the class's). ``carried``: what the folder keeps across gradings (:class:`_Carried`)."""
    real = submission.submitted
    result = grade_notebook(
        assignment, submission,
        copy_to=_copy_path(out, assignment.name, assignment.notebook, submission.student)
        if real else None,
        manual_dir=parts if real and assignment.manual else None, **options)
    if isolation.interrupted():
        return None  # (its sandbox was stopped under it: not a grade, nothing is written)
    overrides.apply_to(result, carried.record, _maxima(assignment))
    _write_feedback(result, assignment, out, failures, carried)
    return result


def _completed(futures, tick=None):
    """``as_completed(futures)``, calling ``tick()`` at least every :data:`PROGRESS_TICK`
    seconds while it waits (the progress line). When the run is interrupted (Ctrl-C, SIGTERM)
    while the caller waits here or handles a result (the generator is then closed), the
    students not started yet are cancelled and every sandbox is stopped, so that the pool ends
    at once."""
    pending = set(futures)
    try:
        while pending:
            done, pending = concurrent.futures.wait(
                pending, timeout=PROGRESS_TICK, return_when=concurrent.futures.FIRST_COMPLETED)
            yield from done
            if tick is not None:
                tick()
    except BaseException:
        for future in futures:
            future.cancel()
        isolation.stop_all()
        raise


@contextlib.contextmanager
def _sigterm_interrupts():
    """SIGTERM (``kill``, a batch system ending a job) interrupts grading as Ctrl-C does."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@dataclasses.dataclass
class _Carried:
    """What a graded folder keeps across gradings into it: the record of overrides and the
    late penalties of the last export, which every page written again shows."""

    record: dict
    late: dict

    @classmethod
    def read(cls, out):
        return cls(overrides.read_record(out), read_late_notes(out))


def _maxima(assignment):
    return {task: assignment.task_max(task) for task in assignment.tasks}


def _write_feedback(result, assignment, out, failures, carried):
    start = time.monotonic()
    _safe_write("the feedback page", result.student, functools.partial(
        write_feedback, result, assignment, out / "feedback" / f"{result.student}.html",
        late=carried.late.get(result.student)), failures)
    result.seconds += time.monotonic() - start


def grade_class(name: str, submissions: Path | str, out: Path | str, *, jobs: int = 1,
                timeout: float | None = None, memory_mb: int = 4096,
                root: Path | str | None = None,
                progress: bool = True, student_timeout: float | None = None,
                shard: tuple[int, int] | None = None, secret: bytes | None = None,
                require_isolation: bool = False, roster: Path | str | None = None,
                force: bool = False, verbose: bool = False,
                ) -> tuple[Assignment, dict[str, GradeResult]]:
    """Grade every student folder; write grades.csv, task_scores.csv and feedback/*.html.

    One student can only cost itself: its grading has deadlines (``timeout`` per cell and per
    test, default the assignment's limit) and a total budget (``student_timeout``, default
    :func:`~.session.grading_budget`; it also covers reading the notebook and writing its
    pages), its sandbox its own limits, and writing its feedback, gradebook copy,
    manual-grading answer or submission time can fail only for it (the failure is reported; the
    CSVs are always written).
    With ``shard=(K, N)`` only the K-th of N deterministic slices of the class is graded;
    :func:`merge_outputs` joins the N folders into what one run writes. ``secret`` (bytes, see
    :func:`read_secret`) gives every student their own hidden-test inputs. The defences in
    force are printed in a sentence (by name with ``verbose``) and recorded in
    ``results.json``; with ``require_isolation`` a missing one raises :class:`IsolationError`
    before any student is graded. While a student takes long, the progress line names them.

    SUBMISSIONS is read by :func:`~.collect.collect`: student folders, or a Canvas or
    Moodle download (a folder or its zip) whose files are mapped to student ids through
    ``roster`` (a CSV, :func:`.roster.read_roster`): a paragraph says how the submissions met
    the roster (:meth:`.collect.Intake.summary`), what could not be matched is printed, and who
    each student is in the LMS goes to ``out/intake.json``. An output folder inside
    SUBMISSIONS is refused, and so is one holding a teaching assistant's work (filled
    manual-grading CSVs, imported points) unless ``force`` (that work is then moved aside,
    :func:`.manual.set_aside`, never deleted). The overrides of autograded tasks in the
    folder's record (:mod:`.overrides`) are kept and applied to the new results; those that no
    longer fit are named and stay in the record.
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
    if kept and not force:
        raise ValueError(f"{out} holds work of a teaching assistant that grading again would "
                         "replace: " + "; ".join(kept) + ". Grade into another folder, or pass "
                         "--force (that work is then moved aside, not deleted)")
    carried = _Carried.read(out)  # a broken record stops before anything is graded
    people = Roster(read_roster(roster)) if roster is not None else None
    intake = collect(name, submissions, assignment.notebook, people)
    with _sigterm_interrupts():
        return _grade_intake(name, assignment, root, submissions, out, intake, kept, carried,
                             jobs=jobs, timeout=timeout, memory_mb=memory_mb, progress=progress,
                             student_timeout=student_timeout, shard=shard, secret=secret,
                             require_isolation=require_isolation, verbose=verbose)


#: A student graded for longer than this (seconds) is named on the progress line.
LONG_WAIT = 10.0
#: How often (seconds) the progress line is brought up to date while nobody finishes.
PROGRESS_TICK = 1.0


def waiting_on(started: Mapping[str, float], now: float, after: float = LONG_WAIT) -> str:
    """The progress line's note on the student graded longest, once that is more than
    ``after`` seconds (``started``: ``{student: time.monotonic() when their grading began}``);
    "" when nobody takes that long. Seconds are shown in steps of 5, so the line changes
    rarely."""
    slow = sorted((start, student) for student, start in list(started.items())
                  if now - start > after)
    if not slow:
        return ""
    start, student = slow[0]
    note = f"waiting for {clean_text(student, 60)} ({int(now - start) // 5 * 5} s)"
    return note + (f" and {plural(len(slow) - 1, 'other')} over {after:g} s"
                   if len(slow) > 1 else "")


def _running(started, student, grade, *args, **kwargs):
    """``grade(*args, **kwargs)``, with ``started[student]`` set while it runs."""
    started[student] = time.monotonic()
    try:
        return grade(*args, **kwargs)
    finally:
        started.pop(student, None)


def _grade_intake(name, assignment, root, submissions, out, intake, kept, carried, *, jobs,
                  timeout, memory_mb, progress, student_timeout, shard, secret, require_isolation,
                  verbose=False):
    from tqdm import tqdm

    hidden = sorted({root.resolve(), submissions, out})
    analysis.warm_up()  # (its imports run while the defences are probed)
    threading.Thread(target=_warm_up_grader, args=(assignment,), daemon=True).start()
    found = channel.defences(min(memory_mb, 1024), hidden, assignment.preload)
    for line in describe_defences(found, verbose):
        print(line, file=sys.stderr)
    if require_isolation and not all(found.values()):
        missing = [k for k, ok in found.items() if not ok]
        raise IsolationError(f"--require-isolation: {', '.join(missing)} not in force on this "
                             "machine; nothing was graded (see docs/grading-security.md, "
                             "'What each defence needs')")
    out.mkdir(parents=True, exist_ok=True)
    if kept:
        for line in manual.set_aside(out):
            print(f"--force: {line}", file=sys.stderr)
    (out / "feedback").mkdir(exist_ok=True)
    if not (out / "nbgrader_config.py").exists():  # nbgrader's feedback goes elsewhere
        write_text(out / "nbgrader_config.py", NBGRADER_CONFIG)
    students = intake.found
    print(intake.summary(assignment.notebook), file=sys.stderr)
    for line in intake.unmatched:
        print(f"not graded or not matched: {line}", file=sys.stderr)
    if shard is not None:
        students = {s: p for s, p in students.items() if in_shard(s, shard)}
    book = gradebook.start(out, root / "solutions" / name / assignment.notebook, name,
                           [gid for gid, _ in assignment.manual])
    results, failures = {}, []
    baseline = _peak_memory_mb()
    watch = _StallWatch()
    watch.start()
    options = dict(timeout=timeout, memory_mb=memory_mb, hidden=hidden,
                   student_timeout=student_timeout, secret=secret)
    started: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="mlcourse-manual-") as parts, \
            concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = {
            pool.submit(_running, started, student, _grade_one, assignment, submission, out,
                        Path(parts) / str(n), failures, carried, **options): student
            for n, (student, submission) in enumerate(students.items())
        }
        bar = tqdm(total=len(futures), desc=f"grading {name}", unit="student",
                   disable=not progress, file=sys.stderr)
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
        book.done()  # it closes the gradebook while the class's files are written
        _keep_overrides(out, carried.record, results, assignment)
        write_csvs(results, assignment, out)
        # The manual-grading pages (each student's answer rendered while they were graded) and
        # the submission times found in the submissions (`mlcourse export` uses them only when
        # asked to): one student's failure is that student's reason on the page.
        failed = {s: results[s].refused for s in students if results[s].refused}
        _safe_write("the manual-grading pages", "the class", functools.partial(
            manual.write_bundle, out, assignment, list(students), root, parts, failed), failures)
    _safe_write("the submission times", "the class",
                functools.partial(write_timestamps, out, students), failures)
    _safe_write("intake.json", "the class", functools.partial(
        write_intake, out, intake, list(students)), failures)
    run = {"longest_stall_seconds": round(watch.stop(), 3),
           "baseline_memory_mb": round(baseline, 1), "peak_memory_mb": round(_peak_memory_mb(), 1),
           "longest_student_seconds": round(max((r.seconds for r in results.values()),
                                                default=0.0), 3)}
    write_results(results, assignment, out, found, run)
    _finish_gradebook(book)
    for line in failures:
        print(f"warning: {line}", file=sys.stderr)
    return assignment, results


def _warm_up_grader(assignment):
    """Import what the first students would otherwise import in the grader, holding its global
    lock while the others wait: the modules of the instructor's tests and set-up cells (never a
    student's text) and the feedback page's template. Run in a thread while the defences are
    probed and the first sandboxes start; a module that cannot be imported is left to the test
    that needs it (which reports it as now)."""
    import importlib

    from ..reports import feedback

    for name in imported_by([*assignment.setup, *(t.source for t in assignment.tests)]):
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 (e.g. `from numpy import pi`: not a module)
            pass
    with contextlib.suppress(Exception):
        feedback.warm_up()


def _peak_memory_mb():
    """The grader's largest resident memory so far (MB)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 1024 if sys.platform != "darwin" else peak / 2**20


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
    path = overrides.write_record(out, record, results, maxima)
    kept = len(record) - len(unfit)
    print(f"overrides: {plural(kept, 'override')} in {path} applied again to the new results",
          file=sys.stderr)
    for line in unfit:
        print(f"warning: overrides: {line} (kept in {path.name})", file=sys.stderr)


def _finish_gradebook(book):
    error = book.finish()
    if error:  # the CSVs and the feedback are written: say so, but do not fail the batch
        print(f"warning: the nbgrader gradebook could not be written: {error}", file=sys.stderr)


def merge_outputs(outs: Sequence[Path | str], out: Path | str, root: Path | str | None = None,
                  force: bool = False) -> tuple[Assignment, dict[str, GradeResult]]:
    """Join the folders of shards (``mlcourse grade --shard K/N``) into one, as one run writes.

    The CSVs are written again from every shard's ``results.json`` (so they are byte for byte
    what one run writes), feedback pages and gradebook copies are copied, the manual-grading
    pages are made again from the copies, and the gradebook is built for the whole class. A
    defence counts as in force when it was in every shard. The overrides of the shards'
    records and of ``out``'s (:mod:`.overrides`) are applied to the joined results, and the
    pages written again with them. Raises ValueError when the folders
    are not shards of one assignment or a student appears twice, and when ``out`` holds a
    teaching assistant's work (unless ``force``, which moves it aside as :func:`grade_class`).
    """
    check_dependencies()
    root = Path(root) if root else find_course_root()
    results, name, defences = {}, None, {}
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
        for key, held in data.defences.items():
            defences[key] = defences.get(key, True) and held
    if name is None:
        raise ValueError("grade-merge needs at least one folder")
    assignment = load_assignment(name, root)
    out = Path(out).resolve()
    kept = manual.teaching_assistant_work(out)
    if kept and not force:
        raise ValueError(f"{out} holds work of a teaching assistant that merging would replace: "
                         + "; ".join(kept) + ". Merge into another folder, or pass --force "
                         "(that work is then moved aside, not deleted)")
    carried = _Carried.read(out)
    record = {}  # the shards' overrides (if a teaching assistant imported some), then out's
    for folder in [*outs, out]:
        record.update(overrides.read_record(folder))
    carried.record = record
    out.mkdir(parents=True, exist_ok=True)
    for line in manual.set_aside(out) if kept else []:
        print(f"--force: {line}", file=sys.stderr)
    book = gradebook.start(out, root / "solutions" / name / assignment.notebook, name,
                           [gid for gid, _ in assignment.manual])
    for folder in outs:
        for sub in ("feedback", "autograded"):
            if (Path(folder) / sub).is_dir():
                shutil.copytree(Path(folder) / sub, out / sub, dirs_exist_ok=True)
    results = dict(sorted(results.items()))
    _keep_overrides(out, record, results, assignment)
    failures = []
    (out / "feedback").mkdir(exist_ok=True)
    for result in results.values():
        _to_gradebook(book, result)
        if record or carried.late:  # the shards' pages do not have them
            _write_feedback(result, assignment, out, failures, carried)
    book.done()
    write_csvs(results, assignment, out)
    write_results(results, assignment, out, defences)
    times.merge_timestamps(outs, out)
    _merge_intake(outs, out)
    if assignment.manual:
        copies = {}
        for student, result in results.items():
            copy = _copy_path(out, name, assignment.notebook, student)  # the grader's own copy
            copies[student] = Submission(student, copy.read_bytes()) if copy.is_file() else \
                refused(student, result.refused or "the notebook could not be read")
        with tempfile.TemporaryDirectory(prefix="mlcourse-manual-") as parts:
            failed = analysis.manual_fragments(assignment, copies, Path(parts))
            manual.write_bundle(out, assignment, list(copies), root, parts, failed)
    _finish_gradebook(book)
    for line in failures:
        print(f"warning: {line}", file=sys.stderr)
    return assignment, results


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
    write_text(Path(out) / "intake.json", json.dumps(data, indent=1, ensure_ascii=False))


def _merge_intake(outs, out):
    """Join the shards' ``intake.json`` (when they have one) into ``out``."""
    merged = {"layout": None, "unmatched": [], "students": {}}
    for folder in outs:
        path = Path(folder) / "intake.json"
        if path.is_file():
            data = json.loads(path.read_text(encoding="utf-8"))
            students = merged["students"]
            merged.update(data)  # every shard read the whole download: one shard's word
            merged["students"] = {**students, **data.get("students", {})}
    if merged["layout"] is not None:
        write_text(Path(out) / "intake.json", json.dumps(merged, indent=1, ensure_ascii=False))
