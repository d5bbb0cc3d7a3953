"""A student's variant (grading/variants.py): deterministic, from the course id, no secret.

The expected choices are computed here from the formula the module documents (SHA-256 of
"mlcourse variant", the assignment, the question, the parameter and the normalised id, its
first 8 bytes little-endian modulo the number of choices), not by calling the module.
"""

from __future__ import annotations

import ast
import hashlib
import math
import sys
from pathlib import Path

import pytest

from mlcourse_utils.grading import variants
from mlcourse_utils.grading.variants import QUESTIONS, parse_id_cell, variant, variants_enabled


def _choice(assignment, question, name, sid):
    choices = QUESTIONS[assignment][question].params[name]
    digest = hashlib.sha256(
        f"mlcourse variant\0{assignment}\0{question}\0{name}\0{sid}".encode()).digest()
    return choices[int.from_bytes(digest[:8], "little") % len(choices)]


def test_every_assignment_has_a_question_that_varies():
    from mlcourse_utils.course import ASSIGNMENTS

    assert set(QUESTIONS) == set(ASSIGNMENTS)
    for questions in QUESTIONS.values():
        assert questions and all(q.count >= 2 for q in questions.values())


@pytest.mark.parametrize("assignment", sorted(QUESTIONS))
def test_a_course_id_picks_each_parameter_by_its_hash(assignment):
    for sid in ("s1234567", "u42", "anna.berg@uni.example"):
        v = variant(assignment, sid)
        assert v.problem is None and v.student_id == sid
        for q, question in QUESTIONS[assignment].items():
            for name in question.params:
                assert v.question(q)[name] == _choice(assignment, q, name, sid)
                assert v[name] == _choice(assignment, q, name, sid)


def test_the_id_is_normalised_before_it_decides():
    """Outer spaces and case do not make another student: "S123 " is "s123"."""
    assert variant("bayes", " S123 ").values == variant("bayes", "s123").values
    assert variant("bayes", " S123 ").student_id == "s123"


@pytest.mark.parametrize("typed, problem", [
    ("", "is empty"), ("   ", "is empty"), ("a b", "characters a course id does not have"),
    ('s1"', "characters"), ("x" * 65, "at most 64"), (123, "text in quotes")])
def test_an_empty_or_malformed_id_gets_the_default_variant_and_says_why(typed, problem):
    v = variant("bayes", typed)
    assert problem in v.problem
    assert v.is_default and v.student_id == ""
    first = {n: c[0] for q in QUESTIONS["bayes"].values() for n, c in q.params.items()}
    assert dict(v) == first
    assert "enter your course id" in str(v)


def test_none_means_variants_off_without_a_complaint():
    v = variant("mle", None)
    assert v.problem is None and not v.enabled and v.is_default
    assert "one version for everyone" in str(v)
    assert variant("mle", "s1", enabled=False).values == v.values


def test_ids_spread_over_the_choices():
    """200 ids reach every choice of every parameter: with a fair hash a choice of probability
    1/31 (the most choices a parameter has) is missed by 200 ids with probability
    (30/31)^200 < 0.002; the ids are fixed, so the test is deterministic."""
    for assignment, questions in QUESTIONS.items():
        seen = {(q, n): set() for q, question in questions.items() for n in question.params}
        for i in range(200):
            v = variant(assignment, f"s{1000 + i}")
            for q, params in v.values.items():
                for n, value in params.items():
                    seen[q, n].add(value)
        for (q, n), values in seen.items():
            assert len(values) == len(questions[q].params[n]), (assignment, q, n)


def test_count_is_the_product_of_the_choices():
    q = variants.Question("1", "{a}{b}", a=(1, 2, 3), b=("x", "y"))
    assert q.count == 6
    with pytest.raises(ValueError, match="two choices"):
        variants.Question("1", "{a}", a=(1,))
    assert QUESTIONS["bayes"]["interpretation_breast_cancer_posterior"].count == math.prod(
        len(c) for c in QUESTIONS["bayes"]["interpretation_breast_cancer_posterior"]
        .params.values())


def test_rows_is_a_fixed_subset_of_the_asked_size():
    v = variant("mle", "s1001")
    rows = v.rows(442, 300)
    if v["sample"] == 0:
        assert rows == list(range(442))
    else:
        assert len(rows) == 300 == len(set(rows)) and rows == sorted(rows)
        assert 0 <= rows[0] and rows[-1] < 442
    assert variant("mle", "s1001").rows(442, 300) == rows  # the same every time
    assert variant("mle", "").rows(442, 300) == list(range(442))  # sample 0: every row
    subsets = {tuple(variant("mle", f"s{i}").rows(442, 300)) for i in range(40)}
    assert len(subsets) >= 10
    with pytest.raises(ValueError, match="size"):
        v.rows(10, 11)


def test_rows_follow_the_documented_hash():
    """The subset is the ``size`` rows with the smallest SHA-256 of (assignment, "sample",
    seed, row), sorted: recomputed here from that rule."""
    v = next(variant("mle", f"s{i}") for i in range(100) if variant("mle", f"s{i}")["sample"])
    key = f"mle\0sample\0{v['sample']}\0".encode()
    expected = sorted(sorted(range(50), key=lambda i: hashlib.sha256(key + str(i).encode())
                             .digest())[:7])
    assert v.rows(50, 7) == expected


def test_errors_name_what_is_wrong():
    with pytest.raises(ValueError, match="'nope' has no variants"):
        variant("nope", "s1")
    with pytest.raises(TypeError, match="assignment"):
        variant(3, "s1")
    with pytest.raises(KeyError, match="prior"):
        variant("bayes", "s1")["missing"]


@pytest.mark.parametrize("source, expected", [
    ('STUDENT_ID = "s123"', ("s123", None)),
    ('STUDENT_ID = " S123 "  # mine', ("s123", None)),
    (variants.ID_LINE, (None, "STUDENT_ID is empty")),
])
def test_parse_id_cell_reads_a_plain_assignment(source, expected):
    assert parse_id_cell(source) == expected


@pytest.mark.parametrize("source, problem", [
    ("STUDENT_ID = 123", "in quotes"), ("STUDENT_ID = f'{x}'", "in quotes"),
    ('STUDENT_ID = "a"\nprint(1)', "one line"), ("STUDENT_ID = (", "not valid Python"),
    ('OTHER = "s1"', "one line"), ('STUDENT_ID = "a;b"', "characters")])
def test_parse_id_cell_names_a_malformed_cell(source, problem):
    sid, why = parse_id_cell(source)
    assert sid is None and problem in why


def test_variants_enabled_is_one_setting():
    assert variants_enabled({}) is True
    assert variants_enabled({"mlcourse": {"variants": False}}) is False
    with pytest.raises(ValueError, match="metadata.mlcourse.variants of x.ipynb"):
        variants_enabled({"mlcourse": {"variants": "no"}}, "x.ipynb")


def test_the_module_imports_only_the_standard_library():
    """The grader defines it inside the sandbox from its text, where the course package and
    third-party packages are not to be relied on."""
    tree = ast.parse(Path(variants.__file__).read_text(encoding="utf-8"))
    modules = {alias.name.partition(".")[0] for node in ast.walk(tree)
               if isinstance(node, ast.Import) for alias in node.names}
    modules |= {node.module.partition(".")[0] for node in ast.walk(tree)
                if isinstance(node, ast.ImportFrom) and not node.level}
    assert modules and modules <= set(sys.stdlib_module_names) | {"__future__"}
    assert not any(isinstance(node, ast.ImportFrom) and node.level for node in ast.walk(tree))
