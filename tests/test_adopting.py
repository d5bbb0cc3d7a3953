"""The README's "Adopting this course" and the teaching assistant's first command, followed in a
fresh clone as a new instructor would: every command is taken from the README's own code blocks.

The clone is made from this repository with its working files laid over (so the README under
test is the one being followed), and committed, so that `git status` afterwards shows exactly
what the steps left in the repository. `mlcourse` on the PATH behaves as a non-editable install
does (the package's folder is no course): only `--course` names the course.
"""

from __future__ import annotations

import csv
import os
import re
import shutil
import stat
import subprocess
import sys
import tomllib
import zipfile

import pytest

import assignment_support as sup
from mlcourse_utils.config import read_config
from mlcourse_utils.grading.graded.late import read_config as read_due

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")]

CANVAS_ROSTER = """\
Student,ID,SIS User ID,SIS Login ID,Section
"Smith-Jones, Alice",101,S-1,alice,A
"""


def _section(text, heading):
    """The README's text under ``heading`` up to the next heading of the same level."""
    level = heading.split(" ", 1)[0]
    start = text.index(heading + "\n")
    end = re.search(rf"^{re.escape(level)} ", text[start + len(heading):], flags=re.M)
    return text[start:start + len(heading) + (end.start() if end else len(text))]


def _bash_blocks(text):
    return [block.replace("\\\n", " ")
            for block in re.findall(r"```bash\n(.*?)```", text, flags=re.S)]


def _fresh_clone(target):
    """A clone of this repository with the working files (tracked and new) laid over it."""
    subprocess.run(["git", "clone", "-q", str(sup.ROOT), str(target)], check=True)
    listed = subprocess.run(["git", "-C", str(sup.ROOT), "ls-files", "-z", "-co",
                             "--exclude-standard"], capture_output=True, check=True).stdout
    for rel in filter(None, listed.decode().split("\0")):
        source, dest = sup.ROOT / rel, target / rel
        if source.is_file():
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, dest)
        elif dest.exists():
            dest.unlink()
    git = ["git", "-C", str(target), "-c", "user.name=test", "-c", "user.email=test@example"]
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "working files"], check=True)


def _non_editable_mlcourse(folder):
    """An `mlcourse` that, like a regular install, has no course of its own."""
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "mlcourse"
    script.write_text(
        f"#!/bin/sh\nexec {sys.executable} -c 'import sys, pathlib, mlcourse_utils.course as c; "
        "c.ROOT = pathlib.Path(\"/nonexistent\"); from mlcourse_utils.cli import main; "
        "sys.exit(main(sys.argv[1:]))' \"$@\"\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    if not (folder / "python").exists():
        os.symlink(sys.executable, folder / "python")
    return folder


def _canvas_download(path):
    nb = sup.make_submission("mle", sup.solution_answers("mle"))
    path.parent.mkdir(parents=True, exist_ok=True)
    import json

    with zipfile.ZipFile(path, "w") as z:
        z.writestr("smithjonesalice_101_9001_mle.ipynb", json.dumps(nb))


def test_adopting_in_a_fresh_clone_leaves_no_student_data_in_git(tmp_path):
    clone, term = tmp_path / "pml-course", tmp_path / "pml-term"
    _fresh_clone(clone)
    readme = (clone / "README.md").read_text(encoding="utf-8")
    adopting = _section(readme, "### Adopting this course")
    env = {**os.environ, "PATH": f"{_non_editable_mlcourse(tmp_path / 'bin')}{os.pathsep}"
                                  f"{os.environ['PATH']}"}
    env.pop("MLCOURSE_COURSE", None)

    def run(command, **kwargs):
        return subprocess.run(["bash", "-e", "-c", command], cwd=clone, env=env,
                              capture_output=True, text=True, timeout=900, **kwargs)

    # 1. Title and authors: one file to edit.
    config = clone / "_config.yml"
    config.write_text(re.sub(r"(?m)^title: .*$", "title: Probabilistic ML, spring 2027",
                             config.read_text(encoding="utf-8")), encoding="utf-8")
    assert read_config(clone)["title"] == "Probabilistic ML, spring 2027"
    # 3.-5.: the term's folder, the secret, the due dates: the README's commands as written.
    blocks = _bash_blocks(adopting)
    assert len(blocks) == 3, blocks
    for block in blocks:
        done = run(block)
        assert done.returncode == 0, (block, done.stderr)
    assert re.fullmatch(r"[0-9a-f]{64}\n", (term / "secret.txt").read_text())
    # 6. The LMS's assignment id, written where the README says.
    due = term / "due.toml"
    assert 'canvas_column = "Maximum likelihood (' in due.read_text()
    assert read_due(due).assignments["mle"]["canvas_column"].endswith("(4711)")
    tomllib.loads(due.read_text())  # the example stays valid TOML
    # The teaching assistant's first command, from the term's folder.
    (term / "roster.csv").write_text(CANVAS_ROSTER)
    _canvas_download(term / "downloads" / "mle.zip")
    ta = _bash_blocks(_section(readme, "## For teaching assistants"))[0]
    assert "--course" in ta and "cd ../pml-term" in ta
    without = run(ta.replace(re.search(r"--course \S+", ta).group(0), ""))
    assert without.returncode == 2
    assert "--course DIR" in without.stderr and len(without.stderr.strip().splitlines()) == 1
    graded = run(ta)
    assert graded.returncode == 0, graded.stderr[-3000:]
    assert "warning:" not in graded.stderr  # the term's folder is outside the work tree
    with open(term / "graded" / "mle" / "grades.csv") as fh:
        (row,) = list(csv.DictReader(fh))
    assert float(row["score"]) == float(row["max_score"]) > 0
    # What git sees in the course repository: the title, nothing of the term.
    status = subprocess.run(["git", "-C", str(clone), "status", "--porcelain", "-uall"],
                            capture_output=True, text=True, check=True).stdout.splitlines()
    assert status == [" M _config.yml"], status

