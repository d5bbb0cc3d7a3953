"""Instructor-only references for the `mle` tasks that the course package does not contain.

The hidden tests of `solutions/mle/mle.ipynb` compare students' answers with these functions.
This file is never released (nbgrader_config.py ignores it) and is not part of the student wheel.
"""

import numpy as np
from scipy.special import gammaln, xlogy


def exponential_censored_mle(x, censored):
    """ML rate of an exponential from right-censored times: (number of events) / (total time)."""
    x = np.asarray(x, dtype=float)
    censored = np.asarray(censored, dtype=bool)
    events = np.count_nonzero(~censored)
    return float(events / x.sum()) if events else 0.0


def poisson_rate_mle(counts, exposure):
    """ML rate of Poisson counts with exposures, and the log-likelihood at that rate."""
    counts = np.asarray(counts, dtype=float)
    exposure = np.asarray(exposure, dtype=float)
    rate = counts.sum() / exposure.sum()
    mean = rate * exposure
    log_lik = np.sum(xlogy(counts, mean) - mean - gammaln(counts + 1.0))
    return float(rate), float(log_lik)
