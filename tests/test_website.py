"""The course website, tested in a real browser (headless Chromium).

Two groups of tests:

* the **real site**: both editions of the book are built once per session (``_build/html`` and
  ``_build/instructor/html``; skipped when nothing changed since the last successful build), then
  every chapter page is opened in Chromium: MathJax typesets the equations from the offline
  bundle with the ``_config.yml`` macros, every figure loads, the assignment download exists,
  solutions and teaching notes are absent from the student edition and present in the
  instructor edition, nothing is fetched from the network; plus a link check of every local
  ``href``/``src``;
* the **machinery**: a small stand-in book (``tmp_path``) whose chapter holds known marker texts
  in a solution, a gated solution with a code cell, a teaching note and an assignment box, so
  the removal is proven even while the real chapters have none; and cached execution (a rebuild
  after editing one chapter executes only that chapter).

The browser is driven with ``chromium --headless --dump-dom`` on a small probe page that loads
the page under test in an iframe and writes what it measured into its own DOM. Chromium comes
from Debian (``apt-get install chromium``); without it the browser tests skip.

**Accessibility** (student edition, every page of ``_toc.yml``): every image has a non-empty alt
text, the page declares its language, heading levels never skip (h2 to h4), no display equation
is wider than the 1280 px column, and axe-core (npm's ``axe-core``, installed by ``make test``
into the git-ignored ``.tools/``; never fetched at test time) reports no serious or critical
WCAG violation. Each page's axe-core result is written to ``_build/accessibility.json``.
"""

from __future__ import annotations

import fcntl
import html
import html.parser
import json
import os
import re
import shutil
import subprocess
import textwrap
from pathlib import Path
from urllib.parse import unquote, urlsplit

import nbformat
import pytest

from mlcourse_utils.book import instructors
from mlcourse_utils.book.build import build_book, strip_nbgrader_markers
from mlcourse_utils.config import toc_docnames
from mlcourse_utils.course import ROOT

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("website")]

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None,
    reason="Chromium is not installed (apt-get install -y chromium); .ci/run installs it",
)
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--allow-file-access-from-files",  # the probe page reads the iframe's document
]

AXE_JS = ROOT / ".tools" / "node_modules" / "axe-core" / "axe.min.js"

BUILD = ROOT / "_build"
STUDENT_HTML = BUILD / "html"
INSTRUCTOR_OUT = BUILD / "instructor"
INSTRUCTOR_HTML = INSTRUCTOR_OUT / "html"


# ----------------------------------------------------------------------------- helpers


def chapters(root=ROOT):
    """Docnames of the chapters in ``_toc.yml`` (root page included), in order."""
    return toc_docnames(root / "_toc.yml")


def _source(docname, root=ROOT):
    for suffix in (".md", ".ipynb"):
        if (root / f"{docname}{suffix}").exists():
            return (root / f"{docname}{suffix}").read_text(encoding="utf-8")
    raise FileNotFoundError(docname)


def expected_counts(text):
    """How many solutions and teaching notes a chapter's source holds."""
    solutions = len(re.findall(r"^[`:]{3,}\{solution(?:-start)?\}", text, flags=re.M))
    notes = len(re.findall(r"^:class:.*\b(?:teaching|instructor)-note\b", text, flags=re.M))
    return solutions, notes


def _sources_mtime(root, instructor):
    paths = [root / "_config.yml", root / "_toc.yml"]
    folders = ["book", "exercises", "mlcourse_utils"] + (["solutions"] if instructor else [])
    for folder in folders:
        paths += [p for p in (root / folder).rglob("*")
                  if p.is_file() and "__pycache__" not in p.parts]
    return max(p.stat().st_mtime for p in paths if p.exists())


