"""The course's figure style: curves that survive greyscale print, text legible in the PDF.

Expected values are derived by hand from the print geometry (a figure of width w inches at 110
dpi is shown at min(110 w, 665) CSS pixels, 96 per printed inch) and from the style's own
tables, never from the drawing code under test.
"""

from __future__ import annotations

import itertools

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

from mlcourse_utils import plotting  # noqa: E402
from mlcourse_utils.plotting import (  # noqa: E402
    LINESTYLES,
    MARKERS,
    PALETTE,
    PRINT_MIN_PT,
    class_markers,
    font_sizes,
    new_figure,
    plot_decision_regions_2d,
    print_scale,
)


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def test_importing_the_module_changes_no_global_style():
    """Only use_style() changes rcParams: a fresh interpreter's defaults survive the import."""
    import subprocess
    import sys

    code = ("import matplotlib; before = dict(matplotlib.rcParams); "
            "import mlcourse_utils.plotting; "
            "assert dict(matplotlib.rcParams) == before")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_every_cycle_entry_differs_in_line_style_or_marker():
    """No two of the eight palette entries share both line style and marker, so two curves are
    told apart when their colours print as the same grey."""
    entries = list(plotting.RC["axes.prop_cycle"])
    assert [e["color"] for e in entries] == PALETTE
    pairs = [(e["linestyle"], e["marker"]) for e in entries]
    assert len(set(pairs)) == len(pairs) == 8
    for (a, b) in itertools.combinations(pairs, 2):
        assert a != b


def test_curves_drawn_with_explicit_colours_still_get_their_own_style():
    """Chapters pass colours by hand; the cycle still gives the first four curves the line
    styles solid, dashed, dash-dot and dotted, and the markers circle, square, triangle,
    diamond."""
    fig, ax = new_figure()
    x = np.linspace(0, 1, 5)
    lines = [ax.plot(x, x + k, color=PALETTE[1])[0] for k in range(4)]
    assert [line.get_linestyle() for line in lines] == ["-", "--", "-.", ":"]
    assert [line.get_marker() for line in lines] == ["o", "s", "^", "D"]
    assert [line.get_marker() for line in lines] == MARKERS[:4]
    assert [line.get_linestyle() for line in lines] == LINESTYLES[:4]


@pytest.mark.parametrize("width, expected", [
    (5.0, 110 / 96),          # narrower than the line: printed at its own pixel size
    (6.4, 665 / (96 * 6.4)),  # 704 px shrunk to 665 px: 1.0824
    (11.0, 665 / (96 * 11)),  # 1210 px shrunk to 665 px: 0.6297
])
def test_print_scale(width, expected):
    assert print_scale(width) == pytest.approx(expected, rel=1e-12)


def test_print_scale_rejects_a_non_positive_width():
    with pytest.raises(ValueError, match="width"):
        print_scale(0.0)


def test_the_print_line_is_the_pdf_line():
    from mlcourse_utils.book.pdf import LINE_PX

    assert plotting.PRINT_LINE_PX == LINE_PX


def test_font_sizes_of_a_wide_figure_are_raised():
    """An 11-inch figure prints at 0.6297 of its size, so its tick labels need 8 / 0.6297 =
    12.71 pt to print at 8 pt; a 6.4-inch figure keeps the base sizes (9 pt ticks print at
    9.7 pt)."""
    assert font_sizes(11.0)["tick"] == pytest.approx(12.71, abs=0.006)
    assert font_sizes(11.0)["label"] == pytest.approx(9 / (665 / (96 * 11)), abs=0.011)
    assert font_sizes(6.4) == plotting.BASE_PT


