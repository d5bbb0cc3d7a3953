"""Grading a class (grading/engine/batch.py), the parts that need no sandbox: a missing defence
with --require-isolation stops it before any student is graded.

Shards are tested in test_shards and test_merge, the grading secret in test_integrity; whole
batches are graded in test_handin, test_shards and test_hostile.
"""

from __future__ import annotations

import pytest

from mlcourse_utils.grading.engine.options import GradingOptions


def test_require_isolation_stops_before_any_student_is_graded(tmp_path, monkeypatch):
    from mlcourse_utils.grading.engine import batch, defences
    from mlcourse_utils.grading.sandbox import channel


    held = dict.fromkeys(channel.DEFENCES, True)
    monkeypatch.setattr(channel, "defences", lambda *a, **k: {**held, "seccomp": False})
    (tmp_path / "subs" / "alice").mkdir(parents=True)
    with pytest.raises(defences.IsolationError, match="seccomp"):
        batch.grade_class("mle", tmp_path / "subs", tmp_path / "out",
                          GradingOptions(require_isolation=True, progress=False))
    assert not (tmp_path / "out").exists()
    (line,) = defences.describe_defences({**held, "cpu_cgroup": False})
    assert "without a limit of one CPU core" in line and "--require-isolation" in line
