"""naive_bayes, section 9: each student's variant of the over-confidence question.

The parameters (``split``: train_test_split's random_state; ``pair``: the two features whose
within-benign correlation is printed) come from ``variant("naive_bayes", id)``; the model
answer's numbers per variant from ``variant_numbers`` in solutions/naive_bayes/
instructor_reference.py. Expected values: the model answer's text (default variant), Gaussian
naive Bayes written out here with numpy and scipy (two other variants), and the release's own
question code run for a student's variant.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import re

import numpy as np
import pytest
from scipy import stats
from scipy.special import logsumexp
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import train_test_split

import assignment_support as sup
from mlcourse_utils.grading import variant
from mlcourse_utils.grading.variants import QUESTIONS

NAME, QUESTION = "naive_bayes", "interpretation_nb_overconfidence"
LABELS = {
    "accuracy": "test accuracy (171 tumours)",
    "share": "share of test tumours with a posterior above 0.99 (%)",
    "confident": "test tumours with a posterior above 0.99",
    "accuracy_confident": "accuracy among them",
    "wrong": "wrong among them",
    "correlation": "correlation of the two features within benign tumours (training set)",
}


def _reference():
    return sup.instructor_reference(NAME)


REFERENCE = _reference()


def numbers(**params):
    return REFERENCE.variant_numbers(QUESTION, params)


def by_hand(split, pair):
    """Gaussian naive Bayes written out: ML variances plus scikit-learn's var_smoothing (1e-9
    times the largest feature variance), log posteriors normalised by logsumexp; the
    correlation by scipy.stats.pearsonr. The split is the parameter's definition."""
    data = load_breast_cancer()
    X_tr, X_te, y_tr, y_te = train_test_split(data.data, data.target, test_size=0.3,
                                              random_state=split, stratify=data.target)
    epsilon = 1e-9 * X_tr.var(axis=0).max()
    log_joint = []
    for c in (0, 1):
        Xc = X_tr[y_tr == c]
        mean, var = Xc.mean(axis=0), Xc.var(axis=0) + epsilon
        log_joint.append(np.log(len(Xc) / len(X_tr))
                         + stats.norm.logpdf(X_te, mean, np.sqrt(var)).sum(axis=1))
    log_joint = np.column_stack(log_joint)
    posterior = np.exp(log_joint - logsumexp(log_joint, axis=1, keepdims=True))
    right = posterior.argmax(axis=1) == y_te
    confident = posterior.max(axis=1) > 0.99
    names = list(data.feature_names)
    benign = X_tr[y_tr == 1]
    r = stats.pearsonr(benign[:, names.index(pair[0])], benign[:, names.index(pair[1])])[0]
    return {"accuracy": right.mean(), "share": 100 * confident.mean(),
            "confident": int(confident.sum()), "accuracy_confident": right[confident].mean(),
            "wrong": int((~right[confident]).sum()), "correlation": r}


def test_the_choices_make_sensible_questions():
    """Every pair names two breast-cancer features; the default is the question's old one
    (random_state 0, mean radius and mean perimeter); there are at least 12 variants."""
    question = QUESTIONS[NAME][QUESTION]
    names = set(load_breast_cancer().feature_names)
    assert question.params["split"][0] == 0
    assert question.params["pair"][0] == ("mean radius", "mean perimeter")
    for a, b in question.params["pair"]:
        assert a in names and b in names and a != b
    assert len(set(question.params["pair"])) == len(question.params["pair"])
    assert question.count >= 12
    assert variant(NAME, "").question(QUESTION) == {"split": 0,
                                                    "pair": ("mean radius", "mean perimeter")}


def test_default_variant_gives_the_model_answers_numbers():
    """The model answer's "about 0.92", "about 95 %" (163 of 171), "only 0.945" (9 wrong) and
    the rubric's 0.997 (and its 0.924, 95.3 %) are the default variant's numbers at the text's
    rounding."""
    got = numbers(**variant(NAME, "").question(QUESTION))
    assert list(got) == list(LABELS.values())
    solution = sup.load(sup.ROOT / "solutions" / NAME / f"{NAME}.ipynb")
    text = sup.cell_by_id(solution, "interpretation-nb-overconfidence")
    flat = " ".join(text.split())
    assert "about 0.92 on the test set" in flat and round(got[LABELS["accuracy"]], 2) == 0.92
    assert "about 95 % of the test tumours" in flat and round(got[LABELS["share"]]) == 95
    assert "(163 of 171)" in flat and got[LABELS["confident"]] == 163
    assert "only 0.945 (9 of them are wrong" in flat and got[LABELS["wrong"]] == 9
    assert "0.997" in flat and got[LABELS["correlation"]] == 0.997
    assert "0.924, 95.3 %, 0.945 and 0.997" in flat
    assert (got[LABELS["accuracy"]], got[LABELS["share"]], got[LABELS["accuracy_confident"]]) \
        == (0.924, 95.3, 0.945)


