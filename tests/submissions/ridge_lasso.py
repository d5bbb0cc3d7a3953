"""Hand-written answers for the `ridge_lasso` assignment, used by tests/test_assignments.py.

WRONG: per task, plausible mistakes with the task score each must get (derived from which of
the task's test cells the mistake fails). Every task of the chapter has a visible cell worth 1
and a hidden cell worth 2; lasso_fit and lasso_path also have a cell worth 1 on their iterates
(sweeps from zero, warm starts along the path), 4 in all. A score of 1 marks a mistake that the
visible examples (one feature, an orthonormal design, 1-D arrays) cannot reveal but the hidden
tests do. The tasks beyond the chapter: weighted_ridge_fit 2 + 2 + 4 = 8, nonneg_lasso_fit
2 + 2 (sweeps) + 5 = 9.
HONEST: correct answers written differently from the reference; each must get full marks.
SHORTCUTS: another algorithm for the same minimiser, a path without warm starts, the answer of
the nearest printed example, each with its score (below full marks), as
{label: (task, answer, score)}.
"""

MODULE = "regularization"

#: Shortcuts through a call the task forbids (metadata.mlcourse.forbidden of the notebook), as
#: {task: [(answer, the call the feedback must name)]}: each earns its task nothing, by name
#: (aliases, getattr, importlib) or, when the name is built at run time, by the sandbox's watch.
FORBIDDEN_SHORTCUTS = {
    "ridge_fit": [
        ("import numpy as np\n"
         "def ridge_fit(X, y, lam):\n"
         "    import importlib\n"
         "    Ridge = importlib.import_module('sk' + 'learn.linear_model').Ridge\n"
         "    m = Ridge(alpha=lam).fit(np.asarray(X, float), np.asarray(y, float))\n"
         "    return m.coef_, float(m.intercept_)\n", "sklearn"),
        # Damped least squares is ridge regression: lsqr and lsmr with damp = sqrt(lam).
        ("import numpy as np\n"
         "from scipy.sparse.linalg import lsqr\n"
         "def ridge_fit(X, y, lam):\n"
         "    X = np.asarray(X, float); y = np.asarray(y, float)\n"
         "    xm, ym = X.mean(axis=0), y.mean()\n"
         "    w = lsqr(X - xm, y - ym, damp=np.sqrt(lam), atol=0, btol=0, conlim=0,\n"
         "             iter_lim=10000)[0]\n"
         "    return w, float(ym - xm @ w)\n", "scipy.sparse.linalg.lsqr"),
    ],
    "weighted_ridge_fit": [
        ("import numpy as np\n"
         "import scipy.sparse.linalg\n"
         "def weighted_ridge_fit(X, y, lam, weights):\n"
         "    X = np.asarray(X, float); y = np.asarray(y, float); s = np.asarray(weights, float)\n"
         "    xm, ym = s @ X / s.sum(), s @ y / s.sum()\n"
         "    r = np.sqrt(s)\n"
         "    solve = getattr(scipy.sparse.linalg, ''.join(reversed('rmsl')))\n"
         "    w = solve(r[:, None] * (X - xm), r * (y - ym), damp=np.sqrt(lam), atol=0, btol=0,\n"
         "              conlim=0, maxiter=10000)[0]\n"
         "    return w, float(ym - xm @ w)\n", "scipy.sparse.linalg.lsmr"),
    ],
    "lasso_fit": [
        ("import numpy as np\n"
         "import scipy.optimize as so\n"
         "def lasso_fit(X, y, lam, tol=1e-8, max_iter=10000):\n"
         "    X = np.asarray(X, float); y = np.asarray(y, float)\n"
         "    d = X.shape[1]\n"
         "    def f(v):\n"
         "        w = v[:d] - v[d:2 * d]\n"
         "        return 0.5 * np.sum((y - X @ w - v[-1]) ** 2) + lam * np.sum(v[:2 * d])\n"
         "    bounds = [(0, None)] * (2 * d) + [(None, None)]\n"
         "    v = so.minimize(f, np.zeros(2 * d + 1), bounds=bounds, method='L-BFGS-B').x\n"
         "    return v[:d] - v[d:2 * d], float(v[-1])\n", "scipy.optimize"),
    ],
}

