"""Hand-written answers for the `mle` assignment, used by tests/test_assignments.py.

WRONG: per task, plausible mistakes with the task score each must get (derived from which of
the task's test cells the mistake fails: the visible worked example is worth 1 point, the visible
edge case 1, the hidden cell 2).
HONEST: correct answers written differently from the reference; each must get full marks.
SHORTCUTS (at the end): answers that avoid a task's own step (another formula, the naive
unstable one, the chapter's printed function where the task needs one more step), as
{label: (task, answer, score)}; each score is derived from the cells the answer passes and is
below the task's full marks.
"""

MODULE = "mle"

#: Shortcuts through a call the task forbids (metadata.mlcourse.forbidden of the notebook), as
#: {task: [(answer, the call the feedback must name)]}: each earns its task nothing, by name
#: (aliases, getattr, importlib) or, when the name is built at run time, by the sandbox's watch.
FORBIDDEN_SHORTCUTS = {
    "mvn_mle": [
        # numpy.ma has its own cov (forbidding numpy.cov does not cover it).
        ("import numpy as np\n"
         "def mvn_mle(X):\n"
         "    X = np.asarray(X, dtype=float)\n"
         "    return X.mean(axis=0), np.atleast_2d(np.ma.cov(X.T, bias=True).data)\n",
         "numpy.ma.cov"),
        # numpy.cov taken from numpy's own table of array functions (names built at run time).
        ("import importlib\n"
         "import numpy\n"
         "table = vars(importlib.import_module('numpy._core.' + 'overrides'))['ARRAY_FUNCTIONS']\n"
         "_cov = [f for f in table if f.__name__ == ''.join(reversed('voc'))][0]\n"
         "def mvn_mle(X):\n"
         "    X = numpy.atleast_2d(numpy.asarray(X, dtype=float))\n"
         "    return X.mean(axis=0), numpy.atleast_2d(_cov(X, rowvar=False, bias=True))\n",
         "numpy.cov"),
        ("import numpy\n"
         "_cov = getattr(numpy, 'c' + 'ov')\n"
         "def mvn_mle(X):\n"
         "    X = numpy.atleast_2d(numpy.asarray(X, dtype=float))\n"
         "    return X.mean(axis=0), numpy.atleast_2d(_cov(X, rowvar=False, bias=True))\n",
         "numpy.cov"),
    ],
    "gaussian_mle": [
        # The name is built at run time: only the sandbox's watch sees the call.
        ("import scipy.stats\n"
         "def gaussian_mle(x):\n"
         "    fit = getattr(scipy.stats, ''.join(map(chr, (110, 111, 114, 109)))).fit\n"
         "    m, s = fit(x)\n"
         "    return float(m), float(s) ** 2\n", "scipy.stats.norm.fit"),
    ],
    "sequence_likelihood": [
        # The multinomial pmf of the counts, divided by the number of orderings.
        ("import math\n"
         "from scipy import stats\n"
         "def sequence_likelihood(flips, p_heads):\n"
         "    h, t = flips.count('H'), flips.count('T')\n"
         "    pmf = stats.multinomial.pmf([h, t], h + t, [p_heads, 1 - p_heads])\n"
         "    return float(pmf / math.comb(h + t, h))\n", "scipy.stats.multinomial"),
        # p^h (1 - p)^t is a Beta(h + 1, t + 1) density times its normaliser; the name is
        # built at run time.
        ("from scipy import special\n"
         "import scipy.stats\n"
         "def sequence_likelihood(flips, p_heads):\n"
         "    h, t = flips.count('H'), flips.count('T')\n"
         "    dist = getattr(scipy.stats, ''.join(reversed('ateb')))\n"
         "    return float(dist.pdf(p_heads, h + 1, t + 1) * special.beta(h + 1, t + 1))\n",
         "scipy.stats.beta"),
    ],
    "bernoulli_log_likelihood": [
        ("import numpy as np\n"
         "from scipy import special, stats\n"
         "def bernoulli_log_likelihood(theta, x):\n"
         "    x = np.asarray(x); h = x.sum(); t = x.size - h\n"
         "    log_pdf = stats.beta.logpdf(theta, h + 1, t + 1)\n"
         "    return float(log_pdf + special.betaln(h + 1, t + 1))\n",
         "scipy.stats.beta"),
        ("import math\n"
         "import numpy as np\n"
         "def bernoulli_log_likelihood(theta, x):\n"
         "    x = np.asarray(x); h = int(x.sum()); t = x.size - h\n"
         "    module = __import__('scipy.stats', fromlist=['x'])\n"
         "    dist = getattr(module, ''.join(reversed('laimonitlum')))\n"
         "    log_pmf = dist.logpmf([h, t], h + t, [theta, 1 - theta])\n"
         "    return float(log_pmf - math.log(math.comb(h + t, h)))\n",
         "scipy.stats.multinomial"),
    ],
    "poisson_rate_mle": [
        # scipy.stats' log-pmf at the estimated rate (12 of 12 before it was forbidden).
        ("import numpy as np\n"
         "from scipy import stats\n"
         "def poisson_rate_mle(counts, exposure):\n"
         "    k = np.asarray(counts, float); t = np.asarray(exposure, float)\n"
         "    rate = k.sum() / t.sum()\n"
         "    return float(rate), float(stats.poisson.logpmf(k, rate * t).sum())\n",
         "scipy.stats.poisson"),
        # A frozen distribution, the name built at run time.
        ("import numpy as np\n"
         "import scipy.stats\n"
         "def poisson_rate_mle(counts, exposure):\n"
         "    k = np.asarray(counts, float); t = np.asarray(exposure, float)\n"
         "    rate = k.sum() / t.sum()\n"
         "    dist = getattr(scipy.stats, ''.join(reversed('nossiop')))(rate * t)\n"
         "    return float(rate), float(getattr(dist, ''.join(reversed('fmpgol')))(k).sum())\n",
         "scipy.stats.poisson"),
        # log Poisson(k | m) = log Gamma(m | shape k + 1, rate 1): the same terms, as a density
        # of the mean (gamma, erlang, gengamma with c = 1; chi2 at 2m with 2k + 2 degrees of
        # freedom, plus log 2).
        ("import numpy as np\n"
         "import scipy.stats\n"
         "def poisson_rate_mle(counts, exposure):\n"
         "    k = np.asarray(counts, float); t = np.asarray(exposure, float)\n"
         "    rate = k.sum() / t.sum()\n"
         "    dist = getattr(scipy.stats, ''.join(reversed('ammag')))\n"
         "    return float(rate), float(dist.logpdf(rate * t, k + 1).sum())\n",
         "scipy.stats.gamma"),
        ("import numpy as np\n"
         "from scipy.stats import erlang\n"
         "def poisson_rate_mle(counts, exposure):\n"
         "    k = np.asarray(counts, float); t = np.asarray(exposure, float)\n"
         "    rate = k.sum() / t.sum()\n"
         "    return float(rate), float(erlang.logpdf(rate * t, k + 1).sum())\n",
         "scipy.stats.erlang"),
        ("import numpy as np\n"
         "import scipy.stats as st\n"
         "def poisson_rate_mle(counts, exposure):\n"
         "    k = np.asarray(counts, float); t = np.asarray(exposure, float)\n"
         "    rate = k.sum() / t.sum()\n"
         "    return float(rate), float(st.gengamma.logpdf(rate * t, k + 1, 1).sum())\n",
         "scipy.stats.gengamma"),
        ("import numpy as np\n"
         "import scipy.stats\n"
         "def poisson_rate_mle(counts, exposure):\n"
         "    k = np.asarray(counts, float); t = np.asarray(exposure, float)\n"
         "    rate = k.sum() / t.sum()\n"
         "    dist = getattr(scipy.stats, 'chi' + str(2))\n"
         "    log_pdf = dist.logpdf(2 * rate * t, 2 * k + 2) + np.log(2)\n"
         "    return float(rate), float(log_pdf.sum())\n",
         "scipy.stats.chi2"),
    ],
}

