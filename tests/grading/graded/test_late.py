"""The late policy (grading/graded/late.py): due dates, extensions, the penalty and the late record.

Penalties are worked out by hand: each started day after the deadline plus grace costs
``percent_per_day`` of the points earned, up to ``max_percent``.
"""

from __future__ import annotations

import datetime as dt

import pytest

import assignment_support as sup
from mlcourse_utils.grading.graded.late import (
    Cell,
    LatePolicy,
    cells,
    read_config,
    read_late_notes,
    write_late_notes,
)
from mlcourse_utils.grading.graded.model import GradedFolder, Total
from mlcourse_utils.grading.intake.roster import Student
from mlcourse_utils.grading.intake.times import LMS_SOURCE

UTC = dt.UTC
DUE = dt.datetime(2026, 3, 2, 23, 59, tzinfo=UTC)


@pytest.mark.parametrize("late_by,expected", [
    (dt.timedelta(0), (0.0, 0)),
    (dt.timedelta(minutes=10), (0.0, 0)),               # within the grace
    (dt.timedelta(minutes=11), (10.0, 1)),              # one started day
    (dt.timedelta(days=1, minutes=10), (10.0, 1)),      # exactly one day after the grace
    (dt.timedelta(days=1, minutes=11), (20.0, 2)),
    (dt.timedelta(days=30), (50.0, 30)),                # capped
    (-dt.timedelta(days=3), (0.0, 0)),                  # early
])
def test_penalty_per_started_day_after_the_grace(late_by, expected):
    policy = LatePolicy(10.0, 50.0, dt.timedelta(minutes=10))
    assert policy.percent(DUE + late_by, DUE) == expected


def test_no_time_or_no_deadline_is_no_penalty():
    policy = LatePolicy(10.0)
    assert policy.percent(None, DUE) == (0.0, 0)
    assert policy.percent(DUE + dt.timedelta(days=5), None) == (0.0, 0)


def _config(tmp_path, text):
    path = tmp_path / "due.toml"
    path.write_text(text, encoding="utf-8")
    return read_config(path)


def test_extensions_by_date_or_days_and_naive_times_in_the_zone(tmp_path):
    config = _config(tmp_path, 'timezone = "Europe/Berlin"\n'
                               '[late_penalty]\npercent_per_day = 5\ngrace_minutes = 1\n'
                               '[assignments.mle]\ndue = 2026-03-02T23:59:00\n'
                               '[assignments.mle.extensions]\n'
                               'Alice = 2026-03-04T12:00:00+00:00\n"bob@uni.example" = 2\n')
    assert config.late == LatePolicy(5.0, 100.0, dt.timedelta(minutes=1))
    # A due date without a zone is in the configured zone (CET, UTC+1 in March).
    due = config.deadline("mle", ["carol"])
    assert due.utcoffset() == dt.timedelta(hours=1) and due.hour == 23
    assert config.deadline("mle", ["alice"]) == dt.datetime(2026, 3, 4, 12, tzinfo=UTC)
    assert config.deadline("mle", ["bob", "bob@uni.example"]) == due + dt.timedelta(days=2)
    assert config.deadline("gda", ["alice"]) is None
    assert read_config(None).late.percent(DUE + dt.timedelta(days=9), DUE)[0] == 0.0  # no rule


@pytest.mark.parametrize("text,message", [
    ("[late_penalty]\npercent_per_day = -5\n", "late_penalty.percent_per_day must be a number"),
    ('timezone = "Mars/Olympus"\n', "unknown timezone"),
    ("[assignments.mle]\ndue = 'soon'\n", "assignments.mle.due must be a date and time"),
    ("assignments = 3\n[x\n", "not valid TOML"),
    ("[assignments]\nmle = 3\n", r"\[assignments.mle\] must be a table"),
])
def test_a_bad_configuration_names_the_setting(tmp_path, text, message):
    with pytest.raises(ValueError, match=message):
        _config(tmp_path, text)


