"""Releasing assignments: check each solution notebook, then let nbgrader generate exercises/."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path

from .notebook import find_course_root, grade_id, is_test_cell

ASSIGNMENTS = ["mle", "bayes", "naive_bayes", "gda", "logistic_regression",
               "information_theory", "ridge_lasso"]


def available_assignments(root: Path | str) -> list[str]:
    """Assignments that have a source notebook, in course order."""
    names = [p.name for p in sorted((Path(root) / "solutions").iterdir())
             if (p / f"{p.name}.ipynb").is_file()]
    return sorted(names, key=lambda n: (ASSIGNMENTS.index(n) if n in ASSIGNMENTS else 99, n))


#: Largest file next to a notebook that is copied into its scratch folder (data it may read).
_MAX_COPIED_FILE = 5 * 2**20


def run_notebook(path: Path | str, timeout: float = 120) -> list[tuple[str, str, bool]]:
    """Execute a notebook in a scratch folder; return ``[(cell, error text, is a test cell)]``.

    Every cell runs (errors do not stop the run). The error list names each failing cell by its
    nbgrader grade_id (or its position) with the error's last line. Small files next to the
    notebook are copied into the scratch folder; the notebook's own folder is never written.
    The kernel talks over local (IPC) sockets: no TCP port, so no port clash with other kernels
    and no unencrypted-TCP warning.
    """
    import nbformat
    from jupyter_client.manager import KernelManager
    from nbclient import NotebookClient

    path = Path(path)
    nb = nbformat.read(path, as_version=4)
    with tempfile.TemporaryDirectory(prefix="mlcourse-run-") as tmp:
        for item in path.parent.iterdir():
            if item.is_file() and item.suffix != ".ipynb" and \
                    item.stat().st_size <= _MAX_COPIED_FILE:
                shutil.copy(item, tmp)
        km = KernelManager(kernel_name="python3", transport="ipc",
                           ip=os.path.join(tmp, ".kernel"))
        client = NotebookClient(nb, km=km, timeout=timeout, allow_errors=True,
                                resources={"metadata": {"path": tmp}})
        try:
            client.execute()
        finally:
            if km.has_kernel:  # (nbclient leaves a kernel manager it was given running)
                km.shutdown_kernel(now=True)
    errors = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                gid = grade_id(cell) or f"cell {index + 1}"
                errors.append((gid, f"{out.get('ename')}: {out.get('evalue')}", is_test_cell(cell)))
    return errors


def release(names: Iterable[str] | None = None, root: Path | str | None = None, check: bool = True,
            quiet: bool = False) -> list[str]:
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
                raise RuntimeError(
                    f"solutions/{name}/{name}.ipynb does not pass its own tests:\n{lines}")
        with tempfile.TemporaryDirectory(prefix="mlcourse-db-") as tmp:
            cmd = [str(Path(sys.executable).with_name("nbgrader")), "generate_assignment", name,
                   "--force", f"--CourseDirectory.root={root}",
                   f"--CourseDirectory.db_url=sqlite:///{tmp}/gradebook.db"]
            # nbgrader runs `alembic` from PATH: put this environment's scripts first.
            scripts = Path(sys.executable).parent
            env = dict(os.environ, PATH=f"{scripts}{os.pathsep}{os.environ.get('PATH', '')}")
            proc = subprocess.run(cmd, cwd=root, capture_output=True, text=True, env=env)
        if proc.returncode != 0:
            raise RuntimeError(
                f"nbgrader generate_assignment {name} failed:\n{proc.stderr[-3000:]}")
        if not quiet:
            print(f"released exercises/{name}/")
    return names
