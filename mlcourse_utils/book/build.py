"""Building the website with Jupyter Book 1 (the ``mlcourse build`` command).

Two editions are built from the same sources (``_config.yml``, ``_toc.yml``, ``book/``):

* the **student** edition (default; ``make book``) into ``_build/html``: in-text solutions and
  teaching notes are removed by the Sphinx extension :mod:`mlcourse_utils.book.editions`;
* the **instructor** edition (``mlcourse build --instructor --out DIR``) into ``DIR/html``: it
  shows them, and adds a part "Solution notebooks" with every ``solutions/NAME/NAME.ipynb``
  rendered without nbgrader's solution and hidden-test markers. Those pages are generated into
  ``_build/solution_pages`` (git-ignored), the table of contents into ``DIR/_toc.instructor.yml``.

Both editions first write the course wheel that students install into ``_build/wheel``
(:mod:`mlcourse_utils.book.wheel`); the *Getting started* page links it, so it is in the site.

Both editions build with warnings as errors (``-W -n --keep-going``) and share one execution
cache, ``_build/.jupyter_cache``: a notebook whose code has not changed is never re-executed,
whichever edition is built. Each edition keeps its own Sphinx environment (``.doctrees`` next
to its ``html``), so an unchanged chapter is not even re-read.

The build runs ``jupyter_book.sphinx.build_sphinx`` (what ``jupyter-book build`` calls) in a
subprocess, so that the output folder can be chosen freely and Sphinx's global state never
leaks into the caller.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from ..config import read_config, read_toc
from ..course import ROOT
from ..grading.notebook import strip_nbgrader_markers

if TYPE_CHECKING:
    from nbformat import NotebookNode

#: Folder (relative to the book root) for the generated solution-notebook pages.
SOLUTION_PAGES = Path("_build") / "solution_pages"

class BuildError(RuntimeError):
    """The website build failed (the reason is in the build log above)."""


def solution_page(notebook: NotebookNode, name: str) -> NotebookNode:
    """An nbgrader source notebook as a book page: markers removed, outputs cleared, titled.

    ``notebook`` is an ``nbformat.NotebookNode``; a new one is returned.
    """
    import nbformat

    nb = copy.deepcopy(notebook)
    for cell in nb.cells:
        cell.source = strip_nbgrader_markers(cell.source)
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    nb.cells = [c for c in nb.cells if c.source.strip()]
    title = f"Solutions: `{name}`"
    first = nb.cells[0] if nb.cells else None
    if first is not None and first.cell_type == "markdown" and first.source.startswith("# "):
        heading, _, rest = first.source.partition("\n")
        first.source = f"# {title} ({heading[2:].strip()})\n{rest}"
    else:
        nb.cells.insert(0, nbformat.v4.new_markdown_cell(f"# {title}", id="solutions-title"))
    nb.cells.insert(
        1,
        nbformat.v4.new_markdown_cell(
            "*Instructor edition only.* The nbgrader source notebook "
            f"`solutions/{name}/{name}.ipynb` with its solutions and hidden tests, nbgrader's "
            "markers removed.",
            id="solutions-note",  # fixed ids: the same page each build, so it is not rewritten
        ),
    )
    return nb


def _write_if_changed(path, text):
    """Write only when the content differs, so Sphinx does not re-read an unchanged page."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def write_solution_pages(root: Path | str = ROOT) -> list[str]:
    """Generate ``_build/solution_pages/NAME/NAME.ipynb`` for each solution notebook.

    Returns the docnames (paths relative to ``root`` without suffix) of the pages, index first,
    or ``[]`` when there is no solution notebook.
    """
    import nbformat

    root = Path(root)
    pages_dir = root / SOLUTION_PAGES
    sources = sorted(p for p in (root / "solutions").glob("*/*.ipynb") if p.stem == p.parent.name)
    if pages_dir.exists():  # drop pages of assignments that no longer exist
        keep = {p.parent.name for p in sources}
        for child in pages_dir.iterdir():
            if child.is_dir() and child.name not in keep:
                shutil.rmtree(child)
    if not sources:
        return []
    docnames = [(SOLUTION_PAGES / "index").as_posix()]
    for src in sources:
        name = src.stem
        dest_dir = pages_dir / name
        # Files beside the notebook (data, images) so that it runs as in solutions/.
        for extra in src.parent.iterdir():
            if extra.is_file() and extra.suffix != ".ipynb":
                dest_dir.mkdir(parents=True, exist_ok=True)
                shutil.copy2(extra, dest_dir / extra.name)
        page = solution_page(nbformat.read(src, as_version=4), name)
        _write_if_changed(dest_dir / f"{name}.ipynb", nbformat.writes(page) + "\n")
        docnames.append((SOLUTION_PAGES / name / name).as_posix())
    _write_if_changed(
        pages_dir / "index.md",
        "# Solution notebooks\n\n"
        "Instructor edition only: each assignment's nbgrader source notebook, with its solutions\n"
        "and hidden tests (nbgrader's markers removed). Generated by "
        "`mlcourse build --instructor`\n"
        "from `solutions/`; never edit these pages.\n\n"
        "```{tableofcontents}\n```\n",
    )
    return docnames


def instructor_toc(toc: dict[str, Any], docnames: Sequence[str]) -> dict[str, Any]:
    """The table of contents ``toc`` (a dict from ``_toc.yml``) plus the solution pages."""
    if not docnames:
        return toc
    toc = json.loads(json.dumps(toc))
    entry = {"file": docnames[0], "sections": [{"file": d} for d in docnames[1:]]}
    if "parts" in toc:
        toc["parts"].append({"caption": "Instructor: solution notebooks", "chapters": [entry]})
    else:
        toc.setdefault("chapters", []).append(entry)
    return toc


