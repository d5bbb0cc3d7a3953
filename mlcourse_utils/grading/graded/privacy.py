"""Whether a file a teaching assistant's command writes would be tracked by git.

Grades, feedback pages, rosters and the term's secret are student data: they belong outside the
course repository, or in a folder its ``.gitignore`` covers. Before a command writes such files,
:func:`tracking_work_tree` asks git whether the place is inside a work tree and not ignored
there, and :func:`warning` says so in one line. Git missing, a folder outside any work tree or a
git that does not answer within a few seconds means no warning (the check only warns).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from .out import PROBES  # files of each kind a graded folder holds

#: Seconds each git command may take (the check must never hold up grading).
GIT_TIMEOUT = 5


def _git(folder: Path, *args: str) -> subprocess.CompletedProcess[str] | None:
    git = shutil.which("git")
    if git is None:
        return None
    try:
        return subprocess.run([git, "-C", str(folder), *args], capture_output=True, text=True,
                              timeout=GIT_TIMEOUT, check=False)
    except (OSError, subprocess.SubprocessError):
        return None


def tracking_work_tree(path: Path | str) -> Path | None:
    """The git work tree that would track a file written at ``path``, or None.

    ``path`` need not exist yet (a folder about to be made, a file about to be written). None
    when it is outside every work tree, ignored there (``.gitignore``, ``.git/info/exclude``),
    or git cannot tell.
    """
    path = Path(path).expanduser().resolve()
    existing = path
    while not existing.is_dir():
        if existing.parent == existing:
            return None
        existing = existing.parent
    top = _git(existing, "rev-parse", "--show-toplevel")
    if top is None or top.returncode != 0 or not top.stdout.strip():
        return None
    tree = Path(top.stdout.strip()).resolve()
    if not path.is_relative_to(tree) or path == tree:
        return tree if path == tree else None
    # Files inside a folder: patterns such as "graded/" match folders only, and a folder that
    # does not exist yet is not known to be one; files of several kinds, since "*.csv" alone
    # leaves the feedback pages and notebook copies tracked.
    probes = [path / name for name in PROBES] if path.is_dir() or not path.suffix else [path]
    relative = [probe.relative_to(tree).as_posix() for probe in probes]
    ignored = _git(tree, "check-ignore", "--", *relative)
    if ignored is None or ignored.returncode not in (0, 1):
        return None
    return tree if set(ignored.stdout.splitlines()) != set(relative) else None


def warning(path: Path | str, what: str) -> str | None:
    """One line warning that ``what`` (e.g. "the class's grades and feedback") would be written
    at ``path`` inside a git work tree that tracks it; None when it would not be tracked."""
    tree = tracking_work_tree(path)
    if tree is None:
        return None
    return (f"warning: {path} is inside the git work tree {tree} and not ignored there: "
            f"`git add -A` would commit {what}. Write it outside the repository (e.g. a folder "
            "of the term beside it) or add it to .gitignore")
