"""Instructor-only reference for the information_theory assignment's hidden tests.

Never released: nbgrader_config.py keeps this file out of exercises/, and it is not part of the
course package (students can read mlcourse_utils, so the reference of a task beyond the chapter
cannot live there). The hidden test cells load it from solutions/information_theory/ in the
grader's process.

It holds the extension tasks: the Jensen-Shannon divergence and the entropy rate of a
stationary Markov chain, and :func:`variant_numbers`, the model answer's numbers of section 11
for each student's variant (the manual-grading page shows them beside the answer).
"""

from __future__ import annotations

import functools

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


#: The polynomial degrees of the MDL table (section 11).
MDL_DEGREES = range(7)


@functools.lru_cache(maxsize=1)
def _diabetes():
    """The diabetes data in original units: ({feature name: column}, target)."""
    from sklearn.datasets import load_diabetes

    data = load_diabetes(scaled=False)
    return dict(zip(data.feature_names, data.data.T, strict=True)), data.target


@functools.lru_cache(maxsize=64)
def _mdl_bits(feature, n_patients):
    """Bits of the two-part code of the target given the feature, degrees 0..6, for the first
    n_patients patients (the package's reference two_part_codelength, default precision)."""
    from mlcourse_utils.information import two_part_codelength

    columns, target = _diabetes()
    x, y = columns[feature][:n_patients], target[:n_patients]
    return np.array([two_part_codelength(x, y, d) for d in MDL_DEGREES])


def variant_numbers(question, params):
    """The model answer's numbers for one variant of a question graded by hand.

    question : "interpretation_mdl" (section 11; its table cell interpretation_mdl_table has the
    same numbers). params : {"feature": the feature besides bmi, "few": the small number of
    patients}, as V.question(question) gives them. Returns an ordered dict, label -> number:
    the degree MDL chooses in the four cases (bmi and the feature, all 442 patients and the
    first few), by how many bits it beats the runner-up (the degree with the next shortest
    code) in each, and, for the feature with all patients (question (a)), the runner-up's
    degree and the posterior odds 2^margin of the chosen degree against it.
    """
    if question != "interpretation_mdl":
        raise ValueError(f"information_theory has no question {question!r} with variants "
                         "(it has: interpretation_mdl)")
    feature, few = params["feature"], int(params["few"])
    cases = [(name, n, "all 442 patients" if n == 442 else f"first {n} patients")
             for name in ("bmi", feature) for n in (442, few)]
    numbers, margins = {}, {}
    for name, n, who in cases:
        bits = _mdl_bits(name, n)
        chosen, runner_up = np.argsort(bits, kind="stable")[:2]
        numbers[f"degree chosen, {name}, {who}"] = int(chosen)
        margins[name, n] = int(runner_up), float(bits[runner_up] - bits[chosen])
    for name, n, who in cases:
        numbers[f"margin over the runner-up (bits), {name}, {who}"] = round(margins[name, n][1], 2)
    runner_up, margin = margins[feature, 442]
    numbers[f"runner-up degree, {feature}, all 442 patients"] = runner_up
    numbers[f"posterior odds chosen : runner-up, {feature}, all 442 patients"] = round(
        2.0 ** margin, 1)
    return numbers
