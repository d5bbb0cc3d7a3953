"""The student wheel the website offers (book/wheel.py), built from a small made-up repository.

test_install.py builds the real one and installs it; here every field is checked against what
the fake repository says.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import zipfile

import pytest

from mlcourse_utils.book import wheel as w
from mlcourse_utils.course import student_version

PYPROJECT = """\
[project]
name = "mlcourse_utils"
version = "9.8.7"
requires-python = ">=3.11"
dependencies = ["numpy>=1.26", "scipy"]

[project.scripts]
mlcourse = "mlcourse_utils.cli:main"
"""


@pytest.fixture
def repository(tmp_path):
    repo = tmp_path / "repo"
    for rel in w.student_files():
        path = repo / "mlcourse_utils" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# {rel}\n")
    (repo / "mlcourse_utils" / "bayes.py").write_text("def posterior(): ...\n")  # a chapter
    (repo / "pyproject.toml").write_text(PYPROJECT)
    (repo / "LICENSE").write_text("the licence\n")
    return repo


def test_the_wheel_holds_the_student_files_and_its_metadata(repository, tmp_path):
    path = w.build_student_wheel(tmp_path / "out", repository)
    assert path == tmp_path / "out" / "mlcourse_utils-9.8.7+student-py3-none-any.whl"
    info = "mlcourse_utils-9.8.7+student.dist-info"
    with zipfile.ZipFile(path) as zf:
        names = zf.namelist()
        assert names == [f"mlcourse_utils/{rel}" for rel in w.student_files()] + [
            f"{info}/METADATA", f"{info}/WHEEL", f"{info}/entry_points.txt", f"{info}/LICENSE",
            f"{info}/RECORD"]
        assert zf.read("mlcourse_utils/cli.py") == b"# cli.py\n"
        metadata = zf.read(f"{info}/METADATA").decode()
        assert metadata.startswith("Metadata-Version: 2.1\nName: mlcourse_utils\n"
                                   "Version: 9.8.7+student\n")
        assert "Requires-Python: >=3.11\n" in metadata
        assert "Requires-Dist: numpy>=1.26\nRequires-Dist: scipy\n" in metadata
        assert "Tag: py3-none-any\n" in zf.read(f"{info}/WHEEL").decode()
        assert zf.read(f"{info}/entry_points.txt").decode() == \
            "[console_scripts]\nmlcourse = mlcourse_utils.cli:main\n"
        record = list(csv.reader(io.StringIO(zf.read(f"{info}/RECORD").decode())))
        assert record[-1] == [f"{info}/RECORD", "", ""]
        for name, digest, size in record[:-1]:
            data = zf.read(name)
            expected = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            assert digest == "sha256=" + expected.decode() and int(size) == len(data)
        assert {r[0] for r in record} == set(names)
        assert all(i.date_time == (1980, 1, 1, 0, 0, 0) for i in zf.infolist())


def test_a_rebuild_keeps_the_file_and_a_new_version_replaces_the_old(repository, tmp_path):
    out = tmp_path / "out"
    first = w.build_student_wheel(out, repository)
    stamp = first.stat().st_mtime_ns
    (out / "unrelated.txt").write_text("kept")
    assert w.build_student_wheel(out, repository) == first
    assert first.stat().st_mtime_ns == stamp  # same bytes: not written again
    (repository / "pyproject.toml").write_text(PYPROJECT.replace("9.8.7", "9.9.0"))
    second = w.build_student_wheel(out, repository)
    assert sorted(p.name for p in out.iterdir()) == [second.name, "unrelated.txt"]


def test_the_layout_decides_what_of_grading_ships(repository, tmp_path):
    """The root of grading/ is the student layer, its sub-packages the grader: a module added at
    the root is in the wheel, one added to a sub-package (or a template) is not."""
    grading = repository / "mlcourse_utils" / "grading"
    (grading / "new_helper.py").write_text("# new_helper.py\n")
    (grading / "engine").mkdir()
    for name in ("__init__.py", "batch.py"):
        (grading / "engine" / name).write_text("# the grader\n")
    (grading / "templates").mkdir()
    (grading / "templates" / "feedback.html").write_text("<p>the grader</p>\n")
    with zipfile.ZipFile(w.build_student_wheel(tmp_path / "out", repository)) as zf:
        shipped = [n for n in zf.namelist() if n.startswith("mlcourse_utils/grading/")]
    assert "mlcourse_utils/grading/new_helper.py" in shipped
    assert not [n for n in shipped if n.count("/") > 2 or not n.endswith(".py")]
    # and the real package's: its root modules, none of its sub-packages
    real = [rel for rel in w.student_files() if rel.startswith("grading/")]
    assert "grading/selfcheck.py" in real and "grading/__init__.py" in real
    assert "grading/variants.py" in real  # `variant(...)` of every release notebook's setup
    assert all(rel.count("/") == 1 for rel in real)


def test_without_pyproject_the_error_names_it(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"pyproject.toml does not exist"):
        w.build_student_wheel(tmp_path / "out", tmp_path)


def test_every_module_a_student_file_imports_is_in_the_wheel():
    """The student wheel is a fixed list of files: a module that one of them imports at module
    level (``from .text import clean_text``) and that the list lacks breaks `mlcourse check` on
    the student's laptop. Read each file's top-level imports (not those inside functions, which
    are the optional commands' lazy imports) and resolve relative ones."""
    import ast

    files = w.student_files()
    missing = []
    for rel in files:
        path = w.PACKAGE / rel
        package = ["mlcourse_utils", *rel.split("/")[:-1]]
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ImportFrom) and node.level:
                base = package[:len(package) - node.level + 1]
                targets = [[*base, *node.module.split(".")]] if node.module else \
                    [[*base, alias.name] for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("mlcourse_"):
                targets = [node.module.split(".")]
            else:
                continue
            for parts in targets:
                inside = parts[1:]
                candidates = ["/".join(inside) + ".py", "/".join([*inside, "__init__.py"])]
                if not any(c in files for c in candidates):
                    missing.append((rel, ".".join(parts)))
    assert missing == []


def test_the_wheel_s_variants_run_on_the_standard_library_alone(tmp_path):
    """The release notebooks' setup calls `variant(NAME, STUDENT_ID)` and `mlcourse check` says
    the variant first: the wheel ships variants.py, and it runs in a Python without
    site-packages (-S -I: no numpy, nothing of this environment), loaded from the unpacked
    wheel by its path, giving the words this install gives (one student, the default)."""
    import subprocess
    import sys

    from mlcourse_utils.grading.variants import variant

    site = tmp_path / "site"
    with zipfile.ZipFile(w.build_student_wheel(tmp_path / "wheel")) as zf:
        assert "mlcourse_utils/grading/variants.py" in zf.namelist()
        zf.extractall(site)
    path = site / "mlcourse_utils" / "grading" / "variants.py"
    code = ("import importlib.util, sys\n"
            f"spec = importlib.util.spec_from_file_location('variants', {str(path)!r})\n"
            "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n"
            "print(m.variant('bayes', 'S1234567')); print(m.variant('bayes', ''))\n"
            "assert 'numpy' not in sys.modules\n")
    proc = subprocess.run([sys.executable, "-S", "-I", "-c", code], capture_output=True,
                          text=True, cwd=tmp_path, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"{variant('bayes', 's1234567')}\n{variant('bayes', '')}\n"


def _student_install(tmp_path):
    """The real student wheel unpacked as pip would install it (package and .dist-info in one
    folder), and a command that runs `mlcourse` from it alone: no site-packages (-S, so neither
    this environment's editable install nor its metadata answer), the working folder elsewhere."""
    import subprocess
    import sys

    site = tmp_path / "site"
    with zipfile.ZipFile(w.build_student_wheel(tmp_path / "wheel")) as zf:
        zf.extractall(site)
    code = (f"import sys; sys.path.insert(0, {str(site)!r}); "
            "from mlcourse_utils.cli import main; sys.exit(main(sys.argv[1:]))")

    def mlcourse(*args):
        return subprocess.run([sys.executable, "-S", "-c", code, *args], capture_output=True,
                              text=True, cwd=tmp_path, timeout=120)
    return mlcourse


def test_the_student_install_lists_its_commands_and_says_what_it_is(tmp_path):
    """Installed from the wheel, `mlcourse --help` lists the commands whose modules the wheel
    holds (check only: student_files() has no grader and no book tools) and names the others in
    one paragraph that says where they are; `--version` carries the wheel's label. A missing
    command, with or without its arguments, says to install the full package (exit 2)."""
    from mlcourse_utils import __version__, cli

    mlcourse = _student_install(tmp_path)
    have = [name for name, c in cli.COMMANDS.items()
            if f"{c.module.removeprefix('mlcourse_utils.').replace('.', '/')}.py"
            in w.student_files()]
    assert have == ["check"]
    helped = mlcourse("--help")
    assert helped.returncode == 0, helped.stderr
    listed = [line.split()[0] for line in helped.stdout.splitlines()
              if line.startswith("    ") and line.split()[0] in cli.COMMANDS]
    assert listed == have
    others = [name for name in cli.COMMANDS if name not in have]
    epilog = " ".join(helped.stdout.split("\n\n")[-1].split())
    assert epilog.startswith(f"grading and instructor commands ({', '.join(others)}): install "
                             "the full course package from the course repository")
    version = mlcourse("--version")
    assert version.returncode == 0 and version.stdout == f"mlcourse {student_version()}\n"
    assert student_version() == f"{__version__}+student"
    for args in (["grade"], ["grade", "mle", "subs", "--out", "x", "--jobs", "2"], ["build"]):
        proc = mlcourse(*args)
        assert proc.returncode == 2, args
        assert "install the full course package from the course repository" in proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1


def test_the_full_install_lists_every_command_and_its_own_version():
    """This (editable, full) install: every command in --help, the package's version."""
    import subprocess
    import sys

    from mlcourse_utils import __version__, cli

    helped = subprocess.run([sys.executable, "-m", "mlcourse_utils", "--help"],
                            capture_output=True, text=True, timeout=120)
    listed = [line.split()[0] for line in helped.stdout.splitlines()
              if line.startswith("    ") and line.split()[0] in cli.COMMANDS]
    assert listed == list(cli.COMMANDS) and "install the full" not in helped.stdout
    assert all(cli.installed(c.module) for c in cli.COMMANDS.values())
    assert not cli.installed("mlcourse_utils.no_such_module")
    assert not cli.installed("mlcourse_utils.grading.no_such_module")
    assert cli.installed_version() == __version__
