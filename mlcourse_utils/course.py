"""The course's catalogue: its assignments in order, their reference modules and the course folder.

Everything that knows which assignments the course has, which module of ``mlcourse_utils`` each
one reimplements, where the course folder is or what the book's configuration says, asks here:

* :data:`ASSIGNMENTS` — the assignments, in course order; :func:`course_order` sorts names by it;
* :data:`REFERENCE_MODULES` — assignment → the module of ``mlcourse_utils`` whose functions its
  tasks reimplement (:func:`reference_module_name`: an assignment missing from the table is an
  error, never a silent "no reference");
* :data:`ROOT` — the repository of this package (an editable install), :func:`find_course_root`
  — the course folder a command works in (``--course DIR``, the environment variable
  :data:`COURSE_ENV`, the working folder or one above it, else :data:`ROOT`);
* :data:`DEFAULT_TIMEOUT` — the time limit of one cell of an assignment that sets none, and
  :data:`BUDGET_FACTOR`, from which the limits of a whole run are derived (an assignment's own
  limit is its notebook's ``metadata.mlcourse.timeout``, read by
  :func:`mlcourse_utils.grading.notebook.time_limit`);
* :func:`student_wheel_name` — the file name of the student wheel, which the book builds
  (:mod:`mlcourse_utils.book.wheel`) and a release notebook's header names
  (:mod:`mlcourse_utils.grading.engine.release`);
* the book's two YAML files, ``_toc.yml`` and ``_config.yml``, are read by
  :mod:`mlcourse_utils.config` (YAML needs the ``[book]`` or ``[grading]`` install; this
  module is part of what a student's ``mlcourse check`` runs, and of the student wheel).
"""

from __future__ import annotations

import os
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
#: student's grading takes more (:func:`mlcourse_utils.grading.engine.session.grading_budget`).
BUDGET_FACTOR = 10
#: Megabytes of memory one student's sandbox may use, shared memory included (``mlcourse grade
#: --memory``).
DEFAULT_MEMORY_MB = 4096

#: The repository this package lives in (the course folder of an editable install).
ROOT = Path(__file__).resolve().parents[1]

#: The environment variable naming the course folder (``mlcourse ... --course DIR`` sets it, so
#: that everything the command runs, the hidden tests included, finds the same folder).
COURSE_ENV = "MLCOURSE_COURSE"

#: nbgrader's configuration file, in the course folder (and in every graded folder,
#: :mod:`.grading.graded.out`).
NBGRADER_CONFIG_FILE = "nbgrader_config.py"

#: The student wheel's tag (PEP 427): pure Python, any Python 3, any platform.
WHEEL_TAG = "py3-none-any"

#: What a course folder holds, as the messages say it.
_COURSE_FILES = f"{NBGRADER_CONFIG_FILE} and solutions/"


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


def student_version(version: str | None = None) -> str:
    """The student wheel's version: the package's (``__version__``) with ``+student``."""
    if version is None:
        from . import __version__ as version
    return f"{version}+student"


def student_wheel_name(version: str | None = None) -> str:
    """The student wheel's file name, e.g. ``mlcourse_utils-0.1.0+student-py3-none-any.whl``."""
    return f"mlcourse_utils-{student_version(version)}-{WHEEL_TAG}.whl"


def is_course_root(folder: Path | str) -> bool:
    """Whether ``folder`` is a course folder: it holds ``nbgrader_config.py`` and ``solutions/``."""
    folder = Path(folder)
    return (folder / NBGRADER_CONFIG_FILE).is_file() and (folder / "solutions").is_dir()


def course_folder(folder: Path | str, given_by: str = "--course") -> Path:
    """``folder`` resolved, when it is a course folder; else FileNotFoundError saying what
    is missing (``given_by`` names where the folder came from, for the message)."""
    path = Path(folder).expanduser().resolve()
    if not path.is_dir():
        raise FileNotFoundError(f"{given_by} {folder}: no such folder")
    if not is_course_root(path):
        raise FileNotFoundError(f"{given_by} {folder} is not a course folder (it has no "
                                f"{_COURSE_FILES}): name the folder of the course repository")
    return path


def find_course_root(start: Path | str | None = None) -> Path:
    """The course folder a command works in.

    Without ``start``: the folder named by the environment variable :data:`COURSE_ENV`
    (``--course DIR`` sets it; it must be a course folder), else the first course folder at or
    above the working folder. With ``start``: the first course folder at or above it. Else
    :data:`ROOT` when it is one (an editable install). FileNotFoundError says how to name the
    course.
    """
    if start is None and os.environ.get(COURSE_ENV):
        return course_folder(os.environ[COURSE_ENV], given_by=COURSE_ENV)
    here = Path(start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if is_course_root(folder):
            return folder
    if is_course_root(ROOT):
        return ROOT
    raise FileNotFoundError(f"no course folder (with {_COURSE_FILES}) at or above {here}: run "
                            "the command in the course repository, or name it with --course DIR "
                            f"(or the environment variable {COURSE_ENV})")
