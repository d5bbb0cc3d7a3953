"""What goes back to the LMS (grading/lms/export.py): grade files that land in the assignment's
column and find every student, and feedback files named for the LMS's bulk upload.

What each LMS's own file looks like (columns, ids, file names) is tested beside its module
(test_canvas.py, test_moodle.py); here the export whatever the LMS: late penalties, the
feedback pages written again, and who is exported (or not) and why. The graded folders here
are written by hand (conftest's ``write_graded``: results.json, feedback pages, intake.json):
no grading runs.
"""

from __future__ import annotations

import json
import subprocess

import pytest

import assignment_support as sup
from mlcourse_utils import cli
from mlcourse_utils.grading.engine.batch import write_intake
from mlcourse_utils.grading.graded.late import Cell
from mlcourse_utils.grading.graded.out import OutFolder
from mlcourse_utils.grading.intake.collect import collect
from mlcourse_utils.grading.intake.roster import Roster, read_roster
from mlcourse_utils.grading.intake.times import LMS_SOURCE
from mlcourse_utils.grading.lms import export
from mlcourse_utils.grading.notebook import load_assignment

ASSIGNMENT = load_assignment("mle", sup.ROOT)
ROSTER = sup.CANVAS_ROSTER



def test_times_of_the_lms_download_are_used_and_its_late_marks_reported(tmp_path, write_graded):
    """A time the LMS's zip recorded counts like --times (naive: the configured zone)."""
    times = {"alice": {"submitted": True, "time": "2026-03-04T10:00:00",
                       "source": LMS_SOURCE, "lms_late": True},
             "bob": {"submitted": True, "time": None, "source": "none", "lms_late": True}}
    write_graded(tmp_path / "graded", {"alice": 1.0, "bob": 1.0}, times=times)
    (tmp_path / "due.toml").write_text('timezone = "Europe/Berlin"\n[late_penalty]\n'
                                       'percent_per_day = 10\n[assignments.mle]\n'
                                       'due = 2026-03-02T23:59:00+01:00\n'
                                       'canvas_column = "MLE (1)"\n')
    rows, report = sup.export_rows(write_graded, tmp_path,
                                   "canvas", config_path=tmp_path / "due.toml")
    body = {r[0]: r for r in rows[2:]}
    # 2 days late (10:00 on the 4th in Berlin, due 23:59 on the 2nd): 20 % off.
    assert float(body["Smith-Jones, Alice"][5]) == pytest.approx(ASSIGNMENT.max_score * 0.8,
                                                                 abs=0.005)
    assert report.late["mle"]["alice"].source == LMS_SOURCE
    assert float(body["Brown, Bob"][5]) == ASSIGNMENT.max_score  # no time: no penalty
    assert report.lms_late["mle"] == ["alice", "bob"]
    # What was done about each file the LMS marked late, in words that match the file.
    assert report.lms_late_done["mle"] == {
        "alice": f"penalised 20 % (time from {LMS_SOURCE})",
        "bob": "no penalty: no submission time (give --times, or grade from a zip download "
               "that records the times)"}


def test_the_feedback_command_needs_lms_and_out_together(tmp_path, write_graded):
    graded = write_graded(tmp_path / "graded", {"alice": 1.0})
    proc = subprocess.run([sup.MLCOURSE, "feedback", str(graded), "--lms", "canvas"],
                          capture_output=True, text=True, cwd=sup.ROOT)
    assert proc.returncode == 2 and "--lms and --out go together" in proc.stderr


def test_a_late_penalty_section_survives_regenerated_feedback(tmp_path, write_graded):
    from mlcourse_utils.grading.reports.feedback import regenerate_feedback

    graded = write_graded(tmp_path / "graded", {"alice": 1.0})
    cell = Cell(ASSIGNMENT.max_score * 0.9, ASSIGNMENT.max_score, 10.0, 1,
                "2026-03-03 10:00+01:00", "2026-03-02 23:59+01:00", "times.csv")
    OutFolder(graded).write_late({"alice": cell}, ASSIGNMENT.max_score)
    done = regenerate_feedback(graded, sup.ROOT)
    page = (graded / "feedback" / "alice.html").read_text()
    assert page.count("Late submission") == 1 and "10 %" in page
    assert done.pages == [graded / "feedback" / "alice.html"]
    # No gradebook yet: the manual answers are listed as not graded, with their points.
    assert page.count('<span class="warn">not graded yet</span>') == len(ASSIGNMENT.manual)


