"""Instructor-only references for the `naive_bayes` tasks the course package does not contain.

The hidden tests of `solutions/naive_bayes/naive_bayes.ipynb` compare students' answers with
these functions. This file is never released (nbgrader_config.py ignores it) and is not part of
the student wheel.

`variant_numbers` gives the model answer's numbers for each student's variant of the
interpretation (section 9), for the manual-grading page and `similarity`.
"""

import functools

import numpy as np
from scipy.special import xlogy


def fit_multinomial_nb(X, y, alpha=1.0):
    """Multinomial naive Bayes on counts: (classes, log_prior, theta), theta smoothed by alpha."""
    X = np.asarray(X, dtype=float)
    y = np.asarray(y)
    classes, index = np.unique(y, return_inverse=True)
    onehot = np.eye(len(classes))[index]
    n_c = onehot.sum(axis=0)
    word_counts = onehot.T @ X
    theta = (word_counts + alpha) / (word_counts.sum(axis=1, keepdims=True) + X.shape[1] * alpha)
    return classes, np.log(n_c / len(y)), theta


def multinomial_nb_log_joint(X, log_prior, theta):
    """(N, C) log p(c) + sum_d x_d log theta_cd, with 0 log 0 = 0."""
    X = np.asarray(X, dtype=float)
    theta = np.asarray(theta, dtype=float)
    log_prior = np.asarray(log_prior, dtype=float)
    return log_prior + xlogy(X[:, None, :], theta[None, :, :]).sum(axis=2)


# ---------------------------------------------------------------- section 9, per variant

@functools.lru_cache(maxsize=1)
def _breast_cancer():
    from sklearn.datasets import load_breast_cancer

    data = load_breast_cancer()
    return data.data, data.target, tuple(data.feature_names)


@functools.cache
def _overconfidence(split, pair):
    from sklearn.model_selection import train_test_split
    from sklearn.naive_bayes import GaussianNB

    X, y, names = _breast_cancer()
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.3, random_state=split,
                                              stratify=y)
    model = GaussianNB().fit(X_tr, y_tr)
    confident = model.predict_proba(X_te).max(axis=1) > 0.99
    wrong = model.predict(X_te) != y_te
    benign = X_tr[y_tr == 1]
    i, j = names.index(pair[0]), names.index(pair[1])
    return {
        f"test accuracy ({len(y_te)} tumours)": round(float(np.mean(~wrong)), 3),
        "share of test tumours with a posterior above 0.99 (%)":
            round(100 * float(confident.mean()), 1),
        "test tumours with a posterior above 0.99": int(confident.sum()),
        "accuracy among them": round(float(np.mean(~wrong[confident])), 3),
        "wrong among them": int(wrong[confident].sum()),
        "correlation of the two features within benign tumours (training set)":
            round(float(np.corrcoef(benign[:, i], benign[:, j])[0, 1]), 3),
    }


def variant_numbers(question, params):
    """The model answer's numbers for one variant of a question graded by hand, in words:
    ``params`` = ``V.question(question)`` (section 9: ``split``, ``pair``), rounded as the
    question's code prints them."""
    if question != "interpretation_nb_overconfidence":
        raise ValueError(f"naive_bayes has no question {question!r} that varies "
                         "(it has interpretation_nb_overconfidence)")
    return dict(_overconfidence(int(params["split"]), tuple(params["pair"])))
