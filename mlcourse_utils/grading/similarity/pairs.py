"""Finding answers that match beyond renaming and reformatting, pairwise and against the reference.

For every task (answer cell) of an assignment, every student's answer is normalised and
fingerprinted (:mod:`.fingerprints`). Then:

- boilerplate is not evidence: every k-gram of the release stub (the signature and docstring
  every student starts from) is ignored, and so are, between students, k-grams that more than
  :data:`COMMON_FRACTION` of the class's answers to that task contain (an idiom many people
  write independently is no sign of copying; this only matters in classes over
  ``MIN_COMMON / COMMON_FRACTION`` students);
- an inverted index from fingerprint to student finds the pairs of students that share at
  least one fingerprint; only those pairs are compared, never all n(n-1)/2;
- a pair's score is the larger of the two coverages: the share of one answer's own code (its
  tokens outside the ignored k-grams) that lies in k-grams the other answer also has. A padded
  copy still covers the original. A task is flagged when the score reaches ``threshold`` and
  the shared code is at least ``min_tokens`` tokens long (a short answer that many people
  would write the same way is no evidence); the whole notebook ("all tasks") is flagged when
  the same holds for the answers of all tasks taken together and at least two tasks match.
- every answer is also compared with the reference function (``mlcourse_utils.<module>``,
  with the package helpers it calls) and with the instructor's solution cell, in the same way
  (the stub ignored, common code not: copying the reference is what is looked for).

Apart from the pairs, :func:`compare_variants` lists the notebooks whose answers to the
questions that vary quote another student's variant's model numbers, or whose id cell holds
another student's id (:mod:`.numbers`, read by :mod:`.reading`).

The result only flags pairs for a person to read; it never changes a grade. Each notebook is
read (its JSON decoded, its answer cells found) in a limited child process, as grading reads it
(:func:`~.analysis.answer_sources`); the normalising here sees at most
:data:`~.fingerprints.MAX_RAW_CHARS` characters of one answer.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import math
import os
import time
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import Any

from ...course import find_course_root
from ..engine.analysis import AnalysisError, answer_sources
from ..engine.references import references, release_stubs
from ..intake.collect import collect
from ..notebook import load_assignment
from ..text import clean_text
from .fingerprints import Code, K, normalise
from .numbers import VariantFlag, id_flags, number_flags
from .reading import ReadingError, read_written

#: A task is flagged when one answer's own code is at least this share covered by the other.
THRESHOLD = 0.8
#: ... and the code they share is at least this many tokens (about four lines of code).
MIN_TOKENS = 30
#: The whole notebook is flagged when its answers share at least this many tokens in all.
MIN_TOKENS_TOTAL = 60
#: A k-gram in more than this share of a task's answers is common, not evidence (pairs only) ...
COMMON_FRACTION = 0.2
#: ... once that share is more than this many answers.
MIN_COMMON = 20
#: Label of the rows that take all tasks of a notebook together.
ALL_TASKS = "(all tasks)"


@dataclasses.dataclass
class Side:
    """One side of a match: who, the code as submitted, and which lines match (line -> region)."""

    label: str
    text: str
    lines: dict[int, int]
    coverage: float
    note: str = ""


@dataclasses.dataclass
class Match:
    """A flagged pair: ``student`` and ``other`` (a student, or a reference when ``kind`` is
    "reference") on ``task`` (or on :data:`ALL_TASKS`, with the per-task ``details``)."""

    student: str
    other: str
    kind: str
    task: str
    score: float
    shared: int
    matched: int
    a: Side | None = None
    b: Side | None = None
    details: list[Match] = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class Report:
    """Everything the report shows."""

    name: str
    tasks: list[str]
    students: list[str]
    matches: list[Match]
    unread: dict[str, str]
    notes: list[tuple[str, str, str]]
    missing_references: list[str]
    settings: dict[str, float]
    candidates: int = 0
    seconds: float = 0.0
    #: notebooks quoting another variant's numbers, or holding another student's id
    #: (:mod:`.numbers`)
    variant_flags: list[VariantFlag] = dataclasses.field(default_factory=list)
    #: what limited that comparison (no model numbers, variants off), in words
    variant_notes: list[str] = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class _Overlap:
    coverage_a: float
    coverage_b: float
    covered_a: int
    covered_b: int
    own_a: int
    own_b: int
    shared: int

    @property
    def score(self) -> float:
        return max(self.coverage_a, self.coverage_b)

    @property
    def matched(self) -> int:
        return min(self.covered_a, self.covered_b)


def _span(code):
    return min(K, len(code.tokens))


def own_tokens(code: Code, ignore: AbstractSet[int] = frozenset()) -> int:
    """How many tokens of ``code`` lie in at least one k-gram that is not in ``ignore``."""
    span, mask = _span(code), bytearray(len(code.tokens))
    if not code.where.keys() & ignore:
        return len(code.tokens)
    for q, h in enumerate(code.grams):
        if h not in ignore:
            mask[q:q + span] = b"\1" * span
    return sum(mask)


def _covered(code, shared):
    span, mask = _span(code), bytearray(len(code.tokens))
    for h in shared:
        for q in code.where[h]:
            mask[q:q + span] = b"\1" * span
    return sum(mask)


def overlap(a: Code, b: Code, ignore: AbstractSet[int] = frozenset(), own_a: int | None = None,
            own_b: int | None = None) -> _Overlap | None:
    """How much of two normalised answers (:class:`~.fingerprints.Code`) is shared, the k-grams
    in ``ignore`` (boilerplate, common code) left out of both; None when nothing is shared.
    ``own_a`` and ``own_b`` are :func:`own_tokens` when already known."""
    shared = (a.where.keys() & b.where.keys()) - ignore
    if not shared:
        return None
    own_a = own_tokens(a, ignore) if own_a is None else own_a
    own_b = own_tokens(b, ignore) if own_b is None else own_b
    covered_a, covered_b = _covered(a, shared), _covered(b, shared)
    return _Overlap(covered_a / own_a if own_a else 0.0, covered_b / own_b if own_b else 0.0,
                    covered_a, covered_b, own_a, own_b,
                    len((a.fingerprints & b.fingerprints) - ignore))


def regions(a: Code, b: Code,
            ignore: AbstractSet[int] = frozenset()) -> tuple[dict[int, int], dict[int, int]]:
    """``(lines of a, lines of b)``, each ``{line: region}``: the lines holding shared code.

    A region is a run of consecutive shared k-grams in ``a``, numbered in order; ``b``'s lines
    take the region of the same k-gram in ``a``, so the page colours matching code alike.
    """
    shared = (a.where.keys() & b.where.keys()) - ignore
    region_of, region, previous, lines_a = {}, -1, -2, {}
    for q, h in enumerate(a.grams):
        if h in shared:
            if q != previous + 1:
                region += 1
            previous = q
            region_of.setdefault(h, region)
            for p in range(q, min(q + _span(a), len(a.tokens))):
                lines_a.setdefault(a.lines[p], region_of[h])
    lines_b = {}
    for q, h in enumerate(b.grams):
        if h in shared:
            for p in range(q, min(q + _span(b), len(b.tokens))):
                lines_b.setdefault(b.lines[p], region_of[h])
    return lines_a, lines_b


def _sides(label_a, a, label_b, b, found, ignore):
    lines_a, lines_b = regions(a, b, ignore)
    return (Side(clean_text(label_a, 200), a.text, lines_a, found.coverage_a, a.note),
            Side(clean_text(label_b, 200), b.text, lines_b, found.coverage_b, b.note))


def analyse(name: str, tasks: Sequence[str], answers: Mapping[str, Mapping[str, str]],
            stubs: Mapping[str, str], refs: Mapping[str, Sequence[tuple[str, str]]], *,
            threshold: float = THRESHOLD, min_tokens: int = MIN_TOKENS,
            min_tokens_total: int = MIN_TOKENS_TOTAL, common_fraction: float = COMMON_FRACTION,
            min_common: int = MIN_COMMON, unread: Mapping[str, str] | None = None) -> Report:
    """Compare a class's answers.

    ``answers``: ``{student: {task: source}}``; ``stubs``: ``{task: release source}``;
    ``refs``: ``{task: [(label, source), ...]}``. Returns a :class:`Report` (without timing).
    """
    if not 0 < threshold <= 1:
        raise ValueError(f"threshold must be in (0, 1], got {threshold!r}")
    if min_tokens < 1 or min_tokens_total < 1:
        raise ValueError("min_tokens and min_tokens_total must be at least 1")
    students = sorted(answers)
    matches, notes, candidates = [], [], 0
    per_pair = defaultdict(dict)      # (a, b) -> {task: _Overlap}
    per_ref = defaultdict(dict)       # student -> {task: (label, _Overlap)}
    own_pair = defaultdict(dict)      # student -> {task: own tokens (pair ignore)}
    own_ref = defaultdict(dict)       # student -> {task: own tokens (stub ignored)}
    for task in tasks:
        boiler = frozenset(normalise(stubs.get(task, "")).grams)
        codes = _codes(task, students, answers, boiler, notes)
        ignore = _ignored(codes, boiler, common_fraction, min_common)
        for s, code in codes.items():
            own_pair[s][task] = own_tokens(code, ignore)
            own_ref[s][task] = own_tokens(code, boiler)
        pairs = _candidates(codes, ignore)
        candidates += len(pairs)
        for a, b in sorted(pairs):
            found = overlap(codes[a], codes[b], ignore, own_pair[a][task], own_pair[b][task])
            if found is None:
                continue
            per_pair[(a, b)][task] = found
            if _flagged(found, threshold, min_tokens):
                matches.append(Match(a, b, "student", task, found.score, found.shared,
                                     found.matched,
                                     *_sides(a, codes[a], b, codes[b], found, ignore)))
        # Against the reference function and the instructor's answer.
        ref_codes = [(label, normalise(source)) for label, source in refs.get(task, [])]
        for s, code in codes.items():
            best = _closest_reference(code, ref_codes, boiler, own_ref[s][task])
            if best is None:
                continue
            label, ref, found = best
            per_ref[s][task] = (label, found)
            if _flagged(found, threshold, min_tokens):
                matches.append(Match(s, "reference", "reference", task, found.score,
                                     found.shared, found.matched,
                                     *_sides(s, code, label, ref, found, boiler)))
    matches += _whole_notebooks(per_pair, per_ref, own_pair, own_ref, threshold,
                                min_tokens_total, matches)
    missing = [t for t in tasks if not refs.get(t)]
    settings = {"threshold": threshold, "min_tokens": min_tokens,
                "min_tokens_total": min_tokens_total, "common_fraction": common_fraction,
                "min_common": min_common, "k": K}
    return Report(name, list(tasks), students, _by_pair(matches), dict(unread or {}), notes,
                  missing, settings, candidates)


def _flagged(found, threshold, min_tokens):
    """Whether an overlap is reported: enough of an answer's own code, and enough tokens."""
    return found.score >= threshold and found.matched >= min_tokens


