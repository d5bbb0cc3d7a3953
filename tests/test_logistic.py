"""Tests for mlcourse_utils.logistic (chapter "Logistic regression").

Expected values come from hand derivations (stated in each docstring), from scipy.special
(expit, log_expit, softmax, logsumexp), from central finite differences of the loss, or from
scikit-learn's LogisticRegression fitted on the same (standardised) data with C = 1 / l2 and a
tight tolerance. scikit-learn's lbfgs stops on a relative decrease of the loss, which leaves
about 1e-5 in the coefficients; its newton-cg solver is used where digits matter.
"""

import warnings

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal
from scipy.special import expit, log_expit, logsumexp
from scipy.special import softmax as scipy_softmax
from sklearn.linear_model import LinearRegression
from sklearn.linear_model import LogisticRegression as SkLogisticRegression
from sklearn.metrics import log_loss

from mlcourse_utils import datasets
from mlcourse_utils._validation import NotFittedError
from mlcourse_utils.logistic import (
    ConvergenceWarning,
    LogisticRegression,
    SoftmaxRegression,
    fit_logistic_regression,
    fit_softmax_regression,
    gradient_descent,
    least_squares_classifier,
    logistic_nll,
    logistic_nll_grad,
    sigmoid,
    softmax,
    softmax_nll,
    softmax_nll_grad,
)
from tolerances import U, few_ops, sum_rtol


def _standardise(X):
    X = np.asarray(X, dtype=float)
    return (X - X.mean(axis=0)) / X.std(axis=0)


def _sklearn_fit(X, y, l2, solver="newton-cg"):
    """scikit-learn's optimum of sum_n log loss + (l2/2)||w||^2 (C = 1/l2), tightly converged."""
    return SkLogisticRegression(C=1.0 / l2, solver=solver, tol=1e-12, max_iter=100_000).fit(X, y)


def _finite_difference_grad(f, x, h=1e-6):
    x = np.asarray(x, dtype=float)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = h
        g[i] = (f(x + e) - f(x - e)) / (2 * h)
    return g


@pytest.fixture(scope="module")
def breast_cancer():
    bunch = datasets.load_breast_cancer()
    return _standardise(bunch.data), bunch.target


@pytest.fixture(scope="module")
def iris():
    bunch = datasets.load_iris()
    return _standardise(bunch.data), bunch.target


@pytest.fixture(scope="module")
def wine():
    bunch = datasets.load_wine()
    return _standardise(bunch.data), bunch.target


# --------------------------------------------------------------------------------- sigmoid


def test_sigmoid_hand_values():
    """sigma(0) = 1/2; sigma(log 3) = 1/(1 + 1/3) = 3/4; sigma(-log 3) = 1/4;
    sigma(+inf) = 1 and sigma(-inf) = 0 exactly."""
    assert sigmoid(0.0) == 0.5
    assert_allclose(sigmoid(np.log(3.0)), 0.75, rtol=few_ops())
    assert_allclose(sigmoid(-np.log(3.0)), 0.25, rtol=few_ops())
    assert sigmoid(np.inf) == 1.0
    assert sigmoid(-np.inf) == 0.0


def test_sigmoid_matches_scipy_expit_over_a_wide_range():
    t = np.concatenate([np.linspace(-800, 800, 4001), [-1e4, -745.2, 1e-300, 36.7, 1e4]])
    assert_allclose(sigmoid(t), expit(t), rtol=few_ops(20), atol=1e-300)  # expit flushes subnormals


def test_sigmoid_both_forms_agree_where_neither_overflows():
    """1/(1 + e^-t) and e^t/(1 + e^t) are the same function (multiply by e^t/e^t)."""
    t = np.linspace(-30, 30, 601)
    assert_allclose(sigmoid(t), 1 / (1 + np.exp(-t)), rtol=few_ops())
    assert_allclose(sigmoid(t), np.exp(t) / (1 + np.exp(t)), rtol=few_ops())


def test_sigmoid_symmetry_and_derivative():
    """sigma(-t) = 1 - sigma(t), and sigma'(t) = sigma(t)(1 - sigma(t)) by finite differences."""
    t = np.linspace(-20, 20, 81)
    assert_allclose(sigmoid(-t), 1 - sigmoid(t), rtol=0, atol=2 * U)
    h = 1e-6
    numeric = (sigmoid(t + h) - sigmoid(t - h)) / (2 * h)   # rounding error about 1e-10
    assert_allclose(numeric, sigmoid(t) * (1 - sigmoid(t)), rtol=1e-6, atol=3e-10)


@given(st.floats(min_value=-1e4, max_value=1e4, allow_nan=False))
@settings(max_examples=200, deadline=None)
def test_sigmoid_symmetry_property(t):
    assert abs(sigmoid(-t) - (1.0 - sigmoid(t))) <= 2.3e-16
    assert 0.0 <= sigmoid(t) <= 1.0


def test_sigmoid_no_warning_for_huge_scores():
    t = np.array([-1e4, -1e3, -750.0, 0.0, 750.0, 1e3, 1e4, -np.inf, np.inf])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(all="raise"):
            out = sigmoid(t)
    assert_array_equal(out, [0, 0, 0, 0.5, 1, 1, 1, 0, 1])


def test_sigmoid_shapes_and_types():
    assert isinstance(sigmoid(1.0), float)
    assert isinstance(sigmoid(np.float32(2.0)), float)
    out = sigmoid([[0, 1], [2, 3]])
    assert out.shape == (2, 2) and out.dtype == np.float64
    assert sigmoid([]).shape == (0,)


def test_sigmoid_rejects_nan_and_strings():
    with pytest.raises(ValueError, match="t"):
        sigmoid(np.nan)
    with pytest.raises(ValueError, match="t contains NaN"):
        sigmoid([0.0, np.nan])
    with pytest.raises(TypeError, match="t"):
        sigmoid("1.0")


# --------------------------------------------------------------------------- binary log loss


def _scipy_logistic_nll(w, b, X, y, l2):
    a = X @ w + b
    return -np.sum(y * log_expit(a) + (1 - y) * log_expit(-a)) + 0.5 * l2 * w @ w


