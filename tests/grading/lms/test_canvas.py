"""Canvas (grading/lms/canvas.py): its download's names, its grade file and its comment files.

As Canvas documents them: its bulk download names a file ``login[_late]_userid_attachmentid_
filename`` (nbgrader's ``zip_collect`` reads the same names); its gradebook CSV names an
assignment's column ``Title (assignment id)`` (a header without the id makes a new column on
import) and finds a student by ``ID``, ``SIS User ID`` or ``SIS Login ID``; its "Upload
Submission Comments" reads the first two all-digit parts of a file name split at ``_`` as user
id and attachment id, as in its download. The graded folders are written by hand (conftest's
``write_graded``): no grading runs.
"""

from __future__ import annotations

import re
import stat
import zipfile

import pytest

import assignment_support as sup
from mlcourse_utils.grading import lms
from mlcourse_utils.grading.intake.roster import Student
from mlcourse_utils.grading.lms import export
from mlcourse_utils.grading.lms.canvas import Canvas, login
from mlcourse_utils.grading.notebook import load_assignment

ASSIGNMENT = load_assignment("mle", sup.ROOT)
ROSTER = sup.CANVAS_ROSTER



# ------------------------------------------------------------------ its download's names


def test_canvas_is_registered_under_its_name():
    assert isinstance(lms.get("canvas"), Canvas) and lms.get("canvas").label == "Canvas"


def test_a_download_name_gives_login_user_attachment_late_and_file():
    """``smithjonesalice_late_101_9001_mle.ipynb``, read by hand: login smithjonesalice,
    marked late, user 101, attachment 9001, file mle.ipynb."""
    found = lms.get("canvas").parse(["smithjonesalice_late_101_9001_mle.ipynb"])
    assert (found.lms, found.name, found.late, found.user_id, found.attachment_id,
            found.file) == ("canvas", "smithjonesalice", True, "101", "9001", "mle.ipynb")
    on_time = lms.get("canvas").parse(["sub", "brownbob_102_9002_mle-1.ipynb"])
    assert (on_time.late, on_time.user_id, on_time.file) == (False, "102", "mle-1.ipynb")


@pytest.mark.parametrize("name", ["mle.ipynb", "alice_mle.ipynb", "alice_12_mle.ipynb",
                                  "alice_x1_2_mle.ipynb"])
def test_other_names_are_not_canvas_files(name):
    assert lms.get("canvas").parse([name]) is None
    assert not lms.get("canvas").student_folder(name)


def test_canvas_login_as_canvas_writes_it():
    assert login("Smith-Jones, Alice") == "smithjonesalice"
    assert login("Müller, Zoë") == "mullerzoe"
    assert login("Müller, Jürgen") == "mullerjurgen"


def test_a_roster_row_is_known_by_its_id_and_its_login():
    canvas = lms.get("canvas")
    alice = Student("Smith-Jones, Alice", "alice", lms_id=" 101 ")
    assert canvas.roster_number(alice) == "101"
    assert canvas.name_keys(alice.name) == {canvas.download_name_key("smithjonesalice")}
    assert canvas.number_cell("999") == "ID 999"


# ------------------------------------------------------------------ its grade file

def test_canvas_header_names_the_assignment_with_its_id(tmp_path, write_graded):
    rows, _ = sup.export_rows(write_graded, tmp_path, "canvas",
                      canvas_assignment="Maximum likelihood (4711)")
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section",
                       "Maximum likelihood (4711)"]
    # Points possible: autograded and graded by hand (none graded yet: they count 0), the
    # maximum every feedback page shows.
    manual = sum(p for _, p in ASSIGNMENT.manual)
    assert rows[1][0].strip() == "Points Possible"
    assert float(rows[1][5]) == ASSIGNMENT.max_score + manual
    body = {r[0]: r for r in rows[2:]}
    assert float(body["Smith-Jones, Alice"][5]) == ASSIGNMENT.max_score
    assert float(body["Brown, Bob"][5]) == pytest.approx(ASSIGNMENT.max_score / 2, abs=0.005)
    assert body["Brown, Bob"][1:4] == ["102", "S-2", "bob"]


