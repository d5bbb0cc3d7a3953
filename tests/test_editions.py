"""The Sphinx extension of the two editions (book/editions.py), without a Sphinx build.

The built website is test_website's; here the transform runs on a small document tree and the
hooks on stand-ins for Sphinx's application and configuration.
"""

from __future__ import annotations

import types

import pytest
from docutils import nodes
from docutils.frontend import get_default_settings
from docutils.parsers.rst import Parser
from docutils.utils import new_document

from mlcourse_utils.book import editions


def _document(edition):
    document = new_document("page", get_default_settings(Parser))
    config = types.SimpleNamespace(mlcourse_edition=edition)
    document.settings.env = types.SimpleNamespace(config=config)
    section = nodes.section(ids=["s"])
    section += nodes.paragraph(text="the chapter")
    note = nodes.admonition(classes=["admonition", "teaching-note"])
    note += nodes.paragraph(text="say this in class")
    note += nodes.container(classes=["instructor-note"])  # nested: removed with its parent
    section += note
    section += nodes.container(classes=["other"])
    document += section
    return document


def _texts(document):
    return [n.astext() for n in document.findall(nodes.paragraph)]


def test_the_student_edition_loses_teaching_notes_and_solutions():
    from sphinx_exercise.nodes import solution_node

    document = _document("student")
    solution = solution_node()
    solution += nodes.paragraph(text="the answer")
    document[0] += solution
    editions.RemoveInstructorContent(document).apply()
    assert _texts(document) == ["the chapter"]
    assert [n["classes"] for n in document.findall(nodes.container)] == [["other"]]


def test_the_instructor_edition_keeps_everything():
    document = _document("instructor")
    editions.RemoveInstructorContent(document).apply()
    assert _texts(document) == ["the chapter", "say this in class"]


def _app(edition, copy_source=True):
    config = types.SimpleNamespace(mlcourse_edition=edition, hide_solutions=True,
                                   html_copy_source=copy_source, html_theme_options={})
    return types.SimpleNamespace(tags=set(), config=config), config


def test_config_sets_the_tag_and_turns_off_sphinx_exercise_hiding():
    app, config = _app("instructor")
    editions._config_inited(app, config)
    assert app.tags == {"instructor"} and config.hide_solutions is False
    assert config.html_theme_options == {}
    app, config = _app("student", copy_source=False)
    editions._config_inited(app, config)
    assert config.html_theme_options == {"use_download_button": False}  # sources not copied


def test_an_unknown_edition_is_an_error_naming_the_setting():
    app, config = _app("teacher")
    with pytest.raises(ValueError, match="mlcourse_edition must be one of.*'teacher'"):
        editions._config_inited(app, config)


def test_thebe_assets_are_dropped_unless_live_code_is_on():
    thebe = types.SimpleNamespace(filename="_static/sphinx-thebe.js", attributes={})
    inline = types.SimpleNamespace(filename="", attributes={"body": "var THEBE_JS_URL = 'x'"})
    context = {"script_files": ["_static/site.js", thebe, inline], "css_files": ["thebe.css"]}
    app, _ = _app("student")
    editions._drop_unused_thebe(app, "page", "page.html", context, None)
    assert context == {"script_files": ["_static/site.js"], "css_files": []}
    app.config.html_theme_options = {"launch_buttons": {"thebe": True}}
    kept = {"script_files": [thebe]}
    editions._drop_unused_thebe(app, "page", "page.html", kept, None)
    assert kept == {"script_files": [thebe]}


@pytest.mark.parametrize(("html", "fixed"), [
    ('<i class="fa-solid fa-moon"></i>', '<i class="fa-solid fa-moon" aria-hidden="true"></i>'),
    ('<i class="fa-x" aria-hidden="true"></i>', '<i class="fa-x" aria-hidden="true"></i>'),
    ('<i class="other"></i>', '<i class="other"></i>'),
    ('<button class="btn search-button-field search" title="s" aria-label="Search">',
     '<button class="btn search-button-field search" title="s">'),
    ('<button class="btn theme-switch-button" title="t" aria-label="Color mode">',
     '<button class="btn theme-switch-button" title="t" '
     'aria-label="Color mode: light, dark or system settings">'),
    ('<summary aria-label="Toggle hidden content">', "<summary>"),
    ('<div class="citation" id="c1" role="doc-biblioentry">',
     '<div class="citation" id="c1" role="listitem">'),
])
def test_theme_markup_is_made_accessible(html, fixed):
    assert editions._accessible_theme_html(html) == fixed


def _reading_app(edition):
    """A stand-in for Sphinx's application while it reads: its edition, the book's folder and
    an environment that records the dependencies noted."""
    from mlcourse_utils.course import ROOT

    noted = []
    app = types.SimpleNamespace(config=types.SimpleNamespace(mlcourse_edition=edition),
                                srcdir=str(ROOT),
                                env=types.SimpleNamespace(note_dependency=noted.append))
    return app, noted


def test_the_instructor_edition_writes_the_page_for_instructors_from_the_notebooks():
    from mlcourse_utils.book import instructors
    from mlcourse_utils.course import ROOT

    app, noted = _reading_app("instructor")
    source = ["the student edition's pointer"]
    editions._instructors_page(app, "book/instructors", source)
    assert source == [instructors.page()]
    assert {str(p) for p in instructors.sources()} < set(noted)  # a changed notebook re-reads it
    assert str(instructors.TEMPLATES / instructors.TEMPLATE) in noted
    assert str(ROOT / "mlcourse_utils" / "grading" / "variants.py") in noted  # QUESTIONS


@pytest.mark.parametrize(("edition", "docname"), [("student", "book/instructors"),
                                                   ("instructor", "book/mle")])
def test_other_pages_and_the_student_edition_are_read_as_they_are(edition, docname):
    app, noted = _reading_app(edition)
    source = ["as written"]
    editions._instructors_page(app, docname, source)
    assert source == ["as written"] and noted == []
