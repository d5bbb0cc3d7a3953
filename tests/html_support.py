"""What a browser would run or fetch in an HTML fragment, and the text it would show.

Read with the standard library's ``html.parser``, independently of the sanitiser under test
(nh3): the tests of the pages a teaching assistant opens check their student HTML with it.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

#: Elements that run code, load a document or change the page around them.
ACTIVE_ELEMENTS = {"script", "style", "iframe", "frame", "object", "embed", "svg", "math", "link",
                   "meta", "base", "form", "template", "noscript", "textarea"}
#: Attributes that hold a URL.
URL_ATTRIBUTES = {"href", "src", "action", "formaction", "xlink:href", "background", "poster",
                  "cite", "data"}
_EMBEDDED_IMAGE = re.compile(r"data:image/(png|jpeg|gif|webp);base64,[A-Za-z0-9+/=]+\Z")


class _Reader(HTMLParser):
    def __init__(self, embedded_images: bool) -> None:
        super().__init__(convert_charrefs=True)
        self.embedded_images, self.risks, self.text = embedded_images, [], []

    def handle_starttag(self, tag, attrs):
        if tag in ACTIVE_ELEMENTS:
            self.risks.append(f"<{tag}> element")
        for name, value in attrs:
            url = re.sub(r"[\x00-\x20]", "", value or "").lower()
            if name.startswith("on"):
                self.risks.append(f"{name} handler on <{tag}>")
            elif name in ("style", "srcset"):
                self.risks.append(f"{name} on <{tag}> (may load a URL)")
            elif name in URL_ATTRIBUTES and url.startswith(("javascript:", "vbscript:")):
                self.risks.append(f"script URL in {name} of <{tag}>")
            elif name in URL_ATTRIBUTES and url.startswith("data:") and not (
                    self.embedded_images and tag == "img" and name == "src"
                    and _EMBEDDED_IMAGE.match(value or "")):
                self.risks.append(f"data: URL in {name} of <{tag}>")
            elif name != "href" and name in URL_ATTRIBUTES and url.startswith(
                    ("http:", "https:", "//", "ftp:", "file:")):
                self.risks.append(f"remote URL in {name} of <{tag}> (fetched when shown)")

    handle_startendtag = handle_starttag

    def handle_comment(self, data):
        self.risks.append("comment")

    def handle_data(self, data):
        self.text.append(data)


def risks(html: str, embedded_images: bool = False) -> list[str]:
    """What in ``html`` a browser would run or fetch (empty: nothing). With ``embedded_images``,
    an ``<img src>`` of base64 PNG, JPEG, GIF or WebP data is allowed."""
    reader = _Reader(embedded_images)
    reader.feed(html)
    reader.close()
    return reader.risks


def shown_text(html: str) -> str:
    """The text a browser shows for ``html`` (tags dropped, entities decoded), spaces collapsed."""
    reader = _Reader(False)
    reader.feed(html)
    reader.close()
    return " ".join("".join(reader.text).split())
