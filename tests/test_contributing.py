"""CONTRIBUTING.md's map matches the folders: every module and sub-package of `mlcourse_utils`
has its line in the tree, every line names a file that exists, and every test file it names
exists (issue 38: the map is how a maintainer who joins next term finds their way)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "mlcourse_utils"
BRANCH = re.compile(r"^(?P<indent>(?:│   |    )*)(?:├── |└── )(?P<names>.*)$")


def map_lines(text: str) -> list[str]:
    """The lines of the first ```text block after the heading "## The map"."""
    section = text.split("## The map", 1)[1]
    return section.split("```text\n", 1)[1].split("```", 1)[0].splitlines()


def tree(lines: list[str]) -> dict[str, str]:
    """``{path relative to the package's parent: the rest of its line}`` for each entry of the
    tree drawn with ├── / └── (several files may share a line: "mle.py bayes.py ...")."""
    entries: dict[str, str] = {}
    parents: list[str] = []
    for line in lines:
        m = BRANCH.match(line)
        if not m:
            continue
        depth = len(m["indent"]) // 4
        words = m["names"].split()
        names = []
        for word in words:
            if not re.fullmatch(r"[\w.]+\.py|[\w]+/", word):
                break
            names.append(word)
        rest = " ".join(words[len(names):])
        parents = parents[:depth]
        base = "/".join(["mlcourse_utils", *parents])
        for name in names:
            entries[f"{base}/{name}"] = rest
        if len(names) == 1 and names[0].endswith("/"):
            parents.append(names[0].rstrip("/"))
    return entries


def test_the_tree_reader_follows_depth_and_shared_lines():
    """Checked on a tree written by hand: a folder's children nest under it, a line with several
    files gives each its entry, and a wrapped description line is no entry."""
    lines = ["mlcourse_utils/",
             "├── a.py   the job   test_a",
             "├── b.py c.py  two at once   test_<module>",
             "│              wrapped text",
             "└── sub/   a folder",
             "    ├── d.py  deep   test_d",
             "    └── inner/",
             "        └── e.py  deeper"]
    assert tree(lines) == {"mlcourse_utils/a.py": "the job test_a",
                           "mlcourse_utils/b.py": "two at once test_<module>",
                           "mlcourse_utils/c.py": "two at once test_<module>",
                           "mlcourse_utils/sub/": "a folder",
                           "mlcourse_utils/sub/d.py": "deep test_d",
                           "mlcourse_utils/sub/inner/": "",
                           "mlcourse_utils/sub/inner/e.py": "deeper"}


@pytest.fixture(scope="module")
def entries() -> dict[str, str]:
    return tree(map_lines((ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")))


def _modules() -> tuple[set[str], set[str]]:
    """The package's modules (without the sub-packages' ``__init__.py``) and its folders."""
    modules, folders = set(), set()
    for path in PACKAGE.rglob("*"):
        if "__pycache__" in path.parts:
            continue
        rel = path.relative_to(ROOT).as_posix()
        if path.is_dir() and (any(path.glob("*.py")) or path.name == "templates"):
            folders.add(rel + "/")
        elif path.suffix == ".py" and not (path.name == "__init__.py"
                                           and path.parent != PACKAGE / "grading"):
            modules.add(rel)
    return modules, folders


def test_every_line_of_the_map_names_a_file_or_folder_that_exists(entries):
    missing = [path for path in entries if not (ROOT / path).exists()]
    assert not missing, f"CONTRIBUTING.md's map names what is not there: {missing}"


def test_every_module_and_sub_package_has_its_line(entries):
    """Each sub-package has a line; each module has one too, except the parts of a folder the map
    lists as one unit (a folder line with no lines of its own below it: the runner's parts)."""
    modules, folders = _modules()
    units = {path for path in entries if path.endswith("/")
             and not any(p != path and p.startswith(path) for p in entries)}
    folders -= {f for f in folders if any(f != u and f.startswith(u) for u in units)}
    absent = sorted(folders - set(entries))
    absent += sorted(m for m in modules - set(entries)
                     if not any(m.startswith(u) for u in units))
    assert not absent, f"not in CONTRIBUTING.md's map: {absent}"


def test_every_test_file_the_map_names_exists(entries):
    tests = {p.stem for p in (ROOT / "tests").rglob("test_*.py")}
    named = {word.rstrip(",") for rest in entries.values()
             for word in re.findall(r"\btest_[\w<>]+,?", rest)}
    unknown = sorted(n for n in named if n != "test_<module>" and n not in tests)
    assert not unknown, f"CONTRIBUTING.md's map names test files that do not exist: {unknown}"
