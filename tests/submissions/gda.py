"""Hand-written answers for the `gda` assignment, used by tests/test_assignments.py.

WRONG: per task, plausible mistakes with the task score each must get (derived from which of
the task's test cells the mistake fails). Points per task: fit_qda, fit_lda, gda_log_joint and
lda_coefficients 1 visible + 1 visible edge case + 2 hidden; regularized_cov 1 visible (with the
end points lambda = 0 and 1) + 2 hidden; nearest_centroid_predict 1 visible + 2 hidden + 1 exact
ties (visible checks, then hidden cases).
HONEST: correct answers written differently from the reference; each must get full marks.
SHORTCUTS (at the end): answers that avoid a task's own step (another formula, the naive
unstable one, the chapter's printed function where the task needs one more step), as
{label: (task, answer, score)}; each score is derived from the cells the answer passes and is
below the task's full marks.
"""

from assignment_support import WATCH_GAP_EXTENSION

MODULE = "gda"

#: Shortcuts through a call the task forbids (metadata.mlcourse.forbidden of the notebook), as
#: {task: [(answer, the call the feedback must name[, why the watch misses it: xfail])]}: each
#: earns its task nothing, by name (aliases, getattr, importlib) or, when the name is built at
#: run time, by the sandbox's watch.
FORBIDDEN_SHORTCUTS = {
    "nearest_centroid_predict": [
        ("import numpy as np\n"
         "from scipy.spatial import distance as D\n"
         "def nearest_centroid_predict(X, means, cov=None):\n"
         "    X, means = np.atleast_2d(X), np.atleast_2d(means)\n"
         "    if cov is None:\n"
         "        return np.argmin(D.cdist(X, means), axis=1)\n"
         "    VI = np.linalg.inv(cov)\n"
         "    return np.argmin(D.cdist(X, means, 'mahalanobis', VI=VI), axis=1)\n",
         "scipy.spatial.distance"),
        # Vector quantisation and nearest-neighbour trees after whitening by the Cholesky
        # factor; the names built at run time but for KDTree.
        ("import numpy as np\n"
         "import importlib\n"
         "def nearest_centroid_predict(X, means, cov=None):\n"
         "    X = np.asarray(X, float); M = np.asarray(means, float)\n"
         "    if cov is not None:\n"
         "        L = np.linalg.cholesky(np.asarray(cov, float))\n"
         "        X = np.linalg.solve(L, X.T).T; M = np.linalg.solve(L, M.T).T\n"
         "    vq = importlib.import_module('scipy.cluster.' + ''.join(reversed('qv')))\n"
         "    return getattr(vq, ''.join(reversed('qv')))(X, M, check_finite=False)[0]\n",
         "scipy.cluster.vq"),
        ("import numpy as np\n"
         "from scipy.spatial import KDTree\n"
         "def nearest_centroid_predict(X, means, cov=None):\n"
         "    X = np.asarray(X, float); M = np.asarray(means, float)\n"
         "    if cov is not None:\n"
         "        L = np.linalg.cholesky(np.asarray(cov, float))\n"
         "        X = np.linalg.solve(L, X.T).T; M = np.linalg.solve(L, M.T).T\n"
         "    return KDTree(M).query(X)[1]\n", "scipy.spatial"),
        ("import numpy as np\n"
         "import importlib\n"
         "def nearest_centroid_predict(X, means, cov=None):\n"
         "    X = np.asarray(X, float); M = np.asarray(means, float)\n"
         "    if cov is not None:\n"
         "        L = np.linalg.cholesky(np.asarray(cov, float))\n"
         "        X = np.linalg.solve(L, X.T).T; M = np.linalg.solve(L, M.T).T\n"
         "    spatial = importlib.import_module('scipy.' + ''.join(reversed('laitaps')))\n"
         "    tree = getattr(spatial, ''.join(reversed('eerTDKc')))(M)\n"
         "    return tree.query(X)[1]\n", "scipy.spatial",
         WATCH_GAP_EXTENSION),
    ],
    "fit_qda": [
        # numpy.ma has its own cov (forbidding numpy.cov does not cover it).
        ("import numpy as np\n"
         "def fit_qda(X, y):\n"
         "    X = np.asarray(X, float); y = np.asarray(y)\n"
         "    classes = np.unique(y)\n"
         "    cov = getattr(np.ma, ''.join(reversed('voc')))\n"
         "    covs = np.array([np.atleast_2d(cov(X[y == c].T, bias=True).data) for c in classes])\n"
         "    means = np.array([X[y == c].mean(axis=0) for c in classes])\n"
         "    priors = np.array([np.mean(y == c) for c in classes])\n"
         "    return classes, priors, means, covs\n", "numpy.ma.cov"),
        # The maximum-likelihood fit of scipy.stats.multivariate_normal, class by class.
        ("import numpy as np\n"
         "from scipy import stats\n"
         "def fit_qda(X, y):\n"
         "    X = np.asarray(X, float); y = np.asarray(y)\n"
         "    classes = np.unique(y)\n"
         "    fits = [stats.multivariate_normal.fit(X[y == c]) for c in classes]\n"
         "    priors = np.array([np.mean(y == c) for c in classes])\n"
         "    return (classes, priors, np.array([f[0] for f in fits]),\n"
         "            np.array([f[1] for f in fits]))\n", "scipy.stats.multivariate_normal"),
    ],
    "fit_lda": [
        ("import numpy as np\n"
         "def fit_lda(X, y):\n"
         "    X = np.asarray(X, float); y = np.asarray(y)\n"
         "    classes, index = np.unique(y, return_inverse=True)\n"
         "    means = np.array([X[y == c].mean(axis=0) for c in classes])\n"
         "    priors = np.array([np.mean(y == c) for c in classes])\n"
         "    R = X - means[index.reshape(-1)]\n"
         "    return classes, priors, means, np.atleast_2d(np.ma.cov(R.T, bias=True).data)\n",
         "numpy.ma.cov"),
        ("import numpy as np\n"
         "import scipy.stats\n"
         "def fit_lda(X, y):\n"
         "    X = np.asarray(X, float); y = np.asarray(y)\n"
         "    classes, index = np.unique(y, return_inverse=True)\n"
         "    means = np.array([X[y == c].mean(axis=0) for c in classes])\n"
         "    priors = np.array([np.mean(y == c) for c in classes])\n"
         "    R = X - means[index.reshape(-1)]\n"
         "    mvn = getattr(scipy.stats, '_'.join(['multivariate', 'normal']))\n"
         "    cov = mvn.fit(R, fix_mean=np.zeros(X.shape[1]))[1]\n"
         "    return classes, priors, means, np.atleast_2d(cov)\n",
         "scipy.stats.multivariate_normal"),
    ],
    "gda_log_joint": [
        # A frozen multivariate normal made from its class, the name built at run time: the
        # frozen object's methods (which call private ones) are watched too.
        ("import importlib\n"
         "import numpy as np\n"
         "st = importlib.import_module('scipy.' + 'stats')\n"
         "def gda_log_joint(X, priors, means, covs):\n"
         "    X = np.asarray(X, float); means = np.asarray(means, float)\n"
         "    covs = np.asarray(covs, float)\n"
         "    if covs.ndim == 2:\n"
         "        covs = np.broadcast_to(covs, (len(means),) + covs.shape)\n"
         "    frozen = type(getattr(st, ''.join(reversed('lamron_etairavitlum')))(means[0]))\n"
         "    with np.errstate(divide='ignore'):\n"
         "        return np.column_stack([np.log(p) + np.reshape(frozen(m, S).logpdf(X), -1)\n"
         "                                for p, m, S in zip(priors, means, covs)])\n",
         "scipy.stats.multivariate_normal"),
        # A 1 x D matrix normal is a D-variate normal; the name built at run time.
        ("import numpy as np\n"
         "import scipy.stats\n"
         "def gda_log_joint(X, priors, means, covs):\n"
         "    X = np.asarray(X, float); means = np.asarray(means, float)\n"
         "    covs = np.asarray(covs, float); C, D = means.shape\n"
         "    if covs.ndim == 2:\n"
         "        covs = np.broadcast_to(covs, (C, D, D))\n"
         "    with np.errstate(divide='ignore'):\n"
         "        lp = np.log(np.asarray(priors, float))\n"
         "    mn = getattr(scipy.stats, ''.join(reversed('lamron_xirtam')))\n"
         "    return np.column_stack([\n"
         "        lp[c] + np.array([mn.logpdf(x[None], means[c][None], 1, covs[c]) for x in X])\n"
         "        for c in range(C)])\n",
         "scipy.stats.matrix_normal"),
        # A multivariate t with infinite degrees of freedom is the normal (a frozen
        # multivariate_normal, whose private methods do the work: watched too).
        ("import numpy as np\n"
         "import scipy.stats\n"
         "def gda_log_joint(X, priors, means, covs):\n"
         "    X = np.asarray(X, float); means = np.asarray(means, float)\n"
         "    covs = np.asarray(covs, float); C, D = means.shape\n"
         "    if covs.ndim == 2:\n"
         "        covs = np.broadcast_to(covs, (C, D, D))\n"
         "    with np.errstate(divide='ignore'):\n"
         "        lp = np.log(np.asarray(priors, float))\n"
         "    mt = getattr(scipy.stats, ''.join(reversed('t_etairavitlum')))\n"
         "    return np.column_stack([\n"
         "        lp[c] + np.atleast_1d(mt(means[c], covs[c], df=np.inf).logpdf(X))\n"
         "        for c in range(C)])\n",
         "scipy.stats.multivariate_t"),
    ],
    "map_covariance": [
        # The mode of the inverse-Wishart posterior IW(Psi + S, nu + N) (12 of 12 before it
        # was forbidden): by name, then a frozen distribution built at run time, then the
        # distribution's own method built at run time.
        ("import numpy as np\n"
         "from scipy import stats\n"
         "def map_covariance(X, Psi, nu):\n"
         "    X = np.asarray(X, float); R = X - X.mean(axis=0)\n"
         "    posterior = stats.invwishart(nu + len(X), np.asarray(Psi, float) + R.T @ R)\n"
         "    return np.atleast_2d(posterior.mode())\n",
         "scipy.stats.invwishart"),
        ("import numpy as np\n"
         "import scipy.stats\n"
         "def map_covariance(X, Psi, nu):\n"
         "    X = np.asarray(X, float); R = X - X.mean(axis=0)\n"
         "    iw = getattr(scipy.stats, ''.join(reversed('trahsiwvni')))\n"
         "    return np.atleast_2d(iw(nu + len(X), np.asarray(Psi, float) + R.T @ R).mode())\n",
         "scipy.stats.invwishart"),
        ("import numpy as np\n"
         "import scipy.stats\n"
         "def map_covariance(X, Psi, nu):\n"
         "    X = np.asarray(X, float); R = X - X.mean(axis=0)\n"
         "    iw = getattr(scipy.stats, ''.join(reversed('trahsiwvni')))\n"
         "    return np.atleast_2d(iw.mode(nu + len(X), np.asarray(Psi, float) + R.T @ R))\n",
         "scipy.stats.invwishart"),
    ],
}