WRONG = {
    "ridge_fit": [
        # The intercept is penalised too (a column of ones inside the penalty).
        ("import numpy as np\n"
         "def ridge_fit(X, y, lam):\n"
         "    X = np.asarray(X, float); y = np.asarray(y, float)\n"
         "    A = np.column_stack([X, np.ones(len(y))])\n"
         "    theta = np.linalg.solve(A.T @ A + lam * np.eye(A.shape[1]), A.T @ y)\n"
         "    return theta[:-1], float(theta[-1])\n", 0),
        # No intercept and no centring.
        ("import numpy as np\n"
         "def ridge_fit(X, y, lam):\n"
         "    X = np.asarray(X, float); y = np.asarray(y, float)\n"
         "    return np.linalg.solve(X.T @ X + lam * np.eye(X.shape[1]), X.T @ y), 0.0\n", 0),
        # The penalty added to the mean (not the sum) of squared residuals.
        ("import numpy as np\n"
         "def ridge_fit(X, y, lam):\n"
         "    X = np.asarray(X, float); y = np.asarray(y, float)\n"
         "    Xc, yc = X - X.mean(0), y - y.mean()\n"
         "    n = len(y)\n"
         "    w = np.linalg.solve(Xc.T @ Xc / n + lam * np.eye(X.shape[1]), Xc.T @ yc / n)\n"
         "    return w, float(y.mean() - X.mean(0) @ w)\n", 0),
        # The intercept left at mean(y) (the -w^T mean(x) term forgotten).
        ("import numpy as np\n"
         "def ridge_fit(X, y, lam):\n"
         "    X = np.asarray(X, float); y = np.asarray(y, float)\n"
         "    Xc, yc = X - X.mean(0), y - y.mean()\n"
         "    w = np.linalg.solve(Xc.T @ Xc + lam * np.eye(X.shape[1]), Xc.T @ yc)\n"
         "    return w, float(y.mean())\n", 0),
        # Written for the one-feature example only: X is flattened into a single column.
        ("import numpy as np\n"
         "def ridge_fit(X, y, lam):\n"
         "    x = np.ravel(np.asarray(X, float)); y = np.asarray(y, float)\n"
         "    xc, yc = x - x.mean(), y - y.mean()\n"
         "    w = (xc @ yc) / (xc @ xc + lam)\n"
         "    return np.array([w]), float(y.mean() - w * x.mean())\n", 1),
    ],
    "soft_threshold": [
        # Hard thresholding: small values are zeroed but large ones are not shrunk.
        ("import numpy as np\n"
         "def soft_threshold(z, t):\n"
         "    z = np.asarray(z, float)\n"
         "    out = z * (np.abs(z) > t)\n"
         "    return float(out) if out.ndim == 0 else out\n", 0),
        # The sign is lost.
        ("import numpy as np\n"
         "def soft_threshold(z, t):\n"
         "    z = np.asarray(z, float)\n"
         "    out = np.maximum(np.abs(z) - t, 0.0)\n"
         "    return float(out) if out.ndim == 0 else out\n", 0),
        # No clipping at zero: values inside [-t, t] cross over.
        ("import numpy as np\n"
         "def soft_threshold(z, t):\n"
         "    z = np.asarray(z, float)\n"
         "    out = np.sign(z) * (np.abs(z) - t)\n"
         "    return float(out) if out.ndim == 0 else out\n", 0),
        # A loop over np.ravel(z): right for numbers and vectors, flattens a matrix.
        ("import numpy as np\n"
         "def soft_threshold(z, t):\n"
         "    flat = np.ravel(np.asarray(z, float))\n"
         "    out = np.array([np.sign(v) * max(abs(v) - t, 0.0) for v in flat])\n"
         "    return float(out[0]) if np.ndim(z) == 0 else out\n", 1),
    ],
    "lasso_objective": [
        # 1/N instead of 1/(2N).
        ("import numpy as np\n"
         "def lasso_objective(X, y, w, b, lam):\n"
         "    r = np.asarray(y, float) - np.asarray(X, float) @ np.asarray(w, float) - b\n"
         "    return float(np.mean(r ** 2) + lam * np.sum(np.abs(w)))\n", 0),
        # The intercept is penalised too.
        ("import numpy as np\n"
         "def lasso_objective(X, y, w, b, lam):\n"
         "    r = np.asarray(y, float) - np.asarray(X, float) @ np.asarray(w, float) - b\n"
         "    return float(np.mean(r ** 2) / 2 + lam * (np.sum(np.abs(w)) + abs(b)))\n", 0),
        # The ridge penalty lam ||w||^2 instead of lam ||w||_1.
        ("import numpy as np\n"
         "def lasso_objective(X, y, w, b, lam):\n"
         "    w = np.asarray(w, float)\n"
         "    r = np.asarray(y, float) - np.asarray(X, float) @ w - b\n"
         "    return float(np.mean(r ** 2) / 2 + lam * w @ w)\n", 0),
        # np.linalg.norm's default is the L2 norm: equal to |w| for one weight only.
        ("import numpy as np\n"
         "def lasso_objective(X, y, w, b, lam):\n"
         "    w = np.asarray(w, float)\n"
         "    r = np.asarray(y, float) - np.asarray(X, float) @ w - b\n"
         "    return float(np.mean(r ** 2) / 2 + lam * np.linalg.norm(w))\n", 1),
        # The intercept left out of the residuals.
        ("import numpy as np\n"
         "def lasso_objective(X, y, w, b, lam):\n"
         "    r = np.asarray(y, float) - np.asarray(X, float) @ np.asarray(w, float)\n"
         "    return float(np.mean(r ** 2) / 2 + lam * np.sum(np.abs(w)))\n", 0),
    ],
    "lasso_fit": [
        # No centring and no intercept.
        ("import numpy as np\n"
         "def lasso_fit(X, y, lam, tol=1e-8, max_iter=10000):\n"
         "    X = np.asarray(X, float); y = np.asarray(y, float)\n"
         "    N, D = X.shape\n"
         "    a = np.sum(X ** 2, axis=0) / N\n"
         "    w = np.zeros(D); r = y.copy()\n"
         "    for _ in range(max_iter):\n"
         "        largest = 0.0\n"
         "        for d in range(D):\n"
         "            rho = X[:, d] @ r / N + a[d] * w[d]\n"
         "            new = np.sign(rho) * max(abs(rho) - lam, 0.0) / a[d]\n"
         "            r -= (new - w[d]) * X[:, d]\n"
         "            largest = max(largest, abs(new - w[d])); w[d] = new\n"
         "        if largest <= tol:\n"
         "            break\n"
         "    return w, 0.0\n", 0),
        # Threshold lam / 2: the update of (1/N)||r||^2 + lam ||w||_1, the wrong scaling.
        ("import numpy as np\n"
         "def lasso_fit(X, y, lam, tol=1e-8, max_iter=10000):\n"
         "    X = np.asarray(X, float); y = np.asarray(y, float)\n"
         "    N, D = X.shape\n"
         "    Xc = X - X.mean(0); a = np.sum(Xc ** 2, axis=0) / N\n"
         "    w = np.zeros(D); r = y - y.mean()\n"
         "    for _ in range(max_iter):\n"
         "        largest = 0.0\n"
         "        for d in range(D):\n"
         "            rho = Xc[:, d] @ r / N + a[d] * w[d]\n"
         "            new = np.sign(rho) * max(abs(rho) - lam / 2, 0.0) / a[d]\n"
         "            r -= (new - w[d]) * Xc[:, d]\n"
         "            largest = max(largest, abs(new - w[d])); w[d] = new\n"
         "        if largest <= tol:\n"
         "            break\n"
         "    return w, float(y.mean() - X.mean(0) @ w)\n", 0),
        # No division by a_d = x_d^T x_d / N (right only for standardised features).
        ("import numpy as np\n"
         "def lasso_fit(X, y, lam, tol=1e-8, max_iter=10000):\n"
         "    X = np.asarray(X, float); y = np.asarray(y, float)\n"
         "    N, D = X.shape\n"
         "    Xc = X - X.mean(0); a = np.sum(Xc ** 2, axis=0) / N\n"
         "    w = np.zeros(D); r = y - y.mean()\n"
         "    for _ in range(max_iter):\n"
         "        largest = 0.0\n"
         "        for d in range(D):\n"
         "            rho = Xc[:, d] @ r / N + a[d] * w[d]\n"
         "            new = np.sign(rho) * max(abs(rho) - lam, 0.0)\n"
         "            r -= (new - w[d]) * Xc[:, d]\n"
         "            largest = max(largest, abs(new - w[d])); w[d] = new\n"
         "        if largest <= tol:\n"
         "            break\n"
         "    return w, float(y.mean() - X.mean(0) @ w)\n", 0),
        # All coordinates updated at once from the same residual (Jacobi, not cyclic): exact
        # for one feature and for orthonormal features, oscillates for correlated ones.
        ("import numpy as np\n"
         "def lasso_fit(X, y, lam, tol=1e-8, max_iter=10000):\n"
         "    X = np.asarray(X, float); y = np.asarray(y, float)\n"
         "    N, D = X.shape\n"
         "    Xc = X - X.mean(0); yc = y - y.mean(); a = np.sum(Xc ** 2, axis=0) / N\n"
         "    w = np.zeros(D)\n"
         "    for _ in range(max_iter):\n"
         "        rho = Xc.T @ (yc - Xc @ w) / N + a * w\n"
         "        new = np.sign(rho) * np.maximum(np.abs(rho) - lam, 0.0) / a\n"
         "        done = np.max(np.abs(new - w)) <= tol\n"
         "        w = new\n"
         "        if done:\n"
         "            break\n"
         "    return w, float(y.mean() - X.mean(0) @ w)\n", 1),
        # The return sits inside the sweep loop: one sweep only.
        ("import numpy as np\n"
         "def lasso_fit(X, y, lam, tol=1e-8, max_iter=10000):\n"
         "    X = np.asarray(X, float); y = np.asarray(y, float)\n"
         "    N, D = X.shape\n"
         "    Xc = X - X.mean(0); a = np.sum(Xc ** 2, axis=0) / N\n"
         "    w = np.zeros(D); r = y - y.mean()\n"
         "    for _ in range(max_iter):\n"
         "        for d in range(D):\n"
         "            rho = Xc[:, d] @ r / N + a[d] * w[d]\n"
         "            new = np.sign(rho) * max(abs(rho) - lam, 0.0) / a[d]\n"
         "            r -= (new - w[d]) * Xc[:, d]\n"
         "            w[d] = new\n"
         "        return w, float(y.mean() - X.mean(0) @ w)\n", 1),
        # The intercept left at mean(y).
        ("import numpy as np\n"
         "def lasso_fit(X, y, lam, tol=1e-8, max_iter=10000):\n"
         "    X = np.asarray(X, float); y = np.asarray(y, float)\n"
         "    N, D = X.shape\n"
         "    Xc = X - X.mean(0); a = np.sum(Xc ** 2, axis=0) / N\n"
         "    w = np.zeros(D); r = y - y.mean()\n"
         "    for _ in range(max_iter):\n"
         "        largest = 0.0\n"
         "        for d in range(D):\n"
         "            rho = Xc[:, d] @ r / N + a[d] * w[d]\n"
         "            new = np.sign(rho) * max(abs(rho) - lam, 0.0) / a[d]\n"
         "            r -= (new - w[d]) * Xc[:, d]\n"
         "            largest = max(largest, abs(new - w[d])); w[d] = new\n"
         "        if largest <= tol:\n"
         "            break\n"
         "    return w, float(y.mean())\n", 0),
    ],
    "lasso_path": [
        # Rows in increasing order of lam instead of the order given.
        ("import numpy as np\n"
         "def lasso_path(X, y, lams, tol=1e-8, max_iter=10000):\n"
         "    X = np.asarray(X, float); y = np.asarray(y, float)\n"
         "    N, D = X.shape\n"
         "    Xc = X - X.mean(0); a = np.sum(Xc ** 2, axis=0) / N\n"
         "    w = np.zeros(D); r = y - y.mean(); rows = []\n"
         "    for lam in sorted(lams, reverse=True):\n"
         "        for _ in range(max_iter):\n"
         "            largest = 0.0\n"
         "            for d in range(D):\n"
         "                rho = Xc[:, d] @ r / N + a[d] * w[d]\n"
         "                new = np.sign(rho) * max(abs(rho) - lam, 0.0) / a[d]\n"
         "                r -= (new - w[d]) * Xc[:, d]\n"
         "                largest = max(largest, abs(new - w[d])); w[d] = new\n"
         "            if largest <= tol:\n"
         "                break\n"
         "        rows.append(w.copy())\n"
         "    return np.array(rows[::-1])\n", 0),
        # Transposed: shape (D, len(lams)).
        ("import numpy as np\n"
         "def lasso_path(X, y, lams, tol=1e-8, max_iter=10000):\n"
         "    X = np.asarray(X, float); y = np.asarray(y, float); lams = np.asarray(lams, float)\n"
         "    N, D = X.shape\n"
         "    Xc = X - X.mean(0); a = np.sum(Xc ** 2, axis=0) / N\n"
         "    w = np.zeros(D); r = y - y.mean(); out = np.zeros((D, len(lams)))\n"
         "    for i in np.argsort(-lams):\n"
         "        for _ in range(max_iter):\n"
         "            largest = 0.0\n"
         "            for d in range(D):\n"
         "                rho = Xc[:, d] @ r / N + a[d] * w[d]\n"
         "                new = np.sign(rho) * max(abs(rho) - lams[i], 0.0) / a[d]\n"
         "                r -= (new - w[d]) * Xc[:, d]\n"
         "                largest = max(largest, abs(new - w[d])); w[d] = new\n"
         "            if largest <= tol:\n"
         "                break\n"
         "        out[:, i] = w\n"
         "    return out\n", 0),
        # The warm-start vector is stored without a copy: every row is the last solution.
        ("import numpy as np\n"
         "def lasso_path(X, y, lams, tol=1e-8, max_iter=10000):\n"
         "    X = np.asarray(X, float); y = np.asarray(y, float); lams = np.asarray(lams, float)\n"
         "    N, D = X.shape\n"
         "    Xc = X - X.mean(0); a = np.sum(Xc ** 2, axis=0) / N\n"
         "    w = np.zeros(D); r = y - y.mean(); rows = [None] * len(lams)\n"
         "    for i in np.argsort(-lams):\n"
         "        for _ in range(max_iter):\n"
         "            largest = 0.0\n"
         "            for d in range(D):\n"
         "                rho = Xc[:, d] @ r / N + a[d] * w[d]\n"
         "                new = np.sign(rho) * max(abs(rho) - lams[i], 0.0) / a[d]\n"
         "                r -= (new - w[d]) * Xc[:, d]\n"
         "                largest = max(largest, abs(new - w[d])); w[d] = new\n"
         "            if largest <= tol:\n"
         "                break\n"
         "        rows[i] = w\n"
         "    return np.array(rows)\n", 0),
        # One sweep per penalty, trusting the warm start to have done the rest.
        ("import numpy as np\n"
         "def lasso_path(X, y, lams, tol=1e-8, max_iter=10000):\n"
         "    X = np.asarray(X, float); y = np.asarray(y, float); lams = np.asarray(lams, float)\n"
         "    N, D = X.shape\n"
         "    Xc = X - X.mean(0); a = np.sum(Xc ** 2, axis=0) / N\n"
         "    w = np.zeros(D); r = y - y.mean(); out = np.zeros((len(lams), D))\n"
         "    for i in np.argsort(-lams):\n"
         "        for d in range(D):\n"
         "            rho = Xc[:, d] @ r / N + a[d] * w[d]\n"
         "            new = np.sign(rho) * max(abs(rho) - lams[i], 0.0) / a[d]\n"
         "            r -= (new - w[d]) * Xc[:, d]\n"
         "            w[d] = new\n"
         "        out[i] = w\n"
         "    return out\n", 1),
        # X not centred (only y is).
        ("import numpy as np\n"
         "def lasso_path(X, y, lams, tol=1e-8, max_iter=10000):\n"
         "    X = np.asarray(X, float); y = np.asarray(y, float); lams = np.asarray(lams, float)\n"
         "    N, D = X.shape\n"
         "    a = np.sum(X ** 2, axis=0) / N\n"
         "    w = np.zeros(D); r = y - y.mean(); out = np.zeros((len(lams), D))\n"
         "    for i in np.argsort(-lams):\n"
         "        for _ in range(max_iter):\n"
         "            largest = 0.0\n"
         "            for d in range(D):\n"
         "                rho = X[:, d] @ r / N + a[d] * w[d]\n"
         "                new = np.sign(rho) * max(abs(rho) - lams[i], 0.0) / a[d]\n"
         "                r -= (new - w[d]) * X[:, d]\n"
         "                largest = max(largest, abs(new - w[d])); w[d] = new\n"
         "            if largest <= tol:\n"
         "                break\n"
         "        out[i] = w\n"
         "    return out\n", 0),
    ],
}

