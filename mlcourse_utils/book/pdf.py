"""PDF lecture notes (``mlcourse pdf``): the built website printed by headless Chromium.

Route. Each page of the website that :func:`mlcourse_utils.book.build.build_book` has just built
(student or instructor edition, so solutions and teaching notes are already where they belong)
is opened in Debian's Chromium, driven over the DevTools protocol on a pipe
(:mod:`mlcourse_utils.book.chromium`). A script waits until MathJax (the offline copy of
sphinx-mathjax-offline, with the ``_config.yml`` macros) has typeset every equation and every
image and font has loaded, keeps only the chapter's article (no sidebars, header, search,
buttons or footer) and adds a print style sheet (:data:`PRINT_CSS`: A4, page numbers, no page
breaks inside figures, code cells, equations or tables, wide equations scaled to the line);
then ``Page.printToPDF`` writes the chapter with a PDF outline from its headings. The book is
a title page with a table of contents (page numbers, links) followed by every chapter, joined
with ``pypdf``, with one bookmark per chapter and its sections below it.

Equation, figure and section numbers are those of the website because the pages are the
website's. Nothing is fetched from the network: every non-``file:`` request is blocked, and a
page that asked for one is an error.

Why not Jupyter Book's LaTeX builder: it needs a TeX Live of about a gigabyte in CI (Chromium
is already installed for the website tests), the MathJax macros, the glued values, sphinx-
exercise boxes and the editions would all need a second, LaTeX-specific path, and the result
would not be the website students already know.
"""

from __future__ import annotations

import dataclasses
import html
import io
import json
import logging
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any
from urllib.parse import unquote, urlsplit

from .._files import default_mode
from ..config import read_config, read_toc, toc_docnames
from ..course import ROOT
from .build import build_book
from .chromium import Browser, ChromiumError  # noqa: F401 (raised from here too)

#: Page style of the printed chapters. ``{footer}`` is filled in per print (a CSS ``content``).
PRINT_CSS = """
@page { size: A4; margin: 18mm 17mm 20mm 17mm;
  @bottom-center { content: {footer}; font: 8.5pt system-ui, sans-serif; color: #666; } }
html { font-size: 14.5px !important; {counter} }
html, body { background: white !important; margin: 0 !important; padding: 0 !important; }
.mlcourse-print { max-width: none !important; width: auto !important; margin: 0 !important;
  padding: 0 !important; overflow: visible !important; }
.mlcourse-print :is(pre, div.highlight, div.cell_input, div.cell_output, div.output,
  .table-wrapper, div.math, mjx-container[display="true"], .bd-article) {
  overflow: visible !important; }
.mlcourse-print .bd-article { padding: 0 !important; max-width: none !important; }
.headerlink, .copybtn, button, .toggle-button, .sidebar-toggle, .prev-next-area, .d-print-none,
  .bd-header-article, .bd-sidebar, .bd-footer, .bd-footer-article, .bd-footer-content,
  .header-article, #pst-back-to-top, .skip-link, .search-button { display: none !important; }
h1 { font-size: 2em; margin-top: 0 !important; }
h1, h2, h3, h4, h5, h6 { break-after: avoid; page-break-after: avoid; }
p, li { orphans: 3; widows: 3; }
figure, .figure, img, svg, table, pre, div.highlight, div.cell, div.cell_input,
  div.cell_output, div.math, mjx-container[display="true"], .admonition, .proof, .exercise,
  .solution, dl, blockquote { break-inside: avoid; page-break-inside: avoid; }
figure, .figure { margin: 1em auto; }
img { max-width: 100% !important; height: auto !important; }
pre { white-space: pre-wrap !important; overflow-wrap: anywhere; font-size: 0.82em; }
a { color: #0a4f8a !important; text-decoration: none !important; }
.cell_output .output, .cell_output pre { max-height: none !important; }
"""

#: Width of the printed line in CSS pixels (A4's 210 mm less the 2 x 17 mm margins, at 96 px
#: per inch): the page is laid out at this width before anything is measured.
LINE_PX = 665

