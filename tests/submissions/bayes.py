"""Hand-written answers for the `bayes` assignment, used by tests/test_assignments.py.

WRONG: per task, plausible mistakes with the task score each must get (derived from which of
the task's test cells the mistake fails). Points per task: model_posterior 1 visible + 1 hidden
(random) + 2 log space (a visible check, then hidden cases); beta_map 1 visible + 1 ValueError
+ 2 hidden; gaussian_mean_posterior 1 visible + 2 hidden + 1 no data (a visible check, then hidden
cases); beta_posterior, posterior_predictive_heads and beta_credible_interval 1 visible + 1 visible
edge case + 2 hidden.
HONEST: correct answers written differently from the reference; each must get full marks.
"""

MODULE = "bayes"

#: Shortcuts through a call the task forbids (metadata.mlcourse.forbidden of the notebook), as
#: {task: [(answer, the call the feedback must name)]}: each earns its task nothing, by name
#: (aliases, getattr, importlib) or, when the name is built at run time, by the sandbox's watch.
FORBIDDEN_SHORTCUTS = {
    "model_posterior": [
        ("import importlib\n"
         "import numpy as np\n"
         "sp = importlib.import_module('scipy.special')\n"
         "def model_posterior(log_likelihoods, prior):\n"
         "    with np.errstate(divide='ignore'):\n"
         "        a = np.asarray(log_likelihoods, float) + np.log(np.asarray(prior, float))\n"
         "    return np.exp(a - sp.logsumexp(a))\n", "scipy.special.logsumexp"),
    ],
    "beta_credible_interval": [
        # A frozen distribution's method, reached through a name built at run time.
        ("import scipy.stats as st\n"
         "def beta_credible_interval(a, b, mass=0.95):\n"
         "    dist = getattr(st, 'ateb'[::-1] + ' '.strip())(a, b)\n"
         "    lo, hi = getattr(dist, str.lower('INTERVAL') + chr(32).strip())(mass)\n"
         "    return float(lo), float(hi)\n", "scipy.stats.beta.interval"),
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
