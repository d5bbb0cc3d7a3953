"""`mlcourse pdf`: the lecture notes as PDF, printed from the built website by headless Chromium.

Both editions are printed once per session (into ``_build/pdf-tests/``) from the websites that
tests/test_website.py builds (``build_once``: one build per session, shared). What is checked
is read back from the PDFs themselves: their text (pypdf), their bookmarks and rendered pages
(pypdfium2); one rendered page is kept as ``_build/pdf-tests/mle-page-2.png``.
"""

from __future__ import annotations

import functools
import html
import re
import time

import pytest
from test_website import (
    CHAPTERS,
    CHROMIUM,
    INSTRUCTOR_HTML,
    NUMBERED_DOCNAMES,
    STUDENT_HTML,
    _HiddenTextCollector,
    _source,
    build_once,
    provenance_mentions,
)

from mlcourse_utils.book.pdf import _css_string, build_pdfs
from mlcourse_utils.config import toc_docnames
from mlcourse_utils.course import ROOT

pytestmark = [
    pytest.mark.slow,
    pytest.mark.xdist_group("website"),
    pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (apt-get install -y "
                       "chromium); .ci/run installs it"),
]

OUT = ROOT / "_build" / "pdf-tests"
ARTIFACT = OUT / "mle-page-2.png"

#: TeX commands and the character MathJax's fonts draw for them (what text extraction reads).
TEX_GLYPHS = {r"\theta": "θ", r"\mu": "μ", r"\sigma": "σ", r"\pi": "π", r"\mid": "∣",
              r"\sum": "∑", r"\infty": "∞", r"\propto": "∝", r"\approx": "≈", r"\le": "≤"}


def _text(path):
    """The PDF's text, extracted once per session (several tests read the same PDFs, and pypdf
    takes tens of seconds for the whole book): keyed by the file's size and time, so a file
    written again is read again."""
    from pathlib import Path

    stat = Path(path).stat()
    return _extract_text(str(path), stat.st_size, stat.st_mtime_ns)


@functools.cache
def _extract_text(path, size, mtime_ns):
    from pypdf import PdfReader

    return "\n".join(page.extract_text() or "" for page in PdfReader(path).pages)


def _squeeze(text):
    return re.sub(r"\s+", "", text)


@pytest.fixture(scope="session")
def pdfs():
    """{edition: (PdfResult, seconds)} for both editions, printed once."""
    made = {}
    for instructor in (False, True):
        edition = "instructor" if instructor else "student"
        site = build_once(instructor=instructor)
        start = time.monotonic()
        result = build_pdfs(instructor=instructor, out=OUT / edition, html_dir=site)
        made[edition] = result
        print(f"{edition} PDFs: {result.pages['book']} pages in {time.monotonic() - start:.0f} s")
    return made


def _numbered_chapters():
    import yaml

    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    return [entry["file"] for part in toc["parts"] if part.get("numbered")
            for entry in part["chapters"]]


#: The numbered chapters: each uses mathematics (front and back matter may not).
NUMBERED = _numbered_chapters()


def test_the_numbered_chapters_are_printed():
    assert len(NUMBERED) == 7 and set(NUMBERED) <= set(CHAPTERS)


def _title(docname):
    return re.search(r"^# (.+)$", _source(docname), flags=re.M).group(1).strip()


#: An instructor-only block of a chapter's source: an admonition with an instructor class, a
#: sphinx-exercise solution (plain or gated) or an ``{only} instructor`` block, up to its fence.
_INSTRUCTOR_BLOCK = re.compile(
    r"^(?P<fence>:{3,}|`{3,})\{admonition\}[^\n]*\n(?::[^\n]*\n)*?:class:[^\n]*"
    r"\b(?:teaching-note|instructor-note)\b.*?^(?P=fence)[ \t]*$"
    r"|^(?P<sfence>:{3,}|`{3,})\{solution\}.*?^(?P=sfence)[ \t]*$"
    r"|^(?P<gfence>:{3,}|`{3,})\{solution-start\}.*?\{solution-end\}[^\n]*\n(?P=gfence)[ \t]*$"
    r"|^(?P<ofence>:{3,}|`{3,})\{only\}\s*instructor.*?^(?P=ofence)[ \t]*$",
    flags=re.M | re.S)


def _student_visible(source):
    """``source`` without its instructor-only blocks (what the student edition removes)."""
    return _INSTRUCTOR_BLOCK.sub("", source)


def test_student_visible_drops_instructor_blocks():
    source = ("a $\\alpha$\n:::{admonition} Instructor note: x\n:class: instructor-note\n"
              "$\\propto$\n:::\nb\n```{solution} ex\n$\\theta$\n```\nc\n"
              ":::{admonition} Common mistake: y\n:class: common-mistake\n$\\beta$\n:::\n")
    visible = _student_visible(source)
    assert "\\alpha" in visible and "\\beta" in visible and "c\n" in visible
    assert "\\propto" not in visible and "\\theta" not in visible


