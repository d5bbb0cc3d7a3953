"""Manual grading: a page of every student's answer per cell, the points read back (grade-import).

``mlcourse grade`` calls :func:`write_bundle`, which writes into ``OUT/manual/``:

* ``<grade_id>.html``: the rubric (the instructor's cell: what lies between nbgrader's
  ``=== BEGIN MARK SCHEME ===`` / ``=== END MARK SCHEME ===`` markers, or else the whole model
  answer with its grading notes) and every student's answer, one after another. Markdown is
  rendered with markdown-it-py with raw HTML switched off (a student's HTML shows as text),
  then sanitised with bleach; images are shown only when embedded (PNG, JPEG, GIF or WebP data
  checked by their first bytes, e.g. pasted attachments), never fetched; math is typeset by the
  offline MathJax of sphinx-mathjax-offline copied next to the page, with the book's macros; a
  Content-Security-Policy forbids every request but the local script.
* ``<grade_id>.csv``: ``student_id, grade_id, points, comment`` with one row per student and
  the points left blank, for the teaching assistant to fill in.

``mlcourse grade-import OUT FILLED.csv ...`` (:func:`import_points`) checks every row (known
student, manually graded cell, points a number within 0..max, no contradicting duplicates)
before it writes anything, then sets each grade's ``manual_score`` (and comment) and clears
``needs_manual_grade``, so that ``nbgrader export`` totals autograded and manual points.
"""

from __future__ import annotations

import base64
import csv
import functools
import importlib.util
import json
import math
import os
import re
import shutil
import sys
import warnings
from collections.abc import Collection, Iterable, Mapping
from pathlib import Path
from typing import Any

from .notebook import Assignment, cell_source, grade_id, is_manual_cell, read_notebook_cells
from .protocol import clean_text
from .report import csv_text
from .submissions import Refused, read_submitted_file

MARK_SCHEME = re.compile(r"^[ \t]*=+[ \t]*BEGIN MARK SCHEME[ \t]*=+[ \t]*$(.*?)"
                         r"^[ \t]*=+[ \t]*END MARK SCHEME[ \t]*=+[ \t]*$", re.M | re.S)
#: Longest answer shown (characters) and largest embedded image (bytes).
MAX_ANSWER = 100_000
MAX_IMAGE = 2 * 2**20
_IMAGE_MAGIC = {"image/png": b"\x89PNG\r\n\x1a\n", "image/jpeg": b"\xff\xd8\xff",
                "image/gif": b"GIF8", "image/webp": b"RIFF"}
_DATA_IMAGE = re.compile(r"data:(image/(?:png|jpeg|gif|webp));base64,([A-Za-z0-9+/=\s]+)\Z")
MATHJAX_FILE = "tex-svg-full.js"

ALLOWED_TAGS = {"p", "br", "hr", "em", "strong", "code", "pre", "blockquote", "ul", "ol", "li",
                "h1", "h2", "h3", "h4", "h5", "h6", "a", "img", "table", "thead", "tbody",
                "tr", "th", "td", "span", "div", "del", "s"}


def _safe_image(mime, data):
    """``data`` (base64 text) as a data URI when it decodes to an image of type ``mime``."""
    if mime not in _IMAGE_MAGIC or not isinstance(data, str) or len(data) > MAX_IMAGE * 4 // 3 + 8:
        return None
    try:
        raw = base64.b64decode("".join(data.split()), validate=True)
    except ValueError:
        return None
    if not raw.startswith(_IMAGE_MAGIC[mime]) or len(raw) > MAX_IMAGE:
        return None
    if mime == "image/webp" and raw[8:12] != b"WEBP":
        return None
    return f"data:{mime};base64,{base64.b64encode(raw).decode('ascii')}"


def _allowed_attribute(tag, name, value):
    if tag == "a":
        return name in ("href", "title") and (name != "href" or value.startswith(
            ("http://", "https://", "mailto:", "#")))
    if tag == "img":
        if name == "src":
            match = _DATA_IMAGE.match(value)
            return bool(match) and _safe_image(match.group(1), match.group(2)) is not None
        return name in ("alt", "title")
    return tag in ("span", "div") and name == "class" and value in ("math", "math display")


