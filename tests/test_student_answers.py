"""The student edition never prints an answer, in any form a student can read.

tests/test_chapter_listings.py checks the chapters' sources; this checks what the student
edition *is*: the built website's pages (their code listings), every text file a student can
download from it (sources, notebooks, scripts), its search index and (tests/test_pdf.py) the
PDF. The body of every function an assignment asks for (and of the private helpers and COMPUTES
functions that do its work, test_chapter_listings.answers_in) must appear in none of them, with
identifiers and formatting aside: both sides are reduced to a stream of tokens in which
comments, docstrings and layout are dropped and each identifier is renamed by its order of first
appearance (``v0``, ``v1`` ...), so a listing that renames ``theta`` to ``p`` or reflows the
lines still matches.
"""

from __future__ import annotations

import ast
import html
import io
import json
import keyword
import re
import tokenize
from functools import cache
from pathlib import Path

import pytest
from test_chapter_listings import ASSIGNED, answers_in
from test_chapter_numbers import ROOT

#: Bodies shorter than this many tokens are too generic to look for (``return a / b``).
MIN_TOKENS = 12

_TOKEN = re.compile(r"[A-Za-z_]\w*|\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+|\*\*|//|==|!=|<=|>=|->|"
                    r"[-+*/%@=<>!]=|[^\s\w]")
_COMMENT = re.compile(r"#[^\n]*")
_KEEP = set(keyword.kwlist) | {"None", "True", "False"}


def tokens(text: str) -> list[str]:
    """``text`` as tokens: comments dropped, numbers as ``N``, identifiers kept (keywords too)."""
    return ["N" if t[0].isdigit() or t[0] == "." and len(t) > 1 else t
            for t in _TOKEN.findall(_COMMENT.sub("", text))]


def _is_name(token):
    return (token[0].isalpha() or token[0] == "_") and token not in _KEEP


def canonical(stream: list[str]) -> tuple[str, ...]:
    """Identifiers renamed by order of first appearance (formatting and names aside)."""
    seen = {}
    return tuple((seen.setdefault(t, f"v{len(seen)}") if _is_name(t) else t) for t in stream)


def body_source(path: Path, name: str) -> str:
    """The body of function ``name`` in ``path``, without its docstring and comments."""
    text = path.read_text(encoding="utf-8")
    tree = ast.parse(text)
    func = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name)
    body = func.body
    if isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str) and len(body) > 1:
        body = body[1:]
    lines = text.splitlines(keepends=True)
    source = "".join(lines[body[0].lineno - 1:body[-1].end_lineno])
    kept = [tok for tok in tokenize.generate_tokens(io.StringIO(source).readline)
            if tok.type != tokenize.COMMENT]
    return tokenize.untokenize(kept)


@cache
def reference_bodies() -> dict[str, tuple[str, ...]]:
    """``{module.function: canonical body}`` of every function whose listing prints an answer:
    in ``mlcourse_utils`` and in the instructor-only references of ``solutions/``."""
    found = {}
    paths = [*sorted((ROOT / "mlcourse_utils").glob("*.py")),
             *sorted((ROOT / "solutions").glob("*/instructor_reference.py"))]
    for path in paths:
        for name in sorted(answers_in(path, ASSIGNED)):
            stream = canonical(tokens(body_source(path, name)))
            if len(stream) >= MIN_TOKENS:
                where = path.stem if path.parent.name == "mlcourse_utils" else \
                    f"solutions/{path.parent.name}/{path.stem}"
                found[f"{where}.{name}"] = stream
    return found


def _shape(stream) -> str:
    """The stream with every identifier as ``ID``, joined: candidates are found by ``str.find``."""
    return "\x00" + "\x00".join("ID" if _is_name(t) else t for t in stream) + "\x00"


def printed_answers(text: str, bodies: dict[str, tuple[str, ...]] | None = None) -> list[str]:
    """The reference functions whose body appears in ``text`` (names and layout aside)."""
    bodies = reference_bodies() if bodies is None else bodies
    stream = tokens(text)
    shape = _shape(stream)
    # token index of every "\x00" position in `shape`, to map a match back to the stream
    starts = {}
    position = 0
    for index, token in enumerate(stream):
        starts[position] = index
        position += 1 + len("ID" if _is_name(token) else token)
    found = []
    for label, body in bodies.items():
        pattern = _shape(body)[:-1]
        at = shape.find(pattern)
        while at != -1:
            start = starts[at]
            if canonical(stream[start:start + len(body)]) == body:
                found.append(label)
                break
            at = shape.find(pattern, at + 1)
    return found


# ---------------------------------------------------------------- the matcher itself


