"""The copy of a submitted notebook that formgrader opens (grading/graded/notebook_copy.py):
sources kept, outputs and metadata dropped, student HTML made safe by nh3 and text that only
looks like markup kept visible (each expected text below written by hand from the policy).
"""

from __future__ import annotations

import html
import json

import pytest

import html_support
from mlcourse_utils.grading.graded import notebook_copy


def test_the_sanitised_copy_keeps_sources_and_drops_what_could_run():
    nb = {"cells": [
        {"cell_type": "markdown", "metadata": {"nbgrader": {"grade_id": "d", "points": 2,
                                                            "evil": "x"}},
         "source": '<script>x()</script><a href="javascript:alert(1)">m</a> $x^2$'},
        {"cell_type": "code", "metadata": {"tags": ["t"]}, "execution_count": 3,
         "outputs": [{"output_type": "display_data", "data": {"text/html": "<script>"}}],
         "source": "def f():\n    return 1\x00\n"},
        {"cell_type": "weird", "metadata": {}, "source": "?"},
    ], "metadata": {"widgets": {"x": 1}}, "nbformat": 4, "nbformat_minor": 5}
    copy = notebook_copy.sanitized_notebook(json.dumps(nb).encode())
    markdown, code = copy["cells"]
    assert "<script>" not in markdown["source"] and "javascript:" not in markdown["source"]
    assert "$x^2$" in markdown["source"]
    assert markdown["metadata"] == {"nbgrader": {"grade_id": "d", "points": 2}}
    assert code["outputs"] == [] and code["execution_count"] is None
    assert code["source"] == "def f():\n    return 1\n" and code["metadata"] == {}
    assert "widgets" not in copy["metadata"]


def _copied(source):
    """The Markdown source of one cell after the sanitised copy."""
    cell = {"cell_type": "markdown", "metadata": {}, "source": source}
    return notebook_copy.sanitized_notebook([cell])["cells"][0]["source"]


def test_the_copy_removes_a_script_element_and_keeps_its_text():
    """The policy: an element outside the few kept (simple formatting) is removed and its text
    kept, ``<script>`` too (as bleach did), so the TA sees what the student wrote, inert."""
    copied = _copied("before <script>alert(1)</script> after <u>under</u> <b>bold</b>")
    assert copied == "before alert(1) after under <b>bold</b>"
    # A tag split by another is not put back together by the removal.
    assert "<script" not in _copied("<scr<script>ipt>alert(1)</script>").lower()


@pytest.mark.parametrize("text", [
    "Since $x<y$ and $p(a)<q(b)$, if a <b then",   # looks like tags to a parser, is maths
    "<3 and a<-b, x << y",
    "a comment never closed: <!-- still shown",
    "<svg><circle/></svg> and <my-widget>",       # not HTML's own elements: text as written
])
def test_text_that_only_looks_like_markup_stays_visible(text):
    copied = _copied(text)
    assert html.unescape(copied) == text
    assert not html_support.risks(copied)


@pytest.mark.parametrize("raw", [
    "<script>alert(1)</script>", '<img src=x onerror="alert(1)">',
    '<p onclick="alert(1)">click</p>', '<a href="javascript:alert(1)">js</a>',
    '<a href=" JaVa\tscript:alert(1)">js, disguised</a>',
    '<a href="data:text/html;base64,PHNjcmlwdD4=">a data page</a>',
    '<img src="https://tracker.example/x.png">', '<img src="data:image/png;base64,iVBORw0=">',
    '<img srcset="https://tracker.example/x.png 2x" alt="s">',
    '<span style="background:url(https://tracker.example/x.png)">styled</span>',
    "<style>@import url(https://tracker.example/x.css)</style>",
    '<iframe src="https://example.org">frame</iframe>',
    "<svg onload=alert(1)>", "<math><mtext><img src=x onerror=alert(1)></mtext></math>",
    '<form action="https://x.example"><button formaction="javascript:1">go</button></form>',
    '<object data="https://x.example/y.swf"></object><embed src="https://x.example/y">',
    "<!-- a comment -->", "<SCRIPT >alert(1)</SCRIPT >",
])
def test_no_script_handler_or_remote_url_survives_the_copy(raw):
    assert html_support.risks(raw)                 # the check sees the danger ...
    assert not html_support.risks(_copied(raw))    # ... and the copy has none (no image at all)


def test_web_links_and_simple_formatting_are_kept_in_the_copy():
    copied = _copied('<a href="https://example.org" title="t">web</a> <em>e</em> '
                     '<td align="left">c</td> <img alt="a figure" src="https://x.example/y.png">')
    assert '<a href="https://example.org" title="t">web</a>' in copied and "<em>e</em>" in copied
    assert '<img alt="a figure">' in copied   # its description stays; the picture is never loaded



def test_sanitized_notebook_drops_outputs_attachments_and_script():
    nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": {"evil": "<script>"}, "cells": [
        {"cell_type": "code", "source": "x = 1", "metadata": {
            "nbgrader": {"grade_id": "f", "solution": True, "points": 2, "extra": {"a": 1}}},
         "outputs": [{"output_type": "display_data", "data": {"text/html": "<script>x</script>"},
                      "metadata": {}}], "execution_count": 3},
        {"cell_type": "markdown", "source": "ok <script>alert(1)</script><img src=x onerror=y>"
                                            " \ud800", "metadata": {},
         "attachments": {"a.png": {"image/png": "AAAA"}}},
    ]}
    import nbformat


    clean = notebook_copy.sanitized_notebook(json.dumps(nb).encode())
    text = json.dumps(clean)
    assert "<script" not in text and "onerror" not in text and "attachments" not in text
    nbformat.validate(nbformat.from_dict(clean))  # a valid notebook for formgrader
    cells = clean["cells"]
    assert cells[0]["outputs"] == [] and cells[0]["execution_count"] is None
    assert cells[0]["metadata"]["nbgrader"] == {"grade_id": "f", "solution": True, "points": 2}
    assert cells[1]["source"].startswith("ok ")
    text.encode("utf-8")


