"""Hand-written answers for the `bayes` assignment, used by tests/test_assignments.py.

WRONG: per task, plausible mistakes with the task score each must get (derived from which of
the task's test cells the mistake fails). Points per task: model_posterior 1 visible + 1 hidden
(random) + 2 log space (a visible check, then hidden cases); beta_map 1 visible + 1 ValueError
+ 2 hidden; gaussian_mean_posterior 1 visible + 2 hidden + 1 no data (a visible check, then hidden
cases); beta_posterior, posterior_predictive_heads and beta_credible_interval 1 visible + 1 visible
edge case + 2 hidden.
HONEST: correct answers written differently from the reference; each must get full marks.
SHORTCUTS (at the end): answers that avoid a task's own step (another formula, the naive
unstable one, the chapter's printed function where the task needs one more step), as
{label: (task, answer, score)}; each score is derived from the cells the answer passes and is
below the task's full marks.
"""


MODULE = "bayes"

#: Shortcuts through a call the task forbids (metadata.mlcourse.forbidden of the notebook), as
#: {task: [(answer, the call the feedback must name)]}: each earns its task nothing, by name
#: (aliases, getattr, importlib) or, when the name is built at run time, by the sandbox's watch.
FORBIDDEN_SHORTCUTS = {
    "model_posterior": [
        # scipy's source run again to get an unwatched copy (with an honest fallback): the copy
        # is refused, and the attempt is reported as the call.
        ("import importlib\n"
         "import numpy as np\n"
         "module = importlib.import_module('scipy.special._log' + 'sumexp')\n"
         "try:\n"
         "    copy = {}\n"
         "    exec(open(module.__file__).read(), copy)\n"
         "    lse = copy[''.join(reversed('pxemusgol'))]\n"
         "except Exception:\n"
         "    lse = lambda a: np.max(a) + np.log(np.sum(np.exp(a - np.max(a))))\n"
         "def model_posterior(log_likelihoods, prior):\n"
         "    with np.errstate(divide='ignore'):\n"
         "        a = np.asarray(log_likelihoods, float) + np.log(np.asarray(prior, float))\n"
         "    return np.exp(a - lse(a))\n", "scipy.special.logsumexp"),
        ("import importlib\n"
         "import numpy as np\n"
         "sp = importlib.import_module('scipy.special')\n"
         "def model_posterior(log_likelihoods, prior):\n"
         "    with np.errstate(divide='ignore'):\n"
         "        a = np.asarray(log_likelihoods, float) + np.log(np.asarray(prior, float))\n"
         "    return np.exp(a - sp.logsumexp(a))\n", "scipy.special.logsumexp"),
        # numpy's logsumexp: the reduction of the ufunc logaddexp.
        ("import numpy as np\n"
         "def model_posterior(log_likelihoods, prior):\n"
         "    with np.errstate(divide='ignore'):\n"
         "        a = np.asarray(log_likelihoods, float) + np.log(np.asarray(prior, float))\n"
         "    return np.exp(a - np.logaddexp.reduce(a))\n", "numpy.logaddexp"),
        ("import numpy as np\n"
         "def model_posterior(log_likelihoods, prior):\n"
         "    with np.errstate(divide='ignore'):\n"
         "        a = np.asarray(log_likelihoods, float) + np.log(np.asarray(prior, float))\n"
         "    add = getattr(np, ''.join(reversed('pxeddagol')))\n"
         "    total = a[0]\n"
         "    for value in a[1:]:\n"
         "        total = add(total, value)\n"
         "    return np.exp(a - total)\n", "numpy.logaddexp"),
        ("import numpy as np\n"
         "def model_posterior(log_likelihoods, prior):\n"
         "    with np.errstate(divide='ignore'):\n"
         "        a = np.asarray(log_likelihoods, float) + np.log(np.asarray(prior, float))\n"
         "    return np.exp(a - getattr(np, ''.join(reversed('pxeddagol'))).reduce(a))\n",
         "numpy.logaddexp"),
    ],
    "beta_credible_interval": [
        # A frozen distribution's method, reached through a name built at run time.
        ("import scipy.stats as st\n"
         "def beta_credible_interval(a, b, mass=0.95):\n"
         "    dist = getattr(st, 'ateb'[::-1] + ' '.strip())(a, b)\n"
         "    lo, hi = getattr(dist, str.lower('INTERVAL') + chr(32).strip())(mass)\n"
         "    return float(lo), float(hi)\n", "scipy.stats.beta.interval"),
    ],
    "posterior_predictive_heads": [
        # The posterior mean by any of scipy.stats.beta's methods: stats, moment, expect ...
        ("from scipy import stats\n"
         "def posterior_predictive_heads(a, b, n_heads, n_tails):\n"
         "    return float(stats.beta.stats(a + n_heads, b + n_tails, moments='m'))\n",
         "scipy.stats.beta"),
        ("import scipy.stats\n"
         "def posterior_predictive_heads(a, b, n_heads, n_tails):\n"
         "    dist = getattr(scipy.stats, ''.join(reversed('ateb')))\n"
         "    moment = getattr(dist, ''.join(reversed('tnemom')))\n"
         "    return float(moment(1, a + n_heads, b + n_tails))\n",
         "scipy.stats.beta"),
        # The new distribution classes of scipy.stats have a mean too.
        ("from scipy import stats\n"
         "def posterior_predictive_heads(a, b, n_heads, n_tails):\n"
         "    Beta = stats.make_distribution(stats.beta)\n"
         "    return float(Beta(a=a + n_heads, b=b + n_tails).mean())\n",
         "scipy.stats.make_distribution"),
    ],
    "beta_bernoulli_log_evidence": [
        # The Dirichlet-multinomial (Beta-binomial) pmf of the counts, less the log number of
        # orderings; the name built at run time.
        ("import scipy.stats\n"
         "from scipy import special\n"
         "def beta_bernoulli_log_evidence(a, b, n_heads, n_tails):\n"
         "    n = n_heads + n_tails\n"
         "    dist = getattr(scipy.stats, '_'.join(['dirichlet', 'multinomial']))\n"
         "    log_pmf = dist.logpmf([n_heads, n_tails], [a, b], n)\n"
         "    return float(log_pmf - special.gammaln(n + 1) + special.gammaln(n_heads + 1)\n"
         "                 + special.gammaln(n_tails + 1))\n",
         "scipy.stats.dirichlet_multinomial"),
    ],
}