HONEST = {
    "loops": {
        "ridge_fit":
            "import numpy as np\n"
            "def ridge_fit(X, y, lam):\n"
            "    X = np.asarray(X, dtype=float); y = np.asarray(y, dtype=float)\n"
            "    N, D = X.shape\n"
            "    xm = [sum(X[n, d] for n in range(N)) / N for d in range(D)]\n"
            "    ym = sum(y) / N\n"
            "    A = np.zeros((D, D)); v = np.zeros(D)\n"
            "    for n in range(N):\n"
            "        xc = X[n] - xm\n"
            "        A += np.outer(xc, xc)\n"
            "        v += xc * (y[n] - ym)\n"
            "    for d in range(D):\n"
            "        A[d, d] += lam\n"
            "    w = np.linalg.inv(A) @ v\n"
            "    return w, ym - sum(w[d] * xm[d] for d in range(D))\n",
        "soft_threshold":
            "import numpy as np\n"
            "def soft_threshold(z, t):\n"
            "    def one(v):\n"
            "        if v > t:\n"
            "            return v - t\n"
            "        if v < -t:\n"
            "            return v + t\n"
            "        return 0.0\n"
            "    if np.ndim(z) == 0:\n"
            "        return one(float(z))\n"
            "    return np.vectorize(one, otypes=[float])(np.asarray(z, dtype=float))\n",
        "lasso_objective":
            "def lasso_objective(X, y, w, b, lam):\n"
            "    total = 0.0\n"
            "    for row, target in zip(X, y):\n"
            "        pred = sum(float(x) * float(v) for x, v in zip(row, w)) + b\n"
            "        total += (float(target) - pred) ** 2\n"
            "    return total / (2 * len(y)) + lam * sum(abs(float(v)) for v in w)\n",
        # Recomputes the whole residual for every coordinate: O(N D) per update, still fast here.
        "lasso_fit":
            "import numpy as np\n"
            "def lasso_fit(X, y, lam, tol=1e-8, max_iter=10000):\n"
            "    X = np.asarray(X, dtype=float); y = np.asarray(y, dtype=float)\n"
            "    N, D = X.shape\n"
            "    Xc = X - X.mean(axis=0); yc = y - y.mean()\n"
            "    w = np.zeros(D)\n"
            "    for sweep in range(max_iter):\n"
            "        old = w.copy()\n"
            "        for d in range(D):\n"
            "            a = Xc[:, d] @ Xc[:, d] / N\n"
            "            if a == 0:\n"
            "                continue\n"
            "            partial = yc - Xc @ w + Xc[:, d] * w[d]\n"
            "            rho = Xc[:, d] @ partial / N\n"
            "            if rho > lam:\n"
            "                w[d] = (rho - lam) / a\n"
            "            elif rho < -lam:\n"
            "                w[d] = (rho + lam) / a\n"
            "            else:\n"
            "                w[d] = 0.0\n"
            "        if np.max(np.abs(w - old)) <= tol:\n"
            "            break\n"
            "    return w, float(y.mean() - X.mean(axis=0) @ w)\n",
        # Warm starts with the whole residual recomputed for every coordinate.
        "lasso_path":
            "import numpy as np\n"
            "def lasso_path(X, y, lams, tol=1e-8, max_iter=10000):\n"
            "    X = np.asarray(X, dtype=float); y = np.asarray(y, dtype=float)\n"
            "    N, D = X.shape\n"
            "    Xc = X - X.mean(axis=0); yc = y - y.mean()\n"
            "    w = np.zeros(D)\n"
            "    rows = [None] * len(lams)\n"
            "    order = sorted(range(len(lams)), key=lambda i: -lams[i])\n"
            "    for i in order:\n"
            "        for sweep in range(max_iter):\n"
            "            old = w.copy()\n"
            "            for d in range(D):\n"
            "                a = Xc[:, d] @ Xc[:, d] / N\n"
            "                rho = Xc[:, d] @ (yc - Xc @ w) / N + a * w[d]\n"
            "                w[d] = np.sign(rho) * max(abs(rho) - lams[i], 0) / a\n"
            "            if np.max(np.abs(w - old)) <= tol:\n"
            "                break\n"
            "        rows[i] = w.copy()\n"
            "    return np.array(rows)\n",
    },
    "scipy_and_lists": {
        # Least squares on the augmented data [X_c; sqrt(lam) I], [y_c; 0].
        "ridge_fit":
            "import numpy as np\n"
            "from scipy import linalg\n"
            "def ridge_fit(X, y, lam):\n"
            "    X = np.asarray(X, dtype=float); y = np.asarray(y, dtype=float)\n"
            "    D = X.shape[1]\n"
            "    A = np.vstack([X - X.mean(0), np.sqrt(lam) * np.eye(D)])\n"
            "    w = linalg.lstsq(A, np.r_[y - y.mean(), np.zeros(D)])[0]\n"
            "    return [w.tolist(), y.mean() - X.mean(0) @ w]\n",
        "soft_threshold":
            "import numpy as np\n"
            "def soft_threshold(z, t):\n"
            "    z = np.asarray(z, dtype=float)\n"
            "    return z - np.clip(z, -t, t)\n",
        "lasso_objective":
            "import numpy as np\n"
            "from scipy import linalg\n"
            "def lasso_objective(X, y, w, b, lam):\n"
            "    r = np.asarray(y, dtype=float) "
            "- np.asarray(X, dtype=float) @ np.asarray(w, dtype=float) - b\n"
            "    return linalg.norm(r) ** 2 / (2 * len(r)) "
            "+ lam * linalg.norm(np.asarray(w, dtype=float), 1)\n",
        # The Gram-matrix form: G = X_c^T X_c / N, q = G w kept up to date.
        "lasso_fit":
            "import numpy as np\n"
            "def lasso_fit(X, y, lam, tol=1e-8, max_iter=10000):\n"
            "    X = np.asarray(X, dtype=float); y = np.asarray(y, dtype=float)\n"
            "    N, D = X.shape\n"
            "    Xc = X - X.mean(0)\n"
            "    G = Xc.T @ Xc / N; c = Xc.T @ (y - y.mean()) / N\n"
            "    w = np.zeros(D); q = np.zeros(D)\n"
            "    for _ in range(max_iter):\n"
            "        largest = 0.0\n"
            "        for d in range(D):\n"
            "            rho = c[d] - q[d] + G[d, d] * w[d]\n"
            "            new = np.sign(rho) * max(abs(rho) - lam, 0.0) / G[d, d]\n"
            "            q += (new - w[d]) * G[:, d]\n"
            "            largest = max(largest, abs(new - w[d])); w[d] = new\n"
            "        if largest <= tol:\n"
            "            break\n"
            "    return (list(w), y.mean() - X.mean(0) @ w)\n",
        "lasso_path":
            "import numpy as np\n"
            "def lasso_path(X, y, lams, tol=1e-8, max_iter=10000):\n"
            "    X = np.asarray(X, dtype=float); y = np.asarray(y, dtype=float)\n"
            "    N, D = X.shape\n"
            "    Xc = X - X.mean(0)\n"
            "    G = Xc.T @ Xc / N; c = Xc.T @ (y - y.mean()) / N\n"
            "    w = np.zeros(D); rows = {}\n"
            "    for lam in sorted(set(float(v) for v in lams), reverse=True):\n"
            "        for _ in range(max_iter):\n"
            "            old = w.copy()\n"
            "            for d in range(D):\n"
            "                rho = c[d] - G[d] @ w + G[d, d] * w[d]\n"
            "                w[d] = np.sign(rho) * max(abs(rho) - lam, 0.0) / G[d, d]\n"
            "            if np.abs(w - old).max() <= tol:\n"
            "                break\n"
            "        rows[lam] = w.tolist()\n"
            "    return [rows[float(v)] for v in lams]\n",
    },
    "warnings_and_prints": {
        "ridge_fit":
            "import sys, warnings\n"
            "import numpy as np\n"
            "def ridge_fit(X, y, lam):\n"
            "    print('fitting ridge with lam =', lam, file=sys.stderr)\n"
            "    warnings.warn('a harmless warning from the student')\n"
            "    X = np.asarray(X, dtype=float); y = np.asarray(y, dtype=float)\n"
            "    Xc, yc = X - X.mean(0), y - y.mean()\n"
            "    # through the SVD: each direction shrinks by s^2 / (s^2 + lam)\n"
            "    U, s, Vt = np.linalg.svd(Xc, full_matrices=False)\n"
            "    keep = s**2 + lam > 1e-12 * max(s.max(), 1.0) ** 2\n"
            "    scale = np.divide(s, s**2 + lam, out=np.zeros_like(s), where=keep)\n"
            "    w = Vt.T @ (scale * (U.T @ yc))\n"
            "    return w, float(y.mean() - X.mean(0) @ w)\n",
        "lasso_fit":
            "import sys\n"
            "import numpy as np\n"
            "def lasso_fit(X, y, lam, tol=1e-8, max_iter=10000):\n"
            "    X = np.asarray(X, dtype=float); y = np.asarray(y, dtype=float)\n"
            "    N, D = X.shape\n"
            "    Xc = X - X.mean(0); a = np.sum(Xc ** 2, axis=0) / N\n"
            "    w = np.zeros(D); r = y - y.mean()\n"
            "    with np.errstate(divide='warn', invalid='warn'):\n"
            "        np.log(np.zeros(1))          # RuntimeWarning: divide by zero\n"
            "    sweeps, done = 0, False\n"
            "    while not done and sweeps < max_iter:\n"
            "        sweeps += 1\n"
            "        changes = []\n"
            "        for j in range(D):\n"
            "            z = a[j] * w[j] + np.dot(Xc[:, j], r) / N\n"
            "            # soft thresholding: z minus its part clipped to [-lam, lam]\n"
            "            w_j = (z - min(max(z, -lam), lam)) / a[j]\n"
            "            r = r - Xc[:, j] * (w_j - w[j])\n"
            "            changes.append(abs(w_j - w[j]))\n"
            "            w[j] = w_j\n"
            "        done = max(changes) <= tol\n"
            "    print('converged after', sweeps, 'sweeps', file=sys.stderr)\n"
            "    return w, float(y.mean() - X.mean(0) @ w)\n",
        "soft_threshold":
            "import numpy as np\n"
            "def soft_threshold(z, t):\n"
            "    print('thresholding at', t)\n"
            "    z = np.asarray(z, dtype=float)\n"
            "    out = np.where(np.abs(z) > t, z - t * np.sign(z), 0.0)\n"
            "    return out[()] if out.ndim == 0 else out\n",
    },
}

