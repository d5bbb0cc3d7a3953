"""A student's written answers as safe HTML (grading/reports/answers.py)."""

from __future__ import annotations

import base64

import pytest

from mlcourse_utils.grading.reports import answers
from mlcourse_utils.grading.reports.answers import answer_fragment, render_markdown

#: The first bytes of each image type, then padding: what the magic-number check looks at.
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(8)).decode()
JPEG = base64.b64encode(b"\xff\xd8\xff" + bytes(8)).decode()
WEBP = base64.b64encode(b"RIFF\x00\x00\x00\x00WEBP" + bytes(4)).decode()
NOT_WEBP = base64.b64encode(b"RIFF\x00\x00\x00\x00WAVE" + bytes(4)).decode()


def test_raw_html_is_shown_as_text():
    html = render_markdown("<b>bold?</b> <script>alert(1)</script>")
    assert "<b>" not in html and "<script" not in html
    assert "&lt;b&gt;bold?&lt;/b&gt;" in html


def test_mathematics_is_left_for_mathjax_in_math_elements():
    html = render_markdown("Inline $x^2 < y$ and\n\n$$\\sum_i a_i$$\n")
    assert r'<span class="math">\(x^2 &lt; y\)</span>' in html
    assert r'<div class="math display">\[\sum_i a_i\]</div>' in html


def test_only_web_and_mail_links_keep_their_target():
    html = render_markdown("[a](javascript:alert(1)) [b](https://example.org) [c](mailto:x@y.z)")
    assert "href=\"javascript" not in html  # left as text, never a link
    assert 'href="https://example.org"' in html and 'href="mailto:x@y.z"' in html


@pytest.mark.parametrize(("mime", "data", "shown"), [
    ("image/png", PNG, True),
    ("image/jpeg", JPEG, True),
    ("image/webp", WEBP, True),
    ("image/png", JPEG, False),       # the bytes are not what the type says
    ("image/webp", NOT_WEBP, False),  # RIFF but not WebP
    ("image/svg+xml", PNG, False),    # a type never shown (scripts in SVG)
    ("image/png", "not base64!", False),
])
def test_attached_images_are_shown_only_when_their_bytes_match(mime, data, shown):
    html = render_markdown("![fig](attachment:fig.png)", {"fig.png": {mime: data}})
    assert ("src=\"data:" in html) is shown


def test_remote_and_unattached_images_are_never_loaded():
    html = render_markdown("![a](https://example.org/x.png) ![b](attachment:missing.png)")
    assert "example.org" not in html.replace('alt="a"', "")
    assert "src=" not in html


def test_images_per_cell_are_capped():
    text = " ".join(f"![{i}](attachment:{i}.png)" for i in range(answers.MAX_IMAGES + 3))
    attachments = {f"{i}.png": {"image/png": PNG} for i in range(answers.MAX_IMAGES + 3)}
    assert render_markdown(text, attachments).count("src=\"data:image/png") == answers.MAX_IMAGES


def _markdown(source):
    return {"cell_type": "markdown", "source": source, "metadata": {}}


def test_a_missing_answer_says_so():
    assert "No answer: the notebook has no answer cell" in answer_fragment([])


def test_an_unchanged_answer_is_marked_and_a_written_one_is_not():
    assert "unchanged from the release" in answer_fragment([_markdown("YOUR ANSWER HERE")])
    written = answer_fragment([_markdown("The *mean* is $\\bar x$.")])
    assert "unchanged" not in written and "<em>mean</em>" in written


def test_a_code_cell_shows_its_source_and_saved_text_output_as_text():
    cell = {"cell_type": "code", "source": "print('<b>')", "metadata": {},
            "outputs": [{"output_type": "stream", "name": "stdout", "text": ["<i>", "\x07\n"]},
                        {"output_type": "display_data",
                         "data": {"image/png": PNG, "text/plain": "<Figure>"}}]}
    html = answer_fragment([cell])
    assert "print(&#39;&lt;b&gt;&#39;)" in html
    assert "&lt;i&gt;\\x07" in html            # control codes made visible, tags as text
    assert f'src="data:image/png;base64,{PNG}"' in html
    assert "&lt;Figure&gt;" not in html         # an image's text stand-in is not shown too


def test_more_cells_than_shown_are_counted():
    cells = [_markdown(f"part {i}") for i in range(answers.MAX_ANSWER_CELLS + 2)]
    html = answer_fragment(cells)
    assert "2 more cells with this id are not shown" in html
    assert f"part {answers.MAX_ANSWER_CELLS - 1}" in html
    assert f"part {answers.MAX_ANSWER_CELLS}" not in html