WRONG = {
    "model_posterior": [
        # Naive exp-normalise: right on the lecture and on log-likelihoods above -745, 0/0 = nan
        # once every log-likelihood is below -1000.
        ("import numpy as np\n"
         "def model_posterior(log_likelihoods, prior):\n"
         "    joint = np.exp(np.asarray(log_likelihoods, float)) * np.asarray(prior, float)\n"
         "    return joint / joint.sum()\n", 2),
        # Shifts by the largest log-likelihood but multiplies by the prior afterwards: fails
        # only when the best model has prior 0 and the others are far below it.
        ("import numpy as np\n"
         "def model_posterior(log_likelihoods, prior):\n"
         "    ll = np.asarray(log_likelihoods, float)\n"
         "    joint = np.exp(ll - ll.max()) * np.asarray(prior, float)\n"
         "    return joint / joint.sum()\n", 2),
        # Forgets the prior (stable, but a uniform prior is assumed).
        ("import numpy as np\n"
         "from scipy.special import logsumexp\n"
         "def model_posterior(log_likelihoods, prior):\n"
         "    ll = np.asarray(log_likelihoods, float)\n"
         "    return np.exp(ll - logsumexp(ll))\n", 0),
        # Adds the prior itself instead of its log.
        ("import numpy as np\n"
         "from scipy.special import logsumexp\n"
         "def model_posterior(log_likelihoods, prior):\n"
         "    lj = np.asarray(log_likelihoods, float) + np.asarray(prior, float)\n"
         "    return np.exp(lj - logsumexp(lj))\n", 0),
    ],
    "beta_posterior": [
        # Heads added to b and tails to a (right with no data, wrong with fractional counts).
        ("def beta_posterior(a, b, n_heads, n_tails):\n"
         "    return a + n_tails, b + n_heads\n", 0),
        # Off by one: the Beta exponents a - 1 + N_H instead of the parameters.
        ("def beta_posterior(a, b, n_heads, n_tails):\n"
         "    return a + n_heads - 1, b + n_tails - 1\n", 0),
    ],
    "beta_map": [
        # The seed's wrong formula (a - 1) / (b - a), with the right validation.
        ("def beta_map(a, b):\n"
         "    if a <= 1 or b <= 1:\n"
         "        raise ValueError('a and b must be > 1')\n"
         "    return (a - 1) / (b - a)\n", 1),
        # The right formula without the validation.
        ("def beta_map(a, b):\n"
         "    return (a - 1) / (a + b - 2)\n", 3),
        # Off-by-one in the check: a < 1 instead of a <= 1 (Beta(1, 1) gives 0/0).
        ("def beta_map(a, b):\n"
         "    if a < 1 or b < 1:\n"
         "        raise ValueError('a and b must be > 1')\n"
         "    return (a - 1) / (a + b - 2)\n", 3),
        # The posterior mean instead of the mode.
        ("def beta_map(a, b):\n"
         "    if a <= 1 or b <= 1:\n"
         "        raise ValueError('a and b must be > 1')\n"
         "    return a / (a + b)\n", 1),
    ],
    "posterior_predictive_heads": [
        # Plug-in MAP estimate instead of the posterior mean (fails everywhere, also with no data).
        ("def posterior_predictive_heads(a, b, n_heads, n_tails):\n"
         "    return (n_heads + a - 1) / (n_heads + n_tails + a + b - 2)\n", 0),
        # Plug-in maximum likelihood: no prior.
        ("def posterior_predictive_heads(a, b, n_heads, n_tails):\n"
         "    return n_heads / (n_heads + n_tails)\n", 0),
        # Forgets b in the denominator.
        ("def posterior_predictive_heads(a, b, n_heads, n_tails):\n"
         "    return (n_heads + a) / (n_heads + n_tails + a)\n", 0),
    ],
    "beta_credible_interval": [
        # Quantiles 1 - mass and mass: the tails are not halved.
        ("from scipy import stats\n"
         "def beta_credible_interval(a, b, mass=0.95):\n"
         "    return tuple(stats.beta.ppf([1 - mass, mass], a, b))\n", 0),
        # Ignores mass: always the 95 % interval.
        ("from scipy import stats\n"
         "def beta_credible_interval(a, b, mass=0.95):\n"
         "    return tuple(stats.beta.ppf([0.025, 0.975], a, b))\n", 0),
        # a and b swapped (right for symmetric Beta(1, 1) only; wrong for Beta(1/2, 1)).
        ("from scipy import stats\n"
         "def beta_credible_interval(a, b, mass=0.95):\n"
         "    t = (1 - mass) / 2\n"
         "    return tuple(stats.beta.ppf([t, 1 - t], b, a))\n", 0),
        # Normal approximation: mean +- z * sd.
        ("import numpy as np\n"
         "from scipy import stats\n"
         "def beta_credible_interval(a, b, mass=0.95):\n"
         "    m = a / (a + b); sd = np.sqrt(a * b / ((a + b) ** 2 * (a + b + 1)))\n"
         "    z = stats.norm.ppf((1 + mass) / 2)\n"
         "    return m - z * sd, m + z * sd\n", 0),
    ],
    "gaussian_mean_posterior": [
        # Forgets N in the precision.
        ("import numpy as np\n"
         "def gaussian_mean_posterior(x, sigma2, mu0, tau2):\n"
         "    x = np.asarray(x, float)\n"
         "    t = 1 / (1 / tau2 + 1 / sigma2)\n"
         "    return t * (mu0 / tau2 + x.sum() / sigma2), t\n", 0),
        # Sample-mean form: right whenever N >= 1, nan for no data (mean of an empty array).
        ("import numpy as np\n"
         "def gaussian_mean_posterior(x, sigma2, mu0, tau2):\n"
         "    x = np.asarray(x, float); n = len(x)\n"
         "    w = sigma2 / (sigma2 + n * tau2)\n"
         "    return w * mu0 + (1 - w) * x.mean(), tau2 * sigma2 / (sigma2 + n * tau2)\n", 3),
        # sigma2 and tau2 swapped.
        ("import numpy as np\n"
         "def gaussian_mean_posterior(x, sigma2, mu0, tau2):\n"
         "    x = np.asarray(x, float); n = len(x)\n"
         "    t = 1 / (1 / sigma2 + n / tau2)\n"
         "    return t * (mu0 / sigma2 + x.sum() / tau2), t\n", 0),
    ],
}

