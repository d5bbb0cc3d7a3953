"""Hand-written answers for the `logistic_regression` assignment, used by tests/test_assignments.py.

WRONG: per task, plausible mistakes with the task score each must get (derived from which of
the task's test cells the mistake fails). Points per task: the worked example (visible, 1), one
edge case (visible, 1) and the hidden tests (2), 4 in all; the two fits also have a cell that
checks their first steps (1), 5 in all. The probit tasks (beyond the chapter): probit_nll 2 + 2 +
4 = 8, probit_nll_grad 2 + 2 + 5 = 9, fit_probit_regression 2 + 2 (steps) + 5 = 9.
SHORTCUTS: what a student might hand in instead of the prescribed method, with its score, as
{label: (task, answer, score)}.
HONEST: correct answers written differently from the reference; each must get full marks.
"""

MODULE = "logistic"

#: Shortcuts through a call the task forbids (metadata.mlcourse.forbidden of the notebook), as
#: {task: [(answer, the call the feedback must name)]}: each earns its task nothing, by name
#: (aliases, getattr, importlib) or, when the name is built at run time, by the sandbox's watch.
FORBIDDEN_SHORTCUTS = {
    "sigmoid": [
        ("from scipy.special import expit as e\n"
         "def sigmoid(t):\n"
         "    return e(t)\n", "scipy.special.expit"),
        ("import scipy.special as ss\n"
         "def sigmoid(t):\n"
         "    return getattr(ss, 'ex' + 'pit')(t)\n", "scipy.special.expit"),
        # The name is built at run time: only the sandbox's watch sees the call.
        ("def sigmoid(t):\n"
         "    module = __import__('scipy.special', fromlist=['x'])\n"
         "    return getattr(module, ''.join(reversed('tipxe')))(t)\n", "scipy.special.expit"),
        # The same, with an attempt to disable the watch first: the audit hook that watches
        # cannot be removed, sys.audit's replacement is not what the stand-ins call, and the
        # hook's state is out of reach without the garbage collector (which it reports).
        # exp(-softplus(-t)), and the logistic distribution under other names: Tukey's lambda
        # with lambda = 0; the names built at run time.
        ("import numpy as np\n"
         "import scipy.special\n"
         "def sigmoid(t):\n"
         "    f = getattr(scipy.special, ''.join(reversed('sulptfos')))\n"
         "    out = np.exp(-f(-np.asarray(t, float)))\n"
         "    return float(out) if out.ndim == 0 else out\n", "scipy.special.softplus"),
        ("import numpy as np\n"
         "import scipy.stats\n"
         "def sigmoid(t):\n"
         "    dist = getattr(scipy.stats, ''.join(reversed('adbmalyekut')))\n"
         "    out = np.asarray(dist.cdf(np.asarray(t, float), 0), float)\n"
         "    return float(out) if out.ndim == 0 else out\n", "scipy.stats.tukeylambda"),
        ("import sys, builtins\n"
         "sys.audit = lambda *a, **k: None\n"
         "builtins.__import__ = builtins.__import__\n"
         "def sigmoid(t):\n"
         "    module = __import__('scipy.special', fromlist=['x'])\n"
         "    return getattr(module, ''.join(reversed('tipxe')))(t)\n", "scipy.special.expit"),
    ],
    "fit_logistic_regression": [
        ("import numpy as np\n"
         "from scipy.optimize import minimize\n"
         "def fit_logistic_regression(X, y, l2=1.0, lr=None, max_iter=10000, tol=1e-8):\n"
         "    X = np.asarray(X, float); y = np.asarray(y, float)\n"
         "    def f(v):\n"
         "        a = X @ v[:-1] + v[-1]\n"
         "        return np.sum(np.logaddexp(0, a) - y * a) + 0.5 * l2 * v[:-1] @ v[:-1]\n"
         "    v = minimize(f, np.zeros(X.shape[1] + 1), method='BFGS').x\n"
         "    return v[:-1], float(v[-1])\n", "scipy.optimize"),
    ],
    "logistic_nll": [
        # log(1 + exp(-z)) is softplus(-z) (4 of 4 before it was forbidden).
        ("import numpy as np\n"
         "from scipy.special import softplus\n"
         "def logistic_nll(w, b, X, y, l2=0.0):\n"
         "    w = np.asarray(w, float); a = np.asarray(X, float) @ w + b\n"
         "    z = np.where(np.asarray(y) == 1, a, -a)\n"
         "    return float(softplus(-z).sum() + 0.5 * l2 * w @ w)\n", "scipy.special.softplus"),
        # log sigmoid(z) is the log-softmax of the scores (0, z); the name built at run time.
        ("import numpy as np\n"
         "import scipy.special\n"
         "def logistic_nll(w, b, X, y, l2=0.0):\n"
         "    w = np.asarray(w, float); a = np.asarray(X, float) @ w + b\n"
         "    z = np.where(np.asarray(y) == 1, a, -a)\n"
         "    f = getattr(scipy.special, ''.join(reversed('xamtfos_gol')))\n"
         "    log_p = f(np.stack([np.zeros_like(z), z]), axis=0)[1]\n"
         "    return float(-log_p.sum() + 0.5 * l2 * w @ w)\n", "scipy.special.log_softmax"),
    ],
    "logistic_nll_grad": [
        # sigmoid(a) = exp(-softplus(-a)).
        ("import numpy as np\n"
         "from scipy.special import softplus\n"
         "def logistic_nll_grad(w, b, X, y, l2=0.0):\n"
         "    X = np.asarray(X, float); w = np.asarray(w, float)\n"
         "    r = np.exp(-softplus(-(X @ w + b))) - np.asarray(y, float)\n"
         "    return X.T @ r + l2 * w, float(r.sum())\n", "scipy.special.softplus"),
        # The gradient of the loss by scipy.differentiate; the module imported at run time.
        ("import numpy as np\n"
         "import importlib\n"
         "def logistic_nll_grad(w, b, X, y, l2=0.0):\n"
         "    X = np.asarray(X, float); s = np.where(np.asarray(y) == 1, 1.0, -1.0)\n"
         "    def one(theta):\n"
         "        z = s * (X @ theta[:-1] + theta[-1])\n"
         "        return np.logaddexp(0.0, -z).sum() + 0.5 * l2 * theta[:-1] @ theta[:-1]\n"
         "    def loss(thetas):  # (D + 1, ...) points at once\n"
         "        return np.apply_along_axis(one, 0, thetas)\n"
         "    d = importlib.import_module('scipy.' + ''.join(reversed('etaitnereffid')))\n"
         "    g = d.jacobian(loss, np.append(np.asarray(w, float), b)).df\n"
         "    return g[:-1], float(g[-1])\n", "scipy.differentiate"),
    ],
    "softmax": [
        # numpy's logsumexp: the reduction of the ufunc logaddexp.
        ("import numpy as np\n"
         "def softmax(A):\n"
         "    A = np.asarray(A, float)\n"
         "    return np.exp(A - np.logaddexp.reduce(A, axis=-1, keepdims=True))\n",
         "numpy.logaddexp"),
    ],
    "probit_nll_grad": [
        # scipy.differentiate.jacobian of the loss (9 of 9 before it was forbidden).
        ("import numpy as np\n"
         "from scipy import differentiate\n"
         "from scipy.special import log_ndtr\n"
         "def probit_nll_grad(w, b, X, y, l2=0.0):\n"
         "    X = np.asarray(X, float); s = np.where(np.asarray(y) == 1, 1.0, -1.0)\n"
         "    def one(theta):\n"
         "        z = s * (X @ theta[:-1] + theta[-1])\n"
         "        return -log_ndtr(z).sum() + 0.5 * l2 * theta[:-1] @ theta[:-1]\n"
         "    def loss(thetas):  # (D + 1, ...) points at once\n"
         "        return np.apply_along_axis(one, 0, thetas)\n"
         "    g = differentiate.jacobian(loss, np.append(np.asarray(w, float), b)).df\n"
         "    return g[:-1], float(g[-1])\n", "scipy.differentiate"),
        # Finite differences by scipy.optimize.approx_fprime, the name built at run time.
        ("import numpy as np\n"
         "import scipy.optimize\n"
         "from scipy.special import log_ndtr\n"
         "def probit_nll_grad(w, b, X, y, l2=0.0):\n"
         "    X = np.asarray(X, float); s = np.where(np.asarray(y) == 1, 1.0, -1.0)\n"
         "    def loss(theta):\n"
         "        z = s * (X @ theta[:-1] + theta[-1])\n"
         "        return -log_ndtr(z).sum() + 0.5 * l2 * theta[:-1] @ theta[:-1]\n"
         "    f = getattr(scipy.optimize, ''.join(reversed('emirpf_xorppa')))\n"
         "    g = f(np.append(np.asarray(w, float), b), loss, 1e-7)\n"
         "    return g[:-1], float(g[-1])\n", "scipy.optimize"),
    ],
}

