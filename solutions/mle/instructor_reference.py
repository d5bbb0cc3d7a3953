"""Instructor-only references for the `mle` tasks that the course package does not contain.

The hidden tests of `solutions/mle/mle.ipynb` compare students' answers with these functions.
`variant_numbers` gives the model answer's numbers of section 10 for a student's variant (the
manual-grading page and `mlcourse similarity` call it).
This file is never released (nbgrader_config.py ignores it) and is not part of the student wheel.
"""

from functools import lru_cache

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


#: The question of section 10 that varies, its data set's size and the size of a subset.
DIABETES_QUESTION = "interpretation_diabetes_gaussian"
DIABETES_PATIENTS = 442
DIABETES_SUBSET = 300


@lru_cache(maxsize=1)
def _progression():
    from mlcourse_utils.datasets import load_diabetes

    progression = np.asarray(load_diabetes().target, dtype=float)
    progression.setflags(write=False)
    return progression


def diabetes_rows(sample):
    """The rows of the student's patients: all 442 for sample 0, otherwise the 300 that
    `V.rows(442, 300)` draws for that sample (the student's own code calls the same)."""
    from mlcourse_utils.grading.variants import Variant

    chosen = Variant("mle", "", {DIABETES_QUESTION: {"sample": sample}})
    return chosen.rows(DIABETES_PATIENTS, DIABETES_SUBSET)


def variant_numbers(question, params):
    """The numbers section 10's model answer reads from the output, for the variant `params`
    (`V.question(question)`): {label: number}, in the order the output prints them."""
    if question != DIABETES_QUESTION:
        raise ValueError(f"mle has no variant question {question!r} (it has {DIABETES_QUESTION!r})")
    from mlcourse_utils.mle import gaussian_mle

    progression = _progression()[diabetes_rows(params["sample"])]
    mu, sigma2 = gaussian_mle(progression)
    sd = float(np.sqrt(sigma2))
    distance = np.abs(progression - mu)
    return {
        "patients N": int(progression.size),
        "mean": float(mu),
        "ML variance": float(sigma2),
        "standard deviation": sd,
        "within 1 sd, % (Gaussian 68.3)": 100 * float(np.mean(distance <= sd)),
        "within 2 sd, % (Gaussian 95.4)": 100 * float(np.mean(distance <= 2 * sd)),
        "skewness": float(np.mean((progression - mu) ** 3) / sd**3),
        "smallest value": float(progression.min()),
        "mean - 2 sd": float(mu - 2 * sd),
    }
