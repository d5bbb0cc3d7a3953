"""mle, section 10, varies per student: the patients the Gaussian is fitted to (issue 39).

``variant_numbers`` of ``solutions/mle/instructor_reference.py`` gives the model answer's numbers
for a student's sample (all 442 patients for sample 0, otherwise the 300 of ``V.rows(442, 300)``).
They are checked against the numbers the model answer states (the default), against scipy on
the same rows and against what the question's own code prints (two other samples), and for every
sample against the claims of the rubric; the release notebook prints none of them.
"""

from __future__ import annotations

import contextlib
import io
import re

import numpy as np
import pytest
from scipy import stats

import assignment_support as sup
from mlcourse_utils.grading.notebook import cell_source
from mlcourse_utils.grading.variants import QUESTIONS, variant

NAME = "mle"
QUESTION = "interpretation_diabetes_gaussian"
SAMPLES = QUESTIONS[NAME][QUESTION].params["sample"]


@pytest.fixture(scope="module")
def reference():
    return sup.instructor_reference(NAME)


@pytest.fixture(scope="module")
def progression():
    from sklearn.datasets import load_diabetes

    return load_diabetes().target


@pytest.fixture(scope="module")
def every_sample(reference):
    return {s: reference.variant_numbers(QUESTION, {"sample": s}) for s in SAMPLES}


def _cell(name, cell_id):
    return sup.cell_by_id(sup.load(sup.ROOT / name / NAME / f"{NAME}.ipynb"), cell_id)


def _students(count):
    """The first ``count`` course ids s0001, s0002, ... whose sample is not 0 (all different)."""
    found, seen = [], set()
    for k in range(1, 1000):
        V = variant(NAME, f"s{k:04d}")
        if V["sample"] != 0 and V["sample"] not in seen:
            found.append(V)
            seen.add(V["sample"])
        if len(found) == count:
            return found
    raise AssertionError("too few ids with a sample other than 0")


def _question_code():
    text = _cell("solutions", "md-interpretation")
    return re.search(r"```python\n(.*?)```", text, re.S).group(1)


def test_the_question_has_enough_variants():
    """31 samples; the default (first) is 0, i.e. all 442 patients, as the model answer."""
    question = QUESTIONS[NAME][QUESTION]
    assert question.count == 31 and SAMPLES[0] == 0
    assert variant(NAME, "").question(QUESTION) == {"sample": 0}


def test_default_numbers_are_those_the_model_answer_states(reference):
    """The model answer (all 442 patients): mean about 152, sd about 77, about 60 % (59.5) within
    one sd and 97.5 % within two, skewness about 0.44, mean - 2 sd about -2, smallest 25."""
    got = reference.variant_numbers(QUESTION, {"sample": 0})
    answer = _cell("solutions", "interpretation-diabetes-gaussian")
    for quoted in ("about 152", "about 77", "about 60 %", "97.5 %", "about 0.44", "\\approx -2",
                   "smallest value is 25"):
        assert quoted in answer
    assert 4 <= len(got) <= 10
    assert got["patients N"] == 442
    assert round(got["mean"]) == 152 and round(got["standard deviation"]) == 77
    assert round(got["within 1 sd, % (Gaussian 68.3)"]) == 60
    assert round(got["within 1 sd, % (Gaussian 68.3)"], 1) == 59.5
    assert round(got["within 2 sd, % (Gaussian 95.4)"], 1) == 97.5
    assert round(got["skewness"], 2) == 0.44
    assert round(got["mean - 2 sd"]) == -2 and got["smallest value"] == 25


def test_other_samples_agree_with_scipy_on_the_same_rows(reference, progression):
    """For two students with other samples: their 300 rows (what their code's V.rows gives),
    the ML mean and sd of scipy.stats.norm.fit, scipy's biased skewness, and the fractions
    within one and two sd counted by hand."""
    for V in _students(2):
        rows = V.rows(442, 300)
        assert len(set(rows)) == 300 and 0 <= min(rows) and max(rows) < 442
        x = progression[rows]
        mu, sd = stats.norm.fit(x)
        got = reference.variant_numbers(QUESTION, V.question(QUESTION))
        assert got["patients N"] == 300
        np.testing.assert_allclose(got["mean"], mu, rtol=1e-12)
        np.testing.assert_allclose(got["standard deviation"], sd, rtol=1e-12)
        np.testing.assert_allclose(got["ML variance"], sd**2, rtol=1e-12)
        np.testing.assert_allclose(got["skewness"], stats.skew(x, bias=True), rtol=1e-10)
        inside1 = sum(1 for v in x if mu - sd <= v <= mu + sd)
        inside2 = sum(1 for v in x if mu - 2 * sd <= v <= mu + 2 * sd)
        np.testing.assert_allclose(got["within 1 sd, % (Gaussian 68.3)"], inside1 / 3, rtol=1e-12)
        np.testing.assert_allclose(got["within 2 sd, % (Gaussian 95.4)"], inside2 / 3, rtol=1e-12)
        assert got["smallest value"] == x.min()
        np.testing.assert_allclose(got["mean - 2 sd"], mu - 2 * sd, rtol=1e-12)