def test_logistic_nll_at_zero_is_n_log_2():
    """With w = 0 and b = 0 every p(y|x) = 1/2, so the loss is N log 2."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(7, 3))
    y = np.array([0, 1, 1, 0, 1, 0, 0])
    # Each term is log 2 within a few roundings; then a sum of 7 positive terms.
    assert_allclose(logistic_nll(np.zeros(3), 0.0, X, y), 7 * np.log(2),
                    rtol=few_ops(2) + sum_rtol(7))


def test_logistic_nll_seed_example():
    """Seed 000: a classifier with q_x(Pos) = 0.1 on a positive point loses -log 0.1 = log 10;
    on a negative point it loses -log 0.9. Here b = logit(0.1) = -log 9 and x = 0."""
    X = np.zeros((2, 1))
    b = -np.log(9.0)
    assert_allclose(logistic_nll([1.0], b, X, [1, 0]), np.log(10) - np.log(0.9), rtol=few_ops())


def test_logistic_nll_matches_scipy_and_sklearn():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 4))
    y = rng.integers(0, 2, size=40)
    w, b = rng.normal(size=4), 0.3
    for l2 in (0.0, 2.5):
        assert_allclose(logistic_nll(w, b, X, y, l2), _scipy_logistic_nll(w, b, X, y, l2),
                        rtol=1e-13)
    p = expit(X @ w + b)
    assert_allclose(logistic_nll(w, b, X, y), log_loss(y, p, normalize=False), rtol=1e-12)


def test_logistic_nll_huge_margins_are_finite_and_exact():
    """Scores of +-1e4: a correct point costs log(1 + e^-1e4) = 0 (to rounding), a wrong one
    costs log(1 + e^1e4) = 1e4 (to rounding)."""
    X = np.array([[1.0], [-1.0], [1.0], [-1.0]])
    y = np.array([1, 0, 0, 1])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(all="raise"):
            loss = logistic_nll([1e4], 0.0, X, y)
            gw, gb = logistic_nll_grad([1e4], 0.0, X, y)
    assert loss == 2e4
    # residuals (1 - 1, 0 - 0, 1 - 0, 0 - 1) = (0, 0, 1, -1): gradient x . r = 1 + 1 = 2
    assert_allclose(gw, [2.0]) and gb == 0.0
    assert logistic_nll([1e4], 0.0, X[:2], y[:2]) == 0.0


def test_logistic_nll_keeps_tiny_losses_accurate():
    """-log sigma(40) = log(1 + e^-40) ~ e^-40 = 4.25e-18, not 0 (1 - sigma(40) rounds to 0)."""
    assert_allclose(logistic_nll([40.0], 0.0, [[1.0]], [1]), np.log1p(np.exp(-40.0)),
                    rtol=few_ops())


def test_logistic_nll_grad_matches_finite_differences():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(30, 5))
    y = rng.integers(0, 2, size=30)
    w, b, l2 = rng.normal(size=5), -0.4, 1.7
    gw, gb = logistic_nll_grad(w, b, X, y, l2)
    assert isinstance(gb, float) and gw.shape == (5,)
    assert_allclose(gw, _finite_difference_grad(lambda v: logistic_nll(v, b, X, y, l2), w),
                    rtol=1e-7, atol=1e-8)
    assert_allclose(gb, _finite_difference_grad(lambda v: logistic_nll(w, v[0], X, y, l2), [b])[0],
                    rtol=1e-7, atol=1e-8)


def test_logistic_nll_grad_formula_by_hand():
    """One point x = (2, -1), y = 1 at w = 0, b = 0: residual sigma(0) - 1 = -1/2, so
    grad_w = -1/2 (2, -1) + l2 w = (-1, 1/2) and grad_b = -1/2."""
    gw, gb = logistic_nll_grad([0.0, 0.0], 0.0, [[2.0, -1.0]], [1], l2=3.0)
    assert_allclose(gw, [-1.0, 0.5])
    assert gb == -0.5


@pytest.mark.parametrize("func", [logistic_nll, logistic_nll_grad])
@pytest.mark.parametrize("args, match", [
    (([1.0, 2.0], 0.0, [[1.0, 2.0, 3.0]], [1]), "w has 2 entries but X has 3 columns"),
    (([1.0], 0.0, [[1.0], [2.0]], [1]), "X has 2 rows but y has 1"),
    (([1.0], 0.0, [[1.0]], [2]), "y must be binary"),
    (([1.0], 0.0, [[np.nan]], [1]), "X contains NaN"),
    (([1.0], [0.0, 1.0], [[1.0]], [1]), "b must be a real number"),
    (([[1.0]], 0.0, [[1.0]], [1]), "w must be 1-D"),
])
def test_logistic_loss_bad_inputs(func, args, match):
    with pytest.raises((ValueError, TypeError), match=match):
        func(*args)


def test_logistic_loss_rejects_negative_l2():
    with pytest.raises(ValueError, match="l2"):
        logistic_nll([1.0], 0.0, [[1.0]], [1], l2=-1.0)


# ------------------------------------------------------------------ fitting two classes


@pytest.mark.parametrize("l2", [0.01, 1.0, 30.0])
def test_fit_matches_sklearn_on_breast_cancer(breast_cancer, l2):
    X, y = breast_cancer
    w, b = fit_logistic_regression(X, y, l2=l2)
    sk = _sklearn_fit(X, y, l2)
    assert_allclose(w, sk.coef_[0], rtol=0, atol=1e-6)
    assert abs(b - sk.intercept_[0]) < 1e-6
    assert isinstance(b, float)


def test_fit_stops_on_the_gradient(breast_cancer):
    X, y = breast_cancer
    for tol in (1e-4, 1e-10):
        w, b = fit_logistic_regression(X, y, l2=0.1, tol=tol)
        gw, gb = logistic_nll_grad(w, b, X, y, 0.1)
        assert max(np.abs(gw).max(), abs(gb)) <= tol


def test_fit_matches_sklearn_on_random_data():
    rng = np.random.default_rng(3)
    for N, D in [(20, 1), (200, 5), (1000, 12)]:
        X = rng.normal(size=(N, D))
        y = (X @ rng.normal(size=D) + rng.normal(size=N) > 0.3).astype(int)
        w, b = fit_logistic_regression(X, y, l2=0.5)
        sk = _sklearn_fit(X, y, 0.5)
        assert_allclose(np.append(w, b), np.append(sk.coef_[0], sk.intercept_), atol=1e-7)


def test_fit_agrees_with_sklearn_lbfgs_to_its_precision(breast_cancer):
    """scikit-learn's default solver reaches the same optimum to about 1e-4."""
    X, y = breast_cancer
    w, b = fit_logistic_regression(X, y, l2=1.0)
    sk = _sklearn_fit(X, y, 1.0, solver="lbfgs")
    assert_allclose(w, sk.coef_[0], atol=1e-4)


def test_gradient_descent_reaches_the_same_optimum(iris):
    X, y = iris[0][:, :2], (iris[1] == 1).astype(int)
    w_gd, b_gd = fit_logistic_regression(X, y, l2=1.0, lr=0.01, max_iter=20_000, tol=1e-9)
    sk = _sklearn_fit(X, y, 1.0)
    assert_allclose(w_gd, sk.coef_[0], atol=1e-8)
    assert abs(b_gd - sk.intercept_[0]) < 1e-8


def test_gradient_descent_first_step_by_hand():
    """From w = 0, b = 0 the residuals are 1/2 - y_n = (-1/2, -1/2, 1/2) for x = (1, 2, -1),
    y = (1, 1, 0). So grad_w = -1/2 - 1 - 1/2 = -2 and grad_b = -1/2, and one step with
    lr = 0.1 gives w = 0.2, b = 0.05."""
    X = np.array([[1.0], [2.0], [-1.0]])
    y = np.array([1, 1, 0])
    with pytest.warns(ConvergenceWarning):
        w, b = fit_logistic_regression(X, y, l2=0.0, lr=0.1, max_iter=1)
    assert_allclose(w, [0.2], rtol=few_ops())
    assert_allclose(b, 0.05, rtol=few_ops())


def test_max_iter_zero_returns_the_start():
    with pytest.warns(ConvergenceWarning, match="max_iter=0"):
        w, b = fit_logistic_regression([[0.0], [1.0]], [0, 1], lr=0.1, max_iter=0)
    assert_array_equal(w, [0.0]) and b == 0.0


def test_gradient_descent_warns_when_it_stops_early(breast_cancer):
    X, y = breast_cancer
    with pytest.warns(ConvergenceWarning, match="increase max_iter"):
        fit_logistic_regression(X, y, l2=1.0, lr=1e-4, max_iter=10)


def test_separable_data_with_l2_matches_sklearn():
    """Separable data: without a penalty no minimiser exists; with l2 > 0 one does."""
    X = np.array([[-3.0], [-2.0], [-1.0], [1.0], [2.0], [3.0]])
    y = np.array([0, 0, 0, 1, 1, 1])
    w, b = fit_logistic_regression(X, y, l2=0.1)
    sk = _sklearn_fit(X, y, 0.1)
    assert_allclose(w, sk.coef_[0], atol=1e-8)
    assert abs(b) < 1e-10               # symmetric data: the boundary is at 0


def test_separable_data_without_penalty_grows_the_weights():
    """With l2 = 0 the loss only tends to 0: each tighter tol gives larger weights."""
    X = np.array([[-3.0], [-2.0], [-1.0], [1.0], [2.0], [3.0]])
    y = np.array([0, 0, 0, 1, 1, 1])
    norms = []
    for tol in (1e-2, 1e-4, 1e-6):
        w, b = fit_logistic_regression(X, y, l2=0.0, tol=tol)
        gw, gb = logistic_nll_grad(w, b, X, y)
        assert max(abs(gw[0]), abs(gb)) <= tol
        norms.append(abs(w[0]))
    assert norms[0] < norms[1] < norms[2]
    assert logistic_nll(w, b, X, y) < 1e-5


def test_fit_with_collinear_features_and_no_penalty():
    """A duplicated column makes the Hessian singular; the loss still reaches sklearn's."""
    rng = np.random.default_rng(4)
    x = rng.normal(size=60)
    y = (x + rng.normal(size=60) > 0).astype(int)
    X = np.column_stack([x, x])
    w, b = fit_logistic_regression(X, y, l2=0.0)
    sk = _sklearn_fit(x[:, None], y, 1e-12)
    assert_allclose(w.sum(), sk.coef_[0, 0], rtol=1e-6)
    assert_allclose(logistic_nll(w, b, X, y), logistic_nll(sk.coef_[0], sk.intercept_[0],
                                                           x[:, None], y), rtol=1e-10)


