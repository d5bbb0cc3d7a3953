"""Building the website with Jupyter Book 1 (the `mlcourse build` command)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def build_book(instructor=False, out=None, root=ROOT):
    """Build the student (default) or instructor edition into ``out`` (default ``_build``).

    Warnings are errors (``-W -n --keep-going``). Returns the path of the HTML folder.
    """
    jb = Path(sys.executable).with_name("jupyter-book")
    cmd = [str(jb), "build", str(root), "-W", "-n", "--keep-going"]
    if out is not None:
        cmd += ["--path-output", str(out)]
    subprocess.run(cmd, check=True, cwd=root)
    return (root if out is None else Path(out)) / "_build" / "html"
