"""Per-student variants: each student answers the questions graded by hand about their own numbers.

A release notebook starts with one line, ``STUDENT_ID = ""``, where the student enters their
course id (the ``student_id`` of the class list). :func:`variant` turns it into that student's
parameters for the questions that vary (a data subset, a prior, the feature a question is
about): deterministically and without a secret, so ``mlcourse check`` on a laptop and
``mlcourse grade`` on the grading machine give the same numbers. Knowing another student's
variant does not help: the answers differ.

    from mlcourse_utils.grading import variant
    V = variant("bayes", STUDENT_ID)
    print(V)                   # the student's numbers, in words
    V["prior"], V.rows(442, 300)   # a parameter; the rows of a data subset

An empty or malformed id gives the *default* variant (the first choice of every parameter: the
numbers the model answer in the solution notebook is written for). :data:`QUESTIONS` is the
one table of what varies; an assignment turns variants off with ``metadata.mlcourse.variants:
false`` in its solution notebook (:func:`variants_enabled`): every student then gets the
default variant.

This module imports only the standard library: the grader defines it, from its own text, in a
student's sandbox (where the course package is not importable), so that the notebook's
``from mlcourse_utils.grading import variant`` line works there too.
"""

from __future__ import annotations

import ast
import hashlib
import math
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["QUESTIONS", "Question", "Variant", "variant", "parse_id_cell", "variants_enabled",
           "ID_LINE", "ID_LINE_OFF", "ID_NAME"]

#: The variable the id cell assigns, and the line the release writes in it.
ID_NAME = "STUDENT_ID"
ID_LINE = f'{ID_NAME} = ""  # your course id (the student_id of the class list), e.g. "s1234567"'
#: The id cell's line when an assignment's variants are off.
ID_LINE_OFF = f"{ID_NAME} = None  # this assignment has one version for everyone"
#: The most characters a course id has.
ID_MAX = 64
#: The import line a release notebook uses (the grader defines :func:`variant` in its place).
IMPORT_LINE = "from mlcourse_utils.grading import variant"


class Question:
    """One question that varies: its parameters' choices (the first is the default variant's)
    and how to say a variant of it in words (``text``, a format string over the parameters)."""

    def __init__(self, section: str, text: str, **params: Sequence[Any]) -> None:
        if not params or any(len(c) < 2 for c in params.values()):
            raise ValueError("a question that varies needs parameters with two choices or more")
        self.section = section
        self.text = text
        self.params = {name: tuple(choices) for name, choices in params.items()}

    @property
    def count(self) -> int:
        """How many distinct variants the question has (the product of its choices)."""
        return math.prod(len(c) for c in self.params.values())


#: assignment -> {question (the grade_id of the answer graded by hand) -> Question}. Every
#: parameter name is unique within its assignment, so ``V[name]`` needs no question.
QUESTIONS: dict[str, dict[str, Question]] = {
    "mle": {
        "interpretation_diabetes_gaussian": Question(
            "10", "the diabetes patients of sample {sample} (sample 0 is all 442 patients, "
            "samples 1 to 30 are 300 of them)",
            sample=tuple(range(31))),
    },
    "bayes": {
        "interpretation_breast_cancer_posterior": Question(
            "10", "prior Beta({prior[0]}, {prior[1]}); the {block} tumours from row {start}",
            prior=((1, 1), (2, 2), (1, 3), (3, 1)), block=(30, 20, 40),
            start=(0, 150, 300, 450)),
    },
    "naive_bayes": {
        # split 5 is left out: 3 errors among 163 "99 %" tumours (0.982) is too close to
        # calibrated for the question; every split kept has at least 4 (at most 0.975). No
        # pair's correlation rounds to 0.99, the question's threshold that every answer quotes.
        "interpretation_nb_overconfidence": Question(
            "9", "train/test split random_state={split}; correlation of {pair[0]!r} and "
            "{pair[1]!r}",
            split=(0, 1, 2, 3, 4, 6, 7, 8, 9, 10),
            pair=(("mean radius", "mean perimeter"), ("worst perimeter", "worst area"),
                  ("mean radius", "worst radius"), ("mean perimeter", "worst perimeter"),
                  ("mean area", "worst perimeter"), ("radius error", "perimeter error"),
                  ("mean texture", "worst texture"), ("mean concavity", "worst concavity"))),
    },
    "gda": {
        # Feature sets on which the diagonal model loses in every fold setting and LDA is never
        # more than one flower behind QDA ((1, 2, 3), (0, 1, 3) and (2, 3) are not: ties).
        "interpretation_iris_covariance": Question(
            "10", "iris columns {features} (0-3: sepal length, sepal width, petal length, "
            "petal width); {folds}-fold cross-validation, shuffle number {shuffle} (0: not "
            "shuffled)",
            features=((0, 1, 2, 3), (0, 1, 2), (0, 2, 3), (0, 2), (1, 2)),
            folds=(5, 10), shuffle=tuple(range(5))),
    },
    "logistic_regression": {
        "interpretation": Question(
            "8", "penalty l2 = {l2}; tumours: sample {sample} (sample 0: all 569; any other: "
            "450 of them)",
            l2=(1.0, 0.5, 2.0, 4.0), sample=tuple(range(6))),
    },
    "information_theory": {
        "interpretation_mdl": Question(
            "11", "the features 'bmi' and {feature!r}; all 442 patients and the first {few}",
            feature=("s5", "s1", "s2", "age"), few=(40, 30, 60, 80)),
    },
    "ridge_lasso": {
        "interpretation_diabetes": Question(
            "10", "remove {removed!r} in (a); {grid} penalties on every path",
            removed=("bmi", "s5", "bp", "s1", "s2", "s4"), grid=(100, 60, 80, 120)),
    },
}