HONEST = {
    "loops": {
        "model_posterior":
            "import math\n"
            "def model_posterior(log_likelihoods, prior):\n"
            "    joint = []\n"
            "    for ll, p in zip(log_likelihoods, prior):\n"
            "        joint.append(ll + math.log(p) if p > 0 else -math.inf)\n"
            "    top = max(joint)\n"
            "    total = 0.0\n"
            "    for v in joint:\n"
            "        total += math.exp(v - top)\n"
            "    return [math.exp(v - top) / total for v in joint]\n",
        "gaussian_mean_posterior":
            "def gaussian_mean_posterior(x, sigma2, mu0, tau2):\n"
            "    precision = 1 / tau2\n"
            "    weighted = mu0 / tau2\n"
            "    for v in x:\n"
            "        precision += 1 / sigma2\n"
            "        weighted += v / sigma2\n"
            "    return [weighted / precision, 1 / precision]\n",
        # Bisection on the regularised incomplete beta function instead of ppf.
        "beta_credible_interval":
            "from scipy.special import betainc\n"
            "def beta_credible_interval(a, b, mass=0.95):\n"
            "    def quantile(q):\n"
            "        lo, hi = 0.0, 1.0\n"
            "        for _ in range(200):\n"
            "            mid = (lo + hi) / 2\n"
            "            if betainc(a, b, mid) < q:\n"
            "                lo = mid\n"
            "            else:\n"
            "                hi = mid\n"
            "        return (lo + hi) / 2\n"
            "    return quantile((1 - mass) / 2), quantile((1 + mass) / 2)\n",
        "beta_posterior":
            "def beta_posterior(a, b, n_heads, n_tails):\n"
            "    params = [a, b]\n"
            "    params[0] += n_heads\n"
            "    params[1] += n_tails\n"
            "    return params\n",
    },
    "scipy_and_lists": {
        # scipy's softmax; log(0) emits a RuntimeWarning for a zero prior.
        "model_posterior":
            "import numpy as np\n"
            "from scipy.special import softmax\n"
            "def model_posterior(log_likelihoods, prior):\n"
            "    return softmax(np.asarray(log_likelihoods, float) + np.log(prior))\n",
        "beta_credible_interval":
            "from scipy import stats\n"
            "def beta_credible_interval(a, b, mass=0.95):\n"
            "    return stats.beta.interval(mass, a, b)\n",
        "posterior_predictive_heads":
            "from scipy import stats\n"
            "def posterior_predictive_heads(a, b, n_heads, n_tails):\n"
            "    return stats.beta(a + n_heads, b + n_tails).mean()\n",
        "beta_map":
            "import numpy as np\n"
            "def beta_map(a, b):\n"
            "    if not (a > 1 and b > 1):\n"
            "        raise ValueError(f'need a > 1 and b > 1, got {a}, {b}')\n"
            "    a1, b1 = np.float64(a) - 1, np.float64(b) - 1\n"
            "    return a1 / (a1 + b1)\n",
        # A 1-D array instead of a pair.
        "gaussian_mean_posterior":
            "import numpy as np\n"
            "def gaussian_mean_posterior(x, sigma2, mu0, tau2):\n"
            "    x = np.asarray(x, float)\n"
            "    tau2_n = 1 / (1 / tau2 + x.size / sigma2)\n"
            "    return np.array([tau2_n * (mu0 / tau2 + x.sum() / sigma2), tau2_n])\n",
    },
    "warnings_and_prints": {
        "model_posterior":
            "import numpy as np, warnings\n"
            "from scipy.special import logsumexp\n"
            "def model_posterior(log_likelihoods, prior):\n"
            "    warnings.warn('a harmless warning from the student')\n"
            "    lj = np.asarray(log_likelihoods, float) + np.log(np.asarray(prior, float))\n"
            "    return np.exp(lj - logsumexp(lj))\n",
        "beta_map":
            "import sys\n"
            "def beta_map(a, b):\n"
            "    print('mode of Beta', a, b, file=sys.stderr)\n"
            "    if a <= 1 or b <= 1:\n"
            "        raise ValueError('no interior mode')\n"
            "    return (a - 1) / (a + b - 2)\n",
        "posterior_predictive_heads":
            "import numpy as np\n"
            "def posterior_predictive_heads(a, b, n_heads, n_tails):\n"
            "    print('predicting')\n"
            "    return np.array((n_heads + a) / (n_heads + n_tails + a + b))\n",
    },
}

