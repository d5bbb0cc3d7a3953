"""The prepared image that grading sandboxes are forked from (the grader's side).

Starting a sandbox used to mean starting Python in it and importing numpy, IPython and what the
solution imports: about half a second of CPU per student, more than the rest of its grading.
Instead, the grader starts one image per set of bound folders: the runner (``runner/``) in mode
``zygote``, run as root of fresh namespaces inside the minimal root that ``isolation.py``'s
set-up script builds (the same mounts, decoy and read-only environment as every sandbox). It
imports all that once (told the modules on its control socket, not its command line, which
every sandbox can read) and then, per sandbox, forks a child that leaves for namespaces of its
own (mount, PID, IPC, UTS, network) with a fresh ``/tmp`` and ``/dev/shm``, joins the student's
cgroup, and as PID 1 of its PID namespace starts the runner, which becomes nobody with no
capabilities and no_new_privs, reseeds numpy's and Python's random state, and installs the
seccomp filter before it answers (``runner/image.py``). The image never runs student code; each
sandbox is the same as one started from scratch, only sooner.

Used where the grader is root and namespaces work (``isolation.Process``); anything else, or
an image that fails, falls back to starting each sandbox from scratch. ``MLCOURSE_ZYGOTE=0`` in
the environment turns it off.
"""

from __future__ import annotations

import atexit
import json
import os
import select
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Sequence
from typing import Any

#: Seconds the image may take to start and import (once per grading run).
START_TIMEOUT = 120.0
#: Seconds one request may take (a spawn forks twice and mounts a few file systems).
REQUEST_TIMEOUT = 30.0


class ZygoteError(RuntimeError):
    """The image could not start or answer (the caller starts the sandbox from scratch)."""


def enabled() -> bool:
    """Whether sandboxes may be forked from a prepared image (``MLCOURSE_ZYGOTE=0``: never)."""
    return os.environ.get("MLCOURSE_ZYGOTE", "1") != "0"


