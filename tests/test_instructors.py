"""The instructor edition's page for instructors (book/instructors.py), written from the solution
notebooks; its place in the build is test_editions' (the hook) and test_website's (the site)."""

from __future__ import annotations

import ast
import json

import nbformat
import pytest

from mlcourse_utils.book import instructors
from mlcourse_utils.course import ASSIGNMENTS, ROOT
from mlcourse_utils.grading.notebook import key_result_text
from mlcourse_utils.grading.variants import ID_LINE, ID_LINE_OFF, QUESTIONS

PLANS = instructors.assignment_plans(ROOT)


def _cells(name):
    return json.loads((ROOT / "solutions" / name / f"{name}.ipynb").read_text())["cells"]


def _graded_points(name, solution):
    """The points of a notebook's graded cells, read from its JSON: the test cells
    (``solution=False``) or the cells graded by hand (``solution=True``)."""
    total = 0.0
    for cell in _cells(name):
        meta = cell["metadata"].get("nbgrader", {})
        if meta.get("grade") and bool(meta.get("solution")) == solution:
            total += meta["points"]
    return total


def test_every_assignment_in_course_order():
    assert [p.name for p in PLANS] == list(ASSIGNMENTS)


@pytest.mark.parametrize("plan", PLANS, ids=[p.name for p in PLANS])
def test_points_are_the_notebooks(plan):
    """The autograded and the hand-graded points add up to those of the notebook's cells."""
    assert plan.autograded == _graded_points(plan.name, solution=False)
    assert plan.manual_points == _graded_points(plan.name, solution=True)
    assert plan.total == plan.autograded + plan.manual_points
    assert plan.chapter is not None and (ROOT / f"{plan.chapter}.md").is_file()


@pytest.mark.parametrize("plan", PLANS, ids=[p.name for p in PLANS])
def test_beyond_the_chapter_are_the_tasks_of_the_instructor_reference(plan):
    """A task beyond the chapter has no reference in the package: its hidden tests compare with
    solutions/NAME/instructor_reference.py, which defines exactly those tasks."""
    tree = ast.parse((ROOT / "solutions" / plan.name / "instructor_reference.py").read_text())
    referenced = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    tasks = {t.name for t in plan.tasks}
    assert {t.name for t in plan.tasks if t.beyond} == referenced & tasks
    assert 2 * plan.beyond_points >= plan.autograded  # CHAPTER.md: at least half


@pytest.mark.parametrize("plan", PLANS, ids=[p.name for p in PLANS])
def test_hand_graded_cells_say_what_they_ask(plan):
    """Every cell graded by hand is listed with a title that says what it asks (the question's
    heading has a subtitle), and every derivation with its key result."""
    assert plan.hand_graded
    for h in plan.hand_graded:
        assert h.kind in ("derivation", "interpretation")
        assert "graded by hand" not in h.title and h.title.lower() not in (
            "derivation", "derivations", "interpretation", "interpretation on real data"), h
        if h.kind == "derivation":
            assert h.key_results and h.key_result


PAGE = instructors.page(ROOT)


def test_the_page_lists_every_task_and_hand_graded_cell_with_its_grading_page():
    for plan in PLANS:
        for task in plan.tasks:
            beyond = "yes" if task.beyond else ""
            assert f"| `{task.name}` | {task.points:g} | {beyond} |" in PAGE
        for h in plan.hand_graded:
            assert f"`graded/{plan.name}/manual/{h.grade_id}.html`" in PAGE
            assert h.key_result in PAGE
        assert (f"| `{plan.name}` | {{doc}}`/{plan.chapter}` | {plan.autograded:g} | "
                f"{plan.beyond_points:g} | {plan.manual_points:g} | {plan.total:g} |") in PAGE


def test_the_page_describes_todays_grading():
    """Manual grading runs on the course's own pages; the page never sends anyone to
    nbgrader's formgrader."""
    assert "formgrader" not in PAGE.lower()
    assert "mlcourse grade-import" in PAGE and PAGE.startswith("(instructors)=\n# For instructors")


def test_the_student_page_only_points_to_the_instructor_edition():
    """book/instructors.md, what the student edition shows, names no task, points or page."""
    text = (ROOT / "book" / "instructors.md").read_text()
    assert len([line for line in text.splitlines()[2:] if line.strip()]) <= 3
    assert "instructor edition" in " ".join(text.split())
    for plan in PLANS:
        assert not any(t.name in text for t in plan.tasks)
        assert not any(h.grade_id in text for h in plan.hand_graded)


