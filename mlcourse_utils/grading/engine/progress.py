"""A class's run as it goes: the progress line naming who takes long, Ctrl-C and SIGTERM ending it
at once, and the grader's own stalls and memory (results.json's ``run``)."""

from __future__ import annotations

import concurrent.futures
import contextlib
import resource
import signal
import sys
import threading
import time
from collections.abc import Mapping

from ..sandbox import isolation
from ..text import clean_text, plural


class _StallWatch(threading.Thread):
    """Measures how long the grader's threads could not run (the longest late wake-up)."""

    def __init__(self, tick: float = 0.05) -> None:
        super().__init__(name="mlcourse-stall-watch", daemon=True)
        self.tick, self.longest, self._done = tick, 0.0, threading.Event()

    def run(self) -> None:
        while True:
            before = time.monotonic()
            if self._done.wait(self.tick):
                return
            self.longest = max(self.longest, time.monotonic() - before - self.tick)

    def stop(self) -> float:
        self._done.set()
        self.join()
        return self.longest

def _completed(futures, tick=None):
    """``as_completed(futures)``, calling ``tick()`` at least every :data:`PROGRESS_TICK`
    seconds while it waits (the progress line). When the run is interrupted (Ctrl-C, SIGTERM)
    while the caller waits here or handles a result (the generator is then closed), the
    students not started yet are cancelled and every sandbox is stopped, so that the pool ends
    at once."""
    pending = set(futures)
    try:
        while pending:
            done, pending = concurrent.futures.wait(
                pending, timeout=PROGRESS_TICK, return_when=concurrent.futures.FIRST_COMPLETED)
            yield from done
            if tick is not None:
                tick()
    except BaseException:
        for future in futures:
            future.cancel()
        isolation.stop_all()
        raise


@contextlib.contextmanager
def _sigterm_interrupts():
    """SIGTERM (``kill``, a batch system ending a job) interrupts grading as Ctrl-C does."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)

#: A student graded for longer than this (seconds) is named on the progress line.
LONG_WAIT = 10.0
#: How often (seconds) the progress line is brought up to date while nobody finishes.
PROGRESS_TICK = 1.0


def waiting_on(started: Mapping[str, float], now: float, after: float = LONG_WAIT) -> str:
    """The progress line's note on the student graded longest, once that is more than
    ``after`` seconds (``started``: ``{student: time.monotonic() when their grading began}``);
    "" when nobody takes that long. Seconds are shown in steps of 5, so the line changes
    rarely."""
    slow = sorted((start, student) for student, start in list(started.items())
                  if now - start > after)
    if not slow:
        return ""
    start, student = slow[0]
    note = f"waiting for {clean_text(student, 60)} ({int(now - start) // 5 * 5} s)"
    return note + (f" and {plural(len(slow) - 1, 'other')} over {after:g} s"
                   if len(slow) > 1 else "")


def _running(started, student, grade, *args, **kwargs):
    """``grade(*args, **kwargs)``, with ``started[student]`` set while it runs."""
    started[student] = time.monotonic()
    try:
        return grade(*args, **kwargs)
    finally:
        started.pop(student, None)

def _peak_memory_mb():
    """The grader's largest resident memory so far (MB)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 1024 if sys.platform != "darwin" else peak / 2**20