# A correct gradient, used by the fit variants that differ only in the loop around it.
_GRAD = (
    "import numpy as np\n"
    "def _grad(w, b, X, y, l2):\n"
    "    a = X @ w + b\n"
    "    e = np.exp(-np.abs(a))\n"
    "    r = np.where(a >= 0, 1 / (1 + e), e / (1 + e)) - y\n"
    "    return X.T @ r + l2 * w, float(r.sum())\n"
)

WRONG = {
    "sigmoid": [
        # Only the form e^t / (1 + e^t): inf / inf = nan for t > 709.
        ("import numpy as np\n"
         "def sigmoid(t):\n"
         "    t = np.asarray(t, dtype=float)\n"
         "    return np.exp(t) / (1 + np.exp(t))\n", 1),
        # Sign error: 1 / (1 + e^t) is sigma(-t).
        ("import numpy as np\n"
         "def sigmoid(t):\n"
         "    return 1 / (1 + np.exp(np.asarray(t, dtype=float)))\n", 0),
        # math.exp: only for single numbers (arrays raise TypeError, -1000 an OverflowError).
        ("import math\n"
         "def sigmoid(t):\n"
         "    return 1 / (1 + math.exp(-t))\n", 0),
        # tanh(t) instead of tanh(t / 2): this is sigma(2t).
        ("import numpy as np\n"
         "def sigmoid(t):\n"
         "    return (1 + np.tanh(np.asarray(t, dtype=float))) / 2\n", 0),
    ],
    "logistic_nll": [
        # Unstable logs: log(1 - sigma(a)) = log 0 for a large score of a class-0 point.
        ("import numpy as np\n"
         "def logistic_nll(w, b, X, y, l2=0.0):\n"
         "    w = np.asarray(w, float); y = np.asarray(y, float)\n"
         "    p = 1 / (1 + np.exp(-(np.asarray(X, float) @ w + b)))\n"
         "    return -np.sum(y * np.log(p) + (1 - y) * np.log(1 - p)) + 0.5 * l2 * w @ w\n", 1),
        # The mean over samples instead of the sum.
        ("import numpy as np\n"
         "def logistic_nll(w, b, X, y, l2=0.0):\n"
         "    w = np.asarray(w, float); y = np.asarray(y, float)\n"
         "    a = np.asarray(X, float) @ w + b\n"
         "    return np.mean(np.logaddexp(0, np.where(y == 1, -a, a))) + 0.5 * l2 * w @ w\n", 0),
        # The bias is penalised too.
        ("import numpy as np\n"
         "def logistic_nll(w, b, X, y, l2=0.0):\n"
         "    w = np.asarray(w, float); y = np.asarray(y, float)\n"
         "    a = np.asarray(X, float) @ w + b\n"
         "    return np.sum(np.logaddexp(0, np.where(y == 1, -a, a))) "
         "+ 0.5 * l2 * (w @ w + b * b)\n",
         1),
        # The penalty without its factor 1/2.
        ("import numpy as np\n"
         "def logistic_nll(w, b, X, y, l2=0.0):\n"
         "    w = np.asarray(w, float); y = np.asarray(y, float)\n"
         "    a = np.asarray(X, float) @ w + b\n"
         "    return np.sum(np.logaddexp(0, np.where(y == 1, -a, a))) + l2 * w @ w\n", 1),
    ],
    "logistic_nll_grad": [
        # Wrong sign: the gradient of the log-likelihood (the seed's first line).
        ("import numpy as np\n"
         "def logistic_nll_grad(w, b, X, y, l2=0.0):\n"
         "    X = np.asarray(X, float); w = np.asarray(w, float)\n"
         "    r = np.asarray(y, float) - 1 / (1 + np.exp(-(X @ w + b)))\n"
         "    return X.T @ r + l2 * w, float(r.sum())\n", 0),
        # The penalty's derivative l2 * w is missing.
        ("import numpy as np\n"
         "def logistic_nll_grad(w, b, X, y, l2=0.0):\n"
         "    X = np.asarray(X, float); w = np.asarray(w, float)\n"
         "    r = np.exp(-np.logaddexp(0, -(X @ w + b))) - np.asarray(y, float)\n"
         "    return X.T @ r, float(r.sum())\n", 1),
        # The bias gets the penalty's derivative too.
        ("import numpy as np\n"
         "def logistic_nll_grad(w, b, X, y, l2=0.0):\n"
         "    X = np.asarray(X, float); w = np.asarray(w, float)\n"
         "    r = np.exp(-np.logaddexp(0, -(X @ w + b))) - np.asarray(y, float)\n"
         "    return X.T @ r + l2 * w, float(r.sum() + l2 * b)\n", 1),
        # The mean over samples instead of the sum.
        ("import numpy as np\n"
         "def logistic_nll_grad(w, b, X, y, l2=0.0):\n"
         "    X = np.asarray(X, float); w = np.asarray(w, float)\n"
         "    r = 1 / (1 + np.exp(-(X @ w + b))) - np.asarray(y, float)\n"
         "    return X.T @ r / len(r) + l2 * w, float(r.mean())\n", 0),
        # The sigmoid as e^a / (1 + e^a): nan for scores above 709.
        ("import numpy as np\n"
         "def logistic_nll_grad(w, b, X, y, l2=0.0):\n"
         "    X = np.asarray(X, float); w = np.asarray(w, float)\n"
         "    e = np.exp(X @ w + b)\n"
         "    r = e / (1 + e) - np.asarray(y, float)\n"
         "    return X.T @ r + l2 * w, float(r.sum())\n", 1),
    ],
    "fit_logistic_regression": [
        # Gradient ascent: the step is added.
        (_GRAD +
         "def fit_logistic_regression(X, y, l2=1.0, lr=None, max_iter=10000, tol=1e-8):\n"
         "    X = np.asarray(X, float); y = np.asarray(y, float)\n"
         "    w, b = np.zeros(X.shape[1]), 0.0\n"
         "    for _ in range(max_iter):\n"
         "        gw, gb = _grad(w, b, X, y, l2)\n"
         "        if max(np.abs(gw).max(), abs(gb)) <= tol:\n"
         "            break\n"
         "        w, b = w + lr * gw, b + lr * gb\n"
         "    return w, b\n", 0),
        # The penalty is left out of the gradient (and so out of the fit).
        (_GRAD +
         "def fit_logistic_regression(X, y, l2=1.0, lr=None, max_iter=10000, tol=1e-8):\n"
         "    X = np.asarray(X, float); y = np.asarray(y, float)\n"
         "    w, b = np.zeros(X.shape[1]), 0.0\n"
         "    for _ in range(max_iter):\n"
         "        gw, gb = _grad(w, b, X, y, 0.0)\n"
         "        if max(np.abs(gw).max(), abs(gb)) <= tol:\n"
         "            break\n"
         "        w, b = w - lr * gw, b - lr * gb\n"
         "    return w, b\n", 0),
        # The bias is penalised: right only where the optimal bias is 0.
        (_GRAD +
         "def fit_logistic_regression(X, y, l2=1.0, lr=None, max_iter=10000, tol=1e-8):\n"
         "    X = np.asarray(X, float); y = np.asarray(y, float)\n"
         "    w, b = np.zeros(X.shape[1]), 0.0\n"
         "    for _ in range(max_iter):\n"
         "        gw, gb = _grad(w, b, X, y, l2)\n"
         "        gb += l2 * b\n"
         "        if max(np.abs(gw).max(), abs(gb)) <= tol:\n"
         "            break\n"
         "        w, b = w - lr * gw, b - lr * gb\n"
         "    return w, b\n", 1),
        # A random start: the same minimiser, but not the plain steps from w = 0, b = 0.
        (_GRAD +
         "def fit_logistic_regression(X, y, l2=1.0, lr=None, max_iter=10000, tol=1e-8):\n"
         "    X = np.asarray(X, float); y = np.asarray(y, float)\n"
         "    rng = np.random.default_rng(0)\n"
         "    w, b = rng.normal(scale=0.1, size=X.shape[1]), 0.0\n"
         "    for _ in range(max_iter):\n"
         "        gw, gb = _grad(w, b, X, y, l2)\n"
         "        if max(np.abs(gw).max(), abs(gb)) <= tol:\n"
         "            break\n"
         "        w, b = w - lr * gw, b - lr * gb\n"
         "    return w, b\n", 3),
        # The data term of the gradient averaged over samples: another objective.
        (_GRAD +
         "def fit_logistic_regression(X, y, l2=1.0, lr=None, max_iter=10000, tol=1e-8):\n"
         "    X = np.asarray(X, float); y = np.asarray(y, float)\n"
         "    w, b = np.zeros(X.shape[1]), 0.0\n"
         "    for _ in range(max_iter):\n"
         "        gw, gb = _grad(w, b, X, y, 0.0)\n"
         "        gw, gb = gw / len(y) + l2 * w, gb / len(y)\n"
         "        if max(np.abs(gw).max(), abs(gb)) <= tol:\n"
         "            break\n"
         "        w, b = w - lr * gw, b - lr * gb\n"
         "    return w, b\n", 0),
    ],
    "softmax": [
        # No shift by the row maximum: exp overflows, inf / inf = nan.
        ("import numpy as np\n"
         "def softmax(A):\n"
         "    E = np.exp(np.asarray(A, float))\n"
         "    return E / E.sum(axis=-1, keepdims=True)\n", 1),
        # Shifted by the maximum of the whole array instead of each row's: rows far below it
        # underflow to 0 / 0.
        ("import numpy as np\n"
         "def softmax(A):\n"
         "    A = np.asarray(A, float)\n"
         "    E = np.exp(A - A.max())\n"
         "    return E / E.sum(axis=-1, keepdims=True)\n", 1),
        # Normalised along the wrong axis (columns).
        ("import numpy as np\n"
         "def softmax(A):\n"
         "    A = np.asarray(A, float)\n"
         "    E = np.exp(A - A.max(axis=0, keepdims=True))\n"
         "    return E / E.sum(axis=0, keepdims=True)\n", 0),
        # A 1-D input comes back as a (1, C) array.
        ("import numpy as np\n"
         "def softmax(A):\n"
         "    A = np.atleast_2d(np.asarray(A, float))\n"
         "    E = np.exp(A - A.max(axis=1, keepdims=True))\n"
         "    return E / E.sum(axis=1, keepdims=True)\n", 1),
    ],
    "fit_softmax_regression": [
        # Classes in order of first appearance instead of sorted.
        ("import numpy as np\n"
         "def fit_softmax_regression(X, y, l2=1.0, lr=None, max_iter=10000, tol=1e-8):\n"
         "    X = np.asarray(X, float); y = np.asarray(y)\n"
         "    _, first = np.unique(y, return_index=True)\n"
         "    classes = y[np.sort(first)]\n"
         "    T = (y[:, None] == classes[None, :]).astype(float)\n"
         "    W, b = np.zeros((X.shape[1], len(classes))), np.zeros(len(classes))\n"
         "    for _ in range(max_iter):\n"
         "        A = X @ W + b\n"
         "        P = np.exp(A - A.max(axis=1, keepdims=True))\n"
         "        R = P / P.sum(axis=1, keepdims=True) - T\n"
         "        gW, gb = X.T @ R + l2 * W, R.sum(axis=0)\n"
         "        if max(np.abs(gW).max(), np.abs(gb).max()) <= tol:\n"
         "            break\n"
         "        W, b = W - lr * gW, b - lr * gb\n"
         "    return classes, W, b - b.mean()\n", 1),
        # The biases are penalised too.
        ("import numpy as np\n"
         "def fit_softmax_regression(X, y, l2=1.0, lr=None, max_iter=10000, tol=1e-8):\n"
         "    X = np.asarray(X, float)\n"
         "    classes, index = np.unique(y, return_inverse=True)\n"
         "    T = np.eye(len(classes))[index.ravel()]\n"
         "    W, b = np.zeros((X.shape[1], len(classes))), np.zeros(len(classes))\n"
         "    for _ in range(max_iter):\n"
         "        A = X @ W + b\n"
         "        P = np.exp(A - A.max(axis=1, keepdims=True))\n"
         "        R = P / P.sum(axis=1, keepdims=True) - T\n"
         "        gW, gb = X.T @ R + l2 * W, R.sum(axis=0) + l2 * b\n"
         "        if max(np.abs(gW).max(), np.abs(gb).max()) <= tol:\n"
         "            break\n"
         "        W, b = W - lr * gW, b - lr * gb\n"
         "    return classes, W, b - b.mean()\n", 1),
        # W returned as (C, D), the layout of scikit-learn's coef_.
        ("import numpy as np\n"
         "def fit_softmax_regression(X, y, l2=1.0, lr=None, max_iter=10000, tol=1e-8):\n"
         "    X = np.asarray(X, float)\n"
         "    classes, index = np.unique(y, return_inverse=True)\n"
         "    T = np.eye(len(classes))[index.ravel()]\n"
         "    W, b = np.zeros((X.shape[1], len(classes))), np.zeros(len(classes))\n"
         "    for _ in range(max_iter):\n"
         "        A = X @ W + b\n"
         "        P = np.exp(A - A.max(axis=1, keepdims=True))\n"
         "        R = P / P.sum(axis=1, keepdims=True) - T\n"
         "        gW, gb = X.T @ R + l2 * W, R.sum(axis=0)\n"
         "        if max(np.abs(gW).max(), np.abs(gb).max()) <= tol:\n"
         "            break\n"
         "        W, b = W - lr * gW, b - lr * gb\n"
         "    return classes, W.T, b - b.mean()\n", 0),
        # The data term averaged over samples: another objective.
        ("import numpy as np\n"
         "def fit_softmax_regression(X, y, l2=1.0, lr=None, max_iter=10000, tol=1e-8):\n"
         "    X = np.asarray(X, float)\n"
         "    classes, index = np.unique(y, return_inverse=True)\n"
         "    T = np.eye(len(classes))[index.ravel()]\n"
         "    W, b = np.zeros((X.shape[1], len(classes))), np.zeros(len(classes))\n"
         "    for _ in range(max_iter):\n"
         "        A = X @ W + b\n"
         "        P = np.exp(A - A.max(axis=1, keepdims=True))\n"
         "        R = (P / P.sum(axis=1, keepdims=True) - T) / len(X)\n"
         "        gW, gb = X.T @ R + l2 * W, R.sum(axis=0)\n"
         "        if max(np.abs(gW).max(), np.abs(gb).max()) <= tol:\n"
         "            break\n"
         "        W, b = W - lr * gW, b - lr * gb\n"
         "    return classes, W, b - b.mean()\n", 1),
    ],
}

