"""The program that runs a student's notebook inside the grading sandbox, kept in parts by job.

The grader starts it as ``python -I -c <its text> READ_FD WRITE_FD MODE`` inside fresh namespaces
and a minimal root, as an unprivileged user (see ``isolation.py``), which runs ``main``. Its first
act is to install a seccomp filter; then it executes the cells it is sent and calls answer
functions on the inputs it is sent, and answers with plain data, each reply carrying its
request's id. It must not import ``mlcourse_utils`` (the sandbox's root does not hold it): it only
uses the standard library, numpy and IPython (with its traitlets; imported by ``main`` after the
filter, so that every thread they start inherits it).

Nothing in it is trusted: the student's code runs in its process and may change anything in it,
including its loop. The grader therefore treats every byte that comes back as untrusted data,
with deadlines and size limits, and decides every verdict in its own process.

Its text is this folder's parts joined in the order of :data:`PARTS` (:func:`runner_text`): one
program, one namespace, as when it was one file, so the parts need no import system inside the
sandbox and the watch on forbidden calls sees the runner's own code as one. A part uses a name
of an earlier part without importing it (a ``TYPE_CHECKING`` import names it for the reader and
the linters); importing a part on the grader's side only defines it. This module is the
grader's side: it reads the parts, and imports none of them.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

#: The parts, in the order they are joined (a part uses only names of the parts before it,
#: but for ``image``, whose forked runner calls ``main``).
PARTS = (
    "seccomp",          # the seccomp filter, installed before anything else
    "pipe",             # the pipes to the grader: framed messages, plain data, warnings, errors
    "watch_rules",      # the watch on forbidden calls: how it works, its constants and texts
    "watch_stand_ins",  # ... stand-ins in place of the forbidden functions; copies refused
    "watch_names",      # ... where the watched names live, resolved when they are imported
    "watch_owners",     # ... whose code runs (library or student); calls a library makes itself
    "watch_events",     # ... what the audit hook does with each event it hears
    "watch_install",    # ... its state, reports, import hook and audit hook, put together
    "serve",            # the loop that answers the grader's requests
    "image",            # the prepared image each sandbox is forked from (zygote)
    "main",             # the start: filter, pipes, then the loop or the image
)

#: The longest a single argument of a command may be on Linux (MAX_ARG_STRLEN, 32 pages): the
#: text travels as one, inside the set-up script of ``isolation.py``.
MAX_ARG_STRLEN = 131072


@cache
def runner_text() -> str:
    """The program's text: the parts joined in the order of :data:`PARTS`."""
    folder = Path(__file__).parent
    return "\n\n".join((folder / f"{name}.py").read_text(encoding="utf-8").rstrip("\n")
                       for name in PARTS) + "\n"
