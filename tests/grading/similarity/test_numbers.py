"""Another variant's numbers in an answer, another student's id in the id cell
(grading/similarity/numbers.py, read by similarity/reading.py, shown by similarity/report.py).

The class is the toy course of tests/variant_support.py: one question whose model numbers are
1/a, sqrt(a), 569 (every variant) and 1.25 (a = 2 and 3) or 9.75 (a = 7), for a in (2, 3, 7).
"""

from __future__ import annotations

import csv
import json
from types import SimpleNamespace

import pytest

import assignment_support as sup
import variant_support as vs
from mlcourse_utils.grading.intake.submissions import Submission
from mlcourse_utils.grading.reports.model_numbers import ModelNumbers
from mlcourse_utils.grading.similarity import numbers
from mlcourse_utils.grading.similarity.pairs import Report, compare_variants
from mlcourse_utils.grading.similarity.reading import ReadingError, read_written
from mlcourse_utils.grading.similarity.report import VARIANT_COLUMNS, VARIANT_CSV, write_report


def _texts(found):
    return [w.text for w in numbers.written_numbers(found)]


def test_written_numbers_leave_out_small_integers_names_and_one_digit_numbers():
    """By hand: 3 and 42 are small integers, s5 and x2 are names, 0.4 has one significant
    digit, 1.2.3 is a version; 569, 0.373, -1.5, 2.5e-3 and 37.3% are evidence."""
    text = ("In section 3, with 42 patients of s5 and x2, 0.4 or 1.2.3: 569 patients, "
            "mean 0.373, slope -1.5, rate 2.5e-3, share 37.3%.")
    assert _texts(text) == ["569", "0.373", "-1.5", "2.5e-3", "37.3%"]


@pytest.mark.parametrize("written, model, expected", [
    ("0.373", 0.37269, True),      # rounds to 0.373 at three decimals
    ("0.373", 0.37249, False),     # rounds to 0.372
    ("0.37", 0.37269, True),       # two decimals
    ("1.732", 3 ** 0.5, True),     # 1.7320508 -> 1.732
    ("1.73", 3 ** 0.5, True),
    ("1.74", 3 ** 0.5, False),
    ("37.3%", 0.37269, True),      # a percentage: 0.373
    ("37.3%", 37.269, True),       # ... or the number itself
    ("2.5e-3", 0.00249, True),     # 2.5e-3 at its precision: 0.00245 .. 0.00255
    ("2.5e-3", 0.0026, False),
    ("-1.5", 1.5, False),          # the sign counts
])
def test_a_number_matches_at_the_precision_it_was_written(written, model, expected):
    (found,) = numbers.written_numbers(f"x = {written}.")
    assert bool(numbers._Values([("m", model)]).matching(found)) is expected


def test_quoted_numbers_are_another_variants_and_not_ones_own():
    """Own variant a = 2 (0.5, 1.41421, 569, 1.25); other a = 3 (0.33333, 1.73205, 569, 1.25).
    0.333 and 1.73 are the other's; 569 and 1.25 are common to both; 1.414 is one's own."""
    own = [("one over a", 0.5), ("root", 2 ** 0.5), ("n", 569), ("c", 1.25)]
    other = [("one over a", 1 / 3), ("root", 3 ** 0.5), ("n", 569), ("c", 1.25)]
    text = "1/a = 0.333, sqrt(a) = 1.73 and 1.414; 569 patients; constant 1.25"
    assert numbers.quoted_numbers(text, own, other) == [
        ("0.333", "one over a", "0.3333"), ("1.73", "root", "1.732")]


@pytest.fixture
def toy(tmp_path, monkeypatch):
    root = vs.toy_course(tmp_path / "course", monkeypatch)
    two = vs.ids_with(2, 2)
    three = vs.ids_with(3, 2)
    seven = vs.ids_with(7, 1)
    return root, two, three, seven


def test_an_answer_quoting_another_students_numbers_is_flagged(toy):
    """Hand-derived (see the module's table): the copier (a = 2) writes 0.333 and 1.73, the
    numbers of a = 3 (1/3 -> 0.333, sqrt(3) = 1.73205 -> 1.73): flagged, naming both students
    with a = 3. Honest answers, one stray number, numbers common to both variants (569, 1.25)
    and rounded own numbers (0.14, 2.65 for a = 7) are not."""
    root, (copier, honest_two), (t1, t2), (seven,) = toy
    answers = {
        copier: {vs.QUESTION: "1/a is 0.333 and its root 1.73, over 569 patients"},
        honest_two: {vs.QUESTION: "1/a = 0.50, sqrt(a) = 1.414 (569 patients, constant 1.25)"},
        t1: {vs.QUESTION: "1/a = 0.3333 and sqrt(a) = 1.7321"},
        t2: {vs.QUESTION: "only 0.333 of theirs, and 1.25 shared with a = 2"},
        seven: {vs.QUESTION: "rounded: 0.14 and 2.65, then 9.75"},
    }
    models = ModelNumbers(root, vs.NAME)
    flags = numbers.number_flags(answers, models)
    assert len(flags) == 1
    (flag,) = flags
    assert (flag.student, flag.kind, flag.question) == (copier, "numbers", vs.QUESTION)
    assert flag.others == sorted([t1, t2])
    assert flag.quoted == [("0.333", "one over a", "0.3333"),
                           ("1.73", "square root of a", "1.732")]
    assert flag.detail == "a = 3"


