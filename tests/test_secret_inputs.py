"""Every expected score in tests/submissions holds whatever the grading secret.

With `--secret-file`, hidden tests draw other inputs for every student and term. A wrong answer
must lose exactly its points for every draw, and an honest one must keep them: an expected
score that only holds for the development seed would be a coin toss in a real class. This test
runs each assignment's test cells in this process (no sandbox: the answers are our own test
data) against the solution, every wrong, honest and shortcut variant (the hybrid fits whose
steps are checked at a k drawn from the secret among them), under several secrets and student
ids, and also checks that no hidden test still seeds its own generator. A variant runs the test
cells of the tasks it changes (and of any task whose tests call them); the others keep the
solution's points, which the solution's own run checks.
"""

from __future__ import annotations

import json
import re
import warnings

import numpy as np
import pytest

import assignment_support as sup
from mlcourse_utils.grading import hidden_inputs
from mlcourse_utils.grading.engine.checking import setup_names
from mlcourse_utils.grading.notebook import load_assignment

SECRETS = [(b"secret-of-term-one-0001", "alice"), (b"secret-of-term-one-0001", "bob"),
           (b"a-completely-different-secret", "carol")]


def _task_scores(assignment, answers, secret, student, changed=None):
    """{task: points} of ``answers`` (task -> source) under ``secret`` for ``student``; with
    ``changed`` (a set of tasks), only the tasks whose tests call a changed one are scored."""
    functions = {}
    for task in assignment.tasks:
        namespace = setup_names(assignment, student)  # STUDENT_ID, as the grader binds it
        for source in assignment.setup:
            exec(source, namespace)
        exec(answers[task], namespace)
        functions[task] = namespace[task]
    scored = set(assignment.tasks)
    if changed is not None:  # the changed tasks, and every task with a test that calls one
        scored = set(changed) | {test.task for test in assignment.tests if any(
            re.search(rf"\b{task}\s*\(", test.source) for task in changed)}
    scores = dict.fromkeys(sorted(scored), 0.0)
    for test in assignment.tests:
        if test.task not in scored:
            continue
        namespace = setup_names(assignment, student)
        for source in assignment.setup:
            exec(source, namespace)
        namespace.update(functions)
        try:
            with hidden_inputs(secret, student), warnings.catch_warnings(), \
                    np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                exec(test.source, namespace)
        except Exception:  # noqa: BLE001 (a failed check or the answer's own error: no points)
            continue
        scores[test.task] += test.points
    return scores


@pytest.mark.parametrize("name", sup.assignments())
def test_no_hidden_test_seeds_its_own_generator(name):
    text = json.dumps(sup.load(sup.ROOT / "solutions" / name / f"{name}.ipynb"))
    assert not re.search(r"default_rng\(|np\.random\.seed\(|RandomState\(", text)


@pytest.mark.slow
@pytest.mark.parametrize("name", sup.assignments())
def test_expected_scores_hold_for_every_secret(name):
    assignment = load_assignment(name, sup.ROOT)
    v = sup.variants(name)
    solution = sup.solution_answers(name)
    full = {t: assignment.task_max(t) for t in assignment.tasks}
    cases = []
    for task, wrongs in v.WRONG.items():
        for k, (src, score) in enumerate(wrongs):
            cases.append((f"wrong_{task}_{k}", {task: src}, {task: score}))
    for label, answers in v.HONEST.items():
        cases.append((f"honest_{label}", answers, {t: full[t] for t in answers}))
    # (A shortcut's score here is the one its answer earns; where it uses a forbidden call,
    # test_assignments checks that grading gives it nothing.)
    for label, (task, src, score) in getattr(v, "SHORTCUTS", {}).items():
        cases.append((f"shortcut_{label}", {task: src}, {task: score}))
    problems = []
    for secret, student in SECRETS:
        got = _task_scores(assignment, solution, secret, student)
        if got != full:
            problems.append(f"the solution for {student} (secret {secret[:6]!r}...): "
                            f"got {got}, expected {full}")
        for label, changed, expected in cases:
            got = _task_scores(assignment, {**solution, **changed}, secret, student, set(changed))
            expected = {**{t: full[t] for t in got}, **expected}
            if got != expected:
                diff = {t: (got[t], expected[t]) for t in got if got[t] != expected[t]}
                problems.append(f"{label} for {student} (secret {secret[:6]!r}...): "
                                f"got/expected {diff}")
    assert not problems, "\n".join(problems)
