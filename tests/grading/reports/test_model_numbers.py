"""The model answer's numbers per variant (grading/reports/model_numbers.py) and the manual-grading
page that shows them beside each answer (grading/reports/manual.py).

The course is the toy course of tests/variant_support.py: one question whose model numbers are
1/a, sqrt(a), 569 and 1.25 (a < 5) or 9.75, for a in (2, 3, 7); a = 2 is the default variant.
"""

from __future__ import annotations

import csv
import html
import re

import pytest
from markupsafe import escape

import assignment_support as sup
import variant_support as vs
from mlcourse_utils.grading import variants
from mlcourse_utils.grading.notebook import load_assignment
from mlcourse_utils.grading.reports import manual
from mlcourse_utils.grading.reports.model_numbers import ModelNumbers, format_number


@pytest.mark.parametrize("value, shown", [
    (1 / 3, "0.3333"), (3 ** 0.5, "1.732"), (569, "569"), (1.25, "1.25"), (-0.0123456, "-0.01235"),
    (1234.5678, "1235"), (12345.678, "12,346"), (3.14159e-6, "3.142e-06"), (0.0, "0"),
    (True, "True"), ("Beta(2, 3)", "Beta(2, 3)"), (float("nan"), "nan"),
])
def test_numbers_are_shown_with_four_significant_digits(value, shown):
    assert format_number(value) == shown


def test_numpy_numbers_are_shown_as_python_numbers(tmp_path, monkeypatch):
    import numpy as np

    root = vs.toy_course(tmp_path, monkeypatch, reference=(
        "import numpy as np\n"
        "def variant_numbers(question, params):\n"
        "    return {'n': np.int64(569), 'mean': np.float64(1) / params['a']}\n"))
    found = ModelNumbers(root, vs.NAME).numbers(vs.QUESTION, {"a": 3})
    assert found.values == (("n", 569), ("mean", pytest.approx(1 / 3)))
    assert type(found.values[0][1]) is int and not isinstance(found.values[1][1], np.generic)
    assert found.rows == [("n", "569"), ("mean", "0.3333")]


def test_a_reference_without_variant_numbers_gives_the_words_only(tmp_path, monkeypatch):
    root = vs.toy_course(tmp_path / "a", monkeypatch, reference="X = 1\n")
    found = ModelNumbers(root, vs.NAME).numbers(vs.QUESTION, {"a": 7})
    assert found.words == "a = 7" and found.values == ()
    assert found.problem == "solutions/toy/instructor_reference.py has no variant_numbers" \
                            "(question, params)"
    none = ModelNumbers(vs.toy_course(tmp_path / "b", monkeypatch, reference=None), vs.NAME)
    assert "does not exist" in none.numbers(vs.QUESTION, {"a": 7}).problem
    broken = ModelNumbers(vs.toy_course(tmp_path / "c", monkeypatch, reference=(
        "def variant_numbers(question, params):\n    return 1 / 0\n")), vs.NAME)
    assert "ZeroDivisionError" in broken.numbers(vs.QUESTION, {"a": 7}).problem


# ---------------------------------------------------------------- the manual-grading page


def _bundle(root, students, answers=None):
    """The toy assignment's manual page and CSV for ``students`` (answer fragments by hand)."""
    assignment = load_assignment(vs.NAME, root)
    out, parts = root / "out", root / "parts"
    for n, student in enumerate(students):
        (parts / str(n)).mkdir(parents=True)
        text = (answers or {}).get(student, f"answer {n}")
        (parts / str(n) / "0.html").write_text(f"<p>{html.escape(text)}</p>")
    manual.write_bundle(out, assignment, students, root, parts, {})
    return (out / "manual" / f"{vs.QUESTION}.html").read_text(encoding="utf-8"), \
        out / "manual" / f"{vs.QUESTION}.csv"


def _aside(page, n):
    """The variant box beside the n-th answer (1-based), or None."""
    article = page.split(f'id="student-{n}"', 1)[1].split("</article>", 1)[0]
    found = re.search(r'<aside class="variant".*?</aside>', article, re.S)
    return found.group(0) if found else None