def test_an_honest_answer_outweighs_chance_matches(toy):
    """An a = 2 answer quoting its own 0.50 and 1.414 and, by chance, 0.333 and 1.73 (a = 3's
    numbers, a classmate's): two of another variant's against two of its own is no evidence;
    two of a = 3's against one of its own is."""
    root, (student, _), (classmate, _), _ = toy
    models = ModelNumbers(root, vs.NAME)
    answer = {classmate: {vs.QUESTION: "1/a = 0.3333"}}
    both = {**answer, student: {vs.QUESTION: "own: 0.50 and 1.414; by chance 0.333 and 1.73"}}
    assert numbers.number_flags(both, models) == []
    theirs = {**answer, student: {vs.QUESTION: "0.50 is wrong; 0.333 and 1.73"}}
    assert [f.student for f in numbers.number_flags(theirs, models)] == [student]


def test_each_variant_is_computed_once(toy):
    """Five students over three variants, plus the default (a = 2, already a student's): the
    reference is called once per distinct variant, not per student."""
    root, two, three, seven = toy
    models = ModelNumbers(root, vs.NAME)
    numbers.number_flags({s: {vs.QUESTION: "0.5"} for s in [*two, *three, *seven]}, models)
    calls = models._function.__globals__["CALLS"]
    assert sorted(p["a"] for _, p in calls) == [2, 3, 7]


def test_the_default_variants_numbers_are_named_as_such(toy):
    """Nobody in this class has a = 2 (the default); quoting its 0.50 and 1.41 is flagged as
    the default variant's (the solution notebook's)."""
    root, _, (t1, _), (seven,) = toy
    models = ModelNumbers(root, vs.NAME)
    flags = numbers.number_flags({seven: {vs.QUESTION: "0.50 and 1.41"},
                                  t1: {vs.QUESTION: "0.333"}}, models)
    assert [(f.student, f.others) for f in flags] == [(seven, [numbers.DEFAULT_VARIANT])]


def test_nothing_is_compared_without_variant_numbers(tmp_path, monkeypatch):
    root = vs.toy_course(tmp_path, monkeypatch, reference="def other():\n    pass\n")
    models = ModelNumbers(root, vs.NAME)
    three = vs.ids_with(3)
    assert numbers.number_flags({three[0]: {vs.QUESTION: "0.50 and 1.41"}}, models) == []
    assert "has no variant_numbers" in models.problem


def test_an_id_cell_holding_another_students_id_is_flagged():
    """b typed a's id (case and spaces do not hide it); c typed an id nobody has; d none."""
    flags = numbers.id_flags({"a": "a", "b": " A ", "c": "zz9", "d": None})
    assert [(f.student, f.kind, f.others) for f in flags] == [("b", "id", ["a"])]
    assert "the id of a" in flags[0].detail
    # With the class list: the id of a roster student who handed nothing in counts too.
    flags = numbers.id_flags({"a": "a", "c": "zz9"}, roster=["a", "ZZ9", "q"])
    assert [(f.student, f.others) for f in flags] == [("c", ["ZZ9"])]


def _found(notebooks):
    return {s: Submission(s, json.dumps(nb).encode()) for s, nb in notebooks.items()}


def test_the_class_is_read_in_a_child_and_flagged(toy):
    """compare_variants on real notebooks: the copier's answer quotes a = 3's numbers, and a
    hostile student typed the copier's id in their id cell."""
    root, (copier, _), (t1, t2), (seven,) = toy
    hostile = "<b>x</b>"
    notebooks = {
        copier: vs.submission(copier, "my numbers: 0.333 and 1.73"),
        t1: vs.submission(t1, "0.3333 and 1.732"),
        t2: vs.submission(None, "not yet"),
        seven: vs.submission(seven, "0.1429, 2.646"),
        hostile: vs.submission(copier, "nothing"),
    }
    assignment = SimpleNamespace(variants=True, manual=[(vs.QUESTION, 2.0)])
    flags, notes = compare_variants(vs.NAME, _found(notebooks), assignment, root)
    assert notes == []
    assert [(f.student, f.kind, f.others) for f in flags] == [
        (copier, "numbers", sorted([t1, t2])), (hostile, "id", [copier])]


def test_variants_off_compare_no_numbers_but_still_ids(tmp_path, monkeypatch):
    root = vs.toy_course(tmp_path, monkeypatch, variants_on=False)
    (a,), (b,) = vs.ids_with(2), vs.ids_with(3)
    notebooks = {a: vs.submission(b, "0.333 and 1.73", False),
                 b: vs.submission(b, "0.50 and 1.41", False)}
    assignment = SimpleNamespace(variants=False, manual=[(vs.QUESTION, 2.0)])
    flags, notes = compare_variants(vs.NAME, _found(notebooks), assignment, root)
    assert [(f.student, f.kind) for f in flags] == [(a, "id")]
    assert "are off" in notes[0]