WRONG = {
    "fit_qda": [
        # np.cov's default divides by N_c - 1 (nan for the one-sample class of the edge case).
        ("import numpy as np\n"
         "def fit_qda(X, y):\n"
         "    X = np.asarray(X, float); y = np.asarray(y)\n"
         "    classes = np.unique(y)\n"
         "    priors = np.array([np.mean(y == c) for c in classes])\n"
         "    means = np.array([X[y == c].mean(axis=0) for c in classes])\n"
         "    covs = np.array([np.atleast_2d(np.cov(X[y == c], rowvar=False)) for c in classes])\n"
         "    return classes, priors, means, covs\n", 0),
        # Classes in order of first appearance instead of sorted: right on the visible examples
        # (whose labels appear in sorted order), wrong on the edge case's labels [5, 2, 5] and on
        # shuffled labels.
        ("import numpy as np\n"
         "def fit_qda(X, y):\n"
         "    X = np.asarray(X, float); y = np.asarray(y)\n"
         "    _, first = np.unique(y, return_index=True)\n"
         "    classes = y[np.sort(first)]\n"
         "    priors = np.array([np.mean(y == c) for c in classes])\n"
         "    means = np.array([X[y == c].mean(axis=0) for c in classes])\n"
         "    covs = np.array([(X[y == c] - m).T @ (X[y == c] - m) / np.sum(y == c)\n"
         "                     for c, m in zip(classes, means)])\n"
         "    return classes, priors, means, covs\n", 1),
        # Priors left as counts N_c instead of N_c / N.
        ("import numpy as np\n"
         "def fit_qda(X, y):\n"
         "    X = np.asarray(X, float); y = np.asarray(y)\n"
         "    classes, counts = np.unique(y, return_counts=True)\n"
         "    means = np.array([X[y == c].mean(axis=0) for c in classes])\n"
         "    covs = np.array([(X[y == c] - m).T @ (X[y == c] - m) / np.sum(y == c)\n"
         "                     for c, m in zip(classes, means)])\n"
         "    return classes, counts.astype(float), means, covs\n", 0),
    ],
    "fit_lda": [
        # Unweighted average of the class covariances instead of the N_c / N weights.
        ("import numpy as np\n"
         "def fit_lda(X, y):\n"
         "    X = np.asarray(X, float); y = np.asarray(y)\n"
         "    classes = np.unique(y)\n"
         "    priors = np.array([np.mean(y == c) for c in classes])\n"
         "    means = np.array([X[y == c].mean(axis=0) for c in classes])\n"
         "    covs = [(X[y == c] - m).T @ (X[y == c] - m) / np.sum(y == c)\n"
         "            for c, m in zip(classes, means)]\n"
         "    return classes, priors, means, np.mean(covs, axis=0)\n", 0),
        # The unbiased pooled estimate: divide by N - C instead of N.
        ("import numpy as np\n"
         "def fit_lda(X, y):\n"
         "    X = np.asarray(X, float); y = np.asarray(y)\n"
         "    classes, index = np.unique(y, return_inverse=True)\n"
         "    priors = np.bincount(index) / len(y)\n"
         "    means = np.array([X[index == k].mean(axis=0) for k in range(len(classes))])\n"
         "    R = X - means[index]\n"
         "    return classes, priors, means, R.T @ R / (len(y) - len(classes))\n", 0),
        # Wrong centring: the covariance of all of X around the overall mean.
        ("import numpy as np\n"
         "def fit_lda(X, y):\n"
         "    X = np.asarray(X, float); y = np.asarray(y)\n"
         "    classes, index = np.unique(y, return_inverse=True)\n"
         "    priors = np.bincount(index) / len(y)\n"
         "    means = np.array([X[index == k].mean(axis=0) for k in range(len(classes))])\n"
         "    R = X - X.mean(axis=0)\n"
         "    return classes, priors, means, R.T @ R / len(y)\n", 0),
    ],
    "gda_log_joint": [
        # The seed's mistake: the log-determinant term is dropped (the edge case has |Sigma_1| = 4).
        ("import numpy as np\n"
         "def gda_log_joint(X, priors, means, covs):\n"
         "    X = np.asarray(X, float); means = np.asarray(means, float)\n"
         "    covs = np.asarray(covs, float)\n"
         "    C, D = means.shape\n"
         "    if covs.ndim == 2:\n"
         "        covs = np.array([covs] * C)\n"
         "    out = np.empty((len(X), C))\n"
         "    for c in range(C):\n"
         "        d = X - means[c]\n"
         "        q = np.sum(d * np.linalg.solve(covs[c], d.T).T, axis=1)\n"
         "        out[:, c] = np.log(priors[c]) - 0.5 * D * np.log(2 * np.pi) - 0.5 * q\n"
         "    return out\n", 0),
        # Unstable logs: the log of scipy's density underflows to -inf far from the means (the
        # edge case and the hidden far points).
        ("import numpy as np\n"
         "from scipy.stats import multivariate_normal\n"
         "def gda_log_joint(X, priors, means, covs):\n"
         "    X = np.asarray(X, float); means = np.asarray(means, float)\n"
         "    covs = np.asarray(covs, float)\n"
         "    C = len(means)\n"
         "    out = np.empty((len(X), C))\n"
         "    for c in range(C):\n"
         "        S = covs if covs.ndim == 2 else covs[c]\n"
         "        dens = np.atleast_1d(multivariate_normal(means[c], S).pdf(X))\n"
         "        out[:, c] = np.log(priors[c] * dens)\n"
         "    return out\n", 1),
        # The log prior is left out.
        ("import numpy as np\n"
         "from scipy.stats import multivariate_normal\n"
         "def gda_log_joint(X, priors, means, covs):\n"
         "    X = np.asarray(X, float); means = np.asarray(means, float)\n"
         "    covs = np.asarray(covs, float)\n"
         "    cols = []\n"
         "    for c in range(len(means)):\n"
         "        S = covs if covs.ndim == 2 else covs[c]\n"
         "        cols.append(np.atleast_1d(multivariate_normal(means[c], S).logpdf(X)))\n"
         "    return np.column_stack(cols)\n", 0),
    ],
    "lda_coefficients": [
        # gamma without the factor 1/2.
        ("import numpy as np\n"
         "def lda_coefficients(priors, means, cov):\n"
         "    means = np.asarray(means, float)\n"
         "    B = np.linalg.solve(np.asarray(cov, float), means.T).T\n"
         "    return B, np.log(priors) - np.sum(means * B, axis=1)\n", 0),
        # The seed's mistake: Sigma where Sigma^{-1} belongs.
        ("import numpy as np\n"
         "def lda_coefficients(priors, means, cov):\n"
         "    means = np.asarray(means, float)\n"
         "    B = means @ np.asarray(cov, float)\n"
         "    return B, np.log(priors) - 0.5 * np.sum(means * B, axis=1)\n", 0),
        # The log prior is left out of gamma.
        ("import numpy as np\n"
         "def lda_coefficients(priors, means, cov):\n"
         "    means = np.asarray(means, float)\n"
         "    B = np.linalg.solve(np.asarray(cov, float), means.T).T\n"
         "    return B, -0.5 * np.sum(means * B, axis=1)\n", 0),
    ],
    "regularized_cov": [
        # lam and 1 - lam swapped.
        ("import numpy as np\n"
         "def regularized_cov(cov, lam):\n"
         "    cov = np.asarray(cov, float)\n"
         "    return (1 - lam) * np.diag(np.diag(cov)) + lam * cov\n", 0),
        # Shrinkage towards the identity instead of the diagonal.
        ("import numpy as np\n"
         "def regularized_cov(cov, lam):\n"
         "    cov = np.asarray(cov, float)\n"
         "    return lam * np.eye(len(cov)) + (1 - lam) * cov\n", 0),
        # The vector np.diag(cov) broadcast along rows instead of a diagonal matrix.
        ("import numpy as np\n"
         "def regularized_cov(cov, lam):\n"
         "    cov = np.asarray(cov, float)\n"
         "    return lam * np.diag(cov) + (1 - lam) * cov\n", 0),
    ],
    "nearest_centroid_predict": [
        # argmax instead of argmin (the farthest centroid).
        ("import numpy as np\n"
         "def nearest_centroid_predict(X, means, cov=None):\n"
         "    X = np.asarray(X, float); means = np.asarray(means, float)\n"
         "    P = np.eye(X.shape[1]) if cov is None else np.linalg.inv(cov)\n"
         "    d = X[:, None, :] - means[None]\n"
         "    return np.argmax(np.einsum('ncd,de,nce->nc', d, P, d), axis=1)\n", 0),
        # Ties go to the highest index: only the ties cell fails.
        ("import numpy as np\n"
         "def nearest_centroid_predict(X, means, cov=None):\n"
         "    X = np.asarray(X, float); means = np.asarray(means, float)\n"
         "    P = np.eye(X.shape[1]) if cov is None else np.linalg.inv(cov)\n"
         "    d = X[:, None, :] - means[None]\n"
         "    dist = np.einsum('ncd,de,nce->nc', d, P, d)\n"
         "    return dist.shape[1] - 1 - np.argmin(dist[:, ::-1], axis=1)\n", 3),
        # The seed's mistake: Sigma where Sigma^{-1} belongs.
        ("import numpy as np\n"
         "def nearest_centroid_predict(X, means, cov=None):\n"
         "    X = np.asarray(X, float); means = np.asarray(means, float)\n"
         "    S = np.eye(X.shape[1]) if cov is None else np.asarray(cov, float)\n"
         "    d = X[:, None, :] - means[None]\n"
         "    return np.argmin(np.einsum('ncd,de,nce->nc', d, S, d), axis=1)\n", 0),
        # cov is ignored: always the Euclidean distance.
        ("import numpy as np\n"
         "def nearest_centroid_predict(X, means, cov=None):\n"
         "    X = np.asarray(X, float); means = np.asarray(means, float)\n"
         "    return np.argmin(((X[:, None, :] - means[None]) ** 2).sum(-1), axis=1)\n", 0),
    ],
}

