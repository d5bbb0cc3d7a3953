"""The class report (``mlcourse report``): what a class got wrong, as an offline page with figures.

From one or more graded folders (read by :mod:`.graded.folder`),
:func:`.class_stats.build_report` computes for each assignment

* the distribution of total and task scores (mean, median, shares of full, partial and zero);
* the checks that failed most often, in the words the feedback uses (each test cell's
  description), counted over the students who attempted the task (a check on which the
  function ran out of time counts as failed, "timed out");
* the tasks lost to a timeout, in the function or while its cell defined it (about the answer:
  counted in the task's statistics, never offered as a regrade);
* the task points a teaching assistant set (``overrides.csv``): task scores, totals and the
  item analysis use them;
* an item analysis per task: difficulty (mean score / max) and discrimination (the correlation
  of the task score with the rest of the assignment), with flags for tasks that nearly everyone
  fails and for tasks the strongest students fail as often as the weakest;
* the failures that are not about the answer (the total time and memory limits, refused or
  unreadable notebooks, forbidden calls, delegation, tampering, late penalties when a due-date
  configuration is given);
* manual-grading progress per manually graded cell;
* the notebooks whose id cell does not hold the id they were handed in under (another
  student's id, or an empty, malformed or missing id cell: the anonymous copy counts them);

and across assignments the students below a threshold on two or more. :func:`write_report` writes
``DIR/index.html`` (no script, no network: a content security policy allows only the files next
to it), ``DIR/report.css``, every figure as SVG and PNG with the numbers behind it as CSV in
``DIR/figures/``, and the tables as CSV in ``DIR/tables/``. With ``anonymous=True`` the output
holds aggregates only: no student id, no reason text, no link to a feedback page.
"""

from __future__ import annotations

import csv
import os
import shutil
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from ..._files import atomic_open, write_bytes, write_text
from ..graded.folder import read_graded_folder
from ..graded.model import GradedFolderError
from ..graded.out import RESULTS
from ..graded.reasons import CATEGORIES
from ..graded.results import ID_PROBLEMS
from ..text import csv_text
from .class_figures import (
    check_words,
    failures_figure,
    items_figure,
    num,
    overview_figures,
    pct,
    scores_figure,
    tasks_figure,
)
from .class_model import (
    DEFAULT_THRESHOLD,
    MIN_STUDENTS,
    NEARLY_ALL_FAIL,
    SAME_RATE_MARGIN,
    TOP_CHECKS,
    AssignmentReport,
    ClassReport,
    ReportError,
)
from .class_stats import build_report

# ------------------------------------------------------------------ writing


def _cell(value: Any) -> Any:
    """A CSV cell: numbers as they are, text as a spreadsheet shows text (no formulas)."""
    if isinstance(value, str):
        try:
            float(value)
        except ValueError:
            return csv_text(value)
    return value


def _write_csv(path: Path, header: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    with atomic_open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        for row in rows:
            w.writerow([_cell(v) for v in row])


def _tables(r: AssignmentReport, folder: Path, anonymous: bool) -> None:
    """The CSV files of an assignment's tables (per student only in the instructor's copy)."""
    _write_csv(folder / f"{r.slug}_tasks.csv",
               ["task", "max_score", "students", "mean", "median", "full", "partial", "zero",
                "difficulty", "discrimination", "fail_top_third", "fail_bottom_third", "flags",
                "lost_to_a_timeout", "overridden"],
               [[t.task, num(t.max_score), t.n, num(t.mean, 4), num(t.median, 4), t.full,
                 t.partial, t.zero, num(t.difficulty, 4), num(t.discrimination, 4),
                 num(t.fail_top, 4), num(t.fail_bottom, 4), "; ".join(t.flags), t.timed_out,
                 t.overridden] for t in r.tasks])
    _write_csv(folder / f"{r.slug}_checks.csv",
               ["task", "check", "kind", "description", "points", "attempted", "failed",
                "wrong_result", "raised_error", "timed_out", "not_attempted",
                "lost_not_for_the_answer"],
               [[c.check.task, c.check.grade_id, c.check.kind, c.check.description,
                 num(c.check.points), c.attempted, c.failed, c.wrong, c.raised, c.timed_out,
                 c.not_attempted, c.not_answer] for c in r.checks])
    _write_csv(folder / f"{r.slug}_not_the_answer.csv", ["category", "what", "students"],
               [[k, CATEGORIES.get(k, "late penalty"), n]
                for k, n in r.failure_counts().items()])
    _write_csv(folder / f"{r.slug}_manual.csv", ["cell", "points", "answers", "with_points",
                                                  "source"],
               [[m.grade_id, num(m.points), m.total, "" if m.graded is None else m.graded,
                 m.source] for m in r.graded.manual])
    if anonymous:
        return
    _write_csv(folder / f"{r.slug}_not_the_answer_students.csv",
               ["student_id", "category", "task", "reason"],
               [[f.student, f.category, f.task, f.reason] for f in r.failures])
    _write_csv(folder / f"{r.slug}_ids.csv", ["student_id", "problem", "typed_id"],
               [[f.student, f.problem, f.typed or ""] for f in r.ids])
    _write_csv(folder / f"{r.slug}_timeouts.csv", ["student_id", "task", "where", "reason"],
               [[x.student, x.task, x.where, x.reason] for x in r.timeouts])
    _write_csv(folder / f"{r.slug}_overrides.csv",
               ["student_id", "task", "points", "autograded", "reason"],
               [[o.student, o.task, num(o.points), num(o.autograded), o.reason]
                for o in r.overrides])
    if r.late.available:
        _write_csv(folder / f"{r.slug}_late.csv",
                   ["student_id", "submitted", "deadline", "days_late", "penalty_percent"],
                   [[s, when, due, days, num(pct)] for s, when, due, days, pct in r.late.entries])


def _template():
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(Path(__file__).parents[1] / "templates"),
        autoescape=True, trim_blocks=True, lstrip_blocks=True, undefined=jinja2.StrictUndefined)
    env.filters["pct"] = pct
    env.filters["num"] = num
    env.filters["words"] = check_words
    return env.get_template("class_report.html")