@pytest.mark.parametrize("split, pair", [(7, ("mean texture", "worst texture")),
                                         (10, ("radius error", "perimeter error"))])
def test_other_variants_match_naive_bayes_by_hand(split, pair):
    """Two variants other than the default: every number equals the computation by hand at
    the precision variant_numbers rounds to (3 decimals, 1 for the percentage)."""
    got = numbers(split=split, pair=pair)
    want = by_hand(split, pair)
    for key, label in LABELS.items():
        digits = 1 if key == "share" else 3
        assert got[label] == pytest.approx(round(float(want[key]), digits), abs=1e-12), label
    assert got[LABELS["wrong"]] > 0


def test_release_code_prints_the_students_own_numbers():
    """The question's code in the release notebook, run with a student's variant, prints that
    variant in words and the numbers variant_numbers gives for it (not the default's)."""
    notebook = sup.release_notebook(NAME)
    question = sup.cell_by_id(notebook, "md-interpretation")
    code = re.search(r"```python\n(.*?)```", question, re.S).group(1)
    V = next(v for v in (variant(NAME, f"s{k}") for k in range(100))
             if v["split"] != 0 and "mean radius" not in v["pair"])
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "<question>", "exec"), {"V": V})
    printed = out.getvalue()
    want = numbers(**V.question(QUESTION))
    a, b = V["pair"]
    assert printed.startswith(str(V))
    assert f"test accuracy {want[LABELS['accuracy']]:.3f}" in printed
    assert f"above 0.99: {want[LABELS['share']]:.1f}%" in printed
    assert f"accuracy among them {want[LABELS['accuracy_confident']]:.3f}" in printed
    assert f"correlation of {a} and {b} within benign tumours: " \
           f"{want[LABELS['correlation']]:.3f}" in printed


def test_the_question_varies_and_its_conclusions_hold_for_every_variant():
    """Across the 80 variants the numbers a student quotes take many values, and what the
    rubric says holds for each: over-confident (accuracy among the tumours above 0.99 between
    0.933 and 0.975, 4 to 11 of 160 to 167 wrong, more than 1 % of them), and the pair strongly
    correlated (0.845 to 0.93 for the three weaker pairs, 0.955 to 0.997 for the others). No
    correlation rounds to 0.99, the question's threshold (similarity would take an answer's
    "0.99" for that variant's correlation)."""
    question = QUESTIONS[NAME][QUESTION]
    seen = {key: set() for key in LABELS}
    for split, pair in itertools.product(*question.params.values()):
        got = numbers(split=split, pair=pair)
        for key, label in LABELS.items():
            seen[key].add(got[label])
        assert 0.933 <= got[LABELS["accuracy_confident"]] <= 0.975
        assert 4 <= got[LABELS["wrong"]] <= 11 and 160 <= got[LABELS["confident"]] <= 167
        assert got[LABELS["wrong"]] > 0.01 * got[LABELS["confident"]]
        assert got[LABELS["accuracy"]] >= 0.9
        weak = pair in (("radius error", "perimeter error"), ("mean texture", "worst texture"),
                        ("mean concavity", "worst concavity"))
        low, high = (0.845, 0.93) if weak else (0.955, 0.997)
        assert not 0.985 <= got[LABELS["correlation"]] < 0.995  # would read as the 0.99
        assert low <= got[LABELS["correlation"]] <= high, (split, pair)
    assert len(seen["correlation"]) >= 30
    assert min(len(seen[k]) for k in ("accuracy", "share", "accuracy_confident")) >= 5


def test_the_release_prints_none_of_the_model_answers_numbers():
    """The student edition holds no "Model answer", no rubric and none of the default
    variant's numbers at the precision the model answer quotes (0.92, 95 %, 0.95, 0.997, and
    the rubric's 0.924, 95.3, 0.945)."""
    text = json.dumps(sup.release_notebook(NAME), ensure_ascii=False)
    assert "Model answer" not in text and "Rubric" not in text
    for number in ("0.92", "95 %", "95%", "0.95", "0.997", "0.924", "95.3", "0.945"):
        assert number not in text, number


def test_an_unknown_question_is_refused():
    with pytest.raises(ValueError, match="interpretation_nb_overconfidence"):
        REFERENCE.variant_numbers("interpretation_iris_covariance", {})