def test_the_question_code_prints_the_variant_numbers(reference):
    """The code the question gives, run with a student's V, prints that student's variant and
    the numbers variant_numbers gives for it (at the precision it prints them)."""
    code = _question_code()
    for V in [variant(NAME, ""), *_students(2)]:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, "<question>", "exec"), {"V": V})
        text = out.getvalue()
        assert text.startswith(str(V))
        got = reference.variant_numbers(QUESTION, V.question(QUESTION))
        assert (f"N = {got['patients N']}, mean {got['mean']:.1f}, ML variance "
                f"{got['ML variance']:.1f}, standard deviation {got['standard deviation']:.1f}"
                in text)
        assert f"within 1 sd: {got['within 1 sd, % (Gaussian 68.3)']:.1f}%" in text
        assert f"within 2 sd: {got['within 2 sd, % (Gaussian 95.4)']:.1f}%" in text
        assert f"skewness {got['skewness']:.2f}" in text
        assert f"smallest value {got['smallest value']:.0f}" in text
        assert f"mean - 2 sd = {got['mean - 2 sd']:.1f}" in text


def test_the_numbers_really_vary(every_sample):
    """Across the 31 samples the mean, sd and skewness take many different values."""
    for label, digits in (("mean", 1), ("standard deviation", 1), ("skewness", 2)):
        values = {round(n[label], digits) for n in every_sample.values()}
        assert len(values) >= 15, (label, values)


def test_the_rubric_holds_for_every_sample(every_sample):
    """The conclusions the rubric accepts hold for every sample: within one sd 58-62 % (below
    68 %), within two sd 97-99 % (above 95.4 %), skewness 0.36-0.56, mean - 2 sd between about
    -5 and +5 and below the smallest value (25 to 39), and the fitted Gaussian's mass below 0
    about 2 % (between 1.5 % and 3 %: the normal cdf at 0, by scipy)."""
    for sample, n in every_sample.items():
        assert 58 <= round(n["within 1 sd, % (Gaussian 68.3)"], 1) <= 62 < 68.3, sample
        assert 95.4 < 97 <= round(n["within 2 sd, % (Gaussian 95.4)"], 1) <= 99, sample
        assert 0.36 <= round(n["skewness"], 2) <= 0.56, sample
        assert -5 <= round(n["mean - 2 sd"]) <= 5 and n["mean - 2 sd"] < n["smallest value"], sample
        assert 25 <= n["smallest value"] <= 39, sample
        below_zero = stats.norm.cdf(0, n["mean"], n["standard deviation"])
        assert 0.015 < below_zero < 0.03, sample
    assert any(n["mean - 2 sd"] > 0 for n in every_sample.values())  # the rubric's case


def test_the_release_prints_none_of_the_model_numbers():
    """The student edition holds the question's code (with print(V) and V.rows) but neither the
    model answer, nor the rubric, nor the default's numbers at the precision the answer quotes."""
    nb = sup.release_notebook(NAME)
    text = "\n".join(cell_source(c) for c in nb["cells"])
    question = _cell("exercises", "md-interpretation")
    words = " ".join(question.split())
    assert "print(V)" in question and "V.rows(442, 300)" in question
    assert "your course id" in words and "teaching assistants mark your answer" in words
    for word in ("Model answer", "Rubric", "instructor version only", "Numbers that vary"):
        assert word not in text
    answer = _cell("solutions", "interpretation-diabetes-gaussian")
    quoted = (r"\b152\b", r"\b77\b", r"\b0\.44\b", r"\b97\.5\b", "\u2212 ?2\\b", r"about 60 %")
    for number in quoted:
        assert re.search(number, answer), number  # what the model answer quotes
    for number in (*quoted, r"\b59\.5\b", r"\b5929\b", r"\b5930\b", r"-1\.9\b"):
        assert not re.search(number, text), number