#: In-page script: wait for MathJax, images and fonts, keep the article, measure the result.
PREPARE_JS = r"""
(async () => {
  const sleep = ms => new Promise(r => setTimeout(r, ms));
  const started = Date.now();
  const hasMath = document.querySelector(".math") !== null;
  while (hasMath && !(window.MathJax && MathJax.startup && MathJax.startup.promise)) {
    if (Date.now() - started > __TIMEOUT__) throw new Error("MathJax did not start");
    await sleep(50);
  }
  if (hasMath) await MathJax.startup.promise;
  await Promise.all(Array.from(document.images).map(i => i.complete ? null :
    new Promise(r => { i.addEventListener("load", r); i.addEventListener("error", r); })));
  await document.fonts.ready;
  document.documentElement.dataset.theme = "light";
  document.documentElement.dataset.mode = "light";
  const article = document.querySelector("article.bd-article") || document.querySelector("main");
  const sources = article.querySelectorAll(".math").length;
  const typeset = article.querySelectorAll("mjx-container").length;
  const errors = article.querySelectorAll("mjx-merror, [data-mjx-error]").length;
  const broken = Array.from(article.querySelectorAll("img"))
    .filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.getAttribute("src"));
  article.querySelectorAll(".headerlink, .copybtn").forEach(e => e.remove());
  // Links: same-page anchors stay (Chromium makes them internal links); links to another
  // page of the book stay as file: URLs (mlcourse rewrites them after printing); every other
  // local link (downloads, search, index) loses its target: a PDF cannot follow it.
  const pages = new Set(__PAGES__);
  const here = location.href.split("#")[0];
  for (const a of article.querySelectorAll("a[href]")) {
    const url = new URL(a.getAttribute("href"), location.href);
    if (url.protocol !== "file:") continue;
    const page = url.href.split("#")[0];
    if (page === here) { a.setAttribute("href", "#" + url.hash.slice(1)); continue; }
    if (!pages.has(page)) a.removeAttribute("href");
    else a.setAttribute("href", url.href);
  }
  const wrapper = document.createElement("div");
  wrapper.className = "mlcourse-print";
  wrapper.appendChild(article);
  document.body.replaceChildren(wrapper);
  document.body.removeAttribute("class");
  const style = document.createElement("style");
  style.id = "mlcourse-print-style";
  document.head.appendChild(style);
  style.textContent = __CSS__;
  await sleep(50);
  // Scale what is wider than the line (long equations, wide tables or outputs) to fit it.
  const line = wrapper.clientWidth;
  // (A display equation's width is that of its typeset math: the container's scrollWidth also
  // counts MathJax's hidden assistive MathML.)
  for (const el of wrapper.querySelectorAll('mjx-container[display="true"]')) {
    const math = el.querySelector("mjx-math");
    const box = el.closest("div.math") || el;
    const eqno = box.querySelector(".eqno");
    const room = box.clientWidth - (eqno ? eqno.getBoundingClientRect().width + 8 : 0);
    const w = math ? math.getBoundingClientRect().width : 0;
    if (w > room + 1 && room > 0) el.style.zoom = (room / w).toFixed(3);
  }
  for (const el of wrapper.querySelectorAll("table, .cell_output img, .cell_output pre")) {
    const w = el.scrollWidth;
    if (w > line + 1) el.style.zoom = (line / w).toFixed(3);
  }
  const headings = Array.from(wrapper.querySelectorAll("h1, h2, h3, h4, h5, h6")).map(h => ({
    level: Number(h.tagName[1]),
    title: h.textContent.replace(/\s+/g, " ").trim(),
    id: (h.closest("section[id]") || {}).id || h.id || "",
  }));
  const h1 = wrapper.querySelector("h1");
  return {
    title: h1 ? h1.textContent.replace(/\s+/g, " ").trim() : document.title,
    sources, typeset, errors, broken, headings,
  };
})()
"""


class PdfError(RuntimeError):
    """The PDF could not be made (the reason in words)."""