def test_the_late_section_follows_the_last_export(tmp_path, write_graded):
    """An export writes the penalty into the late student's page through the page's template
    (escaped like the rest), and the next export, with an extension, takes it out again."""
    times = {"alice": {"submitted": True, "time": "2026-03-04T10:00:00",
                       "source": LMS_SOURCE}}
    write_graded(tmp_path / "graded", {"alice": 0.5, "bob": 1.0}, times=times)
    config = ('[late_penalty]\npercent_per_day = 10\n[assignments.mle]\n'
              'due = 2026-03-02T23:59:00+00:00\ncanvas_column = "MLE (1)"\n')
    (tmp_path / "due.toml").write_text(config)
    sup.export_rows(write_graded, tmp_path, "canvas", config_path=tmp_path / "due.toml")
    page = (tmp_path / "graded" / "feedback" / "alice.html").read_text()
    # 2 started days late (10:00 on the 4th, due 23:59 on the 2nd, UTC): 20 % of half the points.
    half = ASSIGNMENT.max_score / 2
    assert page.count("Late submission") == 1 and "20 %" in page
    assert f"{half:g} becomes <strong>{round(half * 0.8, 2):g} / " in page
    assert page.index("Late submission") < page.index("<table>")
    assert "Late submission" not in (tmp_path / "graded" / "feedback" / "bob.html").read_text()
    (tmp_path / "due.toml").write_text(config + "[assignments.mle.extensions]\nalice = 3\n")
    sup.export_rows(write_graded, tmp_path, "canvas", config_path=tmp_path / "due.toml")
    assert "Late submission" not in (tmp_path / "graded" / "feedback" / "alice.html").read_text()


def test_pages_that_cannot_be_written_again_leave_the_grade_file_standing(
        tmp_path, write_graded, monkeypatch):
    def fails(folder, root=None):
        raise ValueError("no source notebook of mle here")

    monkeypatch.setattr(export, "regenerate_feedback", fails)
    rows, report = sup.export_rows(write_graded, tmp_path, "canvas", canvas_assignment="MLE (1)")
    assert len(rows) == 4 and report.feedback_problems == {"mle": "no source notebook of mle here"}


# ------------------------------------------------------------------ who is who, as an attacker


def _download(folder, files):
    """An LMS download: ``{path in the download: tag}``, each file a tiny notebook."""
    for name, tag in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(json.dumps({"cells": [], "metadata": {"tag": tag},
                                               "nbformat": 4, "nbformat_minor": 5}))
    return folder


def _graded_from(write_graded, tmp_path, files, roster_text=None):
    """The graded folder `mlcourse grade` leaves after reading a download of ``files`` (with
    ``roster_text`` as --roster): the real intake (intake.json, timestamps.json), and every
    submission graded scores full marks, every refused one nothing. No sandbox runs."""
    download = _download(tmp_path / "download", files)
    roster = None
    if roster_text is not None:
        (tmp_path / "grading-roster.csv").write_text(roster_text)
        roster = Roster(read_roster(tmp_path / "grading-roster.csv"))
    intake = collect("mle", download, "mle.ipynb", roster)
    graded = write_graded(tmp_path / "graded",
                          {s: 1.0 if sub.submitted else 0.0 for s, sub in intake.found.items()})
    write_intake(graded, intake, list(intake.found))
    OutFolder(graded).write_timestamps(intake.found)
    return intake


