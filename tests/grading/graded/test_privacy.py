"""Whether a TA's output would be tracked by git (mlcourse_utils/grading/graded/privacy.py).

Each case is a real git repository made in tmp_path, with the .gitignore lines under test; the
expected answer is what `git status` shows after writing a file there (checked independently).
"""

from __future__ import annotations

import shutil
import subprocess

import pytest

from mlcourse_utils.grading.graded import privacy

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _repo(tmp_path, ignore=""):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".gitignore").write_text(ignore)
    return tmp_path


def _shown_by_git_status(repo, path):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("student_id,score\nalice,3\n")
    out = subprocess.run(["git", "-C", str(repo), "status", "--porcelain", "-uall"],
                         capture_output=True, text=True, check=True).stdout
    return path.relative_to(repo).as_posix() in out


@pytest.mark.parametrize("ignore,out,tracked", [
    ("", "graded", True),
    ("/graded/\n", "graded", False),
    ("/graded/\n", "term/graded", True),
    ("/private/\n", "private/graded/mle", False),
    ("*.csv\n", "canvas.csv", False),
    ("", "canvas.csv", True),
])
def test_tracked_exactly_when_git_status_would_show_the_files(tmp_path, ignore, out, tracked):
    repo = _repo(tmp_path, ignore).resolve()
    target = repo / out
    got = privacy.tracking_work_tree(target)
    assert (got == repo) is tracked and (got is None) is (not tracked)
    probe = target if target.suffix else target / "grades.csv"
    assert _shown_by_git_status(repo, probe) is tracked  # what git itself says, afterwards


def test_outside_any_work_tree_nothing_is_said(tmp_path):
    assert privacy.tracking_work_tree(tmp_path / "graded") is None
    assert privacy.warning(tmp_path / "graded", "grades") is None


def test_the_warning_names_the_folder_the_work_tree_and_what_would_be_committed(tmp_path):
    repo = _repo(tmp_path).resolve()
    line = privacy.warning(repo / "graded", "the class's grades")
    assert line.startswith("warning: ") and str(repo) in line and "the class's grades" in line
    assert "git add -A" in line and ".gitignore" in line


def test_the_course_repository_ignores_a_tas_usual_files():
    """The repository's own .gitignore: the names the README's walk-through uses."""
    from mlcourse_utils.course import ROOT

    if not (ROOT / ".git").exists():
        pytest.skip("not a git clone")
    for rel in ("private/secret.txt", "secret.txt", "graded/mle/grades.csv", "roster.csv",
                "submissions/alice/mle.ipynb", "mle-submissions.zip", "canvas.csv", "due.toml"):
        assert privacy.tracking_work_tree(ROOT / rel) is None, rel
    assert privacy.tracking_work_tree(ROOT / "book" / "new-chapter.md") == ROOT.resolve()


def test_a_folder_is_tracked_when_any_of_its_kinds_of_files_would_be(tmp_path):
    """`*.csv` in .gitignore leaves feedback pages and notebook copies tracked."""
    repo = _repo(tmp_path, "*.csv\n").resolve()
    assert privacy.tracking_work_tree(repo / "graded") == repo
    assert _shown_by_git_status(repo, repo / "graded" / "feedback" / "alice.html")
