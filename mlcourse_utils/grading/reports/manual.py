"""Manual grading: a page of every student's answer per cell, the points read back (grade-import).

Each student's answers are rendered into an HTML fragment (:func:`.answers.answer_fragment`) by
the child process that reads their notebook (:mod:`.analysis`), within that student's limits;
then :func:`write_bundle` writes into ``OUT/manual/``:

* ``<grade_id>.html``: the rubric (the instructor's cell: what lies between nbgrader's
  ``=== BEGIN MARK SCHEME ===`` / ``=== END MARK SCHEME ===`` markers, or else the whole model
  answer with its grading notes, nbgrader's marker lines removed) and every student's answer,
  one after another (a student whose notebook could not be read gets the reason in its place),
  each with a points field and a comment box: the page's own script (``grading.js``, copied
  beside it) keeps what is typed in the browser and saves it as ``<grade_id>.csv``, the file
  ``grade-import`` reads. This page is the manual-grading route (it works offline, from the
  file system; nbgrader's formgrader is not used). Math is typeset by the offline
  MathJax of sphinx-mathjax-offline copied next to the page, with the book's macros and its
  safe filter, only inside the answers' math elements and without the ``html`` package (so
  ``\\href`` makes no link); a Content-Security-Policy forbids every request but the local
  script files, and every inline script (so no ``javascript:`` link or event handler runs).
  Beside each answer to a question that varies (:data:`~..variants.QUESTIONS`), the student's
  variant in words and the model answer's numbers for it (:mod:`.model_numbers`: the
  instructor reference's ``variant_numbers``, once per distinct variant), chosen by the id the
  student is graded under (the roster's, never the one typed in the notebook); when the
  assignment's variants are off, the default variant's numbers once at the top.
* ``<grade_id>.csv``: ``student_id, grade_id, points, comment`` with one row per student and
  the points left blank, for the teaching assistant to fill in.

``mlcourse grade-import OUT FILLED.csv ...`` (:func:`import_points`) checks every row (known
student, manually graded cell, points a number within 0..max, no contradicting duplicates)
before it writes anything, then sets each grade's ``manual_score`` (and comment) and clears
``needs_manual_grade``, so that ``nbgrader export`` totals autograded and manual points.
:func:`read_manual_grades` reads them back for the feedback pages. A teaching assistant's work in
a graded folder (:func:`teaching_assistant_work`: filled CSVs, imported points) is never replaced
by grading again; :func:`set_aside` moves it to ``OUT/kept/`` when the grader is forced.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import os
import re
from collections.abc import Collection, Iterable, Mapping
from pathlib import Path
from typing import Any

from ..._files import atomic_open, write_bytes, write_text
from ..graded import gradebook, overrides
from ..graded.out import OutFolder
from ..notebook import (
    Assignment,
    cell_source,
    grade_id,
    is_manual_cell,
    read_notebook_cells,
    strip_nbgrader_markers,
)
from ..sandbox.requirements import INSTALL, MATHJAX_FILE, mathjax_files
from ..text import clean_text, csv_text, from_csv_text, parse_points, plural
from .answers import environment, render_markdown
from .model_numbers import ModelNumbers

MARK_SCHEME = re.compile(r"^[ \t]*=+[ \t]*BEGIN MARK SCHEME[ \t]*=+[ \t]*$(.*?)"
                         r"^[ \t]*=+[ \t]*END MARK SCHEME[ \t]*=+[ \t]*$", re.M | re.S)
#: The page's own script: points and comments entered in the page, saved as the CSV.
GRADING_SCRIPT = "grading.js"


def rubric(cell: Mapping[str, Any]) -> tuple[str, str]:
    """``(kind, source)`` of the instructor's cell: the mark scheme if marked, else the answer."""
    source = cell_source(cell)
    schemes = MARK_SCHEME.findall(source)
    if schemes:
        return "mark scheme", "\n\n".join(s.strip("\n") for s in schemes)
    return "model answer and grading notes", strip_nbgrader_markers(source)


def _macros(root):
    """The book's MathJax macros (``_config.yml``), so that students may use them too."""
    from ...config import read_config

    try:
        config = read_config(root)
        macros = config["sphinx"]["config"]["mathjax3_config"]["tex"]["macros"]
        return {str(k): v for k, v in macros.items() if isinstance(v, (str, list))}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}


