"""The instructor edition's page for instructors, written from the solution notebooks.

What each assignment asks and how it is graded is read from ``solutions/NAME/NAME.ipynb`` every
time the instructor edition is built (:mod:`.editions` puts the page in place of
``book/instructors.md``, which the student edition shows as a short pointer): the autograded
tasks with their points (from the test cells' metadata), which tasks go beyond the chapter (no
function of that name in the assignment's reference module), the cells graded by hand with
their points, what each asks (the heading of the question before it) and its key result
(:func:`~mlcourse_utils.grading.notebook.key_result_text`), and the manual-grading page
``mlcourse grade`` writes for it, and whether its students get their own variants (the
notebook's ``metadata.mlcourse.variants``) with, per question that varies, its parameters'
choices and its number of distinct variants (:data:`~mlcourse_utils.grading.variants.QUESTIONS`).
The prose around them is the template ``templates/instructors.md``. So the page cannot fall
behind the notebooks.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib.util
import re
from pathlib import Path

from ..course import ROOT, course_order, reference_module_name
from ..grading.graded.out import MANUAL_PAGE as OUT_MANUAL_PAGE
from ..grading.notebook import (
    cell_source,
    grade_id,
    is_manual_cell,
    key_result_text,
    key_results,
    load_assignment,
    nbgrader_meta,
    read_notebook_cells,
)
from ..grading.variants import ID_LINE, ID_LINE_OFF, ID_NAME, QUESTIONS

#: The page this module writes (a docname of the book).
DOCNAME = "book/instructors"
TEMPLATES = Path(__file__).with_name("templates")
TEMPLATE = "instructors.md"
#: Where ``mlcourse grade`` writes a manually graded cell's page, in the graded folder.
MANUAL_PAGE = OUT_MANUAL_PAGE

_HEADING = re.compile(r"^#{1,6}\s+(?:\d+\.\s+)?(?P<title>.+?)\s*$", re.M)
_BY_HAND = re.compile(r"\s*\(graded by hand\)\s*:?\s*")


@dataclasses.dataclass
class Task:
    """An autograded task: the function students write."""

    name: str
    points: float
    beyond: bool  # beyond the chapter: its reference module has no function of this name


@dataclasses.dataclass
class HandGraded:
    """A cell graded by hand: a derivation or an interpretation."""

    grade_id: str
    points: float
    kind: str                 # "derivation", "interpretation" or "answer"
    title: str                # what it asks: the heading of the question before it
    key_results: list[str]    # the equations a derivation ends with (the model answer's)
    key_result: str           # the model answer's key-result paragraph, on one line

    @property
    def page(self) -> str:
        return MANUAL_PAGE.format(grade_id=self.grade_id)


@dataclasses.dataclass
class Varying:
    """A question graded by hand whose numbers vary per student (one entry of
    :data:`~mlcourse_utils.grading.variants.QUESTIONS`)."""

    grade_id: str
    section: str              # the notebook's section that asks it
    params: dict[str, tuple]  # parameter -> its choices (the first: the default variant's)
    count: int                # distinct variants (Question.count: the product of the choices)


@dataclasses.dataclass
class AssignmentPlan:
    """What one assignment asks and how it is graded."""

    name: str
    chapter: str | None       # the docname of its chapter, e.g. "book/mle"
    tasks: list[Task]
    hand_graded: list[HandGraded]
    #: whether students get their own variants (the notebook's metadata.mlcourse.variants)
    variants: bool = True
    #: the questions that vary, in the order of QUESTIONS
    varying: list[Varying] = dataclasses.field(default_factory=list)

    @property
    def autograded(self) -> float:
        return sum(t.points for t in self.tasks)

    @property
    def beyond_points(self) -> float:
        return sum(t.points for t in self.tasks if t.beyond)

    @property
    def manual_points(self) -> float:
        return sum(h.points for h in self.hand_graded)

    @property
    def total(self) -> float:
        return self.autograded + self.manual_points


def _module_functions(module: str) -> set[str]:
    """Top-level function and class names of ``mlcourse_utils.<module>``, read without
    importing it."""
    spec = importlib.util.find_spec(f"mlcourse_utils.{module}")
    if spec is None or spec.origin is None:
        return set()
    tree = ast.parse(Path(spec.origin).read_text(encoding="utf-8"))
    return {node.name for node in tree.body
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}


def _kind(gid: str) -> str:
    for kind in ("derivation", "interpretation"):
        if gid.startswith(kind):
            return kind
    return "answer"


def _title(heading: str) -> str:
    """What a question heading says it asks: ``8. Derivations (graded by hand): the two
    extensions`` gives ``the two extensions``; a heading without a subtitle is kept whole."""
    head, _, subtitle = _BY_HAND.sub(": ", heading, count=1).partition(": ")
    return (subtitle or head).strip().rstrip(":")


def _hand_graded(cells: list[dict]) -> list[HandGraded]:
    found, heading = [], ""
    for cell in cells:
        source = cell_source(cell)
        if is_manual_cell(cell):
            gid = grade_id(cell) or ""
            found.append(HandGraded(gid, float(nbgrader_meta(cell).get("points", 0) or 0),
                                    _kind(gid), _title(heading) or gid, key_results(source),
                                    key_result_text(source)))
        elif cell.get("cell_type") == "markdown":
            headings = _HEADING.findall(source)
            if headings:
                heading = headings[-1]
    return found


def assignment_plan(name: str, root: Path | str = ROOT) -> AssignmentPlan:
    """The plan of assignment ``name`` from ``root/solutions/NAME/NAME.ipynb``."""
    root = Path(root)
    assignment = load_assignment(name, root)
    module = reference_module_name(name)
    defined = _module_functions(module)
    tasks = [Task(t, assignment.task_max(t), t not in defined) for t in assignment.tasks]
    cells = read_notebook_cells((root / "solutions" / name / assignment.notebook).read_bytes())
    chapter = f"book/{module}" if (root / "book" / f"{module}.md").is_file() else None
    varying = [Varying(gid, q.section, dict(q.params), q.count)
               for gid, q in QUESTIONS.get(name, {}).items()]
    return AssignmentPlan(name, chapter, tasks, _hand_graded(cells), assignment.variants,
                          varying)


def sources(root: Path | str = ROOT) -> list[Path]:
    """The solution notebooks the page is written from (``solutions/NAME/NAME.ipynb``)."""
    return sorted(p for p in (Path(root) / "solutions").glob("*/*.ipynb")
                  if p.stem == p.parent.name)


def dependencies(root: Path | str = ROOT) -> list[Path]:
    """What the page is written from: the solution notebooks, the template and the table of
    the questions that vary (``grading/variants.py``); a change to any rewrites the page."""
    from ..grading import variants

    return [*sources(root), TEMPLATES / TEMPLATE, Path(variants.__file__)]


def assignment_plans(root: Path | str = ROOT) -> list[AssignmentPlan]:
    """Every assignment's plan, in course order."""
    names = course_order(p.stem for p in sources(root))
    return [assignment_plan(name, root) for name in names]