# ---------------------------------------------------------------- tasks beyond the chapter
# weighted_ridge_fit: visible 2, edge 2, hidden 4 (8 in all).
# nonneg_lasso_fit: visible 2, sweeps 2, hidden 5 (9 in all).
_NONNEG_LOOP = (
    "import numpy as np\n"
    "def nonneg_lasso_fit(X, y, lam, tol=1e-8, max_iter=10000):\n"
    "    X = np.asarray(X, float); y = np.asarray(y, float)\n"
    "    N, D = X.shape\n"
    "    Xc = X - X.mean(0); a = np.sum(Xc ** 2, axis=0) / N\n"
    "    w = np.zeros(D); r = y - y.mean()\n"
    "    for _ in range(max_iter):\n"
    "        largest = 0.0\n"
    "        for d in range(D):\n"
    "            rho = Xc[:, d] @ r / N + a[d] * w[d]\n"
    "            new = {update}\n"
    "            r -= (new - w[d]) * Xc[:, d]\n"
    "            largest = max(largest, abs(new - w[d])); w[d] = new\n"
    "        if largest <= tol:\n"
    "            break\n"
    "    return w, float(y.mean() - X.mean(0) @ w)\n"
)

WRONG["weighted_ridge_fit"] = [
    # Unweighted means for the intercept (the weights only in the normal equations).
    ("import numpy as np\n"
     "def weighted_ridge_fit(X, y, lam, weights):\n"
     "    X = np.asarray(X, float); y = np.asarray(y, float); s = np.asarray(weights, float)\n"
     "    Xc, yc = X - X.mean(0), y - y.mean()\n"
     "    A = Xc.T @ (s[:, None] * Xc) + lam * np.eye(X.shape[1])\n"
     "    w = np.linalg.solve(A, Xc.T @ (s * yc))\n"
     "    return w, float(y.mean() - X.mean(0) @ w)\n", 0),
    # The penalty scaled by the total weight (lam * sum(s)): right only when the weights sum to 1.
    ("import numpy as np\n"
     "def weighted_ridge_fit(X, y, lam, weights):\n"
     "    X = np.asarray(X, float); y = np.asarray(y, float); s = np.asarray(weights, float)\n"
     "    xm, ym = s @ X / s.sum(), s @ y / s.sum()\n"
     "    Xc, yc = X - xm, y - ym\n"
     "    A = Xc.T @ (s[:, None] * Xc) + lam * s.sum() * np.eye(X.shape[1])\n"
     "    w = np.linalg.solve(A, Xc.T @ (s * yc))\n"
     "    return w, float(ym - xm @ w)\n", 0),
    # Square roots of the weights applied once only (to X, not to y).
    ("import numpy as np\n"
     "def weighted_ridge_fit(X, y, lam, weights):\n"
     "    X = np.asarray(X, float); y = np.asarray(y, float); s = np.asarray(weights, float)\n"
     "    xm, ym = s @ X / s.sum(), s @ y / s.sum()\n"
     "    Xc, yc = X - xm, y - ym\n"
     "    w = np.linalg.solve(Xc.T @ (s[:, None] * Xc) + lam * np.eye(X.shape[1]),\n"
     "                        Xc.T @ (np.sqrt(s) * yc))\n"
     "    return w, float(ym - xm @ w)\n", 0),
]
WRONG["nonneg_lasso_fit"] = [
    # Negative weights clipped to 0 only at the end (the plain LASSO, then clipped): right
    # only when the LASSO solution is non-negative anyway.
    ("import numpy as np\n"
     "def nonneg_lasso_fit(X, y, lam, tol=1e-8, max_iter=10000):\n"
     "    X = np.asarray(X, float); y = np.asarray(y, float)\n"
     "    N, D = X.shape\n"
     "    Xc = X - X.mean(0); a = np.sum(Xc ** 2, axis=0) / N\n"
     "    w = np.zeros(D); r = y - y.mean()\n"
     "    for _ in range(max_iter):\n"
     "        largest = 0.0\n"
     "        for d in range(D):\n"
     "            rho = Xc[:, d] @ r / N + a[d] * w[d]\n"
     "            new = np.sign(rho) * max(abs(rho) - lam, 0.0) / a[d]\n"
     "            r -= (new - w[d]) * Xc[:, d]\n"
     "            largest = max(largest, abs(new - w[d])); w[d] = new\n"
     "        if largest <= tol:\n"
     "            break\n"
     "    w = np.maximum(w, 0.0)\n"
     "    return w, float(y.mean() - X.mean(0) @ w)\n", 0),
    # max(rho / a - lam, 0): the threshold applied after the division, right only where
    # a_d = 1 (the visible example's first feature): visible 2, sweeps and hidden 0.
    (_NONNEG_LOOP.replace("{update}", "max(rho / a[d] - lam, 0.0)"), 2),
    # The penalty's sign flipped: max(rho + lam, 0) / a.
    (_NONNEG_LOOP.replace("{update}", "max(rho + lam, 0.0) / a[d]"), 0),
]
HONEST["loops"]["weighted_ridge_fit"] = (
    # Rows repeated by sqrt(weight) scaling: least squares on [sqrt(s) X_c; sqrt(lam) I].
    "import numpy as np\n"
    "def weighted_ridge_fit(X, y, lam, weights):\n"
    "    X = np.asarray(X, dtype=float); y = np.asarray(y, dtype=float)\n"
    "    s = np.asarray(weights, dtype=float)\n"
    "    total = sum(s)\n"
    "    xm = sum(sn * xn for sn, xn in zip(s, X)) / total\n"
    "    ym = sum(sn * yn for sn, yn in zip(s, y)) / total\n"
    "    root = np.sqrt(s)[:, None]\n"
    "    A = np.vstack([root * (X - xm), np.sqrt(lam) * np.eye(X.shape[1])])\n"
    "    rhs = np.r_[root[:, 0] * (y - ym), np.zeros(X.shape[1])]\n"
    "    w = np.linalg.lstsq(A, rhs, rcond=None)[0]\n"
    "    return w.tolist(), ym - xm @ w\n")
