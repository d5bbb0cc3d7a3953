"""Hand-written answers for the `naive_bayes` assignment, used by tests/test_assignments.py.

WRONG: per task, plausible mistakes with the task score each must get (derived from which of
the task's test cells the mistake fails). Points per task: fit_bernoulli_nb,
predict_proba_from_log_joint and fit_gaussian_nb 1 visible + 1 visible edge case + 2 hidden;
bernoulli_nb_log_joint 1 visible + 1 hidden (random, D up to 1500) + 2 theta exactly 0 or 1 (a
visible check, then hidden cases); nb_linear_weights 1 visible + 1 visible (raises ValueError)
+ 2 hidden.
HONEST: correct answers written differently from the reference; each must get full marks.
SHORTCUTS (at the end): answers that avoid a task's own step (another formula, the naive
unstable one, the chapter's printed function where the task needs one more step), as
{label: (task, answer, score)}; each score is derived from the cells the answer passes and is
below the task's full marks.
"""

MODULE = "naive_bayes"

#: Shortcuts through a call the task forbids (metadata.mlcourse.forbidden of the notebook), as
#: {task: [(answer, the call the feedback must name)]}: each earns its task nothing, by name
#: (aliases, getattr, importlib) or, when the name is built at run time, by the sandbox's watch.
FORBIDDEN_SHORTCUTS = {
    "predict_proba_from_log_joint": [
        ("import numpy as np\n"
         "import scipy.special as ss\n"
         "def predict_proba_from_log_joint(log_joint):\n"
         "    return ss.softmax(np.asarray(log_joint, float), axis=1)\n",
         "scipy.special.softmax"),
        # numpy's logsumexp: the reduction of the ufunc logaddexp.
        ("import numpy as np\n"
         "def predict_proba_from_log_joint(log_joint):\n"
         "    L = np.asarray(log_joint, float)\n"
         "    return np.exp(L - np.logaddexp.reduce(L, axis=1, keepdims=True))\n",
         "numpy.logaddexp"),
    ],
    "bernoulli_nb_log_joint": [
        # -rel_entr(x, t) = x log t for x in {0, 1} (0 log 0 = 0 included).
        ("import numpy as np\n"
         "from scipy import special\n"
         "def bernoulli_nb_log_joint(X, log_prior, theta):\n"
         "    X = np.asarray(X, float)[:, None, :]; t = np.asarray(theta, float)[None]\n"
         "    terms = special.rel_entr(X, t) + special.rel_entr(1 - X, 1 - t)\n"
         "    return np.asarray(log_prior, float) - terms.sum(axis=2)\n",
         "scipy.special.rel_entr"),
        # A binomial with one trial is a Bernoulli; the name built at run time.
        ("import numpy as np\n"
         "import scipy.stats\n"
         "def bernoulli_nb_log_joint(X, log_prior, theta):\n"
         "    X = np.asarray(X, float)[:, None, :]; t = np.asarray(theta, float)[None]\n"
         "    dist = getattr(scipy.stats, ''.join(reversed('monib')))\n"
         "    return np.asarray(log_prior, float) + dist.logpmf(X, 1, t).sum(axis=2)\n",
         "scipy.stats.binom"),
    ],
    "fit_bernoulli_nb": [
        ("import numpy as np\n"
         "def fit_bernoulli_nb(X, y, alpha=1.0):\n"
         "    from sklearn.naive_bayes import BernoulliNB\n"
         "    m = BernoulliNB(alpha=alpha, force_alpha=True).fit(X, y)\n"
         "    return m.classes_, m.class_log_prior_, np.exp(m.feature_log_prob_)\n",
         "sklearn"),
    ],
}

