"""The book's two YAML files: ``_toc.yml`` (the table of contents) and ``_config.yml``.

The one reader of both, for the website and PDF builds (``book/``) and the grader's pages
(``grading/reports/manual.py``, which reuse the book's MathJax macros): it sits below both, so
that neither imports the other's side. The course's other facts (assignments, reference
modules, the course folder) are in :mod:`mlcourse_utils.course`. YAML needs the ``[book]`` or
``[grading]`` install; the student wheel does not ship this module.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .course import ROOT


def _yaml(path: Path) -> dict[str, Any]:
    import yaml

    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError(f"{path} is not a YAML mapping")
    return data


def read_toc(root: Path | str = ROOT, path: Path | str | None = None) -> dict[str, Any]:
    """The book's table of contents (``root/_toc.yml``, or the file ``path``) as a dict."""
    return _yaml(Path(path) if path is not None else Path(root) / "_toc.yml")


def toc_docnames(toc_path: Path | str) -> list[str]:
    """Docnames of a Jupyter Book table of contents, root first, in reading order."""
    toc = read_toc(path=toc_path)
    names = [toc["root"]]

    def walk(entries):
        for entry in entries:
            if "file" in entry:
                names.append(entry["file"])
            walk(entry.get("sections", []))

    for part in toc.get("parts", [{"chapters": toc.get("chapters", [])}]):
        walk(part.get("chapters", []))
    return names


def read_config(root: Path | str = ROOT) -> dict[str, Any]:
    """The book's configuration (``root/_config.yml``) as a dict."""
    return _yaml(Path(root) / "_config.yml")