class Zygote:
    """One running image (:func:`image_for` keeps one per bound folders, user and imports).
    Thread-safe: one request at a time, each with a deadline."""

    def __init__(self, control: socket.socket, proc: subprocess.Popen[bytes], log: Any) -> None:
        self._control, self.proc, self._log = control, proc, log
        self._lock = threading.Lock()
        self.broken = ""

    @classmethod
    def start(cls, flags: Sequence[str], script_for: Any, env: dict[str, str],
              preload: Sequence[str] = ()) -> Zygote:
        """Start an image: ``unshare FLAGS sh -c SCRIPT`` where ``script_for(fd)`` is the set-up
        script ending in the runner's zygote mode on control descriptor ``fd``; it is told on
        that descriptor to import the modules ``preload`` (never on its command line, which
        each sandbox forked from it could read in ``/proc``)."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        log = tempfile.TemporaryFile(prefix="mlcourse-zygote-")  # (its own words only)
        try:
            command = ["unshare", *flags, "sh", "-c", script_for(theirs.fileno())]
            proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                    pass_fds=(theirs.fileno(),), cwd="/", env=env,
                                    start_new_session=True)
        except OSError as exc:
            ours.close()
            log.close()
            raise ZygoteError(f"the prepared image could not start ({exc})") from None
        finally:
            theirs.close()
        image = cls(ours, proc, log)
        try:
            ours.send(json.dumps({"preload": list(preload)}).encode())
            reply = image._receive(time.monotonic() + START_TIMEOUT)
        except OSError as exc:
            image.close()
            raise ZygoteError(f"the prepared image did not start ({exc}): {image._said()}") \
                from None
        except ZygoteError as exc:
            image.close()
            raise ZygoteError(f"{exc}: {image._said()}") from None
        if reply.get("ready") is not True:
            image.close()
            raise ZygoteError(f"the prepared image did not start: {image._said()}")
        return image

    def _said(self) -> str:
        try:
            self._log.seek(0)
            text = self._log.read()[-2000:].decode("utf-8", "replace").strip()
        except (OSError, ValueError):
            text = ""
        return text.splitlines()[-1] if text else "no message"

    def _receive(self, deadline: float) -> dict[str, Any]:
        self._control.settimeout(max(0.0, deadline - time.monotonic()))
        try:
            data = self._control.recv(1 << 16)
        except (OSError, TimeoutError) as exc:
            raise ZygoteError(f"the prepared image did not answer ({exc})") from None
        if not data:
            raise ZygoteError("the prepared image has ended")
        reply = json.loads(data)
        if "error" in reply:
            raise ZygoteError(f"the prepared image failed: {reply['error']}")
        return reply

    def request(self, message: dict[str, Any], fds: Sequence[int] = ()) -> dict[str, Any]:
        """Send one request (with descriptors) and return its reply; ZygoteError otherwise.
        An image that does not answer in time is ended at once, with every sandbox forked from
        it: a request it carried out late (a fork on pipes the grader gave up) must not run."""
        with self._lock:
            if self.broken:
                raise ZygoteError(self.broken)
            try:
                socket.send_fds(self._control, [json.dumps(message).encode()], list(fds))
                return self._receive(time.monotonic() + REQUEST_TIMEOUT)
            except (OSError, ZygoteError, ValueError) as exc:
                self.broken = str(exc)
                self._end()
                raise ZygoteError(self.broken) from None

    def spawn(self, fds: Sequence[int], spec: dict[str, Any]) -> ZygoteChild:
        """Fork a sandbox: ``fds`` are its request pipe's read end, its reply pipe's write end,
        its output pipe's write end and then the cgroup files it joins (opened for writing);
        ``spec`` has ``uid``, ``rlimits`` and ``mode``."""
        death_r, death_w = os.pipe()  # PID 1 of the sandbox holds the write end until it ends
        try:
            reply = self.request({"op": "spawn", "spec": spec}, [*fds[:3], death_w, *fds[3:]])
        except ZygoteError:
            os.close(death_r)
            raise
        finally:
            os.close(death_w)
        if "pid" not in reply:
            os.close(death_r)
            raise ZygoteError(f"the prepared image could not fork a sandbox (status "
                              f"{reply.get('failed')})")
        return ZygoteChild(self, int(reply["pid"]), death_r)

    def _end(self):
        try:
            self._control.close()
        except OSError:
            pass
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()

    def close(self) -> None:
        """End the image (and with it any sandbox still forked from it)."""
        with self._lock:
            self.broken = self.broken or "closed"
            self._end()
        self._log.close()


class ZygoteChild:
    """A sandbox forked from an image, with the parts of ``subprocess.Popen`` that
    ``isolation.Process`` uses: ``pid`` (in the image's namespace), ``poll``, ``wait``,
    ``kill`` and ``returncode`` (as Popen's: the runner's exit status, or -N when signal N
    ended it, the sandbox's PID 1 included).

    How it ended is read from its death pipe: its PID 1 writes ``E<status>`` or ``S<signal>``
    there when the runner ends, and the pipe closes when the namespace does (nothing written:
    it was killed). Asking whether it still runs costs no request to the image."""

    def __init__(self, image: Zygote, pid: int, death_fd: int) -> None:
        self.image, self.pid = image, pid
        self.returncode = None
        self._death = death_fd
        self._said = b""
        self._released = False

    def _ended(self, timeout: float) -> bool:
        """Whether the sandbox has ended (waiting at most ``timeout`` seconds to know)."""
        while self.returncode is None:
            try:
                if not select.select([self._death], [], [], max(0.0, timeout))[0]:
                    return False
                chunk = os.read(self._death, 16)
            except (OSError, ValueError):
                chunk = b""
            if chunk and len(self._said) < 16:
                self._said += chunk
                timeout = 1.0  # (PID 1 exits right after it wrote)
                continue
            os.close(self._death)
            said = self._said.decode("ascii", "replace")
            if said[:1] in ("E", "S") and said[1:].isdigit():
                self.returncode = int(said[1:]) * (-1 if said[0] == "S" else 1)
            else:
                self.returncode = -9  # killed (by the grader, or with its image)
        return True

    def poll(self) -> int | None:
        self._ended(0)
        return self.returncode

    def kill(self) -> None:
        """End the sandbox's whole PID namespace (SIGKILL to its PID 1) unless it has ended;
        either way the image forgets it (once reaped)."""
        if not self._released:
            self._released = True
            try:
                self.image.request({"op": "kill", "pid": self.pid})
            except ZygoteError:
                pass  # (the image is gone, and every sandbox with it)

    def wait(self, timeout: float | None = None) -> int:
        if not self._ended(1e9 if timeout is None else timeout):
            raise subprocess.TimeoutExpired("sandbox", timeout)
        return self.returncode


_images: dict[tuple[Any, ...], Zygote] = {}
_images_lock = threading.Lock()


def image_for(key: tuple[Any, ...], start: Any) -> Zygote:
    """The running image for ``key`` (started with ``start()`` on first use, or again after
    it broke); ZygoteError when it cannot start."""
    with _images_lock:
        image = _images.get(key)
        if image is None or image.broken or image.proc.poll() is not None:
            if image is not None:
                image.close()
            image = _images[key] = start()
        return image


@atexit.register
def close_all() -> None:
    """End every image (at exit; a sandbox still running ends with its image)."""
    with _images_lock:
        for image in _images.values():
            image.close()
        _images.clear()