def test_fit_huge_scale_features_no_warning():
    """Features of size 1e3 give initial scores of thousands; nothing overflows."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(100, 2)) * 1e3
    y = (X[:, 0] + 300 * rng.normal(size=100) > 0).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        w, b = fit_logistic_regression(X, y, l2=1.0)
    gw, gb = logistic_nll_grad(w, b, X, y, 1.0)
    assert max(np.abs(gw).max(), abs(gb)) <= 1e-6


@pytest.mark.parametrize("kwargs, exc, match", [
    ({"y": [1, 1, 1]}, ValueError, "both classes"),
    ({"y": [0, 1, 2]}, ValueError, "binary"),
    ({"y": [0, 1]}, ValueError, "X has 3 rows but y has 2"),
    ({"lr": 0.0}, ValueError, "lr"),
    ({"lr": -1.0}, ValueError, "lr"),
    ({"l2": -0.5}, ValueError, "l2"),
    ({"max_iter": 2.5}, TypeError, "max_iter"),
    ({"max_iter": -1}, ValueError, "max_iter"),
    ({"tol": -1e-3}, ValueError, "tol"),
    ({"X": [[1.0], [np.inf], [2.0]]}, ValueError, "X contains NaN or inf"),
    ({"X": [1.0, 2.0, 3.0]}, ValueError, "X must be 2-D"),
])
def test_fit_logistic_bad_inputs(kwargs, exc, match):
    args = {"X": [[0.0], [1.0], [2.0]], "y": [0, 1, 1]}
    args.update(kwargs)
    with pytest.raises(exc, match=match):
        fit_logistic_regression(**args)


# --------------------------------------------------------------------------------- softmax


def test_softmax_hand_values():
    """Equal scores give 1/C each; scores (0, log 2) give (1/3, 2/3); a -inf score gives 0."""
    assert_allclose(softmax([3.0, 3.0, 3.0, 3.0]), np.full(4, 0.25), rtol=few_ops())
    assert_allclose(softmax([0.0, np.log(2.0)]), [1 / 3, 2 / 3], rtol=few_ops())
    assert_allclose(softmax([[0.0, -np.inf, 0.0]]), [[0.5, 0.0, 0.5]])


def test_softmax_matches_scipy():
    rng = np.random.default_rng(6)
    A = rng.normal(scale=30, size=(50, 7))
    assert_allclose(softmax(A), scipy_softmax(A, axis=1), rtol=few_ops(20), atol=1e-300)


def test_softmax_two_classes_is_the_sigmoid():
    """softmax((0, a))_1 = e^a / (1 + e^a) = sigma(a)."""
    a = np.linspace(-50, 50, 101)
    A = np.column_stack([np.zeros_like(a), a])
    assert_allclose(softmax(A)[:, 1], sigmoid(a), rtol=few_ops())


def test_softmax_huge_scores_no_warning():
    A = np.array([[1e4, 0.0, -1e4], [-1e4, -1e4, -1e4], [1e4, 1e4, -1e4]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(all="raise"):
            P = softmax(A)
    assert_allclose(P, [[1, 0, 0], [1 / 3, 1 / 3, 1 / 3], [0.5, 0.5, 0]], rtol=few_ops())


@given(st.lists(st.floats(-1e3, 1e3), min_size=1, max_size=8),
       st.floats(-1e3, 1e3))
@settings(max_examples=150, deadline=None)
def test_softmax_sums_to_one_and_ignores_shifts(scores, shift):
    p = softmax(scores)
    assert abs(p.sum() - 1.0) <= 1e-12
    assert np.all(p >= 0)
    assert_allclose(softmax(np.array(scores) + shift), p, rtol=1e-9, atol=1e-300)


@pytest.mark.parametrize("A, match", [
    ([1.0, np.nan], "NaN"),
    ([1.0, np.inf], r"\+inf"),
    ([[-np.inf, -np.inf]], "only -inf"),
    (np.zeros((2, 2, 2)), "1-D or 2-D"),
    ([], "non-empty"),
])
def test_softmax_bad_inputs(A, match):
    with pytest.raises(ValueError, match=match):
        softmax(A)


# ------------------------------------------------------------------------- softmax log loss


def _random_softmax_problem(seed, N=40, D=4, C=3):
    rng = np.random.default_rng(seed)
    return (rng.normal(size=(D, C)), rng.normal(size=C), rng.normal(size=(N, D)),
            rng.integers(0, C, size=N))


def test_softmax_nll_matches_sklearn_log_loss():
    W, b, X, y = _random_softmax_problem(7)
    P = scipy_softmax(X @ W + b, axis=1)
    expected = log_loss(y, P, normalize=False, labels=[0, 1, 2])
    assert_allclose(softmax_nll(W, b, X, y), expected, rtol=1e-12)
    assert_allclose(softmax_nll(W, b, X, y, l2=3.0), expected + 1.5 * np.sum(W**2), rtol=1e-12)


def test_softmax_nll_at_zero_is_n_log_c():
    W, b, X, y = _random_softmax_problem(8, N=9, C=5)
    # Each term is log 5 within a few roundings; then a sum of 9 positive terms.
    assert_allclose(softmax_nll(np.zeros_like(W), np.zeros(5), X, y), 9 * np.log(5),
                    rtol=few_ops(4) + sum_rtol(9))


def test_softmax_nll_huge_scores_finite():
    """Scores (1e4, 0): the true class 1 costs logsumexp - a_1 = 1e4."""
    X = np.array([[1.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert softmax_nll([[1e4, 0.0]], [0.0, 0.0], X, [1]) == 1e4
        assert softmax_nll([[1e4, 0.0]], [0.0, 0.0], X, [0]) == 0.0


def test_softmax_nll_grad_matches_finite_differences():
    W, b, X, y = _random_softmax_problem(9)
    gW, gb = softmax_nll_grad(W, b, X, y, l2=0.8)
    assert gW.shape == W.shape and gb.shape == b.shape
    assert_allclose(gW, _finite_difference_grad(lambda V: softmax_nll(V, b, X, y, 0.8), W),
                    rtol=1e-7, atol=1e-8)
    assert_allclose(gb, _finite_difference_grad(lambda v: softmax_nll(W, v, X, y, 0.8), b),
                    rtol=1e-7, atol=1e-8)
    assert abs(gb.sum()) < 1e-12       # shifting every b_c by the same amount changes nothing


def test_softmax_two_classes_reduces_to_logistic():
    """With W = (0, w) and b = (0, b) the softmax loss is the binary loss, and the gradient
    of the second column is the binary gradient."""
    rng = np.random.default_rng(10)
    X, y = rng.normal(size=(25, 3)), rng.integers(0, 2, size=25)
    w, b = rng.normal(size=3), 0.7
    W, bb = np.column_stack([np.zeros(3), w]), np.array([0.0, b])
    assert_allclose(softmax_nll(W, bb, X, y), logistic_nll(w, b, X, y), rtol=1e-13)
    gW, gb = softmax_nll_grad(W, bb, X, y)
    gw, gb1 = logistic_nll_grad(w, b, X, y)
    assert_allclose(gW[:, 1], gw, rtol=1e-12)
    assert_allclose(gb[1], gb1, rtol=1e-12)


@pytest.mark.parametrize("args, exc, match", [
    ((np.zeros((2, 3)), np.zeros(3), np.zeros((4, 3)), [0, 1, 2, 0]), ValueError,
     "W has 2 rows but X has 3 columns"),
    ((np.zeros((3, 3)), np.zeros(2), np.zeros((4, 3)), [0, 1, 2, 0]), ValueError,
     "b has 2 entries but W has 3 columns"),
    ((np.zeros((3, 3)), np.zeros(3), np.zeros((4, 3)), [0, 1, 3, 0]), ValueError,
     r"class indices in 0\.\.2"),
    ((np.zeros((3, 3)), np.zeros(3), np.zeros((4, 3)), [0, 1, -1, 0]), ValueError, "y must hold"),
    ((np.zeros((3, 3)), np.zeros(3), np.zeros((4, 3)), [0, 1.5, 1, 0]), ValueError, "integer"),
    ((np.zeros((3, 3)), np.zeros(3), np.zeros((4, 3)), ["a", "b", "a", "b"]), TypeError, "y"),
    ((np.zeros((3, 3)), np.zeros(3), np.zeros((4, 3)), [0, 1, 2]), ValueError,
     "X has 4 rows but y has 3"),
])
def test_softmax_loss_bad_inputs(args, exc, match):
    for func in (softmax_nll, softmax_nll_grad):
        with pytest.raises(exc, match=match):
            func(*args)


# ------------------------------------------------------------------ fitting several classes


def _sklearn_softmax(X, y, l2):
    sk = _sklearn_fit(X, y, l2)
    return sk.coef_.T, sk.intercept_ - sk.intercept_.mean()


@pytest.mark.parametrize("l2", [0.1, 1.0, 10.0])
def test_fit_softmax_matches_sklearn_on_iris(iris, l2):
    X, y = iris
    classes, W, b = fit_softmax_regression(X, y, l2=l2)
    W_sk, b_sk = _sklearn_softmax(X, y, l2)
    assert_array_equal(classes, [0, 1, 2])
    assert_allclose(W, W_sk, atol=1e-6)
    assert_allclose(b, b_sk, atol=1e-6)
    assert abs(b.sum()) < 1e-12


def test_fit_softmax_matches_sklearn_on_wine_with_string_labels(wine):
    X, y = wine
    names = np.array(["barolo", "grignolino", "barbera"])[y]
    classes, W, b = fit_softmax_regression(X, names, l2=0.5)
    assert_array_equal(classes, ["barbera", "barolo", "grignolino"])
    W_sk, b_sk = _sklearn_softmax(X, names, 0.5)   # scikit-learn orders classes the same way
    assert_allclose(W, W_sk, atol=1e-6)
    assert_allclose(b, b_sk, atol=1e-6)


def test_fit_softmax_on_digits_matches_sklearn_accuracy():
    digits = datasets.load_digits()
    X = digits.data / 16.0
    classes, W, b = fit_softmax_regression(X, digits.target, l2=1.0)
    sk = _sklearn_fit(X, digits.target, 1.0)
    assert_allclose(W, sk.coef_.T, atol=1e-5)
    pred = classes[np.argmax(X @ W + b, axis=1)]
    assert np.mean(pred == sk.predict(X)) > 0.999


def test_fit_softmax_two_classes_is_logistic_with_half_the_penalty(breast_cancer):
    """With C = 2 only w = w_1 - w_0 matters; for a fixed difference the penalty
    ||w_0||^2 + ||w_1||^2 is smallest at w_1 = -w_0 = w/2, where it is ||w||^2 / 2. So softmax
    regression with l2 is binary logistic regression with l2 / 2."""
    X, y = breast_cancer
    _, W, b = fit_softmax_regression(X, y, l2=2.0)
    w, b1 = fit_logistic_regression(X, y, l2=1.0)
    assert_allclose(W[:, 1] - W[:, 0], w, atol=1e-7)
    assert_allclose(W[:, 1], -W[:, 0], atol=1e-7)
    assert_allclose(b[1] - b[0], b1, atol=1e-7)


def test_fit_softmax_gradient_descent_reaches_the_optimum(iris):
    X, y = iris
    _, W_gd, b_gd = fit_softmax_regression(X, y, l2=1.0, lr=0.005, max_iter=30_000, tol=1e-9)
    _, W, b = fit_softmax_regression(X, y, l2=1.0)
    assert_allclose(W_gd, W, atol=1e-8)
    assert_allclose(b_gd, b, atol=1e-8)


def test_fit_softmax_stops_on_the_gradient(wine):
    X, y = wine
    for tol in (1e-3, 1e-9):
        _, W, b = fit_softmax_regression(X, y, l2=0.05, tol=tol)
        gW, gb = softmax_nll_grad(W, b, X, y, 0.05)
        assert max(np.abs(gW).max(), np.abs(gb).max()) <= tol


def test_fit_softmax_separable_with_and_without_penalty(iris):
    """Setosa against the rest is separable: with l2 = 0 the weights grow as tol shrinks."""
    X, y = iris
    y2 = np.where(y == 0, "setosa", "other")
    classes, W, b = fit_softmax_regression(X, y2, l2=0.2)
    # scikit-learn fits two classes as binary logistic regression (one weight vector, for
    # classes[1]); by the previous test that is softmax regression with twice the penalty.
    sk = _sklearn_fit(X, y2, 0.1)
    assert_array_equal(classes, sk.classes_)
    assert_allclose(W[:, 1] - W[:, 0], sk.coef_[0], atol=1e-6)
    assert_allclose(b[1] - b[0], sk.intercept_[0], atol=1e-6)
    norms = [np.abs(fit_softmax_regression(X, y2, l2=0.0, tol=t)[1]).max() for t in (1e-2, 1e-5)]
    assert norms[0] < norms[1]


@pytest.mark.parametrize("kwargs, exc, match", [
    ({"y": ["a", "a", "a"]}, ValueError, "at least two classes"),
    ({"y": [0, 1]}, ValueError, "X has 3 rows but y has 2"),
    ({"lr": 0}, ValueError, "lr"),
    ({"l2": np.nan}, ValueError, "l2"),
    ({"X": [[np.nan], [1.0], [2.0]]}, ValueError, "X contains NaN"),
])
def test_fit_softmax_bad_inputs(kwargs, exc, match):
    args = {"X": [[0.0], [1.0], [2.0]], "y": [0, 1, 2]}
    args.update(kwargs)
    with pytest.raises(exc, match=match):
        fit_softmax_regression(**args)


# -------------------------------------------------------------------- helpers and estimators


def test_gradient_descent_on_a_quadratic():
    """L(x) = (x - 3)^2 / 2 has gradient x - 3; with lr = 1/2 the error halves every step:
    from 0 the iterates are 1.5, 2.25, ... and the losses 4.5, 1.125, ..."""
    (x,), losses, converged = gradient_descent(lambda x: (0.5 * (x - 3) ** 2, x - 3), [0.0],
                                               lr=0.5, max_iter=100, tol=1e-6)
    assert converged and isinstance(x, float)
    assert abs(x - 3) <= 1e-6
    assert_allclose(losses[:3], [4.5, 1.125, 0.28125])
    assert len(losses) == 23          # |x - 3| = 3 / 2^k <= 1e-6 first at k = 22


def test_gradient_descent_diverges_with_a_too_large_step():
    """With lr = 2.5 > 2 / L (L = 1) the error is multiplied by -1.5 every step."""
    (x,), losses, converged = gradient_descent(lambda x: (0.5 * (x - 3) ** 2, x - 3), [0.0],
                                               lr=2.5, max_iter=10)
    assert not converged
    assert_allclose(x - 3, -3 * (-1.5) ** 10)


def test_least_squares_classifier_matches_linear_regression():
    X, y, _ = datasets.classes_with_far_points()
    w, b = least_squares_classifier(X, y)
    lin = LinearRegression().fit(X, y)
    assert_allclose(w, lin.coef_, rtol=1e-10)
    assert_allclose(b, lin.intercept_, rtol=1e-10)


def test_far_points_pull_least_squares_but_not_logistic():
    """The seed's claim: far-away points of the correct class move the least-squares boundary
    (misclassifying near points) but not the logistic one."""
    X, y, far = datasets.classes_with_far_points()
    w, b = least_squares_classifier(X, y)
    errors_ls = np.sum(((X @ w + b) > 0.5) != y)
    w_near, b_near = least_squares_classifier(X[~far], y[~far])
    assert np.sum(((X[~far] @ w_near + b_near) > 0.5) != y[~far]) == 0
    assert errors_ls > 0
    w, b = fit_logistic_regression(X, y, l2=1e-3)
    assert np.sum(((X @ w + b) > 0) != y) == 0


def test_estimators_match_sklearn_probabilities(iris):
    X, y = iris
    labels = np.array(["setosa", "versicolor", "virginica"])[y]
    model = SoftmaxRegression(l2=1.0).fit(X, labels)
    sk = _sklearn_fit(X, labels, 1.0)
    assert_allclose(model.predict_proba(X), sk.predict_proba(X), atol=1e-7)
    assert_array_equal(model.predict(X), sk.predict(X))
    assert model.score(X, labels) == pytest.approx(sk.score(X, labels))
    binary = LogisticRegression(l2=1.0).fit(X, labels == "virginica")
    skb = _sklearn_fit(X, labels == "virginica", 1.0)
    assert_allclose(binary.predict_proba(X), skb.predict_proba(X), atol=1e-7)
    assert_array_equal(binary.classes_, [False, True])


def test_estimator_records_gradient_descent_losses(iris):
    X, y = iris[0][:, :2], (iris[1] == 0).astype(int)
    model = LogisticRegression(l2=0.1, lr=0.005, max_iter=500, tol=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(X, y)
    losses = model.loss_history_
    assert losses[0] == pytest.approx(150 * np.log(2))
    assert np.all(np.diff(losses) <= 1e-12)        # a small enough step never increases it
    assert model.n_iter_ == len(losses) - 1


def test_estimator_bad_use():
    with pytest.raises(NotFittedError, match="call fit"):
        LogisticRegression().predict([[1.0]])
    with pytest.raises(ValueError, match="two classes"):
        LogisticRegression().fit([[0.0], [1.0], [2.0]], [0, 1, 2])
    model = LogisticRegression().fit([[0.0], [1.0]], [0, 1])
    with pytest.raises(ValueError, match="columns"):
        model.predict([[0.0, 1.0]])


def test_softmax_of_huge_close_scores_is_accurate():
    """Scores (1e4, 1e4 - 1, -5): the first two differ by 1, so their probabilities are
    sigma(1) and 1 - sigma(1) (the third is e^-10005 = 0). Subtracting the row maximum keeps
    all digits; exp(A - logsumexp(A)) loses about 12 of them here."""
    A = np.array([[1e4, 1e4 - 1.0, -5.0]])
    assert_allclose(softmax(A), [[expit(1.0), expit(-1.0), 0.0]], rtol=few_ops())
    naive = np.exp(A - logsumexp(A, axis=1, keepdims=True))
    assert np.abs(naive - softmax(A)).max() > 1e-14


# ------------------------------------------------------------------------------ calibration


def test_reliability_curve_matches_sklearn():
    from sklearn.calibration import calibration_curve

    from mlcourse_utils.logistic import reliability_curve

    rng = np.random.default_rng(11)
    p = rng.beta(0.5, 0.5, size=500)
    p[:5] = [0.0, 1.0, 0.5, 0.1, 0.9]             # edges go to the lower bin, as in sklearn
    y = (rng.random(500) < p ** 1.5).astype(int)
    mean_p, frac, counts = reliability_curve(y, p, n_bins=10)
    frac_sk, mean_sk = calibration_curve(y, p, n_bins=10, strategy="uniform")
    assert_allclose(mean_p, mean_sk, rtol=1e-12)
    assert_allclose(frac, frac_sk, rtol=1e-12)
    assert counts.sum() == 500


def test_expected_calibration_error_by_hand():
    """Bins of width 1/2: the first holds p = (0.1, 0.3) with labels (0, 1): |0.2 - 0.5| = 0.3;
    the second p = (0.8, 0.8, 0.8, 0.9) with labels (1, 1, 1, 0): |0.825 - 0.75| = 0.075.
    ECE = (2 * 0.3 + 4 * 0.075) / 6 = 0.15."""
    from mlcourse_utils.logistic import expected_calibration_error

    y = [0, 1, 1, 1, 1, 0]
    p = [0.1, 0.3, 0.8, 0.8, 0.8, 0.9]
    assert_allclose(expected_calibration_error(y, p, n_bins=2), 0.15, rtol=1e-12)
    assert expected_calibration_error([0, 1], [0.0, 1.0]) == 0.0


def test_reliability_curve_bad_inputs():
    from mlcourse_utils.logistic import reliability_curve

    with pytest.raises(ValueError, match="p must hold probabilities"):
        reliability_curve([0, 1], [0.5, 1.5])
    with pytest.raises(ValueError, match="p has 1 entries but y has 2"):
        reliability_curve([0, 1], [0.5])
    with pytest.raises(ValueError, match="n_bins"):
        reliability_curve([0, 1], [0.5, 0.5], n_bins=0)


# ------------------------------------------------------- wide data (more features than usual)


def _wide_classes(n, d, seed, n_classes=3):
    """Standardised features of n_classes Gaussian classes that overlap (any D)."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, size=n)
    X = rng.normal(size=(n, d)) + rng.normal(0.0, 1.5 / np.sqrt(d), size=(n_classes, d))[y]
    return _standardise(X), y