#: Chapters whose website shows raw TeX outside code today (the PDF shows what the site shows).
KNOWN_RAW_TEX: dict[tuple[str, str], str] = {}


def _chapter_cases():
    for edition in ("student", "instructor"):
        for docname in CHAPTERS:
            known = KNOWN_RAW_TEX.get((edition, docname))
            marks = [pytest.mark.xfail(strict=True, reason=known)] if known else []
            yield pytest.param(edition, docname, marks=marks, id=f"{edition}-{docname}")


@pytest.mark.parametrize("edition, docname", list(_chapter_cases()))
def test_every_chapter_has_a_pdf_with_its_title_and_typeset_math(pdfs, edition, docname):
    result = pdfs[edition]
    path = result.chapters[docname]
    assert path.is_file() and path.stat().st_size > 10_000, path
    text = _text(path)
    title = _title(docname)
    assert _squeeze(title) in _squeeze(text), f"{path.name}: title {title!r} not found"
    source = _source(docname)
    if edition == "student":
        # Symbols used only in instructor notes or solutions are not in the student's PDF.
        source = _student_visible(source)
    # TeX may appear as such only where the source has it in code (shown as code): code cells
    # and inline code such as the notation page's list of macros.
    code = "".join(re.findall(r"^```\{code-cell\}.*?^```", source, flags=re.M | re.S)
                   + re.findall(r"`[^`\n]+`", source))
    used = {tex: glyph for tex, glyph in TEX_GLYPHS.items()
            if re.search(re.escape(tex) + r"(?![A-Za-z])", source)}
    if docname in NUMBERED:
        assert used, f"{docname} uses none of {list(TEX_GLYPHS)}: pick other symbols"
    for tex, glyph in used.items():
        assert glyph in text, f"{path.name}: {tex} is not typeset (no {glyph} in the text)"
        assert text.count(tex) <= code.count(tex), f"{path.name}: raw {tex} outside code"
    for raw in ("$$", r"\frac", r"\begin{"):
        assert text.count(raw) <= code.count(raw), f"{path.name}: raw {raw} in the PDF"
    # Equations carry the website's numbers (they run through the book).
    site = OUT.parent / ("instructor/html" if edition == "instructor" else "html")
    numbers = re.findall(r'class="eqno">\(([\d.]+)\)', (site / f"{docname}.html").read_text())
    for number in numbers[:1] + numbers[-1:]:
        assert f"({number})" in text, f"{path.name}: no equation number ({number})"


def test_book_has_a_contents_page_and_a_bookmark_per_chapter(pdfs):
    from pypdf import PdfReader

    result = pdfs["student"]
    reader = PdfReader(result.book)
    expected = [result.book_starts[d] for d in CHAPTERS]
    front = expected[0]
    assert front >= 1, "no title/contents page"
    # The chapters follow each other, each about as long as printed on its own.
    lengths = [b - a for a, b in zip(expected, expected[1:] + [len(reader.pages)], strict=True)]
    for docname, length in zip(CHAPTERS, lengths, strict=True):
        assert abs(length - result.pages[docname]) <= 1, (docname, length, result.pages[docname])
    top = [item for item in reader.outline if not isinstance(item, list)]
    titles = [str(item.title) for item in top]
    assert titles[0] == "Contents" and len(titles) == len(CHAPTERS) + 1
    for title, docname in zip(titles[1:], CHAPTERS, strict=True):
        # numbered chapters carry their number, as on the website: "1. Maximum likelihood"
        assert re.fullmatch(r"(\d+\.\s+)?" + re.escape(_title(docname)), title), (title, docname)
    starts = [reader.get_destination_page_number(item) for item in top[1:]]
    assert starts == expected, "chapter bookmarks do not point at the chapters' first pages"
    contents = "\n".join(reader.pages[i].extract_text() for i in range(front))
    for docname, start in zip(CHAPTERS, expected, strict=True):
        # "Title ..... 17": the contents page gives each chapter's first page number.
        assert re.search(re.escape(_title(docname)) + r"[\s.]*" + str(start + 1) + r"\b",
                         contents), f"contents: no page number {start + 1} for {docname}"
    # The printed page numbers run through the book: each chapter's first page shows its number.
    for docname, start in zip(CHAPTERS, expected, strict=True):
        assert re.search(rf"·\s*{start + 1}(?!\d)", reader.pages[start].extract_text()), \
            f"page {start + 1} ({docname}) does not show its number"
    # Sections are bookmarked below their chapter.
    # Sections are bookmarked below their chapter: every numbered chapter has sections.
    children = {}
    for item, following in zip(reader.outline, reader.outline[1:] + [None], strict=True):
        if not isinstance(item, list):
            children[str(item.title)] = following if isinstance(following, list) else []
    for title, docname in zip(titles[1:], CHAPTERS, strict=True):
        if docname in NUMBERED:
            assert len(children[title]) >= 2, f"{docname}: no section bookmarks"