HONEST = {
    "loops": {
        "sigmoid":
            "import math\n"
            "import numpy as np\n"
            "def _one(t):\n"
            "    if t >= 0:\n"
            "        return 1.0 / (1.0 + math.exp(-t))\n"
            "    e = math.exp(t)\n"
            "    return e / (1.0 + e)\n"
            "def sigmoid(t):\n"
            "    arr = np.asarray(t, dtype=float)\n"
            "    out = np.array([_one(v) for v in arr.ravel()]).reshape(arr.shape)\n"
            "    return out if arr.ndim else float(out)\n",
        "logistic_nll":
            "import math\n"
            "def logistic_nll(w, b, X, y, l2=0.0):\n"
            "    total = 0.0\n"
            "    for x, label in zip(X, y):\n"
            "        a = sum(wi * xi for wi, xi in zip(w, x)) + b\n"
            "        z = a if label == 1 else -a\n"
            "        total += max(-z, 0.0) + math.log1p(math.exp(-abs(z)))\n"
            "    return total + 0.5 * l2 * sum(wi * wi for wi in w)\n",
        "logistic_nll_grad":
            "import math\n"
            "def logistic_nll_grad(w, b, X, y, l2=0.0):\n"
            "    gw = [l2 * wi for wi in w]\n"
            "    gb = 0.0\n"
            "    for x, label in zip(X, y):\n"
            "        a = sum(wi * xi for wi, xi in zip(w, x)) + b\n"
            "        p = 1 / (1 + math.exp(-a)) if a >= 0 else math.exp(a) / (1 + math.exp(a))\n"
            "        for d in range(len(gw)):\n"
            "            gw[d] += (p - label) * x[d]\n"
            "        gb += p - label\n"
            "    return gw, gb\n",
        "softmax":
            "import math\n"
            "import numpy as np\n"
            "def _row(r):\n"
            "    m = max(r)\n"
            "    e = [math.exp(v - m) for v in r]\n"
            "    s = sum(e)\n"
            "    return [v / s for v in e]\n"
            "def softmax(A):\n"
            "    A = np.asarray(A, dtype=float)\n"
            "    if A.ndim == 1:\n"
            "        return np.array(_row(A.tolist()))\n"
            "    return np.array([_row(r) for r in A.tolist()])\n",
        # Stops after the update (the gradient is checked at the top of the next iteration).
        "fit_logistic_regression":
            "import numpy as np\n"
            "def fit_logistic_regression(X, y, l2=1.0, lr=None, max_iter=10000, tol=1e-8):\n"
            "    X = np.asarray(X, dtype=float); y = np.asarray(y, dtype=float)\n"
            "    if lr is None:\n"
            "        raise ValueError('give a step size lr')\n"
            "    w, b = np.zeros(X.shape[1]), 0.0\n"
            "    step = 0\n"
            "    while True:\n"
            "        a = X @ w + b\n"
            "        p = np.exp(-np.logaddexp(0, -a))\n"
            "        gw, gb = X.T @ (p - y) + l2 * w, np.sum(p - y)\n"
            "        if step == max_iter or max(np.max(np.abs(gw)), abs(gb)) <= tol:\n"
            "            return [w, b]\n"
            "        w -= lr * gw\n"
            "        b -= lr * gb\n"
            "        step += 1\n",
    },
    "scipy_and_lists": {
        # exp(log sigma(t)) with scipy's log_expit (scipy's expit is in SHORTCUTS: it loses the
        # subnormal values like the naive formula).
        "sigmoid":
            "import numpy as np\n"
            "from scipy.special import log_expit\n"
            "def sigmoid(t):\n"
            "    return np.exp(log_expit(t))\n",
        "logistic_nll":
            "import numpy as np\n"
            "from scipy.special import log_expit\n"
            "def logistic_nll(w, b, X, y, l2=0.0):\n"
            "    a = np.dot(X, w) + b\n"
            "    y = np.asarray(y, dtype=float)\n"
            "    return -(y @ log_expit(a) + (1 - y) @ log_expit(-a)) + l2 / 2 * np.dot(w, w)\n",
        "logistic_nll_grad":
            "import numpy as np\n"
            "from scipy.special import expit\n"
            "def logistic_nll_grad(w, b, X, y, l2=0.0):\n"
            "    r = expit(np.dot(X, w) + b) - np.asarray(y, dtype=float)\n"
            "    return list(np.dot(r, X) + l2 * np.asarray(w)), np.float64(r.sum())\n",
        "softmax":
            "from scipy.special import softmax as sp_softmax\n"
            "def softmax(A):\n"
            "    return sp_softmax(A, axis=-1)\n",
        "fit_softmax_regression":
            "import numpy as np\n"
            "from scipy.special import log_softmax\n"
            "def fit_softmax_regression(X, y, l2=1.0, lr=None, max_iter=10000, tol=1e-8):\n"
            "    X = np.asarray(X, dtype=float)\n"
            "    classes = sorted(set(np.asarray(y).tolist()))\n"
            "    T = np.array([[1.0 if v == c else 0.0 for c in classes] "
            "for v in np.asarray(y).tolist()])\n"
            "    theta = np.zeros((X.shape[1] + 1, len(classes)))      # W stacked on b\n"
            "    Xt = np.hstack([X, np.ones((len(X), 1))])\n"
            "    penalty = np.ones_like(theta); penalty[-1] = 0.0\n"
            "    for _ in range(max_iter):\n"
            "        R = np.exp(log_softmax(Xt @ theta, axis=1)) - T\n"
            "        g = Xt.T @ R + l2 * penalty * theta\n"
            "        if np.abs(g).max() <= tol:\n"
            "            break\n"
            "        theta -= lr * g\n"
            "    b = theta[-1] - theta[-1].mean()\n"
            "    return classes, theta[:-1], list(b)\n",
    },
    "warnings_and_prints": {
        # A stable formula that prints and warns (the naive 1 / (1 + exp(-t)) is in SHORTCUTS).
        "sigmoid":
            "import sys\n"
            "import warnings\n"
            "import numpy as np\n"
            "def sigmoid(t):\n"
            "    print('sigmoid called', file=sys.stderr)\n"
            "    warnings.warn('a harmless warning from the student')\n"
            "    return np.exp(-np.logaddexp(0.0, -np.asarray(t, dtype=float)))\n",
        # The stable sigmoid in one expression, and a warning of the student's own.
        "logistic_nll_grad":
            "import warnings\n"
            "import numpy as np\n"
            "def logistic_nll_grad(w, b, X, y, l2=0.0):\n"
            "    warnings.warn('computing a gradient')\n"
            "    X = np.asarray(X, float); w = np.asarray(w, float)\n"
            "    a = X @ w + b\n"
            "    e = np.exp(-np.abs(a))\n"
            "    p = np.where(a >= 0, 1.0, e) / (1.0 + e)\n"
            "    r = p - np.asarray(y, float)\n"
            "    return X.T @ r + l2 * w, r.sum()\n",
        "fit_logistic_regression":
            "import sys\n"
            "import warnings\n"
            "import numpy as np\n"
            "def fit_logistic_regression(X, y, l2=1.0, lr=None, max_iter=10000, tol=1e-8):\n"
            "    warnings.warn('starting gradient descent')\n"
            "    X = np.asarray(X, float); y = np.asarray(y, float)\n"
            "    Xt = np.column_stack([X, np.ones(len(X))])\n"
            "    theta = np.zeros(Xt.shape[1])\n"
            "    mask = np.r_[np.ones(X.shape[1]), 0.0]\n"
            "    for k in range(max_iter):\n"
            "        g = Xt.T @ (1 / (1 + np.exp(-Xt @ theta)) - y) + l2 * mask * theta\n"
            "        if np.max(np.abs(g)) <= tol:\n"
            "            print(f'converged after {k} steps', file=sys.stderr)\n"
            "            break\n"
            "        theta = theta - lr * g\n"
            "    return theta[:-1], theta[-1]\n",
        "softmax":
            "import numpy as np\n"
            "from scipy.special import logsumexp\n"
            "def softmax(A):\n"
            "    # exp(a_c - log sum_c' exp(a_c')), with scipy's stable log-sum-exp\n"
            "    A = np.asarray(A, dtype=float)\n"
            "    return np.exp(A - logsumexp(A, axis=-1, keepdims=True))\n",
    },
}