WRONG = {
    "sequence_likelihood": [
        # p and 1 - p swapped: fails the bent coin (visible), "HHHH" with p = 1 (edge) and the
        # random cases (hidden).
        ("def sequence_likelihood(flips, p_heads):\n"
         "    return (1 - p_heads) ** flips.count('H') * p_heads ** flips.count('T')\n", 0),
    ],
    "bernoulli_mle": [
        # N_T / N instead of N_H / N: fails everywhere (all tails gives 1 in the edge case).
        ("import numpy as np\n"
         "def bernoulli_mle(x):\n"
         "    x = np.asarray(x)\n"
         "    return float(np.mean(1 - x))\n", 0),
    ],
    "bernoulli_log_likelihood": [
        # Unstable logs: 0 * log(0) = nan at theta = 1 or 0: right on the visible example, wrong
        # in the edge case (theta = 1, heads only) and in the hidden one.
        ("import numpy as np\n"
         "def bernoulli_log_likelihood(theta, x):\n"
         "    x = np.asarray(x)\n"
         "    n_h = x.sum(); n_t = x.size - n_h\n"
         "    return float(n_h * np.log(theta) + n_t * np.log(1 - theta))\n", 1),
    ],
    "gaussian_mle": [
        # Variance with N - 1 (nan for the single sample of the edge case).
        ("import numpy as np\n"
         "def gaussian_mle(x):\n"
         "    x = np.asarray(x, dtype=float)\n"
         "    return x.mean(), x.var(ddof=1)\n", 0),
    ],
    "mvn_mle": [
        # np.cov's default divides by N - 1 (nan for the single row of the edge case).
        ("import numpy as np\n"
         "def mvn_mle(X):\n"
         "    X = np.asarray(X, dtype=float)\n"
         "    return X.mean(axis=0), np.atleast_2d(np.cov(X, rowvar=False))\n", 0),
        # Wrong axis: the mean over features instead of over samples.
        ("import numpy as np\n"
         "def mvn_mle(X):\n"
         "    X = np.asarray(X, dtype=float)\n"
         "    mu = X.mean(axis=1)\n"
         "    C = X - X.mean(axis=0)\n"
         "    return mu, C.T @ C / len(X)\n", 0),
    ],
    "linear_regression_mle": [
        # No intercept (w != 0 for the constant y of the edge case).
        ("import numpy as np\n"
         "def linear_regression_mle(X, y):\n"
         "    X = np.asarray(X, float); y = np.asarray(y, float)\n"
         "    w = np.linalg.lstsq(X, y, rcond=None)[0]\n"
         "    return w, 0.0, float(np.mean((y - X @ w) ** 2))\n", 0),
    ],
}