def normalize_id(student_id: str) -> str:
    """The form of a course id that variants and comparisons use: composed Unicode, no outer
    spaces, case folded (``"S123 "`` and ``"s123"`` are one student)."""
    return unicodedata.normalize("NFC", student_id).strip().casefold()


def id_problem(student_id: object) -> str | None:
    """Why ``student_id`` is not a course id (None: it is one)."""
    if not isinstance(student_id, str):
        return f"{ID_NAME} must be text in quotes, got {type(student_id).__name__}"
    text = normalize_id(student_id)
    if not text:
        return f"{ID_NAME} is empty"
    if len(text) > ID_MAX:
        return f"{ID_NAME} has {len(text)} characters; a course id has at most {ID_MAX}"
    if any(not (c.isalnum() or c in "._@+-") for c in text):
        return (f"{ID_NAME} = {student_id!r} holds characters a course id does not have "
                "(letters, digits and . _ @ + - only)")
    return None


class Variant(Mapping):
    """One student's variant of one assignment: ``V[name]`` is a parameter's value.

    ``student_id`` is the normalised id it was made from ('' for the default variant, which an
    empty or malformed id gets); ``problem`` says why the default was used (None otherwise).
    """

    def __init__(self, assignment: str, student_id: str, values: dict[str, dict[str, Any]],
                 problem: str | None = None, enabled: bool = True) -> None:
        self.assignment = assignment
        self.student_id = student_id
        self.values = values  # question -> {parameter -> value}
        self.problem = problem
        self.enabled = enabled

    def __getitem__(self, name: str) -> Any:
        for params in self.values.values():
            if name in params:
                return params[name]
        known = ", ".join(n for p in self.values.values() for n in p) or "none"
        raise KeyError(f"{name!r} is not a parameter of {self.assignment}'s variants "
                       f"(they are: {known})")

    def __iter__(self):
        return (n for p in self.values.values() for n in p)

    def __len__(self) -> int:
        return sum(len(p) for p in self.values.values())

    @property
    def is_default(self) -> bool:
        """Whether this is the default variant (every parameter at its first choice)."""
        return all(params[n] == QUESTIONS[self.assignment][q].params[n][0]
                   for q, params in self.values.items() for n in params)

    def question(self, grade_id: str) -> dict[str, Any]:
        """The parameters of one question (a copy)."""
        return dict(self.values[grade_id])

    def rows(self, n_total: int, size: int | None = None, sample: str = "sample") -> list[int]:
        """Sorted row indices of the student's data subset: ``size`` of ``n_total`` rows (default
        all rows), drawn by the parameter ``sample`` (its value 0: all rows).

        The same on every machine and Python version (a hash per row, no random generator).
        """
        seed = self.get(sample, 0)
        if size is None:
            size = n_total
        if not isinstance(n_total, int) or n_total < 1 or not 0 < size <= n_total:
            raise ValueError(f"rows needs 0 < size <= n_total, got size={size!r}, "
                             f"n_total={n_total!r}")
        if seed == 0 or size == n_total:
            return list(range(n_total))
        key = f"{self.assignment}\0{sample}\0{seed}\0".encode()
        ranked = sorted(range(n_total), key=lambda i: hashlib.sha256(key + str(i).encode())
                        .digest())
        return sorted(ranked[:size])

    def describe(self) -> str:
        """The variant in words, one line per question."""
        who = (f"student {self.student_id}" if self.student_id else "the default variant")
        if not self.enabled:
            who = "variants are off: one version for everyone"
        lines = [f"Your variant of {self.assignment} ({who}):"]
        for q, params in self.values.items():
            question = QUESTIONS[self.assignment][q]
            lines.append(f"  section {question.section}: {question.text.format(**params)}")
        if self.problem:
            lines.append(f"  ({self.problem}: enter your course id in the first code cell)")
        return "\n".join(lines)

    __str__ = describe

    def __repr__(self) -> str:
        return f"Variant({self.assignment!r}, {self.student_id!r}, {self.values!r})"