def test_a_canvas_stranger_graded_as_alice_without_a_roster_is_not_exported_as_her(
        tmp_path, write_graded):
    """Graded without --roster, Canvas user 999 whose login is "alice" is graded as "alice",
    Alice's SIS login. The export checks intake.json: user 999 is not Alice (101), so her cell
    stays blank and the stranger is listed with the reason; bob, graded under Canvas's login
    "brownbob" (no roster id), is found by his user id 102."""
    intake = _graded_from(write_graded, tmp_path, {"alice_999_7001_mle.ipynb": "stranger",
                                                   "brownbob_102_9002_mle.ipynb": "bob"})
    assert set(intake.found) == {"alice", "brownbob"}  # no roster: the LMS's names
    rows, report = sup.export_rows(write_graded, tmp_path, "canvas", canvas_assignment="MLE (1)")
    body = {r[0]: r for r in rows[2:]}
    assert body["Smith-Jones, Alice"][5] == ""
    assert float(body["Brown, Bob"][5]) == ASSIGNMENT.max_score
    assert "Canvas user 999 ('alice') is not in the roster" in report.refused["mle"]["alice"]
    assert report.without_submission["mle"] == ["Smith-Jones, Alice"]
    assert report.without_roster["mle"] == []  # listed once, with the reason


def test_a_submitter_refused_when_graded_is_not_exported_even_when_the_roster_has_them(
        tmp_path, write_graded):
    """User 999 was not in the roster when graded (refused, zero): a later roster that has them
    does not turn that zero into their grade."""
    _graded_from(write_graded, tmp_path, {"stranger_999_7001_mle.ipynb": "stranger",
                                          "brownbob_102_9002_mle.ipynb": "bob"}, ROSTER)
    later = ROSTER + '"Stranger, S",999,S-9,stranger,A,s@uni.example\n'
    rows, report = sup.export_rows(write_graded, tmp_path,
                                   "canvas", later, canvas_assignment="MLE (1)")
    body = {r[0]: r for r in rows[2:]}
    assert body["Stranger, S"][5] == ""
    (why,) = report.refused["mle"].values()
    assert why == "refused when graded: Canvas user 999 ('stranger') is not in the roster"


WORKSHEET = """\
Identifier,Full name,Email address
Participant 5001,Alice Smith-Jones,alice@uni.example
Participant 5002,Bob Brown,bob@uni.example
"""


@pytest.mark.parametrize("roster", [WORKSHEET, "name,email\nAlice Smith-Jones,alice@uni.example"
                                               "\nBob Brown,bob@uni.example\n"])
def test_a_moodle_look_alike_of_alices_id_is_not_exported_as_her(tmp_path, write_graded, roster):
    """Graded without --roster, Moodle participant 5009 named "\uff21LICE@uni.example" (a
    full-width A) is graded under that name, which folds to Alice's e-mail. Against the
    worksheet, 5009 is nobody; against a list without participant numbers, an LMS name is no
    identity: either way Alice's cell stays blank and the reason is given."""
    name = "\uff21LICE@uni.example"
    _graded_from(write_graded, tmp_path, {
        f"{name}_5009_assignsubmission_file_/mle.ipynb": "stranger",
        "Bob Brown_5002_assignsubmission_file_/mle.ipynb": "bob"})
    rows, report = sup.export_rows(write_graded, tmp_path, "moodle", roster)
    body = {r[0]: r for r in rows[1:]}
    assert body["alice@uni.example"][-1] == ""
    why = report.refused["mle"][name]
    assert ("Moodle user 5009" in why and
            ("not in the roster" in why if "Identifier" in roster else "--roster" in why))
    if "Identifier" in roster:  # bob, graded as "Bob Brown", is found by his number
        assert float(body["bob@uni.example"][-1]) == ASSIGNMENT.max_score


def test_the_export_names_who_it_did_not_export_and_why(tmp_path, write_graded, capsys):
    _graded_from(write_graded, tmp_path, {"alice_999_7001_mle.ipynb": "stranger"})
    (tmp_path / "roster.csv").write_text(ROSTER)
    status = cli.main(["export", str(tmp_path / "graded"), "--format", "canvas", "--roster",
                       str(tmp_path / "roster.csv"), "--canvas-assignment", "MLE (1)", "--out",
                       str(tmp_path / "canvas.csv")])
    out = capsys.readouterr().out
    assert status == 0
    assert "mle: alice: not exported: Canvas user 999 ('alice') is not in the roster" in out
    assert "mle: 2 students of the roster without a submission" in out
    assert "wrote " in out and "canvas): 2 students of the roster" in out
