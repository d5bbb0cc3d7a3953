"""ridge_lasso, section 10 (which diabetes features survive?): the per-student variants.

``variant_numbers`` of solutions/ridge_lasso/instructor_reference.py gives the manual-grading
page each variant's model numbers for (a). They are checked against the model answer's text
(the default variant), against scikit-learn's exact LASSO path (``lars_path``, LARS with the
LASSO modification) for other variants, for variety across the variants, and against the
release, which must not print them.
"""

from __future__ import annotations

import itertools
import json
import re

import numpy as np
import pytest

import assignment_support as sup
from mlcourse_utils.grading.variants import QUESTIONS, variant

QUESTION = QUESTIONS["ridge_lasso"]["interpretation_diabetes"]


@pytest.fixture(scope="module")
def iref():
    return sup.instructor_reference("ridge_lasso")


@pytest.fixture(scope="module")
def diabetes():
    from sklearn.datasets import load_diabetes

    data = load_diabetes()
    X = (data.data - data.data.mean(axis=0)) / data.data.std(axis=0)
    return X, data.target, list(data.feature_names)


def _entered(numbers):
    """[(feature, k)] of the three "to enter" entries, in order."""
    found = [re.fullmatch(r"(\w+) \(k = (\d+)\)", v) for k, v in numbers.items() if "to enter" in k]
    return [(m.group(1), int(m.group(2))) for m in found]


def _changes(numbers):
    """[(feature, before, after)] of the three "largest change" entries, in order."""
    found = [re.fullmatch(r"(\w+): ([-+][\d.]+) -> ([-+][\d.]+)", v)
             for k, v in numbers.items() if "change" in k]
    return [(m.group(1), float(m.group(2)), float(m.group(3))) for m in found]


def _exact(X, y, lam):
    """scikit-learn's exact LASSO path on the centred data: (entry knot per feature, in the
    order they first enter; the weights at lam, interpolated between the knots)."""
    from sklearn.linear_model import lars_path

    Xc, yc = X - X.mean(axis=0), y - y.mean()
    alphas, _, coefs = lars_path(Xc, yc, method="lasso")
    entry = {}
    for i in range(1, len(alphas)):
        for d in np.flatnonzero((coefs[:, i] != 0) & (coefs[:, i - 1] == 0)):
            entry.setdefault(int(d), alphas[i - 1])
    # Weights are linear in lambda between two knots (alphas decrease).
    j = np.searchsorted(-alphas, -lam)
    t = (alphas[j - 1] - lam) / (alphas[j - 1] - alphas[j])
    return entry, (1 - t) * coefs[:, j - 1] + t * coefs[:, j]


def test_the_default_variant_is_the_model_answer(iref):
    """The default variant (remove bmi, 100 penalties): lambda_max 43.6; s5, bp, s3 first become
    nonzero at the 2nd, 8th and 12th penalty; the largest changes are s2 (+17 -> +31), s1
    (-30 -> -44) and s5 (33 -> 43); s5, s4, bp are the most correlated with bmi (0.45, 0.41,
    0.40); the model answer's text says so."""
    params = variant("ridge_lasso", "").question("interpretation_diabetes")
    assert params == {"removed": "bmi", "grid": 100}
    numbers = iref.variant_numbers("interpretation_diabetes", params)
    assert 4 <= len(numbers) <= 10
    assert round(numbers["lambda_max without bmi"], 1) == 43.6
    assert _entered(numbers) == [("s5", 2), ("bp", 8), ("s3", 12)]
    changes = [(n, round(b), round(a)) for n, b, a in _changes(numbers)]
    assert changes == [("s2", 17, 31), ("s1", -30, -44), ("s5", 33, 43)]
    assert numbers["most correlated with bmi"] == "s5 +0.45, s4 +0.41, bp +0.40"
    answer = sup.cell_by_id(sup.load(sup.ROOT / "solutions" / "ridge_lasso" / "ridge_lasso.ipynb"),
                   "interpretation-diabetes")
    for text in (r"$\lambda_{\max} \approx 43.6$", "at the 2nd, 8th and 12th penalty",
                 r"about $-30 \to -44$", r"and $+17 \to +31$", "grows from about 33 to 43",
                 "`s5`\n(correlation 0.45 with `bmi`)", "`bp` (0.40)", "(0.41)"):
        assert text in answer, text


