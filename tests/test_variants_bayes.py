"""bayes, section 10, varies per student: the prior and the small sample of tumours (issue 39).

``variant_numbers`` of ``solutions/bayes/instructor_reference.py`` gives the model answer's
numbers for a student's prior Beta(a, b) and block (the ``block`` tumours from row ``start``).
They are checked against the numbers the model answer states (the default), against closed
forms and scipy (two other variants), against what the question's own code prints, and for
every variant against the claims of the rubric; the release notebook prints none of them.
"""

from __future__ import annotations

import contextlib
import io
import re

import pytest
from scipy import integrate, stats

import assignment_support as sup
from mlcourse_utils.grading.notebook import cell_source
from mlcourse_utils.grading.variants import QUESTIONS, variant

NAME = "bayes"
QUESTION = "interpretation_breast_cancer_posterior"
PARAMS = QUESTIONS[NAME][QUESTION].params
ALL = sup.every_variant_params(QUESTIONS[NAME][QUESTION])


@pytest.fixture(scope="module")
def reference():
    return sup.instructor_reference(NAME)


@pytest.fixture(scope="module")
def malignant():
    from sklearn.datasets import load_breast_cancer

    return load_breast_cancer().target == 0  # 0 is malignant in scikit-learn's coding


@pytest.fixture(scope="module")
def every_variant(reference):
    return [(p, reference.variant_numbers(QUESTION, p)) for p in ALL]


def _cell(name, cell_id):
    return sup.cell_by_id(sup.load(sup.ROOT / name / NAME / f"{NAME}.ipynb"), cell_id)


def _students(count):
    """The first ``count`` course ids s0001, ... with distinct variants, none the default."""
    found, seen = [], set()
    for k in range(1, 1000):
        V = variant(NAME, f"s{k:04d}")
        key = repr(V.question(QUESTION))
        if not V.is_default and key not in seen and V["start"] != 0 and V["prior"] != (1, 1):
            found.append(V)
            seen.add(key)
        if len(found) == count:
            return found
    raise AssertionError("too few ids with a variant other than the default")


def test_the_question_has_enough_variants():
    """48 variants; the default (first choices) is the model answer's: Beta(1, 1), the 30
    tumours from row 0; every block lies inside the 569 rows."""
    assert QUESTIONS[NAME][QUESTION].count == len(ALL) == 48
    assert variant(NAME, "").question(QUESTION) == {"prior": (1, 1), "block": 30, "start": 0}
    assert all(p["start"] + p["block"] <= 569 for p in ALL)


def test_default_numbers_are_those_the_model_answer_states(reference):
    """The model answer: all 569 give a narrow interval around 0.37 (about 0.33 to 0.41); the
    first 30 (27 malignant) give a posterior mean 0.875 and an interval about 0.74 to 0.96, far
    above (it excludes the file's fraction)."""
    answer = _cell("solutions", "interpretation-breast-cancer-posterior")
    for quoted in ("around 0.37", "about 0.33 to 0.41", "27 malignant", "posterior mean 0.875",
                   "about 0.74 to 0.96"):
        assert quoted in answer
    got = reference.variant_numbers(QUESTION, {"prior": (1, 1), "block": 30, "start": 0})
    assert 4 <= len(got) <= 10
    assert round(got["all 569: posterior mean"], 2) == 0.37
    assert round(got["all 569: 95% interval, lower"], 2) == 0.33
    assert round(got["all 569: 95% interval, upper"], 2) == 0.41
    assert got["block: malignant tumours"] == 27
    assert round(got["block: posterior mean"], 3) == 0.875
    assert round(got["block: 95% interval, lower"], 2) == 0.74
    assert round(got["block: 95% interval, upper"], 2) == 0.96
    assert got["block against the whole file"].startswith("above")


def _equal_tailed(a, b):
    """The 2.5 % and 97.5 % points of Beta(a, b) by integrating its density (scipy.integrate)
    and root finding, not by scipy's ppf."""
    density = stats.beta(a, b).pdf

    def point(mass):
        def cdf(x):
            return integrate.quad(density, 0, x, epsabs=1e-13, epsrel=1e-12)[0] - mass
        from scipy.optimize import brentq
        return brentq(cdf, 1e-9, 1 - 1e-9, xtol=1e-13)

    return point(0.025), point(0.975)


def test_other_variants_agree_with_closed_forms(reference, malignant):
    """For two students with another prior and block: the count of malignant rows start to
    start + block - 1, the posterior mean (a + k) / (a + b + n) and the equal-tailed interval
    found by integrating the Beta density; for all 569 likewise (212 malignant)."""
    assert malignant.sum() == 212
    for V in _students(2):
        (a, b), start, block = V["prior"], V["start"], V["block"]
        got = reference.variant_numbers(QUESTION, V.question(QUESTION))
        k = sum(bool(malignant[i]) for i in range(start, start + block))
        assert got["block: malignant tumours"] == k
        assert got["block: malignant fraction"] == pytest.approx(k / block, rel=1e-12)
        assert got["block: posterior mean"] == pytest.approx((a + k) / (a + b + block), rel=1e-12)
        lo, hi = _equal_tailed(a + k, b + block - k)
        assert got["block: 95% interval, lower"] == pytest.approx(lo, rel=1e-8)
        assert got["block: 95% interval, upper"] == pytest.approx(hi, rel=1e-8)
        assert got["all 569: posterior mean"] == pytest.approx((a + 212) / (a + b + 569),
                                                               rel=1e-12)
        lo, hi = _equal_tailed(a + 212, b + 357)
        assert got["all 569: 95% interval, lower"] == pytest.approx(lo, rel=1e-8)
        assert got["all 569: 95% interval, upper"] == pytest.approx(hi, rel=1e-8)