HONEST["loops"]["nonneg_lasso_fit"] = (
    # The whole residual recomputed for every coordinate; the clipped update written with if.
    "import numpy as np\n"
    "def nonneg_lasso_fit(X, y, lam, tol=1e-8, max_iter=10000):\n"
    "    X = np.asarray(X, dtype=float); y = np.asarray(y, dtype=float)\n"
    "    N, D = X.shape\n"
    "    Xc = X - X.mean(axis=0); yc = y - y.mean()\n"
    "    w = np.zeros(D)\n"
    "    for sweep in range(max_iter):\n"
    "        old = w.copy()\n"
    "        for d in range(D):\n"
    "            a = Xc[:, d] @ Xc[:, d] / N\n"
    "            rho = Xc[:, d] @ (yc - Xc @ w + Xc[:, d] * w[d]) / N\n"
    "            w[d] = (rho - lam) / a if rho > lam else 0.0\n"
    "        if np.max(np.abs(w - old)) <= tol:\n"
    "            break\n"
    "    return w, float(y.mean() - X.mean(axis=0) @ w)\n")
HONEST["scipy_and_lists"]["weighted_ridge_fit"] = (
    # Weighted means with np.average, a Cholesky solve from scipy.
    "import numpy as np\n"
    "from scipy.linalg import cho_factor, cho_solve\n"
    "def weighted_ridge_fit(X, y, lam, weights):\n"
    "    X = np.asarray(X, dtype=float); y = np.asarray(y, dtype=float)\n"
    "    xm = np.average(X, axis=0, weights=weights); ym = np.average(y, weights=weights)\n"
    "    Xs = (X - xm) * np.sqrt(np.asarray(weights, float))[:, None]\n"
    "    ys = (y - ym) * np.sqrt(np.asarray(weights, float))\n"
    "    A = Xs.T @ Xs + lam * np.eye(X.shape[1]) + 0.0\n"
    "    w = cho_solve(cho_factor(A), Xs.T @ ys) if lam > 0 else np.linalg.solve(A, Xs.T @ ys)\n"
    "    return (w, np.float64(ym - xm @ w))\n")
