"""Instructor-only references for the `gda` tasks that the course package does not contain.

The hidden tests of `solutions/gda/gda.ipynb` compare students' answers with these functions.
This file is never released (nbgrader_config.py ignores it) and is not part of the student wheel.
"""

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
