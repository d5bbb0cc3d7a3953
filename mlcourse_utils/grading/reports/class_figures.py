"""The class report's figures: SVG and PNG with matplotlib, and the numbers behind each as rows.
"""

from __future__ import annotations

import dataclasses
import math
import textwrap
from pathlib import Path
from typing import Any

import numpy as np

from ..graded.model import Check
from .class_model import (
    BANDS,
    TOP_FIGURE,
    AssignmentReport,
    ClassReport,
)

# ------------------------------------------------------------------ figures


@dataclasses.dataclass
class Figure:
    """A figure on the page: its files, alt text, caption and the numbers behind it."""

    slug: str
    title: str
    alt: str
    caption: str
    header: list[str]
    rows: list[list[Any]]


def pct(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:.0f}\u00a0%"


def num(x: float | None, digits: int = 2) -> str:
    if x is None:
        return "—"
    return f"{round(x, digits):g}"


def _label(text: str, width: int = 48, lines: int = 2) -> str:
    """Text for a matplotlib label: wrapped, cut, and with ``$`` kept literal (no mathtext)."""
    wrapped = textwrap.wrap(text, width) or [""]
    if len(wrapped) > lines:
        wrapped = wrapped[:lines]
        wrapped[-1] = wrapped[-1][: width - 1] + "…"
    return "\n".join(wrapped).replace("$", r"\$")


def check_words(check: Check) -> str:
    """A check in words with its task (descriptions usually start with the task's name)."""
    if check.description.startswith(check.task):
        return check.description
    return f"{check.task}: {check.description}"


def scores_figure(r: AssignmentReport, folder: Path) -> Figure:
    from ...plotting import PALETTE, new_figure

    top = r.graded.max_score
    fig, ax = new_figure(width=6.4, height=3.2)
    if r.histogram and r.histogram[0][0] == r.histogram[0][1]:  # one bar per point
        xs = [low for low, _, _ in r.histogram]
        ax.bar(xs, [c for *_, c in r.histogram], width=0.8, color=PALETTE[0])
        rows = [[num(low), num(low), c] for low, _, c in r.histogram]
    else:
        lows = [low for low, _, _ in r.histogram]
        width = (r.histogram[0][1] - r.histogram[0][0]) if r.histogram else 1
        ax.bar(lows, [c for *_, c in r.histogram], width=width * 0.9, align="edge",
               color=PALETTE[0])
        rows = [[num(low), num(high), c] for low, high, c in r.histogram]
    for value, style, label in ((r.mean, "--", "mean"), (r.median, ":", "median")):
        if value is not None:
            ax.axvline(value, color=PALETTE[1], linestyle=style, linewidth=1.5,
                       label=f"{label} {value:.3g}")
    ax.set_xlabel(f"total autograded score (of {top:g})")
    ax.set_ylabel("students")
    ax.yaxis.get_major_locator().set_params(integer=True)
    if r.mean is not None:
        ax.legend()
    from ...plotting import save_figure

    slug = f"{r.slug}_scores"
    save_figure(fig, folder / slug)
    n = len(r.students)
    alt = (f"Histogram of the total autograded scores of {n} students on {r.name} (maximum "
           f"{top:g}): mean {num(r.mean)}, median {num(r.median)}; {r.full} with full marks, "
           f"{r.partial} with partial marks, {r.zero} with zero.")
    return Figure(slug, f"Total scores on {r.name}", alt,
                  "Students per total score; the dashed line is the mean, the dotted one the "
                  "median.", ["score_from", "score_to", "students"], rows)


