"""One plotting style for every figure of the book.

Figures are made by calling these helpers from chapter code cells. Importing this module has
no global side effects: :func:`new_figure` styles the figure it creates, :func:`style` is a
context manager for code that draws with plain matplotlib, and :func:`use_style` applies the
style to a whole session only when a chapter asks for it.
"""

from __future__ import annotations

import contextlib

import matplotlib
import matplotlib.pyplot as plt
import numpy as np

__all__ = ["PALETTE", "RC", "style", "use_style", "new_figure", "class_colors"]

#: Colour-blind-safe palette (Okabe–Ito), used in this order for classes and curves.
PALETTE = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000"]

RC = {
    "figure.dpi": 110,
    "savefig.dpi": 110,
    "font.size": 10,
    "axes.titlesize": 11,
    "axes.labelsize": 10,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.25,
    "legend.frameon": False,
    "axes.prop_cycle": matplotlib.cycler(color=PALETTE),
    "image.cmap": "viridis",
}


@contextlib.contextmanager
def style():
    """Context manager applying the course style to figures created inside it."""
    with matplotlib.rc_context(RC):
        yield


def use_style():
    """Apply the course style to every later figure of this session (call it once per chapter).

    This is the one deliberate global change: it updates ``matplotlib.rcParams`` with
    :data:`RC`. Importing the module changes nothing.
    """
    matplotlib.rcParams.update(RC)


def new_figure(nrows=1, ncols=1, width=6.4, height=None, **kwargs):
    """``plt.subplots`` with the course style; returns ``(fig, axes)``.

    ``height`` defaults to a 4:3 panel per row. The figure is created outside any
    ``rc_context`` (leaving one while Jupyter's inline backend is active stops the figure
    from being displayed); the style is applied to the new figure and its axes directly.
    """
    if height is None:
        height = 0.75 * width / ncols * nrows
    kwargs.setdefault("layout", "constrained")
    fig, axes = plt.subplots(nrows, ncols, figsize=(width, height), dpi=RC["figure.dpi"],
                             **kwargs)
    for ax in np.atleast_1d(axes).ravel():
        ax.spines["top"].set_visible(False)
        ax.spines["right"].set_visible(False)
        ax.grid(True, alpha=RC["grid.alpha"])
        ax.set_axisbelow(True)
        ax.set_prop_cycle(RC["axes.prop_cycle"])
        ax.tick_params(labelsize=RC["font.size"] - 1)
        ax.xaxis.label.set_size(RC["axes.labelsize"])
        ax.yaxis.label.set_size(RC["axes.labelsize"])
        ax.title.set_size(RC["axes.titlesize"])
    return fig, axes


def class_colors(n):
    """The first ``n`` palette colours (cycled when n exceeds the palette)."""
    return [PALETTE[i % len(PALETTE)] for i in range(n)]


# --- Maximum likelihood ---


def gaussian_ellipse(mean, cov, n_std=1.0, n_points=200):
    """Points on the ellipse {x : (x - mean)^T cov^{-1} (x - mean) = n_std^2} of a 2-D Gaussian.

    Uses the eigendecomposition cov = V diag(lam) V^T: the ellipse is mean + n_std V
    diag(sqrt(lam)) (cos t, sin t). Returns an array of shape (n_points, 2).
    """
    mean = np.asarray(mean, dtype=float).reshape(2)
    cov = np.asarray(cov, dtype=float).reshape(2, 2)
    lam, vecs = np.linalg.eigh(0.5 * (cov + cov.T))
    t = np.linspace(0.0, 2.0 * np.pi, n_points)
    circle = np.stack([np.cos(t), np.sin(t)], axis=1)
    return mean + n_std * (circle * np.sqrt(np.clip(lam, 0.0, None))) @ vecs.T


def plot_gaussian_ellipses(ax, mean, cov, n_stds=(1.0, 2.0), color=None, label=None, **kwargs):
    """Draw the 1-, 2-, ... sigma ellipses of a 2-D Gaussian on ``ax`` (not its mean).

    The k-sigma ellipse is the set of points at Mahalanobis distance k from the mean. Line
    styles go from solid (innermost) to dashed; ``label`` is attached to the innermost one and
    each ellipse is labelled "k-sigma" otherwise. Returns the list of line artists.
    """
    color = PALETTE[0] if color is None else color
    styles = ["-", "--", ":", "-."]
    lines = []
    for i, k in enumerate(n_stds):
        pts = gaussian_ellipse(mean, cov, n_std=k)
        text = label if (label is not None and i == 0) else f"{k:g}-σ ellipse"
        (line,) = ax.plot(pts[:, 0], pts[:, 1], color=color, linestyle=styles[i % 4],
                          label=text, **kwargs)
        lines.append(line)
    return lines