@dataclasses.dataclass
class PdfResult:
    """What :func:`build_pdfs` made."""

    book: Path
    chapters: dict[str, Path]  # docname -> Path
    pages: dict[str, int]      # docname -> page count; "book" -> the book's
    seconds: float
    #: docname -> index (from 0) of the chapter's first page in the book. A chapter printed in
    #: the book can be a page longer or shorter than on its own (its page numbers differ).
    book_starts: dict[str, int] = dataclasses.field(default_factory=dict)


def _css_string(text):
    """``text`` as a CSS string literal."""
    escaped = "".join(ch if ch.isalnum() or ch in " .,:;-_()/" else f"\\{ord(ch):x} "
                      for ch in text)
    return f'"{escaped}"'


def _print_css(footer, start=None):
    """The print style with ``footer`` (CSS ``content``) and the first page's number."""
    counter = f"counter-reset: page {start - 1};" if start else ""
    return PRINT_CSS.replace("{footer}", footer).replace("{counter}", counter)


def _outline(reader):
    """``[(level, title, page index)]`` of a PDF's outline, depth first."""
    items = []

    def walk(entries, level):
        for entry in entries:
            if isinstance(entry, list):
                walk(entry, level + 1)
            else:
                items.append((level, str(entry.title), reader.get_destination_page_number(entry)))

    walk(reader.outline, 1)
    return items


def _titled_outline(items, headings):
    """Chromium's outline items with the headings' own text (its titles can repeat a heading's
    text or drop its math) when both list the same headings."""
    if len(items) != len(headings):
        return items
    return [(level, h["title"] or title, page)
            for (level, title, page), h in zip(items, headings, strict=True)]


def _add_outline(writer, items, offset=0, top=None, skip_title=False):
    """Add ``[(level, title, page)]`` as nested bookmarks below ``top`` (pages + ``offset``)."""
    parents = {}
    for level, title, page in items:
        if skip_title and level == 1:
            continue
        parent = parents.get(level - 1, top)
        parents[level] = writer.add_outline_item(title=title, page_number=offset + page,
                                                 parent=parent)


def _page_files(html_dir, docnames):
    return {d: (html_dir / f"{d}.html").resolve() for d in docnames}


def _open_chapter(browser, url, pages, timeout):
    """Open a page of the website, prepare it for print; return ``(tab, info, print_with)``.

    ``print_with(css)`` prints the prepared page with the page style ``css`` (the footer and
    first page number differ between the chapter's PDF and the book; the layout does not).
    """
    page = browser.open(url, width=LINE_PX, media="print")
    try:
        script = (PREPARE_JS.replace("__TIMEOUT__", str(int(timeout * 1000)))
                  .replace("__PAGES__", json.dumps(sorted(pages)))
                  .replace("__CSS__", json.dumps(_print_css('""'))))
        info = page.evaluate(script, timeout=timeout)
        remote = page.remote_requests()
        if remote:
            raise PdfError(f"{url} asked for remote resources (blocked): {remote[:5]}")
        if info["sources"] and info["typeset"] < info["sources"]:
            raise PdfError(f"{url}: MathJax typeset {info['typeset']} of {info['sources']} "
                           "equations")
        if info["errors"]:
            raise PdfError(f"{url}: {info['errors']} MathJax errors (an undefined macro?)")
        if info["broken"]:
            raise PdfError(f"{url}: images that did not load: {info['broken']}")
    except BaseException:
        page.close()
        raise

    def print_with(css):
        page.evaluate("document.getElementById('mlcourse-print-style').textContent = "
                      + json.dumps(css) + "; 0")
        return page.print_pdf(generateDocumentOutline=True)

    return page, info, print_with


def _print_html(browser, text):
    """Print an HTML document (the title page) to PDF bytes."""
    with tempfile.TemporaryDirectory(prefix="mlcourse-pdf-") as tmp:
        path = Path(tmp) / "front.html"
        path.write_text(text, encoding="utf-8")
        page = browser.open(path.as_uri())
        try:
            page.evaluate("document.fonts.ready.then(() => 0)")
            return page.print_pdf(generateDocumentOutline=False)
        finally:
            page.close()


