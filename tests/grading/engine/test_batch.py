"""Grading a class (grading/engine/batch.py), the parts that need no sandbox: what it says about the
defences and about who it is waiting for.

Shards are tested in test_shards, the grading secret in test_integrity; whole batches are
graded in test_handin, test_shards and test_hostile.
"""

from __future__ import annotations

import pytest

from mlcourse_utils.grading.engine.batch import describe_defences, imported_by, waiting_on
from mlcourse_utils.grading.engine.options import GradingOptions
from mlcourse_utils.grading.sandbox.channel import DEFENCES, IN_WORDS

#: The defences' names that are not plain words ("network" is).
JARGON = [name for name in DEFENCES if name != "network"]


def test_missing_defences_are_said_in_one_plain_sentence():
    """By default one sentence, in words (no defence's name), naming what is missing and where
    to read more; --verbose adds the names as results.json records them."""
    found = {**dict.fromkeys(DEFENCES, True), "seccomp": False, "memory_cgroup": False}
    (line,) = describe_defences(found)
    assert "without a filter on dangerous system calls and a memory limit that counts shared " \
           "memory" in line
    assert f"2 of {len(DEFENCES)} defences missing" in line and "--require-isolation" in line
    assert not any(name in line for name in JARGON)
    sentence, held, missing = describe_defences(found, verbose=True)
    assert sentence == line
    assert held == "defences in force: " + ", ".join(
        k for k in DEFENCES if k not in ("seccomp", "memory_cgroup"))
    assert missing.startswith("defences MISSING: seccomp (")
    assert f"memory_cgroup ({DEFENCES['memory_cgroup']})" in missing


def test_every_defence_in_force_is_one_sentence_and_each_has_words():
    (line,) = describe_defences(dict.fromkeys(DEFENCES, True))
    assert f"all {len(DEFENCES)} defences in force" in line and "--verbose" in line
    assert not any(name in line for name in JARGON)
    assert set(IN_WORDS) == set(DEFENCES)  # a new defence needs its words
    (one,) = describe_defences({"seccomp": False})
    assert "(1 of 1 defence missing;" in one


def test_the_progress_line_names_the_student_graded_longest():
    """Nobody past 10 s: nothing; then the one who started first, with whole 5 s steps, and
    how many others are past 10 s as well."""
    assert waiting_on({"ann": 100.0, "bob": 105.0}, now=109.0) == ""
    assert waiting_on({"ann": 100.0, "bob": 105.0}, now=112.0) == "waiting for ann (10 s)"
    assert waiting_on({"ann": 100.0, "bob": 101.0, "cy": 160.0}, now=163.9) == \
        "waiting for ann (60 s) and 1 other over 10 s"
    assert waiting_on({}, now=1e9) == ""


def test_require_isolation_stops_before_any_student_is_graded(tmp_path, monkeypatch):
    from mlcourse_utils.grading.engine import batch
    from mlcourse_utils.grading.sandbox import channel


    held = dict.fromkeys(channel.DEFENCES, True)
    monkeypatch.setattr(batch.channel, "defences", lambda *a, **k: {**held, "seccomp": False})
    (tmp_path / "subs" / "alice").mkdir(parents=True)
    with pytest.raises(batch.IsolationError, match="seccomp"):
        batch.grade_class("mle", tmp_path / "subs", tmp_path / "out",
                          GradingOptions(require_isolation=True, progress=False))
    assert not (tmp_path / "out").exists()
    (line,) = batch.describe_defences({**held, "cpu_cgroup": False})
    assert "without a limit of one CPU core" in line and "--require-isolation" in line


def test_the_warm_up_imports_the_modules_the_instructors_cells_import():
    sources = ["import numpy as np\nimport os.path, math",
               "from mlcourse_utils import mle as ref\nfrom . import sibling\n"
               "from scipy.special import *\ndef f():\n    import json",
               "def broken(:"]
    assert imported_by(sources) == ["numpy", "os.path", "math", "mlcourse_utils",
                                    "mlcourse_utils.mle", "scipy.special", "json"]


def test_intake_json_records_the_paragraphs_lists_and_shards_merge_to_one(tmp_path):
    """Each shard writes its own students' LMS entries and the whole download's lists (every
    shard read all of it); grade-merge keeps every student and the lists once."""
    import json

    from mlcourse_utils.grading.engine.batch import _merge_intake, write_intake
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