# The two tasks beyond the chapter: each has a visible worked example (2 points), a visible edge
# or large-count case (2), and two hidden cells (4 + 4: random inputs, and edge cases).

WRONG["gamma_poisson_posterior"] = [
    # Counts and hours swapped in the update (hours added to alpha, counts to beta): the visible
    # edge cell's empty data would pass, but its second case does not, so every cell fails.
    ("import numpy as np\n"
     "def gamma_poisson_posterior(alpha, beta, counts, exposure=None):\n"
     "    k = np.asarray(counts, float)\n"
     "    t = np.ones_like(k) if exposure is None else np.asarray(exposure, float)\n"
     "    return float(alpha + t.sum()), float(beta + k.sum())\n", 0),
]
WRONG["beta_bernoulli_log_evidence"] = [
    # The prior's normaliser forgotten: log B(a + N_H, b + N_T) alone. Right only when
    # B(a, b) = 1 (a = b = 1), which every cell mixes with other priors.
    ("from scipy.special import betaln\n"
     "def beta_bernoulli_log_evidence(a, b, n_heads, n_tails):\n"
     "    return float(betaln(a + n_heads, b + n_tails))\n", 0),
]

HONEST["beyond_the_chapter_loops"] = {
    "gamma_poisson_posterior":
        "def gamma_poisson_posterior(alpha, beta, counts, exposure=None):\n"
        "    counts = list(counts)\n"
        "    if exposure is None:\n"
        "        exposure = [1] * len(counts)\n"
        "    for k, t in zip(counts, exposure):\n"
        "        alpha, beta = alpha + k, beta + t\n"
        "    return [alpha, beta]\n",
    # The evidence as the product of sequential posterior predictives (heads first, then tails:
    # the order does not matter), summed in log space.
    "beta_bernoulli_log_evidence":
        "import math\n"
        "def beta_bernoulli_log_evidence(a, b, n_heads, n_tails):\n"
        "    total, h, t = 0.0, 0, 0\n"
        "    for _ in range(int(n_heads)):\n"
        "        total += math.log((a + h) / (a + b + h + t)); h += 1\n"
        "    for _ in range(int(n_tails)):\n"
        "        total += math.log((b + t) / (a + b + h + t)); t += 1\n"
        "    return total\n",
}
HONEST["beyond_the_chapter_gammaln"] = {
    "beta_bernoulli_log_evidence":
        "import numpy as np\n"
        "from scipy.special import gammaln\n"
        "def beta_bernoulli_log_evidence(a, b, n_heads, n_tails):\n"
        "    n = n_heads + n_tails\n"
        "    return np.array(gammaln(a + n_heads) + gammaln(b + n_tails) - gammaln(a + b + n)\n"
        "                    - gammaln(a) - gammaln(b) + gammaln(a + b))\n",
    "gamma_poisson_posterior":
        "import numpy as np\n"
        "def gamma_poisson_posterior(alpha, beta, counts, exposure=None):\n"
        "    hours = len(counts) if exposure is None else np.sum(exposure)\n"
        "    return np.float64(alpha + np.sum(counts)), np.array(beta + hours, dtype=float)\n",
}

