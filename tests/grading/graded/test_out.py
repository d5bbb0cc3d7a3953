"""The graded folder has one owner: no other module of mlcourse_utils spells a name of OUT.

The names are read from the owner (``graded/out.py``), so a file added there is covered; a
module that builds ``out / "grades.csv"`` itself, or prints ``feedback/``, fails here. Docstrings
and comments may mention the names, and so may ``--help``'s texts (argparse's ``help=`` and a
command's summary and example in ``cli.py``): they are documentation, built before the grader
may be imported.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[3] / "mlcourse_utils"
OWNER = PACKAGE / "grading" / "graded" / "out.py"

#: Each name's one module (relative to mlcourse_utils/): the owner, except nbgrader's own
#: configuration file, which course.py names for the course folder too (below everything).
OWNERS = {"nbgrader_config.py": "course.py"}


def _owner_names() -> dict[str, str]:
    """``{name: constant}`` of the string constants in capitals at the top of the owner."""
    names = {}
    for node in ast.parse(OWNER.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) \
                and isinstance(node.value.value, str) and len(node.targets) == 1 \
                and isinstance(node.targets[0], ast.Name) and node.targets[0].id.isupper():
            names[node.value.value] = node.targets[0].id
    return names


#: Every file and folder of OUT; the names the owner defines must include these (so that
#: today's code, before the owner, fails here too).
EXPECTED = ("grades.csv", "task_scores.csv", "results.json", "timestamps.json", "gradebook.db",
            "overrides.csv", "late.json", "intake.json", "nbgrader_config.py", "feedback",
            "manual", "autograded", "kept")
FOLDERS = ("feedback", "manual", "autograded", "kept")


def _documentation(tree: ast.AST) -> set[int]:
    """ids of the string constants that are documentation: docstrings (of modules, classes,
    functions, and the bare strings after an assignment), argparse's ``help=`` texts and the
    summary and example of a ``Command(...)``."""
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            ids.add(id(node.value))
        if isinstance(node, ast.keyword) and node.arg == "help":
            ids.update(id(n) for n in ast.walk(node.value))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id == "Command":
            for arg in node.args[:1] + node.args[4:5]:
                ids.update(id(n) for n in ast.walk(arg))
    return ids


def _path_operand(node: ast.Constant, parents: dict[int, ast.AST]) -> bool:
    """Whether a folder's bare name is used as a path: ``x / "feedback"``, ``Path(x,
    "feedback")``, ``os.path.join(x, "feedback")`` or a tuple of them iterated over."""
    parent = parents.get(id(node))
    if isinstance(parent, ast.BinOp) and isinstance(parent.op, ast.Div):
        return True
    if isinstance(parent, ast.Call) and node in parent.args:
        func = ast.unparse(parent.func)
        return func.endswith(("Path", "join", "joinpath"))
    if isinstance(parent, (ast.Tuple, ast.List)):
        return isinstance(parents.get(id(parent)), ast.For)
    return False


def spellings(path: Path, names: list[str]) -> dict[str, list[int]]:
    """``{name: [line, ...]}`` of the names of OUT that ``path`` spells in its code: in a
    string constant or an f-string's literal part (a file name as a word, a folder followed
    by ``/`` or alone as a path's part), docstrings and ``--help`` texts apart."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = _documentation(tree)
    parents = {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    found: dict[str, list[int]] = {}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str)) \
                or id(node) in docs:
            continue
        for name in names:
            if name in FOLDERS:
                hit = re.search(rf"(?<![\w.-]){name}/", node.value) is not None \
                    or (node.value == name and _path_operand(node, parents))
            else:
                hit = re.search(rf"(?<![\w.-]){re.escape(name)}(?!\w)", node.value) is not None
            if hit:
                found.setdefault(name, []).append(node.lineno)
    return found


def test_the_owner_names_every_file_of_out():
    assert OWNER.is_file(), "no owner of the graded folder (grading/graded/out.py)"
    missing = set(EXPECTED) - set(_owner_names()) - set(OWNERS)
    assert not missing, f"out.py does not name {sorted(missing)}"


def test_no_other_module_spells_a_name_of_out():
    names = sorted((set(_owner_names()) if OWNER.is_file() else set()) | set(EXPECTED))
    others = []
    for path in sorted(PACKAGE.rglob("*.py")):
        where = path.relative_to(PACKAGE).as_posix()
        for name, lines in spellings(path, names).items():
            owner = OWNERS.get(name, OWNER.relative_to(PACKAGE).as_posix())
            if where != owner:
                others.append(f"{where}:{lines[0]} spells {name!r} (its owner: {owner})")
    assert not others, "\n".join(others)