TITLE_CSS = """
@page { size: A4; margin: 25mm 22mm 22mm 22mm;
  @bottom-center { content: counter(page); font: 8.5pt system-ui, sans-serif; color: #666; } }
@page :first { @bottom-center { content: none; } }
body { font-family: system-ui, sans-serif; color: #222; font-size: 11pt; }
h1 { font-size: 26pt; margin: 30mm 0 4mm; font-weight: 600; }
.sub { font-size: 13pt; color: #555; margin-bottom: 18mm; }
h2 { font-size: 14pt; border-bottom: 1px solid #ccc; padding-bottom: 2mm; }
ol { list-style: none; padding: 0; }
li { margin: 0; }
a { color: inherit; text-decoration: none; display: flex; align-items: baseline; }
a .t { flex: 0 1 auto; } a .dots { flex: 1 1 auto; border-bottom: 1px dotted #999;
  margin: 0 0.4em; transform: translateY(-0.25em); } a .p { flex: 0 0 auto; }
li.l1 { margin-top: 2.5mm; font-weight: 600; } li.l2 { padding-left: 7mm; font-size: 10pt; }
li.part { margin-top: 6mm; font-weight: 600; color: #555; font-size: 10pt;
  text-transform: uppercase; letter-spacing: .05em; }
"""


def _title_page_html(title, author, edition, entries, start_of):
    """The book's first pages: title and a table of contents with page numbers and links."""
    rows = []
    for kind, level, text, href, page in entries:
        if kind == "part":
            rows.append(f'<li class="part">{html.escape(text)}</li>')
            continue
        number = "" if page is None else str(page + 1)
        rows.append(f'<li class="l{level}"><a href="{html.escape(href)}"><span class="t">'
                    f'{html.escape(text)}</span><span class="dots"></span>'
                    f'<span class="p">{number}</span></a></li>')
    return ("<!DOCTYPE html><html><head><meta charset='utf-8'><title>"
            f"{html.escape(title)}</title><style>{TITLE_CSS}</style></head><body>"
            f"<h1>{html.escape(title)}</h1><div class='sub'>{html.escape(author)}<br>"
            f"Lecture notes, {html.escape(edition)} edition</div>"
            f"<h2>Contents</h2><ol>{''.join(rows)}</ol></body></html>")


def _link_targets(chapters, starts):
    """``{(file URL without fragment, fragment)): page index in the book}`` for every heading."""
    targets = {}
    for docname, chapter in chapters.items():
        url = chapter["url"]
        targets[(url, "")] = starts[docname]
        outline = chapter["info"]["headings"]
        pages = [p for _, _, p in chapter.get("book_outline", chapter["outline"])]
        if len(outline) == len(pages):  # Chromium's outline has one item per heading
            for heading, page in zip(outline, pages, strict=True):
                if heading["id"]:
                    targets.setdefault((url, heading["id"]), starts[docname] + page)
    return targets


def _rewrite_links(writer, resolve):
    """Replace ``file:`` URI links by jumps inside the PDF (``resolve(url) -> page or None``)."""
    from pypdf.generic import ArrayObject, DictionaryObject, FloatObject, NameObject, NullObject

    for page in writer.pages:
        annots = page.get("/Annots")
        if annots is None:
            continue
        kept = ArrayObject()
        for ref in annots.get_object():
            annot = ref.get_object()
            action = annot.get("/A")
            uri = action.get_object().get("/URI") if action is not None else None
            if uri is None or not str(uri).startswith("file:"):
                kept.append(ref)
                continue
            target = resolve(str(uri))
            if target is None:  # a local file a PDF reader cannot follow: drop the link
                continue
            del annot[NameObject("/A")]
            annot[NameObject("/Dest")] = ArrayObject([
                writer.pages[target].indirect_reference, NameObject("/XYZ"), NullObject(),
                NullObject(), FloatObject(0)])
            kept.append(ref)
        if isinstance(annots, DictionaryObject):  # pragma: no cover (never an inline dict)
            continue
        page[NameObject("/Annots")] = kept


