"""The reference implementations against scikit-learn: time ratio and coefficient agreement.

Usage: ``.venv/bin/python benchmarks/reference_vs_sklearn.py [--repeats 7] [--shape 100000x50]
[--shape 2000x500] [--shape 500x5000] [--only NAME ...] [--threads K] [--runs R]``, or
``... --scaling [--plot benchmarks/scaling.svg]`` for time against N and against D.

One command prints the whole table. For each of three shapes (tall N = 100 000, D = 50; wide
N = 2 000, D = 500; very wide N = 500, D = 5 000 by default; 3 classes where classes matter) it
draws data with fixed seeds, then times every pair of (our function, the scikit-learn
estimator that computes the same thing):

* the generative fits: ``fit_gaussian_nb``, ``fit_bernoulli_nb``, ``fit_lda``, ``fit_qda``
  against ``GaussianNB``, ``BernoulliNB``, ``LinearDiscriminantAnalysis(solver="lsqr")`` and
  ``QuadraticDiscriminantAnalysis(store_covariance=True)``;
* the posteriors: ``predict_proba`` of our naive Bayes and GDA estimators against scikit-learn's
  (both fitted beforehand, only the posterior is timed);
* the discriminative fits: ``fit_logistic_regression`` and ``fit_softmax_regression`` against
  ``LogisticRegression`` (binary and multinomial; with its default solver lbfgs, and with
  newton-cholesky, which reaches the optimum itself; newton-cg when D > N), ``ridge_fit``
  against ``Ridge``,
  ``lasso_fit`` against ``Lasso`` and ``lasso_path`` against ``sklearn.linear_model.lasso_path``.

With more features than samples (the very wide shape) only the discriminative fits, ridge and
the LASSO run: the class covariances of the generative models are singular there.

Both sides get the same float64 arrays and the same model (the same smoothing, penalty and
maximum-likelihood covariances); the iterative scikit-learn solvers run with tight tolerances
(printed under the table) so that both reach the same optimum, and the last column is the
largest absolute difference between the two sets of fitted parameters (or posteriors). The
features are standardised, so "within 1e-6" means the same thing for every coefficient.

``--scaling`` times ridge, the LASSO, logistic and softmax regression (against Ridge, Lasso and
LogisticRegression(lbfgs)) on a grid instead: N from 100 to 50 000 at D = 200, and D from 20
to 5 000 at N = 500, and ``--plot`` draws both as log-log curves (docs/performance.md shows
the figure).

The machine may be shared and noisy: each pair is timed ``--repeats`` times (fast pairs more
often, until 2 s have passed), our call and scikit-learn's alternating so that both see the
same load, and the best time of each is kept. Load that lasts longer than a pair's timing still
moves the ratio from one run to the next, by up to half its value on a busy machine: ``--runs R``
times the whole table R times over and prints each pair's median ratio and its range.
Read the ratio (ours / scikit-learn, lower is faster), not the absolute times. ``--threads``
limits the BLAS threads of both sides (threadpoolctl), which makes ratios steadier on a busy
machine. Speed is never asserted in the test suite; agreement is (tests/test_*.py).
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy
import sklearn
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis as SkLDA
from sklearn.discriminant_analysis import QuadraticDiscriminantAnalysis as SkQDA
from sklearn.linear_model import Lasso, Ridge
from sklearn.linear_model import LogisticRegression as SkLogisticRegression
from sklearn.linear_model import lasso_path as sk_lasso_path
from sklearn.naive_bayes import BernoulliNB, GaussianNB

from mlcourse_utils import gda, logistic, naive_bayes, regularization

N_CLASSES = 3
RIDGE_LAM = 10.0
LASSO_FRACTION = 0.05        # the LASSO's lam as a fraction of lambda_max
PATH_LENGTH = 100            # penalties on the path, from lambda_max down to PATH_LOW lambda_max
PATH_LOW = 1e-3
#: With D > N the smallest penalties nearly interpolate the data and scikit-learn's coordinate
#: descent needs minutes to reach tol=1e-12 there (7.6 min per path at 1e-3 lambda_max on
#: 500 x 5000, 13 s at 1e-2): the very wide path stops at 1e-2 lambda_max.
PATH_LOW_WIDE = 1e-2
SK_LASSO_TOL = 1e-12
SK_LOGISTIC_TOL = 1e-8
SK_NEWTON_TOL = 1e-10
VAR_SMOOTHING = 1e-9         # scikit-learn's default, given to both sides
GOALS = {"fit": 0.5, "posterior": 1.0, "ridge": 1.0, "iterative": 1.5}


# ---------------------------------------------------------------------------------------------
# Data
# ---------------------------------------------------------------------------------------------


def standardise(X):
    return (X - X.mean(axis=0)) / X.std(axis=0)


def classification_data(n, d, seed=0):
    """Standardised features from 3 overlapping Gaussian classes with different covariances."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, N_CLASSES, size=n)
    means = rng.normal(0.0, 0.6 * np.sqrt(50 / d), size=(N_CLASSES, d))   # same overlap for any D
    mixing = np.eye(d) + 0.2 * rng.normal(size=(N_CLASSES, d, d)) / np.sqrt(d)
    X = np.empty((n, d))
    for c in range(N_CLASSES):
        rows = y == c
        X[rows] = rng.normal(size=(rows.sum(), d)) @ mixing[c] + means[c]
    return standardise(X), y