@functools.lru_cache(maxsize=1)
def _markdown():
    from markdown_it import MarkdownIt
    from mdit_py_plugins.dollarmath import dollarmath_plugin

    md = MarkdownIt("commonmark", {"html": False}).enable("table")
    md.use(dollarmath_plugin, allow_space=True, double_inline=True)
    from markdown_it.common.utils import escapeHtml as escape

    md.add_render_rule("math_inline",
                       lambda self, tokens, i, options, env:
                       f'<span class="math">\\({escape(tokens[i].content)}\\)</span>')
    for rule in ("math_block", "math_inline_double", "math_block_label"):
        md.add_render_rule(rule, lambda self, tokens, i, options, env:
                           f'<div class="math display">\\[{escape(tokens[i].content)}\\]</div>')
    return md


def render_markdown(text: str, attachments: Mapping[str, Any] | None = None) -> str:
    """Untrusted Markdown as safe HTML: no raw HTML, no remote images, sanitised by bleach.

    ``attachments`` (a notebook cell's) supply images referenced as ``attachment:NAME``.
    """
    import bleach

    text = clean_text(text, MAX_ANSWER)

    def attachment(match):
        item = (attachments or {}).get(match.group(1))
        if isinstance(item, dict):
            for mime, data in item.items():
                uri = _safe_image(mime, data)
                if uri:
                    return f"({uri})"
        return "(#attachment-not-shown)"

    text = re.sub(r"\(attachment:([^)\s]{1,200})\)", attachment, text)
    html = _markdown().render(text)
    return bleach.clean(html, tags=ALLOWED_TAGS, attributes=_allowed_attribute,
                        protocols=["http", "https", "mailto", "data"], strip=True)


def _outputs_text(cell):
    """What a code cell printed (text only, cleaned) and its images (as safe data URIs)."""
    texts, images = [], []
    outputs = cell.get("outputs")
    for out in outputs if isinstance(outputs, list) else []:
        if not isinstance(out, dict):
            continue
        if out.get("output_type") == "stream":
            texts.append(out.get("text"))
        data = out.get("data") if isinstance(out.get("data"), dict) else {}
        for mime in ("image/png", "image/jpeg", "image/gif"):
            uri = _safe_image(mime, data.get(mime)) if mime in data else None
            if uri:
                images.append(uri)
                break
        else:
            if "text/plain" in data:
                texts.append(data["text/plain"])
    text = "".join("".join(t) if isinstance(t, list) else t if isinstance(t, str) else ""
                   for t in texts)
    return clean_text(text, 20_000), images[:10]


def rubric(cell: Mapping[str, Any]) -> tuple[str, str]:
    """``(kind, source)`` of the instructor's cell: the mark scheme if marked, else the answer."""
    source = cell_source(cell)
    schemes = MARK_SCHEME.findall(source)
    if schemes:
        return "mark scheme", "\n\n".join(s.strip("\n") for s in schemes)
    return "model answer and grading notes", source


def _answers(path, gid):
    """A student's cells with ``grade_id == gid`` (the manually graded ones) from a notebook."""
    if path is None:
        return None, "nothing was submitted"
    if isinstance(path, Refused):
        return None, path.reason
    try:
        cells = read_notebook_cells(read_submitted_file(path))
    except (ValueError, UnicodeDecodeError) as exc:
        return None, f"the notebook could not be read ({clean_text(str(exc), 200)})"
    found = [c for c in cells if grade_id(c) == gid and is_manual_cell(c)]
    if not found:
        return None, "the notebook has no answer cell with this id (deleted or altered)"
    return found, None


def _student_answer(path, gid):
    cells, reason = _answers(path, gid)
    if cells is None:
        return {"missing": reason}
    parts = []
    for cell in cells:
        source = cell_source(cell)
        if cell.get("cell_type") == "markdown":
            attachments = (cell.get("attachments")
                           if isinstance(cell.get("attachments"), dict) else {})
            parts.append({"html": render_markdown(source, attachments)})
        else:
            text, images = _outputs_text(cell)
            parts.append({"code": clean_text(source, MAX_ANSWER), "output": text, "images": images})
    unchanged = all(cell_source(c).strip() in ("", "YOUR ANSWER HERE") for c in cells)
    return {"parts": parts, "unchanged": unchanged}


def _mathjax_source():
    spec = importlib.util.find_spec("sphinx-mathjax-offline")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / "static" / "mathjax" / MATHJAX_FILE
    return path if path.is_file() else None