def build_once(instructor):
    """Build an edition unless a previous successful build is newer than every source.

    A file lock serialises the builds of concurrent pytest-xdist workers.
    """
    site = INSTRUCTOR_HTML if instructor else STUDENT_HTML
    root = ROOT
    stamp = root / "_build" / f".website-tests-{'instructor' if instructor else 'student'}.stamp"
    stamp.parent.mkdir(parents=True, exist_ok=True)
    with open(root / "_build" / ".website-tests.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if stamp.exists() and stamp.stat().st_mtime > _sources_mtime(root, instructor):
            return site
        stamp.unlink(missing_ok=True)
        log = root / "_build" / f"website-tests-{'instructor' if instructor else 'student'}.log"
        with open(log, "w") as fh:
            try:
                site = build_book(instructor=instructor,
                                  out=INSTRUCTOR_OUT if instructor else None, log=fh)
            except Exception:
                pytest.fail(f"the book did not build:\n{log.read_text()[-5000:]}")
        stamp.touch()
        return site


def probe(url, tmp_path, screenshot=None, axe=False):
    """Open ``url`` in headless Chromium and return what the page looks like after scripts ran.

    With ``axe=True`` axe-core is injected into the page and its violations are returned too.
    """
    probe_page = tmp_path / "probe.html"
    axe_source = AXE_JS.read_text(encoding="utf-8") if axe else ""
    probe_page.write_text(
        PROBE_HTML.replace("__URL__", json.dumps(url)).replace("__AXE__", json.dumps(axe_source)),
        encoding="utf-8",
    )
    cmd = [CHROMIUM, *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'chromium-profile'}"]
    out = subprocess.run(
        [*cmd, "--virtual-time-budget=30000", "--dump-dom", probe_page.as_uri()],
        capture_output=True,
        text=True,
        timeout=180,
    )
    match = re.search(r'<pre id="result">(.*?)</pre>', out.stdout, flags=re.S)
    assert match, f"Chromium produced no result for {url}:\n{out.stderr[-3000:]}"
    result = json.loads(html.unescape(match.group(1)))
    assert "error" not in result, f"{url}: {result['error']}"
    if screenshot is not None:
        screenshot.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [*cmd, "--hide-scrollbars", "--window-size=1280,1600", "--virtual-time-budget=15000",
             f"--screenshot={screenshot}", url],
            capture_output=True,
            timeout=180,
            check=True,
        )
    return result


PROBE_HTML = textwrap.dedent(
    """\
    <!DOCTYPE html>
    <html><body>
    <iframe id="page" style="width:1280px;height:1000px"></iframe>
    <pre id="result">pending</pre>
    <script>
    const frame = document.getElementById("page");
    function measure() {
      const d = frame.contentDocument, w = frame.contentWindow;
      const main = d.querySelector("main") || d.body;
      const imgs = Array.from(main.querySelectorAll("img"));
      return {
        title: d.title,
        mjx: main.querySelectorAll("mjx-container").length,
        mjx_errors: main.querySelectorAll("mjx-merror, [data-mjx-error]").length,
        math_sources: main.querySelectorAll(".math").length,
        raw_dollars: (main.innerText.match(/\\$\\$/g) || []).length,
        raw_macros: (main.innerText.match(/\\\\(argmax|argmin|btheta|bmu|bSigma|KL|E)\\b/g) || []),
        images: imgs.map(i => ({src: i.getAttribute("src"), complete: i.complete,
                                width: i.naturalWidth})),
        figures_without_image: Array.from(main.querySelectorAll("figure"))
          .filter(f => !f.querySelector("img, svg")).map(f => f.id || f.textContent.slice(0, 80)),
        downloads: Array.from(main.querySelectorAll("a.download")).map(a => a.href),
        assignments: main.querySelectorAll(".admonition.assignment").length,
        assignment_style: Array.from(main.querySelectorAll(".admonition.assignment"))
          .map(a => w.getComputedStyle(a).borderTopWidth),
        solutions: main.querySelectorAll(".solution").length,
        teaching_notes: main.querySelectorAll(".teaching-note, .instructor-note").length,
        mathjax_script: Array.from(d.querySelectorAll("script[src*='mathjax']")).map(s => s.src),
        resources: w.performance.getEntriesByType("resource").map(e => e.name),
        lang: d.documentElement.getAttribute("lang") || "",
        images_without_alt: imgs.filter(i => !(i.getAttribute("alt") || "").trim())
          .map(i => i.getAttribute("src")),
        headings: Array.from(main.querySelectorAll("h1, h2, h3, h4, h5, h6"))
          .filter(h => h.offsetParent !== null)
          .map(h => [Number(h.tagName[1]), h.textContent.trim().slice(0, 60)]),
        wide_math: Array.from(main.querySelectorAll("mjx-container[display='true'], div.math"))
          .filter(m => m.scrollWidth > m.clientWidth + 2
                       || m.getBoundingClientRect().right > w.innerWidth)
          .map(m => (m.textContent || "").slice(0, 60)),
      };
    }
    const AXE_SOURCE = __AXE__;
    function runAxe(d, w) {
      if (!AXE_SOURCE) return Promise.resolve(null);
      const s = d.createElement("script");
      s.textContent = AXE_SOURCE;
      d.head.appendChild(s);
      return w.axe.run(d, {resultTypes: ["violations"]}).then(r => r.violations.map(v => ({
        id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.length,
        targets: v.nodes.slice(0, 3).map(n => String(n.target)),
      })));
    }
    frame.addEventListener("load", () => {
      const w = frame.contentWindow;
      const typeset = (w.MathJax && w.MathJax.startup && w.MathJax.startup.promise)
        || Promise.resolve();
      typeset.then(() => new Promise(r => setTimeout(r, 1000))).then(() => {
        let result;
        try { result = measure(); } catch (e) { result = {error: String(e)}; }
        return runAxe(frame.contentDocument, w).then(
          v => { if (v !== null) result.axe = v; return result; },
          e => { result.error = "axe-core: " + e; return result; });
      }).then(result => {
        document.getElementById("result").textContent = JSON.stringify(result);
      });
    });
    frame.src = __URL__;
    </script>
    </body></html>
    """
)


