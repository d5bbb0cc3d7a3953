"""The package's floors: imports point down (book -> grading -> the course's base), never back up.

Every module of ``mlcourse_utils`` is on one floor, from the bottom: the base (the course's
catalogue and configuration, the reference modules, data sets, plotting: the root modules); the
student layer (``grading/``'s root, which the student wheel ships); the grader (``grading/``'s
sub-packages); the book tools (``book/``); the command line (``cli.py``, ``__main__.py``), which
calls them all. Each import is read with :mod:`ast`, relative or absolute, at a module's top or
inside a function (a lazy import runs as surely as any other), as well as
``importlib.import_module`` of a literal name; one that reaches a higher floor fails.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from import_support import MODULES, PACKAGE, import_statements

#: The floors, bottom first.
FLOORS = ("base", "student layer", "grader", "book", "command line")


def floor(module: str) -> str:
    """The floor of a module of the package, from its place in the folders."""
    parts = module.split(".")[1:]
    if parts[:1] == ["book"]:
        return "book"
    if parts[:1] == ["grading"]:  # its root is the student layer, its sub-packages the grader
        grader = len(parts) > 2 or len(parts) == 2 and PACKAGE.joinpath(*parts).is_dir()
        return "grader" if grader else "student layer"
    if parts in (["cli"], ["__main__"]):
        return "command line"
    return "base"


def _target(name: str, modules) -> str:
    """The module of the package that ``name`` (a module, or a name inside one) is."""
    while name not in modules and "." in name:
        name = name.rpartition(".")[0]
    return name


def imports(path: Path, package_dir: Path = PACKAGE, modules=MODULES) -> list[tuple[int, str]]:
    """``(line, module)`` for every module of the package that the file ``path`` imports."""
    return [(line, _target(n, modules)) for line, _, names in import_statements(path, package_dir)
            for n in names if n == "mlcourse_utils" or n.startswith("mlcourse_utils.")]


def test_the_floors_are_read_from_the_folders():
    """Hand-placed examples, one or two per floor (a sub-package's ``__init__`` is the grader)."""
    assert floor("mlcourse_utils") == floor("mlcourse_utils.course") == "base"
    assert floor("mlcourse_utils.mle") == "base"
    assert floor("mlcourse_utils.grading") == floor("mlcourse_utils.grading.notebook") == \
        "student layer"
    assert floor("mlcourse_utils.grading.engine") == "grader"
    assert floor("mlcourse_utils.grading.engine.release") == "grader"
    assert floor("mlcourse_utils.book.build") == floor("mlcourse_utils.book") == "book"
    assert floor("mlcourse_utils.cli") == floor("mlcourse_utils.__main__") == "command line"


def test_imports_are_read_wherever_they_are(tmp_path):
    """A made-up module with every kind of import the test must see, and two it must not."""
    fake = tmp_path / "mlcourse_utils" / "grading" / "reports" / "made_up.py"
    fake.parent.mkdir(parents=True)
    fake.write_text(
        "import importlib\n"
        "from ...book.config import read_config\n"               # relative, two up
        "from .. import notebook\n"                               # relative, a module by name
        "import mlcourse_utils.course\n"                          # absolute
        "def f():\n"
        "    from mlcourse_utils.book import wheel\n"             # lazily, inside a function
        "    return importlib.import_module('mlcourse_utils.cli')\n"
        "import numpy\n"                                          # not the package's
        "x = 'from mlcourse_utils.book import build'\n",          # a string, not an import
        encoding="utf-8")
    known = dict.fromkeys(["mlcourse_utils.book.config", "mlcourse_utils.grading.notebook",
                           "mlcourse_utils.course", "mlcourse_utils.book.wheel",
                           "mlcourse_utils.cli"], fake)
    assert imports(fake, tmp_path / "mlcourse_utils", known) == [
        (2, "mlcourse_utils.book.config"), (3, "mlcourse_utils.grading.notebook"),
        (4, "mlcourse_utils.course"), (6, "mlcourse_utils.book.wheel"), (7, "mlcourse_utils.cli")]


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_import_goes_back_up(module):
    here = FLOORS.index(floor(module))
    up = [f"line {line}: {target} ({floor(target)})" for line, target in imports(MODULES[module])
          if FLOORS.index(floor(target)) > here]
    assert not up, (f"{module} ({floor(module)}) imports from a floor above its own; move what "
                    f"both need below both (floors, bottom first: {', '.join(FLOORS)}):\n  "
                    + "\n  ".join(up))
