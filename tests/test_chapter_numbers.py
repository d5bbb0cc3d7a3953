"""Every decimal number in a chapter's prose comes from executed code.

A number typed into the text drifts silently when the code or the data change; a glued one
(``myst_nb.glue`` in a code cell, ``{glue:text}`name:.3f``` in the text) cannot. This test reads
the source of every page listed in ``_toc.yml`` and fails on any decimal number (``0.735``,
``72.5``) in its prose, math or figure captions that is neither glued nor a stated constant of
the lecture listed in ``tests/lecture_constants.yml`` (with the reason it may be typed).
Code cells, inline code, directive options and cross-reference roles are not prose.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from mlcourse_utils.config import toc_docnames

ROOT = Path(__file__).resolve().parent.parent
CONSTANTS_FILE = Path(__file__).with_name("lecture_constants.yml")

DECIMAL = re.compile(r"(?<![\w.])\d+\.\d+(?![\w.]*\d)")
_FENCE = re.compile(r"^(?P<fence>`{3,}|:{3,})\s*(?P<info>\S*)")
_ROLE = re.compile(r"\{(?P<name>[\w:.-]+)\}`(?P<body>[^`]*)`")
_INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+\1")


def toc_pages(root=ROOT):
    """Docnames of every page in ``_toc.yml``, root first, in order."""
    return toc_docnames(root / "_toc.yml")


def _caption_text(header_lines):
    """Figure captions and image alt texts of a code cell's YAML header (they are prose)."""
    try:
        meta = yaml.safe_load("\n".join(header_lines)) or {}
    except yaml.YAMLError:
        return []
    mystnb = meta.get("mystnb", {}) if isinstance(meta, dict) else {}
    texts = []
    for key, field in (("figure", "caption"), ("image", "alt")):
        value = (mystnb.get(key) or {}).get(field)
        if value:
            texts.append(str(value))
    return texts


def prose(source):
    """The prose of a MyST page: text, math and captions, without code, options and roles."""
    lines = source.splitlines()
    if lines and lines[0].strip() == "---":  # front matter
        end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), 0)
        lines = lines[end + 1:]
    kept = []
    open_directives = []  # fences of the directives ({note}, {exercise}, ...) now open
    i = 0
    while i < len(lines):
        line = lines[i]
        match = _FENCE.match(line.strip())
        if match:
            fence, info = match.group("fence"), match.group("info")
            if not info and open_directives and fence == open_directives[-1]:
                open_directives.pop()  # the end of a directive whose content is prose
                i += 1
                continue
            if info.startswith("{") and not info.startswith(("{code-cell", "{literalinclude")):
                open_directives.append(fence)  # its title and content are prose
                kept.append(line.strip()[len(match.group(0)):])
                i += 1
                continue
            # a code cell, a listing or a plain code block: skip to its closing fence, keeping
            # the captions of a code cell's YAML header
            j = i + 1
            if info.startswith("{code-cell") and j < len(lines) and lines[j].strip() == "---":
                header = []
                j += 1
                while j < len(lines) and lines[j].strip() != "---":
                    header.append(lines[j])
                    j += 1
                kept.extend(_caption_text(header))
            while j < len(lines) and lines[j].strip() != fence:
                j += 1
            i = j + 1
            continue
        stripped = line.strip()
        if re.match(r"^:[\w-]+:", stripped) or re.match(r"^\([\w-]+\)=$", stripped):
            i += 1  # directive option or label line
            continue
        kept.append(line)
        i += 1
    text = "\n".join(kept)
    text = re.sub(r"<!--.*?-->", " ", text, flags=re.S)
    text = _ROLE.sub(lambda m: m.group("body") if m.group("name") == "term" else " ", text)
    text = _INLINE_CODE.sub(" ", text)
    return text


#: Numbered references ("eq. 3.10", "section 5.8", "eqs. 3.27 to 3.29", "§4.3.2") are labels,
#: not quantities: they are left out before decimals are looked for.
_REFERENCE = re.compile(
    r"(?:\b(?:eqs?\.|equations?|sections?|exercises?|chapters?|figs?\.|figures?|tables?"
    r"|algorithms?|theorems?)|§)\s*\d+(?:\.\d+)*(?:\s*(?:to|and|or|–|-|,)\s*\d+(?:\.\d+)*)*",
    re.IGNORECASE)


def unglued_decimals(source, allowed=()):
    """Decimal numbers of the prose that are not in ``allowed``, with their line of context."""
    found = []
    for line in _REFERENCE.sub(" ", prose(source)).splitlines():
        for match in DECIMAL.finditer(line):
            if match.group(0) not in allowed:
                found.append((match.group(0), line.strip()[:120]))
    return found


def _constants():
    data = yaml.safe_load(CONSTANTS_FILE.read_text(encoding="utf-8")) or {}
    return {page: dict(values or {}) for page, values in data.items()}


def _source(docname):
    for suffix in (".md", ".ipynb"):
        path = ROOT / f"{docname}{suffix}"
        if path.exists():
            return path.read_text(encoding="utf-8")
    raise FileNotFoundError(docname)


PAGES = toc_pages()


@pytest.mark.parametrize("docname", PAGES)
def test_prose_numbers_are_glued(docname):
    """No decimal number in a page's prose is typed by hand (glue it or list a lecture constant)."""
    allowed = _constants().get(docname, {})
    found = unglued_decimals(_source(docname), allowed)
    assert not found, (
        f"{docname}: decimal numbers typed in the prose; glue them from the executed cell "
        "({glue:text}`name:.3f`) or, for a constant the lecture states, list them in "
        "tests/lecture_constants.yml:\n"
        + "\n".join(f"  {value!r} in: {line}" for value, line in found)
    )


def test_lecture_constants_are_used_and_explained():
    """Every allowed constant names a book page, occurs in its prose and says why it is typed."""
    for docname, values in _constants().items():
        assert docname in PAGES, \
            f"tests/lecture_constants.yml lists {docname}, which is not in _toc.yml"
        text = prose(_source(docname))
        for value, reason in values.items():
            assert DECIMAL.fullmatch(str(value)), f"{docname}: {value!r} is not a decimal number"
            assert reason and len(str(reason).split()) >= 3, \
                f"{docname}: say why {value} may be typed"
            assert re.search(rf"(?<![\w.]){re.escape(str(value))}(?![\w.]*\d)", text), (
                f"{docname}: the constant {value} is no longer in the prose; "
                "remove it from the list")


SAMPLE = """\
---
kernelspec: {name: python3}
---
# Sample

```{code-cell} ipython3
---
mystnb:
  figure:
    caption: A fit with slope 2.31.
    name: fig-sample
---
print(0.123)
```

The glued value {glue:text}`acc:.3f` is fine, `alpha=0.01` is code, {numref}`fig-sample` a link.
The accuracy is 0.947 and $\\hat\\theta \\approx 0.67$.
The lecture's eq. 3.10, its eqs. 3.27 to 3.29, section 5.8 and §4.3.2 are references.
"""


def test_checker_finds_typed_numbers_and_ignores_code():
    """The checker flags typed decimals in text, math and captions, and nothing in code or roles."""
    found = [value for value, _ in unglued_decimals(SAMPLE)]
    assert found == ["2.31", "0.947", "0.67"]
    assert [v for v, _ in unglued_decimals(SAMPLE, allowed={"2.31", "0.947", "0.67"})] == []
