"""What `mlcourse grade` reads (grading/intake.py `collect`, grading/roster.py): student
folders as before, and the bulk downloads of Canvas and Moodle (a folder or its zip), mapped to
the course's student ids through the roster; what cannot be matched is named, an empty or
unknown folder is an error that names the layouts expected, and the download is never changed.

The LMS names follow their documented conventions: Canvas writes
``login[_late]_userid_attachmentid_filename`` (nbgrader's zip_collect reads the same), Moodle a
folder ``Full Name_participant_assignsubmission_file_`` per student, or that prefix on each file.
"""

from __future__ import annotations

import hashlib
import json
import os
import zipfile
from pathlib import Path

import pytest

import assignment_support as sup
from mlcourse_utils.grading.intake import collect
from mlcourse_utils.grading.roster import Roster, canvas_login, course_id, read_roster

NB = "mle.ipynb"
CANVAS_ROSTER = """\
Student,ID,SIS User ID,SIS Login ID,Section
"Smith-Jones, Alice",101,S-1,alice,A
"Brown, Bob",102,S-2,bob,A
"Never, Nobody",106,S-6,nobody,B
"""
#: Moodle's offline grading worksheet, used as the roster.
MOODLE_WORKSHEET = """\
Identifier,Full name,Email address,Status,Grade,Maximum Grade
Participant 5001,Alice Smith-Jones,alice@uni.example,Submitted,,29
Participant 5002,Bob Brown,bob@uni.example,Submitted,,29
"""


def _notebook(tag):
    return json.dumps({"cells": [], "metadata": {"tag": tag}, "nbformat": 4,
                       "nbformat_minor": 5}).encode()


def _tree(folder):
    """{relative path: sha256} of every file under ``folder`` (to see that nothing changed)."""
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(Path(folder).rglob("*")) if p.is_file()}


def _canvas(folder):
    folder.mkdir()
    (folder / "smithjonesalice_101_9001_mle.ipynb").write_bytes(_notebook("alice"))
    (folder / "brownbob_late_102_9002_mle-1.ipynb").write_bytes(_notebook("bob"))  # resubmitted
    (folder / "strangerx_999_9003_mle.ipynb").write_bytes(_notebook("stranger"))
    (folder / "notes.txt").write_text("not a submission")
    return folder


def _moodle(folder):
    # Moodle before 4.1 ends the folder name with _, later versions do not.
    for name, tag in (("Alice Smith-Jones_5001", "alice"), ("Bob Brown_5002", "bob")):
        target = folder / f"{name}_assignsubmission_file{'_' if tag == 'alice' else ''}"
        target.mkdir(parents=True)
        (target / ("mle.ipynb" if tag == "alice" else "my work.ipynb")).write_bytes(
            _notebook(tag))
    return folder


def _zip_of(folder, path, when=(2026, 3, 2, 23, 5, 0)):
    with zipfile.ZipFile(path, "w") as z:
        for p in sorted(folder.rglob("*")):
            if p.is_file():
                z.writestr(zipfile.ZipInfo(p.relative_to(folder).as_posix(), when),
                           p.read_bytes())
    return path


def _tags(intake):
    """``{student: the tag of their notebook, or the submission when it holds none}``."""
    return {s: json.loads(sub.data)["metadata"]["tag"] if sub.submitted else sub
            for s, sub in intake.found.items()}


def test_canvas_folder_through_the_roster(tmp_path):
    download = _canvas(tmp_path / "download")
    before = _tree(download)
    (tmp_path / "roster.csv").write_text(CANVAS_ROSTER)
    roster = Roster(read_roster(tmp_path / "roster.csv"))
    intake = collect("mle", download, NB, roster)
    assert intake.layout == "canvas"
    # By Canvas's user id to the roster's SIS login; the stranger keeps Canvas's login.
    assert _tags(intake) == {"alice": "alice", "bob": "bob", "strangerx": "stranger"}
    assert intake.lms["bob"].late and not intake.lms["alice"].late
    assert (intake.lms["alice"].user_id, intake.lms["alice"].attachment_id) == ("101", "9001")
    assert intake.lms["alice"].roster and not intake.lms["strangerx"].roster
    assert any("notes.txt" in line for line in intake.unmatched)
    assert any("user 999" in line and "not in the roster" in line for line in intake.unmatched)
    assert _tree(download) == before
    assert intake.found["bob"].lms is intake.lms["bob"]


