"""Grading a class (grading/batch.py), the parts that need no sandbox: the defences report.

Shards are tested in test_shards, the grading secret in test_integrity; whole batches are
graded in test_handin, test_shards and test_hostile.
"""

from __future__ import annotations

import pytest

from mlcourse_utils.grading.batch import describe_defences
from mlcourse_utils.grading.sandbox import DEFENCES


def test_the_defences_report_names_what_is_missing_and_why():
    found = {"namespaces": True, "seccomp": False, "memory_cgroup": False}
    held, missing = describe_defences(found)
    assert held == "defences in force: namespaces"
    assert missing.startswith("defences MISSING: seccomp (")
    assert f"memory_cgroup ({DEFENCES['memory_cgroup']})" in missing
    assert "--require-isolation" in missing


def test_all_defences_in_force_is_one_line_and_none_says_none():
    assert describe_defences(dict.fromkeys(DEFENCES, True)) == [
        "defences in force: " + ", ".join(DEFENCES)]
    assert describe_defences({"seccomp": False})[0] == "defences in force: none"


def test_require_isolation_stops_before_any_student_is_graded(tmp_path, monkeypatch):
    from mlcourse_utils.grading import batch, sandbox


    held = dict.fromkeys(sandbox.DEFENCES, True)
    monkeypatch.setattr(batch.sandbox, "defences", lambda *a, **k: {**held, "seccomp": False})
    (tmp_path / "subs" / "alice").mkdir(parents=True)
    with pytest.raises(batch.IsolationError, match="seccomp"):
        batch.grade_class("mle", tmp_path / "subs", tmp_path / "out", require_isolation=True,
                          progress=False)
    assert not (tmp_path / "out").exists()
    lines = batch.describe_defences({**held, "cpu_cgroup": False})
    assert lines[0].startswith("defences in force: namespaces")
    assert "cpu_cgroup (a CPU cgroup" in lines[1] and "--require-isolation" in lines[1]