def _mathjax_config(root):
    """MathJax's settings, as a script file: typeset only the math of ``class="math"`` elements,
    with the safe filter (no ``javascript:``, ``data:`` or ``file:`` links, safe classes and
    styles), without the packages that change the page (``html``) or load code (``require``)."""
    config = {
        "loader": {"load": ["ui/safe"]},
        "tex": {"macros": _macros(root), "inlineMath": [["\\(", "\\)"]],
                "displayMath": [["\\[", "\\]"]],
                "packages": {"[-]": ["html", "require", "setoptions"]}},
        "options": {"ignoreHtmlClass": "mathjax-ignore", "processHtmlClass": "math",
                    "enableMenu": False,
                    "safeOptions": {"allow": {"URLs": "safe", "classes": "safe",
                                              "cssIDs": "safe", "styles": "safe"},
                                    "safeProtocols": {"http": True, "https": True,
                                                      "file": False, "javascript": False,
                                                      "data": False}}},
    }
    return "window.MathJax = " + json.dumps(config, indent=1) + ";\n"


class _Answer:
    """One student's fragment on disk, read only when the page is written (pages stream)."""

    def __init__(self, path: Path | None, missing: str) -> None:
        self.path, self.missing = path, missing

    @property
    def html(self) -> str:
        try:
            return self.path.read_text(encoding="utf-8")
        except OSError as exc:
            return f'<p class="missing">The answer could not be shown ({exc.strerror}).</p>'


