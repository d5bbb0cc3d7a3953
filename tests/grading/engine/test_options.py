"""The options of a grading run (grading/engine/options.py): one frozen record, its defaults
those of the command line and the spec, the secret never shown."""

from __future__ import annotations

import dataclasses

import pytest

from mlcourse_utils.grading.engine.options import DEFAULTS, GradingOptions


def test_the_defaults_are_the_specs_and_leave_the_time_limits_to_the_assignment():
    """SPEC section 6: a per-kernel memory limit of 4096 MB by default; one student at a time;
    the time limits None, so that the assignment's own limit and budget apply."""
    assert DEFAULTS == GradingOptions()
    assert (DEFAULTS.memory_mb, DEFAULTS.jobs, DEFAULTS.shard) == (4096, 1, None)
    assert DEFAULTS.timeout is None and DEFAULTS.student_timeout is None
    assert DEFAULTS.secret is None
    assert not (DEFAULTS.require_isolation or DEFAULTS.force or DEFAULTS.verbose)


def test_the_record_cannot_change_once_built():
    """Every student of a run grades with the same options: no one can change them midway."""
    options = GradingOptions(timeout=5)
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.timeout = 50  # type: ignore[misc]
    assert dataclasses.replace(options, timeout=50).timeout == 50 and options.timeout == 5


def test_the_secret_is_never_shown():
    """A printed or logged record does not reveal the term's secret."""
    options = GradingOptions(secret=b"0123456789abcdef-term-secret")
    assert "term-secret" not in repr(options) and "secret" not in repr(options)
    assert "memory_mb=4096" in repr(options)
