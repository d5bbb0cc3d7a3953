"""A student's written answers as safe HTML: Markdown, mathematics, embedded images, outputs.

Everything here reads what a student wrote, so it runs inside the limited child process of
:mod:`.analysis` (rendering Markdown and sanitising HTML costs far more than the text's size).
Markdown is rendered with markdown-it-py with raw HTML switched off (a student's HTML shows as
text), then sanitised with nh3 (:func:`sanitise`); images are shown only when embedded (PNG,
JPEG, GIF or WebP data checked by their first bytes, e.g. pasted attachments), never fetched;
mathematics is left in ``class="math"`` elements for MathJax to typeset in the page (see
:mod:`.manual`).
"""

from __future__ import annotations

import base64
import functools
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..notebook import cell_source
from ..text import clean_text, plural

#: Longest answer shown (characters), largest embedded image (bytes) and images per cell.
MAX_ANSWER = 100_000
MAX_IMAGE = 2 * 2**20
MAX_IMAGES = 10
#: Cells with one grade_id shown per student, outputs read per cell, bytes of one rendered answer.
MAX_ANSWER_CELLS = 10
MAX_OUTPUTS = 100
MAX_FRAGMENT = 8 * 2**20
_IMAGE_MAGIC = {"image/png": b"\x89PNG\r\n\x1a\n", "image/jpeg": b"\xff\xd8\xff",
                "image/gif": b"GIF8", "image/webp": b"RIFF"}
_DATA_IMAGE = re.compile(r"data:(image/(?:png|jpeg|gif|webp));base64,([A-Za-z0-9+/=\s]+)\Z")

ALLOWED_TAGS = {"p", "br", "hr", "em", "strong", "code", "pre", "blockquote", "ul", "ol", "li",
                "h1", "h2", "h3", "h4", "h5", "h6", "a", "img", "table", "thead", "tbody",
                "tr", "th", "td", "span", "div", "del", "s"}
#: The attributes nh3 may keep ("*": none on every tag), each then checked by its value.
_ATTRIBUTES = {"*": set(), "a": {"href", "title"}, "img": {"src", "alt", "title"},
               "span": {"class"}, "div": {"class"}}
#: A tag as nh3 writes it: attribute values in double quotes, a ``"`` inside them escaped.
_WRITTEN_TAG = re.compile(r'(<(?:[^">]|"[^"]*")*>)')


def _safe_image(mime, data):
    """``data`` (base64 text) as a data URI when it decodes to an image of type ``mime``."""
    if mime not in _IMAGE_MAGIC or not isinstance(data, str) or len(data) > MAX_IMAGE * 4 // 3 + 8:
        return None
    try:
        raw = base64.b64decode("".join(data.split()), validate=True)
    except ValueError:
        return None
    if not raw.startswith(_IMAGE_MAGIC[mime]) or len(raw) > MAX_IMAGE:
        return None
    if mime == "image/webp" and raw[8:12] != b"WEBP":
        return None
    return f"data:{mime};base64,{base64.b64encode(raw).decode('ascii')}"


def _allowed_attribute(tag, name, value):
    if tag == "a":
        return name in ("href", "title") and (name != "href" or value.startswith(
            ("http://", "https://", "mailto:", "#")))
    if tag == "img":
        if name == "src":
            match = _DATA_IMAGE.match(value)
            return bool(match) and _safe_image(match.group(1), match.group(2)) is not None
        return name in ("alt", "title")
    return tag in ("span", "div") and name == "class" and value in ("math", "math display")


def sanitise(html: str) -> str:
    """HTML that renders safely in the TA's page: :data:`ALLOWED_TAGS` only (others removed,
    their text kept), no handler or style attribute, links to http(s), mailto or ``#`` only,
    images only from embedded image data (never fetched), no comment. A ``"`` in the text
    stays ``&quot;`` (as markdown-it writes it; nh3 would write it bare), so that a student's
    ``<img src="http...">`` shown as text never reads as an attribute."""
    import nh3

    clean = nh3.clean(html, tags=ALLOWED_TAGS, clean_content_tags=set(), attributes=_ATTRIBUTES,
                      attribute_filter=lambda tag, name, value:
                      value if _allowed_attribute(tag, name, value) else None,
                      url_schemes={"http", "https", "mailto", "data"}, strip_comments=True,
                      link_rel=None)
    parts = _WRITTEN_TAG.split(clean)  # text, tag, text, ..., text
    return "".join(p if i % 2 else p.replace('"', "&quot;") for i, p in enumerate(parts))


