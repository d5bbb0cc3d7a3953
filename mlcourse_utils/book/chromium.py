"""Headless Chromium driven over the DevTools protocol on a pipe (no network port, no websocket).

Chromium started with ``--remote-debugging-pipe`` reads protocol messages (JSON, each ended by
a NUL byte) from its file descriptor 3 and writes replies and events to descriptor 4. This
module starts Debian's ``chromium`` that way and offers what ``mlcourse pdf`` needs: open a
local page, run a script that waits for something (MathJax), print the page to PDF. Only
``file:`` URLs are loaded: every other request is blocked and reported.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from typing import Any, Self

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-dev-shm-usage",
    "--disable-features=Translate,MediaRouter,OptimizationHints",
    "--hide-scrollbars",
    "--mute-audio",
    "--allow-file-access-from-files",
]

#: Requests that a page may not make (it must work offline).
BLOCKED_URLS = ["http://*", "https://*", "ws://*", "wss://*", "ftp://*"]


class ChromiumError(RuntimeError):
    """Chromium is missing, died, timed out or answered with an error."""


def find_chromium() -> str | None:
    """The path of Chromium (Debian's ``chromium``), or None."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class Browser:
    """One headless Chromium process; use as a context manager.

    >>> with Browser() as browser:
    ...     page = browser.open("file:///.../index.html")
    ...     pdf_bytes = page.print_pdf()
    """

    def __init__(self, executable: str | None = None, timeout: float = 120.0) -> None:
        self.executable = executable or find_chromium()
        if self.executable is None:
            raise ChromiumError("Chromium is not installed (Debian: apt-get install -y chromium)")
        self.timeout = timeout
        self._next_id = 0
        self._buffer = b""
        self._events = []
        self._proc = None

    # ------------------------------------------------------------------ process

    def __enter__(self) -> Self:
        self._profile = tempfile.TemporaryDirectory(prefix="mlcourse-chromium-")
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()

        def child_fds():  # runs in the child before exec: the pipes become fds 3 and 4
            a = fcntl.fcntl(to_child_r, fcntl.F_DUPFD, 10)
            b = fcntl.fcntl(from_child_w, fcntl.F_DUPFD, 10)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self._log = tempfile.TemporaryFile()
        self._proc = subprocess.Popen(
            [self.executable, *FLAGS, "--remote-debugging-pipe",
             f"--user-data-dir={self._profile.name}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=self._log, stderr=self._log,
            close_fds=False, preexec_fn=child_fds)
        os.close(to_child_r)
        os.close(from_child_w)
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._proc is None:
            return
        try:
            self.call("Browser.close", timeout=10)
        except ChromiumError:
            pass
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        for fd in (self._to_child, self._from_child):
            try:
                os.close(fd)
            except OSError:
                pass
        self._log.close()
        self._profile.cleanup()
        self._proc = None

    def _stderr_tail(self):
        try:
            self._log.seek(0)
            return self._log.read().decode("utf-8", "replace")[-2000:]
        except (OSError, ValueError):
            return ""

    # ------------------------------------------------------------------ protocol

    def _send(self, message):
        data = json.dumps(message).encode("utf-8") + b"\0"
        try:
            while data:
                written = os.write(self._to_child, data)
                data = data[written:]
        except OSError as exc:
            raise ChromiumError(f"Chromium stopped reading commands ({exc}); "
                                f"its log: {self._stderr_tail()}") from None

    def _receive(self, deadline):
        """The next message from Chromium (a dict); ChromiumError after ``deadline``."""
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise ChromiumError("Chromium did not answer in time")
            ready, _, _ = select.select([self._from_child], [], [], left)
            if not ready:
                continue
            chunk = os.read(self._from_child, 1 << 20)
            if not chunk:
                raise ChromiumError(f"Chromium exited; its log: {self._stderr_tail()}")
            self._buffer += chunk
        message, _, self._buffer = self._buffer.partition(b"\0")
        return json.loads(message)

    def call(self, method: str, params: dict[str, Any] | None = None, session: str | None = None,
             timeout: float | None = None) -> dict[str, Any]:
        """Send one command and return its result (events that arrive meanwhile are kept)."""
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        self._send(message)
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            reply = self._receive(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise ChromiumError(
                        f"{method}: {reply['error'].get('message', reply['error'])}")
                return reply.get("result", {})
            if "method" in reply:
                self._events.append(reply)

    def wait_event(self, method: str, session: str | None = None,
                   timeout: float | None = None) -> dict[str, Any]:
        """Wait for the event ``method`` (of ``session``); returns its parameters."""
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            for i, event in enumerate(self._events):
                if event["method"] == method and (session is None
                                                  or event.get("sessionId") == session):
                    del self._events[i]
                    return event.get("params", {})
            self._events.append(self._receive(deadline))

    def events(self, method: str, session: str | None = None) -> list[dict[str, Any]]:
        """Take every kept event ``method`` (of ``session``)."""
        taken = [e for e in self._events
                 if e["method"] == method and (session is None or e.get("sessionId") == session)]
        self._events = [e for e in self._events if e not in taken]
        return [e.get("params", {}) for e in taken]

    # ------------------------------------------------------------------ pages

    def open(self, url: str, width: int = 1000, height: int = 1400,
             media: str | None = None) -> Page:
        """Open ``url`` in a new tab (network blocked) and wait until it has loaded.

        ``width`` and ``height`` are the viewport's CSS pixels; ``media`` (e.g. ``"print"``)
        the emulated CSS media type.
        """
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.call("Target.attachToTarget",
                            {"targetId": target, "flatten": True})["sessionId"]
        page = Page(self, target, session)
        self.call("Page.enable", session=session)
        self.call("Network.enable", session=session)
        self.call("Network.setBlockedURLs", {"urls": BLOCKED_URLS}, session=session)
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
                  session=session)
        if media:
            self.call("Emulation.setEmulatedMedia", {"media": media}, session=session)
        self.call("Page.navigate", {"url": url}, session=session)
        self.wait_event("Page.loadEventFired", session=session)
        return page


class Page:
    """One tab of a :class:`Browser`."""

    def __init__(self, browser: Browser, target: str, session: str) -> None:
        self.browser = browser
        self.target = target
        self.session = session

    def evaluate(self, expression: str, timeout: float | None = None) -> Any:
        """Evaluate a JavaScript expression (awaiting a promise); return its value as JSON data."""
        result = self.browser.call(
            "Runtime.evaluate",
            {"expression": expression, "awaitPromise": True, "returnByValue": True},
            session=self.session, timeout=timeout)
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            text = details.get("exception", {}).get("description") or details.get("text")
            raise ChromiumError(f"script failed in the page: {text}")
        return result.get("result", {}).get("value")

    def remote_requests(self) -> list[str]:
        """URLs other than ``file:``/``data:``/``about:`` the page asked for (all were blocked)."""
        urls = [e.get("request", {}).get("url", "")
                for e in self.browser.events("Network.requestWillBeSent", self.session)]
        return [u for u in urls if not u.startswith(("file:", "data:", "about:", "blob:"))]

    def print_pdf(self, **options: Any) -> bytes:
        """``Page.printToPDF`` with ``options``; returns the PDF's bytes."""
        params = {"printBackground": True, "preferCSSPageSize": True, **options}
        result = self.browser.call("Page.printToPDF", params, session=self.session,
                                   timeout=max(self.browser.timeout, 300))
        return base64.b64decode(result["data"])

    def close(self) -> None:
        self.browser.call("Target.closeTarget", {"targetId": self.target})