# --- Gaussian discriminant analysis ---


def plot_decision_regions_2d(ax, predict, X, y, classes=None, grid_size=300, margin=0.5,
                             class_names=None, show_points=True, alpha=0.18):
    """Colour the plane by predicted class and overlay the labelled points (2-D data only).

    ``predict`` maps an (M, 2) array to (M,) labels (e.g. ``model.predict``). The regions are
    filled in the class colours with low opacity, the decision boundaries are drawn as thin
    black lines, and the points are scattered in the same colours with a legend. ``classes``
    fixes the colour order (default ``np.unique(y)``). Returns ``(xx, yy, labels)``, the grid
    and the predicted class index on it.
    """
    from matplotlib.colors import ListedColormap

    X = np.asarray(X, dtype=float)
    y = np.asarray(y)
    classes = np.unique(y) if classes is None else np.asarray(classes)
    names = [str(c) for c in classes] if class_names is None else list(class_names)
    colors = class_colors(len(classes))
    lo, hi = X.min(axis=0) - margin, X.max(axis=0) + margin
    xx, yy = np.meshgrid(np.linspace(lo[0], hi[0], grid_size), np.linspace(lo[1], hi[1], grid_size))
    pred = np.asarray(predict(np.column_stack([xx.ravel(), yy.ravel()])))
    labels = np.argmax(pred[:, None] == classes[None, :], axis=1).reshape(xx.shape)
    levels = np.arange(len(classes) + 1) - 0.5
    ax.contourf(xx, yy, labels, levels=levels, cmap=ListedColormap(colors), alpha=alpha)
    ax.contour(xx, yy, labels, levels=levels[1:-1], colors="k", linewidths=0.8)
    if show_points:
        for k, c in enumerate(classes):
            mask = y == c
            ax.scatter(X[mask, 0], X[mask, 1], s=14, color=colors[k], edgecolor="white",
                       linewidth=0.4, label=names[k])
    ax.set_xlim(lo[0], hi[0])
    ax.set_ylim(lo[1], hi[1])
    return xx, yy, labels


# --- Naive Bayes and GDA chapters: the generative story as a diagram -------------------------


def plot_generative_story(ax, nodes, edges, radius=0.32):
    """Draw a small directed graphical model: circles with labels, arrows between them.

    ``nodes`` maps a name to ``(x, y, label)`` or ``(x, y, label, observed)``; observed nodes are
    shaded. ``edges`` is a list of ``(parent, child)`` names. The axes are set to equal aspect
    with no ticks; returns ``ax``.
    """
    from matplotlib.patches import Circle, FancyArrowPatch

    for name, spec in nodes.items():
        x, y, label = spec[:3]
        observed = spec[3] if len(spec) > 3 else False
        ax.add_patch(Circle((x, y), radius, facecolor="0.85" if observed else "white",
                            edgecolor="black", linewidth=1.2, zorder=2))
        ax.text(x, y, label, ha="center", va="center", fontsize=12, zorder=3)
    for parent, child in edges:
        (x0, y0), (x1, y1) = nodes[parent][:2], nodes[child][:2]
        d = np.hypot(x1 - x0, y1 - y0)
        ux, uy = (x1 - x0) / d, (y1 - y0) / d
        ax.add_patch(FancyArrowPatch((x0 + radius * ux, y0 + radius * uy),
                                     (x1 - radius * ux, y1 - radius * uy),
                                     arrowstyle="-|>", mutation_scale=14, color="black",
                                     linewidth=1.1, zorder=1))
    xs = [spec[0] for spec in nodes.values()]
    ys = [spec[1] for spec in nodes.values()]
    ax.set_xlim(min(xs) - 2 * radius, max(xs) + 2 * radius)
    ax.set_ylim(min(ys) - 2 * radius, max(ys) + 2 * radius)
    ax.set_aspect("equal")
    ax.set_xticks([])
    ax.set_yticks([])
    for spine in ax.spines.values():
        spine.set_visible(False)
    ax.grid(False)
    return ax
