"""The nbgrader gradebook.db that `mlcourse grade` writes (autograded/ copies: notebook_copy.py).

nbgrader's API is slow to start (importing it loads its server extensions, and opening a
gradebook runs ``alembic``), so the gradebook is written by a separate, lower-priority process
that starts with the grading and writes each student's scores as soon as that student is
graded (one JSON line each on its stdin), so that only a short close remains at the end:

    book = start(db, source_notebook, assignment_name, manual_grade_ids)  # registers cells
    ...each student graded: book.write(student, {grade_id: points})...
    book.done()                                    # no more students: it writes the last ones
    ...other work...
    book.finish()                                  # waits for it; None or the error
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import warnings
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from ..notebook import cell_source, nbgrader_meta, read_notebook_cells


class Writer:
    """The process writing ``out/gradebook.db`` (see :func:`start`)."""

    def __init__(self, proc: subprocess.Popen[str], log: Any) -> None:
        self.proc, self._log, self._broken = proc, log, False
        self._error: str | None = None

    def write(self, student: str, grades: Mapping[str, float],
              overrides: Mapping[str, float] | None = None) -> None:
        """Send one student's ``{grade_id: points}`` of the test cells, and the points a
        teaching assistant set on some of them (``overrides``, nbgrader's ``manual_score``; any
        other test cell's is cleared); the process writes them while others are graded. Never
        raises: a process that has stopped is reported by :meth:`finish`."""
        if self._broken:
            return
        line = {"student": student, "grades": dict(grades), "overrides": dict(overrides or {})}
        try:
            self.proc.stdin.write(json.dumps(line) + "\n")
            self.proc.stdin.flush()
        except (OSError, ValueError):  # it exited (its error is in the log)
            self._broken = True

    def done(self) -> None:
        """No more students: the process writes the last ones and closes the gradebook while
        the caller does other work (:meth:`finish` waits for it)."""
        self._broken = True  # nothing more is sent
        with contextlib.suppress(OSError, ValueError):
            self.proc.stdin.close()

    def finish(self, timeout: float = 300) -> str | None:
        """Wait for the last students to be written (after :meth:`done`, which it calls);
        None on success, or the process's error text (the same answer when asked again)."""
        if self._log.closed:
            return self._error
        self.done()
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired as exc:
            self.proc.kill()
            self.proc.wait()
            self._error = str(exc)
        else:
            self._log.seek(0)
            output = self._log.read().decode("utf-8", "replace")
            self._error = None if self.proc.returncode == 0 else output.strip()[-2000:]
        finally:
            self._log.close()
        return self._error


def start(db: Path | str, source: Path | str, assignment: str,
          manual: Iterable[str] = ()) -> Writer:
    """Start writing the gradebook ``db`` (:attr:`.out.OutFolder.gradebook`) for the assignment
    whose source notebook is given; ``manual`` are the grade ids of its manually graded cells
    (left to grade for everyone)."""
    scripts = str(Path(sys.executable).parent)
    # nbgrader checks the database schema by running `alembic` from PATH.
    env = dict(os.environ, PATH=scripts + os.pathsep + os.environ.get("PATH", ""))
    args = {"db": str(db), "source": str(source), "assignment": assignment,
            "manual": list(manual)}
    # Its output goes to a file: a pipe nobody reads until the end could fill and stop it.
    log = tempfile.TemporaryFile()
    proc = subprocess.Popen([sys.executable, "-m", "mlcourse_utils.grading.graded.gradebook",
                             json.dumps(args)],
                            stdin=subprocess.PIPE, stdout=log, stderr=subprocess.STDOUT,
                            env=env, text=True)
    return Writer(proc, log)


def _alembic_head_in_process(api):
    """Let nbgrader read its schema version with alembic's API instead of a subprocess.

    nbgrader 0.9 runs ``alembic heads`` as a subprocess each time a gradebook is opened, which
    costs a fresh interpreter (about 3 s here) to print one constant string. The result is
    the same; if nbgrader's internals differ from 0.9's, nothing is changed.
    """
    if not (hasattr(api, "get_alembic_version") and hasattr(api, "_temp_alembic_ini")):
        return

    def get_alembic_version():
        from alembic.config import Config
        from alembic.script import ScriptDirectory

        with api._temp_alembic_ini("sqlite://") as alembic_ini:
            return ScriptDirectory.from_config(Config(alembic_ini)).get_current_head()

    api.get_alembic_version = get_alembic_version


@contextlib.contextmanager
def opened(db: Path | str) -> Iterator[Any]:
    """nbgrader's ``Gradebook`` on ``db``, in this process; the one place that opens it.

    nbgrader's schema check (:func:`_alembic_head_in_process`) is answered in this process, so
    neither ``PATH`` nor a subprocess is needed; nbgrader's harmless SQLAlchemy autoflush
    warnings are silenced while it is open.
    """
    import nbgrader.api

    _alembic_head_in_process(nbgrader.api)
    with warnings.catch_warnings(), nbgrader.api.Gradebook(f"sqlite:///{db}") as gb:
        warnings.simplefilter("ignore")
        yield gb


def totals(db: Path | str, name: str) -> tuple[float, dict[str, float], list[str]]:
    """``(max score, {gradebook id: total}, [gradebook ids with manual cells to grade])`` of
    assignment ``name``: nbgrader's totals, autograded (or overridden, :func:`write_overrides`)
    plus the manual points imported. The export's totals are :func:`.graded.folder.read_graded`'s;
    these agree with them."""
    with opened(db) as gb:
        assignment = gb.find_assignment(name)
        scores, ungraded = {}, []
        for submission in assignment.submissions:
            scores[submission.student_id] = float(submission.score)
            if submission.needs_manual_grade:
                ungraded.append(submission.student_id)
        return float(assignment.max_score), scores, sorted(ungraded)


def manual_layout(db: Path | str, name: str) -> tuple[dict[str, float], set[str]]:
    """``({manual grade_id: max points}, {gradebook ids of the students in it})`` of
    assignment ``name``; ValueError when the gradebook does not hold it as one notebook."""
    from nbgrader.api import MissingEntry

    with opened(db) as gb:
        try:
            notebook = _notebook(gb, name, db)
        except MissingEntry:
            raise ValueError(f"{db} does not hold the assignment {name}") from None
        return _manual_max(notebook), {s.id for s in gb.students}


def _notebook(gb, name, db):
    assignment = gb.find_assignment(name)
    if len(assignment.notebooks) != 1:
        raise ValueError(f"{db}: expected one notebook in {name}")
    return assignment.notebooks[0]


def _manual_max(notebook):
    solution_ids = {c.name for c in notebook.solution_cells}
    return {c.name: float(c.max_score) for c in notebook.grade_cells if c.name in solution_ids}


def write_manual_points(db: Path | str, name: str,
                        rows: Mapping[tuple[str, str], tuple[float, str]]) -> dict[str, int]:
    """Set ``{(student, grade_id): (points, comment)}`` as manual grades of ``name``; return
    ``{grade_id: rows written}``. ValueError naming a student without a submission in the
    gradebook; nothing is written then."""
    from nbgrader.api import MissingEntry

    counts = {}
    with opened(db) as gb:
        notebook = _notebook(gb, name, db)
        for (student, gid), (points, comment) in sorted(rows.items()):
            sid = gradebook_id(student)
            try:
                grade = gb.find_grade(gid, notebook.name, name, sid)
            except MissingEntry:
                raise ValueError(f"{student} has no submission of {name} in {db}") from None
            grade.manual_score = points
            grade.needs_manual_grade = False
            if comment:
                try:
                    gb.find_comment(gid, notebook.name, name, sid).manual_comment = comment
                except MissingEntry:
                    pass  # nbgrader keeps comments only for cells it registered as such
            counts[gid] = counts.get(gid, 0) + 1
        gb.db.commit()
    return counts


def write_overrides(db: Path | str, name: str,
                    overrides: Mapping[str, Mapping[str, float]]) -> list[str]:
    """Set the teaching assistants' overrides of autograded cells as nbgrader's own: the
    ``manual_score`` of a test cell (``{student: {test grade_id: points}}``), which nbgrader's
    totals take instead of the autograded score; every other test cell's ``manual_score`` is
    cleared (an override withdrawn). Manually graded cells are left alone. Returns the students
    of ``overrides`` that the gradebook lacks (their rows could not be written by grading)."""
    with opened(db) as gb:
        notebook = _notebook(gb, name, db)
        manual = set(_manual_max(notebook))
        wanted = {gradebook_id(s): cells for s, cells in overrides.items()}
        seen = set()
        for submitted in notebook.submissions:
            sid = submitted.student.id
            seen.add(sid)
            cells = wanted.get(sid, {})
            for grade in submitted.grades:
                if grade.name in manual:
                    continue
                value = cells.get(grade.name)
                if grade.manual_score != value:
                    grade.manual_score = value
                grade.needs_manual_grade = False
        gb.db.commit()
    return sorted(s for s in overrides if gradebook_id(s) not in seen)


def manual_points(db: Path | str, name: str,
                  students: Iterable[str]) -> dict[str, dict[str, tuple[float | None, str]]]:
    """``{student: {grade_id: (manual points or None, comment)}}`` of ``name`` in ``db``
    (empty when the gradebook does not hold the assignment as one notebook)."""
    from nbgrader.api import MissingEntry

    found = {}
    with opened(db) as gb:
        try:
            notebook = _notebook(gb, name, db)
        except (MissingEntry, ValueError):
            return {}
        for student in students:
            sid = gradebook_id(student)
            cells = {}
            for gid in _manual_max(notebook):
                try:
                    grade = gb.find_grade(gid, notebook.name, name, sid)
                except MissingEntry:
                    continue
                try:
                    comment = gb.find_comment(gid, notebook.name, name, sid).manual_comment or ""
                except MissingEntry:
                    comment = ""
                points = None if grade.manual_score is None else float(grade.manual_score)
                cells[gid] = (points, comment)
            if cells:
                found[student] = cells
    return found


def _read_only(db):
    return contextlib.closing(sqlite3.connect(f"{Path(db).resolve().as_uri()}?mode=ro", uri=True))


#: The cells a teaching assistant grades by hand: grade cells that are also solution cells.
_MANUAL_CELL = """EXISTS (SELECT 1 FROM base_cell sc JOIN solution_cells s ON s.id = sc.id
                          WHERE sc.name = bc.name AND sc.notebook_id = bc.notebook_id)"""


def imported_count(db: Path | str) -> int:
    """How many grades of manually graded cells of ``db`` hold points, and how many comments
    it holds (0 when it cannot be read). Overrides of autograded cells do not count: grading
    again applies them again (:mod:`.overrides`)."""
    try:
        with _read_only(db) as con:
            points = con.execute("SELECT count(*) FROM grade g JOIN base_cell bc "
                                 "ON bc.id = g.cell_id WHERE g.manual_score IS NOT NULL AND "
                                 + _MANUAL_CELL)
            comments = con.execute("SELECT count(*) FROM comment WHERE manual_comment IS NOT "
                                   "NULL AND manual_comment != ''")
            return points.fetchone()[0] + comments.fetchone()[0]
    except sqlite3.Error:
        return 0


def manual_progress(db: Path | str, name: str) -> dict[str, tuple[float, int]] | None:
    """``{manual grade_id: (max points, answers with points)}`` of ``name``.

    Read with sqlite3 (read-only, no nbgrader) from nbgrader's schema: a manually graded cell is
    a grade cell that is also a solution cell; an answer has points once ``manual_score`` is
    set (``mlcourse grade-import`` or formgrader). None when the database cannot be read.
    """
    query = """
        SELECT bc.name, gc.max_score,
               SUM(CASE WHEN g.manual_score IS NOT NULL THEN 1 ELSE 0 END)
        FROM grade_cells gc
        JOIN base_cell bc ON bc.id = gc.id
        JOIN notebook nb ON nb.id = bc.notebook_id
        JOIN assignment a ON a.id = nb.assignment_id
        LEFT JOIN grade g ON g.cell_id = gc.id
        WHERE a.name = ?
          AND """ + _MANUAL_CELL + """
        GROUP BY bc.name, gc.max_score
    """
    try:
        with _read_only(db) as con:
            rows = con.execute(query, (name,)).fetchall()
    except sqlite3.Error:
        return None
    return {str(gid): (float(top), int(done)) for gid, top, done in rows}


_UNSAFE_IN_EXPORT = re.compile(r'[,"]|[^\S ]')


def gradebook_id(student: str) -> str:
    """The id a student gets in nbgrader's gradebook: safe in ``nbgrader export``'s CSV.

    nbgrader writes its CSV without quoting, so an id with a comma, a quote or white space
    would shift or break rows, and one starting with ``=``, ``+``, ``-`` or ``@`` would be a
    spreadsheet formula. Such ids get those characters replaced by ``_`` and a short hash (to
    stay unique), and a leading formula character is prefixed with ``'``; others are unchanged.
    """
    safe = student
    if _UNSAFE_IN_EXPORT.search(student):
        digest = hashlib.sha256(student.encode("utf-8", "surrogatepass")).hexdigest()[:8]
        safe = f"{_UNSAFE_IN_EXPORT.sub('_', student)}~{digest}"
    return "'" + safe if safe.startswith(("=", "+", "-", "@")) else safe


def _main(args):
    os.nice(10)  # background work: the students' sandboxes come first
    from ..._imports import skip_slow_optional_imports

    skip_slow_optional_imports()
    name = args["assignment"]
    nb_name = Path(args["source"]).stem
    with opened(args["db"]) as gb:
        gb.update_or_create_assignment(name)
        gb.update_or_create_notebook(nb_name, name)
        for cell in read_notebook_cells(Path(args["source"]).read_bytes()):
            meta = nbgrader_meta(cell)
            gid = meta.get("grade_id")
            if not gid:
                continue
            if meta.get("grade"):
                gb.update_or_create_grade_cell(gid, nb_name, name,
                                               max_score=float(meta.get("points", 0)),
                                               cell_type=cell.get("cell_type"))
            if meta.get("solution"):
                gb.update_or_create_solution_cell(gid, nb_name, name)
            gb.update_or_create_source_cell(gid, nb_name, name, cell_type=cell.get("cell_type"),
                                            locked=bool(meta.get("locked")),
                                            source=cell_source(cell))
        gb.db.commit()
        failed = []
        for line in sys.stdin:  # one student a line, as each is graded
            data = json.loads(line)
            student, sid = data["student"], gradebook_id(data["student"])
            try:  # one student's failure is reported and costs no other student their row
                gb.update_or_create_student(sid)
                gb.update_or_create_submission(name, sid)
                overrides = data.get("overrides") or {}
                for gid, earned in data["grades"].items():
                    grade = gb.find_grade(gid, nb_name, name, sid)
                    grade.auto_score = earned
                    grade.manual_score = overrides.get(gid)  # nbgrader's override, or none
                    grade.needs_manual_grade = False
                for gid in args["manual"]:
                    grade = gb.find_grade(gid, nb_name, name, sid)
                    grade.auto_score = None
                    grade.needs_manual_grade = True
                gb.db.commit()
            except Exception as exc:  # noqa: BLE001
                gb.db.rollback()
                failed.append(f"{student}: {type(exc).__name__}: {str(exc)[:300]}")
    if failed:
        print("\n".join(["students not written into the gradebook:", *sorted(failed)]))
        return 3
    return 0


if __name__ == "__main__":
    code = _main(json.loads(sys.argv[1]))
    # Every row is committed and the gradebook closed: skip the interpreter's tear-down of
    # nbgrader and SQLAlchemy, which the grader would otherwise wait for at the end of a run.
    sys.stdout.flush()
    os._exit(code)
