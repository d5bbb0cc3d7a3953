"""The class list (grading/intake/roster.py): roster files as Canvas and Moodle export them,
matching graded folders to rows, and the names and numbers of LMS downloads.

Headers are the ones Canvas's gradebook export and Moodle's grading worksheet write.
"""

from __future__ import annotations

import pytest

from mlcourse_utils.grading.intake.roster import (
    Roster,
    Student,
    course_id,
    match_roster,
    read_roster,
)


def _roster(tmp_path, text):
    path = tmp_path / "roster.csv"
    path.write_text(text, encoding="utf-8-sig")
    return read_roster(path)


def test_canvas_gradebook_export_skips_the_points_possible_row(tmp_path):
    students = _roster(tmp_path, 'Student,ID,SIS User ID,SIS Login ID,Section\n'
                                 '    Points Possible,,,,\n'
                                 '"Smith-Jones, Alice",101,S-1,alice,A\n')
    assert students == [Student("Smith-Jones, Alice", lms_id="101", sis_user_id="S-1",
                                sis_login_id="alice", section="A")]
    assert students[0].keys() == ["alice", "s-1", "101"]


def test_moodle_worksheet_participant_numbers(tmp_path):
    students = _roster(tmp_path, "Identifier,Full name,Email address,ID number\n"
                                 "Participant 5001,Alice Smith,Alice@Uni.example,M-1\n")
    assert students[0].participant == "5001" and students[0].idnumber == "M-1"
    assert course_id(students[0]) == "Alice@Uni.example"


@pytest.mark.parametrize("text,message", [
    ("", "is empty"),
    ("name,section\nAlice,A\n", "needs a column student_id, email"),
])
def test_a_roster_that_cannot_match_anything_is_an_error(tmp_path, text, message):
    with pytest.raises(ValueError, match=message):
        _roster(tmp_path, text)


def test_match_by_any_id_case_insensitive():
    roster = [Student("Alice", "alice", "alice@uni.example"), Student("Bob", email="bob@uni.x")]
    matched, unmatched = match_roster(roster, ["ALICE", "bob@uni.x", "ghost"])
    assert matched == {0: "ALICE", 1: "bob@uni.x"} and unmatched == ["ghost"]


def test_two_submissions_of_one_student_match_neither_when_conflicts_are_asked():
    roster = [Student("Eve", "eve"), Student("Bob", "bob")]
    with pytest.raises(ValueError, match="two submissions, 'Eve' and 'eve'"):
        match_roster(roster, ["Eve", "eve", "bob"])
    conflicts = {}
    matched, _ = match_roster(roster, ["Eve", "eve", "bob"], conflicts)
    assert matched == {1: "bob"} and conflicts == {0: ["Eve", "eve"]}


def test_a_roster_giving_one_id_to_two_students_is_an_error():
    with pytest.raises(ValueError, match="gives 'x@y' to two students"):
        match_roster([Student("A", email="x@y"), Student("B", "x@y")], [])


def test_download_names_find_roster_rows_by_number_then_unambiguous_name():
    alice, bob = Student("Smith, Alice", "a", lms_id="7"), Student("Brown, Bob", "b")
    by_id = Roster([alice, bob])
    assert by_id.find("canvas", "7", "whoever")[0] is alice
    # the roster has Canvas ids: 8 is not in it
    assert by_id.find("canvas", "8", "brownbob")[0] is None
    by_name = Roster([Student("Smith, Alice", "a"), Student("Smith, Alice", "a2"), bob])
    assert by_name.find("canvas", "", "brownbob")[0] is bob
    assert by_name.find("canvas", "", "smithalice")[0] is None  # two rows share the name
    # "Last, First" read as "First Last"
    assert by_name.find("moodle", "", "Bob  Brown")[0] is bob


def test_keys_are_compared_folded():
    """A roster id matches a folder named in another case or Unicode form (full-width letters,
    a decomposed accent): names and ids are compared after NFKC and case folding."""
    roster = [Student("Ren\u00e9", "ren\u00e9"), Student("Alice", "alice")]
    matched, unmatched = match_roster(roster, ["RENE\u0301", "\uff41lice", "bob"])
    assert matched == {0: "RENE\u0301", 1: "\uff41lice"} and unmatched == ["bob"]


def _entry(lms, user, name, roster=False, problem=""):
    return {"lms": lms, "user_id": user, "name": name, "roster": roster, "problem": problem}


def test_a_submission_from_a_download_is_matched_by_its_user_id_only():
    """The graded id "alice" looks like Alice's id, but came from Canvas user 999: not Alice.
    "smithjonesalice" looks like nobody's, but came from user 101: Alice. Folders (no LMS
    entry) still match by name."""
    alice = Student("Smith-Jones, Alice", "alice", lms_id="101")
    bob = Student("Brown, Bob", "bob", lms_id="102")
    lms = {"alice": _entry("canvas", "999", "alice"),
           "smithjonesalice": _entry("canvas", "101", "smithjonesalice")}
    refused = {}
    matched, unmatched = match_roster([alice, bob], ["alice", "smithjonesalice", "bob"],
                                      lms=lms, refused=refused)
    assert matched == {0: "smithjonesalice", 1: "bob"} and unmatched == ["alice"]
    assert refused == {"alice": "Canvas user 999 ('alice') is not in the roster"}


def test_without_lms_numbers_only_an_id_a_roster_gave_is_trusted():
    """A roster without Canvas ids cannot check a user id: an id the grading's roster gave
    (entry "roster") is matched by name; an LMS name graded without a roster is not; a
    submission refused when graded never is."""
    roster = [Student("Smith-Jones, Alice", "alice"), Student("Brown, Bob", "bob"),
              Student("Carol", "carol")]
    lms = {"alice": _entry("canvas", "999", "alice"),
           "bob": _entry("canvas", "102", "brownbob", roster=True),
           "carol": _entry("canvas", "103", "carol",
                           problem="Canvas user 103 ('carol') is not in the roster")}
    refused = {}
    matched, unmatched = match_roster(roster, list(lms), lms=lms, refused=refused)
    assert matched == {1: "bob"} and unmatched == ["alice", "carol"]
    assert "without --roster" in refused["alice"] and "no Canvas ID" in refused["alice"]
    assert refused["carol"] == "refused when graded: Canvas user 103 ('carol') is not in the roster"


def test_a_roster_giving_one_participant_number_to_two_students_is_an_error():
    roster = [Student("A", "a", participant="5001"), Student("B", "b", participant="5001")]
    with pytest.raises(ValueError, match="Moodle number 5001 to two students"):
        match_roster(roster, ["x"], lms={"x": _entry("moodle", "5001", "A")})


def test_find_says_why_a_download_name_matches_nobody():
    by_id = Roster([Student("Smith, Alice", "a", lms_id="7")])
    assert by_id.find("canvas", "8", "smithalice") == (None, "is not in the roster")
    by_name = Roster([Student("Brown, Bob", "b1"), Student("Brown, Bob", "b2")])
    student, why = by_name.find("moodle", "5002", "Bob Brown")
    assert student is None and "shares the name with 2 roster rows" in why
    student, why = by_name.find("moodle", "5003", "Eve Evans")
    assert student is None and "no row has the name" in why
    rene = Student("Ren\u00e9 Roe", "r")
    assert Roster([rene]).find("moodle", "1", "RENE\u0301  ROE") == (rene, "")  # folded
