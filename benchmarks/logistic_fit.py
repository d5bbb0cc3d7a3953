"""Fitting speed of mlcourse_utils.logistic against scikit-learn's LogisticRegression (lbfgs).

Usage: ``.venv/bin/python benchmarks/logistic_fit.py [--n 100000] [--d 50] [--classes 3]
[--repeats 3]``

Draws standardised Gaussian features and labels from a softmax model, then times, with the same
penalty (l2 = 1, i.e. C = 1):

* binary: ``fit_logistic_regression(X, y)`` (for N > 20,000: L-BFGS, then Newton steps with a
  Hessian from 20,000 rows) against
  ``LogisticRegression(C=1)`` on the labels "class 0 or not";
* multinomial: ``fit_softmax_regression(X, y)`` (L-BFGS, then Newton steps) against the
  multinomial ``LogisticRegression(C=1)``.

scikit-learn runs at its default tolerance (1e-4) and at 1e-8. For each fit it prints the best
wall-clock and CPU time over the repeats, the ratio ours / scikit-learn, and the largest
coefficient difference to our fit (the optimum itself is the same: scikit-learn penalises
(1 / 2C) ||w||^2 with the intercept unpenalised, as we do). Goal: ratios of at most about 1.5
at the same optimum. Speed is never asserted in the test suite; this script only prints.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from sklearn.linear_model import LogisticRegression

from mlcourse_utils import logistic


def make_data(n, d, n_classes, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    A = X @ (0.3 * rng.normal(size=(d, n_classes)))
    P = np.exp(A - A.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    y = (P.cumsum(axis=1) > rng.random((n, 1))).argmax(axis=1)
    return (X - X.mean(axis=0)) / X.std(axis=0), y


def timed(fit, repeats):
    """(best wall seconds, best CPU seconds, last result) over `repeats` calls."""
    wall, cpu, out = np.inf, np.inf, None
    for _ in range(repeats):
        w0, c0 = time.perf_counter(), time.process_time()
        out = fit()
        wall = min(wall, time.perf_counter() - w0)
        cpu = min(cpu, time.process_time() - c0)
    return wall, cpu, out


def report(name, ours, theirs, diff):
    print(f"  {name:32s} wall {theirs[0]:7.3f} s  cpu {theirs[1]:7.3f} s   "
          f"ours/theirs: wall {ours[0] / theirs[0]:5.2f}  cpu {ours[1] / theirs[1]:5.2f}   "
          f"max |coef diff| {diff:.1e}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--d", type=int, default=50)
    parser.add_argument("--classes", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    X, y = make_data(args.n, args.d, args.classes)
    yb = (y == 0).astype(int)
    print(f"N = {args.n}, D = {args.d}, C = {args.classes}, l2 = 1 (C = 1), best of {args.repeats}")

    ours = timed(lambda: logistic.fit_logistic_regression(X, yb, l2=1.0), args.repeats)
    w, b = ours[2]
    print(f"binary, ours (L-BFGS + Newton):    wall {ours[0]:7.3f} s  cpu {ours[1]:7.3f} s")
    for tol in (1e-4, 1e-8):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # (tol bound as a default: the lambda is called here, inside this iteration)
            theirs = timed(lambda tol=tol: LogisticRegression(C=1.0, tol=tol,
                                                              max_iter=10_000).fit(X, yb),
                           args.repeats)
        sk = theirs[2]
        diff = max(np.abs(w - sk.coef_[0]).max(), abs(b - sk.intercept_[0]))
        report(f"scikit-learn lbfgs, tol={tol:g}", ours, theirs, diff)

    ours = timed(lambda: logistic.fit_softmax_regression(X, y, l2=1.0), args.repeats)
    _, W, bb = ours[2]
    print(f"{args.classes} classes, ours (L-BFGS + Newton): wall {ours[0]:7.3f} s  "
          f"cpu {ours[1]:7.3f} s")
    for tol in (1e-4, 1e-8):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            theirs = timed(lambda tol=tol: LogisticRegression(C=1.0, tol=tol,
                                                              max_iter=10_000).fit(X, y),
                           args.repeats)
        sk = theirs[2]
        diff = max(np.abs(W - sk.coef_.T).max(),
                   np.abs(bb - (sk.intercept_ - sk.intercept_.mean())).max())
        report(f"scikit-learn lbfgs, tol={tol:g}", ours, theirs, diff)


if __name__ == "__main__":
    main()