# The shapes take every path of the solver choice: D >= 2N fits on the N coordinates of w in
# the span of the samples (then Newton for 60 x 400, L-BFGS finished by Newton steps for
# 250 x 600); 300 x 250 (two classes) runs L-BFGS finished by Newton steps; 300 x 250 with
# three classes (753 parameters) L-BFGS alone.
WIDE_SHAPES = [(60, 400), (250, 600), (300, 250)]


@pytest.mark.filterwarnings("ignore:.*ine [Ss]earch")    # scikit-learn's newton-cg at 1e-12
@pytest.mark.parametrize("n,d", WIDE_SHAPES)
def test_fit_on_wide_data_matches_sklearn(n, d):
    """Against scikit-learn's newton-cg at tol 1e-12 (its mean gradient below 1e-12). The
    loss is l2-strongly convex in w, so ||w - w*|| <= ||grad|| / l2: our gradient is at most
    1e-8 per entry (asserted), well within 1e-6 of the optimum for l2 >= 0.1."""
    X, y = _wide_classes(n, d, seed=n + d)
    yb = (y == 0).astype(int)
    for l2 in (0.1, 1.0):
        w, b = fit_logistic_regression(X, yb, l2=l2)
        sk = _sklearn_fit(X, yb, l2)
        assert_allclose(w, sk.coef_[0], atol=1e-6)
        assert abs(b - sk.intercept_[0]) < 1e-6
        gw, gb = logistic_nll_grad(w, b, X, yb, l2)
        assert max(np.abs(gw).max(), abs(gb)) <= 1e-8
        _, W, bb = fit_softmax_regression(X, y, l2=l2)
        W_sk, b_sk = _sklearn_softmax(X, y, l2)
        assert_allclose(W, W_sk, atol=1e-6)
        assert_allclose(bb, b_sk, atol=1e-6)
        gW, gbb = softmax_nll_grad(W, bb, X, y, l2)
        assert max(np.abs(gW).max(), np.abs(gbb).max()) <= 1e-8


