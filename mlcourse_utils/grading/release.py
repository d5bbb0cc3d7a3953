"""Releasing assignments: check each solution notebook, then let nbgrader generate exercises/."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from .notebook import find_course_root, grade_id, is_test_cell

ASSIGNMENTS = ["mle", "bayes", "naive_bayes", "gda", "logistic_regression",
               "information_theory", "ridge_lasso"]


def available_assignments(root):
    """Assignments that have a source notebook, in course order."""
    names = [p.name for p in sorted((Path(root) / "solutions").iterdir())
             if (p / f"{p.name}.ipynb").is_file()]
    return sorted(names, key=lambda n: (ASSIGNMENTS.index(n) if n in ASSIGNMENTS else 99, n))


def run_notebook(path, timeout=120):
    """Execute a notebook in a scratch copy of its folder; return ``[(cell, error text)]``.

    Every cell runs (errors do not stop the run). The error list names each failing cell by its
    nbgrader grade_id (or its position) with the error's last line.
    """
    import nbformat
    from nbclient import NotebookClient

    path = Path(path)
    nb = nbformat.read(path, as_version=4)
    with tempfile.TemporaryDirectory(prefix="mlcourse-run-") as tmp:
        for item in path.parent.iterdir():
            if item.is_file() and item != path:
                shutil.copy(item, tmp)
        client = NotebookClient(nb, timeout=timeout, kernel_name="python3", allow_errors=True,
                                resources={"metadata": {"path": tmp}})
        client.execute()
    errors = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                gid = grade_id(cell) or f"cell {index + 1}"
                errors.append((gid, f"{out.get('ename')}: {out.get('evalue')}", is_test_cell(cell)))
    return errors


def release(names=None, root=None, check=True, quiet=False):
    """Regenerate ``exercises/NAME`` from ``solutions/NAME`` with nbgrader.

    With ``check`` (the default) each solution notebook is first executed and must pass every
    one of its own tests; otherwise nothing is generated and ``RuntimeError`` says which failed.
    """
    root = Path(root) if root else find_course_root()
    names = list(names) if names else available_assignments(root)
    for name in names:
        source = root / "solutions" / name / f"{name}.ipynb"
        if not source.is_file():
            raise FileNotFoundError(f"no source notebook solutions/{name}/{name}.ipynb")
        if check:
            errors = run_notebook(source)
            if errors:
                lines = "\n".join(f"  {gid}: {msg}" for gid, msg, _ in errors)
                raise RuntimeError(f"solutions/{name}/{name}.ipynb does not pass its own tests:\n{lines}")
        with tempfile.TemporaryDirectory(prefix="mlcourse-db-") as tmp:
            cmd = [str(Path(sys.executable).with_name("nbgrader")), "generate_assignment", name,
                   "--force", f"--CourseDirectory.root={root}",
                   f"--CourseDirectory.db_url=sqlite:///{tmp}/gradebook.db"]
            # nbgrader runs `alembic` from PATH: put this environment's scripts first.
            env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
            proc = subprocess.run(cmd, cwd=root, capture_output=True, text=True, env=env)
        if proc.returncode != 0:
            raise RuntimeError(f"nbgrader generate_assignment {name} failed:\n{proc.stderr[-3000:]}")
        if not quiet:
            print(f"released exercises/{name}/")
    return names
