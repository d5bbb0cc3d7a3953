"""The order in which `make test`'s two workers are handed the units of work: longest first.

A unit is what pytest-xdist's ``--dist loadgroup`` hands out whole: an ``xdist_group`` (its
tests share a worker and the group's session fixtures), or one ungrouped test. With
``--no-loadscope-reorder`` it hands them out in the collection's order, each to the first
worker that runs short of work; tests/conftest.py sorts the collection with
:func:`longest_first`. Seconds are rough measurements on a busy 2-core machine (--durations,
once per unit); only their order matters, so a wrong guess costs balance, never a result.
"""

from __future__ import annotations

#: Seconds a group takes on one worker, or (keys ending in ".py") each ungrouped test of a file.
UNIT_SECONDS = {
    # the website: both book builds (when stale), 40 pages in Chromium, both PDF editions
    "website": 1300, "standin-book_website": 100,
    "grade-logistic_regression": 300, "fresh-venv": 300, "class-report": 230,
    "grade-gda": 150, "grade-hostile": 150, "grade-information_theory": 145,
    "grade-naive_bayes": 145, "grade-bayes": 135, "grade-ridge_lasso": 135, "grade-mle": 125,
    "tests/test_blas_setups.py": 120, "handin": 80, "grade-integrity": 65, "roundtrip": 100,
    "grade-shards": 60, "tests/test_assignments.py": 8, "tests/test_secret_inputs.py": 7,
    "tests/test_cli.py": 4, "tests/grading/test_execute.py": 3,
    "tests/grading/graded/test_gradebook.py": 2,
    "tests/test_suite.py": 10,  # one of its tests runs a small suite on two workers
}


def work_unit(item) -> str:
    """The unit the scheduler hands out whole: the item's group (its xdist_group names, sorted
    and joined by "_" as pytest-xdist names it), else the item itself (its node id)."""
    names = sorted({str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                    for m in item.iter_markers("xdist_group")})
    return "_".join(names) if names else item.nodeid


def unit_seconds(unit: str, tests: int) -> float:
    """The guessed seconds of a unit of ``tests`` tests (0.1 s a test when nothing is known)."""
    if unit in UNIT_SECONDS:
        return UNIT_SECONDS[unit]
    return UNIT_SECONDS.get(unit.partition("::")[0], 0.1) * tests


def longest_first(items: list) -> list:
    """``items`` with the units in decreasing guessed time, the larger first where the guesses
    tie (as pytest-xdist's own order would have them); a stable sort: the order inside a unit,
    and of units alike in both, is the collection's."""
    units = [work_unit(item) for item in items]
    sizes: dict[str, int] = {}
    for unit in units:
        sizes[unit] = sizes.get(unit, 0) + 1
    order = sorted(range(len(items)),
                   key=lambda i: (-unit_seconds(units[i], sizes[units[i]]), -sizes[units[i]]))
    return [items[i] for i in order]