def test_wide_fits_take_the_wide_paths(monkeypatch):
    """The shapes above do reach the fast paths they are meant to test: the fit in the span
    of the samples (two fits per call with D >= 2N) and L-BFGS."""
    import mlcourse_utils.logistic as module

    calls = {"_row_space": 0, "_lbfgs": 0}
    for name in calls:
        original = getattr(module, name)

        def spy(*args, _original=original, _name=name, **kwargs):
            calls[_name] += 1
            return _original(*args, **kwargs)

        monkeypatch.setattr(module, name, spy)
    X, y = _wide_classes(60, 400, seed=1)
    fit_logistic_regression(X, y == 0)
    assert calls == {"_row_space": 1, "_lbfgs": 0}          # then Newton on 60 features
    X, y = _wide_classes(300, 250, seed=2)
    fit_logistic_regression(X, y == 0)
    fit_softmax_regression(X, y)
    assert calls == {"_row_space": 1, "_lbfgs": 2}


def test_fit_on_wide_data_with_repeated_rows_matches_sklearn():
    """Repeated samples make X X^T singular (rank 20 for 40 rows): the span of the samples
    then comes from its eigendecomposition. Half of the repeats carry the other label."""
    X, y = _wide_classes(20, 300, seed=5)
    X, y = np.vstack([X, X]), np.concatenate([y, np.roll(y, 3)])
    yb = (y == 0).astype(int)
    w, b = fit_logistic_regression(X, yb, l2=0.5)
    sk = _sklearn_fit(X, yb, 0.5)
    assert_allclose(w, sk.coef_[0], atol=1e-6)
    assert abs(b - sk.intercept_[0]) < 1e-6
    _, W, bb = fit_softmax_regression(X, y, l2=0.5)
    W_sk, b_sk = _sklearn_softmax(X, y, 0.5)
    assert_allclose(W, W_sk, atol=1e-6)
    assert_allclose(bb, b_sk, atol=1e-6)


# ------------------------------------------------------------------------ large data sets


def test_large_data_path_matches_sklearn():
    """Above 20,000 samples the fits start with L-BFGS, use a Hessian from a subsample of rows
    and accumulate the loss over blocks of rows; the optimum must not change."""
    rng = np.random.default_rng(12)
    X = _standardise(rng.normal(size=(25_000, 4)))
    A = X @ rng.normal(size=(4, 3))
    y = np.argmax(A + rng.gumbel(size=A.shape), axis=1)        # softmax-distributed labels
    w, b = fit_logistic_regression(X, y == 0, l2=1.0)
    sk = _sklearn_fit(X, y == 0, 1.0)
    assert_allclose(np.append(w, b), np.append(sk.coef_[0], sk.intercept_), atol=1e-6)
    gw, gb = logistic_nll_grad(w, b, X, y == 0, 1.0)
    assert max(np.abs(gw).max(), abs(gb)) <= 1e-8
    classes, W, bb = fit_softmax_regression(X, y, l2=1.0)
    W_sk, b_sk = _sklearn_softmax(X, y, 1.0)
    assert_allclose(W, W_sk, atol=1e-6)
    assert_allclose(bb, b_sk, atol=1e-6)


def test_large_nearly_separable_data_matches_sklearn():
    """Well-separated classes above 20,000 samples: most probabilities are near 0 or 1, so a
    Hessian from a subsample of rows misses much of the curvature and the fit switches to the
    exact Hessian. The optimum is scikit-learn's (newton-cholesky, tol 1e-10) all the same."""
    rng = np.random.default_rng(3)
    y = rng.integers(0, 3, size=24_000)
    X = _standardise(rng.normal(size=(24_000, 10)) + 2.5 * rng.normal(size=(3, 10))[y])
    w, b = fit_logistic_regression(X, y == 0, l2=1.0)
    sk = SkLogisticRegression(C=1.0, solver="newton-cholesky", tol=1e-10).fit(X, y == 0)
    assert_allclose(np.append(w, b), np.append(sk.coef_[0], sk.intercept_), atol=1e-6)
    gw, gb = logistic_nll_grad(w, b, X, y == 0, 1.0)
    assert max(np.abs(gw).max(), abs(gb)) <= 1e-8
    _, W, bb = fit_softmax_regression(X, y, l2=1.0)
    sk = SkLogisticRegression(C=1.0, solver="newton-cholesky", tol=1e-10).fit(X, y)
    assert_allclose(W, sk.coef_.T, atol=1e-6)
    assert_allclose(bb, sk.intercept_ - sk.intercept_.mean(), atol=1e-6)
    gW, gbb = softmax_nll_grad(W, bb, X, y, 1.0)
    assert max(np.abs(gW).max(), np.abs(gbb).max()) <= 1e-8


# ---------------------------------------------- evaluating classifiers: confusion, PR, ROC, AUC
# (The functions of the chapter's sections "Evaluating a classifier", "Curved boundaries from
# non-linear features", "Stochastic gradient descent" and the softmax Hessian.)


def test_confusion_matrix_by_hand():
    """y_true (0, 0, 1, 1, 1), y_pred (0, 1, 1, 1, 0): one true negative, one false positive,
    one false negative and two true positives, so [[TN, FP], [FN, TP]] = [[1, 1], [1, 2]]."""
    from mlcourse_utils.logistic import confusion_matrix

    M = confusion_matrix([0, 0, 1, 1, 1], [0, 1, 1, 1, 0])
    assert_array_equal(M, [[1, 1], [1, 2]])
    assert M.dtype == np.int64
    # reordered labels reorder rows and columns; a label nobody has gives a row of zeros
    assert_array_equal(confusion_matrix([0, 0, 1, 1, 1], [0, 1, 1, 1, 0], labels=[1, 0, 7]),
                       [[2, 1, 0], [1, 1, 0], [0, 0, 0]])