HONEST = {
    "loops": {
        "sequence_likelihood":
            "def sequence_likelihood(flips, p_heads):\n"
            "    result = 1.0\n"
            "    for c in flips:\n"
            "        result *= p_heads if c == 'H' else 1 - p_heads\n"
            "    return result\n",
        "gaussian_mle":
            "def gaussian_mle(x):\n"
            "    x = list(x)\n"
            "    mu = sum(x) / len(x)\n"
            "    return mu, sum((v - mu) ** 2 for v in x) / len(x)\n",
        "bernoulli_mle":
            "def bernoulli_mle(x):\n"
            "    heads = 0\n"
            "    for v in x:\n"
            "        heads += v\n"
            "    return heads / len(x)\n",
    },
    "scipy_and_lists": {
        "mvn_mle":
            "import numpy as np\n"
            "def mvn_mle(X):\n"
            "    X = np.asarray(X, dtype=float)\n"
            "    return [X.mean(axis=0), np.atleast_2d(np.cov(X.T, bias=True))]\n",
        "bernoulli_log_likelihood":
            "from scipy import stats\n"
            "import numpy as np\n"
            "def bernoulli_log_likelihood(theta, x):\n"
            "    return np.sum(stats.bernoulli.logpmf(np.asarray(x), theta))\n",
        "linear_regression_mle":
            "import numpy as np\n"
            "from scipy import linalg\n"
            "def linear_regression_mle(X, y):\n"
            "    X = np.asarray(X, float); y = np.asarray(y, float)\n"
            "    A = np.column_stack([X, np.ones(len(X))])\n"
            "    coef = linalg.lstsq(A, y)[0]\n"
            "    r = y - A @ coef\n"
            "    return coef[:-1], np.float64(coef[-1]), np.array(np.mean(r * r))\n",
    },
    "warnings_and_prints": {
        # log(0) inside np.where emits a RuntimeWarning; printing to stderr must not cost points.
        "bernoulli_log_likelihood":
            "import sys\n"
            "import numpy as np\n"
            "def bernoulli_log_likelihood(theta, x):\n"
            "    x = np.asarray(x, dtype=float)\n"
            "    n_h = x.sum(); n_t = x.size - n_h\n"
            "    a = np.where(n_h > 0, n_h * np.log(theta), 0.0)\n"
            "    b = np.where(n_t > 0, n_t * np.log(1 - theta), 0.0)\n"
            "    print('computing', theta, file=sys.stderr)\n"
            "    return float(a + b)\n",
        "gaussian_mle":
            "import numpy as np, warnings\n"
            "def gaussian_mle(x):\n"
            "    warnings.warn('a harmless warning from the student')\n"
            "    x = np.asarray(x, dtype=float)\n"
            "    return (np.mean(x), np.mean((x - np.mean(x)) ** 2))\n",
    },
}

