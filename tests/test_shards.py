"""`mlcourse grade --shard K/N` and `mlcourse grade-merge`: three shards joined equal one run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import assignment_support as sup
from mlcourse_utils.grading.engine.batch import in_shard, parse_shard

NAME = "mle"


def test_parse_shard_accepts_k_of_n_only():
    assert parse_shard("2/8") == (2, 8)
    for bad in ("0/3", "4/3", "x/3", "3", "1/2/3"):
        with pytest.raises(ValueError, match="shard"):
            parse_shard(bad)


def test_every_student_is_in_exactly_one_shard():
    students = [f"student{k:03d}" for k in range(300)] + ["=1+2", "caf\\xe9~1234abcd"]
    for n in (1, 2, 5):
        counts = [sum(in_shard(s, (k, n)) for k in range(1, n + 1)) for s in students]
        assert set(counts) == {1}
    sizes = [sum(in_shard(s, (k, 3)) for s in students) for k in (1, 2, 3)]
    assert min(sizes) > 60  # a hash spreads a class of 302 roughly evenly


@pytest.mark.slow
@pytest.mark.xdist_group("grade-shards")
def test_three_shards_merged_equal_one_run(tmp_path, monkeypatch):
    v = sup.variants(NAME)
    solution = sup.solution_answers(NAME)
    subs = tmp_path / "subs"
    sup.write_submission(subs, "solution", NAME, nb=sup.make_submission(NAME, solution))
    sup.write_submission(subs, "release", NAME, nb=sup.release_notebook(NAME))
    for task, wrongs in list(v.WRONG.items())[:3]:
        sup.write_submission(subs, f"wrong_{task}", NAME,
                             nb=sup.make_submission(NAME, {**solution, task: wrongs[0][0]}))
    for label, answers in list(v.HONEST.items())[:1]:
        sup.write_submission(subs, f"honest_{label}", NAME,
                             nb=sup.make_submission(NAME, {**solution, **answers}))
    sup.write_submission(subs, "=broken", NAME, raw=b"{ not json")
    (subs / "nothing").mkdir()
    args = ("--jobs", "2", "--timeout", "20")
    whole = sup.grade(NAME, subs, tmp_path / "whole", *args)
    assert whole.returncode == 0, whole.stderr[-2000:]
    shards = []
    for k in (1, 2, 3):
        out = tmp_path / f"shard{k}"
        proc = sup.grade(NAME, subs, out, *args, "--shard", f"{k}/3")
        assert proc.returncode == 0, proc.stderr[-2000:]
        shards.append(out)
    graded = [set(sup.read_scores(s)[0]) for s in shards]
    assert sum(map(len, graded)) == 8 and len(set.union(*graded)) == 8
    merged = tmp_path / "merged"
    proc = subprocess.run([sup.MLCOURSE, "grade-merge", *map(str, shards), "--out", str(merged)],
                          capture_output=True, text=True, cwd=sup.ROOT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    for name in ("grades.csv", "task_scores.csv"):
        assert (merged / name).read_bytes() == (tmp_path / "whole" / name).read_bytes(), name
    assert sorted(p.name for p in (merged / "feedback").iterdir()) == \
        sorted(p.name for p in (tmp_path / "whole" / "feedback").iterdir())
    assert sorted(p.name for p in (merged / "autograded").iterdir()) == \
        sorted(p.name for p in (tmp_path / "whole" / "autograded").iterdir())

    from nbgrader.api import Gradebook

    from mlcourse_utils.grading.graded.gradebook import gradebook_id

    # (nbgrader runs `alembic` from PATH to check the database schema)
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    grades, _ = sup.read_scores(merged)
    with Gradebook(f"sqlite:///{merged / 'gradebook.db'}") as gb:
        for student, (score, _) in grades.items():
            raw = student[1:] if student.startswith("'=") else student
            assert gb.find_submission(NAME, gradebook_id(raw)).score == pytest.approx(score)

    # Merged into a folder that holds a record of overrides: the joined results, the grade
    # files, the page and nbgrader's gradebook all take it (the release scores 0 otherwise).
    again = tmp_path / "again"
    again.mkdir()
    task = next(iter(solution))  # the first task
    (again / "overrides.csv").write_text("student_id,task,points,reason\n"
                                         f"release,{task},1.5,regrade: a late e-mail\n")
    proc = subprocess.run([sup.MLCOURSE, "grade-merge", *map(str, shards), "--out", str(again)],
                          capture_output=True, text=True, cwd=sup.ROOT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "overrides: 1 override in" in proc.stderr
    grades, tasks = sup.read_scores(again)
    assert grades["release"][0] == 1.5 and tasks["release"][task][0] == 1.5
    page = (again / "feedback" / "release.html").read_text()
    assert "set this task's points to 1.5" in page and "regrade: a late e-mail" in page
    with Gradebook(f"sqlite:///{again / 'gradebook.db'}") as gb:
        assert gb.find_submission(NAME, "release").score == pytest.approx(1.5)


def test_merge_refuses_overlapping_folders(tmp_path):
    from mlcourse_utils.grading.engine.merge import merge_outputs

    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "results.json").write_text(
        '{"assignment": "mle", "students": {"x": {"student": "x", "assignment": "mle", '
        '"tests": [], "reasons": {}, "notes": [], "cell_errors": [], "cell_warnings": [], '
        '"output": "", "seconds": 0}}}')
    with pytest.raises(ValueError, match="again"):
        merge_outputs([tmp_path / "a", tmp_path / "a"], tmp_path / "out", root=sup.ROOT)
    with pytest.raises(ValueError, match="not a results file"):
        merge_outputs([tmp_path / "missing"], tmp_path / "out", root=sup.ROOT)
