"""The seed data sets have the sizes and counts the lectures give; loaders match scikit-learn."""

import numpy as np
import pytest

from mlcourse_utils import datasets


def test_coin_sequence_has_eight_heads_in_twelve():
    """Seed lecture 000: HTHHHTHHTHTH, 12 flips, 8 heads, 4 tails."""
    s = datasets.coin_sequence()
    assert s == "HTHHHTHHTHTH" == datasets.COIN_SEQUENCE
    assert (len(s), s.count("H"), s.count("T")) == (12, 8, 4)
    flips = datasets.coin_flips()
    assert flips.shape == (12,)
    assert flips.sum() == 8
    assert "".join("H" if f else "T" for f in flips) == s


def test_toronto_temperatures_are_the_lecture_values():
    """Seed lecture 001: five (high, low) pairs in °C."""
    X = datasets.toronto_march_temperatures()
    assert X.shape == (5, 2)
    expected = [(-2.5, -7.5), (-9.9, -14.9), (-12.1, -17.5), (-8.9, -13.9), (-6.0, -11.1)]
    np.testing.assert_array_equal(X, np.array(expected))
    assert np.all(X[:, 0] > X[:, 1])  # every high is above its low


def test_spam_ham_table_counts():
    """Seed lecture 000: 11 e-mails, 6 ham and 5 spam; P(pill|ham)=2/6, P(pill|spam)=3/5,
    P(meeting|ham)=5/6, P(meeting|spam)=1/5 (so the unnormalised scores 6/11·2/6·5/6 = 5/33
    for ham and 5/11·3/5·1/5 = 3/55 for spam)."""
    X, y, names = datasets.spam_ham_table()
    assert X.shape == (11, 2) and y.shape == (11,)
    assert names == ["pill", "meeting"]
    assert set(np.unique(X)) <= {0, 1}
    ham, spam = y == "ham", y == "spam"
    assert (ham.sum(), spam.sum()) == (6, 5)
    pill, meeting = X[:, 0], X[:, 1]
    assert (pill[ham].sum(), pill[spam].sum()) == (2, 3)
    assert (meeting[ham].sum(), meeting[spam].sum()) == (5, 1)
    score_ham = 6 / 11 * pill[ham].mean() * meeting[ham].mean()
    score_spam = 5 / 11 * pill[spam].mean() * meeting[spam].mean()
    assert score_ham == pytest.approx(5 / 33)
    assert score_spam == pytest.approx(3 / 55)


def test_lobster_sizes_counts_and_determinism():
    """Seed lecture 003: 20 lobsters died (0) and 30 survived (1); fixed seed, same data."""
    x, y = datasets.lobster_sizes()
    assert x.shape == (50,) and y.shape == (50,)
    assert (np.sum(y == 0), np.sum(y == 1)) == (20, 30)
    assert np.all(np.isfinite(x)) and np.all(x > 0)
    x2, y2 = datasets.lobster_sizes()
    np.testing.assert_array_equal(x, x2)
    np.testing.assert_array_equal(y, y2)
    assert x[y == 1].mean() > x[y == 0].mean()  # survivors are larger


def test_line_with_outliers_shape_and_outliers():
    """n points; the last n_outliers lie far below the line y = 1 + 2x, the rest close to it."""
    x, y = datasets.line_with_outliers(n=30, n_outliers=4, seed=0)
    assert x.shape == (30,) and y.shape == (30,)
    residual = y - (1 + 2 * x)
    assert np.all(residual[-4:] < -5)
    assert np.all(np.abs(residual[:-4]) < 2.5)


@pytest.mark.parametrize(
    ("loader", "n", "d", "n_classes"),
    [
        (datasets.load_iris, 150, 4, 3),
        (datasets.load_wine, 178, 13, 3),
        (datasets.load_breast_cancer, 569, 30, 2),
    ],
)
def test_classification_loaders_have_documented_shapes(loader, n, d, n_classes):
    """scikit-learn documents these sizes for its bundled data sets."""
    bunch = loader()
    assert bunch.data.shape == (n, d)
    assert bunch.target.shape == (n,)
    assert len(np.unique(bunch.target)) == n_classes


