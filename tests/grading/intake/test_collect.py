"""What `mlcourse grade` reads (grading/intake/collect.py `collect`, grading/intake/roster.py):
student folders as before, and the bulk downloads of Canvas and Moodle (a folder or its zip), mapped
to the course's student ids through the roster; what cannot be matched is named, an empty or unknown
folder is an error that names the layouts expected, and the download is never changed.

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
from mlcourse_utils.grading.intake.collect import collect
from mlcourse_utils.grading.intake.roster import Roster, course_id, read_roster
from mlcourse_utils.grading.text import fold

NB = "mle.ipynb"
#: The id of the submitter of _canvas whom CANVAS_ROSTER lacks (Canvas user 999).
STRANGER = "not-in-roster-canvas-999"
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
    # By Canvas's user id to the roster's SIS login; the stranger (user 999, whom the roster
    # lacks) is refused under an id that is nobody's, with what to do.
    tags = _tags(intake)
    stranger = tags.pop(STRANGER)
    assert tags == {"alice": "alice", "bob": "bob"}
    assert not stranger.submitted
    for words in ("Canvas user 999", "'strangerx'", "not in the roster", "ID 999",
                  "grade again"):
        assert words in stranger.refused
    assert intake.lms["bob"].late and not intake.lms["alice"].late
    assert (intake.lms["alice"].user_id, intake.lms["alice"].attachment_id) == ("101", "9001")
    assert intake.lms["alice"].roster and not intake.lms[STRANGER].roster
    assert "not in the roster" in intake.lms[STRANGER].problem
    assert any("notes.txt" in line for line in intake.unmatched)
    assert _tree(download) == before
    assert intake.found["bob"].lms is intake.lms["bob"]


def test_canvas_zip_gives_the_same_students_and_the_lms_times(tmp_path):
    download = _zip_of(_canvas(tmp_path / "download"), tmp_path / "submissions.zip")
    (tmp_path / "roster.csv").write_text(CANVAS_ROSTER)
    intake = collect("mle", download, NB,
                     Roster(read_roster(tmp_path / "roster.csv")))
    assert {s: t for s, t in _tags(intake).items() if s != STRANGER} == {"alice": "alice",
                                                                          "bob": "bob"}
    assert not intake.found[STRANGER].submitted
    assert intake.lms["alice"].time == "2026-03-02T23:05:00"
    # A zip inside a folder is read too.
    (tmp_path / "folder").mkdir()
    os.replace(download, tmp_path / "folder" / "submissions.zip")
    again = collect("mle", tmp_path / "folder", NB,
                    Roster(read_roster(tmp_path / "roster.csv")))
    assert {s: sub.data for s, sub in again.found.items()} == {
        s: sub.data for s, sub in intake.found.items()}


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
    # Two roster rows are Bob Brown: which one submitted cannot be told, so neither is given it.
    assert _tags(intake)["as1"] == "alice"
    bob = intake.found["not-in-roster-moodle-5002"]
    assert not bob.submitted and "shares the name with 2 roster rows" in bob.refused
    assert set(intake.found) == {"as1", "not-in-roster-moodle-5002"}


def test_macos_metadata_in_a_rezipped_download_is_no_submission(tmp_path):
    folder = _moodle(tmp_path / "download")
    target = folder / "__MACOSX" / "Alice Smith-Jones_5001_assignsubmission_file_"
    target.mkdir(parents=True)
    (target / "._mle.ipynb").write_bytes(b"\0\5\26\7")
    (folder / "Bob Brown_5002_assignsubmission_file" / "._my work.ipynb").write_bytes(b"\0")
    intake = collect("mle", _zip_of(folder, tmp_path / "d.zip"), NB)
    assert _tags(intake) == {"Alice Smith-Jones": "alice", "Bob Brown": "bob"}
    assert len([line for line in intake.unmatched if "._" in line]) == 2


def test_without_a_roster_the_lms_names_are_the_ids_and_namesakes_are_refused(tmp_path):
    """Two Canvas users with one login would be graded under one id: both are refused (which
    grade is whose could not be told later), each reason naming both, and neither is merged
    into the other or renamed into a look-alike."""
    download = tmp_path / "download"
    download.mkdir()
    (download / "lee_201_1_mle.ipynb").write_bytes(_notebook("first lee"))
    (download / "lee_202_2_mle.ipynb").write_bytes(_notebook("second lee"))
    (download / "kim_203_3_mle.ipynb").write_bytes(_notebook("kim"))
    intake = collect("mle", download, NB)
    assert _tags(intake)["kim"] == "kim"
    refused = {s: sub for s, sub in intake.found.items() if s != "kim"}
    assert len(refused) == 2
    for sub in refused.values():
        assert not sub.submitted
        assert "Canvas user 201 ('lee')" in sub.refused and "Canvas user 202 ('lee')" in sub.refused
        assert "--roster" in sub.refused


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


def test_course_ids(tmp_path):
    """(Canvas's logins: tests/grading/lms/test_canvas.py.)"""
    (tmp_path / "roster.csv").write_text("Student,ID,SIS Login ID,Email\n\"A, B\",7,,ab@x\n")
    (student,) = read_roster(tmp_path / "roster.csv")
    assert course_id(student) == "ab@x"  # no SIS login: the e-mail, which export matches too


def test_the_roster_refuses_a_name_match_when_it_has_lms_ids(tmp_path):
    """A roster with Canvas ids is the class: a user id it lacks is not matched by name."""
    (tmp_path / "roster.csv").write_text(CANVAS_ROSTER)
    roster = Roster(read_roster(tmp_path / "roster.csv"))
    assert roster.find("canvas", "101", "whoever")[0].sis_login_id == "alice"
    assert roster.find("canvas", "555", "smithjonesalice")[0] is None


# ------------------------------------------------------------------ identity, as an attacker


def _roster_keys(roster):
    return {key for student in roster.students for key in student.keys()}


def _no_roster_id_taken(intake, roster, owners):
    """No submission holds an id that is (up to case and Unicode form) a roster key, except the
    ones ``owners`` ({id: roster student's name}) say are that student's, matched by user id."""
    keys = _roster_keys(roster)
    for sid in intake.found:
        if fold(sid) in keys:
            student = next(s for s in roster.students if fold(sid) in s.keys())
            assert owners.get(sid) == student.name, (sid, student.name)


@pytest.mark.parametrize("alice_submits", [False, True])
@pytest.mark.parametrize("login", ["alice", "ALICE", "s-1", "101"])
def test_a_canvas_stranger_named_like_a_roster_id_never_takes_it(tmp_path, alice_submits, login):
    """A Canvas user the roster lacks, whose login is Alice's SIS login (or her SIS id, or her
    Canvas id), is refused under an id that is nobody's; Alice is listed without a submission
    (or keeps her own). User 1000 sorts before 101 as text: the order of the download does not
    decide who gets an id."""
    download = tmp_path / "download"
    download.mkdir()
    (download / f"{login}_1000_7001_mle.ipynb").write_bytes(_notebook("stranger"))
    (download / "brownbob_102_9002_mle.ipynb").write_bytes(_notebook("bob"))
    if alice_submits:
        (download / "smithjonesalice_101_9001_mle.ipynb").write_bytes(_notebook("alice"))
    (tmp_path / "roster.csv").write_text(CANVAS_ROSTER)
    roster = Roster(read_roster(tmp_path / "roster.csv"))
    intake = collect("mle", download, NB, roster)
    owners = {"alice": "Smith-Jones, Alice", "bob": "Brown, Bob"}
    _no_roster_id_taken(intake, roster, owners)
    tags = _tags(intake)
    assert tags.pop("bob") == "bob"
    assert tags.pop("alice", None) == ("alice" if alice_submits else None)
    (stranger,) = tags.values()
    assert not stranger.submitted and "Canvas user 1000" in stranger.refused
    assert list(intake.not_in_roster.values()) == [f"Canvas user 1000 ({login!r})"]
    assert ("Smith-Jones, Alice" in intake.without_submission) is not alice_submits


@pytest.mark.parametrize("name", ["alice@uni.example", "ALICE@Uni.Example",
                                  "\uff41lice@uni.example"])  # a full-width a
def test_a_moodle_stranger_named_like_a_roster_id_never_takes_it(tmp_path, name):
    """Moodle names a folder by the full name, which the student chooses: one named like
    Alice's e-mail (her id, as the worksheet gives no other) is not Alice."""
    download = _moodle(tmp_path / "download")
    os.rename(download / "Alice Smith-Jones_5001_assignsubmission_file_",
              download / f"{name}_5009_assignsubmission_file_")
    (tmp_path / "worksheet.csv").write_text(MOODLE_WORKSHEET)
    roster = Roster(read_roster(tmp_path / "worksheet.csv"))
    intake = collect("mle", download, NB, roster)
    _no_roster_id_taken(intake, roster, {"bob@uni.example": "Bob Brown"})
    assert set(intake.found) == {"bob@uni.example", "not-in-roster-moodle-5009"}
    assert "Moodle user 5009" in intake.found["not-in-roster-moodle-5009"].refused
    # What to add to the roster, as Moodle's worksheet writes it:
    assert "Identifier 'Participant 5009'" in intake.found["not-in-roster-moodle-5009"].refused
    assert intake.without_submission == ["Alice Smith-Jones"]


@pytest.mark.parametrize("first,second", [
    ("Alice Smith", "alice smith"),                              # case
    ("\uff21lice Smith", "Alice Smith"),                          # a full-width A
    ("Jos\u00e9 Diaz", "Jose\u0301 Diaz"),                         # composed and decomposed e
])
def test_moodle_look_alike_names_are_both_refused_naming_both(tmp_path, first, second):
    """Without a roster the full name is the id: two users whose names are equal up to case and
    Unicode form would share one, so both are refused, each reason naming both."""
    download = tmp_path / "download"
    for name, number, tag in ((first, "5001", "one"), (second, "5002", "two")):
        (download / f"{name}_{number}_assignsubmission_file_").mkdir(parents=True)
        (download / f"{name}_{number}_assignsubmission_file_" / NB).write_bytes(_notebook(tag))
    intake = collect("mle", download, NB)
    assert len(intake.found) == 2 and len({fold(s) for s in intake.found}) == 2
    for sub in intake.found.values():
        assert not sub.submitted
        assert "Moodle user 5001" in sub.refused and "Moodle user 5002" in sub.refused
    assert len(intake.collisions) == 2


def test_suffix_collisions_keep_every_moodle_user_apart(tmp_path):
    """Two Lees and a third user whose full name is "Lee_5002" (what suffixing the second Lee
    with its number would make): nobody is merged into another or renamed into another's id."""
    download = tmp_path / "download"
    for name, number in (("Lee", "5001"), ("Lee", "5002"), ("Lee_5002", "5003")):
        folder = download / f"{name}_{number}_assignsubmission_file_"
        folder.mkdir(parents=True)
        (folder / NB).write_bytes(_notebook(number))
    intake = collect("mle", download, NB)
    assert len(intake.found) == 3 and len({fold(s) for s in intake.found}) == 3
    assert _tags(intake)["Lee_5002"] == "5003"  # graded, under its own name
    refused = [sub for s, sub in intake.found.items() if s != "Lee_5002"]
    assert all("Moodle user 5001 ('Lee') and Moodle user 5002 ('Lee')" in sub.refused
               for sub in refused)
    assert {e.user_id for e in intake.lms.values()} == {"5001", "5002", "5003"}


def test_an_invisible_character_in_an_lms_name_makes_no_look_alike(tmp_path):
    download = tmp_path / "download"
    for name, number in (("Lee", "5001"), ("Lee\u200b", "5002")):
        folder = download / f"{name}_{number}_assignsubmission_file_"
        folder.mkdir(parents=True)
        (folder / NB).write_bytes(_notebook(number))
    intake = collect("mle", download, NB)
    assert _tags(intake)["Lee"] == "5001"
    (other,) = set(intake.found) - {"Lee"}
    assert other.isascii() and "\\u200b" in other  # shown escaped: it cannot pass for Lee
    assert "invisible" in intake.found[other].refused and "--roster" in intake.found[other].refused


def test_two_moodle_users_matching_one_roster_student_by_name_are_both_refused(tmp_path):
    download = tmp_path / "download"
    for name, number in (("Bob Brown", "5002"), ("bob  brown", "5003")):
        folder = download / f"{name}_{number}_assignsubmission_file_"
        folder.mkdir(parents=True)
        (folder / NB).write_bytes(_notebook(number))
    (tmp_path / "roster.csv").write_text('name,student_id\n"Brown, Bob",bb2\n')
    intake = collect("mle", download, NB, Roster(read_roster(tmp_path / "roster.csv")))
    assert "bb2" not in intake.found and len(intake.found) == 2
    for sub in intake.found.values():
        assert "Moodle user 5002" in sub.refused and "Moodle user 5003" in sub.refused
        assert "'Brown, Bob'" in sub.refused or "Brown, Bob" in sub.refused
    assert intake.matched == [] and intake.without_submission == []


def test_student_folders_meet_the_roster_by_folded_names(tmp_path):
    """With --roster, a folder named by a roster id in another case is that student's; one the
    roster lacks is refused (not graded under a name a TA may take for a student's); folders
    differing only in case or Unicode form (a full-width B) are both refused."""
    subs = tmp_path / "subs"
    for folder in ("ALICE", "mallory", "bob", "\uff42ob"):
        sup.write_submission(subs, folder, "mle", raw=_notebook(folder))
    (tmp_path / "roster.csv").write_text(CANVAS_ROSTER)
    intake = collect("mle", subs, NB, Roster(read_roster(tmp_path / "roster.csv")))
    assert _tags(intake)["ALICE"] == "ALICE"
    assert "no student id, e-mail or LMS id of the roster" in intake.found["mallory"].refused
    assert intake.not_in_roster == {"mallory": "folder 'mallory'"}
    twins = [s for s in intake.found if fold(s) == "bob"]
    assert len(twins) == 2 and all("differ only in case" in intake.found[s].refused
                                   for s in twins)
    assert intake.matched == ["ALICE"]
    assert set(intake.collisions) == set(twins)
    assert intake.without_submission == ["Never, Nobody"]  # bob's folders: refused, not missing


# ------------------------------------------------------------------ the intake summary


def test_the_summary_of_a_canvas_download(tmp_path):
    """The _canvas download against CANVAS_ROSTER, counted by hand: alice (101) and bob (102)
    matched of 3 roster students, bob's file marked late and named mle-1.ipynb (Canvas's name for
    a resubmission), Never, Nobody without a submission, user 999 not on the roster."""
    (tmp_path / "roster.csv").write_text(CANVAS_ROSTER)
    intake = collect("mle", _canvas(tmp_path / "download"), NB,
                     Roster(read_roster(tmp_path / "roster.csv")))
    text = intake.summary(NB)
    for clause in ("Canvas download: 2 of 3 roster students matched (by Canvas user id)",
                   "1 submission marked late by Canvas (bob)",
                   "1 resubmission taken (bob: mle-1.ipynb)",
                   "1 roster student without a submission ('Never, Nobody')",
                   "1 submitter not on the roster (Canvas user 999 ('strangerx')), refused"):
        assert clause in text, (clause, text)
    assert "\n" not in text and text.startswith("intake: ")


def test_the_summary_of_a_moodle_download(tmp_path):
    """The _moodle download against MOODLE_WORKSHEET: both participants matched, Moodle marks
    nothing late, bob's notebook is named 'my work.ipynb' (taken: his only one), nobody
    missing or unknown."""
    (tmp_path / "worksheet.csv").write_text(MOODLE_WORKSHEET)
    intake = collect("mle", _moodle(tmp_path / "download"), NB,
                     Roster(read_roster(tmp_path / "worksheet.csv")))
    text = intake.summary(NB)
    for clause in ("Moodle download: 2 of 2 roster students matched (by Moodle participant "
                   "number)", "late: not marked in Moodle's download",
                   "0 resubmissions taken",
                   "1 notebook taken under another name (bob@uni.example: my work.ipynb)",
                   "0 roster students without a submission", "0 submitters not on the roster"):
        assert clause in text, (clause, text)


def test_the_summary_without_a_roster_says_what_it_cannot_know(tmp_path):
    intake = collect("mle", _canvas(tmp_path / "download"), NB)
    text = intake.summary(NB)
    assert "Canvas download, no --roster: 3 submitters, each under their Canvas name" in text
    assert "without a submission" not in text and "not on the roster" not in text


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
    # The intake summary, one paragraph before the progress bar: alice of the 3 matched.
    (summary,) = [line for line in proc.stderr.splitlines() if line.startswith("intake: ")]
    assert "1 of 3 roster students matched" in summary
    assert "2 roster students without a submission ('Brown, Bob', 'Never, Nobody')" in summary
    assert proc.stderr.index(summary) < proc.stderr.index("grading mle")
    assert "graded 1 submission of mle" in proc.stdout
    intake = json.loads((tmp_path / "out" / "intake.json").read_text())
    assert intake["layout"] == "canvas" and intake["matched"] == ["alice"]
    assert intake["without_submission"] == ["Brown, Bob", "Never, Nobody"]
    assert intake["students"]["alice"]["user_id"] == "101"
    times = json.loads((tmp_path / "out" / "timestamps.json").read_text())
    assert times["alice"] == {"submitted": True, "time": "2026-03-02T23:05:00",
                              "source": "the LMS download", "lms_late": False}
    grades, _ = sup.read_scores(tmp_path / "out")
    assert set(grades) == {"alice"} and grades["alice"][0] == grades["alice"][1]