@pytest.mark.parametrize("code, expected", [
    ('p = out / "grades.csv"', {"grades.csv": [1]}),
    ('print(f"wrote {out}/grades.csv and feedback/")', {"grades.csv": [1], "feedback": [1]}),
    ('p = out / "feedback" / "x.html"', {"feedback": [1]}),
    ('p = os.path.join(out, "manual")', {"manual": [1]}),
    ('for sub in ("feedback", "autograded"):\n    pass', {"feedback": [1], "autograded": [1]}),
    ('"""Reads grades.csv."""\n# and results.json', {}),
    ('p.add_argument("-v", help="results.json records it")', {}),
    ('COMMANDS = {"feedback": 1, "manual": 2}', {}),       # a command's name, not a path
    ('x = f"{slug}_overrides.csv"', {}),                   # the class report's own table
])
def test_the_scan_finds_spellings_in_code_only(tmp_path, code, expected):
    """Each snippet's expected finds are read off the snippet by hand."""
    module = tmp_path / "m.py"
    module.write_text(code + "\n")
    names = ["grades.csv", "overrides.csv", "results.json", *FOLDERS]
    assert spellings(module, names) == expected


# ------------------------------------------------------------------ the owner's paths and files


def test_every_path_is_inside_the_folder_and_named_once(tmp_path):
    from mlcourse_utils.grading.graded.out import OutFolder

    out = OutFolder(tmp_path / "g")
    files = [out.grades, out.task_scores, out.results, out.timestamps, out.gradebook,
             out.overrides, out.late, out.intake, out.nbgrader_config]
    folders = [out.feedback, out.manual, out.autograded, out.kept]
    assert all(p.parent == tmp_path / "g" for p in files + folders)
    assert sorted(p.name for p in files + folders) == sorted(EXPECTED)
    assert out.feedback_page("alice") == tmp_path / "g" / "feedback" / "alice.html"
    assert out.manual_csv("derivation") == tmp_path / "g" / "manual" / "derivation.csv"


def test_timestamps_written_merged_and_read_back(tmp_path):
    """Two shards' times joined into one folder, sorted by student (as grade-merge does)."""
    from mlcourse_utils.grading.graded.out import OutFolder

    a, b, joined = (OutFolder(tmp_path / n) for n in ("a", "b", "j"))
    a.path.mkdir()
    b.path.mkdir()
    a.timestamps.write_text(json.dumps({"zoe": {"submitted": True}}))
    b.timestamps.write_text(json.dumps({"adam": {"submitted": False}}))
    joined.path.mkdir()
    joined.merge_timestamps([a, b])
    text = (tmp_path / "j" / "timestamps.json").read_text()
    assert list(json.loads(text)) == ["adam", "zoe"]
    assert joined.read_timestamps() == {"adam": {"submitted": False}, "zoe": {"submitted": True}}
    assert OutFolder(tmp_path / "none").read_timestamps() is None


def test_results_read_back_strictly(tmp_path):
    from mlcourse_utils.grading.graded.out import OutFolder

    out = OutFolder(tmp_path)
    with pytest.raises(ValueError, match="results.json is not a results file"):
        out.read_results()
    (tmp_path / "results.json").write_text('{"assignment": "mle", "students": {}}')
    graded = out.read_results()
    assert (graded.name, graded.folder, graded.results, graded.defences) == \
        ("mle", tmp_path, {}, {})


def test_the_intake_record_and_who_students_are_in_the_lms(tmp_path):
    """Written and read back as given; a folder without it, or with a broken one, knows
    nobody's LMS identity (graded from student folders)."""
    from mlcourse_utils.grading.graded.out import OutFolder

    out = OutFolder(tmp_path)
    assert out.read_intake() is None and out.read_lms_entries() == {}
    data = {"layout": "canvas", "students": {"alice": {"lms": "canvas", "user_id": "7"},
                                              "bob": "not an entry"}}
    out.write_intake(data)
    assert out.read_intake() == data
    assert out.read_lms_entries() == {"alice": {"lms": "canvas", "user_id": "7"}}
    out.intake.write_text("{broken")
    assert out.read_lms_entries() == {}


def test_a_folder_is_graded_once_it_holds_a_grade_file(tmp_path):
    from mlcourse_utils.grading.graded.out import OutFolder

    out = OutFolder(tmp_path)
    out.feedback.mkdir()
    assert not out.is_graded()
    (tmp_path / "task_scores.csv").write_text("student_id\n")
    assert out.is_graded()
    assert out.manual_csvs() == [] and out.read_record() == {} and out.read_late() == {}