def _finish_chapter(pdf, title, author, outline):
    """A chapter's PDF with its title, bookmarks and no links to other local files."""
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter()
    writer.append(PdfReader(io.BytesIO(pdf)), import_outline=False)
    _add_outline(writer, outline)
    _rewrite_links(writer, lambda url: None)
    writer.add_metadata({"/Title": title, "/Author": author, "/Creator": "mlcourse pdf (Chromium)"})
    writer.page_mode = "/UseOutlines"
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def _toc_entries(toc_path, docnames, chapters, starts):
    """Rows of the table of contents: ``(kind, level, text, href, page index)``."""
    toc = read_toc(path=toc_path)
    part_of = {}
    for part in toc.get("parts", []):
        first = [entry["file"] for entry in part.get("chapters", []) if "file" in entry]
        if first and part.get("caption"):
            part_of[first[0]] = part["caption"]
    rows = []
    for docname in docnames:
        if docname in part_of:
            rows.append(("part", 0, part_of[docname], "", None))
        chapter = chapters[docname]
        rows.append(("chapter", 1, chapter["title"], chapter["url"], starts[docname]))
        headings = chapter["info"]["headings"]
        outline = chapter["outline"]
        if len(headings) != len(outline):
            continue
        for heading, (level, title, page) in zip(headings, outline, strict=True):
            if level == 2:
                href = chapter["url"] + ("#" + heading["id"] if heading["id"] else "")
                rows.append(("section", 2, title, href, starts[docname] + page))
    return rows


def _split_url(url):
    parts = urlsplit(url)
    return f"file://{parts.path}", unquote(parts.fragment)


def _out_name(docname):
    parts = Path(docname).parts
    if "solution_pages" in parts:
        return "solutions_" + Path(docname).name
    return Path(docname).name