def tasks_figure(r: AssignmentReport, folder: Path) -> Figure:
    from ...plotting import PALETTE, new_figure, save_figure

    k = max(1, len(r.tasks))
    cols = min(3, k)
    nrows = math.ceil(k / cols)
    fig, axes = new_figure(nrows, cols, width=6.4, height=1.9 * nrows + 0.3, squeeze=False)
    rows = []
    for i, ax in enumerate(axes.ravel()):
        if i >= k or not r.tasks:
            ax.set_visible(False)
            continue
        t = r.tasks[i]
        values = sorted(set(t.counts) | {0.0, t.max_score})
        counts = [t.counts.get(v, 0) for v in values]
        ax.bar([num(v) for v in values], counts, color=PALETTE[0], width=0.7)
        ax.set_title(_label(t.task, 30, 1), fontsize=9)
        ax.yaxis.get_major_locator().set_params(integer=True)
        ax.tick_params(labelsize=8)
        rows += [[t.task, num(v), c] for v, c in zip(values, counts, strict=True)]
    fig.supxlabel("task score", fontsize=9)
    fig.supylabel("students", fontsize=9)
    slug = f"{r.slug}_tasks"
    save_figure(fig, folder / slug)
    parts = [f"{t.task}: {t.full} of {t.n} full, {t.zero} zero" for t in r.tasks]
    alt = (f"Bar charts of the students per score for each of the {len(r.tasks)} tasks of "
           f"{r.name}, over the {len(r.participants)} students who took part. "
           + "; ".join(parts) + ".")
    return Figure(slug, f"Task scores on {r.name}", alt,
                  "One panel per task: students per task score (students who took part).",
                  ["task", "score", "students"], rows)


def items_figure(r: AssignmentReport, folder: Path) -> Figure:
    from ...plotting import PALETTE, new_figure, save_figure

    fig, ax = new_figure(width=6.4, height=3.6)
    rows, points = [], {}
    for t in r.tasks:
        y = t.discrimination
        rows.append([t.task, num(t.difficulty, 3), num(y, 3), "; ".join(t.flags)])
        if t.difficulty is not None:
            key = (round(t.difficulty, 2), None if y is None else round(y, 2), bool(t.flags))
            points.setdefault(key, []).append(t.task)
    for (x, y, flagged), tasks in points.items():
        shown = 0.0 if y is None else y
        ax.scatter([x], [shown], s=42, zorder=3,
                   marker="X" if flagged else ("o" if y is not None else "s"),
                   color=PALETTE[1] if flagged else PALETTE[0])
        ax.annotate(_label(", ".join(tasks), 34, 3), (x, shown), textcoords="offset points",
                    xytext=(5, 4), fontsize=7, va="bottom")
    ax.axhline(0, color="0.5", linewidth=0.8)
    ax.set_xlim(-0.05, 1.15)
    ax.set_ylim(-1.05, 1.05)
    ax.set_xlabel("difficulty (mean score / maximum; 1 = everyone full marks)")
    ax.set_ylabel("discrimination (r with the rest)")
    slug = f"{r.slug}_items"
    save_figure(fig, folder / slug)
    flagged = [f"{t.task} ({', '.join(t.flags)})" for t in r.tasks if t.flags]
    alt = (f"Scatter plot of the {len(r.tasks)} tasks of {r.name}: difficulty on the "
           "horizontal axis, discrimination on the vertical axis. "
           + ("Flagged: " + "; ".join(flagged) + "." if flagged else "No task is flagged."))
    return Figure(slug, f"Item analysis of {r.name}", alt,
                  "Each task at its difficulty and discrimination. Crosses are flagged tasks; "
                  "squares (drawn at 0) are tasks whose discrimination is undefined because "
                  "every student has the same score.",
                  ["task", "difficulty", "discrimination", "flags"], rows)