def test_student_pdf_has_no_solution_or_teaching_note_text(pdfs):
    """Sentences of the instructor website's solutions and notes: in the instructor book, never in
    the student book (unless the student website shows the same characters elsewhere: text is
    compared without spaces, so a short piece of solution code can equal a line of the
    chapter's own code)."""
    snippets = set()
    student_site = []
    for docname in CHAPTERS:
        collector = _HiddenTextCollector()
        collector.feed((INSTRUCTOR_HTML / f"{docname}.html").read_text(encoding="utf-8"))
        snippets.update(s for s in collector.snippets() if "\\" not in s and "$" not in s)
        page = (STUDENT_HTML / f"{docname}.html").read_text(encoding="utf-8")
        student_site.append(html.unescape(re.sub(r"<[^>]+>", "", page)))
    public = _squeeze("".join(student_site))
    student = _squeeze(_text(pdfs["student"].book))
    instructor = _squeeze(_text(pdfs["instructor"].book))
    found = [s for s in snippets if _squeeze(s) in instructor]
    assert len(found) >= 5, "the check finds too few solution sentences in the instructor PDF"
    leaked = [s for s in snippets if _squeeze(s) in student and _squeeze(s) not in public]
    assert not leaked, f"solution/teaching-note text in the student PDF: {leaked[:3]}"


@pytest.mark.parametrize("docname", CHAPTERS)
def test_student_pdf_never_mentions_the_source_material(pdfs, docname):
    """The printed student notes speak in the book's own voice: no chapter PDF mentions the
    lectures, notes or slides the course was designed from (the patterns of
    test_website.PROVENANCE, read from the PDF's text)."""
    path = pdfs["student"].chapters[docname]
    found = provenance_mentions(_text(path), f"{path.name} ({docname})",
                                chapter=docname in NUMBERED_DOCNAMES)
    assert not found, (f"{len(found)} mentions of the source material in the student PDF:\n"
                       + "\n".join(found))


#: The title page calls the printed book what it is, "Lecture notes, student edition".
TITLE_PAGE_GENRE = "Lecture notes, student edition"


def test_student_book_pdf_never_mentions_the_source_material(pdfs):
    """The whole printed book, contents page included (its own title-page genre line aside)."""
    text = _text(pdfs["student"].book)
    assert TITLE_PAGE_GENRE in text, "the title page no longer says what the check exempts"
    found = provenance_mentions(text.replace(TITLE_PAGE_GENRE, ""), "book.pdf")
    assert not found, (f"{len(found)} mentions of the source material in the student book "
                       "PDF:\n" + "\n".join(found))


def test_instructor_pdf_adds_the_solution_notebooks(pdfs):
    result = pdfs["instructor"]
    names = toc_docnames(ROOT / "_build" / "instructor" / "_toc.instructor.yml")
    solutions = [d for d in names if "solution_pages" in d and not d.endswith("index")]
    assert solutions and set(solutions) <= set(result.chapters)
    for docname in solutions:
        text = _text(result.chapters[docname])
        assert "BEGIN SOLUTION" not in text and "Solutions:" in text
    assert not any("solution_pages" in d for d in pdfs["student"].chapters)


def test_a_rendered_page_has_content_and_no_website_chrome(pdfs):
    """Page 2 of the mle chapter (saved as a PNG artifact): A4, ink in the text column and the
    footer, blank margins (no sidebar, header or buttons)."""
    import numpy as np
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(str(pdfs["student"].chapters["book/mle"]))
    image = doc[1].render(scale=2).to_pil().convert("L")
    ARTIFACT.parent.mkdir(parents=True, exist_ok=True)
    image.save(ARTIFACT)
    pixels = np.asarray(image, dtype=float) / 255
    height, width = pixels.shape
    assert abs(height / width - 297 / 210) < 0.01, "not an A4 page"
    ink = pixels < 0.6
    assert 0.01 < ink.mean() < 0.5, f"{ink.mean():.3f} of the page is ink"
    margin = int(width * 12 / 210)  # 12 mm of the 17 mm margins
    assert not ink[:, :margin].any() and not ink[:, -margin:].any(), "ink in the side margins"
    footer = ink[int(height * 282 / 297):int(height * 292 / 297)]
    assert footer.any(), "no page number in the footer"
    assert not ink[: int(height * 10 / 297)].any(), "ink in the top margin"
    doc.close()


def test_css_strings_are_escaped():
    assert _css_string('a"b\\c') == '"a\\22 b\\5c c"'
    assert _css_string("Maximum likelihood · 3") == '"Maximum likelihood \\b7  3"'


def test_student_pdf_prints_no_answer(pdfs):
    """The student PDF (the book and each chapter) holds the body of no assigned function,
    names and layout aside (tests/test_student_answers.py)."""
    from test_student_answers import printed_answers

    result = pdfs["student"]
    for path in [result.book, *result.chapters.values()]:
        found = printed_answers(_text(path))
        assert not found, f"{path.name} prints {found}"
