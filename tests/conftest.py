"""Shared fixtures: expensive results (graded batches, built books) live for one test session.

Tests that need the same expensive result in several modules, or several times in one module,
take it from these fixtures instead of module-level caches, so its life is pytest's to manage
(and each xdist worker builds only what the tests it runs need).
"""

from __future__ import annotations

import pytest


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