# ---------------------------------------------------------------- tasks beyond the chapter
_PROBIT_LOG = (
    "import numpy as np\n"
    "from scipy.special import log_ndtr\n"
)
WRONG["probit_nll"] = [
    # The mean over samples instead of the sum.
    (_PROBIT_LOG +
     "def probit_nll(w, b, X, y, l2=0.0):\n"
     "    w = np.asarray(w, float); s = 2 * np.asarray(y, float) - 1\n"
     "    z = s * (np.asarray(X, float) @ w + b)\n"
     "    return float(-np.mean(log_ndtr(z)) + 0.5 * l2 * w @ w)\n", 0),
    # log Phi(a) for both classes (1 - Phi(a) forgotten for class 0): the symmetric edge case
    # (two right and two wrong points, one of each per class) cannot tell: 2.
    (_PROBIT_LOG +
     "def probit_nll(w, b, X, y, l2=0.0):\n"
     "    w = np.asarray(w, float)\n"
     "    return float(-np.sum(log_ndtr(np.asarray(X, float) @ w + b)) + 0.5 * l2 * w @ w)\n", 2),
    # The bias penalised too: right whenever b = 0 (the edge case).
    (_PROBIT_LOG +
     "def probit_nll(w, b, X, y, l2=0.0):\n"
     "    w = np.asarray(w, float); s = 2 * np.asarray(y, float) - 1\n"
     "    z = s * (np.asarray(X, float) @ w + b)\n"
     "    return float(-np.sum(log_ndtr(z)) + 0.5 * l2 * (w @ w + b * b))\n", 2),
]
WRONG["probit_nll_grad"] = [
    # Wrong sign (the gradient of the log-likelihood).
    (_PROBIT_LOG +
     "def probit_nll_grad(w, b, X, y, l2=0.0):\n"
     "    X = np.asarray(X, float); w = np.asarray(w, float); s = 2 * np.asarray(y, float) - 1\n"
     "    z = s * (X @ w + b)\n"
     "    g = s * np.exp(-z * z / 2 - 0.5 * np.log(2 * np.pi) - log_ndtr(z))\n"
     "    return X.T @ g + l2 * w, float(g.sum())\n", 0),
    # The penalty's derivative l2 w missing: right only for l2 = 0 (the edge case).
    (_PROBIT_LOG +
     "def probit_nll_grad(w, b, X, y, l2=0.0):\n"
     "    X = np.asarray(X, float); w = np.asarray(w, float); s = 2 * np.asarray(y, float) - 1\n"
     "    z = s * (X @ w + b)\n"
     "    g = -s * np.exp(-z * z / 2 - 0.5 * np.log(2 * np.pi) - log_ndtr(z))\n"
     "    return X.T @ g, float(g.sum())\n", 2),
    # The logistic residual sigma(a) - y in place of the probit factor (the chapter's gradient).
    ("import numpy as np\n"
     "from scipy.special import expit\n"
     "def probit_nll_grad(w, b, X, y, l2=0.0):\n"
     "    X = np.asarray(X, float); w = np.asarray(w, float)\n"
     "    r = expit(X @ w + b) - np.asarray(y, float)\n"
     "    return X.T @ r + l2 * w, float(r.sum())\n", 0),
]
_PROBIT_FIT = (
    _PROBIT_LOG +
    "def fit_probit_regression(X, y, l2=1.0, lr=None, max_iter=10000, tol=1e-8):\n"
    "    X = np.asarray(X, float); s = 2 * np.asarray(y, float) - 1\n"
    "    w, b = np.zeros(X.shape[1]), 0.0\n"
    "    for _ in range(max_iter):\n"
    "        z = s * (X @ w + b)\n"
    "        g = -s * np.exp(-z * z / 2 - 0.5 * np.log(2 * np.pi) - log_ndtr(z))\n"
    "        gw, gb = X.T @ g + {penalty} * w, g.sum()\n"
    "        if max(np.abs(gw).max(), abs(gb)) <= tol:\n"
    "            break\n"
    "        w, b = w {sign} lr * gw, b {sign} lr * gb\n"
    "    return w, b\n"
)
WRONG["fit_probit_regression"] = [
    # Gradient ascent.
    (_PROBIT_FIT.replace("{penalty}", "l2").replace("{sign}", "+"), 0),
    # The penalty left out of the gradient: the first step (at w = 0) is still right, but not
    # the later steps or the minimiser.
    (_PROBIT_FIT.replace("{penalty}", "0.0").replace("{sign}", "-"), 0),
    # Logistic regression fitted instead (the chapter's fit).
    ("import numpy as np\n"
     "from scipy.special import expit\n"
     "def fit_probit_regression(X, y, l2=1.0, lr=None, max_iter=10000, tol=1e-8):\n"
     "    X = np.asarray(X, float); y = np.asarray(y, float)\n"
     "    w, b = np.zeros(X.shape[1]), 0.0\n"
     "    for _ in range(max_iter):\n"
     "        r = expit(X @ w + b) - y\n"
     "        gw, gb = X.T @ r + l2 * w, r.sum()\n"
     "        if max(np.abs(gw).max(), abs(gb)) <= tol:\n"
     "            break\n"
     "        w, b = w - lr * gw, b - lr * gb\n"
     "    return w, b\n", 0),
]
HONEST["loops"]["probit_nll"] = (
    # Per sample with scipy.stats.norm.logcdf and the two-class form.
    "from scipy.stats import norm\n"
    "def probit_nll(w, b, X, y, l2=0.0):\n"
    "    total = 0.0\n"
    "    for x, label in zip(X, y):\n"
    "        a = sum(wi * xi for wi, xi in zip(w, x)) + b\n"
    "        total -= norm.logcdf(a) if label == 1 else norm.logsf(a)\n"
    "    return float(total + 0.5 * l2 * sum(wi * wi for wi in w))\n")