def _index(assignment: str, question: str, name: str, student_id: str, n: int) -> int:
    digest = hashlib.sha256(
        f"mlcourse variant\0{assignment}\0{question}\0{name}\0{student_id}".encode()).digest()
    return int.from_bytes(digest[:8], "little") % n


def variant(assignment: str, student_id: object, *, enabled: bool = True) -> Variant:
    """The variant of ``assignment`` for the student whose course id is ``student_id``.

    Deterministic, and the same wherever it runs; no secret. An empty or malformed id gives
    the default variant, whose ``problem`` says why; ``None`` (what the release writes in the id
    cell when the assignment's variants are off) or ``enabled=False`` gives it without a
    problem. ValueError names an assignment without variants.
    """
    if not isinstance(assignment, str):
        raise TypeError(f"assignment must be an assignment's name, got {type(assignment).__name__}")
    if assignment not in QUESTIONS:
        raise ValueError(f"assignment {assignment!r} has no variants (those with variants: "
                         f"{', '.join(QUESTIONS)})")
    enabled = enabled and student_id is not None
    problem = id_problem(student_id) if enabled else None
    sid = normalize_id(student_id) if enabled and problem is None else ""
    values = {}
    for q, question in QUESTIONS[assignment].items():
        values[q] = {name: choices[_index(assignment, q, name, sid, len(choices)) if sid else 0]
                     for name, choices in question.params.items()}
    return Variant(assignment, sid, values, problem, enabled)


def parse_id_cell(source: str) -> tuple[str | None, str | None]:
    """``(course id, None)`` from an id cell's source, or ``(None, why not)``.

    The cell must assign text in quotes to ``STUDENT_ID`` (comments may follow); anything else
    is malformed and checked with the default variant.
    """
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None, f"the id cell is not valid Python ({ID_NAME} = \"your id\")"
    assigns = [node for node in tree.body if isinstance(node, ast.Assign)
               and any(isinstance(t, ast.Name) and t.id == ID_NAME for t in node.targets)]
    if len(tree.body) != 1 or len(assigns) != 1:
        return None, f"the id cell must hold one line, {ID_NAME} = \"your id\""
    value = assigns[0].value
    if not (isinstance(value, ast.Constant) and isinstance(value.value, str)):
        return None, f"{ID_NAME} must be your id in quotes, e.g. {ID_NAME} = \"s1234567\""
    problem = id_problem(value.value)
    return (None, problem) if problem else (normalize_id(value.value), None)


def variants_enabled(metadata: Mapping[str, Any] | None, notebook: str = "the notebook") -> bool:
    """Whether an assignment's students get their own variants: its notebook's
    ``metadata.mlcourse.variants`` (default true). ValueError for anything but true or false."""
    found = (metadata or {}).get("mlcourse", {})
    value = found.get("variants", True) if isinstance(found, Mapping) else True
    if not isinstance(value, bool):
        raise ValueError(f"metadata.mlcourse.variants of {notebook} must be true or false, got "
                         f"{value!r}")
    return value