HONEST = {
    "loops": {
        "fit_qda":
            "import numpy as np\n"
            "def fit_qda(X, y):\n"
            "    X = np.asarray(X, dtype=float)\n"
            "    y = np.asarray(y)\n"
            "    classes = np.unique(y)\n"
            "    priors, means, covs = [], [], []\n"
            "    for c in classes:\n"
            "        Xc = X[y == c]\n"
            "        priors.append(len(Xc) / len(X))\n"
            "        means.append(Xc.mean(axis=0))\n"
            "        covs.append(np.atleast_2d(np.cov(Xc, rowvar=False, bias=True)))\n"
            "    return classes, np.array(priors), np.array(means), np.array(covs)\n",
        "fit_lda":
            "import numpy as np\n"
            "def fit_lda(X, y):\n"
            "    X = np.asarray(X, dtype=float)\n"
            "    y = list(np.asarray(y).tolist())\n"
            "    classes = sorted(set(y))\n"
            "    N, D = X.shape\n"
            "    means = {c: np.mean([X[i] for i in range(N) if y[i] == c], axis=0) "
            "for c in classes}\n"
            "    S = np.zeros((D, D))\n"
            "    for i in range(N):\n"
            "        r = X[i] - means[y[i]]\n"
            "        S += np.outer(r, r)\n"
            "    priors = [y.count(c) / N for c in classes]\n"
            "    return (np.array(classes), np.array(priors),\n"
            "            np.array([means[c] for c in classes]), S / N)\n",
        "gda_log_joint":
            "import numpy as np\n"
            "from scipy.stats import multivariate_normal\n"
            "def gda_log_joint(X, priors, means, covs):\n"
            "    X = np.asarray(X, dtype=float)\n"
            "    covs = np.asarray(covs, dtype=float)\n"
            "    out = []\n"
            "    for c in range(len(means)):\n"
            "        S = covs if covs.ndim == 2 else covs[c]\n"
            "        lp = multivariate_normal(np.asarray(means[c], float), S).logpdf(X)\n"
            "        with np.errstate(divide='ignore'):\n"
            "            out.append(np.log(priors[c]) + np.reshape(lp, -1))\n"
            "    return np.array(out).T\n",
        "lda_coefficients":
            "import numpy as np\n"
            "def lda_coefficients(priors, means, cov):\n"
            "    P = np.linalg.inv(np.asarray(cov, dtype=float))\n"
            "    B, gamma = [], []\n"
            "    for p, m in zip(priors, np.asarray(means, dtype=float)):\n"
            "        b = P @ m\n"
            "        B.append(b)\n"
            "        gamma.append(np.log(p) - 0.5 * m @ b)\n"
            "    return np.array(B), np.array(gamma)\n",
        "regularized_cov":
            "def regularized_cov(cov, lam):\n"
            "    D = len(cov)\n"
            "    return [[float(cov[i][j]) if i == j else (1 - lam) * float(cov[i][j])\n"
            "             for j in range(D)] for i in range(D)]\n",
        "nearest_centroid_predict":
            "import numpy as np\n"
            "def nearest_centroid_predict(X, means, cov=None):\n"
            "    X = np.asarray(X, dtype=float); means = np.asarray(means, dtype=float)\n"
            "    P = np.eye(X.shape[1]) if cov is None else np.linalg.inv(np.asarray(cov, float))\n"
            "    out = []\n"
            "    for x in X:\n"
            "        best, best_d = 0, np.inf\n"
            "        for c, m in enumerate(means):\n"
            "            d = (x - m) @ P @ (x - m)\n"
            "            if d < best_d:\n"
            "                best, best_d = c, d\n"
            "        out.append(best)\n"
            "    return np.array(out)\n",
    },
    "scipy_and_lists": {
        "fit_qda":
            "import numpy as np\n"
            "def fit_qda(X, y):\n"
            "    X = np.asarray(X, dtype=float)\n"
            "    classes, index, counts = np.unique(y, return_inverse=True, return_counts=True)\n"
            "    index = index.ravel()\n"
            "    means = np.stack([X[index == k].mean(0) for k in range(len(classes))])\n"
            "    covs = np.stack([np.einsum('ni,nj->ij', X[index == k] - means[k],\n"
            "                               X[index == k] - means[k]) / counts[k]\n"
            "                     for k in range(len(classes))])\n"
            "    return [classes, counts / counts.sum(), means, covs]\n",
        "fit_lda":
            "import numpy as np\n"
            "def fit_lda(X, y):\n"
            "    X = np.asarray(X, dtype=float)\n"
            "    classes, index, counts = np.unique(y, return_inverse=True, return_counts=True)\n"
            "    index = index.ravel()\n"
            "    priors = counts / counts.sum()\n"
            "    means = np.stack([X[index == k].mean(0) for k in range(len(classes))])\n"
            "    cov = sum(p * np.atleast_2d(np.cov(X[index == k], rowvar=False, bias=True))\n"
            "              for k, p in enumerate(priors))\n"
            "    return [classes, priors, means, cov]\n",
        "gda_log_joint":
            "import numpy as np\n"
            "def gda_log_joint(X, priors, means, covs):\n"
            "    X = np.asarray(X, dtype=float); means = np.asarray(means, dtype=float)\n"
            "    covs = np.asarray(covs, dtype=float)\n"
            "    C, D = means.shape\n"
            "    if covs.ndim == 2:\n"
            "        covs = np.repeat(covs[None], C, axis=0)\n"
            "    _, logdet = np.linalg.slogdet(covs)                       # (C,)\n"
            "    diff = X[:, None, :] - means[None]                         # (N, C, D)\n"
            "    sol = np.linalg.solve(covs[None], diff[..., None])[..., 0]  # (N, C, D)\n"
            "    quad = np.sum(diff * sol, axis=2)\n"
            "    with np.errstate(divide='ignore'):\n"
            "        lp = np.log(np.asarray(priors, dtype=float))\n"
            "    return lp - 0.5 * (D * np.log(2 * np.pi) + logdet) - 0.5 * quad\n",
        "lda_coefficients":
            "import numpy as np\n"
            "from scipy import linalg\n"
            "def lda_coefficients(priors, means, cov):\n"
            "    means = np.asarray(means, dtype=float)\n"
            "    B = linalg.cho_solve(linalg.cho_factor(np.asarray(cov, float)), means.T).T\n"
            "    gamma = [float(np.log(p) - 0.5 * m @ b) for p, m, b in zip(priors, means, B)]\n"
            "    return [B.tolist(), gamma]\n",
        "regularized_cov":
            "import numpy as np\n"
            "def regularized_cov(cov, lam):\n"
            "    cov = np.asarray(cov, dtype=float)\n"
            "    return np.where(np.eye(len(cov), dtype=bool), cov, (1 - lam) * cov).tolist()\n",
        # LDA with equal priors: the linear scores 2 mu_c^T P x - mu_c^T P mu_c (x^T P x dropped).
        "nearest_centroid_predict":
            "import numpy as np\n"
            "def nearest_centroid_predict(X, means, cov=None):\n"
            "    X = np.asarray(X, dtype=float); means = np.asarray(means, dtype=float)\n"
            "    P = np.eye(X.shape[1]) if cov is None else np.linalg.inv(np.asarray(cov, float))\n"
            "    PM = means @ P\n"
            "    scores = 2 * X @ PM.T - np.sum(PM * means, axis=1)\n"
            "    return [int(i) for i in np.argmax(scores, axis=1)]\n",
    },
    "warnings_and_prints": {
        "gda_log_joint":
            "import sys\n"
            "import numpy as np\n"
            "from scipy import linalg\n"
            "def gda_log_joint(X, priors, means, covs):\n"
            "    print('evaluating', len(X), 'points', file=sys.stderr)\n"
            "    X = np.asarray(X, dtype=float); means = np.asarray(means, dtype=float)\n"
            "    covs = np.asarray(covs, dtype=float)\n"
            "    C, D = means.shape\n"
            "    lp = np.log(np.asarray(priors, dtype=float))   # RuntimeWarning for a zero prior\n"
            "    cols = []\n"
            "    for c in range(C):\n"
            "        S = covs if covs.ndim == 2 else covs[c]\n"
            "        L = linalg.cholesky(S, lower=True)\n"
            "        z = linalg.solve_triangular(L, (X - means[c]).T, lower=True)\n"
            "        cols.append(lp[c] - np.log(np.diag(L)).sum() - D / 2 * np.log(2 * np.pi)\n"
            "                    - 0.5 * (z * z).sum(0))\n"
            "    return np.stack(cols, axis=1)\n",
        "fit_qda":
            "import warnings\n"
            "import numpy as np\n"
            "def fit_qda(X, y):\n"
            "    warnings.warn('a harmless warning from the student')\n"
            "    X = np.asarray(X, dtype=float); y = np.asarray(y)\n"
            "    classes = np.unique(y)\n"
            "    R = (y[:, None] == classes[None]).astype(float)\n"
            "    n = R.sum(0)\n"
            "    means = (R.T @ X) / n[:, None]\n"
            "    second = np.einsum('nc,ni,nj->cij', R, X, X) / n[:, None, None]\n"
            "    covs = second - np.einsum('ci,cj->cij', means, means)\n"
            "    return classes, n / len(y), means, covs\n",
        "nearest_centroid_predict":
            "import sys\n"
            "import numpy as np\n"
            "from scipy.spatial.distance import cdist\n"
            "def nearest_centroid_predict(X, means, cov=None):\n"
            "    print('nearest centroids', file=sys.stderr)\n"
            "    if cov is None:\n"
            "        d = cdist(np.asarray(X, float), np.asarray(means, float), 'sqeuclidean')\n"
            "    else:\n"
            "        d = cdist(np.asarray(X, float), np.asarray(means, float), 'mahalanobis',\n"
            "                  VI=np.linalg.inv(np.asarray(cov, float)))\n"
            "    return d.argmin(axis=1)\n",
    },
}