class _LinkCollector(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.links = []

    def handle_starttag(self, tag, attrs):
        for key, value in attrs:
            if key in ("href", "src") and value:
                self.links.append(value)


def local_link_problems(site):
    """Every href/src of every HTML file of ``site`` that points to a missing local file."""
    problems = []
    for page in sorted(site.rglob("*.html")):
        if page.relative_to(site).parts[0] == "_static":  # theme templates, not pages
            continue
        collector = _LinkCollector()
        collector.feed(page.read_text(encoding="utf-8"))
        for link in collector.links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc or not parts.path:  # external, mailto:, or #anchor
                continue
            target = (page.parent / unquote(parts.path)).resolve()
            if not target.exists():
                problems.append(f"{page.relative_to(site)}: {link}")
    return problems


def remote_references(site):
    """Remote scripts, stylesheets and fonts referenced by the site (it must work offline)."""
    found = []
    pattern = re.compile(
        r"""<(?:script|link|img|iframe)[^>]*\b(?:src|href)=["'](?:https?:)?//[^"']+["'][^>]*>"""
        r"""|cdn\.jsdelivr|mathjax@|fonts\.googleapis|unpkg\.com|cdnjs"""
    )
    for page in sorted(site.rglob("*.html")):
        for match in pattern.finditer(page.read_text(encoding="utf-8")):
            tag = match.group(0)
            if 'rel="canonical"' in tag:
                continue
            found.append(f"{page.relative_to(site)}: {tag[:160]}")
    for css in sorted(site.rglob("*.css")):
        for match in re.finditer(r"url\(\s*['\"]?(?:https?:)?//[^)]+\)"
                                 r"|@import\s+url\(\s*['\"]?https?:",
                                 css.read_text(errors="replace")):
            found.append(f"{css.relative_to(site)}: {match.group(0)[:160]}")
    return found


# ----------------------------------------------------------------------------- the real site


@pytest.fixture(scope="session")
def student_site():
    return build_once(instructor=False)


@pytest.fixture(scope="session")
def instructor_site():
    return build_once(instructor=True)


CHAPTERS = chapters()


@needs_chromium
@pytest.mark.parametrize("docname", CHAPTERS)
def test_student_chapter_in_browser(student_site, docname, tmp_path):
    """A student-edition chapter loads, typesets its math, shows figures, links its assignment."""
    page = student_site / f"{docname}.html"
    assert page.exists(), f"{docname} was not built"
    shot = BUILD / "screenshots" / f"{Path(docname).name}.png" if docname == "book/mle" else None
    r = probe(page.as_uri(), tmp_path, screenshot=shot)
    assert r["title"], f"{docname}: no title"
    if r["math_sources"]:
        assert r["mjx"] >= r["math_sources"], \
            f"{docname}: MathJax typeset {r['mjx']} of {r['math_sources']} equations"
        assert all("/_static/mathjax/" in s for s in r["mathjax_script"]), r["mathjax_script"]
    assert r["mjx_errors"] == 0, f"{docname}: {r['mjx_errors']} MathJax errors (undefined macro?)"
    assert r["raw_dollars"] == 0, f"{docname}: raw $$ left in the text"
    assert not r["raw_macros"], f"{docname}: untypeset macros {r['raw_macros']}"
    for img in r["images"]:
        assert img["complete"] and img["width"] > 0, f"{docname}: image {img['src']} did not load"
    assert not r["figures_without_image"], \
        f"{docname}: figures without an image: {r['figures_without_image']}"
    remote = [u for u in r["resources"] if not u.startswith("file:")]
    assert not remote, f"{docname}: fetched from the network: {remote}"
    for href in r["downloads"]:
        assert Path(unquote(urlsplit(href).path)).is_file(), f"{docname}: download {href} missing"
    source = _source(docname)
    if re.search(r"\{admonition\}\s*Assignment", source):
        assert r["assignments"] >= 1 and r["downloads"], \
            f"{docname}: assignment box without a download link"
        assert all(w != "0px" for w in r["assignment_style"]), \
            "the assignment box is not styled (mlcourse.css)"
    assert r["solutions"] == 0, f"{docname}: the student edition shows {r['solutions']} solutions"
    assert r["teaching_notes"] == 0, f"{docname}: the student edition shows teaching notes"
    if shot is not None:
        assert shot.stat().st_size > 10_000


@needs_chromium
@pytest.mark.parametrize("docname", CHAPTERS)
def test_instructor_chapter_in_browser(instructor_site, docname, tmp_path):
    """The instructor edition shows each chapter's solutions and teaching notes (its page for
    instructors is the one written from the notebooks, not book/instructors.md)."""
    r = probe((instructor_site / f"{docname}.html").as_uri(), tmp_path)
    source = instructors.page() if docname == instructors.DOCNAME else _source(docname)
    n_solutions, n_notes = expected_counts(source)
    assert r["solutions"] == n_solutions, \
        f"{docname}: {r['solutions']} solutions shown, source has {n_solutions}"
    assert r["teaching_notes"] == n_notes, \
        f"{docname}: {r['teaching_notes']} teaching notes, source has {n_notes}"
    assert r["mjx_errors"] == 0 and r["raw_dollars"] == 0
    for img in r["images"]:
        assert img["complete"] and img["width"] > 0, f"{docname}: image {img['src']} did not load"


SERIOUS = {"serious", "critical"}


@needs_chromium
@pytest.mark.parametrize("docname", CHAPTERS)
def test_student_page_accessibility(student_site, docname, tmp_path):
    """Alt text, page language, heading order, equations within the column, and no serious or
    critical axe-core violation on a page of the student edition."""
    assert AXE_JS.is_file(), (
        f"axe-core is not installed ({AXE_JS.relative_to(ROOT)}); `make test` installs it with npm "
        "(npm install --prefix .tools axe-core@4)")
    r = probe((student_site / f"{docname}.html").as_uri(), tmp_path, axe=True)
    assert r["lang"].startswith("en"), f"{docname}: <html lang> is {r['lang']!r}"
    assert not r["images_without_alt"], \
        f"{docname}: images without alt text: {r['images_without_alt']}"
    levels = [level for level, _ in r["headings"]]
    assert levels and levels[0] == 1, \
        f"{docname}: the page does not start with one h1: {r['headings'][:3]}"
    jumps = [
        (r["headings"][i], r["headings"][i + 1]) for i in range(len(levels) - 1)
        if levels[i + 1] > levels[i] + 1]
    assert not jumps, f"{docname}: heading levels skip: {jumps}"
    assert not r["wide_math"], \
        f"{docname}: equations wider than the column (break them with aligned): {r['wide_math']}"
    record = BUILD / "accessibility.json"
    with open(BUILD / ".accessibility.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        results = json.loads(record.read_text()) if record.exists() else {}
        results[docname] = r["axe"]
        record.write_text(json.dumps(results, indent=1, sort_keys=True))
    bad = [v for v in r["axe"] if v["impact"] in SERIOUS]
    assert not bad, f"{docname}: serious or critical WCAG violations (axe-core): {bad}"


THEME_MARKUP = """\
<button class="btn btn-sm nav-link pst-navbar-icon theme-switch-button pst-js-only" aria-label="Color mode" data-bs-title="Color mode">
  <i class="theme-switch fa-solid fa-sun fa-lg" data-mode="light" title="Light"></i>
</button>
<button class="btn search-button-field search-button__button pst-js-only" title="Search" aria-label="Search">
<details class="admonition hide above-input">
<summary aria-label="Toggle hidden content">
<p class="collapsed admonition-title">Show code cell source</p>
</summary>
</details>
<div role="list" class="citation-list">
<div class="citation" id="id16" role="doc-biblioentry">
"""  # noqa: E501 (the theme's markup as it is: the fix's regular expressions match these lines)


def test_accessibility_fixes_of_the_theme_markup():
    """The post-build fix names controls by the text they show; bibliography entries are items."""
    from mlcourse_utils.book.editions import _accessible_theme_html

    fixed = _accessible_theme_html(THEME_MARKUP)
    assert 'aria-label="Color mode: light, dark or system settings"' in fixed
    assert '<i class="theme-switch fa-solid fa-sun fa-lg" aria-hidden="true"' in fixed
    assert 'aria-label="Search"' not in fixed and 'title="Search"' in fixed
    assert "<summary>" in fixed and "Toggle hidden content" not in fixed
    assert 'role="listitem"' in fixed and "doc-biblioentry" not in fixed
    assert _accessible_theme_html(fixed) == fixed, "the fix is idempotent (incremental builds)"


def test_student_edition_has_no_solution_text(student_site, instructor_site):
    """No text of an instructor-edition solution or teaching note appears in the student edition."""
    snippets = set()
    for docname in CHAPTERS:
        collector = _HiddenTextCollector()
        collector.feed((instructor_site / f"{docname}.html").read_text(encoding="utf-8"))
        snippets.update(collector.snippets())
    student_text = "\n".join(
        p.read_text(encoding="utf-8", errors="replace")
        for p in student_site.rglob("*")
        if p.is_file() and p.suffix in {".html", ".js", ".txt", ".md", ".ipynb", ".json"}
    )
    student_text = html.unescape(re.sub(r"<[^>]+>", "", student_text))
    leaked = sorted(s for s in snippets if s in student_text)
    assert not leaked, f"solution/teaching-note text in the student edition: {leaked[:5]}"
    assert not list(student_site.rglob("_sources/**/*.md")), \
        "chapter sources (with solutions) were copied"


def test_instructor_edition_renders_solution_notebooks(instructor_site):
    """Each solutions/NAME/NAME.ipynb is an instructor-edition page, without nbgrader markers."""
    for src in sorted((ROOT / "solutions").glob("*/*.ipynb")):
        if src.stem != src.parent.name:
            continue
        page = instructor_site / "_build" / "solution_pages" / src.stem / f"{src.stem}.html"
        assert page.exists(), f"no instructor page for {src}"
        text = page.read_text(encoding="utf-8")
        for marker in ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS"):
            assert marker not in text, f"{page.name} shows nbgrader's {marker!r}"


@pytest.mark.parametrize("edition", ["student", "instructor"])
def test_local_links_resolve(edition, request):
    """Every href/src to a local file in the built site exists."""
    site = request.getfixturevalue(f"{edition}_site")
    problems = local_link_problems(site)
    assert not problems, "broken local links:\n" + "\n".join(problems[:30])


def test_site_loads_nothing_remote(student_site):
    """MathJax is in _static (sphinx-mathjax-offline); no page names a remote script or font."""
    assert (student_site / "_static" / "mathjax" / "tex-chtml.js").is_file()
    found = remote_references(student_site)
    assert not found, "remote assets:\n" + "\n".join(found[:30])


# ----------------------------------------------------------------------------- the book's voice

#: The files of the lecture material the course was designed from (its file names and their
#: hash parts): the student edition never names them.
SOURCE_FILES = ("005846b66bc4b328", "4a617d0c68c470ff", "976aa80dd51eca24", "cff980e5973a5f18",
                "24741545211bcf4c")

#: What points a reader at the course's source material (the lectures, notes and slides it was
#: designed from). The student edition speaks in the book's own voice and never shows these;
#: provenance belongs in instructor-only notes (class ``instructor-note``). Each entry is a
#: regular expression, matched case-insensitively against whitespace-normalised text. "seed" is
#: the source material's name in the repository; a *random* seed, or one passed to a function
#: (``seed=4``, ``rng(seed)``), is not a mention of it.
PROVENANCE = {
    "seed": r"(?<!random )(?<!fixed )\bseeds?\b(?!\s*[=(),:\]])",
    "slide": r"\bslides?\b",
    "lecture notes": r"\blecture[- ]notes?\b",
    "the lecture": r"\bthe lectures?\b",
    "the lecture says/writes": r"\blectures?(?:'s)? (?:says?|said|writes?|wrote|states?|stated|"
                               r"gives?|gave|derives?|derived|lists?|listed|describes?|"
                               r"described|claims?|claimed|prints?|printed|compares?|compared)\b",
    "source material": r"\bsource (?:lectures?|material|notes|slides?)\b",
    "seed file name": r"\b\d{3}_[0-9a-f]{16}\b|" + "|".join(SOURCE_FILES),
}
#: In a numbered chapter every "lecture" is the source material (the introduction and the
#: instructors' page may speak of the reader's own lectures).
CHAPTER_PROVENANCE = {"lecture": r"\blectur\w*"}


def _numbered_docnames(root=ROOT):
    import yaml

    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    return {entry["file"] for part in toc.get("parts", []) if part.get("numbered")
            for entry in part["chapters"]}


NUMBERED_DOCNAMES = _numbered_docnames()


def _normalise(text):
    return " ".join(text.replace("\u2019", "'").replace("\u00a0", " ").split())


def provenance_mentions(text, where, chapter=False):
    """``["where: 'phrase' in '...context...'", ...]`` for every mention of the source
    material in ``text`` (with the chapter-only patterns when ``chapter``)."""
    text = _normalise(text)
    patterns = {**PROVENANCE, **(CHAPTER_PROVENANCE if chapter else {})}
    found = []
    for label, pattern in patterns.items():
        for match in re.finditer(pattern, text, flags=re.I):
            context = text[max(0, match.start() - 50):match.end() + 50]
            found.append(f"{where}: {label!r} ({match.group(0)!r}) in '...{context}...'")
    return found


class _VisibleTextCollector(html.parser.HTMLParser):
    """The text of a page's article (what a reader sees, and image alt texts), without scripts
    and styles."""

    SKIP = {"script", "style"}

    def __init__(self):
        super().__init__()
        self.in_article = 0
        self.skip = 0
        self.texts = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "article" or self.in_article:
            self.in_article += tag not in {"br", "img", "hr", "input", "meta", "link", "wbr"}
        if tag in self.SKIP:
            self.skip += 1
        if self.in_article and tag == "img" and attrs.get("alt"):
            self.texts.append(" " + attrs["alt"] + " ")

    def handle_endtag(self, tag):
        if tag in self.SKIP:
            self.skip = max(0, self.skip - 1)
        if self.in_article and tag not in {"br", "img", "hr", "input", "meta", "link", "wbr"}:
            self.in_article -= 1

    def handle_data(self, data):
        if self.in_article and not self.skip:
            self.texts.append(data)


def visible_text(page_html):
    collector = _VisibleTextCollector()
    collector.feed(page_html)
    return " ".join(collector.texts)


def test_provenance_patterns_find_what_they_should():
    """The patterns catch the ways a page has pointed at its sources, and leave alone a random
    seed, a seed argument and the reader's own lectures."""
    caught = [
        "The lecture notes (seed file 003, below its eq. 3.10) say",
        "On the slides of the Bayesian part", "the lecture's twelve flips",
        "The lecture writes it (k + a)/(n + m a)", "the seed's version of the coefficients",
        "see 001_4a617d0c68c470ff.txt", "as the source material has it",
        "the first slide lists ten e-mails",
    ]
    for sentence in caught:
        assert provenance_mentions(sentence, "x"), sentence
    innocent = [
        "drawn with a fixed seed", "np.random.default_rng(seed)", "regression_challenge(n=10, "
        "seed=4)", "def two_feature_data(seed):", "Each chapter is a lecture written out in full",
        "two lectures of about 90 minutes", "a sliding bell curve", "seeds: int",
    ]
    for sentence in innocent:
        assert not provenance_mentions(sentence, "x"), sentence
    assert provenance_mentions("Each chapter is a lecture", "x", chapter=True)
    assert visible_text("<html><script>slides</script><article><p>a <b>b</b></p>"
                        "<img alt='c'><script>seed</script></article><p>d</p></html>"
                        ).split() == ["a", "b", "c"]


@pytest.mark.parametrize("docname", CHAPTERS)
def test_student_page_never_mentions_the_source_material(student_site, docname):
    """The book speaks in its own voice: no page of the student edition mentions the lectures,
    notes or slides the course was designed from (corrections of them are "Common mistake"
    boxes; what a source had, and where, is an instructor-only note)."""
    page = (student_site / f"{docname}.html").read_text(encoding="utf-8")
    found = provenance_mentions(visible_text(page), f"{docname}.html",
                                chapter=docname in NUMBERED_DOCNAMES)
    assert not found, (f"{len(found)} mentions of the source material in the student "
                       f"edition:\n" + "\n".join(found))


def _search_index(site):
    text = (site / "searchindex.js").read_text(encoding="utf-8")
    return json.loads(text[text.index("(") + 1:text.rindex(")")])


def test_student_search_index_never_mentions_the_source_material(student_site):
    """The search index holds single (stemmed) words: no page is found by the name of a source
    file, and no numbered chapter by "lecture" or "slide"."""
    index = _search_index(student_site)
    docnames = index["docnames"]
    found = []
    for kind in ("terms", "titleterms"):
        for term, docs in index[kind].items():
            docs = [docs] if isinstance(docs, int) else docs
            names = [docnames[d] for d in docs]
            if any(f in term for f in SOURCE_FILES) or re.fullmatch(r"\d{3}_[0-9a-f]{16}", term):
                found += [f"{name}: search term {term!r}" for name in names]
            if re.fullmatch(r"lectur\w*|slide", term):
                found += [f"{name}: search term {term!r}" for name in names
                          if name in NUMBERED_DOCNAMES]
    assert not found, "the search index finds pages by the source material:\n" + "\n".join(found)


def _download_text(path):
    if path.suffix == ".ipynb":
        nb = nbformat.read(path, as_version=4)
        return "\n".join(cell.source for cell in nb.cells)
    return path.read_text(encoding="utf-8", errors="replace")


def test_student_downloads_never_mention_the_source_material(student_site):
    """What a student downloads from the site (the assignment notebooks) speaks in the book's
    voice too."""
    downloads = sorted(p for p in (student_site / "_downloads").rglob("*") if p.is_file())
    assert downloads, "the student site has no downloads (assignment notebooks)"
    found = []
    for path in downloads:
        found += provenance_mentions(_download_text(path), path.name)
    assert not found, (f"{len(found)} mentions of the source material in downloads:\n"
                       + "\n".join(found))


class _HiddenTextCollector(html.parser.HTMLParser):
    """Text inside elements whose class marks a solution or a teaching note."""

    HIDDEN = {"solution", "teaching-note", "instructor-note"}

    def __init__(self):
        super().__init__()
        self.depth = 0  # >0 while inside a hidden element
        self.stack = []
        self.texts = []

    def handle_starttag(self, tag, attrs):
        if tag in {"br", "img", "hr", "input", "meta", "link", "wbr", "source"}:
            return
        classes = set((dict(attrs).get("class") or "").split())
        hidden = bool(classes & self.HIDDEN)
        self.stack.append(hidden)
        self.depth += hidden

    def handle_endtag(self, tag):
        if tag in {"br", "img", "hr", "input", "meta", "link", "wbr", "source"} or not self.stack:
            return
        self.depth -= self.stack.pop()

    def handle_data(self, data):
        if self.depth > 0:
            self.texts.append(data)

    def snippets(self):
        """Distinctive sentences (>= 25 characters) of the hidden text."""
        words = " ".join(" ".join(self.texts).split())
        parts = re.split(r"(?<=[.!?:])\s+", words)
        return {p for p in parts
                if len(p) >= 25 and not p.startswith(("Solution to", "Teaching note"))}


# ----------------------------------------------------------------------------- the machinery

STANDIN = """\
---
jupytext:
  text_representation: {extension: .md, format_name: myst, format_version: 0.13}
kernelspec: {display_name: Python 3, language: python, name: python3}
---

# Stand-in chapter

The estimator is

$$
\\hat\\btheta = \\argmax_\\theta \\log p(\\bx \\mid \\theta), \\qquad \\E[x] = \\KL(p \\| q).
$$ (eq-standin)

See {eq}`eq-standin`.

```{code-cell} ipython3
:mystnb:
:  figure:
:    caption: A line.
:    name: fig-standin
%matplotlib inline
import matplotlib.pyplot as plt
fig, ax = plt.subplots(figsize=(3, 2))
ax.plot([0, 1], [0, 1], label="line")
ax.set_xlabel("x")
ax.set_ylabel("y")
ax.legend();
```

:::{admonition} Teaching note
:class: teaching-note
TEACHING-NOTE-MARKER ask the class first.
:::

```{exercise}
:label: ex-standin-plain
What is three quarters?
```

```{solution} ex-standin-plain
SOLUTION-PLAIN-MARKER it is 0.75.
```

```{exercise}
:label: ex-standin-gated
Compute a mean in code.
```

````{solution-start} ex-standin-gated
````

SOLUTION-GATED-MARKER use numpy.

```{code-cell} ipython3
print("SOLUTION-OUTPUT-" + "MARKER", sum([1, 2, 3]) / 3)
```

````{solution-end}
````

:::{admonition} Assignment: Stand-in
:class: assignment
Download {download}`standin.ipynb <../exercises/standin/standin.ipynb>` and check it with
`mlcourse check standin.ipynb`.
:::
"""

OTHER = """\
---
jupytext:
  text_representation: {extension: .md, format_name: myst, format_version: 0.13}
kernelspec: {display_name: Python 3, language: python, name: python3}
---

# Other chapter

```{code-cell} ipython3
print("other", 6 * 7)
```
"""

MARKERS = ["TEACHING-NOTE-MARKER", "SOLUTION-PLAIN-MARKER", "SOLUTION-GATED-MARKER",
           "SOLUTION-OUTPUT-MARKER"]


def _solution_notebook():
    def cell(source, grade_id, **flags):
        c = nbformat.v4.new_code_cell(source)
        c.metadata["nbgrader"] = {"grade_id": grade_id, "schema_version": 3, "locked": False,
                                  **flags}
        return c

    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# Stand-in assignment"),
        cell("def half(x):\n    \"\"\"Return x / 2.\"\"\"\n    ### BEGIN SOLUTION\n"
             "    return x / 2\n    ### END SOLUTION",
             "half", solution=True, grade=False),
        cell("\"\"\"Checks half(2).\"\"\"\nassert half(2) == 1\n### BEGIN HIDDEN TESTS\n"
             "assert half(5) == 2.5\n### END HIDDEN TESTS", "test_half", solution=False, grade=True,
             points=1),
    ])
    nb.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python",
                                 "name": "python3"}
    return nb


