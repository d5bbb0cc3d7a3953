"""The sandbox defences before grading (grading/engine/defences.py): what is said about them, and
what the grader imports while they are probed. --require-isolation is tested in test_batch."""

from __future__ import annotations

from mlcourse_utils.grading.engine.defences import describe_defences, imported_by
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


def test_the_warm_up_imports_the_modules_the_instructors_cells_import():
    sources = ["import numpy as np\nimport os.path, math",
               "from mlcourse_utils import mle as ref\nfrom . import sibling\n"
               "from scipy.special import *\ndef f():\n    import json",
               "def broken(:"]
    assert imported_by(sources) == ["numpy", "os.path", "math", "mlcourse_utils",
                                    "mlcourse_utils.mle", "scipy.special", "json"]