def regression_data(n, d, seed=1):
    """Standardised correlated features; y = X w + 5 + noise with 10 nonzero weights."""
    rng = np.random.default_rng(seed)
    mixing = np.eye(d) + 0.3 * rng.normal(size=(d, d)) / np.sqrt(d / 50)
    X = standardise(rng.normal(size=(n, d)) @ mixing)
    w = np.zeros(d)
    w[:10] = rng.normal(0.0, 2.0, size=10)
    return X, X @ w + 5.0 + rng.normal(0.0, 3.0, size=n)


# ---------------------------------------------------------------------------------------------
# Timing
# ---------------------------------------------------------------------------------------------


@dataclass
class Pair:
    name: str
    kind: str                                    # a key of GOALS
    ours: Callable[[], object]
    theirs: Callable[[], object]
    diff: Callable[[object, object], float]      # largest |difference| between the two results


#: Fast pairs are repeated beyond --repeats until both sides have run this long in all (at
#: most MAX_ROUNDS rounds): the best of many short calls is a steadier estimate on a busy machine.
MIN_SECONDS = 2.0
MAX_ROUNDS = 200


def best_of(pair, repeats, min_seconds=MIN_SECONDS):
    """Best wall time of ours and theirs (alternating calls), the rounds, the last results."""
    t_ours, t_theirs = np.inf, np.inf
    rounds, began = 0, time.perf_counter()
    while rounds < repeats or (time.perf_counter() - began < min_seconds
                               and rounds < MAX_ROUNDS):
        start = time.perf_counter()
        ours = pair.ours()
        t_ours = min(t_ours, time.perf_counter() - start)
        start = time.perf_counter()
        theirs = pair.theirs()
        t_theirs = min(t_theirs, time.perf_counter() - start)
        rounds += 1
    return t_ours, t_theirs, rounds, ours, theirs


def maxabs(*pairs):
    return float(max(np.max(np.abs(np.asarray(a) - np.asarray(b))) for a, b in pairs))


# ---------------------------------------------------------------------------------------------
# The pairs
# ---------------------------------------------------------------------------------------------


