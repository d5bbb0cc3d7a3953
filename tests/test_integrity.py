"""Hidden inputs come from a grading secret, the student id and the test id.

The repository is public, so the development seed's hidden inputs are public too: a student can
compute the expected outputs with the reference and submit a lookup table. These tests build
exactly that submission and check that it earns the hidden points with the development seed
and loses them with a secret, that students get different inputs, and that re-grading with the
same secret reproduces every score.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import assignment_support as sup
from mlcourse_utils import information
from mlcourse_utils.grading import hidden_inputs, hidden_rng
from mlcourse_utils.grading.engine.batch import read_secret
from mlcourse_utils.grading.engine.checking import setup_names
from mlcourse_utils.grading.notebook import load_assignment

NAME, TASK = "information_theory", "entropy"
SECRET = "3f1c9a7be2d64f0aa51c8e27d9b04c66"

#: Shared by the recorder (here) and the lookup answer (in the sandbox): a call's key.
KEY_SOURCE = '''
import hashlib
import numpy as np

def _plain(x):
    if isinstance(x, np.ndarray):
        return ("array", x.tolist())
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        return repr(float(x))
    return repr(x)

def _key(args, kwargs):
    data = repr((_plain(list(args)), sorted((k, _plain(v)) for k, v in kwargs.items())))
    return hashlib.sha256(data.encode()).hexdigest()
'''


def _lookup_answer():
    """An `entropy` that knows the answers to every call the tests make with the public seed."""
    helpers = {}
    exec(KEY_SOURCE, helpers)
    table = {}

    def recorder(*args, **kwargs):
        value = information.entropy(*args, **kwargs)
        table[helpers["_key"](args, kwargs)] = np.asarray(value).tolist()
        return value

    assignment = load_assignment(NAME, sup.ROOT)
    for test in (t for t in assignment.tests if t.task == TASK):
        namespace = setup_names(assignment, "anyone")  # STUDENT_ID, as the grader binds it
        for source in assignment.setup:
            exec(source, namespace)
        namespace[TASK] = recorder
        with hidden_inputs(None, "anyone"):
            exec(test.source, namespace)
    assert len(table) > 8, "the recorder should have seen the visible and the hidden calls"
    return (KEY_SOURCE + "\nimport json\n"
            f"_TABLE = json.loads({json.dumps(table)!r})\n"
            f"def {TASK}(*args, **kwargs):\n"
            "    return _TABLE.get(_key(args, kwargs), 0.0)\n")


def test_hidden_rng_depends_on_secret_student_and_test():
    def draw(secret, student, test="test_x_hidden"):
        with hidden_inputs(secret, student):
            return hidden_rng(test).random(4)

    s = SECRET.encode()
    np.testing.assert_array_equal(draw(s, "alice"), draw(s, "alice"))  # re-grading reproduces
    assert not np.allclose(draw(s, "alice"), draw(s, "bob"))            # students differ
    assert not np.allclose(draw(s, "alice"), draw(b"another term's secret", "alice"))
    assert not np.allclose(draw(s, "alice"), draw(s, "alice", "test_y_hidden"))
    # Without a secret every student gets the public development inputs.
    np.testing.assert_array_equal(draw(None, "alice"), draw(None, "bob"))
    np.testing.assert_array_equal(draw(None, "alice"), hidden_rng("test_x_hidden").random(4))


def test_secret_file_must_hold_enough_bytes(tmp_path):
    short = tmp_path / "short.txt"
    short.write_text("abc\n")
    with pytest.raises(ValueError, match="at least"):
        read_secret(short)
    good = tmp_path / "secret.txt"
    good.write_text(SECRET + "\n")
    assert read_secret(good) == SECRET.encode()
    with pytest.raises(ValueError, match="secret-file"):
        read_secret(tmp_path / "missing.txt")


@pytest.mark.slow
@pytest.mark.xdist_group("grade-integrity")
def test_lookup_table_beats_the_public_seed_but_not_a_secret(tmp_path):
    solution = sup.solution_answers(NAME)
    lookup = _lookup_answer()
    subs = tmp_path / "subs"
    for student in ("copycat_a", "copycat_b"):
        sup.write_submission(subs, student, NAME,
                             nb=sup.make_submission(NAME, {**solution, TASK: lookup}))
    sup.write_submission(subs, "honest", NAME, nb=sup.make_submission(NAME, solution))
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET)
    assignment = load_assignment(NAME, sup.ROOT)
    full = assignment.task_max(TASK)
    visible = sum(t.points for t in assignment.tests if t.task == TASK and
                  "BEGIN HIDDEN TESTS" not in t.source)
    assert 0 < visible < full

    runs = {}
    for label, extra in [("public", ()), ("secret", ("--secret-file", str(secret))),
                         ("again", ("--secret-file", str(secret)))]:
        out = tmp_path / label
        proc = sup.grade(NAME, subs, out, "--jobs", "2", "--timeout", "20", *extra)
        assert proc.returncode == 0, proc.stderr[-2000:]
        runs[label] = sup.read_scores(out)[1]
        assert SECRET not in "".join(p.read_text(errors="replace")
                                     for p in out.rglob("*") if p.suffix in (".csv", ".html"))
    for student in ("copycat_a", "copycat_b"):
        assert runs["public"][student][TASK][0] == full
        assert runs["secret"][student][TASK][0] == visible
    for label in runs:
        assert sum(s for s, _ in runs[label]["honest"].values()) == assignment.max_score
    for name in ("grades.csv", "task_scores.csv"):
        assert (tmp_path / "secret" / name).read_bytes() == (tmp_path / "again" / name).read_bytes()