WRONG = {
    "fit_bernoulli_nb": [
        # Off by one in the smoothing: N_c + alpha instead of N_c + 2 alpha (visible alpha=1 and
        # edge alpha=0.5 fail).
        ("import numpy as np\n"
         "def fit_bernoulli_nb(X, y, alpha=1.0):\n"
         "    X = np.asarray(X, float); y = np.asarray(y)\n"
         "    classes = np.unique(y)\n"
         "    theta = np.array([(X[y == c].sum(0) + alpha) / ((y == c).sum() + alpha) "
         "for c in classes])\n"
         "    return classes, np.log([(y == c).mean() for c in classes]), theta\n", 0),
        # Classes in order of first appearance instead of sorted ('spam' comes first).
        ("import numpy as np\n"
         "def fit_bernoulli_nb(X, y, alpha=1.0):\n"
         "    X = np.asarray(X, float); y = np.asarray(y)\n"
         "    classes = np.array(list(dict.fromkeys(y.tolist())))\n"
         "    theta = np.array([(X[y == c].sum(0) + alpha) / ((y == c).sum() + 2 * alpha) "
         "for c in classes])\n"
         "    return classes, np.log([(y == c).mean() for c in classes]), theta\n", 0),
        # The class prior smoothed too: log((N_c + alpha) / (N + C alpha)) (wrong for alpha > 0).
        ("import numpy as np\n"
         "def fit_bernoulli_nb(X, y, alpha=1.0):\n"
         "    X = np.asarray(X, float); y = np.asarray(y)\n"
         "    classes, counts = np.unique(y, return_counts=True)\n"
         "    theta = np.array([(X[y == c].sum(0) + alpha) / ((y == c).sum() + 2 * alpha) "
         "for c in classes])\n"
         "    log_prior = np.log((counts + alpha) / (len(y) + len(classes) * alpha))\n"
         "    return classes, log_prior, theta\n", 0),
        # Ignores alpha: always add-one smoothing (the visible alpha=0 call fails).
        ("import numpy as np\n"
         "def fit_bernoulli_nb(X, y, alpha=1.0):\n"
         "    X = np.asarray(X, float); y = np.asarray(y)\n"
         "    classes = np.unique(y)\n"
         "    theta = np.array([(X[y == c].sum(0) + 1) / ((y == c).sum() + 2) for c in classes])\n"
         "    return classes, np.log([(y == c).mean() for c in classes]), theta\n", 0),
    ],
    "bernoulli_nb_log_joint": [
        # Unstable logs: 0 * log(0) = nan in the matrix products when theta is exactly 0 or 1.
        ("import numpy as np\n"
         "def bernoulli_nb_log_joint(X, log_prior, theta):\n"
         "    X = np.asarray(X, float); theta = np.asarray(theta, float)\n"
         "    return (np.asarray(log_prior) + X @ np.log(theta).T\n"
         "            + (1 - X) @ np.log(1 - theta).T)\n", 2),
        # Product of probabilities, then the log: underflows to -inf with D = 1500 features.
        ("import numpy as np\n"
         "def bernoulli_nb_log_joint(X, log_prior, theta):\n"
         "    X = np.asarray(X, float); theta = np.asarray(theta, float)\n"
         "    p = theta[None] ** X[:, None] * (1 - theta[None]) ** (1 - X[:, None])\n"
         "    with np.errstate(divide='ignore'):\n"
         "        return np.asarray(log_prior) + np.log(p.prod(axis=2))\n", 3),
        # The prior is forgotten.
        ("import numpy as np\n"
         "from scipy.special import xlogy, xlog1py\n"
         "def bernoulli_nb_log_joint(X, log_prior, theta):\n"
         "    X = np.asarray(X, float)[:, None, :]; theta = np.asarray(theta, float)[None]\n"
         "    return (xlogy(X, theta) + xlog1py(1 - X, -theta)).sum(axis=2)\n", 0),
        # Only the words that occur: the (1 - x_d) log(1 - theta) terms are missing.
        ("import numpy as np\n"
         "def bernoulli_nb_log_joint(X, log_prior, theta):\n"
         "    X = np.asarray(X, float); theta = np.asarray(theta, float)\n"
         "    return np.asarray(log_prior) + X @ np.log(theta).T\n", 0),
    ],
    "predict_proba_from_log_joint": [
        # Naive exp-normalise: 0/0 at -1e4, inf/inf at +1e3.
        ("import numpy as np\n"
         "def predict_proba_from_log_joint(log_joint):\n"
         "    p = np.exp(np.asarray(log_joint, float))\n"
         "    return p / p.sum(axis=1, keepdims=True)\n", 1),
        # Wrong axis: normalises each class over the samples.
        ("import numpy as np\n"
         "def predict_proba_from_log_joint(log_joint):\n"
         "    L = np.asarray(log_joint, float)\n"
         "    p = np.exp(L - L.max(axis=0, keepdims=True))\n"
         "    return p / p.sum(axis=0, keepdims=True)\n", 0),
        # One global maximum instead of one per row: rows near 0 and near -1e4 together fail
        # (the visible edge case and the hidden cell).
        ("import numpy as np\n"
         "def predict_proba_from_log_joint(log_joint):\n"
         "    L = np.asarray(log_joint, float)\n"
         "    p = np.exp(L - L.max())\n"
         "    return p / p.sum(axis=1, keepdims=True)\n", 1),
    ],
    "fit_gaussian_nb": [
        # Variances with N_c - 1.
        ("import numpy as np\n"
         "def fit_gaussian_nb(X, y, var_smoothing=0.0):\n"
         "    X = np.asarray(X, float); y = np.asarray(y)\n"
         "    classes = np.unique(y)\n"
         "    means = np.array([X[y == c].mean(0) for c in classes])\n"
         "    var = np.array([X[y == c].var(0, ddof=1) for c in classes])\n"
         "    var = var + var_smoothing * X.var(0).max()\n"
         "    return classes, np.log([(y == c).mean() for c in classes]), means, var\n", 0),
        # epsilon per feature (var_smoothing * Var(X[:, d])) instead of the largest variance
        # (right only with var_smoothing=0).
        ("import numpy as np\n"
         "def fit_gaussian_nb(X, y, var_smoothing=0.0):\n"
         "    X = np.asarray(X, float); y = np.asarray(y)\n"
         "    classes = np.unique(y)\n"
         "    means = np.array([X[y == c].mean(0) for c in classes])\n"
         "    var = np.array([X[y == c].var(0) for c in classes])\n"
         "    var = var + var_smoothing * X.var(0)\n"
         "    return classes, np.log([(y == c).mean() for c in classes]), means, var\n", 0),
        # epsilon = var_smoothing itself, not scaled by the data's variance.
        ("import numpy as np\n"
         "def fit_gaussian_nb(X, y, var_smoothing=0.0):\n"
         "    X = np.asarray(X, float); y = np.asarray(y)\n"
         "    classes = np.unique(y)\n"
         "    means = np.array([X[y == c].mean(0) for c in classes])\n"
         "    var = np.array([X[y == c].var(0) for c in classes]) + var_smoothing\n"
         "    return classes, np.log([(y == c).mean() for c in classes]), means, var\n", 0),
    ],
    "nb_linear_weights": [
        # w0 without the sum of log((1 - theta_1d) / (1 - theta_0d)); it does raise.
        ("import numpy as np\n"
         "def nb_linear_weights(log_prior, theta):\n"
         "    lp = np.asarray(log_prior, float); th = np.asarray(theta, float)\n"
         "    if np.any((th == 0) | (th == 1)):\n"
         "        raise ValueError('theta must be strictly between 0 and 1')\n"
         "    logit = np.log(th / (1 - th))\n"
         "    return float(lp[1] - lp[0]), logit[1] - logit[0]\n", 1),
        # Wrong sign: the log-odds of c0 against c1 (the lecture's slides' convention).
        ("import numpy as np\n"
         "def nb_linear_weights(log_prior, theta):\n"
         "    lp = np.asarray(log_prior, float); th = np.asarray(theta, float)\n"
         "    if np.any((th == 0) | (th == 1)):\n"
         "        raise ValueError('theta must be strictly between 0 and 1')\n"
         "    logit = np.log(th / (1 - th))\n"
         "    w0 = lp[0] - lp[1] + np.sum(np.log((1 - th[0]) / (1 - th[1])))\n"
         "    return float(w0), logit[0] - logit[1]\n", 1),
        # Right weights but no ValueError for theta exactly 0 or 1 (returns infinities).
        ("import numpy as np\n"
         "def nb_linear_weights(log_prior, theta):\n"
         "    lp = np.asarray(log_prior, float); th = np.asarray(theta, float)\n"
         "    with np.errstate(divide='ignore', invalid='ignore'):\n"
         "        logit = np.log(th) - np.log1p(-th)\n"
         "        w0 = lp[1] - lp[0] + np.sum(np.log1p(-th[1]) - np.log1p(-th[0]))\n"
         "    return float(w0), logit[1] - logit[0]\n", 3),
    ],
}