def write_report(report: ClassReport, out: Path | str, anonymous: bool = False) -> Path:
    """Write the report into ``out`` (see the module docstring); returns ``out/index.html``.

    Files of an earlier report in ``out`` (``index.html``, ``report.css``, ``figures/``,
    ``tables/``) are replaced, so an anonymous copy never keeps an instructor's file.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    for sub in ("figures", "tables"):
        if (out / sub).is_dir():
            shutil.rmtree(out / sub)
        (out / sub).mkdir()
    figures_dir, tables_dir = out / "figures", out / "tables"
    overview = overview_figures(report, figures_dir)
    sections = []
    for r in report.assignments:
        figs = [scores_figure(r, figures_dir), tasks_figure(r, figures_dir),
                items_figure(r, figures_dir)]
        failures = failures_figure(r, figures_dir)
        if failures is not None:
            figs.append(failures)
        _tables(r, tables_dir, anonymous)
        sections.append((r, {f.slug.removeprefix(f"{r.slug}_"): f for f in figs}))
    for fig in overview + [f for _, figs in sections for f in figs.values()]:
        _write_csv(figures_dir / f"{fig.slug}.csv", fig.header, fig.rows)
    if not anonymous and report.at_risk:
        _write_csv(tables_dir / "at_risk.csv",
                   ["student_id", *[r.name for r in report.assignments]],
                   [[s, *["" if f is None else num(f, 4) for f in fs]]
                    for s, fs in report.at_risk.items()])
    write_bytes(out / "report.css",
                (Path(__file__).parents[1] / "templates" / "class_report.css").read_bytes())

    def feedback_link(r: AssignmentReport, student: str) -> str | None:
        page = r.graded.students[student].feedback
        if anonymous or page is None:
            return None
        return Path(os.path.relpath(page.resolve(), out.resolve())).as_posix()

    page = _template().render(
        report=report, sections=sections, overview=overview, anonymous=anonymous,
        categories=CATEGORIES, top_checks=TOP_CHECKS, feedback_link=feedback_link,
        nearly_all=NEARLY_ALL_FAIL, min_students=MIN_STUDENTS,
        margin=SAME_RATE_MARGIN, results_file=RESULTS, id_problems=ID_PROBLEMS)
    write_text(out / "index.html", page)
    return out / "index.html"


def make_report(graded_dirs: Sequence[Path | str], out: Path | str, *, anonymous: bool = False,
                threshold: float = DEFAULT_THRESHOLD, config_path: Path | str | None = None,
                root: Path | str | None = None) -> ClassReport:
    """Read the graded folders, build the report and write it (``mlcourse report``).

    Raises :class:`~.graded.folder.GradedFolderError` for a folder that is not a graded
    folder, ReportError for folders that do not fit together, ValueError for a bad
    configuration.
    """
    from ..graded.late import read_config

    folders = [read_graded_folder(d, root) for d in graded_dirs]
    if config_path is None:
        config, note = None, ("no due-date configuration was given: add --config DUE.toml "
                              "(the file `mlcourse export` reads) to see late penalties")
    else:
        config, note = read_config(config_path), ""
    report = build_report(folders, threshold, config, note)
    write_report(report, out, anonymous=anonymous)
    return report


#: What `mlcourse report` uses; the statistics are in :mod:`.class_stats`, the data model in
#: :mod:`.class_model`, the figures in :mod:`.class_figures`.
__all__ = ["GradedFolderError", "ReportError", "make_report", "write_report"]