@pytest.mark.parametrize("seed", [0, 1])
def test_confusion_matrix_matches_sklearn(seed):
    """Random string labels of four classes (one never predicted), with and without labels."""
    from sklearn.metrics import confusion_matrix as sk_confusion_matrix

    from mlcourse_utils.logistic import confusion_matrix

    rng = np.random.default_rng(seed)
    names = np.array(["ant", "bee", "cat", "dog"])
    y_true = names[rng.integers(0, 4, size=200)]
    y_pred = names[rng.integers(0, 3, size=200)]
    M = confusion_matrix(y_true, y_pred)
    assert_array_equal(M, sk_confusion_matrix(y_true, y_pred))
    assert_array_equal(M.sum(axis=1), [np.sum(y_true == n) for n in names])
    subset = ["dog", "ant", "cat"]
    assert_array_equal(confusion_matrix(y_true, y_pred, labels=subset),
                       sk_confusion_matrix(y_true, y_pred, labels=subset))


@pytest.mark.parametrize("args, kwargs, exc, match", [
    (([0, 1], [0, 1, 1]), {}, ValueError, "y_true has 2 entries but y_pred has 3"),
    (([[0, 1]], [[0, 1]]), {}, ValueError, "y_true must be 1-D"),
    (([], []), {}, ValueError, "y_true is empty"),
    ((["a", "b"], [0, 1]), {}, TypeError, "both hold numbers or both strings"),
    (([0, 1], [0, 1]), {"labels": [0, 0, 1]}, ValueError, "labels must be distinct"),
    (([0, 1], [0, 1]), {"labels": ["a"]}, TypeError, "labels must be of the same kind"),
    (([0.0, np.nan], [0, 1]), {}, ValueError, "y_true contains NaN"),
])
def test_confusion_matrix_bad_inputs(args, kwargs, exc, match):
    from mlcourse_utils.logistic import confusion_matrix

    with pytest.raises(exc, match=match):
        confusion_matrix(*args, **kwargs)


def test_precision_recall_f1_by_hand():
    """TP = 3, FP = 1, FN = 2: precision 3/4, recall 3/5, F1 = 2*3 / (2*3 + 1 + 2) = 2/3,
    which is also the harmonic mean 2 (3/4)(3/5) / (3/4 + 3/5) = (9/10) / (27/20)."""
    from mlcourse_utils.logistic import precision_recall_f1

    y_true = [1, 1, 1, 1, 1, 0, 0, 0]
    y_pred = [1, 1, 1, 0, 0, 1, 0, 0]
    precision, recall, f1 = precision_recall_f1(y_true, y_pred)
    assert_allclose([precision, recall, f1], [3 / 4, 3 / 5, 2 / 3], rtol=few_ops(2))
    assert all(isinstance(v, float) for v in (precision, recall, f1))


@pytest.mark.parametrize("y_true, y_pred", [
    (np.random.default_rng(3).integers(0, 2, 300), np.random.default_rng(4).integers(0, 2, 300)),
    ([0, 0, 1], [0, 0, 0]),          # nothing predicted positive: precision 0/0
    ([0, 0, 0], [0, 1, 0]),          # no positive point: recall 0/0, F1 = 0
    ([0, 0, 0], [0, 0, 0]),          # neither: all three 0/0
    ([1, 0, 0], [0, 1, 0]),          # TP = 0 with both defined: all three 0
    ([True, False, True], [True, True, True]),
])
def test_precision_recall_f1_matches_sklearn(y_true, y_pred):
    """scikit-learn's binary scores with zero_division=nan, also where a ratio is 0/0. Each is
    a ratio of exact integer counts (one rounding), F1 perhaps via the harmonic mean of the
    two (a few more), so they agree to a few operations' rounding."""
    from sklearn.metrics import precision_recall_fscore_support

    from mlcourse_utils.logistic import precision_recall_f1

    expected = precision_recall_fscore_support(y_true, y_pred, average="binary",
                                               zero_division=np.nan)[:3]
    assert_allclose(precision_recall_f1(y_true, y_pred), expected, rtol=few_ops(8))


def test_precision_recall_f1_bad_inputs():
    from mlcourse_utils.logistic import precision_recall_f1

    with pytest.raises(ValueError, match="y_pred must be binary"):
        precision_recall_f1([0, 1], [0, 2])
    with pytest.raises(ValueError, match="y_true has 2 entries but y_pred has 3"):
        precision_recall_f1([0, 1], [0, 1, 1])


def test_roc_curve_by_hand():
    """Labels (0, 0, 1, 1) with scores (0.1, 0.4, 0.35, 0.8). From the top score down: 0.8 is a
    positive (TPR 1/2), 0.4 a negative (FPR 1/2), 0.35 a positive (TPR 1), 0.1 a negative
    (FPR 1). Points (0,0), (0,1/2), (1/2,1/2), (1/2,1), (1,1); thresholds inf then the scores."""
    from mlcourse_utils.logistic import roc_curve

    fpr, tpr, thresholds = roc_curve([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    assert_array_equal(fpr, [0, 0, 0.5, 0.5, 1])
    assert_array_equal(tpr, [0, 0.5, 0.5, 1, 1])
    assert_array_equal(thresholds, [np.inf, 0.8, 0.4, 0.35, 0.1])


def test_roc_curve_ties_give_one_diagonal_step():
    """Scores (3, 2, 2, 1) with labels (1, 1, 0, 0): the tie at 2 holds one positive and one
    negative, so the curve goes from (0, 1/2) straight to (1/2, 1) in one point."""
    from mlcourse_utils.logistic import roc_curve

    fpr, tpr, thresholds = roc_curve([1, 1, 0, 0], [3, 2, 2, 1])
    assert_array_equal(fpr, [0, 0, 0.5, 1])
    assert_array_equal(tpr, [0, 0.5, 1, 1])
    assert_array_equal(thresholds, [np.inf, 3, 2, 1])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_roc_curve_matches_sklearn_with_ties(seed):
    """Scores rounded to one decimal (many ties) against roc_curve(drop_intermediate=False).
    The rates are exact integer counts divided once; the thresholds are the scores themselves."""
    from sklearn.metrics import roc_curve as sk_roc_curve

    from mlcourse_utils.logistic import roc_curve

    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, size=150)
    scores = np.round(rng.normal(size=150) + y, 1)
    ours = roc_curve(y, scores)
    theirs = sk_roc_curve(y, scores, drop_intermediate=False)
    for a, b in zip(ours, theirs, strict=True):
        assert_allclose(a, b, rtol=few_ops(2))


def test_roc_auc_by_hand():
    """The four points above: of the 2 x 2 (positive, negative) pairs, 0.8 beats both
    negatives and 0.35 beats 0.1 but not 0.4, so AUC = 3/4. With ties, scores (1, 2, 2, 3)
    for labels (0, 0, 1, 1): the positive 2 beats 1 and ties 2, the positive 3 beats both,
    AUC = (1 + 1/2 + 1 + 1) / 4 = 7/8. One tied pair alone gives 1/2."""
    from mlcourse_utils.logistic import roc_auc

    # ranks are exact half-integers and their sums exact: only the last division rounds
    assert roc_auc([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8]) == pytest.approx(0.75, rel=few_ops(4))
    assert roc_auc([0, 0, 1, 1], [1, 2, 2, 3]) == pytest.approx(7 / 8, rel=few_ops(4))
    assert roc_auc([0, 1], [5.0, 5.0]) == pytest.approx(0.5, rel=few_ops(4))
    assert roc_auc([0, 1], [0.0, 1.0]) == 1.0
    assert roc_auc([1, 0], [0.0, 1.0]) == 0.0


@pytest.mark.parametrize("seed, decimals", [(0, 0), (1, 1), (2, 3), (3, 12)])
def test_roc_auc_matches_sklearn_pairs_and_the_area(seed, decimals):
    """Against roc_auc_score, against a count over all (positive, negative) pairs (ties one
    half) and against the trapezoid area under our own roc_curve. Each is a sum of at most
    N+ N- non-negative terms (pairs) or N terms (trapezoids, ranks), so two of them differ by
    at most the bound of two summation orders of N+ N- terms."""
    from sklearn.metrics import roc_auc_score

    from mlcourse_utils.logistic import roc_auc, roc_curve

    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, size=120)
    scores = np.round(rng.normal(size=120) + 0.8 * y, decimals)     # decimals 0: heavy ties
    auc = roc_auc(y, scores)
    pos, neg = scores[y == 1], scores[y == 0]
    rtol = sum_rtol(pos.size * neg.size)
    pairs = (np.sum(pos[:, None] > neg[None, :]) + 0.5 * np.sum(pos[:, None] == neg[None, :]))
    assert auc == pytest.approx(pairs / (pos.size * neg.size), rel=rtol)
    assert auc == pytest.approx(roc_auc_score(y, scores), rel=rtol)
    fpr, tpr, _ = roc_curve(y, scores)
    assert auc == pytest.approx(np.sum(np.diff(fpr) * (tpr[1:] + tpr[:-1]) / 2), rel=rtol)


