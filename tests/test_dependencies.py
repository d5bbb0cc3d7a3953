"""Every distribution the package imports is declared in pyproject.toml, in the install that
needs it: the base install for what a student runs (the reference modules, `mlcourse check` and
what it imports), `[book]` for the website, `[grading]` for the grader. A dependency that only
arrives with another one (IPython with ipykernel, alembic with nbgrader) can disappear with that
one's next release, so it is declared too.

Imports are read from the source with ast (every ``import``, also inside functions) and mapped to
distributions with importlib.metadata, in this environment (which installed every extra).
"""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
import tomllib
from pathlib import Path

import pytest

import assignment_support as sup
from mlcourse_utils import cli
from mlcourse_utils.grading import notebook
from mlcourse_utils.grading.sandbox import requirements

PACKAGE = sup.ROOT / "mlcourse_utils"
PROJECT = tomllib.loads((sup.ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
#: Where `mlcourse check` starts besides the reference modules (cli.py's commands import their
#: modules only when they run: only cli.py's module-level imports count for it).
STUDENT_ROOTS = ["grading/selfcheck.py", "grading/__init__.py"]
#: Modules at the package's root that only book/ and grading/ import (below both, so that
#: neither imports the other): they run with either extra, so they may use what both declare.
#: A student file that imported one would make it a student file again (base install only).
BELOW_BOOK_AND_GRADING = ["config.py"]


def _normal(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def _declared(requirements_list):
    return {_normal(re.split(r"[<>=!~\[; ]", r, maxsplit=1)[0]) for r in requirements_list}


BASE = _declared(PROJECT["dependencies"])
EXTRAS = {name: _declared(reqs) for name, reqs in PROJECT["optional-dependencies"].items()}


def imports(source, module_level_only=False):
    """``(absolute imports, relative imports as (level, module))`` of Python ``source``."""
    tree = ast.parse(source)
    nodes = tree.body if module_level_only else ast.walk(tree)
    absolute, relative = set(), set()
    for node in nodes:
        if isinstance(node, ast.Import):
            absolute.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0 and node.module:
                absolute.add(node.module)
            elif node.level:
                names = [node.module] if node.module else [a.name for a in node.names]
                relative.update((node.level, n) for n in names)
    return absolute, relative


def _resolve(path, level, name):
    """The package file a relative import in ``path`` refers to (or None)."""
    base = path.parent
    for _ in range(level - 1):
        base = base.parent
    target = base.joinpath(*name.split("."))
    for candidate in (target.with_suffix(".py"), target / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def student_files():
    """The files `mlcourse check` and the reference modules can run (import closure)."""
    todo = [p for p in PACKAGE.glob("*.py") if p.name not in BELOW_BOOK_AND_GRADING]
    todo += [PACKAGE / r for r in STUDENT_ROOTS]
    seen = set()
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        _, relative = imports(path.read_text(encoding="utf-8"), path.name == "cli.py")
        todo += [t for t in (_resolve(path, lvl, n) for lvl, n in relative) if t is not None]
    return seen


def install_of(path, students):
    """The distributions the install that runs ``path`` has."""
    if path in students:
        return "base", BASE
    if path.parent == PACKAGE and path.name in BELOW_BOOK_AND_GRADING:
        return "book and grading", BASE | (EXTRAS["book"] & EXTRAS["grading"])
    part = path.relative_to(PACKAGE).parts[0]
    extra = {"book": "book", "grading": "grading"}.get(part)
    return (extra, BASE | EXTRAS[extra]) if extra else ("base", BASE)


def undeclared(files, read=lambda path: path.read_text(encoding="utf-8")):
    """``[(file, module, distribution, install)]`` of imports not declared for their install."""
    distributions = importlib.metadata.packages_distributions()
    students = student_files()
    problems = []
    for path in sorted(files):
        absolute, _ = imports(read(path))
        install, allowed = install_of(path, students)
        for module in sorted(absolute):
            top = module.split(".")[0]
            if top in sys.stdlib_module_names or top == "mlcourse_utils":
                continue
            dists = {_normal(d) for d in distributions.get(top, [f"<{top} not installed>"])}
            if not dists & allowed:
                problems.append((str(path.relative_to(sup.ROOT)), module, "/".join(sorted(dists)),
                                 install))
    return problems


def test_every_import_of_the_package_is_declared_for_its_install():
    problems = undeclared(PACKAGE.rglob("*.py"))
    assert not problems, "\n".join(f"{f}: import {m} needs {d}, not declared in [{i}]"
                                   for f, m, d, i in problems)


def test_the_check_fails_on_an_undeclared_import():
    """An installed but undeclared distribution is found (pytest's, in the grader), and in a
    module of the student path one of an extra is not enough (jinja2 is in [grading])."""
    grader = PACKAGE / "grading" / "engine" / "batch.py"
    student = PACKAGE / "grading" / "selfcheck.py"
    added = {grader: "import pytest\n", student: "def _f():\n    import jinja2\n"}
    problems = undeclared([grader, student], lambda path: added[path])
    assert [(Path(f).name, m, i) for f, m, _, i in problems] == [
        ("batch.py", "pytest", "grading"), ("selfcheck.py", "jinja2", "base")]


def test_the_student_path_is_what_check_runs():
    names = {p.relative_to(PACKAGE).as_posix() for p in student_files()}
    assert {"grading/selfcheck.py", "grading/execute.py", "grading/notebook.py",
            "bayes.py"} <= names
    # The grader's own modules are not on it (their imports need the [grading] extra).
    assert not names & {"grading/engine/batch.py", "grading/reports/manual.py",
                        "grading/lms/export.py", "grading/sandbox/channel.py"}


def test_install_advice_names_a_requirement_pip_can_install():
    """The package is not on an index: the advice installs the extra from the repository."""
    for text in (requirements.INSTALL, _advice("grade")):
        assert "mlcourse_utils[" not in text
        extra = re.search(r"pip install '\.\[(\w+)\]'", text)
        assert extra and extra.group(1) in PROJECT["optional-dependencies"], text


def _advice(name):
    """What `mlcourse NAME` says when its extra's module is missing."""
    command = cli.COMMANDS[name]._replace(extra=(cli.COMMANDS[name].extra[0],
                                                 "no_such_module_for_the_test"))
    return cli._not_installed(name, command)


@pytest.mark.parametrize("name", ["grade", "build", "export", "feedback"])
def test_every_command_with_an_extra_advises_that_extra(name):
    text = _advice(name)
    assert f"pip install '.[{cli.COMMANDS[name].extra[0]}]'" in text


def test_grading_extra_lists_what_grading_imports():
    """pyproject's [grading] extra names every distribution the grader imports (and MathJax)."""
    import tomllib

    from mlcourse_utils.grading.sandbox import requirements


    project = tomllib.loads((notebook.find_course_root() / "pyproject.toml").read_text())
    extra = {re.split(r"[<>=!~\[ ]", r, maxsplit=1)[0].lower()
             for r in project["project"]["optional-dependencies"]["grading"]}
    assert set(requirements.REQUIRED_MODULES.values()) | {requirements.MATHJAX} <= extra
