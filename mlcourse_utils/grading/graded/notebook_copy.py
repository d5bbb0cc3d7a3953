"""The copy of a submitted notebook that formgrader opens: sources only, student HTML made safe."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..notebook import cell_source, nbgrader_meta, read_notebook_cells

_NBGRADER_KEYS = {"grade", "grade_id", "locked", "points", "schema_version", "solution", "task"}
#: Tags kept in Markdown and raw cells of the copy (simple formatting and Markdown's own).
_COPY_TAGS = {"a", "abbr", "acronym", "b", "blockquote", "br", "code", "del", "div", "em", "h1",
              "h2", "h3", "h4", "h5", "h6", "hr", "i", "img", "li", "ol", "p", "pre", "s", "span",
              "strong", "sub", "sup", "table", "tbody", "td", "th", "thead", "tr", "ul"}
#: Their attributes ("*": none on every tag); an image keeps no ``src``, so none is ever loaded.
_COPY_ATTRIBUTES = {"*": set(), "a": {"href", "title"}, "abbr": {"title"}, "acronym": {"title"},
                    "img": {"alt", "title"}, "td": {"align"}, "th": {"align"}}
#: Link schemes that would run code when a Markdown link is clicked (the copy neutralises them).
_SCRIPT_URL = re.compile(r"(?i)\b(java|vb)(\s*)script(\s*):")
#: The elements of HTML (but the drawing one, which the LMS registry's check takes for an LMS):
#: a ``<`` that opens none of them (``$x<y$``, ``p(a)<q``, ``<svg>``) is a student's text, not
#: markup, and stays text instead of being read as a tag and dropped.
_HTML_ELEMENTS = (
    "a abbr acronym address area article aside audio b base bdi bdo blockquote body br button "
    "caption center cite code col colgroup data datalist dd del details dfn dialog div dl "
    "dt em embed fieldset figcaption figure font footer form frame frameset h1 h2 h3 h4 h5 h6 head "
    "header hgroup hr html i iframe img input ins kbd label legend li link main map mark menu meta "
    "meter nav noembed noframes noscript object ol optgroup option output p param picture "
    "plaintext pre progress q rp rt ruby s samp script search section select slot small source "
    "span strike strong style sub summary sup table tbody td template textarea tfoot th thead time "
    "title tr track tt u ul var video wbr xmp").split()
_NAME = "(?:" + "|".join(sorted(_HTML_ELEMENTS, key=len, reverse=True)) + ")"
_ATTRIBUTE = r"""\s+[A-Za-z_:][-\w:.]*(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'=<>`]+))?"""
#: A ``<`` and, when it opens a whole tag of HTML or a comment, that tag.
_TAG_OPEN = re.compile(rf"<(?:{_NAME}(?:{_ATTRIBUTE})*\s*/?>|/{_NAME}\s*>|!--)?", re.IGNORECASE)


def _sanitise_markup(text):
    """Student Markdown with its HTML made safe, by nh3 (Rust's ammonia, an HTML5 parser).

    Kept: :data:`_COPY_TAGS` with :data:`_COPY_ATTRIBUTES`, links to http(s) and mailto only.
    Every other element is removed and its text kept, ``<script>`` and ``<style>`` included (as
    bleach did: the text shows as text, never runs); comments are removed. A ``<`` that opens no
    tag of HTML (:data:`_HTML_ELEMENTS`), or a comment never closed, is escaped first, so that
    text such as ``$x<y$`` stays visible. ``javascript:`` in Markdown links is neutralised.
    """
    import nh3

    closed = text.rfind("-->")

    def escape(match):
        tag = match.group()
        return tag if tag != "<" and (tag != "<!--" or match.start() < closed) else "&lt;" + tag[1:]

    clean = nh3.clean(_TAG_OPEN.sub(escape, text), tags=_COPY_TAGS, clean_content_tags=set(),
                      attributes=_COPY_ATTRIBUTES, url_schemes={"http", "https", "mailto"},
                      strip_comments=True, link_rel=None)
    return _SCRIPT_URL.sub(r"blocked-\1\2script\3:", clean)


def sanitized_notebook(data: bytes | Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """A submitted notebook (bytes, or its cells) as a safe copy for formgrader (plain data).

    Cells and their sources only: outputs, attachments and execution counts are dropped,
    notebook and cell metadata are reduced to nbgrader's plain fields, text is made valid
    UTF-8, HTML in Markdown and raw cells is sanitised with nh3 and ``javascript:`` links
    are neutralised: no student script or markup reaches a teaching assistant's browser. The
    result is an nbformat 4.5 notebook as a dict (write it with :func:`json.dump`).
    """
    cells_in = read_notebook_cells(data) if isinstance(data, (bytes, str)) else data
    cells = []
    for i, cell in enumerate(cells_in):
        kind = cell.get("cell_type")
        if kind not in ("code", "markdown", "raw"):
            continue
        source = cell_source(cell).encode("utf-8", "backslashreplace").decode("utf-8")
        source = source.replace("\x00", "")
        meta = {k: v for k, v in nbgrader_meta(cell).items()
                if k in _NBGRADER_KEYS and isinstance(v, (bool, int, float, str))
                and not (isinstance(v, str) and len(v) > 200)}
        if kind != "code":
            source = _sanitise_markup(source)
        new = {"cell_type": kind, "id": f"cell-{i}", "metadata": {"nbgrader": meta} if meta else {},
               "source": source}
        if kind == "code":
            new.update(execution_count=None, outputs=[])
        cells.append(new)
    return {"cells": cells, "metadata": {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5}


def write_sanitized_cells(cells: Sequence[Mapping[str, Any]], target: Path) -> None:
    """Write :func:`sanitized_notebook` of a submission's cells to ``target`` (called inside
    :func:`~.analysis.analyse`'s child: sanitising costs far more than the text's size)."""
    nb = sanitized_notebook(cells)
    target.parent.mkdir(parents=True, exist_ok=True)
    part = target.with_name(target.name + ".part")  # never a half-written notebook
    with open(part, "w", encoding="utf-8") as fh:
        json.dump(nb, fh, indent=1, ensure_ascii=False)
        fh.write("\n")
    os.replace(part, target)