PLANTED = '''
<p>Here is how it works.</p>
<div class="highlight"><pre><span></span><span class="k">def</span> <span class="nf">f</span>(z):
    <span class="c1"># a comment the reference does not have</span>
    {body}
</pre></div>
'''


def test_reference_bodies_cover_every_assigned_function():
    """Every task's function has a body long enough to look for."""
    bodies = reference_bodies()
    covered = {label.rsplit(".", 1)[1] for label in bodies}
    assert ASSIGNED, "no assigned functions found"
    defined = set()
    for path in [*(ROOT / "mlcourse_utils").glob("*.py"),
                 *(ROOT / "solutions").glob("*/instructor_reference.py")]:
        defined |= {n.name for n in ast.parse(path.read_text(encoding="utf-8")).body
                    if isinstance(n, ast.FunctionDef)}
    assert ASSIGNED <= defined, f"tasks without a reference: {sorted(ASSIGNED - defined)}"
    short = ASSIGNED - covered
    # A body under MIN_TOKENS tokens would match ordinary code; none of the tasks is that short.
    assert not short, f"bodies too short to look for: {sorted(short)}"


def test_a_planted_listing_is_found_with_other_names_and_layout():
    """The body of a reference function, renamed, reflowed, commented and HTML-escaped inside a
    highlighted listing, is found; the same page without it is clean."""
    label, path, name = next((lab, ROOT / "mlcourse_utils" / f"{lab.split('.')[0]}.py",
                              lab.split(".")[1]) for lab in reference_bodies()
                             if not lab.startswith("solutions/"))
    source = body_source(path, name)
    renamed = source
    for old in sorted({t for t in tokens(source) if _is_name(t)}, key=len, reverse=True):
        renamed = re.sub(rf"\b{re.escape(old)}\b", f"{old}_renamed", renamed)
    reflowed = re.sub(r"\n\s*", "\n    ", renamed).replace(",", " ,  ")
    page = PLANTED.format(body=html.escape(reflowed).replace("(", '<span class="p">(</span>'))
    text = html.unescape(re.sub(r"<[^>]+>", "", page))
    assert label in printed_answers(text)
    assert printed_answers(PLANTED.format(body="return 1 / (1 + np.exp(-z))")) == []


def test_an_ordinary_chapter_cell_is_not_an_answer():
    cell = ("import numpy as np\nfrom mlcourse_utils import mle\nx = np.array([1.0, 2.0, 3.0])\n"
            "mu, var = mle.gaussian_mle(x)\nprint(f'{mu:.2f} {var:.2f}')\n")
    assert printed_answers(cell) == []


# ---------------------------------------------------------------- the built student edition


def _page_code(page: Path) -> str:
    """The text of a page's code listings and outputs (``<pre>`` blocks), tags removed."""
    text = page.read_text(encoding="utf-8")
    blocks = re.findall(r"<pre\b[^>]*>(.*?)</pre>", text, flags=re.S)
    return "\n\n".join(html.unescape(re.sub(r"<[^>]+>", "", b)) for b in blocks)


def _download_text(path: Path) -> str:
    """What a student reads in a downloadable text file (a notebook: its cells and outputs)."""
    text = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix == ".ipynb":
        try:
            nb = json.loads(text)
        except ValueError:
            return text
        parts = []
        for cell in nb.get("cells", []):
            source = cell.get("source", "")
            parts.append("".join(source) if isinstance(source, list) else str(source))
            for output in cell.get("outputs", []):
                data = output.get("text") or output.get("data", {}).get("text/plain", "")
                parts.append("".join(data) if isinstance(data, list) else str(data))
        return "\n\n".join(parts)
    return text


@pytest.fixture(scope="module")
def student_site():
    from test_website import build_once

    return build_once(instructor=False)


@pytest.mark.slow
@pytest.mark.xdist_group("website")
def test_student_website_prints_no_answer(student_site):
    """No page's listings, no download (sources, notebooks, scripts) and not the search index
    hold the body of an assigned function."""
    problems = []
    pages = sorted(student_site.rglob("*.html"))
    assert pages
    for page in pages:
        for label in printed_answers(_page_code(page)):
            problems.append(f"{page.relative_to(student_site)} shows {label}")
    downloads = [p for p in sorted(student_site.rglob("*"))
                 if p.is_file() and p.suffix in (".py", ".ipynb", ".md", ".txt", ".js")
                 and "_static" not in p.parts or p.name == "searchindex.js"]
    assert any(p.name == "searchindex.js" for p in downloads)
    for path in downloads:
        for label in printed_answers(_download_text(path)):
            problems.append(f"{path.relative_to(student_site)} holds {label}")
    assert not problems, "\n".join(problems)
