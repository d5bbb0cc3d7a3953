"""The course's data sets: the chapters' worked examples, and loaders for real data.

Everything here is either written out in the book or shipped with an installed package
(scikit-learn's bundled data sets). Nothing is downloaded at run time. Where an example is
known only by its counts (the lobsters) or its shape (the regression challenge), the values are
synthesised with a fixed random seed, so every build of the book shows the same numbers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from ._validation import FloatArray

if TYPE_CHECKING:  # scikit-learn is imported only when a loader runs
    from sklearn.utils import Bunch

__all__ = [
    "COIN_SEQUENCE",
    "coin_sequence",
    "coin_flips",
    "toronto_march_temperatures",
    "spam_ham_table",
    "lobster_sizes",
    "line_with_outliers",
    "load_iris",
    "load_wine",
    "load_breast_cancer",
    "load_diabetes",
    "load_digits_binary",
    # Logistic regression
    "classes_with_far_points",
    "load_digits",
]

#: The twelve flips of the maximum-likelihood chapter: 8 heads and 4 tails.
COIN_SEQUENCE = "HTHHHTHHTHTH"


def coin_sequence() -> str:
    """The twelve coin flips of the worked example, as 'H'/'T' (chapter "Maximum likelihood")."""
    return COIN_SEQUENCE


def coin_flips() -> NDArray[np.int64]:
    """The same flips as a 0/1 integer array, 1 for heads."""
    return np.array([1 if c == "H" else 0 for c in COIN_SEQUENCE], dtype=np.int64)


def toronto_march_temperatures() -> FloatArray:
    """Five March days in Toronto: columns are the daily high and low in °C, shape (5, 2)."""
    return np.array(
        [[-2.5, -7.5], [-9.9, -14.9], [-12.1, -17.5], [-8.9, -13.9], [-6.0, -11.1]]
    )


def spam_ham_table() -> tuple[NDArray[np.int64], NDArray[np.str_], list[str]]:
    """The worked example's eleven e-mails with two binary word features ("pill", "meeting").

    Returns
    -------
    X : ndarray of int, shape (11, 2)
        1 when the word occurs in the e-mail.
    y : ndarray of str, shape (11,)
        'ham' (6 e-mails) or 'spam' (5 e-mails).
    feature_names : list of str
    """
    rows = [
        (1, 1, "spam"), (1, 0, "spam"), (1, 1, "ham"), (1, 1, "ham"), (0, 1, "ham"),
        (0, 1, "ham"), (0, 1, "ham"), (0, 0, "spam"), (1, 0, "spam"), (0, 0, "spam"),
        (0, 0, "ham"),
    ]
    X = np.array([r[:2] for r in rows], dtype=np.int64)
    y = np.array([r[2] for r in rows])
    return X, y, ["pill", "meeting"]


def lobster_sizes(seed: int = 311) -> tuple[FloatArray, NDArray[np.int64]]:
    """One-feature lobster data: 20 lobsters that died (label 0) and 30 that survived (label 1).

    Only the counts are given, so the sizes (carapace length in mm) are drawn with a
    fixed seed from N(71, 5²) for those that died and N(79, 5²) for those that survived.

    Returns
    -------
    x : ndarray, shape (50,)
    y : ndarray of int, shape (50,)
    """
    rng = np.random.default_rng(seed)
    died = rng.normal(71.0, 5.0, size=20)
    survived = rng.normal(79.0, 5.0, size=30)
    x = np.round(np.concatenate([died, survived]), 1)
    y = np.concatenate([np.zeros(20, dtype=np.int64), np.ones(30, dtype=np.int64)])
    return x, y


def line_with_outliers(
    n: int = 30, n_outliers: int = 4, seed: int = 0
) -> tuple[FloatArray, FloatArray]:
    """Points near the line y = 1 + 2x with Gaussian noise, plus a few gross outliers.

    Used to compare least squares (Gaussian noise) with least absolute deviations (Laplace
    noise). Returns ``(x, y)``, both of shape (n,); the last ``n_outliers`` points are the
    outliers.
    """
    rng = np.random.default_rng(seed)
    x = np.sort(rng.uniform(0.0, 5.0, size=n))
    y = 1.0 + 2.0 * x + rng.normal(0.0, 0.5, size=n)
    idx = np.argsort(x)[-n_outliers:]
    y[idx] -= rng.uniform(8.0, 12.0, size=n_outliers)
    order = np.r_[np.setdiff1d(np.arange(n), idx), idx]
    return x[order], y[order]


def _sklearn_loader(name):
    from sklearn import datasets as skd

    return getattr(skd, name)()


def load_iris() -> Bunch:
    """Iris (150 flowers, 4 features, 3 species), shipped with scikit-learn. Returns a Bunch."""
    return _sklearn_loader("load_iris")


def load_wine() -> Bunch:
    """Wine (178 wines, 13 features, 3 cultivars), shipped with scikit-learn. Returns a Bunch."""
    return _sklearn_loader("load_wine")


def load_breast_cancer() -> Bunch:
    """Breast cancer Wisconsin (569 samples, 30 features, 2 classes), shipped with scikit-learn."""
    return _sklearn_loader("load_breast_cancer")


def load_diabetes() -> Bunch:
    """Diabetes regression data (442 patients, 10 features), shipped with scikit-learn."""
    return _sklearn_loader("load_diabetes")


def load_digits_binary(threshold: float = 8) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """scikit-learn's 8×8 handwritten digits with pixels binarised (intensity > threshold).

    Returns
    -------
    X : ndarray of int, shape (1797, 64)
        0/1 pixels.
    y : ndarray of int, shape (1797,)
        The digit, 0–9.
    """
    bunch = _sklearn_loader("load_digits")
    return (bunch.data > threshold).astype(np.int64), bunch.target.astype(np.int64)


# --- Logistic regression ---


def classes_with_far_points(
    n_features: int = 2, n_per_class: int = 40, n_far: int = 12, seed: int = 0
) -> tuple[FloatArray, NDArray[np.int64], NDArray[np.bool_]]:
    """Two well-separated classes plus a group of class-1 points far from the boundary.

    The classes are separated by the hyperplane x_1 = 0: class 0 is drawn around x_1 = -1.5
    and class 1 around x_1 = +1.5 (standard deviation 0.6 in x_1; in two dimensions the
    second feature has mean 0 and standard deviation 1.5). The ``n_far`` extra class-1 points
    (standard deviation 0.8) lie far away on the correct side: around x_1 = 15 in one
    dimension, around (8, 5) in two. Every sensible boundary classifies them correctly, yet
    they drag a least-squares fit of the 0/1 labels towards them (chapter "Logistic
    regression", section "Why not least squares?").

    Parameters
    ----------
    n_features : {1, 2}
    n_per_class, n_far : int
    seed : int

    Returns
    -------
    X : ndarray, shape (2 n_per_class + n_far, n_features)
    y : ndarray of int, shape (2 n_per_class + n_far,)
    far : ndarray of bool
        True for the far-away points (the last ``n_far`` rows).
    """
    if n_features not in (1, 2):
        raise ValueError(f"n_features must be 1 or 2, got {n_features!r}")
    rng = np.random.default_rng(seed)
    centre, spread = np.array([1.5, 0.0]), np.array([0.6, 1.5])
    far_centre = np.array([15.0]) if n_features == 1 else np.array([8.0, 5.0])
    X0 = rng.normal(-centre[:n_features], spread[:n_features], size=(n_per_class, n_features))
    X1 = rng.normal(centre[:n_features], spread[:n_features], size=(n_per_class, n_features))
    Xf = rng.normal(far_centre, 0.8, size=(n_far, n_features))
    X = np.vstack([X0, X1, Xf])
    y = np.concatenate([np.zeros(n_per_class, dtype=np.int64),
                        np.ones(n_per_class + n_far, dtype=np.int64)])
    far = np.zeros(len(y), dtype=bool)
    far[2 * n_per_class:] = True
    return X, y, far


def load_digits() -> Bunch:
    """scikit-learn's 8×8 handwritten digits (1797 images, 64 pixel intensities 0–16, 10
    classes), shipped with scikit-learn. Returns a Bunch (``data``, ``target``, ``images``)."""
    return _sklearn_loader("load_digits")


# --- Information theory and MDL ---

__all__ += ["zen_of_python"]


def zen_of_python() -> str:
    """The Zen of Python (Tim Peters), the text that the standard library's ``this`` module ships.

    ``this`` stores the text ROT13-encoded in ``this.s`` and prints it when first imported;
    the import happens here with the output captured, so nothing is printed. Returns the
    decoded text: a title line, a blank line and 19 aphorisms.
    """
    import codecs
    import contextlib
    import importlib
    import io

    with contextlib.redirect_stdout(io.StringIO()):
        this = importlib.import_module("this")
    return codecs.decode(this.s, "rot13")


# --- Ridge and LASSO ---

__all__ += ["regression_challenge"]


def regression_challenge(n: int = 40, seed: int = 12) -> tuple[FloatArray, FloatArray]:
    """The "regression challenge": points around the parabola y = 2 x^2 + 1.

    The data are known only from a figure ("without noise y = alpha x^2 + beta"), so they
    are synthesised with a fixed seed: x uniform on [-2, 3], y = 2 x^2 + 1 + eps with
    eps ~ N(0, 1). A straight line fits them badly; adding x^2 as a feature makes the problem
    a linear regression again (chapter "Ridge and LASSO").

    Returns
    -------
    x, y : ndarray, shape (n,)
    """
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2.0, 3.0, size=n)
    return x, 2.0 * x**2 + 1.0 + rng.normal(0.0, 1.0, size=n)