@pytest.mark.parametrize("heading,title", [
    ("Derivation (graded by hand): the exponential rate", "the exponential rate"),
    ("Derivations (graded by hand): the two extensions", "the two extensions"),
    ("Interpretation (graded by hand): which diabetes features survive?",
     "which diabetes features survive?"),
    ("Derivation (graded by hand)", "Derivation"),
    ("A prior on the covariance", "A prior on the covariance"),
])
def test_title_of_a_heading(heading, title):
    assert instructors._title(heading) == title


def _cell(kind, source, **nbgrader):
    make = nbformat.v4.new_code_cell if kind == "code" else nbformat.v4.new_markdown_cell
    cell = make(source)
    cell.metadata["nbgrader"] = {"schema_version": 3, "locked": False, "task": False,
                                 "grade": False, "solution": False, **nbgrader}
    return cell


def test_a_small_notebook(tmp_path):
    """Two tasks (2 + 3 points and 4 points), the second one not in mlcourse_utils.mle (beyond
    the chapter), a derivation (3 points) under a titled heading and an interpretation (2 points)
    under one without a subtitle: the plan says so, counted by hand."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        _cell("markdown", "## 1. The Bernoulli MLE", grade_id="md_1", locked=True),
        _cell("code", "def bernoulli_mle(x):\n    return 0.5\n", grade_id="bernoulli_mle",
              solution=True),
        _cell("code", "assert True\n", grade_id="test_bernoulli_mle", grade=True, points=2),
        _cell("code", "assert True\n", grade_id="test_bernoulli_mle_hidden", grade=True,
              points=3),
        _cell("code", "def my_new_rate(x):\n    return 1.0\n", grade_id="my_new_rate",
              solution=True),
        _cell("code", "assert True\n", grade_id="test_my_new_rate", grade=True, points=4),
        _cell("markdown", "### Derivation (graded by hand): the new rate\n\nDerive it.",
              grade_id="md_2", locked=True),
        _cell("markdown", "**Model answer.** ...\n\n**Key result.** $\\hat\\theta = d/S$ holds.\n\n"
              "*Rubric.* ...", grade_id="derivation_new_rate", grade=True, solution=True,
              points=3),
        _cell("markdown", "## 3. Interpretation (graded by hand)\n\nSay why.",
              grade_id="md_3", locked=True),
        _cell("markdown", "It is so.", grade_id="interpretation_x", grade=True, solution=True,
              points=2),
    ]
    folder = tmp_path / "solutions" / "mle"
    folder.mkdir(parents=True)
    nbformat.write(nb, folder / "mle.ipynb")
    plan = instructors.assignment_plan("mle", tmp_path)
    assert [(t.name, t.points, t.beyond) for t in plan.tasks] == [
        ("bernoulli_mle", 5.0, False), ("my_new_rate", 4.0, True)]
    assert [(h.grade_id, h.points, h.kind, h.title) for h in plan.hand_graded] == [
        ("derivation_new_rate", 3.0, "derivation", "the new rate"),
        ("interpretation_x", 2.0, "interpretation", "Interpretation")]
    assert plan.hand_graded[0].key_results == ["\\hat\\theta = d/S"]
    assert plan.hand_graded[0].key_result == "$\\hat\\theta = d/S$ holds."
    assert plan.hand_graded[0].page == "manual/derivation_new_rate.html"
    assert (plan.autograded, plan.beyond_points, plan.manual_points, plan.total) == (9, 4, 5, 14)
    assert plan.chapter is None  # no book/mle.md in tmp_path
    assert key_result_text(nb.cells[7].source) == plan.hand_graded[0].key_result


def test_the_page_shows_each_assignment_s_variants():
    """Per assignment, whether variants are on and, per question that varies, its section,
    grade_id, every parameter with its number of choices, and its distinct variants: the
    product of the numbers of choices, multiplied here from QUESTIONS' parameters (not from
    Question.count, which the page uses)."""
    for plan in PLANS:
        assert plan.variants is True  # on for every released assignment (the default)
        block = PAGE.split(f"### `{plan.name}`", 1)[1].split("\n### ", 1)[0]
        assert "**Per-student variants: on.**" in block
        assert [q.grade_id for q in plan.varying] == list(QUESTIONS[plan.name])
        for q in plan.varying:
            params = QUESTIONS[plan.name][q.grade_id].params
            product = 1
            for choices in params.values():
                product *= len(choices)
            assert q.count == product and q.count >= 2
            rows = [line for line in block.splitlines() if line.startswith("| ")]
            first = next(i for i, r in enumerate(rows) if r.startswith(f"| `{q.grade_id}` |"))
            for k, (param, choices) in enumerate(params.items()):
                cells = [c.strip() for c in rows[first + k].strip("|").split(" | ")]
                assert cells[2] == f"`{param}`"
                assert cells[3].endswith(f"({len(choices)})")
                assert cells[:2] == ([f"`{q.grade_id}`", q.section] if k == 0 else ["", ""])
                assert cells[4] == (str(product) if k == 0 else "")


def test_the_page_s_lines_are_variants_py_s():
    """The id cell's lines the page quotes are those of grading/variants.py."""
    assert f"`{ID_LINE.partition('#')[0].strip()}`" in PAGE
    assert f"`{ID_LINE_OFF.partition('#')[0].strip()}`" in PAGE
    assert '`STUDENT_ID = ""`' in PAGE and "`STUDENT_ID = None`" in PAGE