@pytest.mark.parametrize("removed, grid", [("s5", 80), ("s1", 120), ("bp", 60)])
def test_other_variants_match_the_exact_path(iref, diabetes, removed, grid):
    """Other variants: lambda_max, the first three features with the penalty where each first
    becomes nonzero (the first grid point below its knot), and the weight changes at
    lambda_max / 1000 equal those of scikit-learn's exact path."""
    X, y, names = diabetes
    numbers = iref.variant_numbers("interpretation_diabetes", {"removed": removed, "grid": grid})
    keep = [k for k, n in enumerate(names) if n != removed]
    Xr, kept = X[:, keep], [names[k] for k in keep]
    lam_max = np.abs((Xr - Xr.mean(axis=0)).T @ (y - y.mean())).max() / len(y)
    assert numbers[f"lambda_max without {removed}"] == pytest.approx(lam_max, abs=0.005)
    lams = np.geomspace(lam_max, lam_max / 1000, grid)
    entry, w = _exact(Xr, y, lam_max / 1000)
    expected = [(kept[d], int(np.sum(lams >= knot)) + 1)
                for d, knot in sorted(entry.items(), key=lambda item: -item[1])[:3]]
    assert _entered(numbers) == expected
    _, w_full = _exact(X, y, np.abs((X - X.mean(axis=0)).T @ (y - y.mean())).max() / len(y)
                       / 1000)
    change = {n: w[k] - w_full[names.index(n)] for k, n in enumerate(kept)}
    top = sorted(change, key=lambda n: -abs(change[n]))[:3]
    reported = _changes(numbers)
    assert [n for n, _, _ in reported] == top
    for n, before, after in reported:
        assert before == pytest.approx(w_full[names.index(n)], abs=0.051)
        assert after == pytest.approx(w[kept.index(n)], abs=0.051)


def test_the_question_varies(iref):
    """At least 12 variants, each with its own numbers: the penalties of (a) differ with the
    grid, and lambda_max, the entering features and the largest changes with the removed
    feature."""
    assert QUESTION.count >= 12
    all_numbers = {values: iref.variant_numbers("interpretation_diabetes",
                                                dict(zip(QUESTION.params, values, strict=True)))
                   for values in itertools.product(*QUESTION.params.values())}
    assert len({tuple(n.values()) for n in all_numbers.values()}) == QUESTION.count
    assert len({tuple(_entered(n)) for n in all_numbers.values()}) >= 12
    assert len({_changes(n)[0][0] for n in all_numbers.values()}) >= 4


def test_variant_numbers_refuses_other_questions_and_features(iref):
    """(How fast it is, is no test's business: the manual page computes it once per variant.)"""
    with pytest.raises(ValueError, match="interpretation_diabetes"):
        iref.variant_numbers("derivation_extensions", {})
    with pytest.raises(ValueError, match="removed"):
        iref.variant_numbers("interpretation_diabetes", {"removed": "weight", "grid": 100})


def test_the_release_reads_the_variant_and_prints_no_model_number():
    """The student edition's question uses V (starting with print(V)) and prints none of the
    model answer's numbers or its rubric."""
    release = sup.release_notebook("ridge_lasso")
    text = sup.cell_by_id(release, "md-interpretation")
    assert 'V["removed"]' in text and 'V["grid"]' in text and "print(V)" in text
    whole = json.dumps(release, ensure_ascii=False)
    for number in ("43.6", "45.2", "12th", "-44", "+31", "0.45", "Rubric", "Variants."):
        assert number not in whole, number
