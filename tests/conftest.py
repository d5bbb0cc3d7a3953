"""Shared fixtures: expensive results (graded batches, built books) live for one test session.

Tests that need the same expensive result in several modules, or several times in one module,
take it from these fixtures instead of module-level caches, so its life is pytest's to manage
(and each xdist worker builds only what the tests it runs need).
"""

from __future__ import annotations

import pytest

from slow_groups import longest_first
from tolerances import REFERENCE_TEST_MODULES

# ------------------------------------------------------------------ xdist groups that hold
# `make test` runs `pytest -n 2 --dist loadgroup --no-loadscope-reorder`: every test marked
# xdist_group("G") runs on the worker that runs all of G, so a session fixture (a graded batch,
# the printed PDFs, a fresh venv) is made once. Only public interfaces are used: the marks, the
# two options and the collection order below. pytest-xdist 3.8 passes the group to its
# scheduler through the private attribute Item._nodeid, which pytest >= 9.2 no longer reads
# (pytest-xdist issue 1386): the groups would then silently fall apart, both workers making
# every expensive fixture. pyproject.toml therefore keeps pytest < 9.2, and
# tests/test_suite.py runs two workers on a small grouped suite and fails, naming the
# versions, when a group is split.
#
# The scheduler hands out work units (a group, or one ungrouped test) in the order of the
# collection (--no-loadscope-reorder: pytest-xdist would otherwise sort them by number of
# tests, which says little about time: a batch of 60 grading tests is faster than the
# website's 117, and a single test that grades three classes would land at the end, where one
# worker runs it while the other idles), each to the first worker that runs short of work.
# Longest first (the classic rule for two machines): the expensive units start at once, the
# many cheap ones fill in after, and both workers finish within seconds of each other.


def pytest_collection_modifyitems(config, items):
    if config.getoption("dist", None) == "loadgroup":  # (workers collect; the scheduler reads it)
        items[:] = longest_first(items)  # (its guesses of each unit's time: tests/slow_groups.py)


@pytest.fixture(scope="session")
def session_cache():
    """A dict that lives for the test session (one per xdist worker)."""
    return {}


@pytest.fixture(scope="session")
def graded_batch(session_cache, tmp_path_factory):
    """``graded_batch(key, build)``: ``build(tmp_dir)`` once per session for each ``key``."""
    def get(key, build):
        if key not in session_cache:
            session_cache[key] = build(tmp_path_factory.mktemp(str(key).replace("/", "_")))
        return session_cache[key]
    return get


# The reference modules' tests run twice, with one and with two BLAS threads: a BLAS splits a
# product differently by thread count, so an assertion that depends on one summation order
# fails here rather than on a user's machine (tests/tolerances.py says which tolerances the
# bounds allow; tests/test_blas_setups.py also runs them under other CPU kernels).


@pytest.fixture(autouse=True)
def blas_threads(request):
    """Limit the BLAS to ``request.param`` threads for the test (reference modules only)."""
    limit = getattr(request, "param", None)
    if limit is None:
        yield None
        return
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=limit, user_api="blas"):
        yield limit


def pytest_generate_tests(metafunc):
    if metafunc.module.__name__.rpartition(".")[2] in REFERENCE_TEST_MODULES:
        metafunc.parametrize("blas_threads", [1, 2], indirect=True,
                             ids=["blas1", "blas2"])


# ------------------------------------------------------------------ graded folders by hand


@pytest.fixture(scope="session")
def mle_assignment():
    """The mle assignment as the grader reads it from its source notebook."""
    import assignment_support as sup
    from mlcourse_utils.grading.notebook import load_assignment

    return load_assignment("mle", sup.ROOT)


@pytest.fixture
def write_graded(mle_assignment):
    """``write_graded(folder, {student: share of each test's points}, intake=, times=)``: a
    graded folder of mle as `mlcourse grade` writes it (results.json, feedback pages and, if
    given, intake.json and timestamps.json), without grading anything."""
    import json

    from mlcourse_utils.grading.graded.out import OutFolder
    from mlcourse_utils.grading.graded.results import GradeResult, TestResult
    from mlcourse_utils.grading.reports.feedback import write_feedback

    def write(folder, scores, intake=None, times=None):
        folder.mkdir(parents=True)
        (folder / "feedback").mkdir()
        results = {}
        for student, share in scores.items():
            result = GradeResult(student, mle_assignment.name, [
                TestResult(t.grade_id, t.task, t.points, t.points * share, t.description)
                for t in mle_assignment.tests])
            results[student] = result
            write_feedback(result, mle_assignment, folder / "feedback" / f"{student}.html")
        OutFolder(folder).write_results(results, mle_assignment)
        if intake is not None:
            (folder / "intake.json").write_text(json.dumps(intake))
        if times is not None:
            (folder / "timestamps.json").write_text(json.dumps(times))
        return folder

    return write