#: The stand-in book is built in tmp_path, apart from the real site: its tests are a unit of
#: their own for xdist (group "website_standin-book"), so they run beside the real site's.
STANDIN_GROUP = pytest.mark.xdist_group("standin-book")


@pytest.fixture(scope="module")
def standin_book(tmp_path_factory):
    """A two-chapter book with the course's _config.yml, built in both editions."""
    root = tmp_path_factory.mktemp("standin-book")
    shutil.copy(ROOT / "_config.yml", root / "_config.yml")
    shutil.copytree(ROOT / "book" / "_static", root / "book" / "_static")
    shutil.copy(ROOT / "book" / "references.bib", root / "book" / "references.bib")
    (root / "book" / "standin.md").write_text(STANDIN, encoding="utf-8")
    (root / "book" / "other.md").write_text(OTHER, encoding="utf-8")
    (root / "_toc.yml").write_text(
        "format: jb-book\nroot: book/standin\nchapters:\n  - file: book/other\n")
    nb = _solution_notebook()
    for folder in ("solutions", "exercises"):
        (root / folder / "standin").mkdir(parents=True)
        nbformat.write(nb, root / folder / "standin" / "standin.ipynb")
    logs = {}
    for instructor in (False, True):
        log = root / f"build-{instructor}.log"
        with open(log, "w") as fh:
            try:
                build_book(instructor=instructor, root=root, log=fh)
            except Exception:
                pytest.fail(f"stand-in book did not build:\n{log.read_text()[-5000:]}")
        logs[instructor] = log.read_text()
    return root, logs


