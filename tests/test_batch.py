"""Grading a class (grading/batch.py), the parts that need no sandbox: what it says about the
defences and about who it is waiting for.

Shards are tested in test_shards, the grading secret in test_integrity; whole batches are
graded in test_handin, test_shards and test_hostile.
"""

from __future__ import annotations

import pytest

from mlcourse_utils.grading.batch import describe_defences, imported_by, waiting_on
from mlcourse_utils.grading.sandbox import DEFENCES, IN_WORDS

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
    from mlcourse_utils.grading import batch, sandbox


    held = dict.fromkeys(sandbox.DEFENCES, True)
    monkeypatch.setattr(batch.sandbox, "defences", lambda *a, **k: {**held, "seccomp": False})
    (tmp_path / "subs" / "alice").mkdir(parents=True)
    with pytest.raises(batch.IsolationError, match="seccomp"):
        batch.grade_class("mle", tmp_path / "subs", tmp_path / "out", require_isolation=True,
                          progress=False)
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