HONEST["loops"]["probit_nll_grad"] = (
    # The two classes separately, each ratio in log space with scipy.stats.norm.
    "import numpy as np\n"
    "from scipy.stats import norm\n"
    "def probit_nll_grad(w, b, X, y, l2=0.0):\n"
    "    X = np.asarray(X, float); w = np.asarray(w, float); y = np.asarray(y)\n"
    "    a = X @ w + b\n"
    "    g = np.empty(len(a))\n"
    "    for n in range(len(a)):\n"
    "        if y[n] == 1:\n"
    "            g[n] = -np.exp(norm.logpdf(a[n]) - norm.logcdf(a[n]))\n"
    "        else:\n"
    "            g[n] = np.exp(norm.logpdf(a[n]) - norm.logsf(a[n]))\n"
    "    return list(X.T @ g + l2 * w), g.sum()\n")
HONEST["loops"]["fit_probit_regression"] = (
    # The ratio by scipy.special.erfcx; the parameters stacked as theta = (w, b).
    "import numpy as np\n"
    "from scipy.special import erfcx\n"
    "def fit_probit_regression(X, y, l2=1.0, lr=None, max_iter=10000, tol=1e-8):\n"
    "    X = np.asarray(X, dtype=float)\n"
    "    s = np.where(np.asarray(y) == 1, 1.0, -1.0)\n"
    "    Xt = np.column_stack([X, np.ones(len(X))])\n"
    "    theta = np.zeros(Xt.shape[1])\n"
    "    mask = np.r_[np.ones(X.shape[1]), 0.0]\n"
    "    for k in range(max_iter):\n"
    "        z = s * (Xt @ theta)\n"
    "        with np.errstate(over='ignore'):\n"
    "            ratio = np.sqrt(2 / np.pi) / erfcx(-z / np.sqrt(2))\n"
    "        g = Xt.T @ (-s * ratio) + l2 * mask * theta\n"
    "        if np.abs(g).max() <= tol:\n"
    "            break\n"
    "        theta = theta - lr * g\n"
    "    return theta[:-1], theta[-1]\n")

