"""Submission times (grading/intake/times.py): who says when a student handed in, and what is
impossible.

Expected times are written out by hand; the "impossible" bounds are the real ones (UTC offsets
lie within 14 hours; no submission predates 2000 or comes after next year).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import zipfile

import pytest

from mlcourse_utils.grading.graded.out import OutFolder
from mlcourse_utils.grading.intake.collect import collect
from mlcourse_utils.grading.intake.submissions import Submission, read_submission, refused
from mlcourse_utils.grading.intake.times import (
    LMS_SOURCE,
    parse_time,
    read_times,
    time_in_submission,
)

BERLIN_WINTER = dt.timezone(dt.timedelta(hours=1))


@pytest.mark.parametrize("text,expected", [
    ("2026-03-02 23:59:00+01:00", dt.datetime(2026, 3, 2, 23, 59, tzinfo=BERLIN_WINTER)),
    ("2026-03-02 10:00:00.123456 UTC", dt.datetime(2026, 3, 2, 10, 0, 0, 123456,
                                                   tzinfo=dt.UTC)),
    ("2026-03-02T10:00", dt.datetime(2026, 3, 2, 10, 0)),  # naive: the configured zone
])
def test_times_are_read_as_nbgrader_and_iso_write_them(text, expected):
    assert parse_time(text) == (expected, None)


@pytest.mark.parametrize("text,reason", [
    ("2026-03-02 10:00+15:00", "UTC offset is impossible"),
    ("1999-12-31 23:59+00:00", "year 1999 is impossible"),
    (f"{dt.datetime.now(dt.UTC).year + 2}-01-01 00:00+00:00", "is impossible"),
    ("yesterday-ish", "is not a date and time"),
    ("", "is not a date and time"),
])
def test_an_impossible_time_is_a_reason_not_a_time(text, reason):
    when, problem = parse_time(text)
    assert when is None and reason in problem


def _csv(tmp_path, text):
    path = tmp_path / "times.csv"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_times_file_per_assignment_and_for_all(tmp_path):
    times = read_times(_csv(tmp_path, "student_id,submitted_at,assignment\n"
                                      "Alice,2026-03-03 10:00+01:00,mle\n"
                                      "bob,2026-03-01 09:00+00:00,\n"
                                      "'=cmd,2026-03-01 09:00+00:00,mle\n"))
    assert times.source == "times.csv"
    # Ids are compared lower-cased; a row without an assignment holds for every assignment.
    assert times.lookup("mle", ["alice"]) == (
        dt.datetime(2026, 3, 3, 10, 0, tzinfo=BERLIN_WINTER), None)
    assert times.lookup("gda", ["bob"])[0] == dt.datetime(2026, 3, 1, 9, 0, tzinfo=dt.UTC)
    assert times.lookup("gda", ["alice"]) == (None, None)
    # The quote csv_text puts before a formula character is undone.
    assert times.lookup("mle", ["=cmd"])[0] is not None


def test_two_different_times_for_one_student_are_that_students_problem(tmp_path):
    times = read_times(_csv(tmp_path, "student_id,submitted_at\n"
                                      "alice,2026-03-03 10:00+01:00\n"
                                      "alice,2026-03-04 10:00+01:00\n"
                                      "bob,1900-01-01 00:00+00:00\n"
                                      "carol,2026-03-03 10:00+01:00\n"))
    assert times.lookup("mle", ["alice"]) == (None, "times.csv gives two different times")
    assert "1900" in times.lookup("mle", ["bob"])[1]
    assert times.lookup("mle", ["carol"])[1] is None


@pytest.mark.parametrize("text,message", [
    ("id,time\na,2026-03-03\n", "needs the columns student_id and submitted_at"),
    (b"\xff\xfe\x00bad", "not a UTF-8 CSV"),
])
def test_an_unusable_times_file_is_a_value_error(tmp_path, text, message):
    path = tmp_path / "times.csv"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(ValueError, match=message):
        read_times(path)
    with pytest.raises(ValueError, match="cannot be read"):
        read_times(tmp_path / "missing.csv")


def test_a_time_inside_a_submission_timestamp_then_file_time(tmp_path):
    nb = tmp_path / "alice" / "mle.ipynb"
    nb.parent.mkdir()
    nb.write_text("{}")
    stamp = dt.datetime(2026, 3, 1, 12, 0, tzinfo=dt.UTC).timestamp()
    os.utime(nb, (stamp, stamp))
    assert _when(read_submission(nb)) == ("2026-03-01T12:00:00+00:00", "file time", "")
    (nb.parent / "timestamp.txt").write_text("2026-03-02 08:30:00+01:00")
    assert _when(read_submission(nb)) == ("2026-03-02T08:30:00+01:00", "timestamp.txt", "")
    (nb.parent / "timestamp.txt").write_text("2026-03-02 08:30:00+20:00")
    when, source, problem = _when(read_submission(nb))
    assert (when, source) == (None, "none")
    assert problem.startswith("timestamp.txt: the UTC offset is impossible")
    (nb.parent / "timestamp.txt").write_text("  \n")  # empty: the file's time
    assert _when(read_submission(nb))[1] == "file time"
    assert time_in_submission(None, None) == (None, "none", "")


def _when(submission):
    return submission.time, submission.time_source, submission.time_problem


def test_timestamps_json_keeps_each_students_source_and_problem(tmp_path):
    good = tmp_path / "in" / "good" / "mle.ipynb"
    bad = tmp_path / "in" / "bad" / "mle.ipynb"
    for nb in (good, bad):
        nb.parent.mkdir(parents=True)
        nb.write_text("{}")
    (bad.parent / "timestamp.txt").write_text("1970-01-01 00:00:00+00:00")
    download = tmp_path / "canvas.zip"  # the LMS's record of the time, and its late mark
    with zipfile.ZipFile(download, "w") as z:
        z.writestr(zipfile.ZipInfo("x_late_1_2_mle.ipynb", (2026, 3, 2, 10, 0, 0)), "{}")
    found = {"good": read_submission(good, "good"), "bad": read_submission(bad, "bad"),
             "gone": Submission("gone"), "link": refused("link", "a link"),
             **collect("mle", download, "mle.ipynb").found}
    out = tmp_path / "out"
    out.mkdir()
    OutFolder(out).write_timestamps(found)
    data = json.loads((out / "timestamps.json").read_text())
    assert data["good"]["source"] == "file time" and data["good"]["submitted"] is True
    assert data["bad"]["time"] is None and "1970" in data["bad"]["problem"]
    assert data["gone"] == {"submitted": False, "time": None, "source": "none"}
    assert data["link"]["submitted"] is False
    assert data["x"] == {"submitted": True, "time": "2026-03-02T10:00:00",
                         "source": LMS_SOURCE, "lms_late": True}
    # Shards are joined into one file, sorted.
    other = tmp_path / "other"
    other.mkdir()
    (other / "timestamps.json").write_text(json.dumps({"aaa": {"submitted": False}}))
    merged = tmp_path / "merged"
    merged.mkdir()
    OutFolder(merged).merge_timestamps(map(OutFolder, [out, other, tmp_path / "no-such-shard"]))
    joined = json.loads((merged / "timestamps.json").read_text())
    assert list(joined) == sorted(["aaa", *data]) and joined["aaa"] == {"submitted": False}