def _write_whole(path: Path, content: Any) -> None:
    """Write ``content`` (bytes or a pypdf writer) to ``path`` through a temporary file in the
    same folder, so that a reader never sees a half-written PDF."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            if isinstance(content, bytes):
                fh.write(content)
            else:
                content.write(fh)
        os.chmod(tmp, default_mode())  # mkstemp's 0600 would keep the PDF from its readers
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def build_pdfs(instructor: bool = False, out: Path | str | None = None, root: Path | str = ROOT,
               html_dir: Path | str | None = None, log: IO[Any] | None = None,
               timeout: float = 120.0,
               progress: Callable[[str], object] | None = None) -> PdfResult:
    """Write one PDF per page of the book and ``book.pdf``; return a :class:`PdfResult`.

    The website edition is built first with :func:`build_book` (cached: an unchanged book is
    not executed again) unless ``html_dir`` names an already built one. ``out`` defaults to
    ``_build/pdf`` (student) or ``_build/instructor/pdf`` (instructor). ``progress``, a
    function, receives one line per printed page.
    """
    from pypdf import PdfReader, PdfWriter

    # pypdf warns about harmless quirks of Chromium's PDFs (object counts in the trailer).
    logging.getLogger("pypdf").setLevel(logging.ERROR)
    started = time.monotonic()
    root = Path(root).resolve()
    edition = "instructor" if instructor else "student"
    build_out = root / "_build" / "instructor" if instructor else root / "_build"
    if html_dir is None:
        html_dir = build_book(instructor=instructor, out=build_out, root=root, log=log)
    html_dir = Path(html_dir).resolve()
    toc_path = build_out / "_toc.instructor.yml" if instructor else root / "_toc.yml"
    if instructor and not toc_path.exists():
        toc_path = root / "_toc.yml"
    docnames = toc_docnames(toc_path)
    files = _page_files(html_dir, docnames)
    missing = [d for d, f in files.items() if not f.exists()]
    if missing:
        raise PdfError(f"the {edition} website has no page for {missing}: was it built?")
    out = Path(out) if out else build_out / "pdf"
    out = out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    config = read_config(root)
    book_title = str(config.get("title", "Lecture notes"))
    author = str(config.get("author", ""))
    urls = {d: f.as_uri() for d, f in files.items()}

    chapters, tabs = {}, []
    with Browser(timeout=timeout) as browser:
        for docname in docnames:
            tab, info, print_with = _open_chapter(browser, urls[docname], set(urls.values()),
                                                  timeout)
            tabs.append(tab)
            title = info["title"] or docname
            prefix = _css_string(f"{book_title} · {title} · ")
            pdf = print_with(_print_css(f"{prefix} counter(page) ' / ' counter(pages)"))
            reader = PdfReader(io.BytesIO(pdf))
            chapters[docname] = {"url": urls[docname], "info": info, "title": title, "pdf": pdf,
                                 "pages": len(reader.pages),
                                 "outline": _titled_outline(_outline(reader), info["headings"]),
                                 "print_with": print_with, "prefix": prefix}
            if progress:
                progress(f"printed {docname}: {len(reader.pages)} pages")

        # The book: the title page and contents, then each chapter printed again with the page
        # numbers it has in the book. Chromium's layout can change by a page with the first
        # page number (a `counter-reset` on the root), so the chapters' lengths and the
        # contents' page numbers are iterated until they agree.
        counts = {d: chapters[d]["pages"] for d in docnames}
        book_prints = {}   # docname -> (first page index, PdfReader)
        front_pages, front_pdf = 1, None
        for _ in range(6):
            for _ in range(4):  # the contents' own length, given the page numbers it lists
                starts, page_no = {}, front_pages
                for docname in docnames:
                    starts[docname] = page_no
                    page_no += counts[docname]
                entries = _toc_entries(toc_path, docnames, chapters, starts)
                front_pdf = _print_html(browser, _title_page_html(book_title, author, edition,
                                                                  entries, starts))
                n = len(PdfReader(io.BytesIO(front_pdf)).pages)
                if n == front_pages:
                    break
                front_pages = n
            settled = True
            for docname in docnames:
                if docname in book_prints and book_prints[docname][0] == starts[docname]:
                    continue  # already printed with these page numbers
                css = _print_css(f"{_css_string(book_title + ' · ')} counter(page)",
                                 start=starts[docname] + 1)
                reader = PdfReader(io.BytesIO(chapters[docname]["print_with"](css)))
                book_prints[docname] = (starts[docname], reader)
                if len(reader.pages) != counts[docname]:
                    counts[docname] = len(reader.pages)
                    settled = False
            if settled:
                break
        else:
            raise PdfError("the book's page numbers did not settle after 6 printings")

        writer = PdfWriter()
        writer.append(PdfReader(io.BytesIO(front_pdf)), import_outline=False)
        writer.add_outline_item(title="Contents", page_number=0)
        for docname in docnames:
            chapter = chapters[docname]
            reader = book_prints[docname][1]
            # bookmarks and link targets from the book's own printing of the chapter
            chapter["book_outline"] = _titled_outline(_outline(reader), chapter["info"]["headings"])
            writer.append(reader, import_outline=False)
            top = writer.add_outline_item(title=chapter["title"], page_number=starts[docname])
            _add_outline(writer, chapter["book_outline"], starts[docname], top, skip_title=True)
        for tab in tabs:
            tab.close()
        targets = _link_targets(chapters, starts)

        def resolve(url):
            page_url, fragment = _split_url(url)
            return targets.get((page_url, fragment), targets.get((page_url, "")))

        _rewrite_links(writer, resolve)
        writer.add_metadata({"/Title": f"{book_title} ({edition} edition)", "/Author": author,
                             "/Creator": "mlcourse pdf (Chromium)"})
        writer.page_mode = "/UseOutlines"
        book_pages = len(writer.pages)
        book_path = out / "book.pdf"
        _write_whole(book_path, writer)

    paths = {}
    for docname in docnames:
        path = out / f"{_out_name(docname)}.pdf"
        chapter = chapters[docname]
        _write_whole(path, _finish_chapter(chapter["pdf"], chapter["title"], author,
                                           chapter["outline"]))
        paths[docname] = path
    pages = {d: c["pages"] for d, c in chapters.items()}
    pages["book"] = book_pages
    return PdfResult(book_path, paths, pages, time.monotonic() - started, dict(starts))
