"""The code a chapter shows is the code that runs, without its docstring.

Chapters show reference functions with ``literalinclude`` and ``:pyobject:``; where a docstring
would dominate the listing, ``:lines: 1,K-`` keeps the ``def`` line and the body from line K of
the function on (``:lines: 1-J,K-`` when the signature takes lines 1 to J). J and K are line
numbers, so they drift silently when a signature or docstring grows or shrinks: this test reads
every such listing of the pages in ``_toc.yml`` and checks that J is the signature's last line and
K the first line after the docstring.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from test_chapter_numbers import ROOT, toc_pages

LISTING = re.compile(
    r"^```\{literalinclude\} (?P<path>\S+)\n(?P<options>(?::[\w-]+:.*\n)+)", flags=re.M)


def listings(docname):
    """(path, pyobject, lines option or None) of every literalinclude of a page."""
    source_file = ROOT / f"{docname}.md"
    if not source_file.exists():
        return []
    found = []
    for match in LISTING.finditer(source_file.read_text(encoding="utf-8")):
        options = dict(re.findall(r"^:([\w-]+):\s*(.*)$", match.group("options"), flags=re.M))
        if "pyobject" in options:
            path = (source_file.parent / match.group("path")).resolve()
            found.append((path, options["pyobject"], options.get("lines")))
    return found


def function_lines(path, name):
    """(last line of the signature, first line after the docstring or None), counted from the
    ``def`` line as 1."""
    tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    func = next(node for node in ast.walk(tree)
                if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name == name)
    body = func.body
    has_docstring = (isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                     and isinstance(body[0].value.value, str))
    start = func.decorator_list[0].lineno if func.decorator_list else func.lineno
    signature_end = body[0].lineno - start
    if not has_docstring:
        return signature_end, body[0].lineno - start + 1
    return signature_end, (body[1].lineno - start + 1 if len(body) > 1 else None)


def expected_lines(path, name):
    """The ``:lines:`` option that shows the whole signature and the body, without docstring."""
    signature_end, body_start = function_lines(path, name)
    head = "1" if signature_end == 1 else f"1-{signature_end}"
    return f"{head},{body_start}-"


CASES = [(doc, path, name, lines) for doc in toc_pages() for path, name, lines in listings(doc)]


def test_chapters_show_reference_code():
    """The chapters hold listings at all (the parser below is not looking at nothing)."""
    assert len(CASES) >= 20


@pytest.mark.parametrize("docname,path,name,lines", CASES,
                         ids=[f"{c[0].split('/')[-1]}-{c[2]}" for c in CASES])
def test_listing_lines_skip_exactly_the_docstring(docname, path, name, lines):
    """A ``:lines: 1-J,K-`` listing shows the whole signature and starts its body right after
    the docstring."""
    if lines is None:
        return  # the whole function is shown
    expected = expected_lines(path, name)
    assert lines.replace(" ", "") == expected, (
        f"{docname}: the listing of {name} uses :lines: {lines}, but its signature ends and its "
        f"body starts elsewhere: write :lines: {expected}")


SAMPLE = '''\
def f(x):
    """Docstring.

    More.
    """
    y = x + 1
    return y
'''


def test_first_body_line(tmp_path):
    """The helper counts from the def line: the sample's body starts at line 6."""
    path = tmp_path / "sample.py"
    path.write_text(SAMPLE)
    assert function_lines(path, "f") == (1, 6)
    assert expected_lines(path, "f") == "1,6-"


def test_long_signature(tmp_path):
    """A signature over three lines is shown whole: lines 1-3, then the body after the
    docstring."""
    path = tmp_path / "sample.py"
    path.write_text("def g(a: int,\n      b: int,\n      ) -> int:\n    \"\"\"Doc.\"\"\"\n"
                    "    return a + b\n")
    assert expected_lines(path, "g") == "1-3,5-"


# ---------------------------------------------------------------- listings of assigned functions

#: Chapters whose listings of the functions their assignment asks for are instructor-only (issue
#: 24: the student edition never prints an answer), each with the tasks whose reference listing
#: the instructor edition keeps. Add a chapter here once its listings have moved.
INSTRUCTOR_ONLY_CHAPTERS = {
    "book/information": {"kl_divergence", "is_prefix_free", "huffman_code_lengths",
                         "two_part_codelength"},
    "book/logistic": {"sigmoid", "logistic_nll", "fit_logistic_regression", "softmax",
                      "fit_softmax_regression"},
}
#: Reference helpers that do the work of a task (the task itself only calls them): their
#: listing is the task's answer.
COMPUTES = {
    "two_part_code_terms": "two_part_codelength",
    # logistic.py: the sigmoid, the loss with its gradient, the gradient-descent loop (and the
    # SGD loop, which with one full batch is that loop), the softmax, the softmax loss
    "_sigmoid": "sigmoid",
    "_binary_nll_and_grad": "logistic_nll",
    "gradient_descent": "fit_logistic_regression",
    "_sgd": "fit_logistic_regression",
    "_log_softmax_rows": "softmax",
    "_softmax_nll_and_grad": "fit_softmax_regression",
}

