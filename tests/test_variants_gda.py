"""gda, section 10: each student's variant of the iris covariance question.

The parameters (``features``: the columns of iris used; ``folds``: k of the stratified
cross-validation; ``shuffle``: the seed that shuffles the folds, 0 for the folds in the data's
order) come from ``variant("gda", id)``; the model answer's numbers per variant from
``variant_numbers`` in solutions/gda/instructor_reference.py. Expected values: the model answer's
text and the old question's ``cv=5`` (default variant), QDA, LDA and the diagonal model written
out here with numpy and scipy (two other variants), and the release's own question code run for
a student's variant.
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
from sklearn.datasets import load_iris
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis, QuadraticDiscriminantAnalysis
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.naive_bayes import GaussianNB

import assignment_support as sup
from mlcourse_utils.grading import variant
from mlcourse_utils.grading.variants import QUESTIONS

NAME, QUESTION = "gda", "interpretation_iris_covariance"
MODELS = ("QDA", "LDA", "diagonal (naive Bayes)")
SPECIES = ("setosa", "versicolor", "virginica")


def _reference():
    return sup.instructor_reference(NAME)


REFERENCE = _reference()


def numbers(**params):
    return REFERENCE.variant_numbers(QUESTION, params)


def accuracy(got, model):
    return got[f"{model} accuracy (mean of the folds)"]


def spread(got, model):
    return got[f"{model} spread (std of the folds)"]


def _predict(model, X_tr, y_tr, X_te):
    """The three classifiers written out, as scikit-learn estimates them: QDA with each class's
    covariance divided by N_c - 1; LDA with the pooled covariance (its scale does not matter:
    stratified folds of iris give every class the same prior); the diagonal model with ML
    variances plus 1e-9 times the largest feature variance. Priors are the class shares."""
    classes = np.unique(y_tr)
    scores = []
    pooled = sum(np.cov(X_tr[y_tr == c], rowvar=False, bias=True) * np.sum(y_tr == c)
                 for c in classes) / len(y_tr)
    epsilon = 1e-9 * X_tr.var(axis=0).max()
    for c in classes:
        Xc = X_tr[y_tr == c]
        mean, prior = Xc.mean(axis=0), np.log(len(Xc) / len(X_tr))
        if model == "QDA":
            log_density = stats.multivariate_normal(mean, np.cov(Xc, rowvar=False)).logpdf(X_te)
        elif model == "LDA":
            log_density = stats.multivariate_normal(mean, pooled).logpdf(X_te)
        else:
            sd = np.sqrt(Xc.var(axis=0) + epsilon)
            log_density = stats.norm.logpdf(X_te, mean, sd).sum(axis=1)
        scores.append(prior + np.atleast_1d(log_density))
    return classes[np.argmax(np.column_stack(scores), axis=1)]


def by_hand(features, folds, shuffle):
    """Each model's fold accuracies (their mean and ML standard deviation) on the folds that
    the parameters define, and the largest within-species |correlation| (scipy.stats.pearsonr
    over the pairs of features)."""
    iris = load_iris()
    X, y = iris.data[:, list(features)], iris.target
    cv = StratifiedKFold(folds, shuffle=shuffle > 0, random_state=shuffle or None)
    found = {}
    for model in MODELS:
        fold_accuracy = [np.mean(_predict(model, X[tr], y[tr], X[te]) == y[te])
                         for tr, te in cv.split(X, y)]
        found[model] = (np.mean(fold_accuracy), np.std(fold_accuracy))
    for c, name in enumerate(SPECIES):
        Xc = X[y == c]
        found[name] = max(abs(stats.pearsonr(Xc[:, a], Xc[:, b])[0])
                          for a, b in itertools.combinations(range(X.shape[1]), 2))
    return found


def test_the_choices_make_sensible_questions():
    """Every feature set has two or more distinct iris columns; folds leave at least 5 flowers
    of each species in a fold; the default is the old question's (all four, 5 folds, no
    shuffle); there are at least 12 variants."""
    question = QUESTIONS[NAME][QUESTION]
    assert question.params["features"][0] == (0, 1, 2, 3)
    assert question.params["folds"][0] == 5 and question.params["shuffle"][0] == 0
    for features in question.params["features"]:
        assert len(set(features)) == len(features) >= 2 and set(features) <= {0, 1, 2, 3}
    assert all(50 // k >= 5 for k in question.params["folds"])
    assert question.count >= 12


def test_default_variant_reproduces_the_old_question_and_the_model_answer():
    """The default (shuffle 0: the folds in the data's order) gives what the old code gave,
    cross_val_score(..., cv=5) on all four features, and the numbers the model answer quotes:
    LDA and QDA tie at about 0.98 (the rubric: 0.980 each, +- 0.027), the diagonal model about
    0.95 (0.953), within-class correlations up to about 0.86."""
    got = numbers(**variant(NAME, "").question(QUESTION))
    assert len(got) == 10
    iris = load_iris()
    for model, estimator in zip(MODELS, (QuadraticDiscriminantAnalysis(),
                                         LinearDiscriminantAnalysis(), GaussianNB()),
                                 strict=True):
        scores = cross_val_score(estimator, iris.data, iris.target, cv=5)
        assert accuracy(got, model) == round(scores.mean(), 3)
        assert spread(got, model) == round(scores.std(), 3)
    solution = sup.load(sup.ROOT / "solutions" / NAME / f"{NAME}.ipynb")
    flat = " ".join(sup.cell_by_id(solution, "interpretation-iris-covariance").split())
    assert "LDA and QDA tie (about 0.98)" in flat and "worst (about 0.95)" in flat
    assert accuracy(got, "LDA") == accuracy(got, "QDA") == 0.98
    assert got["LDA minus QDA, in flowers of 150"] == 0
    assert "0.980 each" in flat and "0.980 (+- 0.027) for QDA and LDA and 0.953" in flat
    assert spread(got, "QDA") == spread(got, "LDA") == 0.027
    assert accuracy(got, "diagonal (naive Bayes)") == 0.953
    assert "up to about 0.86" in flat
    assert max(got[f"largest within-class correlation, {s}"] for s in SPECIES) == 0.86


@pytest.mark.parametrize("features, folds, shuffle", [((0, 1, 2), 10, 3), ((1, 2), 5, 1)])
def test_other_variants_match_the_classifiers_by_hand(features, folds, shuffle):
    """Two variants other than the default: every accuracy, spread and correlation equals the
    computation by hand at the precision variant_numbers rounds to."""
    got = numbers(features=features, folds=folds, shuffle=shuffle)
    want = by_hand(features, folds, shuffle)
    for model in MODELS:
        assert accuracy(got, model) == round(float(want[model][0]), 3), model
        assert spread(got, model) == round(float(want[model][1]), 3), model
    assert got["LDA minus QDA, in flowers of 150"] == round((want["LDA"][0] - want["QDA"][0])
                                                            * 150)
    for name in SPECIES:
        assert got[f"largest within-class correlation, {name}"] == round(float(want[name]), 2)


def test_release_code_prints_the_students_own_numbers():
    """The question's code in the release notebook, run with a student's variant, prints that
    variant in words and the numbers variant_numbers gives for it."""
    notebook = sup.release_notebook(NAME)
    question = sup.cell_by_id(notebook, "md-interpretation")
    code = re.search(r"```python\n(.*?)```", question, re.S).group(1)
    V = next(v for v in (variant(NAME, f"s{k}") for k in range(100))
             if v["features"] != (0, 1, 2, 3) and v["shuffle"] > 0)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "<question>", "exec"), {"V": V})
    printed = out.getvalue()
    want = numbers(**V.question(QUESTION))
    assert printed.startswith(str(V))
    for model, label in zip(MODELS, ("QDA (full, per class)", "LDA (full, shared)",
                                     "diagonal (naive Bayes)"), strict=True):
        assert f"{label:24s} accuracy {accuracy(want, model):.3f} " \
               f"(+- {spread(want, model):.3f})" in printed
    for name in SPECIES:
        assert f"for {name}: {want[f'largest within-class correlation, {name}']:.2f}" in printed


@pytest.mark.slow
def test_the_question_varies_and_its_conclusions_hold_for_every_variant():
    """Across the 50 variants (150 cross-validations: 2 s idle, 10 s on a busy machine) the
    numbers a student quotes take many values (45 or more different outputs), and what the
    rubric says holds for each: the diagonal model last, 1 to 12 flowers behind both full
    models (1 to 3 with columns (0, 2, 3)); LDA and QDA at most 3 flowers apart, less than
    either's spread of the folds, LDA never more than 1 behind."""
    question = QUESTIONS[NAME][QUESTION]
    seen = {model: set() for model in MODELS}
    printed = set()
    for features, folds, shuffle in itertools.product(*question.params.values()):
        got = numbers(features=features, folds=folds, shuffle=shuffle)
        printed.add(tuple(got.values()))
        for model in MODELS:
            seen[model].add(accuracy(got, model))
        lda, qda = accuracy(got, "LDA"), accuracy(got, "QDA")
        behind = round((min(lda, qda) - accuracy(got, "diagonal (naive Bayes)")) * 150)
        assert 1 <= behind <= (3 if features == (0, 2, 3) else 12), (features, folds, shuffle)
        difference = got["LDA minus QDA, in flowers of 150"]
        assert -1 <= difference <= 3 and difference == round((lda - qda) * 150)
        assert abs(lda - qda) < min(spread(got, "LDA"), spread(got, "QDA"))
    assert len(printed) >= 45
    assert len(seen["diagonal (naive Bayes)"]) >= 8
    assert len(seen["QDA"]) >= 5 and len(seen["LDA"]) >= 5


def test_the_question_varies_without_shuffling():
    """The ten variants without shuffling (5 feature sets, 2 fold counts) print ten different
    sets of numbers; the diagonal model's accuracy alone takes five values, QDA's three."""
    question = QUESTIONS[NAME][QUESTION]
    seen = {model: set() for model in MODELS}
    printed = set()
    for features, folds in itertools.product(question.params["features"],
                                             question.params["folds"]):
        got = numbers(features=features, folds=folds, shuffle=0)
        printed.add(tuple(got.values()))
        for model in MODELS:
            seen[model].add(accuracy(got, model))
    assert len(printed) == 10
    assert len(seen["diagonal (naive Bayes)"]) >= 5
    assert len(seen["QDA"]) >= 3 and len(seen["LDA"]) >= 3


def test_the_release_prints_none_of_the_model_answers_numbers():
    """The student edition holds no "Model answer", no rubric and none of the default
    variant's numbers at the precision the model answer quotes (0.98, 0.95, 0.86, and the
    rubric's 0.980, 0.953, 0.027)."""
    text = json.dumps(sup.release_notebook(NAME), ensure_ascii=False)
    assert "Model answer" not in text and "Rubric" not in text
    for number in ("0.98", "0.95", "0.86", "0.980", "0.953", "0.027"):
        assert number not in text, number


def test_an_unknown_question_is_refused():
    with pytest.raises(ValueError, match="interpretation_iris_covariance"):
        REFERENCE.variant_numbers("interpretation_nb_overconfidence", {})