def test_the_student_edition_says_nothing_of_variants():
    """The student edition's page names no varying question, parameter or count."""
    text = (ROOT / "book" / "instructors.md").read_text()
    assert "variant" not in text.lower()
    for questions in QUESTIONS.values():
        for gid, question in questions.items():
            assert gid not in text and not any(f"`{p}`" in text for p in question.params)


@pytest.mark.parametrize("choices,text", [
    (tuple(range(31)), "`0`, `1`, …, `30`"),
    ((0, 1, 2, 3), "`0`, `1`, `2`, `3`"),           # fewer than five: all of them
    ((100, 60, 80, 120, 140), "`100`, `60`, `80`, `120`, `140`"),   # not a run
    (((1, 1), (2, 2)), "`(1, 1)`, `(2, 2)`"),
    (("bmi", "s5"), "`'bmi'`, `'s5'`"),
    ((True, False, 2, 3, 4), "`True`, `False`, `2`, `3`, `4`"),    # booleans are not numbers
])
def test_choices_in_words(choices, text):
    assert instructors.choices_text(choices) == text


def test_variants_of_a_small_notebook(tmp_path, monkeypatch):
    """A question that varies in three parameters of 3, 2 and 4 choices has 3 * 2 * 4 = 24
    distinct variants; with `"variants": false` in the notebook the page says they are off
    (every student answers the default variant) and still lists the question."""
    from mlcourse_utils.grading.variants import Question

    question = Question("3", "{a} {b} {c}", a=(1, 2, 3), b=("x", "y"), c=(0.5, 1.0, 2.0, 4.0))
    monkeypatch.setitem(QUESTIONS, "mle", {"interpretation_x": question})
    nb = nbformat.v4.new_notebook()
    nb.metadata["mlcourse"] = {"variants": False}
    nb.cells = [
        _cell("code", "def bernoulli_mle(x):\n    return 0.5\n", grade_id="bernoulli_mle",
              solution=True),
        _cell("code", "assert True\n", grade_id="test_bernoulli_mle", grade=True, points=2),
        _cell("markdown", "## 3. Interpretation (graded by hand): why\n\nSay why.",
              grade_id="md_3", locked=True),
        _cell("markdown", "It is so.", grade_id="interpretation_x", grade=True, solution=True,
              points=2),
    ]
    folder = tmp_path / "solutions" / "mle"
    folder.mkdir(parents=True)
    nbformat.write(nb, folder / "mle.ipynb")
    plan = instructors.assignment_plan("mle", tmp_path)
    assert plan.variants is False
    assert [(q.grade_id, q.section, q.count) for q in plan.varying] == [
        ("interpretation_x", "3", 24)]
    assert plan.varying[0].params == {"a": (1, 2, 3), "b": ("x", "y"),
                                      "c": (0.5, 1.0, 2.0, 4.0)}
    page = instructors.page(tmp_path)
    assert "**Per-student variants: off**" in page and "variants: on" not in page
    assert "| `interpretation_x` | 3 | `a` | `1`, `2`, `3` (3) | 24 |" in page
    assert "|  |  | `b` | `'x'`, `'y'` (2) |  |" in page
    assert "|  |  | `c` | `0.5`, `1.0`, `2.0`, `4.0` (4) |  |" in page