_ASSIGNMENT_LINK = re.compile(r"\.\./exercises/(?P<name>\w+)/(?P=name)\.ipynb")
_BLOCK_OPEN = re.compile(r"^(?P<fence>:{3,}|`{3,})\{(?P<kind>admonition|only)\}\s*(?P<arg>.*)$")


def instructor_only_spans(text):
    """(start, end) character offsets of the blocks only the instructor edition shows: an
    admonition with the class ``instructor-note`` or ``teaching-note``, or ``{only} instructor``."""
    spans, lines, offset = [], text.splitlines(keepends=True), 0
    starts = []
    for line in lines:
        starts.append(offset)
        offset += len(line)
    for i, line in enumerate(lines):
        match = _BLOCK_OPEN.match(line.rstrip("\n"))
        if not match:
            continue
        end = next((j for j in range(i + 1, len(lines))
                    if lines[j].strip() == match.group("fence")), None)
        if end is None:
            continue
        options = "".join(lines[i + 1:end])
        if (match.group("kind") == "only" and match.group("arg").strip() == "instructor") or (
                match.group("kind") == "admonition"
                and re.search(r"^:class:.*\b(?:instructor|teaching)-note\b", options, flags=re.M)):
            spans.append((starts[i], starts[end] + len(lines[end])))
    return spans


def assigned_functions(docname):
    """The autograded tasks of the assignment a chapter links to (empty when it links none)."""
    from mlcourse_utils.grading.notebook import load_assignment

    match = _ASSIGNMENT_LINK.search((ROOT / f"{docname}.md").read_text(encoding="utf-8"))
    return set(load_assignment(match.group("name"), root=ROOT).tasks) if match else set()


@pytest.mark.parametrize("docname", sorted(INSTRUCTOR_ONLY_CHAPTERS))
def test_assigned_functions_are_listed_only_for_instructors(docname):
    """Every ``literalinclude`` of a function the chapter's assignment asks for (or of the
    reference helper that computes it) sits in an instructor-only block, and the instructor
    edition still lists the tasks it listed before."""
    text = (ROOT / f"{docname}.md").read_text(encoding="utf-8")
    tasks = assigned_functions(docname)
    assert tasks >= INSTRUCTOR_ONLY_CHAPTERS[docname], \
        f"{docname}: its assignment has no tasks {INSTRUCTOR_ONLY_CHAPTERS[docname] - tasks}"
    spans = instructor_only_spans(text)
    listed = set()
    for match in LISTING.finditer(text):
        name = re.search(r"^:pyobject:\s*(\S+)", match.group("options"), flags=re.M)
        task = COMPUTES.get(name.group(1), name.group(1)) if name else None
        if task not in tasks:
            continue
        assert any(lo <= match.start() < hi for lo, hi in spans), (
            f"{docname}: the listing of {name.group(1)} (assignment task {task}) is in the "
            "student edition; put it in an instructor-note admonition")
        listed.add(task)
    missing = INSTRUCTOR_ONLY_CHAPTERS[docname] - listed
    assert not missing, f"{docname}: the instructor edition lost the listings of {sorted(missing)}"


def test_instructor_only_spans_finds_notes_and_only_blocks():
    """The span finder sees an instructor-note admonition and an {only} instructor block, and
    not a Common mistake box."""
    sample = (":::{admonition} Instructor note: x\n:class: instructor-note\n"
              "```{literalinclude} a.py\n:pyobject: f\n```\n:::\n"
              ":::{admonition} Common mistake: y\n:class: common-mistake\ntext\n:::\n"
              "````{only} instructor\n```{literalinclude} a.py\n:pyobject: g\n```\n````\n")
    spans = instructor_only_spans(sample)
    assert len(spans) == 2
    inside = [sample[lo:hi] for lo, hi in spans]
    assert ":pyobject: f" in inside[0] and ":pyobject: g" in inside[1]
    assert "common-mistake" not in "".join(inside)
