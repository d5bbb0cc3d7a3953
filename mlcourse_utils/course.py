"""The course's catalogue: its assignments in order, their reference modules and the course folder.

Everything that knows which assignments the course has, which module of ``mlcourse_utils`` each
one reimplements, where the course folder is or what the book's configuration says, asks here:

* :data:`ASSIGNMENTS` — the assignments, in course order; :func:`course_order` sorts names by it;
* :data:`REFERENCE_MODULES` — assignment → the module of ``mlcourse_utils`` whose functions its
  tasks reimplement (:func:`reference_module_name`: an assignment missing from the table is an
  error, never a silent "no reference");
* :data:`ROOT` — the repository of this package (an editable install), :func:`find_course_root`
  — the course folder a command works in;
* :data:`DEFAULT_TIMEOUT` — the time limit of one cell of an assignment that sets none, and
  :data:`BUDGET_FACTOR`, from which the limits of a whole run are derived (an assignment's own
  limit is its notebook's ``metadata.mlcourse.timeout``, read by
  :func:`mlcourse_utils.grading.notebook.time_limit`);
* the book's two YAML files, ``_toc.yml`` and ``_config.yml``, are read by
  :mod:`mlcourse_utils.book.config` (YAML needs the ``[book]`` or ``[grading]`` install; this
  module is part of what a student's ``mlcourse check`` runs, and of the student wheel).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

#: The assignments, in course order (the order of the book's chapters).
ASSIGNMENTS = ("mle", "bayes", "naive_bayes", "gda", "logistic_regression",
               "information_theory", "ridge_lasso")

#: Assignment -> module of ``mlcourse_utils`` whose functions the tasks reimplement.
REFERENCE_MODULES = {
    "mle": "mle",
    "bayes": "bayes",
    "naive_bayes": "naive_bayes",
    "gda": "gda",
    "logistic_regression": "logistic",
    "information_theory": "information",
    "ridge_lasso": "regularization",
}

#: Seconds one cell (one test cell) may run, for every assignment whose source notebook sets no
#: limit of its own (``metadata.mlcourse.timeout``). `mlcourse check`, `grade` and `release` use
#: the assignment's limit unless ``--timeout`` says otherwise; the release header, the first line
#: of `mlcourse check` and the Getting started page state it.
DEFAULT_TIMEOUT = 120
#: A whole run of `mlcourse check` (kernel start and every cell) may take this many limits; a
#: student's grading takes more (:func:`mlcourse_utils.grading.session.grading_budget`).
BUDGET_FACTOR = 10

#: The repository this package lives in (the course folder of an editable install).
ROOT = Path(__file__).resolve().parents[1]


def course_order(names: Iterable[str]) -> list[str]:
    """``names`` sorted in course order; names the catalogue lacks come last, by name."""
    order = {name: i for i, name in enumerate(ASSIGNMENTS)}
    return sorted(names, key=lambda n: (order.get(n, len(order)), n))


def reference_module_name(assignment: str) -> str:
    """The module of ``mlcourse_utils`` that ``assignment`` reimplements (``"logistic"`` for
    ``"logistic_regression"``). ValueError for an assignment the catalogue does not list: a
    new assignment must be added to :data:`REFERENCE_MODULES`, else its copies of the reference
    code would go unnoticed."""
    if not isinstance(assignment, str):
        raise TypeError(f"assignment must be a str, not {type(assignment).__name__}")
    try:
        return REFERENCE_MODULES[assignment]
    except KeyError:
        raise ValueError(f"assignment {assignment!r} has no reference module: add it to "
                         "REFERENCE_MODULES in mlcourse_utils/course.py") from None


def find_course_root(start: Path | str | None = None) -> Path:
    """The folder holding ``nbgrader_config.py`` and ``solutions/`` (searched upward from
    ``start`` or the working directory; else :data:`ROOT` when it is such a folder)."""
    here = Path(start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "nbgrader_config.py").exists() and (folder / "solutions").is_dir():
            return folder
    if (ROOT / "solutions").is_dir():
        return ROOT
    raise FileNotFoundError("no course folder (with nbgrader_config.py and solutions/) found")
