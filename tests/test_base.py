"""Tests for mlcourse_utils._base: the one estimator shape of naive_bayes, gda and logistic.

Every estimator class must behave the same way: ``fit`` returns the model, using it before
``fit`` raises NotFittedError (a ValueError) saying to call fit, the posteriors are rows
that sum to 1 and equal exp(predict_log_proba), ``predict`` is the class of the largest
posterior and ``score`` the accuracy. The log-sum-exp normalisation is checked against
scipy.special.log_softmax.
"""

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy.special import log_softmax

from mlcourse_utils import gda, logistic, naive_bayes
from mlcourse_utils._base import ProbabilisticClassifier, log_normalise
from mlcourse_utils._validation import NotFittedError

ESTIMATORS = {
    "BernoulliNaiveBayes": (lambda: naive_bayes.BernoulliNaiveBayes(alpha=1.0), True),
    "GaussianNaiveBayes": (lambda: naive_bayes.GaussianNaiveBayes(var_smoothing=1e-9), False),
    "QDA": (lambda: gda.QDA(reg=0.1), False),
    "LDA": (lambda: gda.LDA(), False),
    "GDA diag": (lambda: gda.GaussianDiscriminantAnalysis("diag"), False),
    "GDA tied_diag": (lambda: gda.GaussianDiscriminantAnalysis("tied_diag"), False),
    "LogisticRegression": (lambda: logistic.LogisticRegression(l2=1.0), False),
    "SoftmaxRegression": (lambda: logistic.SoftmaxRegression(l2=1.0), False),
}


@pytest.fixture(scope="module")
def data():
    """Three classes with string labels (two for logistic regression), binary and real X."""
    rng = np.random.default_rng(5)
    y = np.array(["cat", "dog", "emu"])[rng.integers(0, 3, size=300)]
    X = rng.normal(size=(300, 4)) + (y == "dog")[:, None] * 1.5 - (y == "emu")[:, None]
    return X, (X > 0.3).astype(float), y


@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_every_estimator_has_the_shared_shape(name, data):
    make, binary = ESTIMATORS[name]
    X, Xb, y = data
    X = Xb if binary else X
    if name == "LogisticRegression":
        y = np.where(y == "emu", "dog", y)
    model = make()
    assert isinstance(model, ProbabilisticClassifier)
    with pytest.raises(NotFittedError, match="not fitted yet; call fit"):
        model.predict_proba(X)
    with pytest.raises(ValueError, match="call fit"):
        model.predict(X)
    assert model.fit(X, y) is model
    assert_array_equal(model.classes_, np.unique(y))
    P = model.predict_proba(X)
    assert P.shape == (X.shape[0], model.classes_.shape[0])
    assert_allclose(P.sum(axis=1), 1.0, rtol=1e-12)
    assert_allclose(np.exp(model.predict_log_proba(X)), P, rtol=1e-12, atol=1e-300)
    assert_array_equal(model.predict(X), model.classes_[np.argmax(P, axis=1)])
    assert model.score(X, y) == pytest.approx(np.mean(model.predict(X) == y))
    assert model.score(X, y) > 0.5


@pytest.mark.parametrize("name", ["LDA", "GDA tied_diag"])
def test_shared_covariance_posteriors_equal_the_log_joint_ones(name, data):
    """With a shared covariance the estimator scores classes linearly (lda_coefficients);
    the posteriors must equal those of the full log joint gda_log_joint."""
    X, _, y = data
    model = ESTIMATORS[name][0]().fit(X, y)
    expected = np.exp(log_softmax(model.log_joint(X), axis=1))
    assert_allclose(model.predict_proba(X), expected, rtol=1e-10, atol=1e-14)


def test_log_normalise_matches_scipy():
    rng = np.random.default_rng(0)
    scores = rng.normal(scale=50.0, size=(200, 4)) - 1e4       # log joints near -1e4
    assert_allclose(log_normalise(scores), log_softmax(scores, axis=1), rtol=1e-12, atol=1e-12)
    scores[:, 1] = -np.inf                                        # a class of prior 0
    out = log_normalise(scores)
    assert np.all(out[:, 1] == -np.inf)
    assert_allclose(np.exp(out).sum(axis=1), 1.0, rtol=1e-12)


def test_log_normalise_refuses_an_impossible_sample():
    with pytest.raises(ValueError, match="sample 1 has log-probability -inf under every class"):
        log_normalise(np.array([[0.0, -1.0], [-np.inf, -np.inf]]))