def test_diabetes_loader_shape():
    """scikit-learn's diabetes: 442 patients, 10 features, a real-valued target."""
    bunch = datasets.load_diabetes()
    assert bunch.data.shape == (442, 10) and bunch.target.shape == (442,)


def test_digits_binary_is_binary_with_ten_classes():
    """scikit-learn's digits: 1797 images of 8×8 = 64 pixels, 10 digits; here 0/1 pixels."""
    X, y = datasets.load_digits_binary()
    assert X.shape == (1797, 64) and y.shape == (1797,)
    assert set(np.unique(X)) == {0, 1}
    np.testing.assert_array_equal(np.unique(y), np.arange(10))


# --- Logistic regression ---


@pytest.mark.parametrize("n_features", [1, 2])
def test_classes_with_far_points_layout(n_features):
    """Near classes on either side of x_1 = 0, far points (class 1) at large x_1."""
    X, y, far = datasets.classes_with_far_points(n_features=n_features, n_per_class=30, n_far=7)
    assert X.shape == (67, n_features) and y.shape == (67,) and far.shape == (67,)
    assert far.sum() == 7 and np.all(far[-7:]) and np.all(y[far] == 1)
    assert np.sum(y == 0) == 30
    assert np.mean(X[y == 0, 0]) < -1 < 1 < np.mean(X[(y == 1) & ~far, 0])
    assert np.min(X[far, 0]) > 5 and np.all(np.isfinite(X))
    X2, _, _ = datasets.classes_with_far_points(n_features=n_features, n_per_class=30, n_far=7)
    np.testing.assert_array_equal(X, X2)
    with pytest.raises(ValueError, match="n_features"):
        datasets.classes_with_far_points(n_features=3)


def test_digits_loader_matches_sklearn():
    from sklearn.datasets import load_digits

    bunch = datasets.load_digits()
    assert bunch.data.shape == (1797, 64)
    assert set(np.unique(bunch.target)) == set(range(10))
    np.testing.assert_array_equal(bunch.data, load_digits().data)


# --- Information theory and MDL ---


def test_zen_of_python_is_decoded_and_silent(capsys):
    """The Zen of Python as ``import this`` prints it, without printing anything here."""
    text = datasets.zen_of_python()
    assert capsys.readouterr().out == ""
    assert text.startswith("The Zen of Python, by Tim Peters\n\n")
    assert "Beautiful is better than ugly." in text
    assert "Namespaces are one honking great idea -- let's do more of those!" in text
    assert text.count("\n") == 20  # a title, a blank line and 19 aphorisms


# --- Ridge and LASSO ---


def test_regression_challenge_is_a_noisy_parabola():
    """x in [-2, 3]; y = 2 x^2 + 1 plus unit-variance noise, so least squares on (x, x^2)
    recovers coefficients near (0, 2) and intercept near 1; the same seed gives the same data."""
    x, y = datasets.regression_challenge()
    assert x.shape == y.shape == (40,)
    assert x.min() >= -2.0 and x.max() <= 3.0
    design = np.column_stack([np.ones_like(x), x, x**2])
    coef, *_ = np.linalg.lstsq(design, y, rcond=None)
    assert np.allclose(coef, [1.0, 0.0, 2.0], atol=0.6)
    residual_var = np.mean((y - design @ coef) ** 2)
    assert 0.4 < residual_var < 2.0
    x2, y2 = datasets.regression_challenge()
    np.testing.assert_array_equal(x, x2)
    np.testing.assert_array_equal(y, y2)
    assert datasets.regression_challenge(n=7, seed=1)[0].shape == (7,)