@given(st.lists(st.tuples(st.integers(0, 1), st.integers(-5, 5)), min_size=2, max_size=40))
@settings(max_examples=100, deadline=None)
def test_roc_auc_reversed_scores_and_monotone_transforms(pairs):
    """Reversing the scores turns AUC into 1 - AUC (a won pair becomes a lost one, a tie stays
    a tie); an increasing transformation of the scores changes nothing (only the order counts).
    The rank sums are exact, so each AUC is within one rounding of its true value."""
    from mlcourse_utils.logistic import roc_auc

    y = np.array([p[0] for p in pairs])
    s = np.array([p[1] for p in pairs], dtype=float)
    assume(y.min() < y.max())  # both classes, else there is no AUC
    auc = roc_auc(y, s)
    assert roc_auc(y, -s) == pytest.approx(1 - auc, abs=few_ops(4))
    assert roc_auc(y, np.exp(s) + 3 * s) == pytest.approx(auc, abs=few_ops(4))


@pytest.mark.parametrize("func", ["roc_curve", "roc_auc"])
@pytest.mark.parametrize("args, match", [
    (([1, 1, 1], [0.1, 0.2, 0.3]), "y_true holds only the label 1"),
    (([0, 1], [0.1, np.nan]), "scores contains NaN"),
    (([0, 1], [0.1, 0.2, 0.3]), "y_true has 2 entries but scores has 3"),
    (([0, 2], [0.1, 0.2]), "y_true must be binary"),
])
def test_roc_bad_inputs(func, args, match):
    from mlcourse_utils import logistic

    with pytest.raises(ValueError, match=match):
        getattr(logistic, func)(*args)


# ------------------------------------------------------------------------- polynomial features


def test_polynomial_features_by_hand():
    """(x1, x2) = (2, 3), degree 2: x1, x2, x1^2, x1 x2, x2^2 = 2, 3, 4, 6, 9; degree 3 adds
    x1^3, x1^2 x2, x1 x2^2, x2^3 = 8, 12, 18, 27."""
    from mlcourse_utils.logistic import polynomial_features

    assert_array_equal(polynomial_features([[2.0, 3.0]], 2), [[2, 3, 4, 6, 9]])
    assert_array_equal(polynomial_features([[2.0, 3.0]], 3),
                       [[2, 3, 4, 6, 9, 8, 12, 18, 27]])
    assert_array_equal(polynomial_features([[2.0], [-1.0]], 3), [[2, 4, 8], [-1, 1, -1]])


@pytest.mark.parametrize("D, degree", [(1, 5), (2, 2), (3, 3), (4, 4), (6, 2)])
def test_polynomial_features_matches_sklearn(D, degree):
    """Same columns in the same order as PolynomialFeatures(include_bias=False); their number
    is C(D + degree, degree) - 1 (monomials of degree <= p in D variables, minus the constant).
    Each entry is a product of at most 5 factors, multiplied in perhaps another order: at most
    4 roundings on each side."""
    from math import comb

    from sklearn.preprocessing import PolynomialFeatures

    from mlcourse_utils.logistic import polynomial_features

    X = np.random.default_rng(D).normal(size=(30, D))
    ours = polynomial_features(X, degree)
    assert ours.shape == (30, comb(D + degree, degree) - 1)
    theirs = PolynomialFeatures(degree, include_bias=False).fit_transform(X)
    assert_allclose(ours, theirs, rtol=few_ops(8), atol=0)


@pytest.mark.parametrize("degree", [0, -1, 1.5, True, "2"])
def test_polynomial_features_bad_degree(degree):
    from mlcourse_utils.logistic import polynomial_features

    with pytest.raises(ValueError, match="degree must be a positive integer"):
        polynomial_features([[1.0, 2.0]], degree)


def test_polynomial_features_bad_X():
    from mlcourse_utils.logistic import polynomial_features

    with pytest.raises(ValueError, match="X must be 2-D"):
        polynomial_features([1.0, 2.0], 2)


# ------------------------------------------------------------------ stochastic gradient descent


def _sgd_problem(seed=21, N=2000):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N, 3))
    y = (rng.random(N) < expit(X @ np.array([1.5, -1.0, 0.5]) + 0.3)).astype(int)
    return X, y


def test_sgd_first_full_batch_step_by_hand():
    """X = (1, 2, -1), y = (1, 1, 0), one batch of all three, lr = 1. At w = b = 0 every
    sigma is 1/2, so the mean gradient is ((1/2 - 1) 1 + (1/2 - 1) 2 + (1/2) (-1)) / 3 = -2/3
    for w and (-1/2 - 1/2 + 1/2) / 3 = -1/6 for b (the penalty is 0 at w = 0): the step gives
    w = 2/3, b = 1/6. The loss at the start is 3 log 2."""
    from mlcourse_utils.logistic import sgd_logistic_regression

    w, b, losses = sgd_logistic_regression([[1.0], [2.0], [-1.0]], [1, 1, 0], l2=5.0,
                                           batch_size=3, lr=1.0, n_epochs=1)
    assert_allclose(w, [2 / 3], rtol=few_ops(8))
    assert b == pytest.approx(1 / 6, rel=few_ops(8))
    assert losses[0] == pytest.approx(3 * np.log(2), rel=few_ops(8))
    assert losses[1] == pytest.approx(logistic_nll(w, b, [[1.0], [2.0], [-1.0]], [1, 1, 0], 5.0))


def test_sgd_full_batch_constant_step_is_gradient_descent():
    """With one batch of all N samples and no decay, every step is a gradient step on L / N
    with step lr, i.e. on L with step lr / N: fit_logistic_regression(lr=lr / N) after as many
    steps. Only the order of the sums differs (rounding of sums of N terms)."""
    from mlcourse_utils.logistic import sgd_logistic_regression

    X, y = _sgd_problem(N=300)
    w, b, losses = sgd_logistic_regression(X, y, l2=2.0, batch_size=300, lr=0.8, decay=0.0,
                                           n_epochs=25)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        w_gd, b_gd = fit_logistic_regression(X, y, l2=2.0, lr=0.8 / 300, max_iter=25, tol=0.0)
    assert_allclose(np.append(w, b), np.append(w_gd, b_gd), rtol=1e-10, atol=1e-12)
    assert np.all(np.diff(losses) < 0)     # a step below 2 / L never increases the loss


def test_sgd_converges_to_the_full_batch_optimum():
    """The steps lr / (1 + t / T) satisfy Robbins and Monro's conditions, so the iterates
    converge to the minimiser of the penalised loss (scikit-learn's LogisticRegression(C=1/l2)
    optimum, see test_fit_matches_sklearn_on_random_data), with an error that shrinks like
    1/sqrt(t). On this well-conditioned problem 50 epochs bring it below 1e-2 (observed about
    2e-3) and 200 epochs below a third of that."""
    from mlcourse_utils.logistic import sgd_logistic_regression

    X, y = _sgd_problem()
    sk = _sklearn_fit(X, y, 1.0)
    optimum = np.append(sk.coef_[0], sk.intercept_)
    w50, b50, losses = sgd_logistic_regression(X, y, l2=1.0, n_epochs=50)
    w200, b200, _ = sgd_logistic_regression(X, y, l2=1.0, n_epochs=200)
    err50 = np.abs(np.append(w50, b50) - optimum).max()
    err200 = np.abs(np.append(w200, b200) - optimum).max()
    assert err50 < 1e-2
    assert err200 < err50 / 3
    assert losses[-1] >= logistic_nll(sk.coef_[0], sk.intercept_[0], X, y, 1.0) - 1e-9


def test_sgd_and_sklearn_sgdclassifier_approach_the_same_optimum():
    """SGDClassifier(loss="log_loss", alpha) minimises mean log loss + (alpha/2)||w||^2, which
    is our L / N when alpha = l2 / N. Both stochastic fits land near the same full-batch
    optimum; ours (steps lr / (1 + t/T)) is at least as close as scikit-learn's default
    "optimal" schedule after the same number of epochs."""
    from sklearn.linear_model import SGDClassifier

    from mlcourse_utils.logistic import sgd_logistic_regression

    X, y = _sgd_problem()
    N = X.shape[0]
    w_star, b_star = fit_logistic_regression(X, y, l2=1.0)
    optimum = np.append(w_star, b_star)
    sk = SGDClassifier(loss="log_loss", alpha=1.0 / N, max_iter=200, tol=None,
                       random_state=0).fit(X, y)
    w, b, _ = sgd_logistic_regression(X, y, l2=1.0, n_epochs=200)
    err_sk = np.abs(np.append(sk.coef_[0], sk.intercept_) - optimum).max()
    err_ours = np.abs(np.append(w, b) - optimum).max()
    assert err_sk < 0.05
    assert err_ours <= err_sk


def test_sgd_constant_step_stalls_decreasing_step_converges():
    """With a constant step the gradient noise keeps the iterates in a region around the
    minimiser; with the decreasing step they keep approaching it."""
    from mlcourse_utils.logistic import sgd_logistic_regression

    X, y = _sgd_problem()
    w_star, b_star = fit_logistic_regression(X, y, l2=1.0)
    loss_star = logistic_nll(w_star, b_star, X, y, 1.0)
    _, _, constant = sgd_logistic_regression(X, y, l2=1.0, lr=2.0, decay=0.0, n_epochs=100)
    _, _, decreasing = sgd_logistic_regression(X, y, l2=1.0, lr=2.0, decay=1.0, n_epochs=100)
    assert np.min(constant[50:] - loss_star) > 10 * (decreasing[-1] - loss_star)


