"""Moodle (grading/lms/moodle.py): its download's names, its CSV import and its feedback files.

As Moodle documents them: its download puts a student's files in ``Full Name_12345_
assignsubmission_file_`` (a folder, without the last ``_`` since Moodle 4.1, or a prefix of the
file's name); its CSV import maps one column ("Map from") to a user field (e-mail, ID number or
username); its "Upload multiple feedback files in a zip" splits a path at ``_`` into at most
five parts and takes the participant number from the second, as in its download. The graded
folders are written by hand (conftest's ``write_graded``): no grading runs.
"""

from __future__ import annotations

import pytest

import assignment_support as sup
from mlcourse_utils.grading import lms
from mlcourse_utils.grading.intake.roster import Student
from mlcourse_utils.grading.lms import export
from mlcourse_utils.grading.lms.moodle import Moodle, full_names
from mlcourse_utils.grading.notebook import load_assignment

ASSIGNMENT = load_assignment("mle", sup.ROOT)



# ------------------------------------------------------------------ its download's names


def test_moodle_is_registered_under_its_name():
    assert isinstance(lms.get("moodle"), Moodle) and lms.get("moodle").label == "Moodle"


@pytest.mark.parametrize("parts,file", [
    (["Alice Smith_5001_assignsubmission_file_", "mle.ipynb"], "mle.ipynb"),
    (["Alice Smith_5001_assignsubmission_file", "sub", "mle.ipynb"], "sub/mle.ipynb"),  # 4.1
    (["Alice Smith_5001_assignsubmission_file_mle.ipynb"], "mle.ipynb"),  # not in folders
    (["download", "Alice Smith_5001_assignsubmission_file_", "mle.ipynb"], "mle.ipynb"),
])
def test_a_download_path_gives_the_full_name_participant_and_file(parts, file):
    found = lms.get("moodle").parse(parts)
    assert (found.lms, found.name, found.user_id, found.file, found.late,
            found.attachment_id) == ("moodle", "Alice Smith", "5001", file, False, "")


def test_a_student_folder_is_named_by_the_prefix():
    moodle = lms.get("moodle")
    assert moodle.student_folder("Alice Smith_5001_assignsubmission_file_")
    assert not moodle.student_folder("alice") and moodle.parse(["alice", "mle.ipynb"]) is None


def test_a_roster_row_is_known_by_its_participant_number_and_full_name():
    moodle = lms.get("moodle")
    bob = Student("Brown, Bob", "bob", participant="5002 ")
    assert moodle.roster_number(bob) == "5002"
    assert moodle.download_name_key("Bob  Brown") in moodle.name_keys(bob.name)
    assert full_names("Brown, Bob") == {"brown, bob", "bob brown"}
    assert moodle.number_cell("5009") == "Identifier 'Participant 5009'"


def test_the_worksheets_participant_cells_are_read_as_numbers():
    moodle = lms.get("moodle")
    assert moodle.roster_values({"participant": "Participant 5001", "name": "A"}) == {
        "participant": "5001", "name": "A"}
    assert moodle.roster_values({"participant": "participant5002"})["participant"] == "5002"
    assert moodle.roster_values({"name": "Participant 1"}) == {"name": "Participant 1"}
    assert lms.get("canvas").roster_values({"participant": "Participant 1"}) == {
        "participant": "Participant 1"}


# ------------------------------------------------------------------ its grade file

@pytest.mark.parametrize("identifier,header", [
    ("email", ["Email address", "ID number", "Full name", "mle"]),
    ("idnumber", ["ID number", "Email address", "Full name", "mle"]),
    ("username", ["Username", "Email address", "ID number", "Full name", "mle"]),
])
def test_moodle_puts_the_mapped_identifier_first(tmp_path, write_graded, identifier, header):
    roster = "Full name,Email address,username,ID number\nAlice,alice@uni.example,alice,M-1\n"
    rows, _ = sup.export_rows(write_graded, tmp_path,
                              "moodle", roster, moodle_identifier=identifier)
    assert rows[0] == header
    expected = {"email": "alice@uni.example", "idnumber": "M-1", "username": "alice"}
    assert rows[1][0] == expected[identifier]
    assert float(rows[1][-1]) == ASSIGNMENT.max_score


def test_moodle_without_the_identifier_is_an_error(tmp_path, write_graded):
    roster = "Full name,Email address,username\nAlice,,alice\n"
    with pytest.raises(ValueError, match="no Email address.*Alice"):
        sup.export_rows(write_graded, tmp_path, "moodle", roster)


def test_feedback_zip_for_moodle_from_the_roster(tmp_path, write_graded):
    graded = write_graded(tmp_path / "graded", {"alice@uni.example": 1.0, "x_y": 0.0})
    (tmp_path / "worksheet.csv").write_text(
        "Identifier,Full name,Email address\nParticipant 5001,Alice Smith-Jones,"
        "alice@uni.example\n")
    done = export.write_feedback_zip(graded, "moodle", tmp_path / "fb.zip",
                                  tmp_path / "worksheet.csv")
    name = done.files["alice@uni.example"]
    parts = name.split("_", 4)  # as Moodle's importer splits the path
    assert parts[:4] == ["Alice Smith-Jones", "5001", "assignsubmission", "file"]
    assert parts[4] == "/feedback-mle.html"
    assert list(done.left_out) == ["x_y"]
