"""Joining the folders of shards (grading/engine/merge.py): the intake records and a teaching
assistant's work in the folder merged into. Whole shards are graded and joined in test_shards."""

from __future__ import annotations

import pytest

import assignment_support as sup
from mlcourse_utils.grading.notebook import load_assignment

ASSIGNMENT = load_assignment("mle", sup.ROOT)
GID = ASSIGNMENT.manual[0][0]


def test_intake_json_records_the_paragraphs_lists_and_shards_merge_to_one(tmp_path):
    """Each shard writes its own students' LMS entries and the whole download's lists (every
    shard read all of it); grade-merge keeps every student and the lists once."""
    import json

    from mlcourse_utils.grading.engine.batch import write_intake
    from mlcourse_utils.grading.engine.merge import _merge_intake
    from mlcourse_utils.grading.intake.collect import Intake
    from mlcourse_utils.grading.intake.submissions import LmsEntry

    lms = {s: LmsEntry("canvas", s, n) for s, n in (("alice", "101"), ("bob", "102"))}
    intake = Intake("canvas", {}, lms, ["notes.txt"], roster_size=3, matched=["alice", "bob"],
                    without_submission=["Never, Nobody"],
                    not_in_roster={"not-in-roster-canvas-999": "Canvas user 999 ('x')"})
    for shard, students in (("one", ["alice"]), ("two", ["bob"])):
        (tmp_path / shard).mkdir()
        write_intake(tmp_path / shard, intake, students)
    one = json.loads((tmp_path / "one" / "intake.json").read_text())
    assert list(one["students"]) == ["alice"] and one["matched"] == ["alice", "bob"]
    assert one["without_submission"] == ["Never, Nobody"] and one["roster"] is True
    (tmp_path / "merged").mkdir()
    _merge_intake([tmp_path / "one", tmp_path / "two"], tmp_path / "merged")
    merged = json.loads((tmp_path / "merged" / "intake.json").read_text())
    assert list(merged["students"]) == ["alice", "bob"]
    assert merged["students"]["bob"]["user_id"] == "102"
    assert merged["not_in_roster"] == {"not-in-roster-canvas-999": "Canvas user 999 ('x')"}
    assert merged["unmatched"] == ["notes.txt"]


def test_grade_merge_refuses_a_folder_with_a_teaching_assistants_work(tmp_path):
    from mlcourse_utils.grading.engine import merge
    from mlcourse_utils.grading.graded.out import OutFolder
    from mlcourse_utils.grading.graded.results import GradeResult

    shard = tmp_path / "shard"
    shard.mkdir()
    OutFolder(shard).write_results({"alice": GradeResult.zero("alice", ASSIGNMENT, "nothing")},
                                   ASSIGNMENT)
    out = tmp_path / "graded"
    (out / "manual").mkdir(parents=True)
    filled = f"student_id,grade_id,points,comment\nalice,{GID},1,\n"
    (out / "manual" / f"{GID}.csv").write_text(filled)
    with pytest.raises(ValueError, match=rf"merging would replace: .*{GID}\.csv.*--force"):
        merge.merge_outputs([shard], out, sup.ROOT)
    assert (out / "manual" / f"{GID}.csv").read_text() == filled
    assert sorted(p.name for p in out.iterdir()) == ["manual"]