# The two tasks beyond the chapter: each has a visible worked example (2 points), a visible edge
# case (2), and two hidden cells (4 + 4: random inputs, and edge cases).

WRONG["map_covariance"] = [
    # The scatter taken around 0 instead of the sample mean: fails every cell (no case is
    # centred at the origin).
    ("import numpy as np\n"
     "def map_covariance(X, Psi, nu):\n"
     "    X = np.asarray(X, float); n, d = X.shape\n"
     "    return (np.asarray(Psi, float) + X.T @ X) / (nu + n + d + 1)\n", 0),
]
WRONG["fisher_directions"] = [
    # scipy's eigenvalues come in increasing order; not reversing them returns the directions
    # with the smallest J first: fails every cell.
    ("import numpy as np, scipy.linalg\n"
     "def fisher_directions(X, y, n_components):\n"
     "    X = np.asarray(X, float); y = np.asarray(y); m = X.mean(0)\n"
     "    Sw = np.zeros((X.shape[1],) * 2); Sb = np.zeros_like(Sw)\n"
     "    for c in np.unique(y):\n"
     "        Xc = X[y == c]; mc = Xc.mean(0)\n"
     "        Sw += (Xc - mc).T @ (Xc - mc) / len(y)\n"
     "        Sb += len(Xc) / len(y) * np.outer(mc - m, mc - m)\n"
     "    return scipy.linalg.eigh(Sb, Sw)[1][:, :n_components]\n", 0),
]