def test_canvas_zip_gives_the_same_students_and_the_lms_times(tmp_path):
    download = _zip_of(_canvas(tmp_path / "download"), tmp_path / "submissions.zip")
    (tmp_path / "roster.csv").write_text(CANVAS_ROSTER)
    intake = collect("mle", download, NB,
                     Roster(read_roster(tmp_path / "roster.csv")))
    assert _tags(intake) == {"alice": "alice", "bob": "bob", "strangerx": "stranger"}
    assert intake.lms["alice"].time == "2026-03-02T23:05:00"
    # A zip inside a folder is read too.
    (tmp_path / "folder").mkdir()
    os.replace(download, tmp_path / "folder" / "submissions.zip")
    again = collect("mle", tmp_path / "folder", NB,
                    Roster(read_roster(tmp_path / "roster.csv")))
    assert _tags(again) == _tags(intake)


@pytest.mark.parametrize("zipped", [False, True])
def test_moodle_download_by_participant_number(tmp_path, zipped):
    download = _moodle(tmp_path / "download")
    if zipped:
        download = _zip_of(download, tmp_path / "mle-1234.zip")
    (tmp_path / "worksheet.csv").write_text(MOODLE_WORKSHEET)
    roster = Roster(read_roster(tmp_path / "worksheet.csv"))
    intake = collect("mle", download, NB, roster)
    assert intake.layout == "moodle"
    assert _tags(intake) == {"alice@uni.example": "alice", "bob@uni.example": "bob"}
    assert intake.lms["bob@uni.example"].user_id == "5002"
    assert intake.lms["bob@uni.example"].name == "Bob Brown"
    assert intake.unmatched == []


def test_moodle_files_not_in_folders_and_names_without_numbers_in_the_roster(tmp_path):
    """Moodle's download without folders prefixes each file; a roster without participant
    numbers matches the full name ("Last, First" too) when only one row has it."""
    download = tmp_path / "download"
    download.mkdir()
    (download / "Alice Smith-Jones_5001_assignsubmission_file_mle.ipynb").write_bytes(
        _notebook("alice"))
    (download / "Bob Brown_5002_assignsubmission_file_mle.ipynb").write_bytes(_notebook("bob"))
    (tmp_path / "roster.csv").write_text('name,student_id\n"Smith-Jones, Alice",as1\n'
                                         '"Brown, Bob",bb2\n"Brown, Bob",bb3\n')
    intake = collect("mle", download, NB,
                     Roster(read_roster(tmp_path / "roster.csv")))
    assert _tags(intake) == {"as1": "alice", "Bob Brown": "bob"}  # two Bob Browns: unmatched
    assert any("5002" in line and "not in the roster" in line for line in intake.unmatched)


def test_macos_metadata_in_a_rezipped_download_is_no_submission(tmp_path):
    folder = _moodle(tmp_path / "download")
    target = folder / "__MACOSX" / "Alice Smith-Jones_5001_assignsubmission_file_"
    target.mkdir(parents=True)
    (target / "._mle.ipynb").write_bytes(b"\0\5\26\7")
    (folder / "Bob Brown_5002_assignsubmission_file" / "._my work.ipynb").write_bytes(b"\0")
    intake = collect("mle", _zip_of(folder, tmp_path / "d.zip"), NB)
    assert _tags(intake) == {"Alice Smith-Jones": "alice", "Bob Brown": "bob"}
    assert len([line for line in intake.unmatched if "._" in line]) == 2


def test_without_a_roster_the_lms_names_are_the_ids_and_stay_apart(tmp_path):
    download = tmp_path / "download"
    download.mkdir()
    (download / "lee_201_1_mle.ipynb").write_bytes(_notebook("first lee"))
    (download / "lee_202_2_mle.ipynb").write_bytes(_notebook("second lee"))
    intake = collect("mle", download, NB)
    assert _tags(intake) == {"lee": "first lee", "lee_202": "second lee"}


def test_several_notebooks_links_and_unreadable_files_cost_only_their_student(tmp_path):
    download = tmp_path / "download"
    download.mkdir()
    (download / "ann_1_1_mle.ipynb").write_bytes(_notebook("ann"))
    (download / "ann_1_2_mle.ipynb").write_bytes(_notebook("ann again"))  # same file name twice
    (download / "cat_3_3_draft.ipynb").write_bytes(_notebook("draft"))
    (download / "cat_3_4_final.ipynb").write_bytes(_notebook("final"))
    secret = tmp_path / "solution.ipynb"
    secret.write_bytes(_notebook("the solution"))
    (download / "eve_5_5_mle.ipynb").symlink_to(secret)
    (download / "dan_4_6_mle.ipynb").write_bytes(_notebook("dan"))
    intake = collect("mle", download, NB)
    found = intake.found
    assert not found["cat"].submitted and "several notebooks" in found["cat"].refused
    assert not found["eve"].submitted and "symbolic link" in found["eve"].refused
    assert _tags(intake)["dan"] == "dan"
    assert found["ann"].refused  # two files named mle.ipynb: which one is hers?