# The two tasks beyond the chapter: each has a visible worked example (2 points), a visible edge
# or large-count case (2), and two hidden cells (4 + 4: random inputs, and edge cases).

WRONG["exponential_censored_mle"] = [
    # The flags read the wrong way round (censored times counted as events): fails every cell.
    ("import numpy as np\n"
     "def exponential_censored_mle(x, censored):\n"
     "    x = np.asarray(x, float)\n"
     "    d = np.count_nonzero(np.asarray(censored, bool))\n"
     "    return float(d / x.sum())\n", 0),
]
WRONG["poisson_rate_mle"] = [
    # The log k! terms dropped ("a constant"): the rate is right, the log-likelihood is not,
    # except when every count is 0; every cell has a case with counts above 1.
    ("import numpy as np\n"
     "from scipy.special import xlogy\n"
     "def poisson_rate_mle(counts, exposure):\n"
     "    k = np.asarray(counts, float); t = np.asarray(exposure, float)\n"
     "    rate = k.sum() / t.sum()\n"
     "    return float(rate), float(np.sum(xlogy(k, rate * t) - rate * t))\n", 0),
]

HONEST["beyond_the_chapter_loops"] = {
    "exponential_censored_mle":
        "def exponential_censored_mle(x, censored):\n"
        "    events, total = 0, 0.0\n"
        "    for time, cut in zip(x, censored):\n"
        "        total += float(time)\n"
        "        if not cut:\n"
        "            events += 1\n"
        "    return events / total if events else 0\n",
    "poisson_rate_mle":
        "import math\n"
        "def poisson_rate_mle(counts, exposure):\n"
        "    counts, exposure = list(counts), list(exposure)\n"
        "    rate = sum(counts) / sum(exposure)\n"
        "    total = 0.0\n"
        "    for k, t in zip(counts, exposure):\n"
        "        k = int(k)\n"
        "        total -= rate * t + math.lgamma(k + 1)\n"
        "        if k > 0:\n"
        "            total += k * math.log(rate * t)\n"
        "    return [rate, total]\n",
}
HONEST["beyond_the_chapter_scipy"] = {
    # scipy.special's xlogy and loggamma (scipy.stats.poisson is forbidden: it is the
    # whole task); numpy scalars and a tuple of 0-d arrays.
    "poisson_rate_mle":
        "import numpy as np\n"
        "from scipy import special\n"
        "def poisson_rate_mle(counts, exposure):\n"
        "    k = np.asarray(counts); t = np.asarray(exposure, float)\n"
        "    rate = k.sum() / t.sum()\n"
        "    m = rate * t\n"
        "    log_pmf = special.xlogy(k, m) - m - special.loggamma(k + 1.0)\n"
        "    return np.array(rate), np.array(log_pmf.sum())\n",
    "exponential_censored_mle":
        "import numpy as np\n"
        "def exponential_censored_mle(x, censored):\n"
        "    observed = 1 - np.asarray(censored, dtype=int)\n"
        "    return np.float64(observed.sum() / np.sum(x)) if observed.any() else np.float64(0)\n",
}

