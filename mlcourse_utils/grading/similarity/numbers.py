"""Answers that quote another variant's numbers, and id cells that hold another student's id.

Each student answers the questions that vary (:data:`~..variants.QUESTIONS`) about their own
variant; the model answer's numbers of every variant come from the instructor's
``variant_numbers`` (:class:`~..reports.model_numbers.ModelNumbers`). For each such question:

* the numbers written in a student's answer (the Markdown or code of the manually graded cell
  with that grade_id) are read as the student wrote them: ``0.373`` stands for anything that
  rounds to it at three decimals (0.37269 matches), ``37.3%`` for 0.373 as well as 37.3,
  ``1.2e-3`` for what rounds to it at that precision;
* small integers (below :data:`SMALL_INTEGER`: section numbers, ``Beta(1, 3)``) and numbers
  of fewer than :data:`MIN_DIGITS` significant digits (``0.4`` matches too much) are left out,
  and so is every written number that matches a number of the student's own variant (numbers
  common to both variants are no evidence);
* a written number that then matches a model number of another variant in the class (the
  variant of one or more other students, or the default variant that the solution notebook is
  written for) is evidence; a question is flagged when at least :data:`MIN_QUOTED` different
  numbers of one other variant are quoted, and more of them than numbers of the student's own
  variant that the other variant does not have (an honest answer quotes its own numbers: a
  chance match of two rounded numbers of another variant does not outweigh them); the flag
  names its students and the numbers.

The variant is the one of the id the student is known under (the folder's or the roster's),
never the id typed in the notebook: a notebook whose id cell holds another student's id is
flagged on its own. This flags notebooks for a person to read; it never changes a grade.
"""

from __future__ import annotations

import bisect
import dataclasses
import math
import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from ..reports.model_numbers import ModelNumbers, format_number, variant_key
from ..text import clean_text
from ..variants import normalize_id

#: Written integers of smaller absolute value are left out (section numbers, small counts).
SMALL_INTEGER = 100
#: Written numbers need at least this many significant digits.
MIN_DIGITS = 2
#: A question is flagged when this many numbers of one other variant are quoted.
MIN_QUOTED = 2
#: Written numbers read from one answer.
MAX_WRITTEN = 500
#: What the default variant is called when no student of the class has it.
DEFAULT_VARIANT = "the default variant (the solution notebook's)"

#: A number as people write it: optional sign, digits with an optional fraction (or a bare
#: fraction), an optional exponent and an optional percent sign; not inside a name (``s5``,
#: ``x2``) or right after a point or a digit.
NUMBER = re.compile(r"(?<![\w.])([-\u2212]?)(\d+(?:\.\d+)?|\.\d+)(?:[eE]([-+]?\d{1,3}))?"
                    r"(?![\w.]\d)(\s*\\?%)?")


@dataclasses.dataclass(frozen=True)
class Written:
    """One number as written: its text, and the intervals of values it stands for."""

    text: str
    intervals: tuple[tuple[float, float], ...]


def _interval(value, unit):
    half = unit / 2 * (1 + 1e-9) + 1e-15 * abs(value)
    return value - half, value + half


def written_numbers(text: str) -> list[Written]:
    """The numbers of ``text`` that count as evidence (see the module's notes), in order, each
    once."""
    found, seen = [], set()
    for m in NUMBER.finditer(text):
        sign, digits, exponent, percent = m.groups()
        whole, _, fraction = digits.partition(".")
        if not exponent and not fraction and int(whole or 0) < SMALL_INTEGER:
            continue
        significant = (whole + fraction).lstrip("0")
        if len(significant) < MIN_DIGITS:
            continue
        exp = int(exponent or 0)
        value = float(digits) * 10.0 ** exp * (-1 if sign else 1)
        unit = 10.0 ** (exp - len(fraction))
        intervals = [_interval(value, unit)]
        if percent:
            intervals.append(_interval(value / 100, unit / 100))
        label = " ".join(m.group(0).replace("\u2212", "-").replace("\\%", "%").split())
        if label in seen:
            continue
        seen.add(label)
        found.append(Written(label, tuple(intervals)))
        if len(found) >= MAX_WRITTEN:
            break
    return found