@functools.lru_cache(maxsize=1)
def _markdown():
    from markdown_it import MarkdownIt
    from mdit_py_plugins.dollarmath import dollarmath_plugin

    md = MarkdownIt("commonmark", {"html": False}).enable("table")
    md.use(dollarmath_plugin, allow_space=True, double_inline=True)
    from markdown_it.common.utils import escapeHtml as escape

    md.add_render_rule("math_inline",
                       lambda self, tokens, i, options, env:
                       f'<span class="math">\\({escape(tokens[i].content)}\\)</span>')
    for rule in ("math_block", "math_inline_double", "math_block_label"):
        md.add_render_rule(rule, lambda self, tokens, i, options, env:
                           f'<div class="math display">\\[{escape(tokens[i].content)}\\]</div>')
    return md


def render_markdown(text: str, attachments: Mapping[str, Any] | None = None) -> str:
    """Untrusted Markdown as safe HTML: no raw HTML, no remote images, sanitised by nh3.

    ``attachments`` (a notebook cell's) supply images referenced as ``attachment:NAME``.
    """
    text = clean_text(text, MAX_ANSWER)
    shown = []

    def attachment(match):
        item = (attachments or {}).get(match.group(1))
        if isinstance(item, dict) and len(shown) < MAX_IMAGES:
            for mime, data in item.items():
                uri = _safe_image(mime, data)
                if uri:
                    shown.append(uri)
                    return f"({uri})"
        return "(#attachment-not-shown)"

    text = re.sub(r"\(attachment:([^)\s]{1,200})\)", attachment, text)
    html = _markdown().render(text)
    return sanitise(html)


def _outputs_text(cell):
    """What a code cell printed (text only, cleaned) and its images (as safe data URIs)."""
    texts, images = [], []
    outputs = cell.get("outputs")
    for out in outputs[:MAX_OUTPUTS] if isinstance(outputs, list) else []:
        if not isinstance(out, dict):
            continue
        if out.get("output_type") == "stream":
            texts.append(out.get("text"))
        data = out.get("data") if isinstance(out.get("data"), dict) else {}
        for mime in ("image/png", "image/jpeg", "image/gif"):
            uri = _safe_image(mime, data.get(mime)) if mime in data and len(images) < 10 else None
            if uri:
                images.append(uri)
                break
        else:
            if "text/plain" in data:
                texts.append(data["text/plain"])
    text = "".join("".join(t for t in x if isinstance(t, str)) if isinstance(x, list)
                   else x if isinstance(x, str) else "" for x in texts)
    return clean_text(text, 20_000), images


@functools.lru_cache(maxsize=1)
def environment() -> Any:
    """The Jinja environment of the grading templates (autoescaping, strict)."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(Path(__file__).parents[1] / "templates"),
        autoescape=True, trim_blocks=True, lstrip_blocks=True, undefined=jinja2.StrictUndefined)
    env.filters["points"] = lambda x: f"{x:g}"
    return env


def answer_fragment(cells: Iterable[Mapping[str, Any]]) -> str:
    """One student's answer to one manually graded cell as an HTML fragment (sanitised).

    ``cells`` are the student's cells with that ``grade_id`` (none: the answer is missing).
    Runs inside :func:`~.analysis.analyse`'s child: rendering Markdown and sanitising HTML
    costs far more than the text's size. At most :data:`MAX_ANSWER_CELLS` cells and
    :data:`MAX_FRAGMENT` bytes are shown (a note says what was cut).
    """
    cells = list(cells)
    template = environment().get_template("manual_answer.html")
    if not cells:
        return template.render(missing="the notebook has no answer cell with this id (deleted "
                                       "or altered)", parts=[], unchanged=False, cut="")
    parts = []
    for cell in cells[:MAX_ANSWER_CELLS]:
        source = cell_source(cell)
        if cell.get("cell_type") == "markdown":
            attachments = (cell.get("attachments")
                           if isinstance(cell.get("attachments"), dict) else {})
            parts.append({"html": render_markdown(source, attachments)})
        else:
            text, images = _outputs_text(cell)
            parts.append({"code": clean_text(source, MAX_ANSWER), "output": text, "images": images})
    unchanged = all(cell_source(c).strip() in ("", "YOUR ANSWER HERE") for c in cells)
    more = len(cells) - MAX_ANSWER_CELLS
    cut = (f"{plural(more, 'more cell')} with this id {'is' if more == 1 else 'are'} not shown"
           if len(cells) > MAX_ANSWER_CELLS else "")
    html = template.render(missing="", parts=parts, unchanged=unchanged, cut=cut)
    if len(html.encode("utf-8")) > MAX_FRAGMENT:
        html = template.render(missing=f"the answer is larger than {MAX_FRAGMENT // 2**20} MB "
                                       "once rendered; open the notebook to read it",
                               parts=[], unchanged=False, cut="")
    return html
