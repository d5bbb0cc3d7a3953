"""Instructor-only references for the `bayes` tasks that the course package does not contain.

The hidden tests of `solutions/bayes/bayes.ipynb` compare students' answers with these functions.
This file is never released (nbgrader_config.py ignores it) and is not part of the student wheel.
"""

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
