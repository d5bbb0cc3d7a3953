"""Hand-written answers for the `logistic_regression` assignment, used by tests/test_assignments.py.

WRONG: per task, plausible mistakes with the task score each must get (derived from which of
the task's test cells the mistake fails). Points per task: the worked example (visible, 1), one
edge case (visible, 1) and the hidden tests (2), 4 in all.
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
         "    r = 1 / (1 + np.exp(-(X @ w + b))) - np.asarray(y, float)\n"
         "    return X.T @ r, float(r.sum())\n", 1),
        # The bias gets the penalty's derivative too.
        ("import numpy as np\n"
         "def logistic_nll_grad(w, b, X, y, l2=0.0):\n"
         "    X = np.asarray(X, float); w = np.asarray(w, float)\n"
         "    r = 1 / (1 + np.exp(-(X @ w + b))) - np.asarray(y, float)\n"
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
        "sigmoid":
            "from scipy.special import expit\n"
            "def sigmoid(t):\n"
            "    return expit(t)\n",
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
        # The plain formula: right values, with an overflow warning for t < -709.
        "sigmoid":
            "import sys\n"
            "import numpy as np\n"
            "def sigmoid(t):\n"
            "    print('sigmoid called', file=sys.stderr)\n"
            "    return 1 / (1 + np.exp(-np.asarray(t, dtype=float)))\n",
        "logistic_nll_grad":
            "import numpy as np\n"
            "def logistic_nll_grad(w, b, X, y, l2=0.0):\n"
            "    X = np.asarray(X, float); w = np.asarray(w, float)\n"
            "    r = 1 / (1 + np.exp(-(X @ w + b))) - np.asarray(y, float)   # may warn: harmless\n"
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
