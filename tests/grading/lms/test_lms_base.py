"""The LMS interface (grading/lms/base.py): a third LMS is one module, and nothing else changes.

The test defines a minimal Blackboard as its own module would, from the interface alone, and
registers it; then ``mlcourse grade``'s intake reads a small download named as Blackboard Learn
names the files of its "Download assignment" (``ASSIGNMENT_username_attempt_YYYY-MM-DD-HH-MM-SS_
FILE``), ``mlcourse export --format blackboard`` writes its grade file and the feedback zip is
named for it, with no change to intake, export or the command line. The graded folder is
written by hand (conftest's ``write_graded``): no grading runs.
"""

from __future__ import annotations

import csv
import re
import zipfile
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

import assignment_support as sup
from mlcourse_utils import cli
from mlcourse_utils.grading import lms
from mlcourse_utils.grading.engine.batch import write_intake
from mlcourse_utils.grading.intake.collect import collect, layouts
from mlcourse_utils.grading.intake.roster import Roster, read_roster
from mlcourse_utils.grading.intake.submissions import write_timestamps
from mlcourse_utils.grading.lms import export
from mlcourse_utils.grading.lms.base import DownloadName, GradeTable, Lms, csv_cells, folded_words
from mlcourse_utils.grading.notebook import load_assignment

ASSIGNMENT = load_assignment("mle", sup.ROOT)

#: Blackboard Learn's download: ``mle_alice_attempt_2026-03-01-12-30-45_mle.ipynb``.
BLACKBOARD_FILE = re.compile(r"^(?P<assignment>[^_/]+)_(?P<user>[^_/]+)_attempt_"
                             r"(?P<day>\d{4}-\d\d-\d\d)-(?P<h>\d\d)-(?P<m>\d\d)-(?P<s>\d\d)"
                             r"(?:_(?P<file>[^/]+))?$", re.ASCII)


class Blackboard(Lms):
    """A minimal third LMS, as its module ``lms/blackboard.py`` would be: the abstract methods
    and the class attributes, nothing more."""

    name = "blackboard"
    label = "Blackboard"
    number_name = "username"
    number_column = "Username"
    layout = "a Blackboard download (files named NAME_username_attempt_TIME_NAME.ipynb)"
    roster_export = "Blackboard's grade centre"
    roster_columns = "Blackboard's Username"
    feedback_upload = "Blackboard: Grade Centre, Upload feedback files"

    def parse(self, parts: Sequence[str]) -> DownloadName | None:
        m = BLACKBOARD_FILE.match(parts[-1])
        if m is None:
            return None
        return DownloadName(self.name, m["user"], m["user"], file=m["file"] or "",
                            time=f"{m['day']}T{m['h']}:{m['m']}:{m['s']}")

    def roster_number(self, student: Any) -> str:
        return student.student_id.strip()  # the roster's "username" column

    def name_keys(self, roster_name: str) -> set[str]:
        return {folded_words(roster_name)}

    def download_name_key(self, name: str) -> str:
        return folded_words(name)

    def grade_file_ids(self, student: Any, options: Mapping[str, Any]) -> tuple[str, ...]:
        return (student.student_id,)

    def ids_wanted(self, options: Mapping[str, Any]) -> str:
        return "Username"

    def write_grades(self, writer: Any, roster: Sequence[Any], table: GradeTable,
                     options: Mapping[str, Any]) -> None:
        writer.writerow(["Username", "Name", *table.headers])
        for student, scores in zip(roster, table.scores, strict=True):
            writer.writerow(csv_cells([student.student_id, student.name]) + scores)

    def import_hint(self, options: Mapping[str, Any]) -> str:
        return "Blackboard, Grade Centre, Work Offline, Upload"

    def feedback_file_name(self, entry: Mapping[str, Any], page: str) -> str:
        return f"{entry['user_id']}/{page}"


@pytest.fixture
def blackboard():
    """Blackboard registered for one test (and forgotten after it)."""
    yield lms.register(Blackboard())
    lms.unregister("blackboard")


ROSTER = "username,name,email\nalice,Alice Smith,alice@uni.example\nbob,Bob Brown,b@x\n" \
         "carol,Carol Chen,c@x\n"


