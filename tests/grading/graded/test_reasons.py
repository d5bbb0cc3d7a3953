"""Failures that are not about the answer, in words (grading/graded/reasons.py)."""

from __future__ import annotations

import pytest

from mlcourse_utils.grading.graded.model import Check, Outcome, StudentRecord
from mlcourse_utils.grading.graded.reasons import (
    CATEGORIES,
    NOT_IMPLEMENTED,
    cell_stopped,
    classify_reason,
    non_answer_failures,
    timeout_where,
    timeouts,
)


@pytest.mark.parametrize(("reason", "kind"), [
    ("no notebook was submitted", "no_submission"),
    ("the file is a symbolic link", "refused"),
    ("the notebook is larger than 20 MB", "refused"),
    ("the notebook could not be read: not JSON", "unreadable"),
    ("the notebook used up its total grading time", "budget"),
    ("the cell timed out after 60 s", "timeout"),
    ("the notebook's process was killed by signal SIGSEGV", "died"),
    ("the notebook's process exited (status 3)", "died"),
    ("was stopped for exceeding the memory limit of 4096 MB", "memory"),
    ("called a forbidden function: numpy.linalg.lstsq", "forbidden"),
    ("imported mlcourse_utils", "delegation"),
    ("internal grader error: KeyError", "internal"),
    ("tampering detected: sys.modules changed", "tampering"),
    ("TIMED OUT", "timeout"),  # case does not matter
    ("the answer is wrong", "other"),
])
def test_each_kind_of_reason_is_recognised(reason, kind):
    assert classify_reason(reason) == kind


def test_budget_wins_over_timeout_and_every_kind_has_words():
    # "used up its total grading time" also contains no "timed out"; a reason naming both is
    # about the budget, which comes first.
    assert classify_reason("timed out: the notebook used up its total grading time") == "budget"
    kinds = {classify_reason(r) for r in ("x", "timed out", "memory")}
    assert kinds <= set(CATEGORIES)


def test_not_implemented_matches_the_stub_and_a_missing_function_only():
    assert NOT_IMPLEMENTED.search("NotImplementedError: write this function")
    assert NOT_IMPLEMENTED.search("the notebook does not define a function `fit`")
    assert not NOT_IMPLEMENTED.search("ValueError: shapes do not match")
    assert not NOT_IMPLEMENTED.search("MyNotImplementedErrorX")


def test_non_answer_failures_lists_reasons_memory_errors_and_tampering_once():
    checks = {"test_fit": Check("test_fit", "fit", 2, "fits"),
              "test_fit_big": Check("test_fit_big", "fit", 1, "fits big"),
              "test_predict": Check("test_predict", "predict", 1, "predicts"),
              "test_score": Check("test_score", "score", 1, "scores")}
    rec = StudentRecord(
        "alice",
        reasons={"predict": "the cell timed out after 60 s"},
        outcomes={
            # two memory errors in one task: one failure
            "test_fit": Outcome(0, "MemoryError: unable to allocate"),
            "test_fit_big": Outcome(0, "MemoryError"),
            # a task that already has a reason is not counted again
            "test_predict": Outcome(0, "MemoryError"),
            # points earned: not a failure, even with the word in the message
            "test_score": Outcome(1, "MemoryError caught and handled"),
            # a check of a task the folder does not list: task ""
            "test_unknown": Outcome(0, "MemoryError"),
        },
        notes=["tampering detected: numpy patched", "tampering detected: numpy patched",
               "ran for a long time"])
    # The timeout is the answer's (listed by timeouts), not a failure "not about the answer".
    assert non_answer_failures(rec, checks) == [
        ("memory", "fit", "MemoryError: unable to allocate"),
        ("memory", "", "MemoryError"),
        ("tampering", "", "tampering detected: numpy patched"),
    ]
    assert timeouts(rec) == [("predict", "in the function", "the cell timed out after 60 s")]


def test_a_timeout_while_the_cell_defined_the_function_is_a_timeout_there():
    """The reason session.py gives when an answer cell did not finish names the task, the
    cell and what stopped it; a timeout there is classified as a timeout, and so is where."""
    reason = cell_stopped("fit", 7, "timed out after 60 s (the time limit per cell and per test)")
    assert reason.startswith("the cell that defines fit (cell 7) did not finish: timed out")
    assert classify_reason(reason) == "timeout"
    assert timeout_where(reason) == "while its cell defined it"
    assert not NOT_IMPLEMENTED.search(reason)  # not mistaken for a function never written
    died = cell_stopped("fit", 7, "the notebook's process died: it was killed by signal 9")
    assert classify_reason(died) == "died"
    rec = StudentRecord("bob", reasons={"fit": reason, "predict": died})
    assert timeouts(rec) == [("fit", "while its cell defined it", reason)]
    assert non_answer_failures(rec, {}) == [("died", "predict", died)]


def test_a_student_without_failures_has_none():
    rec = StudentRecord("bob", outcomes={"test_fit": Outcome(2, "")})
    assert non_answer_failures(rec, {"test_fit": Check("test_fit", "fit", 2, "")}) == []
