"""The package's shape: no import cycles, and every module says its one job in its first line."""

from __future__ import annotations

import ast

import pytest

from import_support import MODULES, import_statements


def _imports(path):
    """Package modules that ``path`` imports anywhere in its code (module level or lazily): the
    module a ``from`` import reads and each name it takes (a name may be a module too)."""
    return {c for _, source, names in import_statements(path) for c in [source, *names]
            if c.startswith("mlcourse_utils")}


def test_no_import_cycles():
    graph = {m: {t for t in _imports(p) if t in MODULES and t != m} for m, p in MODULES.items()}
    # A package's __init__ importing its own submodules (re-exports) is not a cycle of jobs.
    for m in graph:
        graph[m] = {t for t in graph[m] if not (m.startswith(t + ".") and t + "." in m + ".")}
    state, stack = {}, []

    def visit(m):
        state[m] = "open"
        stack.append(m)
        for t in sorted(graph[m]):
            if state.get(t) == "open":
                cycle = stack[stack.index(t):] + [t]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if t not in state:
                visit(t)
        stack.pop()
        state[m] = "done"

    for m in sorted(graph):
        if m not in state:
            visit(m)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_every_module_states_its_job(module):
    doc = ast.get_docstring(ast.parse(MODULES[module].read_text(encoding="utf-8")))
    assert doc and len(doc.splitlines()[0]) > 20, \
        f"{module} needs a first docstring line saying its job"


def _public_functions(tree):
    """(qualified name, FunctionDef) of the module's public functions and public classes'
    public methods and ``__init__``."""
    for node in tree.body:
        functions = (ast.FunctionDef, ast.AsyncFunctionDef)
        if isinstance(node, functions) and not node.name.startswith("_"):
            yield node.name, node
        elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            for item in node.body:
                if isinstance(item, functions) and (
                        not item.name.startswith("_") or item.name == "__init__"):
                    yield f"{node.name}.{item.name}", item


@pytest.mark.parametrize("module", sorted(MODULES))
def test_public_functions_have_type_hints(module):
    """Every parameter (but self and cls) and the return of every public function and method."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    missing = []
    for name, func in _public_functions(tree):
        args = func.args
        params = args.posonlyargs + args.args + args.kwonlyargs
        params += [a for a in (args.vararg, args.kwarg) if a is not None]
        unannotated = [a.arg for a in params
                       if a.annotation is None and a.arg not in ("self", "cls")]
        if unannotated or func.returns is None:
            missing.append(f"{name}({', '.join(unannotated)}){'' if func.returns else ' -> ?'}")
    assert not missing, f"{module}: public functions without type hints: {missing}"