def _exclude_patterns(root, keep):
    """``_config.yml``'s exclude patterns with ``_build`` opened up for the folder ``keep``.

    Jupyter Book always excludes ``_build``; the instructor edition needs the generated pages
    in ``_build/solution_pages``, so it excludes every other entry of ``_build`` instead.
    """
    config = read_config(root)
    patterns = [p for p in config.get("exclude_patterns", []) if p != "_build"]
    patterns += ["Thumbs.db", ".DS_Store", "**.ipynb_checkpoints"]
    build = root / "_build"
    for child in sorted(build.iterdir()) if build.exists() else []:
        rel = child.relative_to(root).as_posix()
        if rel != keep.as_posix():
            patterns.append(rel)
    return patterns


def build_book(instructor: bool = False, out: Path | str | None = None, root: Path | str = ROOT,
               quiet: bool = False, log: IO[Any] | None = None) -> Path:
    """Build the student (default) or instructor edition; return the HTML folder.

    The HTML goes to ``out/html``; ``out`` defaults to ``ROOT/_build`` for the student edition
    (so it is in ``_build/html``) and to ``ROOT/_build/instructor`` for the instructor edition.
    The execution cache is always ``ROOT/_build/.jupyter_cache``.
    ``log``, an open file, receives the build's output (default: this process's stdout/stderr).
    Raises :class:`BuildError` when Sphinx reports an error or a warning.
    """
    import yaml

    root = Path(root).resolve()
    if out is None:
        out = root / "_build" / "instructor" if instructor else root / "_build"
    out = Path(out).resolve()
    html = out / "html"
    out.mkdir(parents=True, exist_ok=True)
    # Sources are never copied (html_copy_source is off), but Sphinx does not delete files an
    # older build left behind: chapter sources there would hold the solutions.
    shutil.rmtree(html / "_sources", ignore_errors=True)
    # The course wheel students install (the Getting started page links it): no chapter code.
    from .wheel import WHEEL_DIR, build_student_wheel

    build_student_wheel(root / WHEEL_DIR)
    toc = root / "_toc.yml"
    overrides = {
        "nitpicky": True,
        "mlcourse_edition": "instructor" if instructor else "student",
        "nb_execution_cache_path": str(root / "_build" / ".jupyter_cache"),
    }
    if instructor:
        docnames = write_solution_pages(root)
        toc_data = read_toc(root)
        toc = out / "_toc.instructor.yml"
        _write_if_changed(
            toc,
            "# Generated by `mlcourse build --instructor` from _toc.yml; do not edit.\n"
            + yaml.safe_dump(instructor_toc(toc_data, docnames), sort_keys=False),
        )
        if docnames:
            keep = SOLUTION_PAGES
            patterns = _exclude_patterns(root, keep)
            if out.is_relative_to(root / "_build") and out != root / "_build":
                patterns.append(out.relative_to(root).as_posix())
            overrides["exclude_patterns"] = sorted(set(patterns))
    args = {"root": str(root), "html": str(html), "toc": str(toc), "overrides": overrides,
            "quiet": quiet}
    proc = subprocess.run(
        [sys.executable, "-m", "mlcourse_utils.book.build", json.dumps(args)],
        cwd=root,
        stdout=log,
        stderr=None if log is None else subprocess.STDOUT,
    )
    if proc.returncode != 0:
        edition = "instructor" if instructor else "student"
        raise BuildError(f"the {edition} edition did not build (exit status {proc.returncode}); "
                         "see the log above")
    return html


KERNEL_STARTUP = """\
# Written by mlcourse_utils.book.build for the kernels that execute the chapters: the same
# start-up speed-up as the command-line tools (see mlcourse_utils/_imports.py).
import sys
sys.modules.setdefault("rfc3987_syntax", None)
"""


def _use_build_ipython_profile(folder):
    """Run the chapter kernels with a profile of the build's own (IPYTHONDIR, inherited).

    It makes builds independent of the author's ~/.ipython start-up files, and its one
    start-up file skips the optional import that makes `from myst_nb import glue` take
    about 2 s per chapter.
    """
    startup = folder / "profile_default" / "startup" / "00-mlcourse.py"
    startup.parent.mkdir(parents=True, exist_ok=True)
    _write_if_changed(startup, KERNEL_STARTUP)
    os.environ["IPYTHONDIR"] = str(folder)


def _run_sphinx(args):
    """Subprocess of :func:`build_book`: what ``jupyter-book build -W -n --keep-going`` does."""
    from .._imports import skip_slow_optional_imports

    skip_slow_optional_imports()
    from jupyter_book.sphinx import build_sphinx
    from sphinx.builders.html import StandaloneHTMLBuilder
    from sphinx.util.console import color_terminal, nocolor

    if not color_terminal():  # (Sphinx's own command does this; build_sphinx does not)
        nocolor()
    # `mlcourse build` says where the pages are, with what else was built (cli.py): Sphinx's
    # "The HTML pages are in ..." would say it twice.
    StandaloneHTMLBuilder.epilog = ""

    root = Path(args["root"])
    html = Path(args["html"])
    _use_build_ipython_profile(root / "_build" / ".ipython")
    overrides = dict(args["overrides"])
    overrides["external_toc_path"] = args["toc"]
    overrides["latex_individualpages"] = False
    result = build_sphinx(
        root,
        html,
        use_external_toc=True,
        noconfig=True,
        path_config=str(root / "_config.yml"),
        confoverrides=overrides,
        doctreedir=html.parent / ".doctrees",
        warningiserror=True,
        keep_going=True,
        quiet=args["quiet"],
    )
    if isinstance(result, Exception):
        return 2
    return int(result or 0)


if __name__ == "__main__":
    sys.exit(_run_sphinx(json.loads(sys.argv[1])))
