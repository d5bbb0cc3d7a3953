"""information_theory, section 11 (MDL on the diabetes data): the per-student variants.

``variant_numbers`` of solutions/information_theory/instructor_reference.py gives the manual-
grading page each variant's model numbers. They are checked against the model answer's text (the
default variant), against code lengths computed here from the formula with numpy and scipy (two
other variants), for variety across the variants, and against the release, which must not
print them.
"""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
from scipy.stats import norm

import assignment_support as sup
from mlcourse_utils.grading.variants import QUESTIONS, variant

QUESTION = QUESTIONS["information_theory"]["interpretation_mdl"]


@pytest.fixture(scope="module")
def iref():
    return sup.instructor_reference("information_theory")


def _bits_by_hand(x, y, degree, precision=0.01):
    """(k/2) log2 N + sum_i -log2(precision N(y_i | f(x_i), sigma2)), k = degree + 2, with the
    least-squares polynomial on a standardised x (numpy's lstsq) and sigma2 = RSS / N."""
    z = (x - x.mean()) / x.std()
    A = np.vander(z, degree + 1)
    f = A @ np.linalg.lstsq(A, y, rcond=None)[0]
    sigma2 = np.mean((y - f) ** 2)
    data = -np.sum(np.log2(precision) + norm.logpdf(y, f, np.sqrt(sigma2)) / np.log(2))
    return (degree + 2) / 2 * np.log2(len(y)) + data


def test_the_default_variant_is_the_model_answer(iref):
    """The default variant (s5, 40 patients) gives the model answer's numbers: a line for bmi
    in both cases, a cubic for s5 with all patients and a line with 40; the cubic beats the
    line (the runner-up) by about 2.7 bits, odds 2^2.74 about 6.7; the text says so."""
    V = variant("information_theory", "")
    params = V.question("interpretation_mdl")
    assert params == {"feature": "s5", "few": 40}
    numbers = iref.variant_numbers("interpretation_mdl", params)
    assert 4 <= len(numbers) <= 10
    assert [numbers[f"degree chosen, {n}, {w}"] for n in ("bmi", "s5")
            for w in ("all 442 patients", "first 40 patients")] == [1, 1, 3, 1]
    margin = numbers["margin over the runner-up (bits), s5, all 442 patients"]
    assert round(margin, 1) == 2.7 and numbers["runner-up degree, s5, all 442 patients"] == 1
    assert numbers["posterior odds chosen : runner-up, s5, all 442 patients"] == 6.7
    solution = sup.load(sup.ROOT / "solutions" / "information_theory" / "information_theory.ipynb")
    answer = sup.cell_by_id(solution, "interpretation-mdl")
    for text in ("a line (degree 1) for `bmi` and a cubic (degree 3)",
                 "with the first 40 patients it chooses a line for both",
                 "runner-up is the line, which the cubic beats by about 2.7 bits",
                 r"$2^{2.74} \approx 6.7$"):
        assert text in answer


@pytest.mark.parametrize("feature, few", [("s1", 30), ("age", 80)])
def test_other_variants_match_the_formula(iref, feature, few):
    """Two other variants: the degrees and margins equal those of the two-part code computed
    here from its formula (numpy's least squares, scipy's normal density)."""
    from sklearn.datasets import load_diabetes

    data = load_diabetes(scaled=False)
    numbers = iref.variant_numbers("interpretation_mdl", {"feature": feature, "few": few})
    for name, n in itertools.product(("bmi", feature), (442, few)):
        x = data.data[:n, data.feature_names.index(name)]
        bits = np.array([_bits_by_hand(x, data.target[:n], d) for d in range(7)])
        order = np.argsort(bits)
        who = "all 442 patients" if n == 442 else f"first {n} patients"
        assert numbers[f"degree chosen, {name}, {who}"] == order[0]
        assert numbers[f"margin over the runner-up (bits), {name}, {who}"] == pytest.approx(
            bits[order[1]] - bits[order[0]], abs=0.006)
        if n == 442 and name == feature:
            assert numbers[f"runner-up degree, {name}, {who}"] == order[1]
            odds = numbers[f"posterior odds chosen : runner-up, {name}, {who}"]
            assert odds == pytest.approx(2.0 ** (bits[order[1]] - bits[order[0]]), abs=0.06)


def test_the_question_varies(iref):
    """At least 12 variants, each with its own numbers; the feature's degree changes between
    all patients and the few in every variant (so (b) always has the student's own example),
    and the margin of (a) takes a different value for every feature."""
    assert QUESTION.count >= 12
    all_numbers = [iref.variant_numbers("interpretation_mdl",
                                        dict(zip(QUESTION.params, values, strict=True)))
                   for values in itertools.product(*QUESTION.params.values())]
    assert len({tuple(n.values()) for n in all_numbers}) == QUESTION.count
    margins = set()
    for values in itertools.product(*QUESTION.params.values()):
        feature, few = values
        numbers = iref.variant_numbers("interpretation_mdl", {"feature": feature, "few": few})
        assert (numbers[f"degree chosen, {feature}, all 442 patients"]
                != numbers[f"degree chosen, {feature}, first {few} patients"])
        margins.add(numbers[f"margin over the runner-up (bits), {feature}, all 442 patients"])
    assert len(margins) == len(QUESTION.params["feature"])


def test_variant_numbers_refuses_other_questions(iref):
    """(How fast it is, is no test's business: the manual page computes it once per variant.)"""
    with pytest.raises(ValueError, match="interpretation_mdl"):
        iref.variant_numbers("interpretation_kl", {})


def test_the_release_reads_the_variant_and_prints_no_model_number():
    """The student edition's question uses V and prints none of the model answer's numbers or
    its rubric; the table cell starts with print(V)."""
    release = sup.release_notebook("information_theory")
    text = (sup.cell_by_id(release, "md-interpretation")
            + sup.cell_by_id(release, "md-interpretation-questions"))
    assert 'V["feature"]' in text and 'V["few"]' in text
    assert sup.cell_by_id(release, "interpretation-mdl-table").startswith("print(V)")
    whole = json.dumps(release, ensure_ascii=False)
    for number in ("2.7 bits", "2.74", "6.7", "2900", "4800", "Rubric", "Model answer",
                   "Variants."):
        assert number not in whole
