"""The code listings that assignments ask students to paste and run do run.

An assignment's interpretation question (graded by hand) shows the analysis it asks about as a
Python listing in its Markdown cell rather than as a code cell: the grader executes every plain
code cell of the source notebook before each test and replays every code cell after a restart,
so an analysis with scikit-learn there would slow down and destabilise autograding. Nothing
else executes these listings, so this test runs each one (no output is checked: the questions
ask students to read it), after the notebook's setup cell as a student's kernel would (it defines
`V`, the student's variant, which a listing reads): with an empty course id (the default
variant) and with a student's.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LISTING = re.compile(r"^```python\n(.*?)^```$", flags=re.M | re.S)
#: The course ids a listing runs for: the default variant and one student's.
STUDENT_IDS = ("", "s1234567")


def listings():
    found = []
    for path in sorted((ROOT / "solutions").glob("*/*.ipynb")):
        nb = json.loads(path.read_text(encoding="utf-8"))
        setup = "\n".join("".join(cell["source"]) for cell in nb["cells"]
                          if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
                          == "setup")
        for cell in nb["cells"]:
            if cell["cell_type"] != "markdown":
                continue
            gid = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id", "")
            for code in LISTING.findall("".join(cell["source"])):
                for student in STUDENT_IDS:
                    found.append(pytest.param(setup, student, code,
                                              id=f"{path.stem}-{gid}-{student or 'default'}"))
    return found


LISTINGS = listings()


def test_interpretation_questions_have_listings():
    """The first four assignments each show one analysis to paste (the parser finds them)."""
    ids = {p.id.split("-")[0] for p in LISTINGS}
    assert {"mle", "bayes", "naive_bayes", "gda"} <= ids


@pytest.mark.parametrize(("setup", "student", "code"), LISTINGS)
def test_listing_runs_and_prints(setup, student, code):
    """The listing runs without error after the setup cell (for the default variant and a
    student's) and prints what the question asks students to read."""
    namespace = {"__name__": "__listing__", "STUDENT_ID": student}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(setup, "<setup>", "exec"), namespace)
        exec(compile(code, "<listing>", "exec"), namespace)
    assert out.getvalue().strip(), "the listing printed nothing for the question to refer to"
