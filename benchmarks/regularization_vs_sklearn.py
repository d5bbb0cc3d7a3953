"""Ridge and LASSO: mlcourse_utils.regularization against scikit-learn on N x D data.

Times `ridge_fit` against `Ridge(alpha=lam)`, `lasso_fit` against `Lasso(alpha=lam)` and
`lasso_path` against `sklearn.linear_model.lasso_path` on the same standardised data
(correlated Gaussian features, a sparse true weight vector, N = 100 000 and D = 50 by default).
scikit-learn runs with tol=1e-12 so that both reach the same optimum; the largest coefficient
difference is printed next to each time ratio (ours / scikit-learn's, best of `--repeat` runs).
Run by hand:

    .venv/bin/python benchmarks/regularization_vs_sklearn.py [--n 100000] [--d 50] [--repeat 5]
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from sklearn.linear_model import Lasso, Ridge
from sklearn.linear_model import lasso_path as sk_lasso_path

from mlcourse_utils import regularization as reg


def data(n, d, seed=0):
    """Standardised correlated features, y = X w + noise with 10 nonzero weights."""
    rng = np.random.default_rng(seed)
    mixing = np.eye(d) + 0.3 * rng.normal(size=(d, d))
    X = rng.normal(size=(n, d)) @ mixing
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    w = np.zeros(d)
    w[:10] = rng.normal(0.0, 2.0, size=10)
    return X, X @ w + 5.0 + rng.normal(0.0, 3.0, size=n)


def best_time(fn, repeat):
    times, out = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return min(times), out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--d", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    X, y = data(args.n, args.d)
    lam_max = reg.lasso_lambda_max(X, y)
    lam = 0.05 * lam_max
    lams = np.geomspace(lam_max, 1e-3 * lam_max, 100)
    print(f"N = {args.n}, D = {args.d}, lambda_max = {lam_max:.4g}, LASSO lambda = {lam:.4g}")

    rows = []
    t_ours, (w, b) = best_time(lambda: reg.ridge_fit(X, y, 10.0), args.repeat)
    t_sk, sk = best_time(lambda: Ridge(alpha=10.0).fit(X, y), args.repeat)
    rows.append(("ridge_fit vs Ridge", t_ours, t_sk, np.abs(w - sk.coef_).max()))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t_ours, (w, b) = best_time(lambda: reg.lasso_fit(X, y, lam), args.repeat)
        t_sk, sk = best_time(lambda: Lasso(alpha=lam, tol=1e-12, max_iter=100_000).fit(X, y),
                             args.repeat)
        rows.append(("lasso_fit vs Lasso(tol=1e-12)", t_ours, t_sk, np.abs(w - sk.coef_).max()))
        t_sk4, sk4 = best_time(lambda: Lasso(alpha=lam).fit(X, y), args.repeat)
        rows.append(("lasso_fit vs Lasso(default tol)", t_ours, t_sk4, np.abs(w - sk4.coef_).max()))

        t_ours, W = best_time(lambda: reg.lasso_path(X, y, lams), args.repeat)

        def sk_path():
            # scikit-learn's path fits no intercept: centre X (y's mean then does not matter).
            return sk_lasso_path(X - X.mean(axis=0), y, alphas=lams, tol=1e-12,
                                 max_iter=100_000)[1]

        t_sk, coefs = best_time(sk_path, args.repeat)
        rows.append(("lasso_path vs lasso_path(tol=1e-12)", t_ours, t_sk,
                     np.abs(W - coefs.T).max()))   # both in the order of lams (decreasing)

    print(f"{'comparison':38s} {'ours (s)':>9s} {'sklearn (s)':>11s} {'ratio':>6s} "
          f"{'max |dw|':>9s}")
    for name, ours, theirs, diff in rows:
        print(f"{name:38s} {ours:9.4f} {theirs:11.4f} {ours / theirs:6.2f} {diff:9.1e}")


if __name__ == "__main__":
    main()