def test_sgd_is_reproducible_and_accepts_a_generator():
    from mlcourse_utils.logistic import sgd_logistic_regression

    X, y = _sgd_problem(N=200)
    first = sgd_logistic_regression(X, y, n_epochs=3, seed=7)
    again = sgd_logistic_regression(X, y, n_epochs=3, seed=np.random.default_rng(7))
    for a, b in zip(first, again, strict=True):
        assert_array_equal(a, b)
    other = sgd_logistic_regression(X, y, n_epochs=3, seed=8)
    assert not np.array_equal(first[0], other[0])


@pytest.mark.parametrize("kwargs, exc, match", [
    ({"batch_size": 0}, ValueError, "batch_size must be a positive integer"),
    ({"n_epochs": 2.5}, ValueError, "n_epochs must be a positive integer"),
    ({"lr": 0.0}, ValueError, "lr must be > 0"),
    ({"decay": -1.0}, ValueError, "decay must be >= 0"),
    ({"l2": -1.0}, ValueError, "l2 must be >= 0"),
    ({"seed": -3}, ValueError, "seed must be a non-negative integer"),
    ({"y": [0, 1, 2]}, ValueError, "y must be binary"),
    ({"y": [0, 1]}, ValueError, "X has 3 rows but y has 2"),
])
def test_sgd_bad_inputs(kwargs, exc, match):
    from mlcourse_utils.logistic import sgd_logistic_regression

    args = {"X": [[0.0], [1.0], [2.0]], "y": [0, 1, 1]}
    args.update(kwargs)
    with pytest.raises(exc, match=match):
        sgd_logistic_regression(**args)


# --------------------------------------------------------------------------- softmax Hessian


def _softmax_flat_grad(theta, X, y, C, l2):
    """softmax_nll_grad in the Hessian's order: class by class, (w_c, b_c)."""
    D = X.shape[1]
    T = theta.reshape(C, D + 1)
    gW, gb = softmax_nll_grad(T[:, :D].T, T[:, D], X, y, l2)
    return np.column_stack([gW.T, gb]).ravel()


@pytest.mark.parametrize("l2", [0.0, 0.7])
def test_softmax_hessian_matches_finite_differences(l2):
    """Central differences of the exact gradient, (g(theta + h e) - g(theta - h e)) / 2h,
    have truncation error h^2/6 |g'''| (about 1e-10 here with h = 1e-5 and N = 30 samples
    whose third derivatives are O(1)) plus rounding of about eps |g| / h (about 1e-10), so
    they match the Hessian to 1e-7 absolute on entries of size up to 10."""
    from mlcourse_utils.logistic import softmax_nll_hessian

    rng = np.random.default_rng(5)
    N, D, C = 30, 3, 4
    X, W, b = rng.normal(size=(N, D)), rng.normal(size=(D, C)), rng.normal(size=C)
    y = rng.integers(0, C, size=N)
    H = softmax_nll_hessian(W, b, X, l2=l2)
    theta = np.column_stack([W.T, b]).ravel()
    h = 1e-5
    H_fd = np.column_stack([
        (_softmax_flat_grad(theta + h * e, X, y, C, l2)
         - _softmax_flat_grad(theta - h * e, X, y, C, l2)) / (2 * h)
        for e in np.eye(theta.size)])
    assert H.shape == ((D + 1) * C, (D + 1) * C)
    assert_allclose(H, H_fd, atol=1e-7)
    assert_array_equal(H, H.T)


def test_softmax_hessian_one_sample_by_hand():
    """One sample x = 1 with W = 0, b = 0 and C = 2: p = (1/2, 1/2), diag(p) - p p^T =
    [[1/4, -1/4], [-1/4, 1/4]] and x~ x~^T = [[1, 1], [1, 1]], so H is their Kronecker
    product: +-1/4 in a checkerboard of 2 x 2 blocks. l2 = 2 adds 2 to the two weight
    entries of the diagonal (positions 0 and 2), not to the biases."""
    from mlcourse_utils.logistic import softmax_nll_hessian

    q = np.array([[1, 1, -1, -1], [1, 1, -1, -1], [-1, -1, 1, 1], [-1, -1, 1, 1]]) / 4
    assert_allclose(softmax_nll_hessian(np.zeros((1, 2)), np.zeros(2), [[1.0]]), q,
                    rtol=few_ops(4))
    assert_allclose(softmax_nll_hessian(np.zeros((1, 2)), np.zeros(2), [[1.0]], l2=2.0),
                    q + np.diag([2.0, 0.0, 2.0, 0.0]), rtol=few_ops(4))


def test_softmax_hessian_is_psd_with_the_shift_directions_in_its_null_space():
    """Per sample, v^T (diag(p) - p p^T) v = sum_c p_c v_c^2 - (sum_c p_c v_c)^2 >= 0 (a
    variance), so every eigenvalue is >= 0 up to rounding (eps times the largest, times the
    matrix size). (diag(p) - p p^T) 1 = p - p = 0, so without a penalty H (1_C kron v) = 0
    for every v: adding the same (w, b) to every class changes nothing. The penalty makes H
    positive definite on the weights but leaves the common bias shift (1_C kron e_b)."""
    from mlcourse_utils.logistic import softmax_nll_hessian

    rng = np.random.default_rng(6)
    N, D, C = 50, 4, 3
    X, W, b = rng.normal(size=(N, D)), rng.normal(size=(D, C)), rng.normal(size=C)
    H = softmax_nll_hessian(W, b, X)
    eig = np.linalg.eigvalsh(H)
    # The computed H differs from the exact one by sums of N products, each entry by at most
    # sum_rtol(N) times sum_n |x~_nd x~_nd'| (weights p <= 1) for each of its two parts, and
    # eigvalsh is backward stable: so no eigenvalue is below minus the norm of that error.
    Xt = np.abs(np.column_stack([X, np.ones(N)]))
    rounding = 2 * sum_rtol(N) * C * (Xt.T @ Xt).sum(axis=1).max() + 10 * H.shape[0] * U * eig.max()
    assert eig.min() >= -rounding
    for v in np.eye(D + 1):
        assert_allclose(H @ np.tile(v, C), 0.0, atol=1e-12 * np.abs(H).max())
    assert np.sum(eig < 1e-10 * eig.max()) == D + 1          # exactly those directions
    H_pen = softmax_nll_hessian(W, b, X, l2=1.0)
    eig_pen = np.linalg.eigvalsh(H_pen)
    assert np.sum(eig_pen < 1e-10 * eig_pen.max()) == 1
    bias_shift = np.tile(np.append(np.zeros(D), 1.0), C)
    assert_allclose(H_pen @ bias_shift, 0.0, atol=1e-12 * np.abs(H_pen).max())


def test_softmax_hessian_two_classes_is_the_logistic_hessian():
    """For C = 2, diag(p) - p p^T = p_0 p_1 [[1, -1], [-1, 1]], so the block of class 1 is
    sum_n sigma(a_n)(1 - sigma(a_n)) x~_n x~_n^T with a = (w_1 - w_0)^T x + b_1 - b_0: the
    Hessian of the binary log loss, here taken from central differences of logistic_nll_grad
    (accurate to about 1e-8 with h = 1e-5)."""
    from mlcourse_utils.logistic import softmax_nll_hessian

    rng = np.random.default_rng(8)
    X, W, b = rng.normal(size=(40, 2)), rng.normal(size=(2, 2)), rng.normal(size=2)
    y = rng.integers(0, 2, size=40)
    H = softmax_nll_hessian(W, b, X)
    theta = np.append(W[:, 1] - W[:, 0], b[1] - b[0])

    def grad(t):
        gw, gb = logistic_nll_grad(t[:2], t[2], X, y)
        return np.append(gw, gb)

    h = 1e-5
    H_bin = np.column_stack([(grad(theta + h * e) - grad(theta - h * e)) / (2 * h)
                             for e in np.eye(3)])
    assert_allclose(H[3:, 3:], H_bin, atol=1e-7)
    assert_allclose(H[:3, 3:], -H_bin, atol=1e-7)
    assert_allclose(H[:3, :3], H_bin, atol=1e-7)


@pytest.mark.parametrize("args, match", [
    ((np.zeros((3, 2)), np.zeros(2), np.zeros((4, 2))), "W has 3 rows but X has 2 columns"),
    ((np.zeros((2, 2)), np.zeros(3), np.zeros((4, 2))), "b has 3 entries but W has 2 columns"),
    ((np.zeros((2, 2)), np.zeros(2), np.full((4, 2), np.nan)), "X contains NaN"),
    ((np.zeros(2), np.zeros(2), np.zeros((4, 2))), "W must be 2-D"),
])
def test_softmax_hessian_bad_inputs(args, match):
    from mlcourse_utils.logistic import softmax_nll_hessian

    with pytest.raises(ValueError, match=match):
        softmax_nll_hessian(*args)
