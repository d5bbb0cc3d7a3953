"""The public code an answer could be copied from (grading/engine/references.py)."""

from __future__ import annotations

import importlib.util
import json
import sys

import pytest

from mlcourse_utils.grading.engine import references as ref
from mlcourse_utils.grading.engine.references import reference_module

HELPERS = '''\
import os


def _square(x):
    return x * x


def _unused(x):
    return -x


def _twice_square(x):
    return 2 * _square(x)


def main(x):
    return os.path.join(str(_twice_square(x)), "")


CONSTANT = 3
'''


@pytest.fixture
def module(tmp_path, monkeypatch):
    """A module whose name starts like the package's (its functions count as package code)."""
    path = tmp_path / "mlcourse_utils_reftest.py"
    path.write_text(HELPERS)
    spec = importlib.util.spec_from_file_location("mlcourse_utils_reftest", path)
    mod = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "mlcourse_utils_reftest", mod)
    spec.loader.exec_module(mod)
    return mod


def test_reference_source_carries_the_helpers_it_calls_transitively(module):
    source = ref.reference_source(module, "main")
    parts = source.split("\n\n")
    # the function first, then its helpers breadth first; never an uncalled one or os.path.join
    heads = [p.strip().split("(")[0] for p in parts]
    assert heads == ["def main", "def _twice_square", "def _square"]
    assert "_unused" not in source and "def join" not in source


def test_reference_source_of_a_missing_name_or_a_constant_is_none(module):
    assert ref.reference_source(module, "no_such_function") is None
    assert ref.reference_source(module, "CONSTANT") is None


def test_reference_module_follows_the_catalogue():
    assert ref.reference_module("logistic_regression").__name__ == "mlcourse_utils.logistic"
    with pytest.raises(ValueError, match="no_such_assignment.*REFERENCE_MODULES"):
        ref.reference_module("no_such_assignment")


def _cell(grade_id, source, *, solution=True, grade=False, cell_type="code"):
    return {"cell_type": cell_type, "source": source, "metadata": {
        "nbgrader": {"grade_id": grade_id, "solution": solution, "grade": grade}}}


def _write_notebook(path, cells):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {},
                                "cells": cells}))


def test_notebook_answers_keeps_answer_cells_only_first_of_each_id(tmp_path):
    path = tmp_path / "nb.ipynb"
    _write_notebook(path, [
        _cell("fit", ["def fit(x):\n", "    return x\n"]),          # a list of lines
        _cell("test_fit", "assert fit(1) == 1", solution=False, grade=True),  # a test cell
        _cell("derivation", "$x$", grade=True, cell_type="markdown"),  # manual, not code
        _cell("fit", "def fit(x):\n    return 0\n"),               # a duplicate id
        _cell("predict", "def predict(x):\n    raise NotImplementedError\n"),
    ])
    assert ref.notebook_answers(path) == {
        "fit": "def fit(x):\n    return x\n",
        "predict": "def predict(x):\n    raise NotImplementedError\n"}
    assert ref.notebook_answers(tmp_path / "missing.ipynb") == {}


def test_references_label_the_reference_function_and_the_solution(tmp_path):
    _write_notebook(tmp_path / "solutions" / "mle" / "mle.ipynb",
                    [_cell("only_in_solution", "def only_in_solution():\n    pass\n")])
    _write_notebook(tmp_path / "exercises" / "mle" / "mle.ipynb",
                    [_cell("only_in_solution", "def only_in_solution():\n    ...\n")])
    found = ref.references("mle", ["only_in_solution", "no_such_task"], tmp_path)
    assert found == {
        "only_in_solution": [("solutions/mle/mle.ipynb",
                              "def only_in_solution():\n    pass\n")],
        "no_such_task": []}
    assert ref.release_stubs("mle", tmp_path) == {
        "only_in_solution": "def only_in_solution():\n    ...\n"}


def test_references_include_the_reference_module_function(tmp_path):
    import mlcourse_utils.mle as mle

    public = next(n for n in sorted(vars(mle)) if not n.startswith("_")
                  and callable(getattr(mle, n)) and getattr(getattr(mle, n), "__module__", "")
                  == "mlcourse_utils.mle")
    (label, source), = ref.references("mle", [public], tmp_path)[public]
    assert label == f"mlcourse_utils.mle.{public}"
    assert source.startswith(f"def {public}(")


def test_an_assignment_without_a_reference_module_is_an_error():
    """A missing mapping would silently turn the comparison with the reference off."""
    for name in ("no_such_assignment", "../../etc"):
        with pytest.raises(ValueError, match="REFERENCE_MODULES"):
            reference_module(name)