HONEST["scipy_and_lists"]["nonneg_lasso_fit"] = (
    # The Gram-matrix form, returning lists.
    "import numpy as np\n"
    "def nonneg_lasso_fit(X, y, lam, tol=1e-8, max_iter=10000):\n"
    "    X = np.asarray(X, dtype=float); y = np.asarray(y, dtype=float)\n"
    "    N, D = X.shape\n"
    "    Xc = X - X.mean(0)\n"
    "    G = Xc.T @ Xc / N; c = Xc.T @ (y - y.mean()) / N\n"
    "    w = np.zeros(D)\n"
    "    for _ in range(max_iter):\n"
    "        largest = 0.0\n"
    "        for d in range(D):\n"
    "            rho = c[d] - G[d] @ w + G[d, d] * w[d]\n"
    "            new = max(rho - lam, 0.0) / G[d, d]\n"
    "            largest = max(largest, abs(new - w[d])); w[d] = new\n"
    "        if largest <= tol:\n"
    "            break\n"
    "    return [list(w), float(y.mean() - X.mean(0) @ w)]\n")

# ---------------------------------------------------------------- shortcuts
# What a student might hand in instead of the prescribed method, with the score each must get
# (below full marks: the tests of the method catch it).
SHORTCUTS = {
    # Another optimiser: proximal gradient (ISTA) to convergence. The minimiser is right
    # (visible 1, hidden 2), the sweeps are not (sweeps cell 0): 3 of 4.
    "lasso_fit_ista": ("lasso_fit",
        "import numpy as np\n"
        "def lasso_fit(X, y, lam, tol=1e-8, max_iter=10000):\n"
        "    X = np.asarray(X, float); y = np.asarray(y, float)\n"
        "    N, D = X.shape\n"
        "    Xc = X - X.mean(0); yc = y - y.mean()\n"
        "    step = N / np.linalg.eigvalsh(Xc.T @ Xc).max()\n"
        "    w = np.zeros(D)\n"
        "    for _ in range(200000):\n"
        "        z = w - step * Xc.T @ (Xc @ w - yc) / N\n"
        "        new = np.sign(z) * np.maximum(np.abs(z) - step * lam, 0.0)\n"
        "        if np.max(np.abs(new - w)) <= 1e-13:\n"
        "            w = new\n"
        "            break\n"
        "        w = new\n"
        "    return w, float(y.mean() - X.mean(0) @ w)\n", 3),
    # No warm starts: every penalty from zero, in the order given (the same optima):
    # visible 1 and hidden 2, but not the iterates of the warm-start cell: 3 of 4.
    "lasso_path_cold_starts": ("lasso_path",
        "import numpy as np\n"
        "def lasso_path(X, y, lams, tol=1e-8, max_iter=10000):\n"
        "    X = np.asarray(X, dtype=float); y = np.asarray(y, dtype=float)\n"
        "    N, D = X.shape\n"
        "    Xc = X - X.mean(axis=0); yc = y - y.mean()\n"
        "    def fit(lam):\n"
        "        w = np.zeros(D)\n"
        "        for sweep in range(max_iter):\n"
        "            old = w.copy()\n"
        "            for d in range(D):\n"
        "                a = Xc[:, d] @ Xc[:, d] / N\n"
        "                rho = Xc[:, d] @ (yc - Xc @ w) / N + a * w[d]\n"
        "                w[d] = np.sign(rho) * max(abs(rho) - lam, 0) / a\n"
        "            if np.max(np.abs(w - old)) <= tol:\n"
        "                return w\n"
        "        return w\n"
        "    return np.array([fit(lam) for lam in lams])\n", 3),
    # The nearest printed example: the chapter's ridge, weights ignored.
    "weighted_ridge_unweighted": ("weighted_ridge_fit",
        "import numpy as np\n"
        "def weighted_ridge_fit(X, y, lam, weights):\n"
        "    X = np.asarray(X, float); y = np.asarray(y, float)\n"
        "    Xc, yc = X - X.mean(0), y - y.mean()\n"
        "    w = np.linalg.solve(Xc.T @ Xc + lam * np.eye(X.shape[1]), Xc.T @ yc)\n"
        "    return w, float(y.mean() - X.mean(0) @ w)\n", 0),
    # The nearest printed example: the chapter's LASSO by coordinate descent (negative
    # weights where the data ask for them): 0 of 9.
    "nonneg_lasso_plain_lasso": ("nonneg_lasso_fit",
        _NONNEG_LOOP.replace("{update}", "np.sign(rho) * max(abs(rho) - lam, 0.0) / a[d]"), 0),
    # Another optimiser: projected gradient to convergence. The minimiser is right (visible 2,
    # hidden 5), the sweeps are not: 7 of 9.
    "nonneg_lasso_projected_gradient": ("nonneg_lasso_fit",
        "import numpy as np\n"
        "def nonneg_lasso_fit(X, y, lam, tol=1e-8, max_iter=10000):\n"
        "    X = np.asarray(X, float); y = np.asarray(y, float)\n"
        "    N, D = X.shape\n"
        "    Xc = X - X.mean(0); yc = y - y.mean()\n"
        "    step = N / np.linalg.eigvalsh(Xc.T @ Xc).max()\n"
        "    w = np.zeros(D)\n"
        "    for _ in range(200000):\n"
        "        new = np.maximum(w - step * (Xc.T @ (Xc @ w - yc) / N + lam), 0.0)\n"
        "        if np.max(np.abs(new - w)) <= 1e-13:\n"
        "            w = new\n"
        "            break\n"
        "        w = new\n"
        "    return w, float(y.mean() - X.mean(0) @ w)\n", 7),
}