def test_student_folders_are_read_as_before(tmp_path):
    subs = tmp_path / "subs"
    sup.write_submission(subs, "alice", "mle", raw=_notebook("alice"))
    sup.write_submission(subs, "bob", "mle", raw=_notebook("bob"), nested=True)
    (subs / "README.txt").write_text("stray")
    intake = collect("mle", subs, NB)
    assert intake.layout == "folders" and intake.lms == {}
    assert _tags(intake) == {"alice": "alice", "bob": "bob"}
    assert intake.found["alice"].data == (subs / "alice" / NB).read_bytes()
    assert intake.found["alice"].lms is None
    assert any("README.txt" in line for line in intake.unmatched)


@pytest.mark.parametrize("content", [None, "junk.txt"])
def test_an_empty_or_unknown_folder_is_an_error_naming_the_layouts(tmp_path, content):
    folder = tmp_path / "subs"
    folder.mkdir()
    if content:
        (folder / content).write_text("?")
    with pytest.raises(ValueError) as err:
        collect("mle", folder, NB)
    message = str(err.value)
    assert ("is empty" if content is None else "holds nothing") in message
    for layout in ("SUBMISSIONS/<student>/NAME.ipynb", "Canvas", "login_userid_attachmentid",
                   "Moodle", "assignsubmission_file_"):
        assert layout in message


def test_the_command_exits_non_zero_on_an_empty_folder_and_an_output_inside(tmp_path):
    (tmp_path / "empty").mkdir()
    proc = sup.grade("mle", tmp_path / "empty", tmp_path / "out")
    assert proc.returncode == 1 and "is empty; expected one of" in proc.stderr, proc.stderr
    assert not (tmp_path / "out").exists()
    subs = tmp_path / "subs"
    sup.write_submission(subs, "alice", "mle", raw=_notebook("alice"))
    before = _tree(subs)
    proc = sup.grade("mle", subs, subs / "alice" / "out")
    assert proc.returncode == 1 and "inside SUBMISSIONS" in proc.stderr, proc.stderr
    assert _tree(subs) == before


def test_canvas_logins_and_course_ids(tmp_path):
    assert canvas_login("Smith-Jones, Alice") == "smithjonesalice"
    assert canvas_login("Müller, Jürgen") == "mullerjurgen"
    (tmp_path / "roster.csv").write_text("Student,ID,SIS Login ID,Email\n\"A, B\",7,,ab@x\n")
    (student,) = read_roster(tmp_path / "roster.csv")
    assert course_id(student) == "ab@x"  # no SIS login: the e-mail, which export matches too


def test_the_roster_refuses_a_name_match_when_it_has_lms_ids(tmp_path):
    """A roster with Canvas ids is the class: a user id it lacks is not matched by name."""
    (tmp_path / "roster.csv").write_text(CANVAS_ROSTER)
    roster = Roster(read_roster(tmp_path / "roster.csv"))
    assert roster.canvas("101", "whoever").sis_login_id == "alice"
    assert roster.canvas("555", "smithjonesalice") is None


@pytest.mark.slow
def test_grading_a_download_does_not_touch_it(tmp_path):
    """`mlcourse grade` on a Canvas zip: intake.json says who is who, the zip is unchanged."""
    folder = tmp_path / "download"
    folder.mkdir()
    nb = sup.make_submission("mle", sup.solution_answers("mle"))
    (folder / "smithjonesalice_101_9001_mle.ipynb").write_text(json.dumps(nb))
    download = _zip_of(folder, tmp_path / "submissions.zip")
    digest = hashlib.sha256(download.read_bytes()).hexdigest()
    (tmp_path / "roster.csv").write_text(CANVAS_ROSTER)
    proc = sup.grade("mle", download, tmp_path / "out", "--roster", str(tmp_path / "roster.csv"))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert hashlib.sha256(download.read_bytes()).hexdigest() == digest
    intake = json.loads((tmp_path / "out" / "intake.json").read_text())
    assert intake["layout"] == "canvas"
    assert intake["students"]["alice"]["user_id"] == "101"
    times = json.loads((tmp_path / "out" / "timestamps.json").read_text())
    assert times["alice"] == {"submitted": True, "time": "2026-03-02T23:05:00",
                              "source": "the LMS download", "lms_late": False}
    grades, _ = sup.read_scores(tmp_path / "out")
    assert set(grades) == {"alice"} and grades["alice"][0] == grades["alice"][1]

