"""Sphinx extension for the two editions of the course website.

Registered in ``_config.yml`` (``sphinx: extra_extensions``). The configuration value
``mlcourse_edition`` selects the edition:

``"student"`` (the default, what ``make book`` publishes)
    In-text solutions (sphinx-exercise ``{solution}`` directives and gated
    ``{solution-start}``/``{solution-end}`` blocks, with their code cells and outputs) and
    teaching notes (any element with the class ``teaching-note`` or ``instructor-note``, e.g.
    ``:::{admonition} Teaching note`` with ``:class: teaching-note``) are removed from the
    document tree while it is read, so they are in neither the HTML nor the search index.
``"instructor"``
    Everything is shown; the Sphinx tag ``instructor`` is set, so ``{only} instructor`` blocks
    render too (``{only} student`` blocks render only in the student edition). The page for
    instructors (``book/instructors``) is written from the solution notebooks while Sphinx reads
    it (:mod:`mlcourse_utils.book.instructors`, with the notebooks as its dependencies): the
    student edition shows ``book/instructors.md`` itself, a pointer to that page.

Why not sphinx-exercise's own ``hide_solutions``: it drops ``{solution}`` directives but leaves
the content of gated solutions in the page (and its ``solution-end`` node then crashes the HTML
writer), so this extension switches it off and removes the merged solution nodes itself.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docutils import nodes
from sphinx.transforms import SphinxTransform
from sphinx.util import logging

if TYPE_CHECKING:
    from sphinx.application import Sphinx

EDITIONS = ("student", "instructor")
#: Elements with one of these classes are instructor-only.
INSTRUCTOR_CLASSES = frozenset({"teaching-note", "instructor-note"})

logger = logging.getLogger(__name__)


def _is_instructor_only(node):
    from sphinx_exercise.nodes import solution_end_node, solution_node, solution_start_node

    if isinstance(node, (solution_node, solution_start_node, solution_end_node)):
        return True
    return isinstance(node, nodes.Element) and not INSTRUCTOR_CLASSES.isdisjoint(
        node.get("classes", ()))


class RemoveInstructorContent(SphinxTransform):
    """Student edition: drop solutions and teaching notes from the doctree."""

    # After sphinx-exercise's MergeGatedSolutions (priority 10) has gathered each gated
    # solution (including its code cells) into one solution node.
    default_priority = 50

    def apply(self, **kwargs: Any) -> None:
        if self.config.mlcourse_edition != "student":
            return
        doomed = [n for n in self.document.findall(nodes.Element) if _is_instructor_only(n)]
        for node in doomed:
            if node.parent is not None:  # not already gone with an enclosing doomed node
                node.parent.remove(node)


def _instructors_page(app, docname, source):
    """Instructor edition: the page for instructors, from the solution notebooks, in place of
    the student edition's pointer (``book/instructors.md``)."""
    from . import instructors

    if app.config.mlcourse_edition != "instructor" or docname != instructors.DOCNAME:
        return
    root = Path(app.srcdir)
    for path in instructors.dependencies(root):
        app.env.note_dependency(str(path))  # a changed notebook re-reads the page
    source[0] = instructors.page(root)


def _config_inited(app, config):
    if config.mlcourse_edition not in EDITIONS:
        raise ValueError(f"mlcourse_edition must be one of {EDITIONS}, "
                         f"got {config.mlcourse_edition!r}")
    # Solutions are removed by RemoveInstructorContent (see the module docstring).
    config.hide_solutions = False
    app.tags.add(config.mlcourse_edition)
    if not config.html_copy_source:
        # The theme's "download source" button would point at the sources that are not copied
        # (they hold the solutions); Jupyter Book's _config.yml has no key for this option.
        config.html_theme_options.setdefault("use_download_button", False)


def _thebe_enabled(app):
    return bool(app.config.html_theme_options.get("launch_buttons", {}).get("thebe"))


def _is_thebe(asset):
    filename = str(getattr(asset, "filename", asset) or "")
    body = str(getattr(asset, "attributes", {}).get("body", ""))
    return "thebe" in filename or "THEBE_JS_URL" in body


def _drop_unused_thebe(app, pagename, templatename, context, doctree):
    """Without live code (``launch_buttons: thebe: false``) drop sphinx-thebe's assets.

    Jupyter Book always loads sphinx-thebe, whose inline script names a CDN URL
    (unpkg.com); the website must not reference remote scripts (it works offline).
    """
    if _thebe_enabled(app):
        return
    for key in ("script_files", "css_files"):
        if key in context:
            context[key] = [asset for asset in context[key] if not _is_thebe(asset)]


_ICON = re.compile(r'<i class="([^"]*\bfa-[^"]*)"(?![^>]*aria-hidden)')
_SEARCH_FIELD = re.compile(r'(<button class="btn search-button-field[^"]*"[^>]*?)'
                           r' aria-label="Search"')
_THEME_SWITCH = re.compile(r'(<button class="[^"]*\btheme-switch-button\b[^"]*"[^>]*?)'
                           r' aria-label="Color mode"')
_TOGGLE_SUMMARY = re.compile(r'<summary aria-label="Toggle hidden content">')
_CITATION = re.compile(r'(<div class="citation"[^>]*?) role="doc-biblioentry"')


def _accessible_theme_html(html):
    """Fix the WCAG problems of the theme's and the writers' markup that axe-core reports.

    - Icon-font glyphs (``<i class="fa-...">``) are decorative: hidden from assistive
      technology, so a button's accessible name (its ``aria-label``) is not contradicted by a
      glyph.
    - The wide search field shows the text "Search Ctrl+K", so its name comes from that text
      rather than from an ``aria-label`` that leaves part of it out (WCAG 2.5.3, label in name).
    - The colour-mode button shows one of three icons whose titles ("Light", "Dark", "System
      Settings") are its visible label; its name "Color mode" left them out (label in name),
      so the name now contains them.
    - The "Show code cell source" summaries of hidden code cells (myst-nb) were named "Toggle
      hidden content", which is not the text they show: their name now comes from that text.
    - Bibliography entries (docutils) sit in a ``role="list"`` but carry the deprecated role
      ``doc-biblioentry``, so the list had no list items (a critical violation): they are
      ``listitem`` now.
    """
    html = _ICON.sub(r'<i class="\1" aria-hidden="true"', html)
    html = _SEARCH_FIELD.sub(r"\1", html)
    html = _THEME_SWITCH.sub(r'\1 aria-label="Color mode: light, dark or system settings"', html)
    html = _TOGGLE_SUMMARY.sub("<summary>", html)
    return _CITATION.sub(r'\1 role="listitem"', html)


def _fix_theme_accessibility(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    for page in Path(app.outdir).rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        fixed = _accessible_theme_html(text)
        if fixed != text:
            page.write_text(fixed, encoding="utf-8")


def setup(app: Sphinx) -> dict[str, Any]:
    app.setup_extension("sphinx_exercise")
    app.add_config_value("mlcourse_edition", "student", "env", types=[str])
    app.connect("config-inited", _config_inited)
    app.connect("source-read", _instructors_page)
    app.add_transform(RemoveInstructorContent)
    app.connect("html-page-context", _drop_unused_thebe, priority=900)
    app.connect("build-finished", _fix_theme_accessibility)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