SHORTCUTS = {
    # The naive formula: right to 1e-300, but it overflows for t < -709 and returns 0 where
    # sigma(t) is a subnormal number. Visible 1; edge case and hidden tests 0: 1 of 4.
    "sigmoid_naive_formula": ("sigmoid",
        "import numpy as np\n"
        "def sigmoid(t):\n"
        "    return 1 / (1 + np.exp(-np.asarray(t, dtype=float)))\n", 1),
    # A library call: scipy.special.expit computes the same formula (no overflow warning,
    # but 0 where sigma(t) is subnormal): 1 of 4.
    "sigmoid_scipy_expit": ("sigmoid",
        "from scipy.special import expit\n"
        "def sigmoid(t):\n"
        "    return expit(t)\n", 1),
    # Another optimiser (L-BFGS through scipy.optimize.minimize): the minimiser (visible 1,
    # hidden 2), not the steps (edge 0, steps 0): 3 of 5.
    "fit_logistic_lbfgs": ("fit_logistic_regression",
        "import numpy as np\n"
        "from scipy.optimize import minimize\n"
        "def fit_logistic_regression(X, y, l2=1.0, lr=None, max_iter=10000, tol=1e-8):\n"
        "    X = np.asarray(X, float); y = np.asarray(y, float)\n"
        "    Xt = np.column_stack([X, np.ones(len(X))]); mask = np.r_[np.ones(X.shape[1]), 0.0]\n"
        "    def f(theta):\n"
        "        a = Xt @ theta\n"
        "        p = np.exp(-np.logaddexp(0, -a))\n"
        "        loss = np.sum(np.logaddexp(0, a) - y * a) + 0.5 * l2 * np.sum(mask * theta**2)\n"
        "        return loss, Xt.T @ (p - y) + l2 * mask * theta\n"
        "    res = minimize(f, np.zeros(Xt.shape[1]), jac=True, method='L-BFGS-B',\n"
        "                   options={'gtol': 1e-12, 'ftol': 0.0, 'maxiter': 100000})\n"
        "    return res.x[:-1], res.x[-1]\n", 3),
    # L-BFGS: the minimiser (visible 1, edge 1, hidden 2), not the steps: 4 of 5.
    "fit_softmax_lbfgs": ("fit_softmax_regression",
        "import numpy as np\n"
        "from scipy.optimize import minimize\n"
        "from scipy.special import logsumexp\n"
        "def fit_softmax_regression(X, y, l2=1.0, lr=None, max_iter=10000, tol=1e-8):\n"
        "    X = np.asarray(X, float)\n"
        "    classes, index = np.unique(y, return_inverse=True)\n"
        "    N, D, C = X.shape[0], X.shape[1], len(classes)\n"
        "    T = np.eye(C)[index.ravel()]\n"
        "    def f(theta):\n"
        "        W, b = theta[:D * C].reshape(D, C), theta[D * C:]\n"
        "        A = X @ W + b\n"
        "        lse = logsumexp(A, axis=1, keepdims=True)\n"
        "        R = np.exp(A - lse) - T\n"
        "        loss = np.sum(lse[:, 0] - np.sum(A * T, axis=1)) + 0.5 * l2 * np.sum(W * W)\n"
        "        return loss, np.r_[(X.T @ R + l2 * W).ravel(), R.sum(axis=0)]\n"
        "    res = minimize(f, np.zeros(D * C + C), jac=True, method='L-BFGS-B',\n"
        "                   options={'gtol': 1e-12, 'ftol': 0.0, 'maxiter': 100000})\n"
        "    W, b = res.x[:D * C].reshape(D, C), res.x[D * C:]\n"
        "    return classes, W, b - b.mean()\n", 4),
    # The naive log Phi: np.log(norm.cdf(z)) is -inf below z = -38. Visible 2, the edge case
    # and the hidden tests (scores in the hundreds) 0: 2 of 8.
    "probit_nll_naive_log_cdf": ("probit_nll",
        "import numpy as np\n"
        "from scipy.stats import norm\n"
        "def probit_nll(w, b, X, y, l2=0.0):\n"
        "    w = np.asarray(w, float); a = np.asarray(X, float) @ w + b\n"
        "    y = np.asarray(y, float)\n"
        "    p = norm.cdf(a)\n"
        "    return float(-np.sum(y * np.log(p) + (1 - y) * np.log(1 - p)) + 0.5 * l2 * w @ w)\n",
        2),
    # The nearest printed example: the logistic log loss.
    "probit_nll_logistic_loss": ("probit_nll",
        "import numpy as np\n"
        "def probit_nll(w, b, X, y, l2=0.0):\n"
        "    w = np.asarray(w, float); a = np.asarray(X, float) @ w + b\n"
        "    z = np.where(np.asarray(y) == 1, a, -a)\n"
        "    return float(np.sum(np.logaddexp(0, -z)) + 0.5 * l2 * w @ w)\n", 0),
    # The naive ratio pdf / cdf: 0 / 0 = nan for badly misclassified points. Visible 2,
    # edge case and hidden tests 0: 2 of 9.
    "probit_nll_grad_naive_ratio": ("probit_nll_grad",
        "import numpy as np\n"
        "from scipy.stats import norm\n"
        "def probit_nll_grad(w, b, X, y, l2=0.0):\n"
        "    X = np.asarray(X, float); w = np.asarray(w, float)\n"
        "    s = 2 * np.asarray(y, float) - 1\n"
        "    z = s * (X @ w + b)\n"
        "    g = -s * norm.pdf(z) / norm.cdf(z)\n"
        "    return X.T @ g + l2 * w, float(g.sum())\n", 2),
    # Another optimiser (L-BFGS): the minimiser (hidden 5), not the steps (the visible cell
    # checks one step first, and the steps cell): 5 of 9.
    "fit_probit_lbfgs": ("fit_probit_regression",
        "import numpy as np\n"
        "from scipy.optimize import minimize\n"
        "from scipy.special import log_ndtr\n"
        "def fit_probit_regression(X, y, l2=1.0, lr=None, max_iter=10000, tol=1e-8):\n"
        "    X = np.asarray(X, float); s = 2 * np.asarray(y, float) - 1\n"
        "    Xt = np.column_stack([X, np.ones(len(X))]); mask = np.r_[np.ones(X.shape[1]), 0.0]\n"
        "    def f(theta):\n"
        "        z = s * (Xt @ theta)\n"
        "        g = -s * np.exp(-z * z / 2 - 0.5 * np.log(2 * np.pi) - log_ndtr(z))\n"
        "        loss = -np.sum(log_ndtr(z)) + 0.5 * l2 * np.sum(mask * theta**2)\n"
        "        return loss, Xt.T @ g + l2 * mask * theta\n"
        "    res = minimize(f, np.zeros(Xt.shape[1]), jac=True, method='L-BFGS-B',\n"
        "                   options={'gtol': 1e-12, 'ftol': 0.0, 'maxiter': 100000})\n"
        "    return res.x[:-1], res.x[-1]\n", 5),
}

