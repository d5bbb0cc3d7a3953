"""The sandbox defences before a class is graded: probed (while the grader warms up), said in a
sentence, and required with ``--require-isolation``."""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Mapping, Sequence

from ..notebook import imported_by
from ..sandbox import channel
from ..text import plural
from . import analysis


class IsolationError(ValueError):
    """``--require-isolation``: a defence is missing on this machine (nothing was graded)."""


def describe_defences(found: Mapping[str, bool], verbose: bool = False) -> list[str]:
    """What ``mlcourse grade`` says about the sandbox defences: one plain sentence (whether
    every defence is in force, and in words which are missing); with ``verbose``, also the
    defences by name with what each does (as results.json records them)."""
    missing = [name for name, ok in found.items() if not ok]
    total = plural(len(found), "defence")
    if not missing:
        lines = [f"Each student's code runs in its own sandbox with all {total} in force: no "
                 "network, no view of host files or other processes, an unprivileged user, and "
                 "its own memory, process and CPU limits (--verbose names them)."]
    else:
        words = [channel.IN_WORDS.get(name, name) for name in missing]
        lines = [f"Each student's code runs in its own sandbox, but on this machine without "
                 f"{_and(words)} ({len(missing)} of {total} missing; see docs/grading-security.md, "
                 "'What each defence needs'; --require-isolation refuses to grade without them)."]
    if verbose:
        held = [name for name, ok in found.items() if ok]
        lines.append(f"defences in force: {', '.join(held) or 'none'}")
        if missing:
            lines.append("defences MISSING: " + "; ".join(
                f"{name} ({channel.DEFENCES.get(name, name)})" for name in missing))
    return lines


def _and(words: Sequence[str]) -> str:
    """``"a, b and c"``."""
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def _probe_defences(assignment, hidden, options):
    """Which sandbox defences this machine has (probed while the grader warms up), said on
    stderr; :class:`IsolationError` when one is missing and ``options.require_isolation``."""
    analysis.warm_up()  # (its imports run while the defences are probed)
    threading.Thread(target=_warm_up_grader, args=(assignment,), daemon=True).start()
    found = channel.defences(min(options.memory_mb, 1024), hidden, assignment.preload)
    for line in describe_defences(found, options.verbose):
        print(line, file=sys.stderr)
    if options.require_isolation and not all(found.values()):
        missing = [k for k, ok in found.items() if not ok]
        raise IsolationError(f"--require-isolation: {', '.join(missing)} not in force on this "
                             "machine; nothing was graded (see docs/grading-security.md, "
                             "'What each defence needs')")
    return found


def _warm_up_grader(assignment):
    """Import what the first students would otherwise import in the grader, holding its global
    lock while the others wait: the modules of the instructor's tests and set-up cells (never a
    student's text) and the feedback page's template. Run in a thread while the defences are
    probed and the first sandboxes start; a module that cannot be imported is left to the test
    that needs it (which reports it as now)."""
    import importlib

    from ..reports import feedback

    for name in imported_by([*assignment.setup, *(t.source for t in assignment.tests)]):
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 (e.g. `from numpy import pi`: not a module)
            pass
    with contextlib.suppress(Exception):
        feedback.warm_up()
