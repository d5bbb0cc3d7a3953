"""The shape every classifier of the package shares: fit, then posteriors and predictions.

As scikit-learn's naive Bayes estimators share ``_BaseNB``, the estimator classes of
``naive_bayes``, ``gda`` and ``logistic`` share :class:`ProbabilisticClassifier`. A subclass
supplies two methods:

* ``_fit(X, y)`` computes the parameters from training data and sets the fitted attributes,
  ``classes_`` (``np.unique(y)``) among them;
* ``_class_scores(X)`` returns an (N, C) array of log p(c | x) plus a term that may depend on
  the sample but not on the class: the log joint log p(x, c) of a generative model, the linear
  scores of LDA, the scores of logistic regression.

Everything else follows from Bayes' rule and is written once here: ``predict_log_proba``
subtracts each row's log-sum-exp from the scores, ``predict_proba`` exponentiates that,
``predict`` takes the class of the largest score and ``score`` is the accuracy. Using a model
before ``fit`` raises :class:`~mlcourse_utils._validation.NotFittedError` (a ``ValueError``).
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._validation import FloatArray, NotFittedError

__all__ = ["ProbabilisticClassifier", "log_normalise"]

def log_normalise(scores: FloatArray) -> FloatArray:
    """log p(c | x) from (N, C) scores log p(c | x) + k(x): subtract each row's log-sum-exp.

    log-sum-exp_c a_c = m + log sum_c e^{a_c - m} with m = max_c a_c, so no exponent exceeds
    0 and the sum is at least 1. A row of only -inf (a sample that every class declares
    impossible) has no posterior and raises ``ValueError``.
    """
    # Row maxima as an elementwise maximum of the C columns: much faster than a reduction
    # along short rows when N is large.
    m = functools.reduce(np.maximum, scores.T)
    if np.any(m == -np.inf):
        row = int(np.argmax(m == -np.inf))
        raise ValueError(
            f"sample {row} has log-probability -inf under every class: it is impossible under "
            "every class (smooth the parameters, e.g. alpha > 0)"
        )
    shifted = scores - m[:, None]
    with np.errstate(under="ignore"):
        total = np.exp(shifted) @ np.ones(scores.shape[1])      # row sums, each >= 1
    return shifted - np.log(total)[:, None]


class ProbabilisticClassifier:
    """Base class: ``fit`` / ``predict_log_proba`` / ``predict_proba`` / ``predict`` / ``score``.

    Subclasses implement ``_fit(X, y)`` and ``_class_scores(X)`` (see the module docstring).
    """

    classes_: NDArray[Any]

    def fit(self, X: ArrayLike, y: ArrayLike) -> ProbabilisticClassifier:
        """Fit the model to training data X (N, D) and labels y (N,); returns the model."""
        self._fit(X, y)
        return self

    def _fit(self, X: ArrayLike, y: ArrayLike) -> None:
        raise NotImplementedError

    def _class_scores(self, X: ArrayLike) -> FloatArray:
        raise NotImplementedError

    def _check_fitted(self) -> None:
        if not hasattr(self, "classes_"):
            raise NotFittedError(
                f"this {type(self).__name__} is not fitted yet; call fit(X, y) before "
                "predicting"
            )

    def predict_log_proba(self, X: ArrayLike) -> FloatArray:
        """(N, C) log posteriors log p(c | x_i), columns in ``classes_`` order."""
        self._check_fitted()
        return log_normalise(self._class_scores(X))

    def predict_proba(self, X: ArrayLike) -> FloatArray:
        """(N, C) posteriors p(c | x_i); every row sums to 1."""
        return np.exp(self.predict_log_proba(X))

    def predict(self, X: ArrayLike) -> NDArray[Any]:
        """(N,) the class with the largest posterior (ties: the first class)."""
        self._check_fitted()
        return self.classes_[np.argmax(self._class_scores(X), axis=1)]

    def score(self, X: ArrayLike, y: ArrayLike) -> float:
        """Accuracy of :meth:`predict` on (X, y)."""
        return float(np.mean(self.predict(X) == np.asarray(y)))