# ---------------------------------------------------------------- warnings and method tests
# The np.where idioms compute both branches, so the discarded one warns (overflow, 0 / 0,
# log 0, 1 / 0): warnings never cost points, and each keeps full marks.
_WHERE_SIGMOID = (
    "import numpy as np\n"
    "def _sigmoid(t):\n"
    "    return np.where(t >= 0, 1 / (1 + np.exp(-t)), np.exp(t) / (1 + np.exp(t)))\n"
)
_WHERE_MILLS = (
    "import numpy as np\n"
    "from scipy.special import ndtr\n"
    "def _mills(z):\n"
    "    # phi(z) / Phi(z): the plain ratio above -20 (0 / 0 below), the asymptotic series\n"
    "    # -z / (1 - 1/z^2 + 3/z^4 - 15/z^6 + 105/z^8 - 945/z^10) below (1 / 0 at z = 0)\n"
    "    naive = np.exp(-z * z / 2) / np.sqrt(2 * np.pi) / ndtr(z)\n"
    "    u = 1 / (z * z)\n"
    "    series = -z / (1 - u + 3 * u**2 - 15 * u**3 + 105 * u**4 - 945 * u**5)\n"
    "    return np.where(z > -20, naive, series)\n"
)
HONEST["where_idioms"] = {
    "sigmoid":
        _WHERE_SIGMOID +
        "def sigmoid(t):\n"
        "    out = _sigmoid(np.asarray(t, dtype=float))\n"
        "    return out[()]\n",
    # log(1 + e^-z) as written for z > 0 and as -z + log(1 + e^z) below: e^|z| overflows in the
    # branch that is thrown away.
    "logistic_nll":
        "import numpy as np\n"
        "def logistic_nll(w, b, X, y, l2=0.0):\n"
        "    w = np.asarray(w, float)\n"
        "    a = np.asarray(X, float) @ w + b\n"
        "    z = np.where(np.asarray(y) == 1, a, -a)\n"
        "    terms = np.where(z > 0, np.log1p(np.exp(-z)), -z + np.log1p(np.exp(z)))\n"
        "    return float(terms.sum() + 0.5 * l2 * w @ w)\n",
    "logistic_nll_grad":
        _WHERE_SIGMOID +
        "def logistic_nll_grad(w, b, X, y, l2=0.0):\n"
        "    X = np.asarray(X, float); w = np.asarray(w, float)\n"
        "    r = _sigmoid(X @ w + b) - np.asarray(y, float)\n"
        "    return X.T @ r + l2 * w, float(r.sum())\n",
    "fit_logistic_regression":
        _WHERE_SIGMOID +
        # (the intercept as a last weight of a column of ones, unpenalised: written unlike the
        # reference's loop, which the similarity tests compare it with)
        "def fit_logistic_regression(X, y, l2=1.0, lr=None, max_iter=10000, tol=1e-8):\n"
        "    Z = np.column_stack([np.asarray(X, float), np.ones(len(X))])\n"
        "    t = np.asarray(y, float)\n"
        "    theta = np.zeros(Z.shape[1])\n"
        "    penalty = np.r_[np.full(Z.shape[1] - 1, l2), 0.0]\n"
        "    steps = 0\n"
        "    while True:\n"
        "        g = Z.T @ (_sigmoid(Z @ theta) - t) + penalty * theta\n"
        "        if np.max(np.abs(g)) <= tol or steps == max_iter:\n"
        "            return theta[:-1], float(theta[-1])\n"
        "        theta = theta - lr * g\n"
        "        steps += 1\n",
    # log Phi(z) as log(ndtr(z)) above -30 (log 0 below) and its asymptotic series below
    # (log of a negative number above 0).
    "probit_nll":
        "import numpy as np\n"
        "from scipy.special import ndtr\n"
        "def probit_nll(w, b, X, y, l2=0.0):\n"
        "    w = np.asarray(w, float); s = 2 * np.asarray(y, float) - 1\n"
        "    z = s * (np.asarray(X, float) @ w + b)\n"
        "    u = 1 / (z * z)\n"
        "    series = (-z * z / 2 - np.log(-z) - 0.5 * np.log(2 * np.pi)\n"
        "              + np.log1p(-u + 3 * u**2 - 15 * u**3 + 105 * u**4 - 945 * u**5))\n"
        "    return float(-np.where(z > -30, np.log(ndtr(z)), series).sum() + 0.5 * l2 * w @ w)\n",
    "probit_nll_grad":
        _WHERE_MILLS +
        "def probit_nll_grad(w, b, X, y, l2=0.0):\n"
        "    X = np.asarray(X, float); w = np.asarray(w, float); s = 2 * np.asarray(y, float) - 1\n"
        "    g = -s * _mills(s * (X @ w + b))\n"
        "    return X.T @ g + l2 * w, float(g.sum())\n",
    "fit_probit_regression":
        _WHERE_MILLS +
        "def fit_probit_regression(X, y, l2=1.0, lr=None, max_iter=10000, tol=1e-8):\n"
        "    X = np.asarray(X, float); s = 2 * np.asarray(y, float) - 1\n"
        "    w, b = np.zeros(X.shape[1]), 0.0\n"
        "    for _ in range(max_iter):\n"
        "        g = -s * _mills(s * (X @ w + b))\n"
        "        gw, gb = X.T @ g + l2 * w, g.sum()\n"
        "        if max(np.abs(gw).max(), abs(gb)) <= tol:\n"
        "            break\n"
        "        w, b = w - lr * gw, b - lr * gb\n"
        "    return w, float(b)\n",
}

# Finite differences of the loss instead of the derived gradient: right to about 1e-9 on
# ordinary data, off where the loss is huge beside a gradient of order one (the hidden cells).
# Central differences with a relative step keep visible and edge: logistic_nll_grad 2 of 4,
# probit_nll_grad 4 of 9. A five-point stencil with a step of 1e-3 keeps logistic_nll_grad's
# visible and edge cells (2 of 4) but loses probit_nll_grad's edge case too, where the loss is
# 1e8 (2 of 9).
_FINITE_DIFFERENCES = (
    "import numpy as np\n"
    "{loss}"
    "def {task}(w, b, X, y, l2=0.0):\n"
    "    X = np.asarray(X, float); y = np.asarray(y, float)\n"
    "    f = lambda theta: _loss(theta, X, y) + 0.5 * l2 * theta[:-1] @ theta[:-1]\n"
    "    theta = np.r_[np.asarray(w, float), b]\n"
    "    grad = np.zeros_like(theta)\n"
    "    for i in range(len(theta)):\n"
    "        e = np.zeros_like(theta)\n"
    "        e[i] = h = {step}\n"
    "        grad[i] = {stencil}\n"
    "    return grad[:-1], float(grad[-1])\n"
)
_LOGISTIC_LOSS = (
    "def _loss(theta, X, y):\n"
    "    a = X @ theta[:-1] + theta[-1]\n"
    "    return np.sum(np.logaddexp(0, a) - y * a)\n"
)
_PROBIT_LOSS = (
    "from scipy.special import log_ndtr\n"
    "def _loss(theta, X, y):\n"
    "    return -np.sum(log_ndtr((2 * y - 1) * (X @ theta[:-1] + theta[-1])))\n"
)
_CENTRAL = "(f(theta + e) - f(theta - e)) / (2 * h)"
_FIVE_POINT = ("(f(theta - 2 * e) - 8 * f(theta - e) + 8 * f(theta + e) - f(theta + 2 * e)) "
               "/ (12 * h)")

