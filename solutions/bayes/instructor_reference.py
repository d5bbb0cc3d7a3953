"""Instructor-only references for the `bayes` tasks that the course package does not contain.

The hidden tests of `solutions/bayes/bayes.ipynb` compare students' answers with these functions.
`variant_numbers` gives the model answer's numbers of section 10 for a student's variant (the
manual-grading page and `mlcourse similarity` call it).
This file is never released (nbgrader_config.py ignores it) and is not part of the student wheel.
"""

from functools import lru_cache

import numpy as np
from scipy.special import betaln


def gamma_poisson_posterior(alpha, beta, counts, exposure=None):
    """Gamma(alpha, beta) prior (shape, rate) and Poisson counts with exposures: the posterior."""
    counts = np.asarray(counts, dtype=float)
    exposure = np.ones_like(counts) if exposure is None else np.asarray(exposure, dtype=float)
    return float(alpha + counts.sum()), float(beta + exposure.sum())


def beta_bernoulli_log_evidence(a, b, n_heads, n_tails):
    """log p(one sequence with n_heads heads and n_tails tails) under a Beta(a, b) prior."""
    return float(betaln(a + n_heads, b + n_tails) - betaln(a, b))


#: The question of section 10 that varies.
CANCER_QUESTION = "interpretation_breast_cancer_posterior"


@lru_cache(maxsize=1)
def _malignant():
    from mlcourse_utils.datasets import load_breast_cancer

    malignant = (np.asarray(load_breast_cancer().target) == 0).astype(int)  # 0 is malignant
    malignant.setflags(write=False)
    return malignant


def _posterior(a, b, data):
    from mlcourse_utils.bayes import beta_credible_interval, beta_mean, beta_posterior

    k, n = int(data.sum()), int(data.size)
    a_post, b_post = beta_posterior(a, b, k, n - k)
    lo, hi = beta_credible_interval(a_post, b_post, 0.95)
    return k, beta_mean(a_post, b_post), lo, hi


def variant_numbers(question, params):
    """The numbers section 10's model answer reads from the output, for the variant `params`
    (`V.question(question)`: prior (a, b), block, start): {label: number or words}."""
    if question != CANCER_QUESTION:
        raise ValueError(f"bayes has no variant question {question!r} (it has {CANCER_QUESTION!r})")
    a, b = params["prior"]
    start, block = int(params["start"]), int(params["block"])
    malignant = _malignant()
    _, mean_all, lo_all, hi_all = _posterior(a, b, malignant)
    k, mean, lo, hi = _posterior(a, b, malignant[start:start + block])
    share = float(malignant.mean())
    if lo <= share <= hi:
        versus = f"its interval contains the file's fraction {share:.3f}"
    else:
        side = "above" if lo > share else "below"
        versus = f"{side} the file's fraction {share:.3f} (its interval excludes it)"
    everything = f"all {malignant.size}"
    return {
        f"{everything}: posterior mean": mean_all,
        f"{everything}: 95% interval, lower": lo_all,
        f"{everything}: 95% interval, upper": hi_all,
        "block: malignant tumours": k,
        "block: malignant fraction": k / block,
        "block: posterior mean": mean,
        "block: 95% interval, lower": lo,
        "block: 95% interval, upper": hi,
        "block against the whole file": versus,
    }