HONEST["beyond_the_chapter_loops"] = {
    "map_covariance":
        "import numpy as np\n"
        "def map_covariance(X, Psi, nu):\n"
        "    X = np.asarray(X, dtype=float)\n"
        "    mean = X.mean(axis=0)\n"
        "    S = np.array(Psi, dtype=float)\n"
        "    for x in X:\n"
        "        S += np.outer(x - mean, x - mean)\n"
        "    return (S / (nu + len(X) + X.shape[1] + 1)).tolist()\n",
    # Whitening with the Cholesky factor of Sigma_W, then a symmetric eigenproblem.
    "fisher_directions":
        "import numpy as np\n"
        "def fisher_directions(X, y, n_components):\n"
        "    X = np.asarray(X, float); y = np.asarray(y)\n"
        "    classes = np.unique(y)\n"
        "    means = np.array([X[y == c].mean(0) for c in classes])\n"
        "    weights = np.array([np.mean(y == c) for c in classes])\n"
        "    resid = X - means[np.searchsorted(classes, y)]\n"
        "    Sw = resid.T @ resid / len(X)\n"
        "    dev = means - X.mean(0)\n"
        "    Sb = (dev * weights[:, None]).T @ dev\n"
        "    L = np.linalg.cholesky(Sw)\n"
        "    Linv = np.linalg.inv(L)\n"
        "    vals, vecs = np.linalg.eigh(Linv @ Sb @ Linv.T)\n"
        "    order = np.argsort(vals)[::-1][:n_components]\n"
        "    return Linv.T @ vecs[:, order]\n",
}
HONEST["beyond_the_chapter_eig"] = {
    # The non-symmetric eigenproblem of inv(Sigma_W) Sigma_B, then each column rescaled, with
    # the opposite signs of the reference allowed.
    "fisher_directions":
        "import numpy as np\n"
        "def fisher_directions(X, y, n_components):\n"
        "    X = np.asarray(X, float); y = np.asarray(y)\n"
        "    D = X.shape[1]; Sw = np.zeros((D, D)); Sb = np.zeros((D, D)); m = X.mean(0)\n"
        "    for c in np.unique(y):\n"
        "        Xc = X[y == c]; mc = Xc.mean(0)\n"
        "        Sw += (Xc - mc).T @ (Xc - mc)\n"
        "        Sb += len(Xc) * np.outer(mc - m, mc - m)\n"
        "    Sw /= len(y); Sb /= len(y)\n"
        "    vals, vecs = np.linalg.eig(np.linalg.solve(Sw, Sb))\n"
        "    order = np.argsort(-vals.real)[:n_components]\n"
        "    W = vecs[:, order].real\n"
        "    W = W / np.sqrt(np.einsum('ik,ij,jk->k', W, Sw, W))\n"
        "    return -W\n",
    # The scatter from the raw second moment, X'X - N m m'.
    "map_covariance":
        "import numpy as np\n"
        "def map_covariance(X, Psi, nu):\n"
        "    X = np.array(X, dtype=float)\n"
        "    N, D = X.shape\n"
        "    m = X.sum(axis=0) / N\n"
        "    S = X.T @ X - N * np.outer(m, m)\n"
        "    return (S + np.asarray(Psi)) * (1.0 / (N + D + nu + 1))\n",
}

