"""The one reader of nbgrader metadata (grading/notebook.py): cells, and the visible part of
tests.
"""

from __future__ import annotations

import pytest

from mlcourse_utils.grading import (
    notebook,
)


def test_read_notebook_cells_rejects_non_notebooks():
    with pytest.raises(ValueError):
        notebook.read_notebook_cells(b"{not json")
    with pytest.raises(ValueError, match="format version 4"):
        notebook.read_notebook_cells(b'{"cells": [], "nbformat": 3}')
    cells = notebook.read_notebook_cells(b'{"cells": [{"cell_type": "code", "source": ["a", "b"]}],'
                                        b' "nbformat": 4}')
    assert notebook.cell_source(cells[0]) == "ab"


def test_strip_hidden_tests_keeps_only_the_visible_part():
    src = "visible()\n### BEGIN HIDDEN TESTS\nsecret()\n### END HIDDEN TESTS\nafter()"
    assert notebook.strip_hidden_tests(src) == "visible()\nafter()"