# Answers a student might try instead of solving the task: {label: (task, answer, score)}.
# Each must score below the task's full marks (12); the score is derived from which cells the
# answer passes.
SHORTCUTS = {
    # The uncensored estimate of section 7's derivation, N / sum(x), ignoring the flags: wrong
    # whenever something is censored (both visible cells, both hidden cells).
    "censoring_ignored": ("exponential_censored_mle",
                          "import numpy as np\n"
                          "def exponential_censored_mle(x, censored):\n"
                          "    return float(1 / np.mean(x))\n", 0),
    # Censored observations thrown away: events / (time of the observed waits only). Right
    # only when nothing or everything is censored; every cell has a partly censored case.
    "censored_dropped": ("exponential_censored_mle",
                         "import numpy as np\n"
                         "def exponential_censored_mle(x, censored):\n"
                         "    x = np.asarray(x, float); obs = ~np.asarray(censored, bool)\n"
                         "    return float(obs.sum() / x[obs].sum()) if obs.any() else 0.0\n", 0),
    # The average of the shift rates k_n / t_n: right only for equal exposures, which only the
    # visible large-count cell has (2 points).
    "rate_average": ("poisson_rate_mle",
                     "import numpy as np\n"
                     "from scipy.special import gammaln, xlogy\n"
                     "def poisson_rate_mle(counts, exposure):\n"
                     "    k = np.asarray(counts, float); t = np.asarray(exposure, float)\n"
                     "    rate = np.mean(k / t)\n"
                     "    return float(rate), float(np.sum(xlogy(k, rate * t) - rate * t\n"
                     "                                     - gammaln(k + 1)))\n", 2),
    # Exposures ignored (the Poisson MLE of plain counts, mean(k)): same cells as above.
    "exposure_ignored": ("poisson_rate_mle",
                         "import numpy as np\n"
                         "from scipy.special import gammaln, xlogy\n"
                         "def poisson_rate_mle(counts, exposure):\n"
                         "    k = np.asarray(counts, float); t = np.asarray(exposure, float)\n"
                         "    rate = k.mean()\n"
                         "    return float(rate), float(np.sum(xlogy(k, rate * t) - rate * t\n"
                         "                                     - gammaln(k + 1)))\n", 2),
    # The naive formula log(mu^k e^-mu / k!): right for small counts (visible example 2, hidden
    # random 4), inf/nan for counts in the hundreds (visible large case, hidden edge).
    "naive_pmf": ("poisson_rate_mle",
                  "import numpy as np\n"
                  "from scipy.special import factorial\n"
                  "def poisson_rate_mle(counts, exposure):\n"
                  "    k = np.asarray(counts, float); t = np.asarray(exposure, float)\n"
                  "    rate = k.sum() / t.sum(); mu = rate * t\n"
                  "    return float(rate), float(np.sum(np.log(mu ** k * np.exp(-mu) /"
                  " factorial(k))))\n",
                  6),
    # log k! as np.log(factorial(k)): overflows to inf above k = 170, same cells as above.
    "log_of_factorial": ("poisson_rate_mle",
                         "import numpy as np\n"
                         "from scipy.special import factorial, xlogy\n"
                         "def poisson_rate_mle(counts, exposure):\n"
                         "    k = np.asarray(counts, float); t = np.asarray(exposure, float)\n"
                         "    rate = k.sum() / t.sum()\n"
                         "    return float(rate), float(np.sum(xlogy(k, rate * t) - rate * t\n"
                         "                                     - np.log(factorial(k))))\n", 6),
}
