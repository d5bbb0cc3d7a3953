"""The code a chapter shows is the code that runs, without its docstring.

Chapters show reference functions with ``literalinclude`` and ``:pyobject:``; where a docstring
would dominate the listing, ``:lines: 1,K-`` keeps the ``def`` line and the body from line K of
the function on (``:lines: 1-J,K-`` when the signature takes lines 1 to J). J and K are line
numbers, so they drift silently when a signature or docstring grows or shrinks: this test reads
every such listing of the pages in ``_toc.yml`` and checks that J is the signature's last line and
K the first line after the docstring.

A chapter never prints an answer: a function that an assignment asks students to write (the
grade_id of an autograded answer cell in ``solutions/``), and a private helper of its module that
such a function calls, is listed only where the student edition does not show it (an
``{only} instructor`` block, an instructor or teaching note, or a solution). The student edition
shows it as mathematics or pseudo-code.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from test_chapter_numbers import ROOT, _source, toc_pages

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
#: The listings that show part of a function (``:lines:``); the others show all of it.
PARTIAL = [case for case in CASES if case[3] is not None]


def test_chapters_show_reference_code():
    """The chapters hold listings at all, some of them in part (the parser below is not looking
    at nothing)."""
    assert len(CASES) >= 20
    assert len(PARTIAL) >= 20


@pytest.mark.parametrize("docname,path,name,lines", PARTIAL,
                         ids=[f"{c[0].split('/')[-1]}-{c[2]}" for c in PARTIAL])
def test_listing_lines_skip_exactly_the_docstring(docname, path, name, lines):
    """A ``:lines: 1-J,K-`` listing shows the whole signature and starts its body right after
    the docstring."""
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


# ----------------------------------------------------------------------------- no printed answers

_FENCE = re.compile(r"^(?P<fence>`{3,}|:{3,})\s*(?P<info>.*)$")
_HIDDEN_CLASSES = re.compile(r"^:class:.*\b(?:instructor-note|teaching-note)\b")


def student_hidden_lines(text):
    """0-based indices of the lines of a MyST page that the student edition does not show: the
    content of ``{only} instructor`` blocks, of directives with the class ``instructor-note`` or
    ``teaching-note``, of ``{solution}`` directives and of gated solutions."""
    lines = text.splitlines()
    stack = []      # (fence, hidden) of the open directives and code blocks
    gated = False   # between {solution-start} and {solution-end}
    hidden = set()
    for i, line in enumerate(lines):
        match = _FENCE.match(line.strip())
        if match:
            fence, info = match.group("fence"), match.group("info").strip()
            if info.startswith("{solution-start}"):
                gated = True
            elif info.startswith("{solution-end}"):
                gated = False
            if not info and stack and fence[0] == stack[-1][0][0] \
                    and len(fence) >= len(stack[-1][0]):
                stack.pop()
                continue
            if info:
                options = []
                for following in lines[i + 1:]:
                    if not re.match(r"^\s*:[\w-]+:", following):
                        break
                    options.append(following.strip())
                is_hidden = (bool(re.match(r"\{only\}\s+instructor\b", info))
                             or info.startswith("{solution}")
                             or any(_HIDDEN_CLASSES.match(o) for o in options))
                if not info.startswith(("{solution-start}", "{solution-end}")):
                    stack.append((fence, is_hidden))
        if gated or any(flag for _, flag in stack):
            hidden.add(i)
    return hidden


def assigned_functions(root=ROOT):
    """The grade_ids of every autograded answer cell of every solution notebook."""
    from mlcourse_utils.grading.notebook import load_assignment

    names = set()
    for notebook in sorted((root / "solutions").glob("*/*.ipynb")):
        if notebook.stem == notebook.parent.name:
            names.update(load_assignment(notebook.stem, root).tasks)
    return names


#: Reference functions whose listing is a task's answer although no task calls them: the
#: function doing a task's work, the elastic net's plain coordinate descent, which with
#: l1_ratio = 1 is the lasso_fit task, and logistic.py's gradient-descent loop, its SGD loop
#: (with one batch of all samples, that loop) and the softmax loss with its gradient, which
#: the fitting tasks reach only through private helpers.
COMPUTES = {
    "two_part_code_terms": "two_part_codelength",
    "_elastic_net_sweeps": "lasso_fit",
    "gradient_descent": "fit_logistic_regression",
    "_sgd": "fit_logistic_regression",
    "_softmax_nll_and_grad": "fit_softmax_regression",
}


def answers_in(path, assigned):
    """The functions of the module at ``path`` whose listing would print an answer: the assigned
    ones it defines, the private helpers of that module they call, and the COMPUTES ones."""
    tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    functions = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
    answers = assigned & functions.keys()
    answers |= {name for name, task in COMPUTES.items() if task in assigned and name in functions}
    for name in list(answers):
        for node in ast.walk(functions[name]):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id.startswith("_") and node.func.id in functions):
                answers.add(node.func.id)
    return answers


ASSIGNED = assigned_functions()


def test_the_assignments_ask_for_functions():
    """The list the check below uses is not empty (it reads the solution notebooks)."""
    assert {"bernoulli_mle", "beta_posterior", "fit_bernoulli_nb", "fit_qda"} <= ASSIGNED


#: Chapters whose listings are still being moved (each branch removes its entry when it does).
_MOVING: set[str] = set()


@pytest.mark.parametrize("docname", [
    pytest.param(d, marks=pytest.mark.xfail(strict=True, reason="listings move in this chapter's "
                                            "own change; remove it from _MOVING then"))
    if d in _MOVING else d for d in toc_pages()])
def test_assigned_functions_are_listed_only_for_instructors(docname):
    """No reference listing of a function that students must write is shown in the student
    edition (write its mathematics or pseudo-code there; put the listing in an
    ``{only} instructor`` block)."""
    text = _source(docname)  # every page of the table of contents has one
    hidden = student_hidden_lines(text)
    shown = []
    for match in LISTING.finditer(text):
        options = dict(re.findall(r"^:([\w-]+):\s*(.*)$", match.group("options"), flags=re.M))
        if "pyobject" not in options:
            continue
        path = (ROOT / docname).parent / match.group("path")
        line = text.count("\n", 0, match.start())
        if options["pyobject"] in answers_in(path.resolve(), ASSIGNED) and line not in hidden:
            shown.append(f"line {line + 1}: {options['pyobject']}")
    assert not shown, (f"{docname} prints the reference code of assigned functions in the "
                       "student edition:\n" + "\n".join(shown))


#: Chapters whose instructor edition must keep the reference listing of each of these tasks
#: (the listing of the task's function or of a function of its module that it calls, directly
#: or not), while the student edition shows mathematics or pseudo-code.
INSTRUCTOR_KEEPS = {
    "book/logistic": {"sigmoid", "logistic_nll", "logistic_nll_grad", "fit_logistic_regression",
                      "softmax", "fit_softmax_regression"},
}


def _reachable(path, start):
    """``start`` and every function of the module at ``path`` that it calls, directly or not."""
    tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    functions = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
    seen, todo = set(), [start]
    while todo:
        name = todo.pop()
        if name in seen or name not in functions:
            continue
        seen.add(name)
        todo.extend(n.func.id for n in ast.walk(functions[name])
                    if isinstance(n, ast.Call) and isinstance(n.func, ast.Name))
    return seen


@pytest.mark.parametrize("docname", sorted(INSTRUCTOR_KEEPS))
def test_instructor_edition_keeps_the_reference_listings(docname):
    """Every task named here has an instructor-only listing of its reference code, so the
    instructor edition still shows what the student edition gives as mathematics."""
    text = _source(docname)
    hidden = student_hidden_lines(text)
    listed = []                                     # (module path, function) of hidden listings
    for match in LISTING.finditer(text):
        options = dict(re.findall(r"^:([\w-]+):\s*(.*)$", match.group("options"), flags=re.M))
        if "pyobject" in options and text.count("\n", 0, match.start()) in hidden:
            listed.append(((ROOT / docname).parent / match.group("path"), options["pyobject"]))
    missing = [task for task in sorted(INSTRUCTOR_KEEPS[docname])
               if not any(name in _reachable(path.resolve(), task) for path, name in listed)]
    assert not missing, f"{docname}: no instructor-only listing of the reference code of {missing}"


def test_reachable_follows_calls(tmp_path):
    """f calls g, g calls _h: all three are reached from f, only _h from _h."""
    path = tmp_path / "m.py"
    path.write_text("def _h():\n    return 1\n\n\ndef g():\n    return _h()\n\n\n"
                    "def f():\n    return g()\n")
    assert _reachable(path, "f") == {"f", "g", "_h"}
    assert _reachable(path, "_h") == {"_h"}


HIDDEN_SAMPLE = """\
# Page
```{literalinclude} a.py
:pyobject: f
```
````{only} instructor
```{literalinclude} a.py
:pyobject: g
```
````
:::{admonition} Instructor note: where the code is
:class: instructor-note
shown to instructors
:::
:::{admonition} Common mistake: a slip
:class: common-mistake
shown to everyone
:::
````{solution-start} ex
````
gated
````{solution-end}
````
after
"""


def test_hidden_lines_of_a_sample_page():
    """Lines 5-7 ({only} instructor), 11 (instructor note) and 17 (gated solution) are hidden;
    the first listing, the common mistake and the last line are not."""
    lines = HIDDEN_SAMPLE.splitlines()
    hidden = {lines[i] for i in student_hidden_lines(HIDDEN_SAMPLE)}
    assert ":pyobject: g" in hidden and "shown to instructors" in hidden and "gated" in hidden
    assert ":pyobject: f" not in hidden and "shown to everyone" not in hidden
    assert "after" not in hidden