# Answers a student might try instead of solving the task: {label: (task, answer, score)}.
# Each must score below the task's full marks (12); the score is derived from which cells the
# answer passes.
SHORTCUTS = {
    # The maximum-likelihood covariance of the chapter (fit_qda's), ignoring the prior: fails
    # every cell (the prior always matters; with one sample it is all there is).
    "ml_covariance": ("map_covariance",
                      "import numpy as np\n"
                      "def map_covariance(X, Psi, nu):\n"
                      "    X = np.asarray(X, float); C = X - X.mean(0)\n"
                      "    return C.T @ C / len(X)\n", 0),
    # The posterior mean (Psi + S) / (nu + N - D - 1) instead of the mode (also what the mode of
    # the precision's density gives, inverted: the Jacobian route): fails every cell.
    "posterior_mean": ("map_covariance",
                       "import numpy as np\n"
                       "def map_covariance(X, Psi, nu):\n"
                       "    X = np.asarray(X, float); n, d = X.shape; C = X - X.mean(0)\n"
                       "    return (np.asarray(Psi, float) + C.T @ C) / (nu + n - d - 1)\n", 0),
    # Section 5's shrinkage with a weight from the prior: lam Psi / nu + (1 - lam) S / N with
    # lam = nu / (nu + N), i.e. (Psi + S) / (nu + N), the D + 1 of the prior's density lost:
    # fails every cell.
    "shrink_towards_prior": ("map_covariance",
                             "import numpy as np\n"
                             "def map_covariance(X, Psi, nu):\n"
                             "    X = np.asarray(X, float); n = len(X); C = X - X.mean(0)\n"
                             "    lam = nu / (nu + n)\n"
                             "    return lam * np.asarray(Psi, float) / nu + (1 - lam)"
                             " * C.T @ C / n\n",
                             0),
    # The difference of the means, scaled to w' Sigma_W w = 1: Fisher without Sigma_W's
    # direction (the answer for an isotropic covariance, the section-7 derivation): fails every
    # cell.
    "mean_difference": ("fisher_directions",
                        "import numpy as np\n"
                        "def fisher_directions(X, y, n_components):\n"
                        "    X = np.asarray(X, float); y = np.asarray(y); cl = np.unique(y)\n"
                        "    mu = np.array([X[y == c].mean(0) for c in cl])\n"
                        "    R = X - mu[np.searchsorted(cl, y)]; Sw = R.T @ R / len(X)\n"
                        "    W = (mu[1:] - mu[0]).T[:, :n_components]\n"
                        "    return W / np.sqrt(np.einsum('ik,ij,jk->k', W, Sw, W))\n", 0),
    # LDA's weight differences Sigma_W^-1 (mu_c - mu_0) from the chapter, unscaled: the right
    # direction for two classes but the wrong length; fails every cell.
    "lda_weights": ("fisher_directions",
                    "import numpy as np\n"
                    "def fisher_directions(X, y, n_components):\n"
                    "    X = np.asarray(X, float); y = np.asarray(y); cl = np.unique(y)\n"
                    "    mu = np.array([X[y == c].mean(0) for c in cl])\n"
                    "    R = X - mu[np.searchsorted(cl, y)]; Sw = R.T @ R / len(X)\n"
                    "    return np.linalg.solve(Sw, (mu[1:] - mu[0]).T)[:, :n_components]\n", 0),
    # The generalised eigenvectors with unit Euclidean length (np.linalg.eig's scaling) instead
    # of w' Sigma_W w = 1: fails every cell.
    "unit_length": ("fisher_directions",
                    "import numpy as np\n"
                    "def fisher_directions(X, y, n_components):\n"
                    "    X = np.asarray(X, float); y = np.asarray(y); cl = np.unique(y)\n"
                    "    mu = np.array([X[y == c].mean(0) for c in cl]); m = X.mean(0)\n"
                    "    R = X - mu[np.searchsorted(cl, y)]; Sw = R.T @ R / len(X)\n"
                    "    w = np.array([np.mean(y == c) for c in cl])\n"
                    "    Sb = ((mu - m) * w[:, None]).T @ (mu - m)\n"
                    "    vals, vecs = np.linalg.eig(np.linalg.solve(Sw, Sb))\n"
                    "    return vecs[:, np.argsort(-vals.real)[:n_components]].real\n", 0),
}
