"""A student's written answers as safe HTML (grading/reports/answers.py)."""

from __future__ import annotations

import base64

import pytest

import html_support
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


# ------------------------------------------------------------------ the sanitiser (nh3)

#: Student HTML that would run or fetch something in the TA's browser, one way each.
HOSTILE = [
    "<script>alert(1)</script>",
    '<img src=x onerror="alert(1)">',
    '<p onclick="alert(1)">click</p>',
    '<a href="https://example.org" onmouseover="alert(1)">link</a>',
    '<a href="javascript:alert(1)">js</a>',
    '<a href=" JaVa\tscript:alert(1)">js, disguised</a>',
    '<a href="data:text/html;base64,PHNjcmlwdD4=">a data page</a>',
    '<img src="https://tracker.example/x.png">',
    '<img src="//tracker.example/x.png">',
    '<img src="data:image/svg+xml;base64,PHN2Zz4=">',
    '<img srcset="https://tracker.example/x.png 2x" alt="s">',
    '<span style="background:url(https://tracker.example/x.png)">styled</span>',
    '<div class="math" style="background:url(//t.example/x)">m</div>',
    "<style>@import url(https://tracker.example/x.css)</style>",
    '<iframe src="https://example.org">frame</iframe>',
    '<svg onload="alert(1)"><circle/></svg>',
    "<math><mtext><img src=x onerror=alert(1)></mtext></math>",
    '<form action="https://x.example"><button formaction="javascript:1">go</button></form>',
    '<object data="https://x.example/y.swf"></object><embed src="https://x.example/y">',
    "<!-- a comment -->",
]


@pytest.mark.parametrize("raw", HOSTILE)
def test_no_script_handler_or_remote_url_survives_the_sanitiser(raw):
    assert html_support.risks(raw)                        # the check sees the danger ...
    assert not html_support.risks(answers.sanitise(raw), embedded_images=True)  # ... gone


def test_the_sanitiser_removes_elements_and_keeps_their_text():
    """Elements outside the allowed ones go, their text stays, ``<script>``'s included (shown
    as text, never run); handlers go, the element they were on stays."""
    html = answers.sanitise('<p onclick="x()">Hello <script>alert(1)</script> <u>under</u> '
                            "<iframe>framed</iframe> <em>kept</em></p>")
    assert html_support.shown_text(html) == "Hello alert(1) under framed kept"
    assert html.startswith("<p>") and "<em>kept</em>" in html and "<script" not in html


def test_embedded_images_and_web_links_are_what_the_sanitiser_keeps():
    html = answers.sanitise(f'<img src="data:image/png;base64,{PNG}" alt="fig"> '
                            '<a href="https://example.org" title="t">web</a> '
                            '<a href="#part-2">here</a> <span class="math">\\(x\\)</span>')
    assert f'src="data:image/png;base64,{PNG}"' in html and 'alt="fig"' in html
    assert '<a href="https://example.org" title="t">web</a>' in html
    assert '<a href="#part-2">here</a>' in html and '<span class="math">' in html
    assert not html_support.risks(html, embedded_images=True)


def test_a_student_s_html_is_shown_as_text_in_the_rendered_answer():
    """Markdown is rendered with raw HTML off: the markup itself is what the TA reads, its
    quotes escaped too (no ``src="http`` in the page, even as text)."""
    source = '<script>alert(1)</script> and <img src="http://t.example/x" onerror="alert(2)">'
    html = render_markdown(source)
    assert html_support.shown_text(html) == source
    assert not html_support.risks(html)
    assert 'src="' not in html and "src=&quot;http://t.example/x&quot;" in html


def test_quotes_in_attributes_and_text_survive_the_sanitiser():
    """The tags nh3 writes are told from the text around them even when an attribute holds
    ``"`` (escaped in it, as ``>`` is): only the text's quotes are escaped."""
    html = answers.sanitise('<p>say "hi" <a href="https://e.org/?q=a&amp;b" title="a &gt; b '
                            '&quot;c&quot;">x</a> "end"</p>')
    assert html == ('<p>say &quot;hi&quot; <a href="https://e.org/?q=a&amp;b" '
                    'title="a &gt; b &quot;c&quot;">x</a> &quot;end&quot;</p>')


@pytest.mark.parametrize(("source", "label"), [
    ("[a](javascript:alert(1))", "a"), ("[b](data:text/html;base64,PHNjcmlwdD4=)", "b"),
    ("![c](https://tracker.example/x.png)", "c"), ("![d](//tracker.example/x.png)", "d"),
    ("![e](data:image/svg+xml;base64,PHN2Zz4=)", "e"), ("[f](vbscript:msgbox)", "f"),
    (f"![g](data:image/png;base64,{PNG})", "g"), ("<https://example.org/auto>", "auto"),
])
def test_markdown_links_and_images_run_and_fetch_nothing(source, label):
    html = render_markdown(source)
    assert not html_support.risks(html, embedded_images=True)
    # the student's words stay: as text, a link's text or an image's alternative text
    assert label in html_support.shown_text(html) or f'alt="{label}"' in html
