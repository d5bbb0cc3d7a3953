"""Shared fixtures: expensive results (graded batches, built books) live for one test session.

Tests that need the same expensive result in several modules, or several times in one module,
take it from these fixtures instead of module-level caches, so its life is pytest's to manage
(and each xdist worker builds only what the tests it runs need).
"""

from __future__ import annotations

import pytest

from tolerances import REFERENCE_TEST_MODULES

# ------------------------------------------------------------------ xdist groups that hold
# `make test` runs `pytest -n 2 --dist loadgroup`: every test marked xdist_group("G") runs on the
# worker that runs all of G, so a session fixture (a graded batch, the printed PDFs, a fresh
# venv) is made once. pytest-xdist 3.8 tells its scheduler the group by appending "@G" to the
# test's node id through the attribute `_nodeid`, which pytest >= 9.2 no longer reads (pytest-xdist
# issue 1386): the groups then silently fall apart and both workers make every expensive fixture.
# This hook, run after xdist's, appends the suffix where xdist's did not take; where it did (an
# older pytest, a fixed xdist), it does nothing.


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    if not getattr(config.option, "loadgroup", False):  # (set on xdist workers only)
        return
    for item in items:
        names = sorted({str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                        for m in item.iter_markers("xdist_group")})
        suffix = "@" + "_".join(names)
        if not names or item.nodeid.endswith(suffix):
            continue
        if hasattr(item, "_id"):  # pytest >= 9.2: a structured id, its string form cached
            from _pytest.nodeid import NodeId

            item._id = NodeId.parse(item.nodeid + suffix)
        else:
            item._nodeid = item.nodeid + suffix


# The scheduler hands out work units (a group, or one ungrouped test) in a fixed order, each to
# the first worker that runs short of work. pytest-xdist orders them by number of tests, which
# says little about time: a batch of 60 grading tests is faster than the website's 117, and a
# single test that grades three classes lands at the end, where one worker runs it while the
# other idles. Longest first instead (the classic rule for two machines): the expensive units
# start at once, the many cheap ones fill in after, and both workers finish within seconds of
# each other. Seconds are rough measurements on a busy 2-core machine (--durations, once per
# unit); only their order matters, so a wrong guess costs balance, never a result.

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
}


def _unit_seconds(scope, tests):
    if scope in UNIT_SECONDS:
        return UNIT_SECONDS[scope]
    return UNIT_SECONDS.get(scope.partition("::")[0], 0.1) * tests


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadGroupScheduling

    class LongestFirst(LoadGroupScheduling):
        def _assign_work_unit(self, node):
            if not getattr(self, "_longest_first", False):  # the queue is full from here on
                self._longest_first = True
                queue = self.workqueue
                order = sorted(queue, key=lambda scope: -_unit_seconds(scope, len(queue[scope])))
                for scope in order:
                    queue.move_to_end(scope)
            super()._assign_work_unit(node)

    return LongestFirst(config, log)


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
