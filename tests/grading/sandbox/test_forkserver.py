"""Unit tests of grading/sandbox/forkserver.py: a fresh child per request answers it, a child that
runs past its deadline is killed, and a reply over the size limit is refused."""

from __future__ import annotations

import os
import time

import pytest

from mlcourse_utils.grading.sandbox import forkserver

pytestmark = pytest.mark.skipif(os.name != "posix", reason="the fork server is POSIX-only")


def upper_with_pid(message: bytes) -> bytes:
    """A job: the request in capitals and the child's pid (each request gets its own child)."""
    return message.upper() + b" " + str(os.getpid()).encode()


def sleep_then_answer(message: bytes) -> bytes:
    time.sleep(float(message))
    return b"late"


def huge(message: bytes) -> bytes:
    return b"x" * int(message)


def _server(job, max_reply=1000):
    return forkserver.Server(["json"], f"test_forkserver:{job}", max_reply)


def test_each_request_is_answered_by_its_own_child():
    server = _server("upper_with_pid")
    first, timed_out = server.run(b"abc", time.monotonic() + 60)
    second, _ = server.run(b"def", time.monotonic() + 60)
    assert not timed_out
    text1, pid1 = first.split(b" ")
    text2, pid2 = second.split(b" ")
    assert (text1, text2) == (b"ABC", b"DEF")
    assert pid1 != pid2 and int(pid1) != os.getpid()


def test_a_child_past_its_deadline_is_killed_and_reported_as_timed_out():
    server = _server("sleep_then_answer")
    start = time.monotonic()
    reply, timed_out = server.run(b"30", start + 1.0)
    assert (reply, timed_out) == (None, True)
    assert time.monotonic() - start < 25  # not the child's 30 s: the grader stopped waiting


def test_a_reply_over_the_limit_is_refused():
    server = _server("huge", max_reply=1000)
    assert server.run(b"900", time.monotonic() + 60) == (b"x" * 900, False)
    reply, timed_out = server.run(b"5000", time.monotonic() + 60)
    assert reply is None and not timed_out


def test_limit_memory_caps_the_address_space_above_what_is_used():
    import resource
    import subprocess
    import sys

    code = ("import resource; from mlcourse_utils.grading.sandbox import forkserver\n"
            "forkserver.limit_memory(64)\n"
            "soft, _ = resource.getrlimit(resource.RLIMIT_AS)\n"
            "try:\n    b = bytearray(256 * 2**20)\n    print('allocated', soft)\n"
            "except MemoryError:\n    print('refused', soft)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60).stdout.split()
    assert out[0] == "refused"  # 256 MB more than used, where 64 MB were allowed
    assert int(out[1]) != resource.RLIM_INFINITY
