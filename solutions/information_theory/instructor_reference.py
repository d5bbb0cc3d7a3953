"""Instructor-only reference for the information_theory assignment's hidden tests.

Never released: nbgrader_config.py keeps this file out of exercises/, and it is not part of the
course package (students can read mlcourse_utils, so the reference of a task beyond the chapter
cannot live there). The hidden test cells load it from solutions/information_theory/ in the
grader's process.

It holds the extension tasks: the Jensen-Shannon divergence and the entropy rate of a
stationary Markov chain.
"""

from __future__ import annotations

import numpy as np
from scipy.special import xlogy


def js_divergence(p, q, base=2):
    """(1/2) KL(p || m) + (1/2) KL(q || m) with m = (p + q) / 2, in units of log(base).

    Always finite: m > 0 wherever p > 0 or q > 0. Terms with p(x) = 0 (or q(x) = 0) are 0.
    """
    p = np.asarray(p, dtype=float)
    q = np.asarray(q, dtype=float)
    m = 0.5 * (p + q)
    used = m > 0
    p, q, m = p[used], q[used], m[used]
    nats = 0.5 * np.sum(xlogy(p, p) - xlogy(p, m)) + 0.5 * np.sum(xlogy(q, q) - xlogy(q, m))
    return float(max(nats, 0.0) / np.log(base))


def stationary_distribution(P):
    """The pi with pi P = pi, sum(pi) = 1, of an irreducible chain (a linear solve)."""
    P = np.asarray(P, dtype=float)
    K = P.shape[0]
    # (P^T - I) pi = 0 has rank K - 1; replace one equation by sum(pi) = 1.
    A = P.T - np.eye(K)
    A[-1] = 1.0
    rhs = np.zeros(K)
    rhs[-1] = 1.0
    return np.linalg.solve(A, rhs)


def entropy_rate(P, base=2):
    """sum_i pi_i H(P[i, :]): the entropy per symbol of the stationary chain with transitions P."""
    P = np.asarray(P, dtype=float)
    pi = stationary_distribution(P)
    row_entropies = -np.sum(xlogy(P, P), axis=1)
    return float(max(pi @ row_entropies, 0.0) / np.log(base))


def random_chain(rng, K, zeros=0.0):
    """A random irreducible K-state transition matrix, with about a fraction `zeros` of zeros.

    A random cycle keeps every state reachable from every other; other entries are zeroed at
    random (never those of the cycle).
    """
    P = rng.dirichlet(np.full(K, 0.8), size=K)
    order = rng.permutation(K)
    cycle = np.zeros((K, K), dtype=bool)
    cycle[order, np.roll(order, -1)] = True
    drop = (rng.random((K, K)) < zeros) & ~cycle
    P[drop] = 0.0
    P[cycle] += 0.05
    return P / P.sum(axis=1, keepdims=True)
