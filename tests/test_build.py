"""`mlcourse build`'s parts that need no Sphinx run (book/build.py): solution pages, the
instructor's table of contents, the exclude patterns. The build itself is test_website's."""

from __future__ import annotations

from pathlib import Path

import nbformat

from mlcourse_utils.book import build


def _notebook(*cells):
    nb = nbformat.v4.new_notebook()
    nb.cells = list(cells)
    return nb


def test_solution_page_strips_markers_clears_outputs_and_is_titled():
    code = nbformat.v4.new_code_cell(
        "def f(x):\n    ### BEGIN SOLUTION\n    return x\n    ### END SOLUTION\n")
    code.outputs = [nbformat.v4.new_output("stream", text="printed")]
    code.execution_count = 3
    test = nbformat.v4.new_code_cell("### BEGIN HIDDEN TESTS\nassert f(1) == 1\n"
                                     "### END HIDDEN TESTS\n")
    empty = nbformat.v4.new_code_cell("### BEGIN SOLUTION\n### END SOLUTION\n")
    original = _notebook(nbformat.v4.new_markdown_cell("# Maximum likelihood\nIntro."),
                         code, empty, test)
    page = build.solution_page(original, "mle")
    assert page.cells[0].source == "# Solutions: `mle` (Maximum likelihood)\nIntro."
    assert page.cells[1].source.startswith("*Instructor edition only.*")
    assert "`solutions/mle/mle.ipynb`" in page.cells[1].source
    assert page.cells[2].source == "def f(x):\n    return x"
    assert page.cells[2].outputs == [] and page.cells[2].execution_count is None
    assert page.cells[3].source == "assert f(1) == 1"
    assert len(page.cells) == 4  # the cell that held only markers is gone
    assert original.cells[1].outputs and "BEGIN" in original.cells[1].source  # not changed


def test_a_notebook_without_a_heading_gets_one():
    page = build.solution_page(_notebook(nbformat.v4.new_code_cell("x = 1")), "gda")
    assert [c.source for c in page.cells[:1]] == ["# Solutions: `gda`"]
    assert page.cells[2].source == "x = 1"


def test_solution_pages_are_written_for_each_solution_and_stale_ones_removed(tmp_path):
    for name in ("mle", "bayes"):
        folder = tmp_path / "solutions" / name
        folder.mkdir(parents=True)
        nbformat.write(_notebook(nbformat.v4.new_markdown_cell(f"# {name}")),
                       folder / f"{name}.ipynb")
    (tmp_path / "solutions" / "mle" / "data.csv").write_text("x\n1\n")
    (tmp_path / "solutions" / "mle" / "other.ipynb").write_text("{}")  # not NAME/NAME.ipynb
    stale = tmp_path / build.SOLUTION_PAGES / "removed"
    stale.mkdir(parents=True)
    docnames = build.write_solution_pages(tmp_path)
    pages = build.SOLUTION_PAGES.as_posix()
    assert docnames == [f"{pages}/index", f"{pages}/bayes/bayes", f"{pages}/mle/mle"]
    out = tmp_path / build.SOLUTION_PAGES
    assert (out / "mle" / "data.csv").read_text() == "x\n1\n"
    assert not (out / "mle" / "other.ipynb").exists() and not stale.exists()
    assert "{tableofcontents}" in (out / "index.md").read_text()
    page = out / "mle" / "mle.ipynb"
    stamp = page.stat().st_mtime_ns
    build.write_solution_pages(tmp_path)
    assert page.stat().st_mtime_ns == stamp  # unchanged: not rewritten (Sphinx keeps its cache)


def test_no_solutions_no_pages(tmp_path):
    assert build.write_solution_pages(tmp_path) == []


def test_instructor_toc_adds_a_part_or_a_chapter_and_leaves_the_original():
    docnames = ["p/index", "p/a/a", "p/b/b"]
    entry = {"file": "p/index", "sections": [{"file": "p/a/a"}, {"file": "p/b/b"}]}
    parts = {"root": "intro", "parts": [{"caption": "Chapters", "chapters": [{"file": "c1"}]}]}
    toc = build.instructor_toc(parts, docnames)
    assert toc["parts"][-1] == {"caption": "Instructor: solution notebooks", "chapters": [entry]}
    assert len(parts["parts"]) == 1  # a copy was changed
    flat = build.instructor_toc({"root": "intro"}, docnames)
    assert flat == {"root": "intro", "chapters": [entry]}
    assert build.instructor_toc(parts, []) is parts


def test_exclude_patterns_open_build_for_the_solution_pages_only(tmp_path):
    (tmp_path / "_config.yml").write_text("exclude_patterns: [_build, drafts/*]\n")
    for child in ("solution_pages", "html", "wheel"):
        (tmp_path / "_build" / child).mkdir(parents=True)
    patterns = build._exclude_patterns(tmp_path, Path("_build/solution_pages"))
    assert patterns == ["drafts/*", "Thumbs.db", ".DS_Store", "**.ipynb_checkpoints",
                        "_build/html", "_build/wheel"]