HONEST = {
    "loops": {
        "fit_bernoulli_nb":
            "import numpy as np\n"
            "def fit_bernoulli_nb(X, y, alpha=1.0):\n"
            "    X = np.asarray(X); y = np.asarray(y)\n"
            "    classes = np.unique(y)\n"
            "    log_prior, theta = [], []\n"
            "    for c in classes:\n"
            "        rows = X[y == c]\n"
            "        n_c = len(rows)\n"
            "        log_prior.append(np.log(n_c / len(y)))\n"
            "        theta.append([(sum(rows[:, d]) + alpha) / (n_c + 2 * alpha)\n"
            "                      for d in range(X.shape[1])])\n"
            "    return classes, np.array(log_prior), np.array(theta)\n",
        "bernoulli_nb_log_joint":
            "import math\n"
            "import numpy as np\n"
            "def bernoulli_nb_log_joint(X, log_prior, theta):\n"
            "    X = np.asarray(X); theta = np.asarray(theta, float)\n"
            "    out = np.empty((X.shape[0], theta.shape[0]))\n"
            "    for c in range(theta.shape[0]):\n"
            "        p = np.where(X == 1, theta[c], 1 - theta[c])  # probability of each x_d\n"
            "        with np.errstate(divide='ignore'):\n"
            "            out[:, c] = log_prior[c] + np.log(p).sum(axis=1)\n"
            "    return out\n",
        "predict_proba_from_log_joint":
            "import math\n"
            "def predict_proba_from_log_joint(log_joint):\n"
            "    result = []\n"
            "    for row in log_joint:\n"
            "        m = max(row)\n"
            "        e = [math.exp(v - m) for v in row]\n"
            "        s = sum(e)\n"
            "        result.append([v / s for v in e])\n"
            "    return result\n",
        "fit_gaussian_nb":
            "import numpy as np\n"
            "def fit_gaussian_nb(X, y, var_smoothing=0.0):\n"
            "    X = np.asarray(X, float); y = np.asarray(y)\n"
            "    classes = np.unique(y)\n"
            "    eps = var_smoothing * max(np.var(X[:, d]) for d in range(X.shape[1]))\n"
            "    priors, means, variances = [], [], []\n"
            "    for c in classes:\n"
            "        rows = X[y == c]\n"
            "        priors.append(np.log(len(rows) / len(X)))\n"
            "        means.append(rows.mean(axis=0))\n"
            "        variances.append(((rows - rows.mean(axis=0)) ** 2).mean(axis=0) + eps)\n"
            "    return classes, np.array(priors), np.array(means), np.array(variances)\n",
        "nb_linear_weights":
            "import math\n"
            "import numpy as np\n"
            "def nb_linear_weights(log_prior, theta):\n"
            "    (t0, t1) = np.asarray(theta, float)\n"
            "    w0 = log_prior[1] - log_prior[0]\n"
            "    w = []\n"
            "    for a, b in zip(t0, t1):\n"
            "        if a in (0.0, 1.0) or b in (0.0, 1.0):\n"
            "            raise ValueError('theta must be strictly between 0 and 1')\n"
            "        w0 += math.log((1 - b) / (1 - a))\n"
            "        w.append(math.log(b / (1 - b)) - math.log(a / (1 - a)))\n"
            "    return w0, w\n",
    },
    "scipy_and_lists": {
        "fit_bernoulli_nb":
            "import numpy as np\n"
            "def fit_bernoulli_nb(X, y, alpha=1.0):\n"
            "    X = np.asarray(X, float); y = np.asarray(y)\n"
            "    classes = sorted(set(y.tolist()))\n"
            "    onehot = (y[:, None] == np.array(classes)[None, :]).astype(float)\n"
            "    n_c = onehot.sum(0)\n"
            "    return [classes, list(np.log(n_c) - np.log(len(y))),\n"
            "            (onehot.T @ X + alpha) / (n_c[:, None] + 2 * alpha)]\n",
        "bernoulli_nb_log_joint":
            "import numpy as np\n"
            "from scipy.special import xlogy, xlog1py\n"
            "def bernoulli_nb_log_joint(X, log_prior, theta):\n"
            "    X = np.asarray(X, float)[:, None, :]; theta = np.asarray(theta, float)[None]\n"
            "    return np.asarray(log_prior) "
            "+ (xlogy(X, theta) + xlog1py(1 - X, -theta)).sum(axis=2)\n",
        "predict_proba_from_log_joint":
            "import numpy as np\n"
            "from scipy.special import softmax\n"
            "def predict_proba_from_log_joint(log_joint):\n"
            "    return softmax(np.asarray(log_joint, float), axis=1)\n",
        "fit_gaussian_nb":
            "import numpy as np\n"
            "from scipy import ndimage\n"
            "def fit_gaussian_nb(X, y, var_smoothing=0.0):\n"
            "    X = np.asarray(X, float); y = np.asarray(y)\n"
            "    classes, idx = np.unique(y, return_inverse=True)\n"
            "    labels = np.arange(len(classes))\n"
            "    means = np.array([ndimage.mean(X[:, d], idx, labels) "
            "for d in range(X.shape[1])]).T\n"
            "    var = np.array([ndimage.variance(X[:, d], idx, labels) "
            "for d in range(X.shape[1])]).T\n"
            "    eps = var_smoothing * max(X.var(axis=0))\n"
            "    counts = np.bincount(idx)\n"
            "    return [classes.tolist(), np.log(counts / counts.sum()).tolist(), "
            "means, var + eps]\n",
        "nb_linear_weights":
            "import numpy as np\n"
            "from scipy.special import logit\n"
            "def nb_linear_weights(log_prior, theta):\n"
            "    th = np.asarray(theta, float)\n"
            "    if ((th <= 0) | (th >= 1)).any():\n"
            "        raise ValueError('theta must be strictly between 0 and 1')\n"
            "    w = logit(th[1]) - logit(th[0])\n"
            "    w0 = np.diff(log_prior)[0] + np.log(1 - th[1]).sum() - np.log(1 - th[0]).sum()\n"
            "    return [np.array(w0), w.tolist()]\n",
    },
    "warnings_and_prints": {
        # log(0) emits a RuntimeWarning; printing to stderr must not cost points.
        "bernoulli_nb_log_joint":
            "import sys\n"
            "import numpy as np\n"
            "def bernoulli_nb_log_joint(X, log_prior, theta):\n"
            "    X = np.asarray(X, float); theta = np.asarray(theta, float)\n"
            "    print('log joint of', X.shape, file=sys.stderr)\n"
            "    log_t, log_1mt = np.log(theta), np.log(1 - theta)\n"
            "    terms = np.where(X[:, None, :] == 1, log_t[None], log_1mt[None])\n"
            "    return np.asarray(log_prior)[None, :] + terms.sum(axis=2)\n",
        "predict_proba_from_log_joint":
            "import numpy as np\n"
            "from scipy.special import logsumexp\n"
            "def predict_proba_from_log_joint(log_joint):\n"
            "    L = np.asarray(log_joint, float)\n"
            "    return np.exp(L - logsumexp(L, axis=1, keepdims=True))\n",
        "fit_gaussian_nb":
            "import numpy as np, warnings\n"
            "def fit_gaussian_nb(X, y, var_smoothing=0.0):\n"
            "    warnings.warn('a harmless warning from the student')\n"
            "    X = np.asarray(X, float); y = np.asarray(y)\n"
            "    classes, idx = np.unique(y, return_inverse=True)\n"
            "    n_c = np.bincount(idx)\n"
            "    means = np.array([np.mean(X[idx == k], axis=0) for k in range(len(classes))])\n"
            "    second = np.array([np.mean(X[idx == k] ** 2, axis=0) "
            "for k in range(len(classes))])\n"
            "    var = np.maximum(second - means ** 2, 0) "
            "+ var_smoothing * np.var(X, axis=0).max()\n"
            "    return classes, np.log(n_c / len(y)), means, var\n",
    },
}