def _codes(task, students, answers, boiler, notes):
    """``{student: Code}``: the students' answers to ``task`` normalised, those with no code of
    their own beyond the release's (``boiler``) left out; what normalising noted goes to
    ``notes``."""
    codes = {}
    for s in students:
        source = answers[s].get(task)
        if source is None:
            continue
        code = normalise(source)
        if code.note:
            notes.append((s, task, code.note))
        if own_tokens(code, boiler):
            codes[s] = code
    return codes


def _ignored(codes, boiler, common_fraction, min_common):
    """The k-grams left out when students are compared: the release's, and those that many
    answers have (common knowledge, not evidence between students)."""
    df = defaultdict(int)
    for code in codes.values():
        for h in set(code.grams) - boiler:
            df[h] += 1
    limit = max(min_common, math.ceil(common_fraction * len(codes)))
    return boiler | {h for h, n in df.items() if n > limit}


def _candidates(codes, ignore):
    """The pairs of students ``(a, b)``, ``a < b``, whose answers share a fingerprint."""
    index = defaultdict(list)
    for s, code in codes.items():
        for h in code.fingerprints - ignore:
            index[h].append(s)
    pairs = set()
    for holders in index.values():
        for i, a in enumerate(holders):
            for b in holders[i + 1:]:
                pairs.add((a, b) if a < b else (b, a))
    return pairs


