"""Instructor-only references for the `gda` tasks that the course package does not contain.

The hidden tests of `solutions/gda/gda.ipynb` compare students' answers with these functions.
This file is never released (nbgrader_config.py ignores it) and is not part of the student wheel.

`variant_numbers` gives the model answer's numbers for each student's variant of the
interpretation (section 10), for the manual-grading page and `similarity`.
"""

import functools

import numpy as np
import scipy.linalg


def map_covariance(X, Psi, nu):
    """Mode of the posterior density p(Sigma | X), a density over covariances, under an
    inverse-Wishart(Psi, nu) prior, the mean fixed at the sample mean:
    (Psi + S) / (nu + N + D + 1), S the scatter matrix (not the inverted mode of the
    precision's density, which divides by nu + N - D - 1)."""
    X = np.asarray(X, dtype=float)
    n, d = X.shape
    centred = X - X.mean(axis=0)
    return (np.asarray(Psi, dtype=float) + centred.T @ centred) / (nu + n + d + 1)


def fisher_directions(X, y, n_components):
    """(D, n_components) Fisher directions: S_B w = lam S_W w by decreasing lam, w' S_W w = 1,
    S_W the pooled ML within-class covariance, S_B the between-class covariance."""
    X = np.asarray(X, dtype=float)
    y = np.asarray(y)
    classes, index = np.unique(y, return_inverse=True)
    n = len(y)
    mean = X.mean(axis=0)
    within = np.zeros((X.shape[1], X.shape[1]))
    between = np.zeros_like(within)
    for c in range(len(classes)):
        Xc = X[index == c]
        mu = Xc.mean(axis=0)
        within += (Xc - mu).T @ (Xc - mu)
        between += len(Xc) * np.outer(mu - mean, mu - mean)
    _, vectors = scipy.linalg.eigh(between / n, within / n)
    return vectors[:, ::-1][:, :n_components]


# ---------------------------------------------------------------- section 10, per variant

@functools.lru_cache(maxsize=1)
def _iris():
    from sklearn.datasets import load_iris

    iris = load_iris()
    return iris.data, iris.target, tuple(iris.target_names)


@functools.cache
def _iris_covariance(features, folds, shuffle):
    from sklearn.discriminant_analysis import (
        LinearDiscriminantAnalysis,
        QuadraticDiscriminantAnalysis,
    )
    from sklearn.model_selection import StratifiedKFold, cross_val_score
    from sklearn.naive_bayes import GaussianNB

    X, y, species = _iris()
    X = X[:, list(features)]
    # shuffle 0: the folds in the data's order (what cv=5 gives, the default variant's numbers)
    cv = StratifiedKFold(folds, shuffle=shuffle > 0, random_state=shuffle or None)
    numbers, mean = {}, {}
    for name, model in (("QDA", QuadraticDiscriminantAnalysis()),
                        ("LDA", LinearDiscriminantAnalysis()),
                        ("diagonal (naive Bayes)", GaussianNB())):
        scores = cross_val_score(model, X, y, cv=cv)
        mean[name] = scores.mean()
        numbers[f"{name} accuracy (mean of the folds)"] = round(float(scores.mean()), 3)
        numbers[f"{name} spread (std of the folds)"] = round(float(scores.std()), 3)
    # the folds have equal sizes (30 or 15 flowers), so a mean over the folds is the share of
    # the 150 flowers classified right, and two of them differ by whole flowers / 150
    numbers["LDA minus QDA, in flowers of 150"] = int(round((mean["LDA"] - mean["QDA"])
                                                            * len(y)))
    for c, name in enumerate(species):
        corr = np.corrcoef(X[y == c], rowvar=False)
        numbers[f"largest within-class correlation, {name}"] = round(
            float(np.abs(corr - np.eye(len(features))).max()), 2)
    return numbers


def variant_numbers(question, params):
    """The model answer's numbers for one variant of a question graded by hand, in words:
    ``params`` = ``V.question(question)`` (section 10: ``features``, ``folds``, ``shuffle``),
    rounded as the question's code prints them."""
    if question != "interpretation_iris_covariance":
        raise ValueError(f"gda has no question {question!r} that varies "
                         "(it has interpretation_iris_covariance)")
    return dict(_iris_covariance(tuple(int(f) for f in params["features"]),
                                 int(params["folds"]), int(params["shuffle"])))