# The two tasks beyond the chapter: each has a visible worked example (2 points), a visible edge
# case (2), and two hidden cells (4 + 4: random inputs, and edge cases).

WRONG["fit_multinomial_nb"] = [
    # theta normalised over the classes (axis 0) instead of over the words: fails every cell.
    ("import numpy as np\n"
     "def fit_multinomial_nb(X, y, alpha=1.0):\n"
     "    X = np.asarray(X, float); y = np.asarray(y)\n"
     "    classes = np.unique(y)\n"
     "    counts = np.array([X[y == c].sum(0) for c in classes]) + alpha\n"
     "    prior = np.array([np.mean(y == c) for c in classes])\n"
     "    return classes, np.log(prior), counts / counts.sum(axis=0, keepdims=True)\n", 0),
]
WRONG["multinomial_nb_log_joint"] = [
    # The prior left out: fails every cell (no case has log_prior = 0).
    ("import numpy as np\n"
     "from scipy.special import xlogy\n"
     "def multinomial_nb_log_joint(X, log_prior, theta):\n"
     "    X = np.asarray(X, float); theta = np.asarray(theta, float)\n"
     "    return xlogy(X[:, None, :], theta[None]).sum(-1)\n", 0),
]

HONEST["beyond_the_chapter_loops"] = {
    "fit_multinomial_nb":
        "import math\n"
        "import numpy as np\n"
        "def fit_multinomial_nb(X, y, alpha=1.0):\n"
        "    X = np.asarray(X); y = np.asarray(y)\n"
        "    classes = np.unique(y)\n"
        "    log_prior, theta = [], []\n"
        "    for c in classes:\n"
        "        rows = X[y == c]\n"
        "        log_prior.append(math.log(len(rows) / len(y)))\n"
        "        words = [sum(int(r[d]) for r in rows) + alpha for d in range(X.shape[1])]\n"
        "        theta.append([w / sum(words) for w in words])\n"
        "    return classes, log_prior, theta\n",
    "multinomial_nb_log_joint":
        "import math\n"
        "import numpy as np\n"
        "def multinomial_nb_log_joint(X, log_prior, theta):\n"
        "    X = np.asarray(X); theta = np.asarray(theta, float)\n"
        "    out = np.empty((X.shape[0], theta.shape[0]))\n"
        "    for n in range(X.shape[0]):\n"
        "        for c in range(theta.shape[0]):\n"
        "            s = float(log_prior[c])\n"
        "            for d in range(X.shape[1]):\n"
        "                if X[n, d] > 0:\n"
        "                    s += X[n, d] * math.log(theta[c, d]) if theta[c, d] > 0"
        " else -math.inf\n"
        "            out[n, c] = s\n"
        "    return out\n",
}
HONEST["beyond_the_chapter_masked_log"] = {
    # log(0) computed and masked: a RuntimeWarning, no lost points.
    "multinomial_nb_log_joint":
        "import numpy as np\n"
        "def multinomial_nb_log_joint(X, log_prior, theta):\n"
        "    X = np.asarray(X, float); log_theta = np.log(np.asarray(theta, float))\n"
        "    terms = np.where(X[:, None, :] > 0, X[:, None, :] * log_theta[None], 0.0)\n"
        "    return np.asarray(log_prior) + terms.sum(-1)\n",
    "fit_multinomial_nb":
        "import numpy as np\n"
        "def fit_multinomial_nb(X, y, alpha=1.0):\n"
        "    X = np.asarray(X, float)\n"
        "    classes, idx = np.unique(np.asarray(y), return_inverse=True)\n"
        "    R = np.eye(len(classes))[idx]\n"
        "    counts = R.T @ X + alpha\n"
        "    return [classes, np.log(R.mean(0)), counts / counts.sum(1)[:, None]]\n",
}

