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


def test_the_run_ends_with_the_ids_not_the_one_handed_in_under():
    """By hand: s2 typed s7 and s9 typed s1 (another id), s3's id cell is empty, s4 has none,
    s5 is fine, s6 was not read; 12 others typed another id (the line names 10, counts 2)."""
    from mlcourse_utils.grading.engine.batch import id_summary
    from mlcourse_utils.grading.graded.results import GradeResult, IdCheck

    checks = {"s2": IdCheck("s7", False, "other"), "s9": IdCheck("s1", False, "other"),
              "s3": IdCheck(None, False, "empty"), "s4": IdCheck(None, False, "missing"),
              "s5": IdCheck("s5", True), "s6": None}
    results = {}
    for s, c in checks.items():
        results[s] = GradeResult(s, "demo")
        results[s].id_check = c
    assert id_summary(results) == [
        "ids: 2 notebooks carry another id than the one they were handed in under (graded "
        "with the roster id's variant; see their feedback): s2 (typed s7), s9 (typed s1)",
        "ids: 2 notebooks without a course id in the id cell (graded with the roster id's "
        "variant): empty: s3; no id cell: s4"]
    assert id_summary({"s5": results["s5"], "s6": results["s6"]}) == []
    many = {f"t{k:02d}": GradeResult(f"t{k:02d}", "demo", id_check=IdCheck("x", False, "other"))
            for k in range(12)}
    (line,) = id_summary(many)
    assert line.startswith("ids: 12 notebooks carry") and line.endswith(
        "t09 (typed x) and 2 more")