# Answers a student might try instead of solving the task: {label: (task, answer, score)}.
# Each must score below the task's full marks (12); the score is derived from which cells the
# answer passes.
SHORTCUTS = {
    # Section 7's update without exposures (beta + N): right only with no data or one-hour
    # periods; each cell has a case with exposures.
    "exposure_ignored": ("gamma_poisson_posterior",
                         "import numpy as np\n"
                         "def gamma_poisson_posterior(alpha, beta, counts, exposure=None):\n"
                         "    k = np.asarray(counts, float)\n"
                         "    return float(alpha + k.sum()), float(beta + k.size)\n", 0),
    # The Beta-Bernoulli update of the chapter read as (alpha + heads, beta + tails) with
    # "tails" = hours - counts: right only when every count is 0, as in both cases of the
    # visible edge cell (2 points); the other cells have e-mails.
    "beta_update": ("gamma_poisson_posterior",
                    "import numpy as np\n"
                    "def gamma_poisson_posterior(alpha, beta, counts, exposure=None):\n"
                    "    k = np.asarray(counts, float)\n"
                    "    t = np.ones_like(k) if exposure is None else np.asarray(exposure, float)\n"
                    "    return float(alpha + k.sum()), float(beta + t.sum() - k.sum())\n", 2),
    # The naive formula log(B(a + N_H, b + N_T) / B(a, b)) with scipy's beta function: right
    # for short sequences (visible example 2, hidden random 4), -inf once the evidence
    # underflows (visible edge with 5000 flips, hidden edge).
    "naive_beta": ("beta_bernoulli_log_evidence",
                   "import numpy as np\n"
                   "from scipy.special import beta\n"
                   "def beta_bernoulli_log_evidence(a, b, n_heads, n_tails):\n"
                   "    return float(np.log(beta(a + n_heads, b + n_tails) / beta(a, b)))\n", 6),
    # The evidence of the count (any order): the binomial coefficient added. Right when it is 1
    # (no flips, all heads), which no cell has alone.
    "count_not_sequence": ("beta_bernoulli_log_evidence",
                           "from scipy.special import betaln, gammaln\n"
                           "def beta_bernoulli_log_evidence(a, b, n_heads, n_tails):\n"
                           "    n = n_heads + n_tails\n"
                           "    log_comb = gammaln(n + 1) - gammaln(n_heads + 1) -"
                           " gammaln(n_tails + 1)\n"
                           "    return float(log_comb + betaln(a + n_heads, b +"
                           " n_tails) - betaln(a, b))\n",
                           0),
    # The likelihood at the chapter's printed estimate (posterior mean plugged in) instead of
    # the integral: too large everywhere but on empty data.
    "plug_in_posterior_mean": ("beta_bernoulli_log_evidence",
                               "import numpy as np\n"
                               "from scipy.special import xlogy, xlog1py\n"
                               "def beta_bernoulli_log_evidence(a, b, n_heads, n_tails):\n"
                               "    m = (a + n_heads) / (a + b + n_heads + n_tails)\n"
                               "    return float(xlogy(n_heads, m) + xlog1py(n_tails, -m))\n", 0),
}