# Answers a student might try instead of solving the task: {label: (task, answer, score)}.
# Each must score below the task's full marks (12); the score is derived from which cells the
# answer passes.
SHORTCUTS = {
    # The chapter's Bernoulli estimate on counts, (N_cd + alpha) / (N_c + 2 alpha) with N_c the
    # number of documents: not a distribution over words; fails every cell.
    "bernoulli_estimate": ("fit_multinomial_nb",
                           "import numpy as np\n"
                           "def fit_multinomial_nb(X, y, alpha=1.0):\n"
                           "    X = np.asarray(X, float); y = np.asarray(y)\n"
                           "    classes = np.unique(y)\n"
                           "    n = np.array([np.sum(y == c) for c in classes])\n"
                           "    counts = np.array([X[y == c].sum(0) for c in classes])\n"
                           "    return classes, np.log(n / len(y)), (counts + alpha) /"
                           " (n[:, None] + 2 * alpha)\n",
                           0),
    # Smoothing added to the counts but not to the normaliser (alpha instead of D alpha in the
    # denominator): right only for alpha = 0, the visible edge cell (2 points).
    "denominator_without_D": ("fit_multinomial_nb",
                              "import numpy as np\n"
                              "def fit_multinomial_nb(X, y, alpha=1.0):\n"
                              "    X = np.asarray(X, float); y = np.asarray(y)\n"
                              "    classes = np.unique(y)\n"
                              "    n = np.array([np.sum(y == c) for c in classes])\n"
                              "    counts = np.array([X[y == c].sum(0) for c in classes])\n"
                              "    theta = (counts + alpha) / (counts.sum(1,"
                              " keepdims=True) + alpha)\n"
                              "    return classes, np.log(n / len(y)), theta\n", 2),
    # The class prior smoothed as well, (N_c + alpha) / (N + C alpha): invisible when the classes
    # are equally large (both visible cells, 4 points), wrong in the hidden cells, whose random
    # and edge cases have classes of different sizes.
    "smoothed_prior": ("fit_multinomial_nb",
                       "import numpy as np\n"
                       "def fit_multinomial_nb(X, y, alpha=1.0):\n"
                       "    X = np.asarray(X, float); y = np.asarray(y)\n"
                       "    classes = np.unique(y)\n"
                       "    n = np.array([np.sum(y == c) for c in classes])\n"
                       "    counts = np.array([X[y == c].sum(0) for c in classes])\n"
                       "    theta = (counts + alpha) / (counts.sum(1, keepdims=True) +"
                       " X.shape[1] * alpha)\n"
                       "    return classes, np.log((n + alpha) / (len(y) +"
                       " len(classes) * alpha)), theta\n",
                       4),
    # The chapter's Bernoulli log-joint applied to counts: fails every cell.
    "bernoulli_log_joint": ("multinomial_nb_log_joint",
                            "import numpy as np\n"
                            "def multinomial_nb_log_joint(X, log_prior, theta):\n"
                            "    X = np.asarray(X, float); t = np.asarray(theta, float)\n"
                            "    return np.asarray(log_prior) + X @ np.log(t).T + (1 -"
                            " X) @ np.log(1 - t).T\n",
                            0),
    # The naive product of probabilities, then the log: right for short documents (visible
    # example 2, hidden random 4); 0 and then -inf for the 1000-word documents of the visible
    # edge cell and the hidden edge cell.
    "naive_product": ("multinomial_nb_log_joint",
                      "import numpy as np\n"
                      "def multinomial_nb_log_joint(X, log_prior, theta):\n"
                      "    X = np.asarray(X, float); t = np.asarray(theta, float)\n"
                      "    p = np.prod(t[None, :, :] ** X[:, None, :], axis=2)\n"
                      "    return np.asarray(log_prior) + np.log(p)\n", 6),
    # X @ log(theta).T: 0 * log 0 = nan where a probability is 0, which the visible edge cell
    # and the hidden edge cell contain; right elsewhere (6 points).
    "log_of_zero": ("multinomial_nb_log_joint",
                    "import numpy as np\n"
                    "def multinomial_nb_log_joint(X, log_prior, theta):\n"
                    "    X = np.asarray(X, float)\n"
                    "    return np.asarray(log_prior) + X @ np.log(np.asarray(theta,"
                    " float)).T\n", 6),
}
