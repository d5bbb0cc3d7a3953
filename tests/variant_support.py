"""A small course with one question that varies, for the tests of the model numbers shown on the
manual-grading page and of `similarity`'s comparison of the numbers students quote.

Assignment ``toy`` (added to ``variants.QUESTIONS`` by :func:`toy_course`) has one question,
``interpretation`` (2 points, graded by hand), with one parameter ``a`` in (2, 3, 7); its
instructor reference computes, by hand-checkable formulas of ``a``:

====  ===========  ==============  ======  ===========================
a     1/a          sqrt(a)         569     1.25 if a < 5 else 9.75
====  ===========  ==============  ======  ===========================
2     0.5          1.41421356...   569     1.25
3     0.33333...   1.73205081...   569     1.25
7     0.14285714   2.64575131...   569     9.75
====  ===========  ==============  ======  ===========================
"""

from __future__ import annotations

import json
from pathlib import Path

from mlcourse_utils.grading import variants

NAME = "toy"
QUESTION = "interpretation"
CHOICES = (2, 3, 7)

REFERENCE = '''
import math

CALLS = []


def variant_numbers(question, params):
    CALLS.append((question, dict(params)))
    a = params["a"]
    return {"one over a": 1 / a, "square root of a": math.sqrt(a), "patients (all)": 569,
            "shared constant": 1.25 if a < 5 else 9.75}
'''


def notebook(variants_on=True):
    """The toy assignment's solution notebook: an id cell, and one manually graded Markdown
    cell with its model answer."""
    meta = {"mlcourse": {"variants": variants_on}}
    cells = [
        {"cell_type": "code", "id": "student-id", "metadata": {"mlcourse": {"role": "student_id"}},
         "execution_count": None, "outputs": [], "source": variants.ID_LINE},
        {"cell_type": "markdown", "id": "q", "metadata": {"nbgrader": {
            "grade": True, "grade_id": QUESTION, "locked": False, "points": 2,
            "schema_version": 3, "solution": True, "task": False}},
         "source": "### BEGIN SOLUTION\n1/a is 0.5 for the default variant.\n"
                   "### END SOLUTION\n"},
    ]
    return {"cells": cells, "metadata": meta, "nbformat": 4, "nbformat_minor": 5}


def toy_course(root: Path, monkeypatch, reference: str | None = REFERENCE,
               variants_on: bool = True) -> Path:
    """Write the toy course into ``root`` (``reference``: the instructor reference's text, None
    for no file) and add its question to ``variants.QUESTIONS`` for this test."""
    folder = root / "solutions" / NAME
    folder.mkdir(parents=True)
    (root / "nbgrader_config.py").write_text("")
    (folder / f"{NAME}.ipynb").write_text(json.dumps(notebook(variants_on), indent=1))
    if reference is not None:
        (folder / "instructor_reference.py").write_text(reference)
    monkeypatch.setitem(variants.QUESTIONS, NAME, {
        QUESTION: variants.Question("3", "a = {a}", a=CHOICES)})
    return root


def ids_with(a: int, count: int = 1, avoid: tuple[str, ...] = ()) -> list[str]:
    """``count`` course ids (``s101``, ``s102``, ...) whose variant of the toy question has
    ``a`` (needs :func:`toy_course`'s QUESTIONS entry)."""
    found = []
    for n in range(101, 2000):
        sid = f"s{n}"
        if sid not in avoid and variants.variant(NAME, sid)["a"] == a:
            found.append(sid)
            if len(found) == count:
                return found
    raise AssertionError(f"no {count} ids with a = {a}")


def submission(student_id: str | None, answer: str, variants_on: bool = True) -> dict:
    """A student's notebook: ``student_id`` typed in the id cell, ``answer`` in the question."""
    nb = notebook(variants_on)
    nb["cells"][0]["source"] = (variants.ID_LINE if student_id is None
                                else f'STUDENT_ID = "{student_id}"')
    nb["cells"][1]["source"] = answer
    return nb