def test_the_question_code_prints_the_variant_numbers(reference):
    """The code the question gives, run with a student's V, prints that student's variant and,
    at the precision it prints them, the numbers variant_numbers gives for it."""
    code = re.search(r"```python\n(.*?)```", _cell("solutions", "md-interpretation"),
                     re.S).group(1)
    for V in [variant(NAME, ""), *_students(3)]:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, "<question>", "exec"), {"V": V})
        text = out.getvalue()
        assert text.startswith(str(V))
        got = reference.variant_numbers(QUESTION, V.question(QUESTION))
        start, block = V["start"], V["block"]
        assert (f"all tumours : 212 of 569 malignant, posterior mean "
                f"{got['all 569: posterior mean']:.3f}, 95% interval "
                f"[{got['all 569: 95% interval, lower']:.3f}, "
                f"{got['all 569: 95% interval, upper']:.3f}]") in text
        label = f"rows {start}-{start + block - 1}"
        assert (f"{label:12s}: {got['block: malignant tumours']} of {block} "
                f"malignant, posterior mean {got['block: posterior mean']:.3f}, 95% interval "
                f"[{got['block: 95% interval, lower']:.3f}, "
                f"{got['block: 95% interval, upper']:.3f}]") in text


def test_the_numbers_really_vary(every_variant):
    """Across the 48 variants the block's posterior mean and interval take many values."""
    for label in ("block: posterior mean", "block: 95% interval, lower"):
        values = {round(n[label], 3) for _, n in every_variant}
        assert len(values) >= 30, (label, values)
    assert len({n["block: malignant tumours"] for _, n in every_variant}) >= 8


def test_the_rubric_holds_for_every_variant(every_variant, malignant):
    """What the model answer's note and the rubric say of the variants: the whole file gives
    a mean of 0.372 to 0.375 and an interval about 0.33 to 0.41 for every prior; the block's
    interval is 2.3 to 4.7 times as wide; blocks from row 0 lie far above the file's fraction
    212/569 (27 of 30, 19 of 20, 36 of 40 malignant), blocks from row 150 (fractions 0.30 to
    0.35) contain it, blocks from rows 300 and 450 have fractions 0.15 to 0.28 and some
    intervals exclude it; the words of "block against the whole file" say which; the file's
    first 50 rows are about 0.9 malignant, its rows from 300 on about 0.25."""
    share = 212 / 569
    assert round(malignant[:50].mean(), 1) == 0.9 and round(malignant[300:].mean(), 2) == 0.25
    excluded = set()
    for p, n in every_variant:
        assert 0.372 <= round(n["all 569: posterior mean"], 3) <= 0.375
        assert 0.33 <= round(n["all 569: 95% interval, lower"], 2) <= \
            round(n["all 569: 95% interval, upper"], 2) <= 0.42
        ratio = ((n["block: 95% interval, upper"] - n["block: 95% interval, lower"])
                 / (n["all 569: 95% interval, upper"] - n["all 569: 95% interval, lower"]))
        assert 2.3 <= round(ratio, 1) <= 4.7, p
        lo, hi, fraction = (n["block: 95% interval, lower"], n["block: 95% interval, upper"],
                            n["block: malignant fraction"])
        words = n["block against the whole file"]
        if p["start"] == 0:
            assert lo > share and words.startswith("above"), p
            assert n["block: malignant tumours"] == {30: 27, 20: 19, 40: 36}[p["block"]]
        elif p["start"] == 150:
            assert lo <= share <= hi and "contains" in words and 0.30 <= fraction <= 0.35, p
        else:
            assert 0.15 <= fraction <= 0.28 and hi >= lo, p
            assert words.startswith("below") == (hi < share), p
            if hi < share:
                excluded.add(p["start"])
    assert excluded == {300, 450}


def test_the_release_prints_none_of_the_model_numbers():
    """The student edition holds the question's code (print(V), the prior, start and block from
    V) but neither the model answer, nor the rubric, nor the default's numbers at the precision
    the answer quotes."""
    nb = sup.release_notebook(NAME)
    text = "\n".join(cell_source(c) for c in nb["cells"])
    question = _cell("exercises", "md-interpretation")
    words = " ".join(question.split())
    for code in ("print(V)", 'V["prior"]', 'V["start"]', 'V["block"]', "stats.beta(a + k"):
        assert code in question
    assert "your course id" in words and "teaching assistants mark your answer" in words
    for word in ("Model answer", "Rubric", "instructor version only", "Numbers that vary"):
        assert word not in text
    answer = _cell("solutions", "interpretation-breast-cancer-posterior")
    quoted = (r"\b0\.37\b", r"\b0\.33\b", r"\b0\.41\b", r"\b27 malignant", r"\b0\.875\b",
              r"\b0\.74\b", r"\b0\.96\b")
    for number in quoted:
        assert re.search(number, answer), number  # what the model answer quotes
    for number in (*quoted, r"\b0\.373\b", r"\b0\.742\b", r"\b0\.964\b", r"\b27 of 30\b"):
        assert not re.search(number, text), number
