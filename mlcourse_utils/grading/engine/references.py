"""Which public code an assignment's answers could be copied from: reference module, solution, stub.

An assignment ``NAME`` asks for functions of the reference module ``mlcourse_utils.<module>``
(:data:`mlcourse_utils.course.REFERENCE_MODULES`; an assignment it lacks is an error). Its
answer cells' starting code is in the release ``exercises/NAME/NAME.ipynb`` and the
instructor's answers in ``solutions/NAME/NAME.ipynb``.
"""

from __future__ import annotations

import importlib
import inspect
import types
from collections.abc import Iterable
from pathlib import Path

from ...course import reference_module_name
from ..notebook import cell_source, grade_id, is_answer_cell, read_notebook_cells

#: At most this many helper functions are added to a reference function's source.
MAX_HELPERS = 12


def reference_module(name: str) -> types.ModuleType:
    """The reference module of assignment ``name`` (imported). ValueError for an assignment the
    catalogue (:data:`~mlcourse_utils.course.REFERENCE_MODULES`) does not list: without it, the
    comparison with the reference would silently be off."""
    return importlib.import_module(f"mlcourse_utils.{reference_module_name(name)}")


def _global_names(code):
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _global_names(const)
    return names


def reference_source(module: types.ModuleType, function: str) -> str | None:
    """Source of ``module.function`` followed by the package functions it calls (transitively:
    a copy of the reference may carry its helpers along), or None when there is no such
    function."""
    main = getattr(module, function, None)
    if not inspect.isfunction(main):
        return None
    order, queue = [main], [main]
    while queue and len(order) <= MAX_HELPERS:
        fn = queue.pop(0)
        for name in sorted(_global_names(fn.__code__)):
            obj = fn.__globals__.get(name)
            if (inspect.isfunction(obj) and obj not in order
                    and getattr(obj, "__module__", "").startswith("mlcourse_utils")):
                order.append(obj)
                queue.append(obj)
    parts = []
    for fn in order[: MAX_HELPERS + 1]:
        try:
            parts.append(inspect.getsource(fn))
        except (OSError, TypeError):
            continue
    return "\n\n".join(parts) if parts else None


def notebook_answers(path: Path | str) -> dict[str, str]:
    """``{grade_id: source}`` of the answer cells of a course notebook ({} if it is missing)."""
    path = Path(path)
    if not path.is_file():
        return {}
    answers = {}
    for cell in read_notebook_cells(path.read_bytes()):
        if is_answer_cell(cell) and grade_id(cell) not in answers:
            answers[grade_id(cell)] = cell_source(cell)
    return answers


def release_stubs(name: str, root: Path | str) -> dict[str, str]:
    """The release notebook's answer cells (the starting code every student gets)."""
    return notebook_answers(Path(root) / "exercises" / name / f"{name}.ipynb")


def references(name: str, tasks: Iterable[str],
               root: Path | str) -> dict[str, list[tuple[str, str]]]:
    """``{task: [(label, source), ...]}``: the reference function and the instructor's answer."""
    module = reference_module(name)
    solution = notebook_answers(Path(root) / "solutions" / name / f"{name}.ipynb")
    found = {}
    for task in tasks:
        sources = []
        source = reference_source(module, task)
        if source:
            sources.append((f"{module.__name__}.{task}", source))
        if task in solution:
            sources.append((f"solutions/{name}/{name}.ipynb", solution[task]))
        found[task] = sources
    return found