def generative_pairs(X, y, Xb):
    """Fits and posteriors of naive Bayes and GDA on (X, y) and the binary features Xb."""
    pairs = [
        Pair("fit_gaussian_nb / GaussianNB", "fit",
             lambda: naive_bayes.fit_gaussian_nb(X, y, VAR_SMOOTHING),
             lambda: GaussianNB(var_smoothing=VAR_SMOOTHING).fit(X, y),
             lambda o, t: maxabs((o[1], np.log(t.class_prior_)), (o[2], t.theta_),
                                 (o[3], t.var_))),
        Pair("fit_bernoulli_nb / BernoulliNB", "fit",
             lambda: naive_bayes.fit_bernoulli_nb(Xb, y, 1.0),
             lambda: BernoulliNB(alpha=1.0).fit(Xb, y),
             lambda o, t: maxabs((o[1], t.class_log_prior_),
                                 (o[2], np.exp(t.feature_log_prob_)))),
        Pair("fit_bernoulli_nb / BernoulliNB(binarize=None)", "fit",
             lambda: naive_bayes.fit_bernoulli_nb(Xb, y, 1.0),
             lambda: BernoulliNB(alpha=1.0, binarize=None).fit(Xb, y),
             lambda o, t: maxabs((o[1], t.class_log_prior_),
                                 (o[2], np.exp(t.feature_log_prob_)))),
        Pair("fit_lda / LDA(solver='lsqr')", "fit",
             lambda: gda.fit_lda(X, y),
             lambda: SkLDA(solver="lsqr").fit(X, y),
             lambda o, t: maxabs((o[1], t.priors_), (o[2], t.means_), (o[3], t.covariance_))),
        Pair("fit_qda / QDA(store_covariance=True)", "fit",
             lambda: gda.fit_qda(X, y),
             lambda: SkQDA(store_covariance=True).fit(X, y),
             lambda o, t: maxabs((o[1], t.priors_), (o[2], t.means_),
                                 (o[3], np.asarray(t.covariance_)))),
    ]
    fitted = [
        ("GaussianNaiveBayes / GaussianNB", X,
         naive_bayes.GaussianNaiveBayes(VAR_SMOOTHING), GaussianNB(var_smoothing=VAR_SMOOTHING)),
        ("BernoulliNaiveBayes / BernoulliNB", Xb,
         naive_bayes.BernoulliNaiveBayes(1.0), BernoulliNB(alpha=1.0, binarize=None)),
        ("LDA / LDA(solver='lsqr')", X, gda.LDA(), SkLDA(solver="lsqr")),
        ("QDA / QDA", X, gda.QDA(), SkQDA()),
    ]
    for name, data, ours, theirs in fitted:
        ours.fit(data, y)
        theirs.fit(data, y)
        pairs.append(Pair(f"posterior {name}", "posterior",
                          lambda o=ours, d=data: o.predict_proba(d),
                          lambda t=theirs, d=data: t.predict_proba(d),
                          lambda o, t: maxabs((o, t))))
    return pairs


def logistic_pairs(X, y):
    """Binary (class 0 against the rest) and 3-class logistic regression, l2 = 1 (C = 1).

    scikit-learn's default solver, lbfgs, stops on a small relative decrease of the loss as
    well as on its gradient, about 1e-6 from the optimum here whatever ``tol``; its Newton
    solver with a tight tolerance reaches the optimum itself, the one ours reaches. With more
    features than samples that solver (newton-cholesky) would form a (D + 1) C x (D + 1) C
    Hessian (1.8 GB for 500 x 5 000 and 3 classes), so newton-cg, which uses Hessian-vector
    products, gives the optimum there.
    """
    yb = (y == 0).astype(np.int64)

    def sk_logistic(labels, solver, tol):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return SkLogisticRegression(C=1.0, solver=solver, tol=tol, max_iter=100_000).fit(
                X, labels)

    newton = "newton-cholesky" if X.shape[0] >= X.shape[1] else "newton-cg"
    pairs = []
    for solver, tol in (("lbfgs", SK_LOGISTIC_TOL), (newton, SK_NEWTON_TOL)):
        pairs += [
            Pair(f"fit_logistic_regression / LR({solver})", "iterative",
                 lambda: logistic.fit_logistic_regression(X, yb, l2=1.0),
                 lambda s=solver, t=tol: sk_logistic(yb, s, t),
                 lambda o, t: maxabs((o[0], t.coef_[0]), (o[1], t.intercept_[0]))),
            Pair(f"fit_softmax_regression / LR({solver})", "iterative",
                 lambda: logistic.fit_softmax_regression(X, y, l2=1.0),
                 lambda s=solver, t=tol: sk_logistic(y, s, t),
                 lambda o, t: maxabs((o[1], t.coef_.T),
                                     (o[2], t.intercept_ - t.intercept_.mean()))),
        ]
    return pairs