def _closest_reference(code, ref_codes, boiler, own):
    """``(label, ref, overlap)`` of the reference answer that ``code`` matches most (by score,
    then matched tokens; the first of equals), or None when it shares nothing with any."""
    best = None
    for label, ref in ref_codes:
        if not (code.fingerprints & ref.fingerprints) - boiler:
            continue
        found = overlap(code, ref, boiler, own)
        if found and (best is None or (found.score, found.matched)
                      > (best[2].score, best[2].matched)):
            best = (label, ref, found)
    return best


def _by_pair(matches):
    """The matches with a pair's rows together (the whole notebook first), the pairs by their
    best score."""
    best = defaultdict(float)
    for m in matches:
        best[m.kind, m.student, m.other] = max(best[m.kind, m.student, m.other], m.score)
    matches.sort(key=lambda m: (-best[m.kind, m.student, m.other], m.kind, m.student, m.other,
                                m.task != ALL_TASKS, -m.score, m.task))
    return matches


def _whole_notebooks(per_pair, per_ref, own_pair, own_ref, threshold, min_total, flagged):
    """Rows for pairs whose answers, all tasks together, match (short answers add up)."""
    rows = []
    for (a, b), found in sorted(per_pair.items()):
        both = set(own_pair[a]) & set(own_pair[b])
        row = _total(a, b, "student", {t: found[t] for t in found if t in both},
                     sum(own_pair[a][t] for t in both), sum(own_pair[b][t] for t in both),
                     threshold, min_total)
        if row:
            rows.append(row)
    for s, found in sorted(per_ref.items()):
        tasks = {t: f for t, (_, f) in found.items()}
        total_b = sum(f.own_b for f in tasks.values())
        row = _total(s, "reference", "reference", tasks, sum(own_ref[s].values()), total_b,
                     threshold, min_total)
        if row:
            rows.append(row)
    return rows