class _Values:
    """A variant's model numbers, sorted for interval search."""

    def __init__(self, values: Sequence[tuple[str, Any]]) -> None:
        pairs = sorted((float(v), label) for label, v in values
                       if isinstance(v, (int, float)) and not isinstance(v, bool)
                       and math.isfinite(float(v)))
        self.keys = [v for v, _ in pairs]
        self.pairs = pairs

    def matching(self, written: Written) -> list[tuple[float, str]]:
        """The model numbers ``written`` stands for (value, label)."""
        hits = []
        for low, high in written.intervals:
            i = bisect.bisect_left(self.keys, low)
            while i < len(self.keys) and self.keys[i] <= high:
                hits.append(self.pairs[i])
                i += 1
        return hits


@dataclasses.dataclass
class VariantFlag:
    """A flagged notebook: ``student`` quotes the numbers of ``others``' variant of
    ``question`` (kind "numbers"; ``quoted``: (as written, label, model number)), or its id cell
    holds the id of ``others[0]`` (kind "id", ``question`` empty)."""

    student: str
    kind: str
    question: str
    others: list[str]
    quoted: list[tuple[str, str, str]] = dataclasses.field(default_factory=list)
    detail: str = ""


def quoted_numbers(text: str, own: Sequence[tuple[str, Any]],
                   other: Sequence[tuple[str, Any]]) -> list[tuple[str, str, str]]:
    """``(as written, label, model number)`` for each number of ``text`` that matches a model
    number of ``other`` and none of ``own`` (both: ``[(label, number), ...]``), each model
    number once."""
    return _quoted(written_numbers(text), _Values(own), _Values(other))


def _quoted(found, mine, theirs):
    quoted, used = [], set()
    for written in found:
        if mine.matching(written):
            continue
        for value, label in theirs.matching(written):
            if label not in used:
                used.add(label)
                quoted.append((written.text, label, format_number(value)))
                break
    return quoted


def number_flags(students: Mapping[str, Mapping[str, str]], models: ModelNumbers,
                 min_quoted: int = MIN_QUOTED) -> list[VariantFlag]:
    """The flags of a class: ``students`` is ``{student: {question: answer text}}`` (the
    student's id decides the variant). Nothing when the assignment's variants are off (every
    student has the same variant) or its model numbers cannot be computed."""
    if not models.enabled or models.problem:
        return []
    flags = []
    for question in models.questions:
        by_key, params_of = defaultdict(list), {}
        for student in students:
            params = models.variant(student).question(question)
            key = variant_key(params)
            by_key[key].append(student)
            params_of[key] = params
        default = models.variant(None).question(question)
        params_of.setdefault(variant_key(default), default)
        values = {key: models.numbers(question, params).values
                  for key, params in params_of.items()}
        own_values = {key: _Values(v) for key, v in values.items()}
        # One sorted table of every variant's numbers: a written number is looked up once.
        every = _Values([((key, label), value) for key, v in values.items() for label, value in v])
        for student in sorted(students):
            found = written_numbers(students[student].get(question) or "")
            if len(found) < min_quoted:
                continue
            own = variant_key(models.variant(student).question(question))
            hits, used, mine = defaultdict(list), defaultdict(set), defaultdict(int)
            for written in found:
                if own_values[own].matching(written):
                    # The student's own number: evidence against every variant that lacks it
                    # (numbers common to both variants speak for neither).
                    also = {key for _, (key, _) in every.matching(written)}
                    for key in values.keys() - also:
                        mine[key] += 1
                    continue
                keys = set()
                for value, (key, label) in every.matching(written):
                    if key != own and key not in keys and label not in used[key]:
                        keys.add(key)
                        used[key].add(label)
                        hits[key].append((written.text, label, format_number(value)))
            for key in values:
                if len(hits[key]) >= min_quoted and len(hits[key]) > mine[key]:
                    others = sorted(by_key.get(key, [])) or [DEFAULT_VARIANT]
                    flags.append(VariantFlag(student, "numbers", question, others, hits[key],
                                             models.numbers(question, params_of[key]).words))
    return flags


def id_flags(typed: Mapping[str, str | None],
             roster: Sequence[str] = ()) -> list[VariantFlag]:
    """A flag for each notebook whose id cell holds the id of another student of the class
    (``typed``: ``{student: id typed in their notebook, or None}``; ``roster``: the class
    list's ids, who may not have handed anything in; ids compared normalised)."""
    known = {normalize_id(s): s for s in [*roster, *typed]}
    flags = []
    for student, typed_id in sorted(typed.items()):
        if not typed_id:
            continue
        owner = known.get(normalize_id(typed_id))
        if owner is not None and owner != student:
            flags.append(VariantFlag(student, "id", "", [owner], detail=(
                f"the id cell holds {clean_text(typed_id, 80)!r}, the id of {owner}")))
    return flags