def regularization_pairs(X, y):
    lam_max = regularization.lasso_lambda_max(X, y)
    lam = LASSO_FRACTION * lam_max
    low = PATH_LOW if X.shape[0] >= X.shape[1] else PATH_LOW_WIDE
    lams = np.geomspace(lam_max, low * lam_max, PATH_LENGTH)
    Xc = X - X.mean(axis=0)       # scikit-learn's lasso_path fits no intercept: centre X

    def quiet(fit):
        def run():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return fit()
        return run

    return [
        Pair("ridge_fit / Ridge", "ridge",
             lambda: regularization.ridge_fit(X, y, RIDGE_LAM),
             lambda: Ridge(alpha=RIDGE_LAM).fit(X, y),
             lambda o, t: maxabs((o[0], t.coef_), (o[1], t.intercept_))),
        Pair("lasso_fit / Lasso", "iterative",
             quiet(lambda: regularization.lasso_fit(X, y, lam)),
             quiet(lambda: Lasso(alpha=lam, tol=SK_LASSO_TOL, max_iter=100_000).fit(X, y)),
             lambda o, t: maxabs((o[0], t.coef_), (o[1], t.intercept_))),
        Pair(f"lasso_path / lasso_path ({PATH_LENGTH} lams to {low:g} lam_max)", "iterative",
             quiet(lambda: regularization.lasso_path(X, y, lams)),
             quiet(lambda: sk_lasso_path(Xc, y, alphas=lams, tol=SK_LASSO_TOL,
                                         max_iter=100_000)[1]),
             lambda o, t: maxabs((o, t.T))),
    ]


# ---------------------------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------------------------


def machine():
    """One paragraph on the machine: cores, CPU model, library versions, BLAS."""
    model = platform.processor() or "unknown CPU"
    try:
        lscpu = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
        model = next(line.split(":", 1)[1].strip() for line in lscpu.splitlines()
                     if line.startswith("Model name"))
    except (OSError, subprocess.CalledProcessError, StopIteration):
        pass
    blas = "unknown BLAS"
    try:
        config = np.show_config(mode="dicts")
        info = config["Build Dependencies"]["blas"]
        blas = f"{info['name']} {info.get('version', '')}".strip()
    except (TypeError, KeyError):
        pass
    return (f"{os.cpu_count()} CPUs ({model}); Python {platform.python_version()}, "
            f"numpy {np.__version__}, scipy {scipy.__version__}, scikit-learn "
            f"{sklearn.__version__}, BLAS {blas}")


def run_shape(n, d, repeats, only, runs=1):
    """Print the table of one shape ``runs`` times, then (runs > 1) each pair's median ratio."""
    X, y = classification_data(n, d)
    Xr, yr = regression_data(n, d)
    pairs = logistic_pairs(X, y) + regularization_pairs(Xr, yr)
    if d <= n:                   # with D > N the (pooled) class covariances are singular
        pairs = generative_pairs(X, y, (X > 0).astype(np.float64)) + pairs
    if only:
        pairs = [p for p in pairs if any(word in p.name for word in only)]
    print(f"\nN = {n}, D = {d}, C = {N_CLASSES}; best of {repeats} or more runs (until "
          f"{MIN_SECONDS:g} s); ratio = ours / scikit-learn (lower is faster)")
    header = f"{'pair':54s} {'ours ms':>9s} {'sklearn ms':>10s} {'ratio':>6s} {'goal':>5s} " \
             f"{'max |diff|':>10s} {'runs':>5s}"
    print(header)
    print("-" * len(header))
    rows = []
    for run in range(runs):
        if runs > 1:
            print(f"run {run + 1} of {runs}")
        for pair in pairs:
            t_ours, t_theirs, rounds, ours, theirs = best_of(pair, repeats)
            ratio = t_ours / t_theirs
            goal = GOALS[pair.kind]
            diff = pair.diff(ours, theirs)
            mark = "" if ratio <= goal else "  over goal"
            print(f"{pair.name:54s} {1e3 * t_ours:9.1f} {1e3 * t_theirs:10.1f} {ratio:6.2f} "
                  f"{goal:5.1f} {diff:10.1e} {rounds:5d}{mark}", flush=True)
            rows.append((pair.name, t_ours, t_theirs, ratio, goal, diff))
    if runs > 1:
        print(f"\nN = {n}, D = {d}: median ratio of the {runs} runs (lowest, highest)")
        for pair in pairs:
            ratios = [row[3] for row in rows if row[0] == pair.name]
            median, goal = float(np.median(ratios)), GOALS[pair.kind]
            mark = "" if median <= goal else "  over goal"
            print(f"{pair.name:54s} {median:6.2f} ({min(ratios):.2f}, {max(ratios):.2f}) "
                  f"goal {goal:3.1f}{mark}")
    return rows


