"""Instructor-only reference for the logistic_regression assignment's hidden tests.

Never released: nbgrader_config.py keeps this file out of exercises/, and it is not part of the
course package (students can read mlcourse_utils, so the reference of a task beyond the chapter
cannot live there). The hidden test cells load it from solutions/logistic_regression/ in the
grader's process (see ``load`` in those cells).

It holds the extension tasks (probit regression: loss, gradient and gradient-descent fit) and the
plain methods the tasks prescribe (gradient descent from zero with a fixed step), so that hidden
tests can compare a student's iterates, not only the point they end at.

It also gives the model answer's numbers of section 8 (the breast-cancer interpretation) for
every student's variant (:func:`variant_numbers`), which the manual-grading page shows beside
each answer.
"""

from __future__ import annotations

import functools

import numpy as np
from scipy.special import erfcx, log_ndtr

def _design(w, b, X, y):
    X = np.asarray(X, dtype=float)
    w = np.asarray(w, dtype=float)
    y = np.asarray(y, dtype=float)
    return w, float(b), X, y


def _sigmoid(a):
    e = np.exp(-np.abs(a))
    return np.where(a >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def probit_nll(w, b, X, y, l2=0.0):
    """-sum_n log Phi(z_n) + (l2 / 2) ||w||^2 with z_n = (2 y_n - 1)(w.x_n + b).

    log Phi by scipy.special.log_ndtr: finite and accurate for any score (log Phi(-1e4) is about
    -5e7, where Phi itself underflows to 0).
    """
    w, b, X, y = _design(w, b, X, y)
    z = (2.0 * y - 1.0) * (X @ w + b)
    return float(-np.sum(log_ndtr(z)) + 0.5 * l2 * (w @ w))


def mills_ratio(z):
    """phi(z) / Phi(z) = sqrt(2 / pi) / erfcx(-z / sqrt(2)), exact to rounding for every z.

    (Phi(z) = erfc(-z / sqrt 2) / 2 = erfcx(-z / sqrt 2) exp(-z^2 / 2) / 2, and the factor
    exp(-z^2 / 2) cancels with phi's: no 0 / 0 for z << 0, and 0 for z >> 0.)
    """
    z = np.asarray(z, dtype=float)
    with np.errstate(over="ignore"):
        return np.sqrt(2.0 / np.pi) / erfcx(-z / np.sqrt(2.0))


def probit_nll_grad(w, b, X, y, l2=0.0):
    """(grad_w, grad_b) of probit_nll: -sum_n s_n (phi/Phi)(z_n) x_n + l2 w, and the same sum for b."""
    w, b, X, y = _design(w, b, X, y)
    s = 2.0 * y - 1.0
    g = -s * mills_ratio(s * (X @ w + b))
    return X.T @ g + l2 * w, float(np.sum(g))


def fit_probit_regression(X, y, l2=1.0, lr=None, max_iter=10000, tol=1e-8):
    """Plain gradient descent on probit_nll from w = 0, b = 0 with step lr (as the task prescribes)."""
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    w, b = np.zeros(X.shape[1]), 0.0
    for _ in range(max_iter):
        gw, gb = probit_nll_grad(w, b, X, y, l2)
        if max(np.max(np.abs(gw), initial=0.0), abs(gb)) <= tol:
            break
        w, b = w - lr * gw, b - lr * gb
    return w, b


def probit_minimiser(X, y, l2=1.0):
    """The minimiser of probit_nll by Newton's method (for the tests of convergence)."""
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    Xt = np.column_stack([X, np.ones(len(X))])
    s = 2.0 * y - 1.0
    penalty = np.r_[np.full(X.shape[1], l2), 0.0]
    theta = np.zeros(Xt.shape[1])
    for _ in range(100):
        z = s * (Xt @ theta)
        m = mills_ratio(z)
        grad = Xt.T @ (-s * m) + penalty * theta
        if np.max(np.abs(grad)) <= 1e-12:
            break
        curvature = m * (m + z)          # d^2/dz^2 of -log Phi(z), in (0, 1)
        H = Xt.T @ (curvature[:, None] * Xt) + np.diag(penalty)
        step = np.linalg.solve(H, grad)
        t, f0 = 1.0, -np.sum(log_ndtr(z)) + 0.5 * penalty @ theta**2
        while t > 1e-10:                 # backtracking: Newton from zero can overshoot
            new = theta - t * step
            if -np.sum(log_ndtr(s * (Xt @ new))) + 0.5 * penalty @ new**2 <= f0:
                break
            t /= 2
        theta = new
    return theta[:-1], float(theta[-1])


def logistic_gd(X, y, l2=1.0, lr=None, max_iter=10000, tol=1e-8):
    """fit_logistic_regression's prescribed method: gradient descent from 0, at most max_iter steps."""
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    w, b = np.zeros(X.shape[1]), 0.0
    for _ in range(max_iter):
        r = _sigmoid(X @ w + b) - y
        gw, gb = X.T @ r + l2 * w, float(np.sum(r))
        if max(np.max(np.abs(gw), initial=0.0), abs(gb)) <= tol:
            break
        w, b = w - lr * gw, b - lr * gb
    return w, b


def softmax_gd(X, y, l2=1.0, lr=None, max_iter=10000, tol=1e-8):
    """fit_softmax_regression's prescribed method: gradient descent from zeros; b centred."""
    X = np.asarray(X, dtype=float)
    classes, index = np.unique(np.asarray(y), return_inverse=True)
    T = np.eye(len(classes))[index.reshape(-1)]
    W, b = np.zeros((X.shape[1], len(classes))), np.zeros(len(classes))
    for _ in range(max_iter):
        A = X @ W + b
        E = np.exp(A - A.max(axis=1, keepdims=True))
        R = E / E.sum(axis=1, keepdims=True) - T
        gW, gb = X.T @ R + l2 * W, R.sum(axis=0)
        if max(np.max(np.abs(gW)), np.max(np.abs(gb))) <= tol:
            break
        W, b = W - lr * gW, b - lr * gb
    return classes, W, b - b.mean()


def collinear_problem(rng, n, d, classes=2):
    """Data on which plain gradient descent is slow: (X (n, d), labels (n,) in 0..classes-1).

    The features are one common factor plus noise of a hundredth of its size (correlations
    about 0.9999), shifted and scaled; the labels come from a noisy score that also uses the
    small differences between the features, and every class occurs. With a penalty of about
    1e-3 and the safe step (1 / the largest curvature), the penalised loss has a condition
    number in the thousands: gradient descent is still far from the minimiser after 10 000
    steps, so the point it reaches after k steps tells the method apart from another method
    (Newton's, L-BFGS), which would be at the minimiser by then.
    """
    while True:
        z = rng.normal(size=(n, 1))
        noise = 0.01 * rng.normal(size=(n, d))
        scores = z * rng.normal(size=classes) + 100 * noise @ rng.normal(size=(d, classes))
        labels = np.argmax(scores + rng.gumbel(size=(n, classes)), axis=1)
        if len(np.unique(labels)) == classes:
            X = (z + noise) * rng.uniform(0.5, 2.0, size=d) + rng.normal(0.0, 1.0, size=d)
            return X, labels


# ---------------------------------------------------------------------------------------------
# Section 8: the breast-cancer interpretation, per variant
# ---------------------------------------------------------------------------------------------

#: The question with variants (its grade_id) and the features of its part (b).
INTERPRETATION = "interpretation"
SIZE_FEATURES = ("mean radius", "mean perimeter", "mean area")


@functools.lru_cache(maxsize=1)
def _breast_cancer():
    """(features (569, 30), diagnosis (569,) with 1 = benign, feature names): read once."""
    from sklearn.datasets import load_breast_cancer

    cancer = load_breast_cancer()
    return cancer.data, cancer.target, tuple(str(n) for n in cancer.feature_names)


def breast_cancer_variant(params):
    """(X, y, names): the variant's tumours (``V.rows(569, 450)``), each feature standardised
    over them (its mean subtracted, divided by its standard deviation), as section 8 asks."""
    from mlcourse_utils.grading.variants import Variant

    rows = Variant("logistic_regression", "", {INTERPRETATION: dict(params)}).rows(569, 450)
    data, target, names = _breast_cancer()
    D = data[rows]
    return (D - D.mean(axis=0)) / D.std(axis=0), target[rows].astype(float), names


@functools.lru_cache(maxsize=64)
def _breast_cancer_fit(l2, sample):
    """The minimiser (w, b) of the penalised log loss on the variant's tumours, and the
    training accuracy. Newton's method (the package's fit without ``lr``) to a gradient of
    1e-10: the point the prescribed gradient descent reaches within its tol of 1e-6, in a
    fraction of a second instead of thousands of steps."""
    from mlcourse_utils.logistic import fit_logistic_regression

    X, y, _ = breast_cancer_variant({"l2": l2, "sample": sample})
    w, b = fit_logistic_regression(X, y, l2=l2, tol=1e-10)
    accuracy = float(np.mean(((X @ w + b) > 0) == y))
    return w, b, accuracy, len(y)


def variant_numbers(question, params):
    """The model answer's numbers of section 8 for one variant: an ordered dict, label -> number
    or short text.

    question : "interpretation" (the Markdown answer; its code cell interpretation_code prints
    the same numbers). params : {"l2": the penalty, "sample": 0 for all 569 tumours, else the
    seed of a subset of 450}, as V.question(question) gives them. The numbers: which tumours,
    the feature with the largest absolute weight with its weight and odds factor e^w per standard
    deviation (part (a)), the runner-up (a near tie lets a student name either), the weights of
    the mean radius, perimeter and area (part (b)) and, should the student try it, the same at
    l2 = 0.01, and the training accuracy (part (c)). Weights rounded to 3 decimals, as the code
    cell prints them.
    """
    if question != INTERPRETATION:
        raise ValueError(f"logistic_regression has no question {question!r} with variants "
                         f"(it has: {INTERPRETATION})")
    missing = {"l2", "sample"} - set(params)
    if missing:
        raise ValueError(f"params of {INTERPRETATION} need l2 and sample, missing "
                         f"{', '.join(sorted(missing))}")
    l2, sample = float(params["l2"]), int(params["sample"])
    w, _, accuracy, n = _breast_cancer_fit(l2, sample)
    names = _breast_cancer()[2]
    first, second = np.argsort(-np.abs(w), kind="stable")[:2]
    # The tumours in words, not a number: 569 is in the question's text, no evidence of a
    # variant for the similarity report.
    numbers = {"tumours fitted": "all 569" if n == 569 else f"{n} of 569 (sample {sample})",
               "largest |weight|": names[first],
               "its weight": round(float(w[first]), 3),
               "odds factor e^w per SD": round(float(np.exp(w[first])), 3),
               "runner-up": f"{names[second]} {w[second]:+.3f}"}
    for feature in SIZE_FEATURES:
        numbers[f"weight of {feature}"] = round(float(w[names.index(feature)]), 3)
    small, _, _, _ = _breast_cancer_fit(0.01, sample)
    numbers["radius, perimeter, area at l2 = 0.01"] = " / ".join(
        f"{small[names.index(f)]:+.1f}" for f in SIZE_FEATURES)
    numbers["training accuracy"] = round(accuracy, 3)
    return numbers
