"""One plotting style for every figure of the book, legible on screen and in greyscale print.

Figures are made by calling these helpers from chapter code cells. Importing this module has
no global side effects: :func:`new_figure` styles the figure it creates, :func:`style` is a
context manager for code that draws with plain matplotlib, and :func:`use_style` applies the
style to a whole session only when a chapter asks for it.

Two rules make a figure readable in the printed lecture notes (``mlcourse pdf``: A4, black and
white printers):

* **Curves differ by more than colour.** The property cycle pairs each colour of the
  colour-blind-safe palette with its own line style and marker (:data:`LINESTYLES`,
  :data:`MARKERS`), so two curves stay apart when the colours print as similar greys; class
  scatters use :func:`class_markers` as well as :func:`class_colors`.
* **Text has a minimum printed size.** The PDF shows a figure at its pixel width, shrunk to the
  printed line when it is wider (:func:`print_scale`), so a wide figure prints its text smaller.
  :func:`new_figure` sizes the text of each figure from its width so that, printed, axis labels
  and titles are at least 9 pt and tick labels, legends and annotations at least 8 and 7 pt
  (:data:`PRINT_MIN_PT`), and it enforces these floors again when the figure is drawn, on text
  added after it was created (legends, colour bars, annotations).
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure
from numpy.typing import ArrayLike, NDArray

from ._validation import FloatArray

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.backend_bases import RendererBase
    from matplotlib.contour import QuadContourSet
    from matplotlib.lines import Line2D

__all__ = ["PALETTE", "LINESTYLES", "MARKERS", "RC", "PRINT_MIN_PT", "style", "use_style",
           "new_figure", "class_colors", "class_markers", "print_scale", "font_sizes"]

#: Colour-blind-safe palette (Okabe–Ito), used in this order for classes and curves.
PALETTE = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000"]
#: The line style that goes with each palette colour (the cycle pairs them).
LINESTYLES = ["-", "--", "-.", ":", "-", "--", "-.", ":"]
#: The marker that goes with each palette colour: no two entries of the cycle share both
#: line style and marker, so curves stay distinguishable in greyscale.
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]

#: Dots per inch of every figure (the PNG the website and the PDF show).
DPI = 110
#: Width of the printed line of the PDF in CSS pixels at 96 per inch
#: (``mlcourse_utils.book.pdf.LINE_PX``, A4 less two 17 mm margins).
PRINT_LINE_PX = 665
#: Minimum printed size (points) of each kind of text in a figure.
PRINT_MIN_PT = {"label": 9.0, "title": 9.5, "tick": 8.0, "legend": 8.0, "text": 7.0}
#: Smallest sizes (points, in the figure) whatever the width: the style of a figure that prints
#: at its own size or larger.
BASE_PT = {"label": 10.0, "title": 11.0, "tick": 9.0, "legend": 9.0, "text": 8.0}
#: Markers drawn on a line with more points than this are thinned to one per tenth of the axes
#: diagonal (a dense curve would otherwise be a row of markers).
DENSE_LINE = 30

RC = {
    "figure.dpi": DPI,
    "savefig.dpi": DPI,
    "font.size": BASE_PT["label"],
    "axes.titlesize": BASE_PT["title"],
    "axes.labelsize": BASE_PT["label"],
    "xtick.labelsize": BASE_PT["tick"],
    "ytick.labelsize": BASE_PT["tick"],
    "legend.fontsize": BASE_PT["legend"],
    "legend.title_fontsize": BASE_PT["legend"],
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.25,
    "legend.frameon": False,
    "lines.linewidth": 1.6,
    "lines.markersize": 5.0,
    "axes.prop_cycle": (matplotlib.cycler(color=PALETTE) + matplotlib.cycler(linestyle=LINESTYLES)
                        + matplotlib.cycler(marker=MARKERS)),
    "image.cmap": "viridis",
}


def print_scale(width: float, dpi: float = DPI) -> float:
    """Printed inches per inch of a figure ``width`` inches wide, in the PDF lecture notes.

    The PDF lays an image out at its pixel width (``width * dpi`` px) at 96 px per printed inch
    and shrinks it to the printed line (:data:`PRINT_LINE_PX`) when it is wider, so the scale is
    ``min(dpi / 96, PRINT_LINE_PX / (96 * width))``. A font of s points in the figure prints at
    ``s * print_scale(width)`` points.
    """
    if not width > 0:
        raise ValueError(f"width must be positive, got {width!r}")
    return min(dpi / 96.0, PRINT_LINE_PX / (96.0 * width))


def font_sizes(width: float) -> dict[str, float]:
    """Font sizes (points) for a figure ``width`` inches wide: :data:`BASE_PT`, raised where
    needed so that each kind of text prints at least at its :data:`PRINT_MIN_PT`."""
    scale = print_scale(width)
    # Rounded up to 0.01 pt, so that the printed size is never below the floor.
    return {kind: max(BASE_PT[kind], math.ceil(100 * PRINT_MIN_PT[kind] / scale) / 100)
            for kind in BASE_PT}


@contextlib.contextmanager
def style() -> Iterator[None]:
    """Context manager applying the course style to figures created inside it."""
    with matplotlib.rc_context(RC):
        yield


def use_style() -> None:
    """Apply the course style to every later figure of this session (call it once per chapter).

    This is the one deliberate global change: it updates ``matplotlib.rcParams`` with
    :data:`RC`. Importing the module changes nothing.
    """
    matplotlib.rcParams.update(RC)


def _raise_to(text: Any, size: float) -> None:
    if text is not None and text.get_text() and text.get_fontsize() < size:
        text.set_fontsize(size)


def _tick_label_size(axis: Any) -> float:
    ticks = axis.get_major_ticks() + axis.get_minor_ticks()
    return min((t.label1.get_fontsize() for t in ticks), default=0.0)


def enforce_print_sizes(fig: Figure, sizes: Mapping[str, float]) -> None:
    """Raise every text of ``fig`` that is smaller than its floor in ``sizes`` (see
    :func:`font_sizes`), and thin the markers of dense lines (more than :data:`DENSE_LINE`
    points) to one per tenth of the axes diagonal. Larger text is left alone."""
    from matplotlib.lines import Line2D

    for ax in fig.axes:
        for name, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
            if _tick_label_size(axis) < sizes["tick"]:
                ax.tick_params(axis=name, which="both", labelsize=sizes["tick"])
            _raise_to(axis.label, sizes["label"])
        for title in (ax.title, getattr(ax, "_left_title", None),
                      getattr(ax, "_right_title", None)):
            _raise_to(title, sizes["title"])
        for text in ax.texts:
            _raise_to(text, sizes["text"])
        for line in ax.get_lines():
            if (isinstance(line, Line2D) and line.get_marker() not in (None, "", "None", " ")
                    and line.get_linestyle() not in ("None", "", " ")
                    and line.get_markevery() is None and len(line.get_xdata()) > DENSE_LINE):
                line.set_markevery(0.1)
    legends = [ax.get_legend() for ax in fig.axes] + list(fig.legends)
    for legend in legends:
        if legend is None:
            continue
        for text in legend.get_texts():
            _raise_to(text, sizes["legend"])
        _raise_to(legend.get_title(), sizes["legend"])
    suptitle = getattr(fig, "_suptitle", None)
    for text in fig.texts:
        _raise_to(text, sizes["title"] if text is suptitle else sizes["text"])


class CourseFigure(Figure):
    """A matplotlib ``Figure`` that enforces the course's minimum printed text sizes when drawn.

    Made by :func:`new_figure`; ``print_sizes`` holds the floors (:func:`font_sizes` of the
    figure's width). Text added after the figure was created (a legend, a colour bar, an
    annotation) is raised to its floor just before each draw.
    """

    print_sizes: dict[str, float] = {}

    def draw(self, renderer: RendererBase) -> None:
        if self.print_sizes:
            enforce_print_sizes(self, self.print_sizes)
        super().draw(renderer)


def new_figure(
    nrows: int = 1, ncols: int = 1, width: float = 6.4, height: float | None = None, **kwargs: Any
) -> tuple[Figure, Any]:
    """``plt.subplots`` with the course style; returns ``(fig, axes)``.

    ``height`` defaults to a 4:3 panel per row. The figure is created outside any
    ``rc_context`` (leaving one while Jupyter's inline backend is active stops the figure
    from being displayed); the style is applied to the new figure and its axes directly:
    the greyscale-safe property cycle (colour, line style and marker) and font sizes chosen
    from ``width`` by :func:`font_sizes`, which the figure enforces again when it is drawn
    (:class:`CourseFigure`), so that its text is legible in the printed notes.
    """
    if height is None:
        height = 0.75 * width / ncols * nrows
    kwargs.setdefault("layout", "constrained")
    sizes = font_sizes(width)
    fig, axes = plt.subplots(nrows, ncols, figsize=(width, height), dpi=RC["figure.dpi"],
                             FigureClass=CourseFigure, **kwargs)
    fig.print_sizes = sizes
    for ax in np.atleast_1d(axes).ravel():
        ax.spines["top"].set_visible(False)
        ax.spines["right"].set_visible(False)
        ax.grid(True, alpha=RC["grid.alpha"])
        ax.set_axisbelow(True)
        ax.set_prop_cycle(RC["axes.prop_cycle"])
        ax.tick_params(labelsize=sizes["tick"])
        ax.xaxis.label.set_size(sizes["label"])
        ax.yaxis.label.set_size(sizes["label"])
        ax.title.set_size(sizes["title"])
    return fig, axes


def class_colors(n: int) -> list[str]:
    """The first ``n`` palette colours (cycled when n exceeds the palette)."""
    return [PALETTE[i % len(PALETTE)] for i in range(n)]


def class_markers(n: int) -> list[str]:
    """The markers that go with :func:`class_colors` ``(n)``: classes differ in shape too."""
    return [MARKERS[i % len(MARKERS)] for i in range(n)]


# --- Maximum likelihood ---


def gaussian_ellipse(
    mean: ArrayLike, cov: ArrayLike, n_std: float = 1.0, n_points: int = 200
) -> FloatArray:
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


def plot_gaussian_ellipses(
    ax: Axes,
    mean: ArrayLike,
    cov: ArrayLike,
    n_stds: Sequence[float] = (1.0, 2.0),
    color: str | None = None,
    label: str | None = None,
    **kwargs: Any,
) -> list[Line2D]:
    """Draw the 1-, 2-, ... sigma ellipses of a 2-D Gaussian on ``ax`` (not its mean).

    The k-sigma ellipse is the set of points at Mahalanobis distance k from the mean. Line
    styles go from solid (innermost) to dashed, without markers; ``label`` is attached to the
    innermost one and each ellipse is labelled "k-sigma" otherwise. Returns the list of line
    artists.
    """
    color = PALETTE[0] if color is None else color
    styles = ["-", "--", ":", "-."]
    kwargs.setdefault("marker", "")
    lines = []
    for i, k in enumerate(n_stds):
        pts = gaussian_ellipse(mean, cov, n_std=k)
        text = label if (label is not None and i == 0) else f"{k:g}-σ ellipse"
        (line,) = ax.plot(pts[:, 0], pts[:, 1], color=color, linestyle=styles[i % 4],
                          label=text, **kwargs)
        lines.append(line)
    return lines


# --- Gaussian discriminant analysis ---


def plot_decision_regions_2d(
    ax: Axes,
    predict: Callable[[FloatArray], ArrayLike],
    X: ArrayLike,
    y: ArrayLike,
    classes: ArrayLike | None = None,
    grid_size: int = 300,
    margin: float = 0.5,
    class_names: Sequence[str] | None = None,
    show_points: bool = True,
    alpha: float = 0.18,
) -> tuple[FloatArray, FloatArray, NDArray[np.intp]]:
    """Colour the plane by predicted class and overlay the labelled points (2-D data only).

    ``predict`` maps an (M, 2) array to (M,) labels (e.g. ``model.predict``). The regions are
    filled in the class colours with low opacity, the decision boundaries are drawn as thin
    black lines, and the points are scattered in the same colours, each class with its own
    marker (:func:`class_markers`, for greyscale print), with a legend. ``classes``
    fixes the colour order (default ``np.unique(y)``). Returns ``(xx, yy, labels)``, the grid
    and the predicted class index on it.
    """
    from matplotlib.colors import ListedColormap

    X = np.asarray(X, dtype=float)
    y = np.asarray(y)
    classes = np.unique(y) if classes is None else np.asarray(classes)
    names = [str(c) for c in classes] if class_names is None else list(class_names)
    colors = class_colors(len(classes))
    markers = class_markers(len(classes))
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
            ax.scatter(X[mask, 0], X[mask, 1], s=20, color=colors[k], marker=markers[k],
                       edgecolor="white", linewidth=0.4, label=names[k])
    ax.set_xlim(lo[0], hi[0])
    ax.set_ylim(lo[1], hi[1])
    return xx, yy, labels


# --- Logistic regression ---


def plot_probability_map_2d(
    ax: Axes,
    proba: Callable[[FloatArray], ArrayLike],
    X: ArrayLike,
    y: ArrayLike,
    grid_size: int = 200,
    margin: float = 0.5,
    class_names: Sequence[str] | None = None,
    levels: Sequence[float] = (0.1, 0.5, 0.9),
    xlim: tuple[float, float] | None = None,
    ylim: tuple[float, float] | None = None,
) -> QuadContourSet:
    """Colour the plane by p(y = 1 | x) and overlay the points of two classes (2-D data only).

    ``proba`` maps an (M, 2) array to the (M,) probabilities of the second class. The map
    runs from the first class colour (p = 0) through white (p = 1/2) to the second class colour
    (p = 1); the contours at ``levels`` are drawn, the one at 1/2 (the decision boundary)
    solid and the others dashed, and the two classes are scattered with different markers.
    Returns the filled-contour artist (for a colour bar).
    """
    from matplotlib.colors import LinearSegmentedColormap

    X = np.asarray(X, dtype=float)
    y = np.asarray(y)
    classes = np.unique(y)
    names = [str(c) for c in classes] if class_names is None else list(class_names)
    colors = class_colors(2)
    markers = class_markers(2)
    lo, hi = X.min(axis=0) - margin, X.max(axis=0) + margin
    if xlim is not None:
        lo[0], hi[0] = xlim
    if ylim is not None:
        lo[1], hi[1] = ylim
    xx, yy = np.meshgrid(np.linspace(lo[0], hi[0], grid_size), np.linspace(lo[1], hi[1], grid_size))
    p = np.asarray(proba(np.column_stack([xx.ravel(), yy.ravel()]))).reshape(xx.shape)
    cmap = LinearSegmentedColormap.from_list("two_classes", [colors[0], "white", colors[1]])
    filled = ax.contourf(xx, yy, p, levels=np.linspace(0, 1, 21), cmap=cmap, alpha=0.55)
    styles = ["-" if abs(level - 0.5) < 1e-12 else "--" for level in levels]
    ax.contour(xx, yy, p, levels=list(levels), colors="k", linewidths=0.8, linestyles=styles)
    for k, c in enumerate(classes):
        mask = y == c
        ax.scatter(X[mask, 0], X[mask, 1], s=20, color=colors[k], marker=markers[k],
                   edgecolor="white", linewidth=0.4, label=names[k])
    ax.set_xlim(lo[0], hi[0])
    ax.set_ylim(lo[1], hi[1])
    return filled


def plot_reliability_diagram(
    ax: Axes,
    mean_predicted: ArrayLike,
    fraction_positive: ArrayLike,
    counts: ArrayLike | None = None,
    label: str | None = None,
    color: str | None = None,
    marker: str = "o",
) -> None:
    """A reliability diagram: observed frequency of class 1 against the mean predicted
    probability, per bin, with the diagonal of perfect calibration.

    Points below the diagonal on the right and above it on the left are over-confident
    predictions. With ``counts`` the marker area grows with the number of samples in the bin.
    """
    color = PALETTE[0] if color is None else color
    ax.plot([0, 1], [0, 1], color="0.5", linestyle=":", linewidth=1, marker="")
    sizes = None if counts is None else 8 + 120 * np.asarray(counts) / np.max(counts)
    ax.plot(mean_predicted, fraction_positive, color=color, linewidth=1.2, label=label,
            linestyle="-", marker="")
    ax.scatter(mean_predicted, fraction_positive, s=sizes, color=color, marker=marker, zorder=3)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_aspect("equal")
    ax.set_xlabel("mean predicted probability of class 1")
    ax.set_ylabel("observed fraction of class 1")


# --- Information theory and MDL ---


def plot_code_tree(
    ax: Axes,
    codebook: Mapping[Hashable, str],
    edge_labels: tuple[str, str] = ("0", "1"),
    leaf_text: Mapping[Hashable, str] | None = None,
    color: str | None = None,
    fontsize: float = 9,
) -> dict[str, tuple[float, float]]:
    """Draw the binary tree of a prefix-free code on ``ax``.

    ``codebook`` maps each symbol to its codeword (a string of '0' and '1'). The root is at the
    top; bit 0 goes left and bit 1 right, with the branches labelled by ``edge_labels`` (e.g.
    ``("H", "T")`` for coin flips). Leaves are spread evenly from left to right in the order
    of their codewords, an inner node sits above the middle of its children, and depth d is
    drawn at height -d. Each leaf shows its symbol, or ``leaf_text[symbol]`` when given.
    The axes are switched off. Returns the dict codeword prefix -> (x, y) of every node.
    """
    color = PALETTE[0] if color is None else color
    leaves = sorted(codebook.items(), key=lambda item: item[1])
    nodes = {}
    for rank, (_, word) in enumerate(leaves):
        nodes[word] = (float(rank), -float(len(word)))
    prefixes = {word[:i] for _, word in leaves for i in range(len(word))}
    for prefix in sorted(prefixes, key=len, reverse=True):
        xs = [nodes[prefix + b][0] for b in "01" if prefix + b in nodes]
        nodes[prefix] = (float(np.mean(xs)), -float(len(prefix)))
    for prefix in prefixes:
        x0, y0 = nodes[prefix]
        for bit, text in zip("01", edge_labels, strict=False):
            if prefix + bit in nodes:
                x1, y1 = nodes[prefix + bit]
                ax.plot([x0, x1], [y0, y1], color="0.45", lw=1.0, zorder=1, linestyle="-",
                        marker="")
                ax.text((x0 + x1) / 2, (y0 + y1) / 2, f" {text} ", fontsize=fontsize - 1,
                        ha="right" if bit == "0" else "left", va="center", color="0.3")
    inner = [nodes[p] for p in prefixes]
    if inner:
        ax.scatter(*zip(*inner, strict=True), s=18, color="0.45", zorder=2)
    for symbol, word in leaves:
        x, y = nodes[word]
        label = str(symbol) if leaf_text is None else str(leaf_text.get(symbol, symbol))
        ax.text(x, y, label, ha="center", va="center", fontsize=fontsize, zorder=3,
                bbox=dict(boxstyle="round,pad=0.3", fc="white", ec=color, lw=1.2))
    xs = [v[0] for v in nodes.values()]
    depth = max(len(word) for _, word in leaves)
    ax.set_xlim(min(xs) - 0.7, max(xs) + 0.7)
    ax.set_ylim(-depth - 0.6, 0.4)
    ax.set_axis_off()
    return nodes


# --- Ridge and LASSO ---

__all__ += ["norm_ball", "plot_coefficient_paths"]


def norm_ball(p: float, radius: float = 1.0, n_points: int = 401) -> FloatArray:
    """Points on the boundary {w in R^2 : ||w||_p = radius} for p = 1, 2 or ``np.inf``.

    p = 2 is a circle, p = 1 the diamond |w_1| + |w_2| = radius (corners on the axes), p = inf
    the square max(|w_1|, |w_2|) = radius. Returns an array of shape (n_points, 2) tracing the
    closed curve (the last point equals the first).
    """
    t = np.linspace(0.0, 2.0 * np.pi, n_points)
    circle = np.column_stack([np.cos(t), np.sin(t)])
    if p not in (1, 2, np.inf):
        raise ValueError(f"p must be 1, 2 or np.inf, got {p!r}")
    norms = np.linalg.norm(circle, ord=p, axis=1)
    return radius * circle / norms[:, None]


def plot_coefficient_paths(
    ax: Axes,
    lams: ArrayLike,
    coefs: ArrayLike,
    names: Sequence[str] | None = None,
    xlabel: str = r"penalty $\lambda$",
) -> list[Line2D]:
    """Draw a regularisation path: one line per feature, coefficient against lambda (log scale).

    ``coefs`` has shape (L, D), row i for ``lams[i]`` (any order; they are sorted here).
    Colours and markers follow the course palette (:data:`MARKERS`, so that lines stay apart
    in greyscale print; dense paths show a marker every tenth of the axes diagonal); features
    beyond its eight colours repeat them dashed, so every line stays distinguishable. A zero
    line and a legend outside the axes (with ``names``, default "w_1", "w_2", ...) are added.
    Returns the list of line artists.
    """
    lams = np.asarray(lams, dtype=float)
    coefs = np.asarray(coefs, dtype=float)
    order = np.argsort(lams)
    names = [f"$w_{{{d + 1}}}$" for d in range(coefs.shape[1])] if names is None else names
    lines = []
    for d in range(coefs.shape[1]):
        style = "-" if d < len(PALETTE) else "--"
        (line,) = ax.plot(lams[order], coefs[order, d], style, color=PALETTE[d % len(PALETTE)],
                          marker=MARKERS[d % len(MARKERS)], markersize=4, label=names[d],
                          linewidth=1.4)
        lines.append(line)
    ax.axhline(0.0, color="0.4", linewidth=0.8)
    ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("coefficient")
    ax.legend(loc="center left", bbox_to_anchor=(1.0, 0.5))
    return lines


# --- Naive Bayes and GDA chapters: the generative story as a diagram -------------------------


def plot_generative_story(ax: Axes, nodes: Mapping[str, Sequence[Any]],
                          edges: Sequence[tuple[str, str]], radius: float = 0.32) -> Axes:
    """Draw a small directed graphical model: circles with labels, arrows between them.

    ``nodes`` maps a name to ``(x, y, label)`` or ``(x, y, label, observed)``; observed nodes are
    shaded. ``edges`` is a list of ``(parent, child)`` names. The axes are set to equal aspect
    with no ticks; returns ``ax``.
    """
    from matplotlib.patches import Circle, FancyArrowPatch

    for spec in nodes.values():
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


# --- Figures as files (reports, handouts) ---

__all__ += ["save_figure"]


def save_figure(fig: Figure, stem: str | os.PathLike[str],
                formats: Sequence[str] = ("svg", "png")) -> list[Path]:
    """Write ``fig`` to ``stem.svg``, ``stem.png`` (one file per format) and close it.

    The files are reproducible: the same figure gives the same bytes (no creation date, fixed
    SVG element ids), so regenerated files diff cleanly. PNGs use the course's resolution
    (``RC["savefig.dpi"]``). Returns the written paths in the order of ``formats``.
    """
    stem = Path(stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    written = []
    try:
        with matplotlib.rc_context({"svg.hashsalt": "mlcourse", "svg.fonttype": "path"}):
            for fmt in formats:
                path = stem.with_name(f"{stem.name}.{fmt}")
                metadata = {"Date": None} if fmt in ("svg", "pdf") else {"Software": None}
                fig.savefig(path, format=fmt, dpi=RC["savefig.dpi"], metadata=metadata)
                written.append(path)
    finally:
        plt.close(fig)
    return written
