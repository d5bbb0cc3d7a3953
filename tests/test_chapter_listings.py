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


# ------------------------------------------------ chapter 5: the instructor edition keeps the code

#: Chapters whose assignment's reference code the instructor edition must still list (with
#: the student edition showing mathematics or pseudo-code instead): docname -> assignment.
INSTRUCTOR_LISTINGS = {"book/logistic": "logistic_regression"}


def _module_calls(path):
    """{function name: names of the module's functions it calls} for one module."""
    tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    functions = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
    calls = {}
    for name, node in functions.items():
        calls[name] = {n.func.id for n in ast.walk(node)
                       if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                       and n.func.id in functions and n.func.id != name}
    return calls


def _reachable(calls, start):
    """``start`` and every function of the module that it calls, directly or not."""
    seen, todo = set(), [start]
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(calls.get(name, ()))
    return seen


@pytest.mark.parametrize("docname", sorted(INSTRUCTOR_LISTINGS))
def test_instructor_edition_lists_the_code_of_every_task(docname):
    """Every task of the chapter's assignment has its reference code (the task's function or a
    function of the module that it calls) listed in the chapter; the test above requires those
    listings to be instructor-only, so the instructor edition still shows the reference code
    that the student edition gives as mathematics or pseudo-code."""
    from mlcourse_utils.grading.notebook import load_assignment

    tasks = load_assignment(INSTRUCTOR_LISTINGS[docname], ROOT).tasks
    listed = {(path, name) for path, name, _ in listings(docname)}
    modules = {path for path, _ in listed}
    missing = []
    for task in tasks:
        reach = set()
        for path in modules:
            calls = _module_calls(path)
            if task in calls:
                reach |= {(path, name) for name in _reachable(calls, task)}
        if reach and not reach & listed:
            missing.append(task)
    covered = [task for task in tasks
               if any(task in _module_calls(path) for path in modules)]
    assert len(covered) >= 6, f"{docname}: the parser found the code of only {covered}"
    assert not missing, (f"{docname}: no listing (instructor-only) of the reference code of "
                         f"{missing}")


def test_reachable_follows_calls(tmp_path):
    """f calls g, g calls _h: all three are reached from f, only _h from _h."""
    path = tmp_path / "m.py"
    path.write_text("def _h():\n    return 1\n\n\ndef g():\n    return _h()\n\n\n"
                    "def f():\n    return g()\n")
    calls = _module_calls(path)
    assert _reachable(calls, "f") == {"f", "g", "_h"}
    assert _reachable(calls, "_h") == {"_h"}
