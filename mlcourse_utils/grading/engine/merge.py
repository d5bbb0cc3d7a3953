"""``mlcourse grade-merge``: the folders of a class graded in shards (``grade --shard K/N``) joined
into the one folder a single run writes."""

from __future__ import annotations

import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from ...course import find_course_root
from ..graded import gradebook
from ..graded.out import OutFolder
from ..graded.results import GradeResult
from ..intake.submissions import Submission, refused
from ..notebook import Assignment, load_assignment
from ..reports import manual
from ..sandbox.requirements import check_dependencies
from . import analysis
from .batch import (
    _Carried,
    _copy_path,
    _finish_gradebook,
    _keep_overrides,
    _to_gradebook,
    _write_feedback,
)


def merge_outputs(outs: Sequence[Path | str], out: Path | str, root: Path | str | None = None,
                  force: bool = False) -> tuple[Assignment, dict[str, GradeResult]]:
    """Join the folders of shards (``mlcourse grade --shard K/N``) into one, as one run writes.

    The CSVs are written again from every shard's ``results.json`` (so they are byte for byte
    what one run writes), feedback pages and gradebook copies are copied, the manual-grading
    pages are made again from the copies, and the gradebook is built for the whole class. A
    defence counts as in force when it was in every shard. The overrides of the shards'
    records and of ``out``'s (:mod:`.overrides`) are applied to the joined results, and the
    pages written again with them. Raises ValueError when the folders are not shards of one
    assignment or a student appears twice, and when ``out`` holds a teaching assistant's work
    (unless ``force``, which moves it aside as :func:`~.batch.grade_class`).
    """
    check_dependencies()
    root = Path(root) if root else find_course_root()
    name, results, defences = _read_shards(outs)
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
        record.update(OutFolder(folder).read_record())
    carried.record = record
    out.mkdir(parents=True, exist_ok=True)
    for line in manual.set_aside(out) if kept else []:
        print(f"--force: {line}", file=sys.stderr)
    book = gradebook.start(OutFolder(out).gradebook, root / "solutions" / name /
                           assignment.notebook, name, [gid for gid, _ in assignment.manual])
    for shard in map(OutFolder, outs):
        for source, target in ((shard.feedback, OutFolder(out).feedback),
                               (shard.autograded, OutFolder(out).autograded)):
            if source.is_dir():
                shutil.copytree(source, target, dirs_exist_ok=True)
    results = dict(sorted(results.items()))
    _keep_overrides(out, record, results, assignment)
    failures = []
    OutFolder(out).feedback.mkdir(exist_ok=True)
    for result in results.values():
        _to_gradebook(book, result)
        if record or carried.late:  # the shards' pages do not have them
            _write_feedback(result, assignment, out, failures, carried)
    book.done()
    OutFolder(out).write_csvs(results, assignment)
    OutFolder(out).write_results(results, assignment, defences)
    OutFolder(out).merge_timestamps(OutFolder(folder) for folder in outs)
    _merge_intake(outs, out)
    if assignment.manual:
        _merge_manual(out, assignment, results, root)
    _finish_gradebook(book)
    for line in failures:
        print(f"warning: {line}", file=sys.stderr)
    return assignment, results


def _read_shards(outs):
    """The assignment's name, the joined results and the defences in force in every shard of
    the folders ``outs``; ValueError when they are not shards of one class."""
    results, name, defences = {}, None, {}
    for folder in outs:
        data = OutFolder(folder).read_results()
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
    return name, results, defences


def _merge_manual(out, assignment, results, root):
    """The manual-grading pages of the joined class, made again from the grader's copies of
    the notebooks in ``out`` (a student without one: the reason it was refused)."""
    copies = {}
    for student, result in results.items():
        # the grader's own copy
        copy = _copy_path(out, assignment.name, assignment.notebook, student)
        copies[student] = Submission(student, copy.read_bytes()) if copy.is_file() else \
            refused(student, result.refused or "the notebook could not be read")
    with tempfile.TemporaryDirectory(prefix="mlcourse-manual-") as parts:
        failed = analysis.manual_fragments(assignment, copies, Path(parts))
        manual.write_bundle(out, assignment, list(copies), root, parts, failed)


def _merge_intake(outs, out):
    """Join the shards' ``intake.json`` (when they have one) into ``out``."""
    merged = {"layout": None, "unmatched": [], "students": {}}
    for folder in outs:
        data = OutFolder(folder).read_intake()
        if data is not None:
            students = merged["students"]
            merged.update(data)  # every shard read the whole download: one shard's word
            merged["students"] = {**students, **data.get("students", {})}
    if merged["layout"] is not None:
        OutFolder(out).write_intake(merged)
