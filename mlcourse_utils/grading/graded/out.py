"""The one owner of a graded folder (OUT): every file's name and path, each file read and written.

nbgrader's ``CourseDirectory`` is the model: one object knows every path of the folder and no
other module spells a file name (``tests/grading/graded/test_out.py`` fails when one does).
:class:`OutFolder` gives each path and reads or writes each file, handing the contents to the
module that knows them: :mod:`.results` (the grade files, the grader's record), :mod:`.overrides`
(a teaching assistant's overrides), :mod:`.late` (the late penalties of the last export),
:mod:`.gradebook` (nbgrader's database); :mod:`.folder` reads the whole folder through it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..._files import write_text
from ...course import NBGRADER_CONFIG_FILE
from . import late, overrides, results
from .gradebook import gradebook_id
from .model import GradedFolder

if TYPE_CHECKING:
    from ..intake.submissions import Submission
    from ..notebook import Assignment
    from .results import GradeResult

#: The total per student (:func:`.results.write_csvs`).
GRADES = "grades.csv"
#: The points per student and task.
TASK_SCORES = "task_scores.csv"
#: The grader's record: every student's full result, the defences, figures of the run.
RESULTS = "results.json"
#: Each student's submission time and where it came from (:meth:`.Submission.timestamp`).
TIMESTAMPS = "timestamps.json"
#: nbgrader's gradebook (:mod:`.gradebook`).
GRADEBOOK = "gradebook.db"
#: The record of a teaching assistant's overrides in force (:mod:`.overrides`).
OVERRIDES = "overrides.csv"
#: The late penalties of the last export (:mod:`.late`).
LATE = "late.json"
#: Who each student is in the LMS, when SUBMISSIONS was its download (:mod:`.collect`).
INTAKE = "intake.json"
#: The feedback pages, ``<student>.html``.
FEEDBACK = "feedback"
#: The manual-grading pages and CSVs, ``<grade_id>.html`` and ``<grade_id>.csv``.
MANUAL = "manual"
#: nbgrader's copies of the submissions, ``<gradebook id>/<assignment>/<notebook>``.
AUTOGRADED = "autograded"
#: A teaching assistant's work moved aside by ``grade --force``, ``<UTC time>/``.
KEPT = "kept"
#: Where a manually graded cell's page is, relative to the folder (the instructors' page
#: links it).
MANUAL_PAGE = MANUAL + "/{grade_id}.html"
#: The files whose presence makes a folder a graded one.
GRADE_FILES = (GRADES, TASK_SCORES, RESULTS)
#: Files of each kind the folder holds, relative to it (asked about by :mod:`.privacy`).
PROBES = (GRADES, f"{FEEDBACK}/student.html", f"{AUTOGRADED}/student/notebook.ipynb", GRADEBOOK)


class OutFolder:
    """A graded folder (OUT): the path of each of its files, and each file read and written."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)

    def __repr__(self) -> str:
        return f"OutFolder({str(self.path)!r})"

    # -------------------------------------------------------------- paths

    @property
    def grades(self) -> Path:
        return self.path / GRADES

    @property
    def task_scores(self) -> Path:
        return self.path / TASK_SCORES

    @property
    def results(self) -> Path:
        return self.path / RESULTS

    @property
    def timestamps(self) -> Path:
        return self.path / TIMESTAMPS

    @property
    def gradebook(self) -> Path:
        return self.path / GRADEBOOK

    @property
    def overrides(self) -> Path:
        return self.path / OVERRIDES

    @property
    def late(self) -> Path:
        return self.path / LATE

    @property
    def intake(self) -> Path:
        return self.path / INTAKE

    @property
    def nbgrader_config(self) -> Path:
        return self.path / NBGRADER_CONFIG_FILE

    @property
    def feedback(self) -> Path:
        return self.path / FEEDBACK

    @property
    def manual(self) -> Path:
        return self.path / MANUAL

    @property
    def autograded(self) -> Path:
        return self.path / AUTOGRADED

    @property
    def kept(self) -> Path:
        return self.path / KEPT

    def feedback_page(self, student: str) -> Path:
        return self.feedback / f"{student}.html"

    def manual_page(self, grade_id: str) -> Path:
        return self.path / MANUAL_PAGE.format(grade_id=grade_id)

    def manual_csv(self, grade_id: str) -> Path:
        return self.manual / f"{grade_id}.csv"

    def manual_csvs(self) -> list[Path]:
        """The manual-grading CSVs there are, sorted."""
        return sorted(self.manual.glob("*.csv"))

    def autograded_copy(self, student: str, assignment: str, notebook: str) -> Path:
        """Where nbgrader finds ``student``'s submitted notebook (the grader's copy)."""
        return self.autograded / gradebook_id(student) / assignment / notebook

    def is_graded(self) -> bool:
        """Whether the folder holds one of the grade files (:data:`GRADE_FILES`)."""
        return any((self.path / name).is_file() for name in GRADE_FILES)

    # -------------------------------------------------------------- the grade files

    def write_csvs(self, found: Mapping[str, GradeResult], assignment: Assignment) -> None:
        """The grade files: a row per student, and per student and task."""
        results.write_csvs(found, assignment, self.grades, self.task_scores)

    def write_results(self, found: Mapping[str, GradeResult], assignment: Assignment,
                      defences: Mapping[str, bool] | None = None,
                      run: Mapping[str, Any] | None = None) -> None:
        """The grader's record (:func:`.results.results_json`)."""
        write_text(self.results, results.results_json(found, assignment, defences, run))

    def read_results(self) -> GradedFolder:
        """The grader's record read back, strictly: the one reader of it (ValueError when it is
        missing or not ours)."""
        try:
            name, found, defences, run = results.parse_results(
                json.loads(self.results.read_text(encoding="utf-8")))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"{self.results} is not a results file written by `mlcourse grade` "
                             f"({exc})") from None
        maxima = overrides.task_maxima(found)
        return GradedFolder(name, self.path, sum(maxima.values()), list(maxima), maxima,
                            results=found, defences=defences, run=run)

    # -------------------------------------------------------------- what the folder keeps

    def read_record(self) -> dict[tuple[str, str], overrides.Override]:
        """The overrides in force (:func:`.overrides.read_record`; empty when none)."""
        return overrides.read_record(self.overrides) if self.overrides.is_file() else {}

    def write_record(self, record: Mapping[tuple[str, str], overrides.Override],
                     found: Mapping[str, GradeResult], maxima: Mapping[str, float]) -> Path:
        """Write the record of overrides; returns its path."""
        overrides.write_record(self.overrides, record, found, maxima)
        return self.overrides

    def read_late(self) -> dict[str, dict[str, Any]]:
        """The late penalties of the last export (empty when none, or unreadable)."""
        return late.read_late_notes(self.late)

    def write_late(self, cells: Mapping[str, late.Cell], max_score: float) -> None:
        """Record the late students of one export (replacing the last)."""
        late.write_late_notes(self.late, cells, max_score)

    # -------------------------------------------------------------- submissions and times

    def write_timestamps(self, submissions: Mapping[str, Submission]) -> None:
        """Each submission's time: ``{student: Submission.timestamp()}``, sorted (read by
        ``mlcourse export``'s late policy)."""
        data = {s: sub.timestamp() for s, sub in sorted(submissions.items())}
        write_text(self.timestamps, json.dumps(data, indent=1, ensure_ascii=False))

    def read_timestamps(self) -> dict[str, Any] | None:
        """The submission times as written (None when there are none; ValueError when the file
        is not JSON)."""
        if not self.timestamps.is_file():
            return None
        return json.loads(self.timestamps.read_text(encoding="utf-8"))

    def merge_timestamps(self, shards: Iterable[OutFolder]) -> None:
        """Join the shards' submission times into this folder (``mlcourse grade-merge``)."""
        data: dict[str, Any] = {}
        for shard in shards:
            data.update(shard.read_timestamps() or {})
        write_text(self.timestamps,
                   json.dumps(dict(sorted(data.items())), indent=1, ensure_ascii=False))

    def write_intake(self, data: Mapping[str, Any]) -> None:
        """How SUBMISSIONS met the roster, and who each student is in the LMS."""
        write_text(self.intake, json.dumps(data, indent=1, ensure_ascii=False))

    def read_intake(self) -> Any:
        """What :meth:`write_intake` wrote (None when there is none; ValueError when it is not
        JSON)."""
        if not self.intake.is_file():
            return None
        return json.loads(self.intake.read_text(encoding="utf-8"))

    def read_lms_entries(self) -> dict[str, dict[str, Any]]:
        """``{graded id: who they were in the LMS's download}`` (empty when the folder was
        graded from student folders, or has no readable record of it)."""
        from ..intake.collect import lms_entries

        try:
            return lms_entries(self.read_intake())
        except (OSError, ValueError):
            return {}