def _download(folder):
    """A download of three files: alice's and bob's notebooks and bob's receipt."""
    folder.mkdir()
    notebook = (sup.ROOT / "exercises" / "mle" / "mle.ipynb").read_bytes()
    (folder / "mle_alice_attempt_2026-03-01-12-30-45_mle.ipynb").write_bytes(notebook)
    (folder / "mle_bob_attempt_2026-03-03-09-00-00_mle.ipynb").write_bytes(notebook)
    (folder / "mle_bob_attempt_2026-03-03-09-00-00.txt").write_text("receipt")
    return folder


def test_a_third_lms_is_read_graded_exported_and_chosen_on_the_command_line(
        blackboard, tmp_path, write_graded, capsys):
    assert lms.names() == ["canvas", "moodle", "blackboard"] and "Blackboard" in layouts()
    (tmp_path / "roster.csv").write_text(ROSTER)
    roster = Roster(read_roster(tmp_path / "roster.csv"))
    intake = collect("mle", _download(tmp_path / "download"), "mle.ipynb", roster)
    # Who each file is, read by hand from the names: alice and bob, by their usernames.
    assert intake.layout == "blackboard" and set(intake.found) == {"alice", "bob"}
    assert all(s.submitted for s in intake.found.values())
    assert intake.found["alice"].time == "2026-03-01T12:30:45"  # the attempt's time
    assert intake.lms["bob"].user_id == "bob" and intake.lms["bob"].roster
    assert intake.summary("mle.ipynb") == (
        "intake: Blackboard download: 2 of 3 roster students matched (by Blackboard username); "
        "late: not marked in Blackboard's download (the export decides from the times it "
        "records and --config); 0 resubmissions taken; 1 roster student without a submission "
        "('Carol Chen'); 0 submitters not on the roster.")
    graded = write_graded(tmp_path / "graded", {"alice": 1.0, "bob": 0.5})
    write_intake(graded, intake, list(intake.found))
    write_timestamps(graded, intake.found)

    status = cli.main(["export", str(graded), "--format", "blackboard", "--roster",
                       str(tmp_path / "roster.csv"), "--out", str(tmp_path / "bb.csv")])
    assert status == 0
    assert "import: Blackboard, Grade Centre, Work Offline, Upload" in capsys.readouterr().out
    with open(tmp_path / "bb.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == ["Username", "Name", "mle"]
    body = {r[0]: r for r in rows[1:]}
    assert float(body["alice"][2]) == ASSIGNMENT.max_score
    assert float(body["bob"][2]) == pytest.approx(ASSIGNMENT.max_score / 2, abs=0.005)
    assert body["carol"][2] == ""  # no submission: blank (--missing blank)

    done = export.write_feedback_zip(graded, "blackboard", tmp_path / "fb.zip")
    assert done.files == {"alice": "alice/feedback-mle.html", "bob": "bob/feedback-mle.html"}
    with zipfile.ZipFile(tmp_path / "fb.zip") as z:
        assert z.read("bob/feedback-mle.html") == (graded / "feedback" / "bob.html").read_bytes()


def test_the_command_line_offers_exactly_the_registered_lmses(blackboard):
    sub = next(a for a in cli.make_parser()._actions if a.dest == "command").choices
    for command, option in (("export", "--format"), ("feedback", "--lms")):
        (action,) = [a for a in sub[command]._actions if option in a.option_strings]
        assert list(action.choices) == ["canvas", "moodle", "blackboard"], command
    lms.unregister("blackboard")
    assert "blackboard" not in cli.make_parser().format_help()
    with pytest.raises(ValueError, match="--format must be one of canvas, moodle, not 'x'"):
        lms.get("x")


def test_an_lms_leaves_out_what_it_does_not_define():
    """Without the abstract methods there is no LMS; the hooks have defaults."""
    class Incomplete(Lms):
        name = "incomplete"

    with pytest.raises(TypeError, match="abstract"):
        Incomplete()
    bb = Blackboard()
    assert bb.column("mle", {"blackboard_column": "MLE"}, {}) == "MLE"
    assert bb.column("mle", {}, {}) == "mle"
    assert bb.number_cell("alice") == "Username alice"
    assert not bb.student_folder("mle_alice_attempt_2026-03-01-12-30-45")
    assert bb.feedback_refusal({}) is None and bb.feedback_name("A B") == "A B"
