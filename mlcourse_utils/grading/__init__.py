"""Grading: the check helpers that assignment test cells import (the grader is in sub-packages).

    from mlcourse_utils.grading import check_close, check_against_reference, Case, hidden_rng
    from mlcourse_utils.grading import variant      # a student's own numbers (variants.py)

The modules of this folder are the student layer, what the student wheel ships (book/wheel.py
takes them by their place): they import nothing from the sub-packages.

    checks       the helpers test cells call (re-exported here)
    variants     a student's variant of the questions graded by hand, from their course id
    selfcheck    ``mlcourse check``: a student's notebook checked and run, one line per problem
    execute      running a notebook in a kernel with time limits (``mlcourse check``, release)
    notebook     the one reader of nbgrader metadata and markers
    names        the scan of student code: names used, aliases, tampering
    protocol     messages between grader and sandbox: plain-data codec, limits
    text         text from students made clean, CSV cells shown as text, plurals

The grader behind ``mlcourse grade`` lives in the sub-packages, one stage each. Data flows
intake -> sandbox -> graded -> reports / lms, and imports point down, never back (floors from
the bottom: the student layer; the LMSes' interface, modules and registry in lms/, which intake
asks; intake; graded and sandbox; reports; engine and lms/export; similarity):

    intake/      what ``grade`` reads: archives, the roster, submissions, their times
    sandbox/     one student's isolated run: isolation, cgroups, the image, the runner, its channel
    graded/      the graded folder (OUT) and its data: results, gradebook, reasons, late policy
    engine/      grading a class: batch, progress, merge, a session, analysis, references, release
    reports/     what people read: feedback pages, manual-grading pages, the class report
    lms/         one module per LMS (Canvas, Moodle) behind one interface; ``mlcourse export``
    similarity/  ``mlcourse similarity``: fingerprints, pairs and their report
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
from .variants import variant

__all__ = [
    "Case",
    "RemoteError",
    "check_against_reference",
    "check_close",
    "check_equal",
    "check_raises",
    "hidden_inputs",
    "hidden_rng",
    "variant",
]