def _all_text(site):
    return "\n".join(p.read_text(errors="replace") for p in site.rglob("*")
                     if p.is_file() and p.suffix != ".png")


@STANDIN_GROUP
def test_standin_student_edition_removes_solutions_and_notes(standin_book):
    root, _ = standin_book
    text = _all_text(root / "_build" / "html")
    for marker in MARKERS:
        assert marker not in text, f"{marker} leaked into the student edition"
    assert "What is three quarters?" in text  # the exercises themselves stay


@STANDIN_GROUP
def test_standin_instructor_edition_shows_everything(standin_book):
    root, _ = standin_book
    site = root / "_build" / "instructor" / "html"
    page = (site / "book" / "standin.html").read_text()
    for marker in MARKERS:
        assert marker in page, f"{marker} missing from the instructor edition"
    solution_page = (site / "_build" / "solution_pages" / "standin" / "standin.html").read_text()
    assert "BEGIN SOLUTION" not in solution_page and "HIDDEN TESTS" not in solution_page
    assert "2.5" in solution_page  # the hidden test's content is kept


@STANDIN_GROUP
def test_standin_shares_the_execution_cache(standin_book):
    """The instructor build executes nothing: the student build has cached both chapters."""
    _, logs = standin_book
    executed = re.findall(r"Executing notebook|: executed in \d", logs[False])
    assert len(executed) == 2, "the student build executes both chapters"
    if (os.cpu_count() or 1) >= 2:
        assert "executing 2 chapters in 2 parallel kernels" in logs[False]
    for chapter in ("standin", "other"):
        assert f"book/{chapter}.md: Executing notebook" not in logs[True]
        assert f"book/{chapter}: executed in" not in logs[True]