def test_reading_a_broken_notebook_says_why():
    with pytest.raises(ReadingError, match="could not be read"):
        read_written(b'{"cells": [ not json', [vs.QUESTION])
    written = read_written(json.dumps(vs.submission("S7 ", "x")).encode(), [vs.QUESTION])
    assert (written.texts, written.typed_id) == ({vs.QUESTION: "x"}, "s7")


def test_the_flags_are_in_their_csv_and_on_the_page_escaped(tmp_path):
    flag = numbers.VariantFlag("=cmd|calc", "numbers", vs.QUESTION, ["<i>b</i>", "c"],
                               [("0.333", "one <over> a", "0.3333")], "a = 3")
    ident = numbers.VariantFlag("<script>", "id", "", ["=cmd|calc"],
                                detail="the id cell holds '=cmd|calc', the id of =cmd|calc")
    report = Report("toy", [], ["=cmd|calc", "<script>"], [], {}, [], [], {
        "threshold": 0.8, "min_tokens": 30, "min_tokens_total": 60, "common_fraction": 0.2,
        "min_common": 20, "k": 5}, variant_flags=[flag, ident])
    write_report(report, tmp_path)
    with open(tmp_path / VARIANT_CSV, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    assert rows == [VARIANT_COLUMNS,
                    ["'=cmd|calc", "numbers", vs.QUESTION, "<i>b</i>; c",
                     "0.333 ~ one <over> a = 0.3333", "a = 3"],
                    ["<script>", "id", "", "'=cmd|calc", "",
                     "the id cell holds '=cmd|calc', the id of =cmd|calc"]]
    page = (tmp_path / "similarity.html").read_text(encoding="utf-8")
    assert "<script" not in page and "<i>" not in page and "<over>" not in page
    assert "&lt;i&gt;b&lt;/i&gt;, c" in page and "one &lt;over&gt; a = 0.3333" in page


FAKE_BAYES = '''
def variant_numbers(question, params):
    a, b = params["prior"]
    return {"last row + 0.5": params["start"] + params["block"] + 0.5,
            "a / (a + b + block)": a / (a + b + params["block"])}
'''


def test_the_command_flags_a_copied_interpretation(tmp_path):
    """`find_similar` on a copy of the bayes assignment whose instructor reference computes,
    by hand-checkable formulas, start + block + 0.5 and a / (a + b + block): the student who
    writes another student's two numbers (rounded) is flagged, naming them; a notebook typing
    a third student's id is flagged too; the honest ones are not."""
    from mlcourse_utils.grading import variants
    from mlcourse_utils.grading.similarity.pairs import find_similar

    name, gid = "bayes", "interpretation_breast_cancer_posterior"
    course = tmp_path / "course"
    for folder in ("solutions", "exercises"):
        (course / folder / name).mkdir(parents=True)
        (course / folder / name / f"{name}.ipynb").write_bytes(
            (sup.ROOT / folder / name / f"{name}.ipynb").read_bytes())
    (course / "nbgrader_config.py").write_text("")
    (course / "solutions" / name / "instructor_reference.py").write_text(FAKE_BAYES)

    def numbers_of(sid):
        p = variants.variant(name, sid).question(gid)
        a, b = p["prior"]
        return p["start"] + p["block"] + 0.5, a / (a + b + p["block"])

    ids = [f"s{n}" for n in range(1, 400)]
    honest = ids[0]
    copier = next(s for s in ids[1:] if all(x != y for x, y in zip(
        numbers_of(s), numbers_of(honest), strict=True)))
    third = next(s for s in ids if s not in (honest, copier))
    end, ratio = numbers_of(honest)
    own_end, own_ratio = numbers_of(copier)
    subs = tmp_path / "subs"
    for student, typed, text in [
            (honest, honest, f"rows up to {end}, ratio {ratio:.4f}"),
            (copier, copier, f"rows up to {end:.1f}, ratio {round(ratio, 3)}"),
            (third, copier, f"rows up to {numbers_of(third)[0]}")]:
        nb = sup.release_notebook(name)
        for cell in nb["cells"]:
            if cell.get("metadata", {}).get("mlcourse", {}).get("role") == "student_id":
                cell["source"] = f'STUDENT_ID = "{typed}"'
            if sup.grade_id(cell) == gid:
                cell["source"] = text
        sup.write_submission(subs, student, name, nb)
    report = find_similar(name, subs, root=course)
    assert report.variant_notes == []
    assert [(f.student, f.kind, f.others) for f in report.variant_flags] == [
        (copier, "numbers", [honest]), (third, "id", [copier])]
    assert [q[0] for q in report.variant_flags[0].quoted] == [f"{end:.1f}", str(round(ratio, 3))]
    assert own_end != end and own_ratio != ratio