def _total(a, b, kind, found, own_a, own_b, threshold, min_total):
    matching = {t: f for t, f in found.items() if f.matched}
    if len(matching) < 2 or not own_a or not own_b:
        return None
    covered_a = sum(f.covered_a for f in matching.values())
    covered_b = sum(f.covered_b for f in matching.values())
    score = max(covered_a / own_a, covered_b / own_b)
    matched = min(covered_a, covered_b)
    if score < threshold or matched < min_total:
        return None
    details = [Match(a, b, kind, t, f.score, f.shared, f.matched)
               for t, f in sorted(matching.items())]
    return Match(a, b, kind, ALL_TASKS, min(score, 1.0), sum(f.shared for f in matching.values()),
                 matched, details=details)


# ---------------------------------------------------------------- reading a class

def read_answers(name: str, submissions: Path | str, notebook: str,
                 tasks: Iterable[str]) -> tuple[dict[str, dict[str, str]], dict[str, str]]:
    """``({student: {task: source}}, {student: reason it could not be read})``.

    SUBMISSIONS may be any layout :func:`~.collect.collect` reads (an LMS's download too:
    the students are then named by the LMS)."""
    return _read_answers(collect(name, submissions, notebook).found, tasks)


def _read_written(found, questions):
    """``{student: Written}`` of every notebook that could be read (:func:`.read_written`:
    the answers to ``questions`` and the id cell, read in a limited child); the others are
    left out (the pairs already say why they could not be read)."""
    def read(submission):
        if submission.data is None:
            return None
        try:
            return read_written(submission.data, questions)
        except ReadingError:
            return None

    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        return {student: written for student, written in
                zip(found, pool.map(read, found.values()), strict=True) if written is not None}