@pytest.mark.parametrize("width", [4.0, 6.4, 9.0, 11.0, 14.0])
def test_every_text_of_a_drawn_figure_prints_at_its_minimum_size(width):
    """Text added after new_figure with small explicit sizes (a legend at 6 pt, an annotation
    at 5 pt, a colour bar) is raised when the figure is drawn; printed, each kind of text is at
    least its PRINT_MIN_PT."""
    fig, axes = new_figure(1, 2, width=width)
    for ax in axes:
        ax.plot([0, 1], [0, 1], label="a line")
        ax.set_xlabel("x", fontsize=5)
        ax.set_ylabel("y")
        ax.set_title("panel", fontsize=5)
        ax.text(0.5, 0.5, "note", fontsize=5)
        ax.legend(fontsize=6, title="legend")
    image = axes[0].imshow(np.eye(3))
    bar = fig.colorbar(image, ax=axes[0], label="colour")
    fig.legend(["figure legend"], fontsize=4)
    fig.suptitle("suptitle", fontsize=4)
    fig.canvas.draw()
    scale = print_scale(width)

    def printed(text):
        return text.get_fontsize() * scale

    for ax in [*axes, bar.ax]:
        for label in ax.get_xticklabels() + ax.get_yticklabels():
            if label.get_text():
                assert printed(label) >= PRINT_MIN_PT["tick"], (width, label)
        for label in (ax.xaxis.label, ax.yaxis.label):
            if label.get_text():
                assert printed(label) >= PRINT_MIN_PT["label"], (width, label)
    for ax in axes:
        assert printed(ax.title) >= PRINT_MIN_PT["title"]
        assert printed(ax.texts[0]) >= PRINT_MIN_PT["text"]
        legend = ax.get_legend()
        assert all(printed(t) >= PRINT_MIN_PT["legend"] for t in legend.get_texts())
        assert printed(legend.get_title()) >= PRINT_MIN_PT["legend"]
    assert printed(fig.legends[0].get_texts()[0]) >= PRINT_MIN_PT["legend"]
    assert printed(fig.texts[0]) >= PRINT_MIN_PT["title"]


def test_larger_text_is_left_alone():
    fig, ax = new_figure(width=11.0)
    ax.set_title("big", fontsize=30)
    ax.legend(handles=ax.plot([0, 1], [0, 1], label="l"), fontsize=20)
    fig.canvas.draw()
    assert ax.title.get_fontsize() == 30
    assert ax.get_legend().get_texts()[0].get_fontsize() == 20


def test_markers_of_dense_lines_are_thinned():
    """A 401-point curve shows a marker every tenth of the axes diagonal; a 10-point line and a
    line drawn without a connecting line keep every marker."""
    fig, ax = new_figure()
    dense = ax.plot(np.linspace(0, 1, 401), np.linspace(0, 1, 401))[0]
    sparse = ax.plot(np.arange(10), np.arange(10))[0]
    points = ax.plot(np.arange(100), np.arange(100), "o")[0]
    fig.canvas.draw()
    assert dense.get_markevery() == 0.1
    assert sparse.get_markevery() is None
    assert points.get_markevery() is None


def test_class_markers_differ_for_up_to_eight_classes():
    assert len(set(class_markers(8))) == 8
    assert class_markers(10)[8] == class_markers(10)[0]


def test_decision_region_points_have_one_marker_per_class():
    """Three classes scattered in three shapes: circle, square, triangle."""
    X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [2.0, 2.0], [2.0, 0.0]])
    y = np.array([0, 0, 1, 1, 2, 2])
    fig, ax = new_figure()
    plot_decision_regions_2d(ax, lambda Z: np.argmin(
        np.linalg.norm(Z[:, None, :] - np.array([[0.5, 0], [0.5, 1], [2, 1]])[None], axis=2),
        axis=1), X, y, grid_size=20)
    paths = [coll.get_paths()[0].vertices for coll in ax.collections[-3:]]
    # The three marker paths have 4 + 1 (square), 3 + 1 (triangle) and many (circle) vertices.
    counts = sorted(len(p) for p in paths)
    assert len(set(counts)) == 3, counts


def test_save_figure_writes_reproducible_svg_and_png(tmp_path):
    """A figure as files (the class report's): SVG then PNG, the same bytes twice."""
    def draw(stem):
        fig, ax = new_figure()
        ax.bar([0, 1, 2], [3, 1, 2])
        ax.set_xlabel("score")
        return plotting.save_figure(fig, stem)

    first = draw(tmp_path / "a" / "fig")
    second = draw(tmp_path / "b" / "fig")
    assert [p.suffix for p in first] == [".svg", ".png"]
    assert plt.get_fignums() == []  # saved figures are closed
    for p, q in zip(first, second, strict=True):
        assert p.read_bytes() == q.read_bytes()