@STANDIN_GROUP
def test_standin_rebuild_executes_only_the_changed_chapter(standin_book):
    root, _ = standin_book
    other = root / "book" / "other.md"
    other.write_text(OTHER.replace("6 * 7", "6 * 9"))
    log = root / "rebuild.log"
    with open(log, "w") as fh:
        build_book(root=root, log=fh)
    text = log.read_text()
    assert re.search(r"book/other: executed in \d", text), text[-3000:]
    assert not re.search(r"standin(\.md: Executing notebook|: executed in)", text), \
        "an unchanged chapter was re-executed"


@STANDIN_GROUP
def test_standin_build_output_reads_plainly(standin_book):
    """What a build prints to a file (or a pipe, as in CI): no ANSI colour codes, no kernel
    warning about its transport (which reads like a failure), and not Sphinx's own "The HTML
    pages are in ..." (`mlcourse build` says where, with the wheel and the other edition)."""
    _, logs = standin_book
    for instructor, text in logs.items():
        assert "executed in" in text or instructor, "the student build executed the chapters"
        assert "\x1b[" not in text
        assert "without encryption" not in text and "[IPKernelApp] WARNING" not in text
        assert "The HTML pages are in" not in text


@STANDIN_GROUP
@needs_chromium
@pytest.mark.parametrize("instructor", [False, True], ids=["student", "instructor"])
def test_standin_in_browser(standin_book, instructor, tmp_path):
    root, _ = standin_book
    site = root / "_build" / ("instructor/html" if instructor else "html")
    r = probe((site / "book" / "standin.html").as_uri(), tmp_path)
    assert r["mjx"] >= 1 and r["mjx_errors"] == 0 and not r["raw_macros"], r
    assert r["images"] and all(i["width"] > 0 for i in r["images"]), r["images"]
    assert r["downloads"] and all(Path(unquote(urlsplit(h).path)).is_file() for h in r["downloads"])
    assert r["assignment_style"] and r["assignment_style"][0] != "0px"
    assert not [u for u in r["resources"] if not u.startswith("file:")]
    assert (r["solutions"], r["teaching_notes"]) == ((2, 1) if instructor else (0, 0))


def test_strip_nbgrader_markers():
    src = ("def f():\n    ### BEGIN SOLUTION\n    return 1\n    ### END SOLUTION\n"
           "### BEGIN HIDDEN TESTS\nassert f()\n### END HIDDEN TESTS")
    assert strip_nbgrader_markers(src) == "def f():\n    return 1\nassert f()"