@pytest.mark.parametrize("column", [None, "Maximum likelihood", "Maximum likelihood (abc)",
                                    "(4711)"])
def test_a_canvas_column_without_its_id_is_refused(tmp_path, write_graded, column):
    with pytest.raises(ValueError, match=r"--canvas-assignment 'Title \(1234\)'"):
        sup.export_rows(write_graded, tmp_path, "canvas", canvas_assignment=column)
    assert not (tmp_path / "canvas.csv").exists()


def test_the_column_may_come_from_the_configuration(tmp_path, write_graded):
    (tmp_path / "due.toml").write_text('[assignments.mle]\ncanvas_column = "MLE (99)"\n')
    rows, _ = sup.export_rows(write_graded, tmp_path, "canvas", config_path=tmp_path / "due.toml")
    assert rows[0][5] == "MLE (99)"


def test_missing_ids_are_an_error_naming_the_students(tmp_path, write_graded):
    roster = ROSTER + '"Nobody, Noid",,,,B,noid@uni.example\n'
    with pytest.raises(ValueError, match=r"1 student of the roster has no ID, SIS User ID or SIS "
                                         r"Login ID.*Nobody, Noid.*--allow-missing-ids"):
        sup.export_rows(write_graded, tmp_path, "canvas", roster, canvas_assignment="MLE (1)")
    rows, report = sup.export_rows(write_graded, tmp_path, "canvas", roster,
                                   canvas_assignment="MLE (1)", allow_missing_ids=True)
    assert report.unidentified == ["Nobody, Noid"] and len(rows) == 5


def _canvas_ids(name):
    """What Canvas reads from a file name: the first two all-digit parts split at _."""
    digits = [part for part in name.split("_") if re.fullmatch(r"\d+", part)]
    return tuple(digits[:2])


def test_feedback_zip_for_canvas(tmp_path, write_graded):
    intake = {"layout": "canvas", "students": {
        "alice": {"lms": "canvas", "name": "smithjonesalice", "user_id": "101",
                  "attachment_id": "9001", "late": False},
        "bob": {"lms": "canvas", "name": "brownbob", "user_id": "102",
                "attachment_id": "9002", "late": True}}}
    graded = write_graded(tmp_path / "graded", {"alice": 1.0, "bob": 0.5, "carol": 0.0},
                     intake=intake)
    done = export.write_feedback_zip(graded, "canvas", tmp_path / "fb.zip")
    with zipfile.ZipFile(tmp_path / "fb.zip") as z:
        infos = {i.filename: i for i in z.infolist()}
        assert set(infos) == set(done.files.values())
        for student, name in done.files.items():
            assert z.read(name) == (graded / "feedback" / f"{student}.html").read_bytes()
            assert stat.S_IMODE(infos[name].external_attr >> 16) == 0o644
    assert {s: _canvas_ids(n) for s, n in done.files.items()} == {
        "alice": ("101", "9001"), "bob": ("102", "9002")}
    assert all(n.endswith("feedback-mle.html") for n in done.files.values())
    assert "carol" in done.left_out and "not known to canvas" in done.left_out["carol"]


def test_canvas_needs_the_submitted_files_id(tmp_path, write_graded):
    """Canvas ignores an uploaded comment file without the id of a file of the submission, so a
    student known only from the roster (no download) is left out, with the reason."""
    graded = write_graded(tmp_path / "graded", {"alice": 1.0})
    (tmp_path / "roster.csv").write_text(ROSTER)
    done = export.write_feedback_zip(graded, "canvas", tmp_path / "fb.zip", tmp_path / "roster.csv")
    assert done.files == {} and "Canvas's download" in done.left_out["alice"]
    digits = {"name": "12345", "user_id": "7", "attachment_id": "8"}
    assert _canvas_ids(export.feedback_file_name("canvas", digits, "mle")) == ("7", "8")


def test_a_digit_login_is_not_read_as_the_user_id():
    """Canvas takes the first all-digit part for the user id: a login of digits gets an s."""
    name = lms.get("canvas").feedback_file_name(
        {"name": "12_34", "user_id": "7", "attachment_id": "8"}, "feedback-mle.html")
    assert name == "s1234_7_8_feedback-mle.html"