def write_bundle(out: Path | str, assignment: Assignment, students: Iterable[str],
                 root: Path | str, parts: Path | str, failed: Mapping[str, str]) -> list[Path]:
    """Write ``out/manual/<grade_id>.html`` and ``.csv`` for each manually graded cell.

    ``students`` in order; the n-th one's rendered answers are ``parts/<n>/<k>.html`` (k: the
    cell's position in ``assignment.manual``, written by :func:`~.analysis.render_pages`), and
    ``failed`` gives the reason for a student without them (no notebook, or one that could not
    be read): that reason stands in place of the answer, every other answer is shown. Pages are
    written piece by piece, so memory does not grow with the class. Returns the written pages
    (empty when the assignment has no manual cell).
    """
    if not assignment.manual:
        return []
    out, parts = Path(out), Path(parts)
    folder = OutFolder(out).manual
    folder.mkdir(parents=True, exist_ok=True)
    solution = Path(root) / "solutions" / assignment.name / assignment.notebook
    instructor = {grade_id(c): c for c in read_notebook_cells(solution.read_bytes())
                  if is_manual_cell(c)}
    _write_assets(folder, root)
    students = list(students)
    models = ModelNumbers(root, assignment.name, assignment.variants)
    written = []
    for k, (gid, max_points) in enumerate(assignment.manual):
        answers = []
        for n, student in enumerate(students):
            fragment = parts / str(n) / f"{k}.html"
            if fragment.is_file():
                answer = _Answer(fragment, "")
            else:
                answer = _Answer(None, failed.get(student, "the answer could not be read"))
            answers.append((student, answer, *_student_numbers(models, gid, student)))
        _write_page(OutFolder(out), assignment, gid, max_points, instructor.get(gid, {}), answers,
                    _class_numbers(models, gid))
        with atomic_open(OutFolder(out).manual_csv(gid), "w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh)
            w.writerow(["student_id", "grade_id", "points", "comment"])
            for student in students:
                w.writerow([csv_text(student), gid, "", ""])
        written.append(OutFolder(out).manual_page(gid))
    return written


def _student_numbers(models: ModelNumbers, gid: str, student: str) -> tuple[Any, str | None]:
    """``(numbers, note)`` shown beside one student's answer to ``gid``: the model numbers of
    the variant of the student graded as ``student`` (the roster's id decides it, never the id
    typed in the notebook) and why that is the default variant (a malformed id); ``(None,
    None)`` when the question does not vary or the assignment's variants are off."""
    if not models.varies(gid) or not models.enabled:
        return None, None
    chosen = models.variant(student)
    note = (f"the default variant: the id it is graded under is not a course id "
            f"({chosen.problem})" if chosen.problem else None)
    return models.numbers(gid, chosen.question(gid)), note


def _class_numbers(models: ModelNumbers, gid: str) -> Any:
    """The default variant's model numbers, said once at the top of the page of a question
    that varies when the assignment's variants are off (None otherwise)."""
    if not models.varies(gid) or models.enabled:
        return None
    return models.numbers(gid, models.variant(None).question(gid))


def _write_assets(folder: Path, root: Path | str) -> None:
    """What every manual-grading page in ``folder`` loads: the offline MathJax, its
    configuration (the course's macros) and the page's script."""
    files = mathjax_files()
    if files is None:
        raise ValueError("the manual-grading pages need the offline MathJax of "
                         f"sphinx-mathjax-offline: {INSTALL}")
    for name, path in files.items():
        (folder / "mathjax" / name).parent.mkdir(parents=True, exist_ok=True)
        write_bytes(folder / "mathjax" / name, path.read_bytes())
    write_text(folder / "mathjax" / "config.js", _mathjax_config(root))
    write_bytes(folder / GRADING_SCRIPT,
                (Path(__file__).parents[1] / "templates" / GRADING_SCRIPT).read_bytes())


def _write_page(out: OutFolder, assignment: Assignment, gid: str, max_points: float, cell: Any,
                answers: list[tuple[str, _Answer, Any, str | None]],
                class_numbers: Any = None) -> None:
    """The manual page of ``gid`` in ``out``: the rubric of the instructor's ``cell`` and every
    answer (with its variant's model numbers, :func:`_student_numbers`), written piece by
    piece; ``class_numbers``: the default variant's, shown once (variants off)."""
    kind, scheme = rubric(cell)
    if cell.get("cell_type") == "code":
        scheme_html, scheme_code = None, scheme
    else:
        scheme_html, scheme_code = render_markdown(scheme, None), None
    stream = environment().get_template("manual.html").generate(
        assignment=assignment, grade_id=gid, max_points=max_points, rubric_kind=kind,
        rubric_html=scheme_html, rubric_code=scheme_code, answers=answers,
        mathjax_config="mathjax/config.js", mathjax=f"mathjax/{MATHJAX_FILE}",
        csv_name=out.manual_csv(gid).name, script=GRADING_SCRIPT, csv_text=csv_text,
        class_numbers=class_numbers)
    with atomic_open(out.manual_page(gid), "w", encoding="utf-8") as fh:
        for piece in stream:
            fh.write(piece)


# ------------------------------------------------------------------ grade-import


class FilledCsvError(ValueError):
    """A filled CSV that cannot be imported (every problem, one per line)."""


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
                    comment = from_csv_text(clean_text(row.get("comment") or "", 5000).strip())
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
                    points = parse_points(points_text)
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


@dataclasses.dataclass
class Imported:
    """What :func:`import_points` wrote."""

    manual: dict[str, int]   # manually graded cell -> rows imported
    overrides: int = 0       # override rows imported (0: no overrides CSV was given)
    replaced: int = 0        # ... of which replace an override of the record
    in_force: int = 0        # overrides in the record now
    record: Path | None = None  # the record, when an overrides CSV was imported
    unfit: list[str] = dataclasses.field(default_factory=list)  # record rows not applied


def _is_overrides(path):
    """Whether ``path`` is an overrides CSV, from its header (an unreadable file is left to
    the manual-grading reader, which names the problem)."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as fh:
            return overrides.is_overrides_csv(next(csv.reader(fh), []))
    except (OSError, UnicodeDecodeError, csv.Error):
        return False


def import_points(graded: Path | str, paths: Iterable[Path | str],
                  root: Path | str | None = None) -> Imported:
    """Load filled CSVs into the graded folder: manual points (``student_id, grade_id, points,
    comment``) into ``graded/gradebook.db``, overrides of autograded tasks (``student_id,
    task, points, reason``, :mod:`.overrides`) into the record ``graded/overrides.csv`` and
    from there into the results, the grade files and the gradebook.

    Every row of every file is checked first: raises ValueError (:class:`FilledCsvError`)
    naming each bad row (file and line); nothing is written then. ``root`` is the course
    folder (found from the working directory when None), needed to write the grade files
    again after an override.
    """
    graded = Path(graded)
    results = OutFolder(graded).read_results()
    db = OutFolder(graded).gradebook
    if not db.is_file():
        raise FilledCsvError(f"{db} does not exist: was {graded} written by `mlcourse grade`?")
    paths = list(paths)
    # The record itself, given after a row was deleted from it, is applied as it stands.
    the_record = OutFolder(graded).overrides.resolve()
    again = any(Path(p).resolve() == the_record for p in paths)
    asked = [p for p in paths if _is_overrides(p) and Path(p).resolve() != the_record]
    filled = [p for p in paths if p not in asked and Path(p).resolve() != the_record]
    problems = []
    try:
        manual, in_book = gradebook.manual_layout(db, results.name)
    except ValueError as exc:
        raise FilledCsvError(str(exc)) from None
    rows = {}
    if filled:
        students = [s for s in results.results if gradebook.gradebook_id(s) in in_book]
        try:
            rows = read_filled(filled, students, manual)
        except FilledCsvError as exc:
            problems.append(str(exc))
    if asked or again:
        given = _read_overrides(graded, results, asked, manual, root, problems)
    if problems:
        raise FilledCsvError("\n".join(problems))
    done = Imported(gradebook.write_manual_points(db, results.name, rows) if rows else {})
    if asked or again:
        _write_overrides(graded, db, results, *given, done)
    return done


def _read_overrides(graded, results, asked, manual, root, problems):
    """What importing overrides needs, read and checked before anything is written: the new
    rows of the CSVs ``asked``, the folder's record, the tasks' maxima and the assignment (its
    grade files are written again). Each problem goes to ``problems``."""
    from ..notebook import load_assignment

    new, record, assignment = {}, {}, None
    maxima = overrides.task_maxima(results.results)
    try:
        new = overrides.read_overrides(asked, list(results.results), maxima, manual)
    except overrides.OverridesCsvError as exc:
        problems.append(str(exc))
    try:
        record = OutFolder(graded).read_record()
    except overrides.OverridesCsvError as exc:
        problems.append(str(exc))
    try:  # the grade files are written again from the source notebook's tasks
        assignment = load_assignment(results.name, root)
    except (OSError, ValueError) as exc:
        problems.append(f"the overrides need the course folder to write the grade files "
                        f"again ({exc})")
    return new, record, maxima, assignment


def _write_overrides(graded, db, results, new, record, maxima, assignment, done):
    """Apply the record with the ``new`` rows to the results, write the record, the results,
    the grade files and the gradebook's points again; count what was done into ``done``."""
    merged = {**record, **new}
    done.overrides, done.replaced = len(new), len(set(new) & set(record))
    done.unfit = overrides.apply(results.results, merged, maxima)
    done.in_force = len(merged) - len(done.unfit)
    done.record = OutFolder(graded).write_record(merged, results.results, maxima)
    OutFolder(graded).write_results(results.results, assignment, results.defences, results.run)
    OutFolder(graded).write_csvs(results.results, assignment)
    gradebook.write_overrides(db, results.name, {
        s: overrides.cell_points(r) for s, r in results.results.items() if r.overrides})


# ------------------------------------------------------------------ a teaching assistant's work


def _filled_rows(path):
    """Rows of a manual-grading CSV that hold points or a comment (0 when none or unreadable)."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as fh:
            return sum(1 for row in csv.DictReader(fh)
                       if (row.get("points") or "").strip() or (row.get("comment") or "").strip())
    except (OSError, UnicodeDecodeError, csv.Error):
        return 0


def teaching_assistant_work(out: Path | str) -> list[str]:
    """What a teaching assistant wrote into the graded folder ``out`` that grading it again
    would replace: filled ``manual/*.csv`` files and manual points imported into
    ``gradebook.db`` (each in words; empty when there is none)."""
    out = OutFolder(out)
    found = []
    for path in out.manual_csvs():
        rows = _filled_rows(path)
        if rows:
            found.append(f"{path} ({plural(rows, 'filled row')})")
    db = out.gradebook
    if db.is_file():
        grades = gradebook.imported_count(db)
        if grades:
            found.append(f"{db} ({plural(grades, 'manual point')} or comments "
                         "imported by grade-import)")
    return found


def set_aside(out: Path | str) -> list[str]:
    """Move the teaching assistant's work in ``out`` (:func:`teaching_assistant_work`) into
    ``out/kept/<UTC time>/``; return what was moved (in words). Nothing is deleted."""
    import datetime as dt

    out = OutFolder(out)
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S%fZ")
    target = out.kept / stamp
    moved = []
    paths = [p for p in out.manual_csvs() if _filled_rows(p)]
    if out.gradebook.is_file() and gradebook.imported_count(out.gradebook):
        paths.append(out.gradebook)
    for path in paths:
        target.mkdir(parents=True, exist_ok=True)
        os.replace(path, target / path.name)
        moved.append(f"moved {path} to {target / path.name}")
    return moved


# ------------------------------------------------------------------ the points, read back


def read_manual_grades(graded: Path | str) -> dict[str, dict[str, tuple[float | None, str]]]:
    """``{student: {grade_id: (manual points or None, the TA's comment)}}`` from the graded
    folder's ``gradebook.db`` (what ``grade-import`` loaded); empty when there is none."""
    results = OutFolder(graded).read_results()
    db = OutFolder(graded).gradebook
    if not db.is_file():
        return {}
    return gradebook.manual_points(db, results.name, results.results)