# Hybrid fits: the prescribed steps when max_iter is small (what the step tests used to ask
# for: at most 40 steps), another method when it is large (Newton's, accelerated gradient,
# FISTA): the minimiser every time, but not the point after k steps for a large k, so each
# loses its cell of steps: fit_logistic_regression 4 of 5, fit_softmax_regression 4 of 5,
# fit_probit_regression 7 of 9.
_LOGISTIC_NEWTON = (
    _GRAD +
    "def _newton(X, y, l2):\n"
    "    Xt = np.column_stack([X, np.ones(len(X))])\n"
    "    penalty = np.r_[np.full(X.shape[1], l2), 0.0]\n"
    "    loss = lambda t: np.sum(np.logaddexp(0, Xt @ t) - y * (Xt @ t)) + 0.5 * penalty @ t**2\n"
    "    theta = np.zeros(Xt.shape[1])\n"
    "    for _ in range(200):\n"
    "        gw, gb = _grad(theta[:-1], theta[-1], X, y, l2)\n"
    "        g = np.r_[gw, gb]\n"
    "        if np.abs(g).max() <= 1e-12:\n"
    "            break\n"
    "        p = np.exp(-np.logaddexp(0, -(Xt @ theta)))\n"
    "        H = Xt.T @ ((p * (1 - p))[:, None] * Xt) + np.diag(penalty)\n"
    "        step, t = np.linalg.solve(H, g), 1.0\n"
    "        while t > 1e-10 and loss(theta - t * step) > loss(theta):\n"
    "            t /= 2\n"
    "        theta = theta - t * step\n"
    "    return theta[:-1], theta[-1]\n"
    "def fit_logistic_regression(X, y, l2=1.0, lr=None, max_iter=10000, tol=1e-8):\n"
    "    X = np.asarray(X, float); y = np.asarray(y, float)\n"
    "    if max_iter >= {switch}:\n"
    "        return _newton(X, y, l2)\n"
    "    w, b = np.zeros(X.shape[1]), 0.0\n"
    "    for _ in range(max_iter):\n"
    "        gw, gb = _grad(w, b, X, y, l2)\n"
    "        if max(np.abs(gw).max(), abs(gb)) <= tol:\n"
    "            break\n"
    "        w, b = w - lr * gw, b - lr * gb\n"
    "    return w, b\n"
)
SHORTCUTS.update({
    "logistic_nll_grad_finite_differences": ("logistic_nll_grad", _FINITE_DIFFERENCES.format(
        loss=_LOGISTIC_LOSS, task="logistic_nll_grad", step="1e-5 * max(1.0, abs(theta[i]))",
        stencil=_CENTRAL), 2),
    "logistic_nll_grad_five_point": ("logistic_nll_grad", _FINITE_DIFFERENCES.format(
        loss=_LOGISTIC_LOSS, task="logistic_nll_grad", step="1e-3", stencil=_FIVE_POINT), 2),
    "probit_nll_grad_finite_differences": ("probit_nll_grad", _FINITE_DIFFERENCES.format(
        loss=_PROBIT_LOSS, task="probit_nll_grad", step="1e-5 * max(1.0, abs(theta[i]))",
        stencil=_CENTRAL), 4),
    "probit_nll_grad_five_point": ("probit_nll_grad", _FINITE_DIFFERENCES.format(
        loss=_PROBIT_LOSS, task="probit_nll_grad", step="1e-3", stencil=_FIVE_POINT), 2),
    "fit_logistic_gd_then_newton": ("fit_logistic_regression",
                                    _LOGISTIC_NEWTON.replace("{switch}", "41"), 4),
    # Newton's method only from the convergence runs' budget (5000 steps) up: caught by the
    # step test that runs the whole budget.
    "fit_logistic_newton_at_convergence_budget": ("fit_logistic_regression",
                                                  _LOGISTIC_NEWTON.replace("{switch}", "5000"), 4),
    "fit_softmax_gd_then_accelerated": ("fit_softmax_regression",
        "import numpy as np\n"
        "def fit_softmax_regression(X, y, l2=1.0, lr=None, max_iter=10000, tol=1e-8):\n"
        "    X = np.asarray(X, float)\n"
        "    classes, index = np.unique(y, return_inverse=True)\n"
        "    T = np.eye(len(classes))[index.ravel()]\n"
        "    def grad(W, b):\n"
        "        A = X @ W + b\n"
        "        P = np.exp(A - A.max(axis=1, keepdims=True))\n"
        "        R = P / P.sum(axis=1, keepdims=True) - T\n"
        "        return X.T @ R + l2 * W, R.sum(axis=0)\n"
        "    W, b = np.zeros((X.shape[1], len(classes))), np.zeros(len(classes))\n"
        "    V, c = W, b                  # Nesterov's extrapolated point\n"
        "    for k in range(max_iter):\n"
        "        gW, gb = grad(W, b)\n"
        "        if max(np.abs(gW).max(), np.abs(gb).max()) <= tol:\n"
        "            break\n"
        "        if max_iter <= 40:       # the prescribed steps\n"
        "            W, b = W - lr * gW, b - lr * gb\n"
        "            continue\n"
        "        gV, gc = grad(V, c)\n"
        "        W_new, b_new = V - lr * gV, c - lr * gc\n"
        "        V, c = W_new + k / (k + 3) * (W_new - W), b_new + k / (k + 3) * (b_new - b)\n"
        "        W, b = W_new, b_new\n"
        "    return classes, W, b - b.mean()\n", 4),
    "fit_probit_gd_then_newton": ("fit_probit_regression",
        _PROBIT_LOG +
        "def _grad(theta, Xt, s, penalty):\n"
        "    z = s * (Xt @ theta)\n"
        "    m = np.exp(-z * z / 2 - 0.5 * np.log(2 * np.pi) - log_ndtr(z))\n"
        "    return Xt.T @ (-s * m) + penalty * theta, z, m\n"
        "def fit_probit_regression(X, y, l2=1.0, lr=None, max_iter=10000, tol=1e-8):\n"
        "    X = np.asarray(X, float); s = 2 * np.asarray(y, float) - 1\n"
        "    Xt = np.column_stack([X, np.ones(len(X))])\n"
        "    penalty = np.r_[np.full(X.shape[1], l2), 0.0]\n"
        "    theta = np.zeros(Xt.shape[1])\n"
        "    if max_iter <= 40:\n"
        "        for _ in range(max_iter):\n"
        "            g, _, _ = _grad(theta, Xt, s, penalty)\n"
        "            if np.abs(g).max() <= tol:\n"
        "                break\n"
        "            theta = theta - lr * g\n"
        "        return theta[:-1], theta[-1]\n"
        "    loss = lambda t: -np.sum(log_ndtr(s * (Xt @ t))) + 0.5 * penalty @ t**2\n"
        "    for _ in range(200):\n"
        "        g, z, m = _grad(theta, Xt, s, penalty)\n"
        "        if np.abs(g).max() <= 1e-12:\n"
        "            break\n"
        "        H = Xt.T @ ((m * (m + z))[:, None] * Xt) + np.diag(penalty)\n"
        "        step, t = np.linalg.solve(H, g), 1.0\n"
        "        while t > 1e-10 and loss(theta - t * step) > loss(theta):\n"
        "            t /= 2\n"
        "        theta = theta - t * step\n"
        "    return theta[:-1], theta[-1]\n", 7),
})