def _macros(root):
    """The book's MathJax macros (``_config.yml``), so that students may use them too."""
    import yaml

    try:
        config = yaml.safe_load((Path(root) / "_config.yml").read_text(encoding="utf-8"))
        macros = config["sphinx"]["config"]["mathjax3_config"]["tex"]["macros"]
        return {str(k): v for k, v in macros.items() if isinstance(v, (str, list))}
    except (OSError, KeyError, TypeError, AttributeError):
        return {}


@functools.lru_cache(maxsize=1)
def _template():
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(Path(__file__).with_name("templates")),
        autoescape=True, trim_blocks=True, lstrip_blocks=True, undefined=jinja2.StrictUndefined)
    env.filters["points"] = lambda x: f"{x:g}"
    return env.get_template("manual.html")


def write_bundle(out: Path | str, assignment: Assignment,
                 sources: Mapping[str, Path | str | Refused | None],
                 root: Path | str) -> list[Path]:
    """Write ``out/manual/<grade_id>.html`` and ``.csv`` for each manually graded cell.

    ``sources`` maps every student to their notebook (a path read as hostile data), None or a
    :class:`Refused`. Returns the written pages (empty when the assignment has no manual cell).
    """
    if not assignment.manual:
        return []
    out = Path(out)
    folder = out / "manual"
    folder.mkdir(parents=True, exist_ok=True)
    solution = Path(root) / "solutions" / assignment.name / assignment.notebook
    instructor = {grade_id(c): c for c in read_notebook_cells(solution.read_bytes())
                  if is_manual_cell(c)}
    mathjax = _mathjax_source()
    if mathjax is not None:
        (folder / "mathjax").mkdir(exist_ok=True)
        shutil.copyfile(mathjax, folder / "mathjax" / MATHJAX_FILE)
    config = json.dumps({"tex": {"macros": _macros(root), "inlineMath": [["\\(", "\\)"]],
                                 "displayMath": [["\\[", "\\]"]]}}).replace("</", "<\\/")
    written = []
    students = sorted(sources)
    for gid, max_points in assignment.manual:
        cell = instructor.get(gid, {})
        kind, scheme = rubric(cell)
        if cell.get("cell_type") == "code":
            scheme_html = None
            scheme_code = scheme
        else:
            scheme_html, scheme_code = render_markdown(scheme, None), None
        answers = [(s, _student_answer(sources[s], gid)) for s in students]
        page = _template().render(
            assignment=assignment, grade_id=gid, max_points=max_points, rubric_kind=kind,
            rubric_html=scheme_html, rubric_code=scheme_code, answers=answers,
            mathjax=f"mathjax/{MATHJAX_FILE}" if mathjax else None, mathjax_config=config,
            csv_name=f"{gid}.csv")
        (folder / f"{gid}.html").write_text(page, encoding="utf-8")
        with open(folder / f"{gid}.csv", "w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh)
            w.writerow(["student_id", "grade_id", "points", "comment"])
            for student in students:
                w.writerow([csv_text(student), gid, "", ""])
        written.append(folder / f"{gid}.html")
    return written


def write_extras(out: Path | str, assignment: Assignment,
                 sources: Mapping[str, Path | str | Refused | None], root: Path | str) -> None:
    """What `mlcourse grade` writes for the people after it: the manual-grading pages
    (:func:`write_bundle`) and the submission times for the late policy
    (:func:`mlcourse_utils.grading.lms.write_timestamps`)."""
    from .lms import write_timestamps

    write_timestamps(out, sources)
    write_bundle(out, assignment, sources, root)


def merge_extras(outs: Iterable[Path | str], out: Path | str, assignment: Assignment,
                 results: Iterable[str], root: Path | str) -> None:
    """:func:`write_extras` for ``mlcourse grade-merge``: the shards' times, and the pages from
    the sanitised notebook copies under ``out/autograded``."""
    from .lms import merge_timestamps

    merge_timestamps(outs, out)
    copies = {}
    for student in results:
        copy = Path(out) / "autograded" / student / assignment.name / assignment.notebook
        copies[student] = copy if copy.is_file() else None
    write_bundle(out, assignment, copies, root)


# ------------------------------------------------------------------ grade-import


class FilledCsvError(ValueError):
    """A filled CSV that cannot be imported (every problem, one per line)."""


def _parse_points(text):
    try:
        value = float(str(text).strip().replace(",", "."))
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def read_filled(paths: Iterable[Path | str], students: Collection[str],
                manual: Mapping[str, float]) -> dict[tuple[str, str], tuple[float, str]]:
    """Rows of filled CSVs as ``{(student, grade_id): (points, comment)}``; blank points skipped.

    ``students``: the graded ids; ``manual``: ``{grade_id: max points}``. Raises
    :class:`FilledCsvError` listing every bad row (nothing is imported then).
    """
    by_cell_text = {csv_text(s): s for s in students}
    by_cell_text.update({s: s for s in students})
    rows, problems = {}, []
    for path in paths:
        try:
            with open(path, newline="", encoding="utf-8-sig") as fh:
                reader = csv.DictReader(fh)
                missing = {"student_id", "grade_id", "points"} - set(reader.fieldnames or [])
                if missing:
                    problems.append(f"{path}: missing column(s) {', '.join(sorted(missing))}")
                    continue
                for line, row in enumerate(reader, start=2):
                    where = f"{path}, line {line}"
                    raw_student = (row.get("student_id") or "").strip()
                    gid = (row.get("grade_id") or "").strip()
                    points_text = (row.get("points") or "").strip()
                    comment = clean_text(row.get("comment") or "", 5000).strip()
                    if not raw_student and not gid and not points_text:
                        continue
                    student = by_cell_text.get(raw_student)
                    if student is None:
                        problems.append(
                            f"{where}: unknown student {clean_text(raw_student, 100)!r}")
                        continue
                    if gid not in manual:
                        problems.append(f"{where}: {clean_text(gid, 100)!r} is not a manually "
                                        "graded cell (expected one of "
                                        f"{', '.join(sorted(manual))})")
                        continue
                    if not points_text:
                        continue  # not graded yet
                    points = _parse_points(points_text)
                    if points is None or not 0 <= points <= manual[gid]:
                        problems.append(f"{where}: points {clean_text(points_text, 30)!r} for "
                                        f"{student} must be a number from 0 to {manual[gid]:g}")
                        continue
                    key = (student, gid)
                    if key in rows and rows[key][0] != points:
                        problems.append(f"{where}: {student} / {gid} already has {rows[key][0]:g} "
                                        f"points in another row")
                        continue
                    rows[key] = (points, comment)
        except OSError as exc:
            problems.append(f"{path}: cannot be read ({exc.strerror})")
        except (UnicodeDecodeError, csv.Error) as exc:
            problems.append(f"{path}: not a UTF-8 CSV file ({clean_text(str(exc), 200)})")
    if problems:
        raise FilledCsvError("\n".join(problems))
    return rows


def import_points(graded: Path | str, paths: Iterable[Path | str]) -> dict[str, int]:
    """Load filled CSVs into ``graded/gradebook.db``; return ``{grade_id: rows imported}``.

    Raises ValueError (:class:`FilledCsvError`) naming every bad row; nothing is written then.
    """
    from .gradebook import _alembic_head_in_process
    from .report import read_results

    graded = Path(graded)
    name = read_results(graded).name
    db = graded / "gradebook.db"
    if not db.is_file():
        raise FilledCsvError(f"{db} does not exist: was {graded} written by `mlcourse grade`?")
    scripts = str(Path(sys.executable).parent)
    if scripts not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = scripts + os.pathsep + os.environ.get("PATH", "")
    import nbgrader.api
    from nbgrader.api import Gradebook, MissingEntry

    _alembic_head_in_process(nbgrader.api)
    counts = {}
    with warnings.catch_warnings(), Gradebook(f"sqlite:///{db}") as gb:
        warnings.simplefilter("ignore")
        assignment = gb.find_assignment(name)
        if len(assignment.notebooks) != 1:
            raise FilledCsvError(f"{db}: expected one notebook in {name}")
        notebook = assignment.notebooks[0]
        solution_ids = {c.name for c in notebook.solution_cells}
        manual = {c.name: float(c.max_score) for c in notebook.grade_cells
                  if c.name in solution_ids}
        students = [s.id for s in gb.students]
        rows = read_filled(paths, students, manual)
        for (student, gid), (points, comment) in sorted(rows.items()):
            try:
                grade = gb.find_grade(gid, notebook.name, name, student)
            except MissingEntry:
                raise FilledCsvError(f"{student} has no submission of {name} in {db}") from None
            grade.manual_score = points
            grade.needs_manual_grade = False
            if comment:
                try:
                    gb.find_comment(gid, notebook.name, name, student).manual_comment = comment
                except MissingEntry:
                    pass  # nbgrader keeps comments only for cells it registered as such
            counts[gid] = counts.get(gid, 0) + 1
        gb.db.commit()
    return counts