def test_each_answer_shows_its_own_variants_model_numbers(tmp_path, monkeypatch):
    """Hand-derived: a = 3 gives 1/3 -> 0.3333, sqrt(3) -> 1.732, 569, 1.25; a = 7 gives
    0.1429, 2.646, 569, 9.75; an id that is no course id gets the default a = 2 (0.5, 1.414)
    and a note. Two students of one variant cost one call of the reference."""
    root = vs.toy_course(tmp_path, monkeypatch)
    (t1, t2), (seven,) = vs.ids_with(3, 2), vs.ids_with(7)
    hostile = "<img src=x onerror=alert(1)>"
    page, csv_path = _bundle(root, [t1, seven, hostile, t2])
    rows = lambda box: re.findall(r"<th scope=\"row\">(.*?)</th><td>(.*?)</td>", box)  # noqa: E731
    three = _aside(page, 1)
    assert f"Variant of {t1}</strong>: a = 3" in three
    assert rows(three) == [("one over a", "0.3333"), ("square root of a", "1.732"),
                           ("patients (all)", "569"), ("shared constant", "1.25")]
    assert rows(_aside(page, 2)) == [("one over a", "0.1429"), ("square root of a", "2.646"),
                                     ("patients (all)", "569"), ("shared constant", "9.75")]
    default = _aside(page, 3)
    assert "a = 2" in default and "the default variant" in default
    assert rows(default)[:2] == [("one over a", "0.5"), ("square root of a", "1.414")]
    assert rows(_aside(page, 4)) == rows(three)
    assert "<img" not in page and "&lt;img src=x onerror=alert(1)&gt;" in page
    # The CSV beside the page is unchanged, and grade-import's reader takes it once filled.
    with open(csv_path, newline="", encoding="utf-8") as fh:
        table = list(csv.reader(fh))
    assert table[0] == ["student_id", "grade_id", "points", "comment"]
    assert [r[0] for r in table[1:]] == [t1, seven, hostile, t2]
    table[1][2] = "1.5"
    with open(csv_path, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(table)
    assert manual.read_filled([csv_path], [t1, seven, hostile, t2], {vs.QUESTION: 2.0}) == {
        (t1, vs.QUESTION): (1.5, "")}


def test_the_roster_id_decides_the_variant_never_the_typed_one(tmp_path, monkeypatch):
    """The page is made from the ids students are graded under: a fragment claiming another
    id changes nothing (the aside is the graded id's variant)."""
    root = vs.toy_course(tmp_path, monkeypatch)
    (seven,), (three,) = vs.ids_with(7), vs.ids_with(3)
    page, _ = _bundle(root, [seven], {seven: f'STUDENT_ID = "{three}"; 1/a = 0.3333'})
    assert "0.1429" in _aside(page, 1) and "0.3333" not in _aside(page, 1)


def test_each_distinct_variant_is_computed_once(tmp_path, monkeypatch):
    """Four students, two variants: two calls (the reference's own CALLS list, read through
    the loaded function)."""
    root = vs.toy_course(tmp_path, monkeypatch)
    students = [*vs.ids_with(3, 2), *vs.ids_with(7, 2)]
    models = ModelNumbers(root, vs.NAME)
    for s in students:
        models.for_student(vs.QUESTION, s)
    assert sorted(p["a"] for _, p in models._function.__globals__["CALLS"]) == [3, 7]


def test_variants_off_show_the_default_numbers_once(tmp_path, monkeypatch):
    root = vs.toy_course(tmp_path, monkeypatch, variants_on=False)
    students = [*vs.ids_with(3), *vs.ids_with(7)]
    page, _ = _bundle(root, students)
    assert _aside(page, 1) is None and _aside(page, 2) is None
    top = page.split('id="model-numbers"', 1)[1].split("</section>", 1)[0]
    assert "variants are off" in top and "a = 2" in top
    assert re.findall(r"<td>(.*?)</td>", top) == ["0.5", "1.414", "569", "1.25"]


def test_without_variant_numbers_the_page_shows_the_parameters(tmp_path, monkeypatch):
    root = vs.toy_course(tmp_path, monkeypatch, reference="X = 1\n")
    (seven,) = vs.ids_with(7)
    page, _ = _bundle(root, [seven])
    box = _aside(page, 1)
    assert "a = 7" in box and "No model numbers" in box and "has no variant_numbers" in box


def test_the_real_course_pages_show_each_students_variant(tmp_path):
    """On a real assignment, whether or not its instructor reference has variant_numbers yet:
    beside each answer, the student's variant in the words of variants.py, and either the
    model numbers or why there are none."""
    name = "bayes"
    assignment = load_assignment(name, sup.ROOT)
    gid = next(g for g, _ in assignment.manual if g in variants.QUESTIONS[name])
    question = variants.QUESTIONS[name][gid]
    students = [s for s in (f"s{n}" for n in range(1, 200))
                if not variants.variant(name, s).is_default][:2]
    parts = tmp_path / "parts"
    for n in range(len(students)):
        (parts / str(n)).mkdir(parents=True)
        for j in range(len(assignment.manual)):
            (parts / str(n) / f"{j}.html").write_text("<p>an answer</p>")
    manual.write_bundle(tmp_path / "out", assignment, students, sup.ROOT, parts, {})
    page = (tmp_path / "out" / "manual" / f"{gid}.html").read_text(encoding="utf-8")
    for n, s in enumerate(students, 1):
        box = _aside(page, n)
        words = question.text.format(**variants.variant(name, s).question(gid))
        assert f"Variant of {s}</strong>: {escape(words)}" in box
        assert ("<table" in box) != ("No model numbers" in box)