def compare_variants(name: str, found: Mapping[str, Any], assignment: Any,
                     root: Path | str, roster: Sequence[str] = ()
                     ) -> tuple[list[VariantFlag], list[str]]:
    """``(flags, notes)``: the notebooks of ``found`` (``{student: Submission}``, by the id
    each student is known under: it decides the variant) that quote the model numbers of
    another student's variant, or whose id cell holds another student's id (of ``found`` or
    of the ``roster``'s ids) (:mod:`.numbers`); the notes say what limited the comparison."""
    from ..reports.model_numbers import ModelNumbers

    models = ModelNumbers(root, name, assignment.variants)
    manual = {gid for gid, _ in assignment.manual}
    questions = [q for q in models.questions if q in manual]
    notes = []
    if not assignment.variants:
        notes.append(f"the variants of {name} are off (metadata.mlcourse.variants: false): "
                     "every student answers the same numbers, so they were not compared")
    elif questions and models.problem:
        notes.append(f"the answers' numbers were not compared: {models.problem}")
    written = _read_written(found, questions)
    flags = id_flags({s: w.typed_id for s, w in written.items()}, roster)
    if assignment.variants and questions and not models.problem:
        texts = {s: {q: w.texts.get(q, "") for q in questions} for s, w in written.items()}
        flags = number_flags(texts, models) + flags
    return flags, notes


def _read_answers(found, tasks):
    """Each student's answer cells, read in a limited child (:func:`~.analysis.answer_sources`,
    as grading reads them): a notebook that cannot be read within its limits is that
    student's reason, and never costs the others."""
    def read(submission):
        if submission.data is None:
            return None, submission.reason
        try:
            return answer_sources(submission.data, tasks), None
        except AnalysisError as exc:
            return None, clean_text(str(exc), 300)

    answers, unread = {}, {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        for student, (found_answers, reason) in zip(found, pool.map(read, found.values()),
                                                    strict=True):
            if reason is None:
                answers[student] = found_answers
            else:
                unread[student] = reason
    return answers, unread


def find_similar(name: str, submissions: Path | str, *, root: Path | str | None = None,
                 roster: Path | str | None = None, **options: float) -> Report:
    """Read SUBMISSIONS and compare every student's answers to assignment ``name``.

    ``roster`` (a class list CSV, :func:`~.roster.read_roster`) names the students of an LMS's
    download by their course ids, as ``mlcourse grade --roster`` does: the id decides each
    student's variant. Without it, a folder's name (or the LMS's name) is the student's id.
    """
    start = time.perf_counter()
    root = Path(root) if root else find_course_root()
    assignment = load_assignment(name, root)
    submissions = Path(submissions)
    if not submissions.is_dir():
        raise FileNotFoundError(f"submissions folder {submissions} does not exist")
    people = None
    if roster is not None:
        from ..intake.roster import Roster, read_roster

        people = Roster(read_roster(roster))
    found = collect(name, submissions, assignment.notebook, people).found
    answers, unread = _read_answers(found, assignment.tasks)
    stubs = release_stubs(name, root)
    refs = references(name, assignment.tasks, root)
    report = analyse(name, assignment.tasks, answers, stubs, refs, unread=unread, **options)
    roster_ids = [s.student_id for s in people.students if s.student_id] if people else []
    report.variant_flags, report.variant_notes = compare_variants(name, found, assignment, root,
                                                                  roster_ids)
    if not stubs:
        report.notes.append(("", "", f"no release notebook exercises/{name}/{name}.ipynb: "
                             "the starting code could not be set aside"))
    report.seconds = time.perf_counter() - start
    return report
