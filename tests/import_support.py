"""The package's imports read with :mod:`ast`, for the tests of its shape (`test_package`: no
cycle; `test_layers`: no import back up a floor)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "mlcourse_utils"


def module_name(path: Path, package: Path = PACKAGE) -> str:
    """``mlcourse_utils.grading.text`` for ``mlcourse_utils/grading/text.py`` (a package's
    ``__init__.py`` is the package)."""
    parts = list(path.relative_to(package.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


#: ``{dotted name: file}`` of every module of the package.
MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def import_statements(path: Path, package: Path = PACKAGE) -> list[tuple[int, str, list[str]]]:
    """``(line, source, names)`` for every import in the file ``path``, at its top or inside a
    function, and every ``importlib.import_module`` of a literal name: ``source`` is the module
    a ``from`` import reads (relative ones made absolute; "" for the others), ``names`` the
    dotted names it imports (``source.name`` for each name of a ``from`` import)."""
    name = module_name(path, package)
    here = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = here.rsplit(".", node.level - 1)[0] if node.level > 1 else here
                source = f"{base}.{node.module}" if node.module else base
            else:
                source = node.module or ""
            found.append((node.lineno, source, [f"{source}.{a.name}" for a in node.names]))
        elif isinstance(node, ast.Import):
            found.append((node.lineno, "", [a.name for a in node.names]))
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr == "import_module" and node.args
              and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            found.append((node.lineno, "", [node.args[0].value]))
    return found
