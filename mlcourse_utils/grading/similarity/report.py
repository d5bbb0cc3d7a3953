"""The similarity report's files: ``similarity.csv``, ``similarity_variants.csv`` and the page.

``similarity.csv`` has one row per flagged pair of answers (:mod:`.pairs`);
``similarity_variants.csv`` one row per notebook that quotes another variant's model numbers
(kind "numbers") or whose id cell holds another student's id (kind "id", :mod:`.numbers`);
``similarity.html`` shows both.

Everything shown comes from students, so the page is rendered from
``templates/similarity.html`` with autoescaping (code appears as text, never as markup) and
has no external assets; CSV cells that a spreadsheet would read as formulas are quoted.
"""

from __future__ import annotations

import csv
import functools
from collections import defaultdict
from pathlib import Path

from ..._files import atomic_open, write_text
from ..text import clean_text, csv_text
from .numbers import VariantFlag
from .pairs import ALL_TASKS, Report

#: Side-by-side sections on the page (the table and the CSV list every flagged row).
MAX_SHOWN = 300
#: Lines and characters shown of one answer.
MAX_LINES = 400
MAX_SHOWN_CHARS = 40_000
#: Colours of matching regions (region number modulo this).
COLOURS = 6

CSV_COLUMNS = ["student_a", "student_b", "task", "score", "shared_fingerprints",
               "matched_tokens", "kind"]
#: ``similarity_variants.csv``: who, "numbers" or "id", the question (a grade_id; empty for
#: "id"), the students whose variant (or id) it is ("; " between them), the numbers quoted
#: ("as written ~ label = model number", "; " between them), and the other variant in words
#: (or the id typed, for "id").
VARIANT_COLUMNS = ["student", "kind", "question", "other_students", "quoted", "detail"]
#: Its file name, beside ``similarity.csv``.
VARIANT_CSV = "similarity_variants.csv"


def write_csv(report: Report, path: Path | str) -> None:
    """One row per flagged pair and task (``student_b`` is "reference" when ``kind`` is)."""
    with atomic_open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(CSV_COLUMNS)
        for m in report.matches:
            w.writerow([csv_text(m.student), csv_text(m.other), csv_text(m.task),
                        f"{m.score:.2f}", m.shared, m.matched, m.kind])


def quoted_text(flag: VariantFlag) -> str:
    """The numbers a flag quotes, in one line (``0.4123 ~ posterior mean = 0.4123; ...``)."""
    return "; ".join(f"{written} ~ {label} = {model}" for written, label, model in flag.quoted)


def write_variant_csv(report: Report, path: Path | str) -> None:
    """One row per notebook flagged by :mod:`.numbers` (:data:`VARIANT_COLUMNS`)."""
    with atomic_open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(VARIANT_COLUMNS)
        for f in report.variant_flags:
            w.writerow([csv_text(f.student), f.kind, csv_text(f.question),
                        csv_text("; ".join(f.others)), csv_text(quoted_text(f)),
                        csv_text(f.detail)])


def _lines(side):
    """(number, text, region or None) for each shown line of one side, and whether it was cut."""
    text = clean_text(side.text, MAX_SHOWN_CHARS)
    lines = text.split("\n")
    cut = len(lines) > MAX_LINES or text.endswith(" [...]")
    return [(i, line, side.lines.get(i)) for i, line in enumerate(lines[:MAX_LINES], 1)], cut


def _groups(matches):
    """Per task, the students linked by flagged student pairs, for groups of three or more."""
    parent = {}

    def find(x):
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for m in matches:
        if m.kind == "student":
            parent[find((m.task, m.other))] = find((m.task, m.student))
    members = defaultdict(list)
    for key in list(parent):
        members[find(key)].append(key[1])
    groups = [(root[0], sorted(names)) for root, names in members.items() if len(names) >= 3]
    return sorted(groups, key=lambda g: (g[0] == ALL_TASKS, g[0], -len(g[1]), g[1]))


@functools.lru_cache(maxsize=1)
def _template():
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(Path(__file__).parents[1] / "templates"),
        autoescape=True, trim_blocks=True, lstrip_blocks=True, undefined=jinja2.StrictUndefined)
    return env.get_template("similarity.html")


def write_html(report: Report, path: Path | str) -> None:
    """The page: summary, flagged rows, then the code of each side by side, regions coloured."""
    shown = []
    for number, m in enumerate(report.matches[:MAX_SHOWN], 1):
        sides = None if m.a is None else [(side, *_lines(side)) for side in (m.a, m.b)]
        shown.append((number, m, sides))
    page = _template().render(
        report=report, shown=shown, groups=_groups(report.matches), all_tasks=ALL_TASKS,
        colours=COLOURS, max_shown=MAX_SHOWN, quoted_text=quoted_text, variant_csv=VARIANT_CSV,
        n_pairs=sum(m.kind == "student" for m in report.matches),
        n_reference=sum(m.kind == "reference" for m in report.matches))
    write_text(path, page)


def write_report(report: Report, out: Path | str) -> tuple[Path, Path]:
    """``out/similarity.csv``, ``out/similarity_variants.csv`` and ``out/similarity.html``
    (returns the first and the page)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    write_csv(report, out / "similarity.csv")
    write_variant_csv(report, out / VARIANT_CSV)
    write_html(report, out / "similarity.html")
    return out / "similarity.csv", out / "similarity.html"