def test_cells_apply_the_penalty_to_the_points_earned(tmp_path):
    """alice: 2 started days late by the LMS's time (20 % of 8 = 6.4); bob: on time; carol:
    submitted nothing (zero with missing="zero"); dave: an impossible time (no penalty, the
    reason kept); the roster's third student has no graded folder."""
    config = _config(tmp_path, "[late_penalty]\npercent_per_day = 10\n"
                               "[assignments.mle]\ndue = 2026-03-02T23:59:00+00:00\n")
    earned = {"alice": 8.0, "bob": 10.0, "carol": 0.0, "dave": 5.0}
    graded = GradedFolder(
        "mle", tmp_path, 10.0, totals={s: Total(p, 10.0) for s, p in earned.items()},
        times={"alice": {"submitted": True, "time": "2026-03-04T10:00:00+00:00",
                         "source": LMS_SOURCE},
               "bob": {"submitted": True, "time": "2026-03-02T10:00:00+00:00",
                       "source": LMS_SOURCE},
               "carol": {"submitted": False},
               "dave": {"submitted": True, "time": "2026-03-05T10:00+30:00",
                        "source": LMS_SOURCE}})
    roster = [Student("A", "alice"), Student("B", "bob"), Student("C", "carol"),
              Student("D", "dave"), Student("E", "eve")]
    found, late, undated, problems, sources = cells(
        graded, {0: "alice", 1: "bob", 2: "carol", 3: "dave"}, roster, config, "zero")
    assert found[0].score == pytest.approx(6.4) and found[0].days_late == 2
    assert found[1].score == 10.0 and found[1].penalty == 0
    assert found[2] == Cell(0.0) and found[4] == Cell(0.0)
    assert found[3].score == 5.0 and "UTC offset" in problems["dave"]
    assert list(late) == ["alice"] and undated == ["dave"]
    assert sources == {LMS_SOURCE: 2}


def test_the_late_record_round_trips_and_a_broken_one_is_empty(tmp_path):
    cell = Cell(7.2, 8.0, 10.0, 1, "2026-03-03 10:00+01:00", "2026-03-02 23:59+01:00", "t.csv")
    path = tmp_path / "late.json"
    write_late_notes(path, {"alice": cell}, 10.0)
    notes = read_late_notes(path)
    assert notes == {"alice": {**cell.__dict__, "max_score": 10.0}}
    write_late_notes(path, {}, 10.0)  # the next export: nobody late
    assert read_late_notes(path) == {}
    path.write_text("[not, json")
    assert read_late_notes(path) == {}
    assert read_late_notes(tmp_path / "none.json") == {}


def test_the_documented_example_is_read_as_its_comments_say(capsys):
    """examples/due.toml (which `mlcourse export --help` points to) goes through the export's
    own parser and means what its comments say, worked out by hand: 10 % per started day after
    10 minutes' grace, capped at 50 %; mle due 23:59 at +01:00, alice's new deadline two days
    later, bob@uni.example two extra days; bayes due at 23:59 Berlin time (CET, +01:00)."""
    from mlcourse_utils import cli
    from mlcourse_utils.grading.lms.export import CANVAS_COLUMN

    with pytest.raises(SystemExit):
        cli.main(["export", "--help"])
    assert "examples/due.toml" in " ".join(capsys.readouterr().out.split())
    config = read_config(sup.ROOT / "examples" / "due.toml")
    assert config.late == LatePolicy(10.0, 50.0, dt.timedelta(minutes=10))
    cet = dt.timezone(dt.timedelta(hours=1))
    due = dt.datetime(2026, 3, 2, 23, 59, tzinfo=cet)
    assert config.deadline("mle", ["carol"]) == due
    assert config.deadline("mle", ["ALICE"]) == dt.datetime(2026, 3, 4, 23, 59, tzinfo=cet)
    assert config.deadline("mle", ["Bob@Uni.Example"]) == due + dt.timedelta(days=2)
    assert config.deadline("bayes", ["carol"]) == dt.datetime(2026, 3, 16, 23, 59, tzinfo=cet)
    # 1 day and 11 minutes late: 2 started days after the grace, 20 %; a month late: the cap.
    assert config.late.percent(due + dt.timedelta(days=1, minutes=11), due) == (20.0, 2)
    assert config.late.percent(due + dt.timedelta(days=30), due)[0] == 50.0
    for name in ("mle", "bayes"):  # columns the export accepts, for assignments the course has
        assert CANVAS_COLUMN.match(config.assignments[name]["canvas_column"])
        assert (sup.ROOT / "solutions" / name).is_dir()
