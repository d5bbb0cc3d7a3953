"""`make`'s install step (tools/install.py): a line of progress at least every EVERY seconds.

pip is replaced by a stand-in script that prints what pip prints, with pauses, so that the
lines the step shows can be checked in a second, not in a real two-minute install.
"""

from __future__ import annotations

import importlib.util
import os
import stat

import pytest

from mlcourse_utils.course import ROOT

pytestmark = pytest.mark.skipif(os.name == "nt", reason="the stand-in pip is a shell script")


def _install_module():
    spec = importlib.util.spec_from_file_location("install_tool", ROOT / "tools" / "install.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _fake_python(tmp_path, body):
    python = tmp_path / "venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text("#!/bin/sh\n" + body)
    python.chmod(python.stat().st_mode | stat.S_IXUSR)
    return python


PIP = """\
echo "Collecting numpy"; sleep 0.5
echo "Collecting scipy"; sleep 0.5
echo "Installing collected packages: numpy, scipy, six"; sleep 0.8
echo "Successfully installed numpy scipy six"
"""


def test_progress_every_few_seconds_and_pips_output_in_the_log(tmp_path, capsys, monkeypatch):
    tool = _install_module()
    monkeypatch.setattr(tool, "EVERY", 0.3)
    monkeypatch.chdir(tmp_path)
    python = _fake_python(tmp_path, PIP)
    assert tool.main([str(python), "-e", ".[book]"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("installing the course package") and "venv/pip.log" in lines[0]
    assert any(line.startswith("  resolving: ") and "packages collected" in line
               for line in lines), lines
    assert any(line.startswith("  installing 3 packages") for line in lines), lines
    assert any(line.startswith("  still installing") for line in lines), lines
    assert lines[-1].startswith("installed in ")
    log = (tmp_path / "venv" / "pip.log").read_text()
    assert "Collecting scipy" in log and "Successfully installed" in log  # pip's own words


def test_a_failing_pip_shows_the_end_of_its_log_and_its_status(tmp_path, capsys, monkeypatch):
    tool = _install_module()
    monkeypatch.chdir(tmp_path)
    python = _fake_python(tmp_path, 'echo "Collecting nosuch"\necho "ERROR: No matching '
                                    'distribution found for nosuch"\nexit 3\n')
    assert tool.main([str(python), "nosuch"]) == 3
    err = capsys.readouterr().err
    assert "pip failed (exit status 3)" in err and "No matching distribution" in err
