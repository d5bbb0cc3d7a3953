"""Headless Chromium over the DevTools pipe (book/chromium.py).

The protocol is tested against pipes whose other end the test plays (replies written before
the command is sent); one test starts the real browser where it is installed.
"""

from __future__ import annotations

import json
import os

import pytest

from mlcourse_utils.book import chromium
from mlcourse_utils.book.chromium import Browser, ChromiumError, Page


@pytest.fixture
def wired():
    """A Browser without a process, wired to two pipes: ``(browser, say, sent)``."""
    browser = Browser(executable="/nonexistent/chromium", timeout=5)
    to_child_r, browser._to_child = os.pipe()
    browser._from_child, from_child_w = os.pipe()

    def say(*messages):
        """Write messages (dicts) or raw bytes where Chromium writes."""
        for m in messages:
            os.write(from_child_w, m if isinstance(m, bytes) else json.dumps(m).encode() + b"\0")

    def sent():
        data = os.read(to_child_r, 1 << 16)
        return [json.loads(part) for part in data.split(b"\0") if part]

    yield browser, say, sent
    for fd in (to_child_r, browser._to_child, browser._from_child, from_child_w):
        os.close(fd)


def test_a_call_sends_one_message_and_returns_its_result_keeping_events(wired):
    browser, say, sent = wired
    say({"method": "Page.loadEventFired", "sessionId": "s1", "params": {"t": 1}},
        {"id": 99, "result": {"stale": True}},  # a reply to another command: ignored
        {"id": 1, "result": {"targetId": "T"}})
    assert browser.call("Target.createTarget", {"url": "about:blank"}, session="s1") == \
        {"targetId": "T"}
    assert sent() == [{"id": 1, "method": "Target.createTarget",
                       "params": {"url": "about:blank"}, "sessionId": "s1"}]
    assert browser.wait_event("Page.loadEventFired", session="s1") == {"t": 1}
    assert browser._events == []


def test_an_error_reply_names_the_method(wired):
    browser, say, _ = wired
    say({"id": 1, "error": {"code": -32000, "message": "No target with given id"}})
    with pytest.raises(ChromiumError, match="Target.closeTarget: No target with given id"):
        browser.call("Target.closeTarget", {"targetId": "x"})


def test_no_answer_is_an_error_after_the_deadline(wired):
    browser, _, _ = wired
    with pytest.raises(ChromiumError, match="did not answer in time"):
        browser.call("Browser.getVersion", timeout=0.05)


def test_a_message_split_over_reads_is_put_together(wired):
    browser, say, _ = wired
    say(b'{"id": 1, "res')
    with pytest.raises(ChromiumError, match="did not answer in time"):
        browser.call("A", timeout=0.05)  # half a message is not an answer
    say(b'ult": {"ok": 1}}\0{"method": "X", "params": {}}\0{"id": 2, "result": {"ok": 2}}\0')
    assert browser.call("B") == {"ok": 2}  # the reply to A is passed over
    assert browser.events("X") == [{}] and browser.events("X") == []


def test_events_are_taken_per_method_and_session(wired):
    browser, _, _ = wired
    browser._events = [{"method": "Network.requestWillBeSent", "sessionId": "a",
                        "params": {"request": {"url": "https://cdn.example/x.js"}}},
                       {"method": "Network.requestWillBeSent", "sessionId": "a",
                        "params": {"request": {"url": "file:///site/index.html"}}},
                       {"method": "Network.requestWillBeSent", "sessionId": "b",
                        "params": {"request": {"url": "http://other"}}},
                       {"method": "Page.loadEventFired", "sessionId": "a"}]
    page = Page(browser, "T", "a")
    assert page.remote_requests() == ["https://cdn.example/x.js"]
    assert [e["sessionId"] for e in browser._events] == ["b", "a"]


def test_a_script_error_in_the_page_is_an_error(wired):
    browser, say, sent = wired
    error = {"description": "ReferenceError: MathJax is not defined"}
    say({"id": 1, "result": {"exceptionDetails": {"text": "Uncaught", "exception": error}}},
        {"id": 2, "result": {"result": {"type": "number", "value": 2}}})
    page = Page(browser, "T", "s")
    with pytest.raises(ChromiumError, match="script failed in the page: ReferenceError"):
        page.evaluate("MathJax.startup")
    assert page.evaluate("1 + 1") == 2
    assert [m["params"]["awaitPromise"] for m in sent()] == [True, True]


def test_without_chromium_the_error_says_how_to_install_it(monkeypatch):
    monkeypatch.setattr(chromium.shutil, "which", lambda name: None)
    assert chromium.find_chromium() is None
    with pytest.raises(ChromiumError, match="apt-get install -y chromium"):
        Browser()


@pytest.mark.slow
@pytest.mark.skipif(chromium.find_chromium() is None, reason="Chromium is not installed here")
def test_a_real_page_runs_scripts_and_cannot_reach_the_network(tmp_path):
    page_file = tmp_path / "index.html"
    page_file.write_text('<html><body><p id="p">local</p>'
                         '<img src="https://example.org/x.png"></body></html>')
    with Browser(timeout=60) as browser:
        page = browser.open(page_file.as_uri())
        assert page.evaluate("document.getElementById('p').textContent") == "local"
        assert page.remote_requests() == ["https://example.org/x.png"]
        assert page.print_pdf().startswith(b"%PDF-")
