"""Grading: the check helpers that assignment test cells import (the grader is in submodules).

    from mlcourse_utils.grading import check_close, check_against_reference, Case, hidden_rng

The grader behind ``mlcourse grade`` lives in the submodules, one job each (dependencies point
one way: batch → session → sandbox → protocol; everyone → notebook):

    checks       the helpers test cells call (re-exported here)
    text         text from students made clean, CSV cells shown as text
    results      the result data model, results.json, grades.csv and task_scores.csv
    protocol     messages between grader and sandbox: plain-data codec, limits
    notebook     the one reader of nbgrader metadata and markers
    submissions  a class's submissions read as data, once: one Submission per student
    intake       SUBMISSIONS in any layout: student folders, a Canvas or Moodle download
    cgroups      per-student memory, process and CPU limits
    sandbox      starting one student's sandboxed process and talking to it (runner.py inside)
    analysis     reading a submitted notebook in a child process with time and memory limits
    answers      a student's written answers as safe HTML (inside analysis's child)
    session      grading one notebook: cells in the sandbox, tests in the grader, reasons
    batch        grading a class: jobs, progress, the output folder
    report       grades.csv, task_scores.csv and the feedback pages (templates/feedback.html)
    gradebook    nbgrader's gradebook.db and the sanitised autograded/ copies
    execute      running a notebook in a kernel with time limits (``mlcourse check``, release)
    release      regenerating exercises/ with nbgrader, and each release's generated first cell
    selfcheck    ``mlcourse check``: a student's notebook checked and run, one line per problem
    fingerprints answer code as normalised tokens and winnowed k-gram fingerprints
    references   the public code answers could be copied from (reference module, solution, stub)
    similarity   ``mlcourse similarity``: answers that match, pairwise and against the reference
    similarity_report  its similarity.csv and similarity.html (templates/similarity.html)
    manual       pages for manual grading, the teaching assistant's points read back (grade-import)
    lms          submission times, the late policy, Canvas and Moodle files (``mlcourse export``)
    requirements what grading needs installed (the ``[grading]`` extra)
"""

from .checks import (
    Case,
    RemoteError,
    check_against_reference,
    check_close,
    check_equal,
    check_raises,
    hidden_inputs,
    hidden_rng,
)

__all__ = [
    "Case",
    "RemoteError",
    "check_against_reference",
    "check_close",
    "check_equal",
    "check_raises",
    "hidden_inputs",
    "hidden_rng",
]
