"""Releasing assignments: check each solution notebook, then let nbgrader generate exercises/.

After nbgrader has written ``exercises/NAME/*.ipynb``, each release notebook gets a generated
first cell (:func:`header_cell`, from ``templates/release_header.md``: the points per task, how
to install the course package and run ``mlcourse check``, the time limit of a cell, the rules:
what may be imported, the calls forbidden per task, what each test checks), above each answer
cell a generated cell with that task's rule on calls (:func:`rule_cell`) and, in its metadata,
the list of its test cells with their checksums, from which ``mlcourse check`` tells a deleted
test cell, the forbidden calls per task, which ``mlcourse check`` prints as each task's rule and
looks for, the assignment's time limit of one cell, which ``mlcourse check`` uses, and whether
its students get their own variants (:mod:`..variants`). The id cell, where a student enters
their course id, gets the release's one line (:data:`~..variants.ID_LINE`, or
:data:`~..variants.ID_LINE_OFF` when the assignment's variants are off) whatever the solution
notebook holds there; a solution notebook whose id cell is missing, misplaced, or whose
varying questions (:data:`~..variants.QUESTIONS`) are not its cells graded by hand is refused
(:func:`id_cell_problem`).
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ...course import ASSIGNMENTS, course_order, student_wheel_name
from ..graded.out import GRADEBOOK
from ..notebook import (
    ALLOWED_LIBRARIES,
    HIDDEN_BEGIN,
    ID_ROLE,
    assignment_from_cells,
    cell_source,
    find_course_root,
    grade_id,
    is_answer_cell,
    is_id_cell,
    is_manual_cell,
    is_test_cell,
    nbgrader_checksum,
    parse_python,
    task_rule,
    time_limit,
)
from ..text import plural
from ..variants import ID_LINE, ID_LINE_OFF, QUESTIONS, variants_enabled

#: The id and metadata marker of the generated first cell of a release notebook.
HEADER_ID = "mlcourse-header"
#: The id of the generated cell above a task's answer cell that states its rule on calls, and
#: its metadata marker.
RULE_ID = "mlcourse-rule-{task}"
RULE_MARKER = "rule"
#: Key of the course's own entries in a release notebook's metadata.
METADATA_KEY = "mlcourse"
#: The metadata of the id cell in a release notebook: its role, and nothing that locks it.
ID_CELL_METADATA = {METADATA_KEY: {"role": ID_ROLE}}
#: The id cell's code as released, without its comment (what the header quotes).
ID_CODE = ID_LINE.partition("#")[0].strip()


def available_assignments(root: Path | str) -> list[str]:
    """Assignments that have a source notebook, in course order (:func:`~..course.course_order`).

    ValueError for a source notebook of an assignment the course catalogue
    (:data:`~..course.ASSIGNMENTS`) does not list: it would be released out of order and
    without its reference module.
    """
    names = [p.name for p in sorted((Path(root) / "solutions").iterdir())
             if (p / f"{p.name}.ipynb").is_file()]
    unknown = sorted(set(names) - set(ASSIGNMENTS))
    if unknown:
        raise ValueError(f"solutions/{unknown[0]}/ is not an assignment of the course catalogue: "
                         "add it to ASSIGNMENTS and REFERENCE_MODULES in mlcourse_utils/course.py")
    return course_order(names)


def run_notebook(path: Path | str, timeout: float | None = None,
                 budget: float | None = None) -> list[tuple[str, str, bool]]:
    """Execute a notebook in a scratch folder; return ``[(cell, error text, is a test cell)]``.

    Every cell runs (errors do not stop the run) within ``timeout`` seconds each (default: the
    notebook's own limit, :func:`~.notebook.time_limit`) and ``budget`` in all
    (:func:`mlcourse_utils.grading.execute.execute_notebook`). The list names each cell
    that failed, timed out, killed the kernel or did not run, by its nbgrader grade_id (or its
    position), with the error's last line. The notebook's own folder is never written.
    """
    import nbformat

    from ..execute import execute_notebook

    path = Path(path)
    nb = nbformat.read(path, as_version=4)
    if timeout is None:
        timeout = time_limit(nb.metadata, path.name)
    run = execute_notebook(nb, path.parent, timeout=timeout, budget=budget)
    errors = []
    for result in run.cells:
        if result.status == "ok":
            continue
        cell = nb.cells[result.index]
        gid = grade_id(cell) or f"cell {result.index + 1}"
        text = result.error if result.status == "error" else f"{result.status}: {result.error}"
        errors.append((gid, text, is_test_cell(cell)))
    return errors


#: numpy's floating-point error modes that leave a warning a warning (not "raise", "call").
_HARMLESS_ERR_MODES = frozenset({"ignore", "warn", "print", "log"})
#: The warnings module's actions that leave a warning a warning (not "error").
_HARMLESS_ACTIONS = frozenset({"default", "ignore", "always", "all", "module", "once"})


def _literal(node: ast.AST) -> object:
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _literal  # (not a literal)


def warnings_made_errors(source: str) -> list[str]:
    """Where a test cell's code would turn a warning into an error, one line each.

    Tests judge values, never warnings: a test cell must not set a numpy floating-point error
    mode other than "ignore", "warn", "print" or "log" (``np.errstate(over="raise")``,
    ``np.seterr(all="call")``) nor a warnings action "error" (``warnings.simplefilter("error")``,
    ``filterwarnings``, ``catch_warnings(action=...)``): `mlcourse check` runs the test cells
    in the student's kernel, where such a mode would make an honest ``np.where`` idiom (a
    harmless ``RuntimeWarning`` in the discarded branch) fail. A mode that is not a literal is
    refused too (it cannot be read). A cell that does not parse yields nothing here.
    """
    try:
        tree = parse_python(source)
    except SyntaxError:
        return []
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if name in ("errstate", "seterr"):
            modes = [kw.value for kw in node.keywords if kw.arg != "call"] + list(node.args)
            allowed, what = _HARMLESS_ERR_MODES, "a floating-point error mode"
        elif name in ("simplefilter", "filterwarnings", "catch_warnings"):
            modes = [kw.value for kw in node.keywords if kw.arg == "action"]
            if name != "catch_warnings" and node.args:
                modes.append(node.args[0])
            allowed, what = _HARMLESS_ACTIONS, "a warnings action"
        else:
            continue
        bad = []
        for mode in modes:
            value = _literal(mode)
            values = value.values() if isinstance(value, dict) else [value]  # **{"over": ...}
            bad += [v for v in values
                    if v is not None and not (isinstance(v, str) and v in allowed)]
        if bad:
            found.append(f"line {node.lineno}: {name}(...) sets {what} " + (
                f"{bad[0]!r}, which makes a warning an error" if bad[0] is not _literal else
                "that is not a literal (it could make a warning an error)"))
    return found


def _points(value: float) -> str:
    return f"{value:g}"


def header_cell(source: Any, name: str, notebook: str) -> dict[str, Any]:
    """The generated first cell of a release notebook (a Markdown cell, as a dict).

    ``source`` is the nbgrader source notebook (a dict or NotebookNode): the points per task
    come from its test cells' metadata, the hidden ones from the test cells that hold hidden
    tests, the time limit of a cell from its metadata (:func:`~.notebook.time_limit`), the
    sections whose questions vary from :data:`~..variants.QUESTIONS` (none when the
    assignment's variants are off or it has no id cell). Rendered
    from ``templates/release_header.md`` (its comment lists the variables and
    the blocks).
    """
    import types

    import jinja2


    cells = [dict(c) for c in source["cells"]]
    assignment = assignment_from_cells(name, notebook, cells, source.get("metadata", {}))
    tasks = []
    for task in assignment.tasks:
        tests = [t for t in assignment.tests if t.task == task]
        checks = [types.SimpleNamespace(
            name=t.grade_id, points=t.points, description=t.description,
            hidden=any(ln.strip() == HIDDEN_BEGIN for ln in t.source.splitlines()))
            for t in tests]
        tasks.append(types.SimpleNamespace(
            name=task, points=sum(t.points for t in tests), tests=[t.grade_id for t in tests],
            hidden=sum(c.points for c in checks if c.hidden), checks=checks,
            forbidden=assignment.forbidden.get(task, [])))
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(Path(__file__).parents[1] / "templates"),
        autoescape=False, trim_blocks=True, lstrip_blocks=True, undefined=jinja2.StrictUndefined)
    env.filters["points"] = _points
    sections = varying_sections(name) if assignment.variants and assignment.has_id_cell else []
    text = env.get_template("release_header.md").render(
        assignment=name, notebook=notebook, wheel=student_wheel_name(), tasks=tasks,
        autograded=assignment.max_score, timeout=assignment.timeout, allowed=ALLOWED_LIBRARIES,
        manual=[types.SimpleNamespace(name=g, points=p) for g, p in assignment.manual],
        metadata=dict(source.get("metadata", {})), id_line=ID_CODE,
        variant_sections=_words(sections, "section"))
    text = "\n".join(line.rstrip() for line in text.strip().splitlines())
    while "\n\n\n" in text:
        text = text.replace("\n\n\n", "\n\n")
    return {"cell_type": "markdown", "id": HEADER_ID, "source": text,
            "metadata": {METADATA_KEY: {"generated": "header"}, "editable": False,
                         "deletable": False}}


def varying_sections(name: str) -> list[str]:
    """The sections of assignment ``name`` whose questions vary per student, in the order of
    :data:`~..variants.QUESTIONS` (each once)."""
    return list(dict.fromkeys(q.section for q in QUESTIONS.get(name, {}).values()))


def _words(items: list[str], noun: str) -> str:
    """``section 10``, ``sections 8 and 10``, ``sections 2, 8 and 10``; '' for none."""
    if not items:
        return ""
    if len(items) == 1:
        return f"{noun} {items[0]}"
    return f"{noun}s {', '.join(items[:-1])} and {items[-1]}"


def id_cell_problem(cells: list[dict[str, Any]], name: str, notebook: str,
                    metadata: Any = None) -> str | None:
    """Why a solution notebook's id cell or variants cannot be released (None: they can).

    With variants on (``metadata.mlcourse.variants``, default true;
    :func:`~..variants.variants_enabled`, whose ValueError names a setting that is not true or
    false), the notebook has exactly one id cell (:func:`~.notebook.is_id_cell`), its first
    code cell (students enter their id before anything else, and the setup cell reads it), and
    every question of :data:`~..variants.QUESTIONS` for ``name`` is one of its cells graded by
    hand. With variants off it has at most one id cell (the release writes ``STUDENT_ID =
    None`` there).
    """
    on = variants_enabled(metadata, notebook)
    ids = [i for i, c in enumerate(cells) if is_id_cell(c)]
    code = [i for i, c in enumerate(cells) if c.get("cell_type") == "code"]
    mark = f'metadata {{"{METADATA_KEY}": {{"role": "{ID_ROLE}"}}}}'
    if len(ids) > 1:
        return (f"{notebook} has {len(ids)} id cells (cells {', '.join(str(i + 1) for i in ids)}"
                f"): keep one, the first code cell")
    if not on:
        return None
    if not ids:
        return (f"{notebook} has no id cell: add, as its first code cell, a code cell "
                f"`{ID_CODE}` with {mark} (or turn its variants off: "
                f"metadata.{METADATA_KEY}.variants false)")
    if ids[0] != code[0]:
        first = next((i for i, c in enumerate(cells) if is_answer_cell(c)), None)
        before = code.index(ids[0])
        where = "after the first task" if first is not None and ids[0] > first else \
            f"after {plural(before, 'other code cell')}"
        return (f"{notebook}: the id cell (cell {ids[0] + 1}) is {where}; it must be the first "
                "code cell, before the setup and the first task (students enter their id "
                "before anything else)")
    if name not in QUESTIONS:
        return (f"{notebook}: assignment {name!r} has no questions that vary in "
                f"mlcourse_utils/grading/variants.py (QUESTIONS): add them, or turn its "
                f"variants off (metadata.{METADATA_KEY}.variants false)")
    manual = [grade_id(c) for c in cells if is_manual_cell(c)]
    missing = [q for q in QUESTIONS[name] if q not in manual]
    if missing:
        return (f"{notebook}: QUESTIONS[{name!r}] in mlcourse_utils/grading/variants.py names "
                f"{', '.join(missing)}, not a cell graded by hand of the notebook (those are: "
                f"{', '.join(g or '?' for g in manual) or 'none'})")
    return None


def release_id_cell(cell: Any, variants: bool) -> None:
    """Make ``cell`` (a release notebook's id cell, a NotebookNode) the release's: the one line
    (:data:`~..variants.ID_LINE`, or :data:`~..variants.ID_LINE_OFF` when variants are off),
    whatever the solution notebook held, its role, and nothing that locks it."""
    cell.source = ID_LINE if variants else ID_LINE_OFF
    kept = {k: v for k, v in cell.get("metadata", {}).items()
            if k not in ("nbgrader", "editable", "deletable", METADATA_KEY)}
    cell.metadata = {**kept, **{k: dict(v) for k, v in ID_CELL_METADATA.items()}}
    cell.outputs, cell.execution_count = [], None


def rule_cell(task: str, calls: list[str]) -> dict[str, Any]:
    """The generated Markdown cell above a task's answer cell: the calls it forbids and that
    the rest is allowed (:func:`~.notebook.task_rule`, from the source notebook's metadata)."""
    rule = task_rule(calls, code=lambda c: f"`{c}`")
    return {"cell_type": "markdown", "id": RULE_ID.format(task=task),
            "source": f"*Calls in `{task}`:* {rule}.",
            "metadata": {METADATA_KEY: {"generated": RULE_MARKER}, "editable": False,
                         "deletable": False}}


def finish_release_notebook(release: Path | str, source: Path | str, name: str) -> None:
    """Insert (or refresh) the header cell, the rule cell above each answer cell and the
    test-cell manifest of one release notebook, and write its id cell (:func:`release_id_cell`)."""
    import nbformat

    release, source = Path(release), Path(source)
    nb = nbformat.read(release, as_version=4)
    src = nbformat.read(source, as_version=4)
    nb.cells = [c for c in nb.cells if c.get("metadata", {}).get(METADATA_KEY, {})
                .get("generated") not in ("header", RULE_MARKER)]
    if not any(is_test_cell(c) for c in nb.cells):
        return  # not an assignment notebook (data, a reading): nothing to check or install
    assignment = assignment_from_cells(name, source.name, [dict(c) for c in src.cells],
                                       src.metadata)
    forbidden = assignment.forbidden
    cells = []
    for cell in nb.cells:
        if is_id_cell(cell):
            release_id_cell(cell, assignment.variants)
        if is_answer_cell(cell) and grade_id(cell) in forbidden:
            cells.append(nbformat.from_dict(rule_cell(grade_id(cell), forbidden[grade_id(cell)])))
        cells.append(cell)
    nb.cells = [nbformat.from_dict(header_cell(src, name, release.name)), *cells]
    nb.metadata[METADATA_KEY] = {
        "assignment": name,
        # The time limit of one cell, in seconds: `mlcourse check` uses it, as grading does.
        "timeout": assignment.timeout,
        # Whether the students get their own variants (false: STUDENT_ID = None, one version).
        "variants": assignment.variants,
        # {task: [forbidden calls]}: `mlcourse check` warns where an answer uses one.
        "forbidden": {task: names for task, names in forbidden.items() if names},
        # [grade_id, checksum] of every test cell, in order: `mlcourse check` names the ones
        # a student deleted or edited.
        "test_cells": [[grade_id(c), c.metadata["nbgrader"].get("checksum") or nbgrader_checksum(c)]
                       for c in nb.cells if is_test_cell(c) and grade_id(c)],
    }
    nbformat.validate(nb)
    nbformat.write(nb, release)


def _refuse_warnings_made_errors(source: Path, name: str) -> None:
    """ValueError naming each test cell of ``source`` that turns warnings into errors
    (:func:`warnings_made_errors`): warnings never cost points, so no test may do that."""
    import nbformat

    nb = nbformat.read(source, as_version=4)
    lines = [f"  {grade_id(cell) or f'cell {i + 1}'}, {problem}"
             for i, cell in enumerate(nb.cells) if is_test_cell(cell)
             for problem in warnings_made_errors(cell_source(cell))]
    if lines:
        raise ValueError(f"solutions/{name}/{name}.ipynb has test cells that turn warnings into "
                         "errors (tests judge values: check the values instead, e.g. "
                         "np.isfinite and the expected number):\n" + "\n".join(lines))


def _refuse_bad_id_cell(source: Path, name: str) -> None:
    """ValueError naming ``source`` when its id cell or variants cannot be released
    (:func:`id_cell_problem`)."""
    import nbformat

    nb = nbformat.read(source, as_version=4)
    problem = id_cell_problem([dict(c) for c in nb.cells], name,
                              f"solutions/{name}/{source.name}", nb.metadata)
    if problem:
        raise ValueError(problem)


def release(names: Iterable[str] | None = None, root: Path | str | None = None, check: bool = True,
            quiet: bool = False, timeout: float | None = None,
            budget: float | None = None) -> list[str]:
    """Regenerate ``exercises/NAME`` from ``solutions/NAME`` with nbgrader.

    A test cell that turns warnings into errors is refused (ValueError; see
    :func:`warnings_made_errors`), and so is a notebook whose id cell or variants cannot be
    released (:func:`id_cell_problem`), before anything runs. With ``check`` (the default)
    each solution notebook is first executed (``timeout`` seconds per cell, default the
    assignment's limit; ``budget`` in all) and must pass every one of its own tests; otherwise
    nothing is generated and ``RuntimeError`` says which failed. Each release notebook then
    gets its generated first cell, its id cell and test-cell manifest
    (:func:`finish_release_notebook`).
    """
    root = Path(root) if root else find_course_root()
    names = list(names) if names else available_assignments(root)
    for name in names:
        source = root / "solutions" / name / f"{name}.ipynb"
        if not source.is_file():
            raise FileNotFoundError(f"no source notebook solutions/{name}/{name}.ipynb")
        _refuse_warnings_made_errors(source, name)
        _refuse_bad_id_cell(source, name)
        if check:
            errors = run_notebook(source, timeout=timeout, budget=budget)
            if errors:
                lines = "\n".join(f"  {gid}: {msg}" for gid, msg, _ in errors)
                raise RuntimeError(
                    f"solutions/{name}/{name}.ipynb does not pass its own tests:\n{lines}")
        with tempfile.TemporaryDirectory(prefix="mlcourse-db-") as tmp:
            db = Path(tmp, GRADEBOOK).as_posix()
            cmd = [sys.executable, "-m", "nbgrader", "generate_assignment", name, "--force",
                   f"--CourseDirectory.root={root}", f"--CourseDirectory.db_url=sqlite:///{db}"]
            # nbgrader runs `alembic` from PATH: put this environment's scripts first.
            scripts = Path(sys.executable).parent
            env = dict(os.environ, PATH=f"{scripts}{os.pathsep}{os.environ.get('PATH', '')}")
            proc = subprocess.run(cmd, cwd=root, capture_output=True, text=True, env=env)
        if proc.returncode != 0:
            raise RuntimeError(
                f"nbgrader generate_assignment {name} failed:\n{proc.stderr[-3000:]}")
        for notebook in sorted((root / "exercises" / name).glob("*.ipynb")):
            origin = root / "solutions" / name / notebook.name
            if origin.is_file():
                finish_release_notebook(notebook, origin, name)
        if not quiet:
            print(f"released exercises/{name}/")
    return names