# ---------------------------------------------------------------------------------------------
# Scaling: time against N at fixed D and against D at fixed N
# ---------------------------------------------------------------------------------------------

SCALING_D = 200                                   # time against N at this D
SCALING_NS = [100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000]
SCALING_N = 500                                   # time against D at this N
SCALING_DS = [20, 50, 100, 200, 500, 1000, 2000, 5000]
SCALING_FITS = ["ridge_fit / Ridge", "lasso_fit / Lasso", "fit_logistic_regression / LR(lbfgs)",
                "fit_softmax_regression / LR(lbfgs)"]


def scaling_data(n, d, seed=2):
    """Cheap data of any shape: standardised features with a shared component (pairwise
    correlation about 0.2), 3 classes with the overlap of :func:`classification_data`, and
    regression targets from 10 nonzero weights plus noise."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, N_CLASSES, size=n)
    means = rng.normal(0.0, 0.6 * np.sqrt(50 / d), size=(N_CLASSES, d))
    X = standardise(rng.normal(size=(n, d)) + 0.5 * rng.normal(size=(n, 1)) + means[y])
    w = np.zeros(d)
    w[: min(d, 10)] = rng.normal(0.0, 2.0, size=min(d, 10))
    return X, y, X @ w + 5.0 + rng.normal(0.0, 3.0, size=n)


def scaling_pairs(n, d):
    X, y, t = scaling_data(n, d)
    pairs = [p for p in logistic_pairs(X, y) + regularization_pairs(X, t)
             if p.name in SCALING_FITS]
    return sorted(pairs, key=lambda p: SCALING_FITS.index(p.name))


def run_scaling(repeats, plot):
    """Print (and plot) time against N at D = SCALING_D and against D at N = SCALING_N."""
    results = {}                                  # (axis, fit) -> list of (size, ours, theirs)
    for axis, shapes in (("N", [(n, SCALING_D) for n in SCALING_NS]),
                         ("D", [(SCALING_N, d) for d in SCALING_DS])):
        fixed = f"D = {SCALING_D}" if axis == "N" else f"N = {SCALING_N}"
        print(f"\nTime against {axis} at {fixed} (ms, best of {repeats} or more alternating "
              "runs; ratio = ours / scikit-learn)")
        print(f"{'fit':40s} {axis:>6s} {'ours':>9s} {'sklearn':>9s} {'ratio':>6s} "
              f"{'max |diff|':>10s}")
        for n, d in shapes:
            for pair in scaling_pairs(n, d):
                t_ours, t_theirs, _, ours, theirs = best_of(pair, repeats, min_seconds=0.5)
                size = n if axis == "N" else d
                results.setdefault((axis, pair.name), []).append((size, t_ours, t_theirs))
                print(f"{pair.name:40s} {size:6d} {1e3 * t_ours:9.2f} {1e3 * t_theirs:9.2f} "
                      f"{t_ours / t_theirs:6.2f} {pair.diff(ours, theirs):10.1e}", flush=True)
    if plot:
        plot_scaling(results, plot)


def plot_scaling(results, path):
    """Two log-log panels, time against N and against D; one colour per fit, ours solid with
    dots, scikit-learn's dashed with squares."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams["svg.fonttype"] = "none"         # text stays text: a small, searchable SVG
    fig, axes = plt.subplots(1, 2, figsize=(10, 5), layout="constrained")
    colours = ["#0072B2", "#D55E00", "#009E73", "#CC79A7"]       # Okabe-Ito: colour-blind safe
    theirs_labels = ["Ridge", "Lasso", "LogisticRegression, 2 classes",
                     "LogisticRegression, 3 classes"]
    for ax, axis in zip(axes, ("N", "D"), strict=True):
        for fit, colour, label in zip(SCALING_FITS, colours, theirs_labels, strict=True):
            sizes, ours, theirs = np.array(results[(axis, fit)]).T
            ax.plot(sizes, 1e3 * ours, "-o", color=colour, markersize=4,
                    label=fit.split(" / ")[0])
            ax.plot(sizes, 1e3 * theirs, "--s", color=colour, markersize=4, alpha=0.8,
                    label=f"scikit-learn {label}")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.grid(True, which="major", alpha=0.3)
        ax.set_ylabel("time (ms)")
        if axis == "N":
            ax.set_xlabel(f"samples N (D = {SCALING_D} features)")
            ax.set_title("Time against the number of samples")
        else:
            ax.set_xlabel(f"features D (N = {SCALING_N} samples)")
            ax.set_title("Time against the number of features")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=4, fontsize=8,
               title="ours: solid lines, dots; scikit-learn: dashed lines, squares",
               title_fontsize=8)
    fig.savefig(path, metadata={"Date": None})    # no timestamp: the file changes only with data
    print(f"\nwrote {path}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--shape", action="append", default=None,
                        help="NxD, e.g. 100000x50 (repeatable; default: 100000x50, 2000x500 and "
                        "500x5000)")
    parser.add_argument("--only", nargs="*", default=None,
                        help="run only the pairs whose name contains one of these words")
    parser.add_argument("--runs", type=int, default=1,
                        help="time every pair of a shape this many times over (the whole table "
                        "again) and print each pair's median ratio and range")
    parser.add_argument("--threads", type=int, default=None,
                        help="limit BLAS threads (both sides) to this many")
    parser.add_argument("--scaling", action="store_true",
                        help="instead of the shapes: time ridge, LASSO, logistic and softmax "
                        f"regression against N (D = {SCALING_D}) and against D (N = {SCALING_N})")
    parser.add_argument("--plot", default=None,
                        help="with --scaling: write the two log-log panels to this file "
                        "(e.g. benchmarks/scaling.svg)")
    args = parser.parse_args(argv)
    shapes = [tuple(int(v) for v in s.lower().split("x")) for s in
              (args.shape or ["100000x50", "2000x500", "500x5000"])]
    print(machine())
    limiter = None
    if args.threads is not None:
        from threadpoolctl import threadpool_limits
        limiter = threadpool_limits(limits=args.threads)
        print(f"BLAS threads limited to {args.threads}")
    print(f"Tolerances: scikit-learn LogisticRegression(lbfgs, tol={SK_LOGISTIC_TOL:g}; it also "
          "stops on a small relative decrease of the loss, about 1e-6 from the optimum) and "
          f"LogisticRegression(newton-cholesky, or newton-cg when D > N, tol={SK_NEWTON_TOL:g}), "
          f"Lasso and lasso_path tol={SK_LASSO_TOL:g}; ours at their defaults (logistic: "
          "largest gradient entry <= 1e-8; LASSO: largest weight change in a sweep <= 1e-8). "
          f"GaussianNB var_smoothing={VAR_SMOOTHING:g} on both sides, Laplace alpha = 1 for "
          f"BernoulliNB, ridge lam = {RIDGE_LAM:g}, LASSO lam = {LASSO_FRACTION:g} lambda_max, "
          "logistic l2 = 1 (C = 1). Posteriors: predict_proba on the training set.")
    if args.scaling:
        run_scaling(args.repeats, args.plot)
    else:
        for n, d in shapes:
            run_shape(n, d, args.repeats, args.only, args.runs)
    if limiter is not None:
        limiter.unregister()


if __name__ == "__main__":
    main()
