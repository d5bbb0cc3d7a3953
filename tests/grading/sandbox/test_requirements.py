"""What grading needs installed, and the error that says how to get it
(grading/sandbox/requirements.py)."""

from __future__ import annotations

import types

import pytest

from mlcourse_utils.grading.sandbox import requirements


def test_missing_dependency_is_an_error_with_the_install_command(monkeypatch):
    from mlcourse_utils.grading.sandbox import requirements


    assert requirements.missing_dependencies() == []  # this environment installed the extra
    real = requirements.importlib.util.find_spec
    monkeypatch.setattr(requirements.importlib.util, "find_spec",
                        lambda name, *a: None if name == "mdit_py_plugins" else real(name, *a))
    with pytest.raises(ValueError,
                       match=r"mdit-py-plugins.*pip install '\.\[grading\]'"):
        requirements.check_dependencies()



def test_two_missing_distributions_are_named_together(monkeypatch):
    real = requirements.importlib.util.find_spec
    monkeypatch.setattr(requirements.importlib.util, "find_spec",
                        lambda name, *a: None if name in ("tqdm", "yaml") else real(name, *a))
    assert requirements.missing_dependencies() == ["tqdm", "pyyaml"]  # distribution names
    with pytest.raises(ValueError, match=r"grading needs tqdm, pyyaml, which are not installed"):
        requirements.check_dependencies()


def _fake_mathjax(monkeypatch, folder):
    """sphinx-mathjax-offline found at ``folder`` (its package folder)."""
    real = requirements.importlib.util.find_spec
    spec = types.SimpleNamespace(submodule_search_locations=[str(folder)])
    monkeypatch.setattr(requirements.importlib.util, "find_spec",
                        lambda name, *a: spec if name == requirements.MATHJAX else real(name, *a))


def test_mathjax_counts_only_when_both_of_its_files_are_there(monkeypatch, tmp_path):
    mathjax = tmp_path / "static" / "mathjax"
    (mathjax / "ui").mkdir(parents=True)
    (mathjax / "tex-svg-full.js").write_text("// typesetter")
    _fake_mathjax(monkeypatch, tmp_path)
    # the safe filter is missing: a half install does not count
    assert requirements.mathjax_files() is None
    assert not requirements.mathjax_available()
    assert requirements.missing_dependencies() == ["sphinx-mathjax-offline"]
    (mathjax / "ui" / "safe.js").write_text("// filter")
    assert requirements.mathjax_files() == {"tex-svg-full.js": mathjax / "tex-svg-full.js",
                                            "ui/safe.js": mathjax / "ui" / "safe.js"}
    assert requirements.missing_dependencies() == []


def test_mathjax_not_installed_is_none(monkeypatch):
    real = requirements.importlib.util.find_spec
    monkeypatch.setattr(requirements.importlib.util, "find_spec",
                        lambda name, *a: None if name == requirements.MATHJAX else real(name, *a))
    assert requirements.mathjax_files() is None
    with pytest.raises(ValueError, match=r"sphinx-mathjax-offline, which is not installed"):
        requirements.check_dependencies()
