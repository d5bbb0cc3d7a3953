"""What grading needs installed (the ``[grading]`` extra), and the error that says how to get it.

``mlcourse grade``, ``grade-merge`` and ``export`` call :func:`check_dependencies` first, so that a
missing package stops the command at once with the install command, instead of a warning and
pages that were never written.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

#: What grading and its pages import beyond the base install: {module: distribution}.
REQUIRED_MODULES = {"nbgrader": "nbgrader", "tqdm": "tqdm", "jinja2": "jinja2",
                    "nh3": "nh3", "markdown_it": "markdown-it-py",
                    "mdit_py_plugins": "mdit-py-plugins", "yaml": "pyyaml",
                    "dateutil": "python-dateutil", "alembic": "alembic"}
#: The offline MathJax of the manual-grading pages (a distribution without a module name).
MATHJAX = "sphinx-mathjax-offline"
#: The MathJax build the manual-grading pages load (from sphinx-mathjax-offline).
MATHJAX_FILE = "tex-svg-full.js"
#: An installable requirement: the course package is not on PyPI, so from its repository.
INSTALL = "in the course repository, pip install '.[grading]' (or run `make` there)"


def mathjax_files() -> dict[str, Path] | None:
    """``{name: path}`` of the offline MathJax of sphinx-mathjax-offline (and its safe filter),
    or None when it is not installed whole."""
    spec = importlib.util.find_spec(MATHJAX)
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(list(spec.submodule_search_locations)[0]) / "static" / "mathjax"
    files = {MATHJAX_FILE: folder / MATHJAX_FILE, "ui/safe.js": folder / "ui" / "safe.js"}
    return files if all(p.is_file() for p in files.values()) else None


def mathjax_available() -> bool:
    """Whether the manual-grading pages can typeset mathematics (the ``[grading]`` extra)."""
    return mathjax_files() is not None


def missing_dependencies() -> list[str]:
    """The distributions grading needs that are not installed (empty when all are)."""
    missing = [dist for module, dist in REQUIRED_MODULES.items()
               if importlib.util.find_spec(module) is None]
    if importlib.util.find_spec(MATHJAX) is None or not mathjax_available():
        missing.append(MATHJAX)
    return missing


def check_dependencies() -> None:
    """ValueError naming what to install when something grading needs is missing."""
    missing = missing_dependencies()
    if missing:
        raise ValueError(f"grading needs {', '.join(missing)}, which "
                         f"{'is' if len(missing) == 1 else 'are'} not installed: {INSTALL}")
