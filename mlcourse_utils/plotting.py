"""One plotting style for every figure of the book.

Figures are made by calling these helpers from chapter code cells. Importing this module has
no global side effects: the style is applied inside :func:`style` (a context manager) and by
:func:`new_figure`, never by changing matplotlib's global ``rcParams`` at import time.
"""

from __future__ import annotations

import contextlib

import matplotlib

matplotlib.use("Agg", force=False)

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

__all__ = ["PALETTE", "RC", "style", "new_figure", "class_colors"]

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


def new_figure(nrows=1, ncols=1, width=6.4, height=None, **kwargs):
    """``plt.subplots`` with the course style; returns ``(fig, axes)``.

    ``height`` defaults to a 4:3 panel per row.
    """
    if height is None:
        height = 0.75 * width / ncols * nrows
    with style():
        fig, axes = plt.subplots(nrows, ncols, figsize=(width, height), **kwargs)
    fig.set_layout_engine("constrained")
    for ax in np.atleast_1d(axes).ravel():
        for key in ("axes.spines.top", "axes.spines.right"):
            ax.spines[key.split(".")[-1]].set_visible(RC[key])
        ax.grid(True, alpha=RC["grid.alpha"])
        ax.set_prop_cycle(RC["axes.prop_cycle"])
    return fig, axes


def class_colors(n):
    """The first ``n`` palette colours (cycled when n exceeds the palette)."""
    return [PALETTE[i % len(PALETTE)] for i in range(n)]
