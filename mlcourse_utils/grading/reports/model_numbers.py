"""The model answer's numbers for a student's variant, from the instructor's reference.

A question that varies (:data:`~mlcourse_utils.grading.variants.QUESTIONS`) has, for each
variant, the numbers its model answer quotes: ``variant_numbers(question, params)`` of the
instructor-only ``solutions/NAME/instructor_reference.py`` returns them as an ordered
``{label in words: number}`` (``params``: ``variant(NAME, id).question(question)``). The
manual-grading page shows them beside each answer (:mod:`.manual`) and ``mlcourse similarity``
looks for another variant's numbers in an answer (:mod:`~..similarity.numbers`).

:class:`ModelNumbers` loads the reference the way the hidden tests do (the course folder's
``solutions/NAME/instructor_reference.py``, by its path) and computes each distinct variant's
numbers once. An assignment whose reference has no ``variant_numbers`` (or none at all), or a
call that fails, gives no numbers and a reason in words, never an error: the page then shows
the variant's parameters only.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import math
import numbers
import types
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..text import clean_text
from ..variants import QUESTIONS, Variant, variant

#: The file, in ``solutions/NAME/``, that holds ``variant_numbers``.
REFERENCE_FILE = "instructor_reference.py"
#: The function it defines.
FUNCTION = "variant_numbers"
#: Significant digits a model number is shown with.
DIGITS = 4
#: Labels and numbers taken from one call (a longer answer is cut).
MAX_NUMBERS = 40


def format_number(value: Any) -> str:
    """A model number as a TA reads it: an integer as it is, a float with :data:`DIGITS`
    significant digits (``0.3727``, ``1234``), large ones with thousands separators
    (``12,346``), tiny ones in scientific notation (``3.142e-06``); text as it is."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return clean_text(str(value), 200)
    if isinstance(value, numbers.Integral):
        return str(int(value))
    x = float(value)
    if not math.isfinite(x):
        return str(x)
    if x == 0:
        return "0"
    if abs(x) >= 10 ** DIGITS:
        return f"{x:,.0f}"
    if abs(x) < 1e-4:
        return f"{x:.{DIGITS - 1}e}"
    return f"{x:.{DIGITS}g}"


def load_reference(root: Path | str, assignment: str) -> tuple[types.ModuleType | None, str | None]:
    """``(module, None)``: ``solutions/<assignment>/instructor_reference.py`` of the course
    folder ``root``, loaded by its path as the hidden tests load it; or ``(None, why not)``."""
    path = Path(root) / "solutions" / assignment / REFERENCE_FILE
    if not path.is_file():
        return None, f"solutions/{assignment}/{REFERENCE_FILE} does not exist"
    try:
        spec = importlib.util.spec_from_file_location(f"{assignment}_instructor_reference", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    except Exception as exc:  # noqa: BLE001 (the instructor's file: said, never fatal here)
        return None, (f"solutions/{assignment}/{REFERENCE_FILE} could not be loaded "
                      f"({type(exc).__name__}: {clean_text(str(exc), 200)})")
    return module, None


@dataclasses.dataclass(frozen=True)
class Numbers:
    """One variant of one question: its words, and the model answer's numbers (``values``:
    label -> number as returned; ``rows``: label -> number as shown), or why there are none."""

    words: str
    values: tuple[tuple[str, Any], ...] = ()
    problem: str | None = None

    @property
    def rows(self) -> list[tuple[str, str]]:
        return [(label, format_number(value)) for label, value in self.values]


def variant_key(params: Mapping[str, Any]) -> str:
    """A hashable, stable name of a question's parameters (students with equal keys share
    the variant of that question)."""
    return repr(sorted(params.items()))


class ModelNumbers:
    """The model numbers of one assignment's variants, each distinct variant computed once.

    ``root``: the course folder; ``enabled``: whether the assignment's variants are on
    (:attr:`~mlcourse_utils.grading.notebook.Assignment.variants`): when off, every student
    gets the default variant.
    """

    def __init__(self, root: Path | str, assignment: str, enabled: bool = True) -> None:
        self.assignment = assignment
        self.enabled = enabled
        self.questions = QUESTIONS.get(assignment, {})
        self._root = Path(root)
        self._function = None
        self._problem: str | None = None
        self._loaded = False
        self._cache: dict[tuple[str, str], Numbers] = {}

    def varies(self, question: str) -> bool:
        """Whether ``question`` (a grade_id) is one of the assignment's questions that vary."""
        return question in self.questions

    def variant(self, student_id: str | None) -> Variant:
        """The variant of the student graded as ``student_id`` (the roster's id, never the one
        typed in the notebook); the default variant when variants are off."""
        return variant(self.assignment, student_id, enabled=self.enabled)

    @property
    def problem(self) -> str | None:
        """Why no numbers can be computed for this assignment (None: they can)."""
        self._load()
        return self._problem

    def _load(self):
        if self._loaded:
            return
        self._loaded = True
        module, self._problem = load_reference(self._root, self.assignment)
        if module is not None:
            function = getattr(module, FUNCTION, None)
            if callable(function):
                self._function = function
            else:
                self._problem = (f"solutions/{self.assignment}/{REFERENCE_FILE} has no "
                                 f"{FUNCTION}(question, params)")

    def numbers(self, question: str, params: Mapping[str, Any]) -> Numbers:
        """The model numbers of ``question`` for the variant with ``params`` (computed once)."""
        key = (question, variant_key(params))
        if key not in self._cache:
            self._cache[key] = self._compute(question, dict(params))
        return self._cache[key]

    def for_student(self, question: str, student_id: str | None) -> Numbers:
        """The model numbers of ``question`` for the variant of the student ``student_id``."""
        return self.numbers(question, self.variant(student_id).question(question))

    def _compute(self, question, params):
        try:
            words = self.questions[question].text.format(**params)
        except (KeyError, IndexError, ValueError, AttributeError):
            words = ", ".join(f"{k} = {v!r}" for k, v in params.items())
        words = clean_text(words, 500)
        self._load()
        if self._function is None:
            return Numbers(words, problem=self._problem)
        try:
            found = self._function(question, dict(params))
            if not isinstance(found, Mapping):
                raise TypeError(f"it returned a {type(found).__name__}, not a dict")
            values = tuple((clean_text(str(label), 200), _plain(value))
                           for label, value in list(found.items())[:MAX_NUMBERS])
        except Exception as exc:  # noqa: BLE001 (the instructor's code: said, never fatal here)
            return Numbers(words, problem=(f"{FUNCTION}({question!r}, ...) failed: "
                                           f"{type(exc).__name__}: {clean_text(str(exc), 200)}"))
        return Numbers(words, values)


def _plain(value):
    """A numpy scalar as the Python number it holds; anything else as it is."""
    item = getattr(value, "item", None)
    if callable(item) and getattr(value, "shape", None) == ():
        try:
            return item()
        except (TypeError, ValueError):
            return value
    return value