def failures_figure(r: AssignmentReport, folder: Path) -> Figure | None:
    from ...plotting import PALETTE, new_figure, save_figure

    top = r.top_checks(TOP_FIGURE)
    if not top:
        return None
    fig, ax = new_figure(width=6.4, height=0.55 * len(top) + 0.9)
    labels = [_label(check_words(c.check)) for c in top]
    shares = [100 * (c.share or 0) for c in top]
    ys = np.arange(len(top))[::-1]
    ax.barh(ys, shares, color=PALETTE[1], height=0.6)
    for y, c, s in zip(ys, top, shares, strict=True):
        ax.text(s + 1, y, f"{c.failed}/{c.attempted}", va="center", fontsize=8)
    ax.set_yticks(ys, labels, fontsize=7)
    ax.set_xlim(0, 112)
    ax.set_xlabel("% of the students who attempted the task")
    ax.grid(axis="y", visible=False)
    slug = f"{r.slug}_failures"
    save_figure(fig, folder / slug)
    words = [f"{c.check.description} ({c.failed} of {c.attempted})" for c in top[:3]]
    alt = (f"Bar chart of the {len(top)} most frequently failed checks of {r.name}, as the "
           "share of the students who attempted the task. Most failed: " + "; ".join(words)
           + ".")
    rows = [[c.check.task, c.check.grade_id, c.check.kind, c.check.description, c.failed,
             c.attempted, num(c.share, 4)] for c in top]
    return Figure(slug, f"Most frequent failures on {r.name}", alt,
                  "The checks failed most often, labelled by task and by the description "
                  "students read in their feedback; the numbers are failed / attempted.",
                  ["task", "check", "kind", "description", "failed", "attempted", "share"],
                  rows)


def overview_figures(report: ClassReport, folder: Path) -> list[Figure]:
    from ...plotting import PALETTE, new_figure, save_figure

    figures = []
    names = [r.name for r in report.assignments]
    fig, ax = new_figure(width=6.4, height=0.42 * len(names) + 1.2)
    ys = np.arange(len(names))[::-1]
    left = np.zeros(len(names))
    bands = [r.bands() for r in report.assignments]
    styles = [(PALETTE[1], ".."), (PALETTE[4], "//"), (PALETTE[5], ""), (PALETTE[2], "")]
    for k, (label, (colour, hatch)) in enumerate(zip(BANDS, styles, strict=True)):
        values = np.array([b[k] for b in bands], dtype=float)
        ax.barh(ys, values, left=left, color=colour, hatch=hatch, edgecolor="white",
                height=0.6, label=label)
        left += values
    ax.set_yticks(ys, [_label(n, 30, 1) for n in names])
    ax.set_xlabel("students")
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.grid(axis="y", visible=False)
    ax.legend(ncols=2, loc="lower center", bbox_to_anchor=(0.5, 1.0))
    save_figure(fig, folder / "overview_scores")
    rows = [[r.name, len(r.students), *b] for r, b in zip(report.assignments, bands, strict=True)]
    alt = ("Stacked bar chart: for each assignment, the students by total autograded score as a "
           "share of the maximum (" + ", ".join(BANDS) + "). " + "; ".join(
               f"{r.name}: " + ", ".join(f"{n} {label}" for label, n in zip(BANDS, b,
                                                                              strict=True))
               for r, b in zip(report.assignments, bands, strict=True)) + ".")
    figures.append(Figure("overview_scores", "Total scores per assignment", alt,
                          "Students per assignment by their total autograded score, as a share "
                          "of the maximum.",
                          ["assignment", "students", "below_50", "from_50_below_80",
                           "from_80_below_100", "full"], rows))
    if len(report.assignments) > 1:
        counts = report.below_counts
        ks = list(range(len(report.assignments) + 1))
        fig, ax = new_figure(width=6.4, height=3.0)
        ax.bar(ks, [counts.get(k, 0) for k in ks], color=PALETTE[0], width=0.7)
        ax.set_xticks(ks)
        ax.set_xlabel(f"assignments below {100 * report.threshold:g} % (or not submitted)")
        ax.set_ylabel("students")
        ax.yaxis.get_major_locator().set_params(integer=True)
        save_figure(fig, folder / "overview_below")
        rows = [[k, counts.get(k, 0)] for k in ks]
        alt = (f"Bar chart of the students by the number of assignments on which they scored "
               f"below {100 * report.threshold:g} % of the maximum or had no grade: "
               + "; ".join(f"{k}: {counts.get(k, 0)}" for k in ks) + ".")
        figures.append(Figure("overview_below", "Assignments below the threshold", alt,
                              "Students by how many assignments they scored below the "
                              "threshold on (an assignment without a grade counts).",
                              ["assignments_below", "students"], rows))
    return figures


