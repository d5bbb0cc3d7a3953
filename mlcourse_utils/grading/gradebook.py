"""The nbgrader course folder that `mlcourse grade` writes: gradebook.db and autograded/ copies.

nbgrader's API is slow to start (importing it loads its server extensions, and opening a
gradebook runs ``alembic``), so the gradebook is prepared by a separate, lower-priority process
that starts with the grading and receives the scores at the end:

    proc = start(out, source_notebook, assignment_name)   # imports nbgrader, registers cells
    ...grade the students...
    finish(proc, {student: {grade_id: points}}, manual_grade_ids)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from .notebook import cell_source, nbgrader_meta, read_notebook_cells
from .submissions import read_submitted_file

if TYPE_CHECKING:
    from nbformat import NotebookNode


def start(out: Path | str, source: Path | str, assignment: str) -> subprocess.Popen[str]:
    """Start preparing ``out/gradebook.db`` for the assignment whose source notebook is given."""
    scripts = str(Path(sys.executable).parent)
    # nbgrader checks the database schema by running `alembic` from PATH.
    env = dict(os.environ, PATH=scripts + os.pathsep + os.environ.get("PATH", ""))
    args = {"db": str(Path(out) / "gradebook.db"), "source": str(source), "assignment": assignment}
    return subprocess.Popen([sys.executable, "-m", "mlcourse_utils.grading.gradebook",
                             json.dumps(args)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, env=env, text=True)


def finish(proc: subprocess.Popen[str], scores: Mapping[str, Mapping[str, float]],
           manual: Iterable[str], timeout: float = 300) -> str | None:
    """Send the scores; return None on success, or the gradebook process's error text."""
    payload = json.dumps({"scores": scores, "manual": list(manual)})
    try:
        output, _ = proc.communicate(payload, timeout=timeout)
    except (subprocess.TimeoutExpired, OSError) as exc:
        proc.kill()
        return str(exc)
    return None if proc.returncode == 0 else (output or "").strip()[-2000:]


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

        with api._temp_alembic_ini("sqlite:////tmp/gradebook.db") as alembic_ini:
            return ScriptDirectory.from_config(Config(alembic_ini)).get_current_head()

    api.get_alembic_version = get_alembic_version


_NBGRADER_KEYS = {"grade", "grade_id", "locked", "points", "schema_version", "solution", "task"}


def sanitized_notebook(data: bytes) -> NotebookNode:
    """A submitted notebook (bytes) as a safe copy for formgrader: cells and their sources only.

    Outputs, attachments and execution counts are dropped, notebook and cell metadata are
    reduced to nbgrader's plain fields, text is made valid UTF-8, and HTML in Markdown and raw
    cells is sanitised with nbconvert's ``SanitizeHTML`` (bleach): no student script or markup
    reaches a teaching assistant's browser.
    """
    import nbformat
    from nbconvert.preprocessors.sanitize import SanitizeHTML

    cells = []
    for i, cell in enumerate(read_notebook_cells(data)):
        kind = cell.get("cell_type")
        if kind not in ("code", "markdown", "raw"):
            continue
        source = cell_source(cell).encode("utf-8", "backslashreplace").decode("utf-8")
        source = source.replace("\x00", "")
        meta = {k: v for k, v in nbgrader_meta(cell).items()
                if k in _NBGRADER_KEYS and isinstance(v, (bool, int, float, str))
                and not (isinstance(v, str) and len(v) > 200)}
        if kind == "code":
            new = nbformat.v4.new_code_cell(source)
        elif kind == "markdown":
            new = nbformat.v4.new_markdown_cell(source)
        else:
            new = nbformat.v4.new_raw_cell(source)
        new.id = f"cell-{i}"
        if meta:
            new.metadata["nbgrader"] = meta
        cells.append(new)
    nb = nbformat.v4.new_notebook(cells=cells, metadata={
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"}})
    nb, _ = SanitizeHTML(strip=True).preprocess(nb, {})
    return nb


def write_sanitized_copy(path: Path | str, target: Path) -> None:
    """Write :func:`sanitized_notebook` of the submitted file ``path`` to ``target``."""
    import nbformat

    nb = sanitized_notebook(read_submitted_file(path))
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target, "w", encoding="utf-8") as fh:
        nbformat.write(nb, fh)


def _main(args):
    os.nice(10)  # background work: the students' sandboxes come first
    from .._imports import skip_slow_optional_imports

    skip_slow_optional_imports()
    import nbgrader.api
    from nbgrader.api import Gradebook

    _alembic_head_in_process(nbgrader.api)


    name = args["assignment"]
    nb_name = Path(args["source"]).stem
    with warnings.catch_warnings(), Gradebook(f"sqlite:///{args['db']}") as gb:
        # nbgrader's update_or_create_submission triggers harmless SQLAlchemy autoflush warnings.
        warnings.simplefilter("ignore")
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
        data = json.loads(sys.stdin.read())
        for student, grades in sorted(data["scores"].items()):
            gb.update_or_create_student(student)
            gb.update_or_create_submission(name, student)
            for gid, earned in grades.items():
                grade = gb.find_grade(gid, nb_name, name, student)
                grade.auto_score = earned
                grade.needs_manual_grade = False
            for gid in data["manual"]:
                grade = gb.find_grade(gid, nb_name, name, student)
                grade.auto_score = None
                grade.needs_manual_grade = True
        gb.db.commit()
    return 0


if __name__ == "__main__":
    sys.exit(_main(json.loads(sys.argv[1])))