def _points(value: float) -> str:
    return f"{value:g}"


def code_of(line: str) -> str:
    """A line of Python without its comment (the id cell's lines have no ``#`` in their code)."""
    return line.partition("#")[0].strip()


def choices_text(choices: tuple) -> str:
    """A parameter's choices in Markdown, in order, each as code: a run of five or more
    consecutive whole numbers is shortened (``0``, ``1``, …, ``30``)."""
    if len(choices) >= 5 and all(type(c) is int for c in choices) and \
            list(choices) == list(range(choices[0], choices[0] + len(choices))):
        shown = [repr(choices[0]), repr(choices[1]), "…", repr(choices[-1])]
    else:
        shown = [repr(c) for c in choices]
    return ", ".join(s if s == "…" else f"`{s}`".replace("|", "\\|") for s in shown)


def page(root: Path | str = ROOT) -> str:
    """The page for instructors (MyST Markdown), from the template and the notebooks."""
    import jinja2

    from .build import SOLUTION_PAGES

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=False,
                             trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
                             undefined=jinja2.StrictUndefined)
    env.filters["points"] = _points
    env.filters["choices"] = choices_text
    plans = assignment_plans(root)
    return env.get_template(TEMPLATE).render(
        assignments=plans, manual_page=MANUAL_PAGE, solution_pages=SOLUTION_PAGES.as_posix(),
        beyond_half=all(2 * p.beyond_points >= p.autograded for p in plans),
        id_name=ID_NAME, id_line=code_of(ID_LINE), id_line_off=code_of(ID_LINE_OFF))