# Hybrids: the prescribed sweeps when max_iter is small (what the sweep tests used to ask for:
# at most 5 sweeps, 3 per penalty for the path), proximal gradient to convergence when it is
# large. Right wherever the solution is asked for, but not the point after k sweeps for a large
# k: each loses its sweeps cell (lasso_fit 3 of 4, nonneg_lasso_fit 7 of 9, lasso_path 3 of 4).
_HYBRID_CD = (
    "import numpy as np\n"
    "def _sweeps(Xc, r, w, lam, tol, max_iter, nonneg):\n"
    "    N = len(r); a = np.sum(Xc ** 2, axis=0) / N\n"
    "    for _ in range(max_iter):\n"
    "        largest = 0.0\n"
    "        for d in range(Xc.shape[1]):\n"
    "            rho = Xc[:, d] @ r / N + a[d] * w[d]\n"
    "            new = (max(rho - lam, 0.0) if nonneg else\n"
    "                   np.sign(rho) * max(abs(rho) - lam, 0.0)) / a[d]\n"
    "            r -= (new - w[d]) * Xc[:, d]\n"
    "            largest = max(largest, abs(new - w[d])); w[d] = new\n"
    "        if largest <= tol:\n"
    "            break\n"
    "def _proximal_gradient(Xc, yc, lam, nonneg):\n"
    "    N, D = Xc.shape\n"
    "    step = N / np.linalg.eigvalsh(Xc.T @ Xc).max()\n"
    "    w = np.zeros(D)\n"
    "    for _ in range(20000):\n"
    "        z = w - step * Xc.T @ (Xc @ w - yc) / N\n"
    "        new = (np.maximum(z - step * lam, 0.0) if nonneg else\n"
    "               np.sign(z) * np.maximum(np.abs(z) - step * lam, 0.0))\n"
    "        if np.max(np.abs(new - w)) <= 1e-13:\n"
    "            return new\n"
    "        w = new\n"
    "    return w\n"
)
_HYBRID_FIT = (
    _HYBRID_CD +
    "def {task}(X, y, lam, tol=1e-8, max_iter=10000):\n"
    "    X = np.asarray(X, float); y = np.asarray(y, float)\n"
    "    Xc = X - X.mean(0); yc = y - y.mean()\n"
    "    if max_iter > 5:\n"
    "        w = _proximal_gradient(Xc, yc, lam, {nonneg})\n"
    "    else:\n"
    "        w = np.zeros(X.shape[1])\n"
    "        _sweeps(Xc, yc.copy(), w, lam, tol, max_iter, {nonneg})\n"
    "    return w, float(y.mean() - X.mean(0) @ w)\n"
)
SHORTCUTS.update({
    "lasso_fit_sweeps_then_proximal_gradient": ("lasso_fit", _HYBRID_FIT.format(
        task="lasso_fit", nonneg=False), 3),
    "nonneg_lasso_sweeps_then_proximal_gradient": ("nonneg_lasso_fit", _HYBRID_FIT.format(
        task="nonneg_lasso_fit", nonneg=True), 7),
    "lasso_path_sweeps_then_proximal_gradient": ("lasso_path",
        _HYBRID_CD +
        "def lasso_path(X, y, lams, tol=1e-8, max_iter=10000):\n"
        "    X = np.asarray(X, float); y = np.asarray(y, float)\n"
        "    Xc = X - X.mean(0); yc = y - y.mean()\n"
        "    lams = np.asarray(lams, float)\n"
        "    if max_iter > 3:\n"
        "        return np.array([_proximal_gradient(Xc, yc, lam, False) for lam in lams])\n"
        "    out, w, r = np.zeros((len(lams), X.shape[1])), np.zeros(X.shape[1]), yc.copy()\n"
        "    for i in np.argsort(-lams, kind='stable'):\n"
        "        _sweeps(Xc, r, w, lams[i], tol, max_iter, False)\n"
        "        out[i] = w\n"
        "    return out\n", 3),
})
