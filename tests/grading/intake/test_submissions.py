"""A class's submissions read as data, once (grading/intake/submissions.py).

Each student's folder is read once, into a :class:`Submission`: the notebook's bytes and the
time beside it are opened once, nothing stats or re-reads a student's files afterwards, and a
grading run of the class is made from those records alone (checked by changing the folders
after they were read: every output still shows what was handed in).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import sys
from collections import Counter
from pathlib import Path

import pytest

import assignment_support as sup
from mlcourse_utils.grading.intake import submissions
from mlcourse_utils.grading.notebook import load_assignment

# ------------------------------------------------------------------ counting reads

#: While a test records: ``(event, path)`` of every open, listing and stat of a path in it.
_RECORD: list[tuple[str, str]] | None = None


def _path_of(arg):
    try:
        return os.path.abspath(os.fsdecode(arg))
    except TypeError:  # a file descriptor
        return None


def _audit(event, args):
    if _RECORD is not None and event in ("open", "os.scandir", "os.listdir") and args:
        path = _path_of(args[0])
        if path is not None:
            _RECORD.append(("open" if event == "open" else "list", path))


sys.addaudithook(_audit)  # (audit hooks cannot be removed: it records only inside `reads`)


class _Reads:
    """What was opened, listed and stat'ed under a folder while recording."""

    def __init__(self, folder):
        self.folder = str(folder) + os.sep
        self.events: list[tuple[str, str]] = []

    def of(self, student):
        """``Counter({(event, path relative to the student's folder): times})``."""
        prefix = self.folder + student + os.sep
        return Counter((e, p[len(prefix):]) for e, p in self.events
                       if p.startswith(prefix) or p + os.sep == prefix)


@pytest.fixture
def reads(monkeypatch):
    """``reads(folder)`` starts recording every open, listing and stat under ``folder`` (in this
    process, from every thread); stats are counted by wrapping os.stat and os.lstat, which
    pathlib and os.path call."""
    global _RECORD
    real_stat, real_lstat = os.stat, os.lstat

    def stat(path, *args, **kwargs):
        if _RECORD is not None and _path_of(path) is not None:
            _RECORD.append(("stat", _path_of(path)))
        return real_stat(path, *args, **kwargs)

    def lstat(path, *args, **kwargs):
        if _RECORD is not None and _path_of(path) is not None:
            _RECORD.append(("stat", _path_of(path)))
        return real_lstat(path, *args, **kwargs)

    def start(folder):
        global _RECORD
        recorder = _Reads(Path(folder).resolve())
        _RECORD = recorder.events
        monkeypatch.setattr(os, "stat", stat)
        monkeypatch.setattr(os, "lstat", lstat)
        return recorder

    yield start
    _RECORD = None


def _class(subs, answers=None):
    """alice (her notebook and timestamp.txt in her folder) and bob (nbgrader's layout, no
    timestamp: the file's time)."""
    nb = sup.make_submission("mle", answers)
    alice = sup.write_submission(subs, "alice", "mle", nb=nb,
                                 files={"timestamp.txt": "2026-03-02 23:05:00+01:00"})
    bob = sup.write_submission(subs, "bob", "mle", nb=nb, nested=True)
    os.utime(bob, (1772_500_000, 1772_500_000))  # 2026-03-03 01:06:40 UTC
    return alice, bob


# ------------------------------------------------------------------ one read per file


def test_each_students_files_are_read_once_and_never_stat(tmp_path, reads):
    subs = (tmp_path / "subs").resolve()
    alice, bob = _class(subs)
    recorded = reads(subs)
    found = submissions.find_submissions("mle", subs, "mle.ipynb")
    assert recorded.of("alice") == Counter({("list", ""): 1, ("open", "mle.ipynb"): 1,
                                            ("open", "timestamp.txt"): 1})
    assert recorded.of("bob") == Counter({("list", ""): 1, ("list", "mle"): 1,
                                          ("open", "mle/mle.ipynb"): 1,
                                          ("open", "mle/timestamp.txt"): 1})  # (none there)
    assert found["alice"].data == alice.read_bytes() and found["bob"].data == bob.read_bytes()
    assert (found["alice"].time, found["alice"].time_source) == \
        ("2026-03-02T23:05:00+01:00", "timestamp.txt")
    assert (found["bob"].time, found["bob"].time_source) == \
        ("2026-03-03T01:06:40+00:00", "file time")


def test_a_submission_says_why_it_earns_nothing(tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "two").mkdir()
    for name in ("a.ipynb", "b.ipynb"):  # neither is named as released: which one?
        (tmp_path / "two" / name).write_text("{}")
    (tmp_path / "renamed").mkdir()
    (tmp_path / "renamed" / "mle (1).ipynb").write_text('{"only": 1}')  # the only notebook
    (tmp_path / "big").mkdir()
    with open(tmp_path / "big" / "mle.ipynb", "wb") as fh:
        fh.truncate(submissions.MAX_NOTEBOOK_BYTES + 1)
    found = submissions.find_submissions("mle", tmp_path, "mle.ipynb")
    assert found["empty"].reason == found["two"].reason == submissions.NOTHING_SUBMITTED
    assert found["renamed"].data == b'{"only": 1}' and found["renamed"].reason == ""
    assert not found["big"].submitted
    assert found["big"].reason == "the notebook could not be read (the notebook is larger than " \
                                  "16 MB)"
    # Handed in, though refused: submitted for the export (a zero, not a missing grade), with
    # the file's time.
    stamp = dt.datetime(2026, 3, 1, 12, 0, tzinfo=dt.UTC).timestamp()
    os.utime(tmp_path / "big" / "mle.ipynb", (stamp, stamp))
    big = submissions.read_submission(tmp_path / "big" / "mle.ipynb", "big")
    assert big.timestamp() == {"submitted": True, "time": "2026-03-01T12:00:00+00:00",
                               "source": "file time"}
    assert found["empty"].timestamp()["submitted"] is False


def test_read_submission_of_a_missing_or_linked_file(tmp_path):
    gone = submissions.read_submission(tmp_path / "gone.ipynb", "x")
    assert gone.student == "x" and gone.reason == submissions.NOTHING_SUBMITTED
    real = tmp_path / "real.ipynb"
    real.write_text("{}")
    (tmp_path / "link.ipynb").symlink_to(real)
    link = submissions.read_submission(tmp_path / "link.ipynb", "x")
    assert not link.submitted and "symbolic link" in link.reason


@pytest.mark.slow
def test_a_grading_run_is_made_from_what_was_read_once(tmp_path, reads, monkeypatch):
    """Grade alice and bob in this process, counting every open, listing and stat of their
    folders (one read of each file, no stat), then overwrite their notebooks and timestamp
    with other ones right after they were read: the grades, the formgrader copies, the
    manual-grading page and timestamps.json must still be what was handed in, so no process
    (the analysis children, the sandbox, the gradebook) reads a student's file again."""
    from mlcourse_utils.grading.engine import batch
    from mlcourse_utils.grading.engine.options import GradingOptions

    assignment = load_assignment("mle", sup.ROOT)
    manual = assignment.manual[0][0]
    answers = {**sup.solution_answers("mle"), manual: "ORIGINAL-ANSWER-MARKER"}
    subs, out = (tmp_path / "subs").resolve(), tmp_path / "out"
    alice, bob = _class(subs, answers)
    swapped = json.dumps(sup.make_submission("mle", {manual: "SWAPPED-ANSWER-MARKER"}))
    real_collect = batch.collect

    def collect_then_change(*args, **kwargs):
        global _RECORD
        intake = real_collect(*args, **kwargs)
        recording, _RECORD = _RECORD, None  # (the test's own writes are not the grader's)
        for path in (alice, bob):
            path.write_text(swapped)
            (path.parent / "timestamp.txt").write_text("2030-01-01 00:00:00+00:00")
        _RECORD = recording
        return intake

    monkeypatch.setattr(batch, "collect", collect_then_change)
    recorded = reads(subs)
    _, results = batch.grade_class("mle", subs, out,
                                   GradingOptions(jobs=2, timeout=60, progress=False),
                                   root=sup.ROOT)
    student_reads = {s: recorded.of(s) for s in ("alice", "bob")}
    assert student_reads["alice"] == Counter({("list", ""): 1, ("open", "mle.ipynb"): 1,
                                              ("open", "timestamp.txt"): 1})
    assert student_reads["bob"] == Counter({("list", ""): 1, ("list", "mle"): 1,
                                            ("open", "mle/mle.ipynb"): 1,
                                            ("open", "mle/timestamp.txt"): 1})
    full = sum(t.points for t in assignment.tests)
    assert {s: r.score for s, r in results.items()} == {"alice": full, "bob": full}
    times = json.loads((out / "timestamps.json").read_text())
    assert times["alice"]["time"] == "2026-03-02T23:05:00+01:00"
    assert times["bob"] == {"submitted": True, "time": "2026-03-03T01:06:40+00:00",
                            "source": "file time"}
    for student in ("alice", "bob"):
        copy = out / "autograded" / student / "mle" / "mle.ipynb"
        assert "ORIGINAL-ANSWER-MARKER" in copy.read_text()
    page = (out / "manual" / f"{manual}.html").read_text()
    assert page.count("ORIGINAL-ANSWER-MARKER") == 2 and "SWAPPED" not in page


# ------------------------------------------------------------------ ids, links, layouts


def test_student_ids_are_clean_and_unique():
    assert submissions.student_id("alice") == "alice"
    latin = submissions.student_id(os.fsdecode(b"caf\xe9"))
    latin.encode("utf-8")
    assert latin.startswith("caf\\xe9~")
    long = submissions.student_id("x" * 200)
    assert len(long) < 100 and long != submissions.student_id("x" * 199)


def test_read_submitted_file_takes_only_regular_files(tmp_path):
    real = tmp_path / "real.ipynb"
    real.write_bytes(b"{}")
    assert submissions.read_submitted_file(real) == b"{}"
    link = tmp_path / "link.ipynb"
    link.symlink_to(real)
    with pytest.raises(ValueError, match="symbolic link"):
        submissions.read_submitted_file(link)
    fifo = tmp_path / "fifo.ipynb"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match="not a regular file"):
        submissions.read_submitted_file(fifo)  # and it does not wait for a writer
    with pytest.raises(ValueError, match="larger than"):
        submissions.read_submitted_file(real, limit=1)


def test_find_submissions_refuses_links(tmp_path):
    (tmp_path / "alice").mkdir()
    (tmp_path / "alice" / "mle.ipynb").write_text("{}")
    (tmp_path / "bob").symlink_to(tmp_path / "alice")
    (tmp_path / "carol").mkdir()
    (tmp_path / "carol" / "mle.ipynb").symlink_to(tmp_path / "alice" / "mle.ipynb")
    (tmp_path / "dave").mkdir()
    (tmp_path / "dave" / "mle").symlink_to(tmp_path / "alice")
    (tmp_path / "erin").mkdir()
    found = submissions.find_submissions("mle", tmp_path, "mle.ipynb")
    assert found["alice"].data == b"{}" and found["alice"].student == "alice"
    for student in ("bob", "carol", "dave"):
        assert found[student].data is None, student
        assert "symbolic link" in found[student].refused
    assert found["erin"].data is None and found["erin"].reason == "no notebook was submitted"


def test_find_submissions_refuses_invisible_and_lookalike_names(tmp_path):
    names = ["ok", "zw\u200bsp", "Twin", "twin", "Jos\u00e9", "Jose\u0301", " lead", "Ren\u00e9e"]
    for name in names:
        (tmp_path / name).mkdir()
        (tmp_path / name / "mle.ipynb").write_text("{}")
    (tmp_path / "Zoe\u0308").mkdir()  # decomposed, without a composed twin: composed
    found = submissions.find_submissions("mle", tmp_path, "mle.ipynb")
    assert found["ok"].data == b"{}"
    assert found["Ren\u00e9e"].data == b"{}" and found["Ren\u00e9e"].student == "Ren\u00e9e"
    assert "Zoe\u0308" not in found and not found["Zo\u00eb"].submitted
    zero = found["zw\\u200bsp"]  # the id shows the invisible character
    assert zero.data is None and "U+200B ZERO WIDTH SPACE" in zero.refused
    for twin in ("Twin", "twin"):
        assert "'Twin' and 'twin' differ only in case" in found[twin].reason
    for jose in ("Jos\u00e9", "Jose\\u0301"):
        assert "'Jose\\\\u0301' and 'Jos\u00e9'" in found[jose].reason, found[jose]
    assert "begins or ends with a space" in found["\\x20lead"].reason
    for student in found:
        assert all(c.isprintable() for c in student), repr(student)


def test_find_submissions_refuses_compatibility_look_alikes(tmp_path):
    """Folder names equal after NFKC and case folding, not only NFC: a full-width "ａｌｉｃｅ", a
    ligature "ﬁona"; both of each pair are refused, naming both."""
    for name in ("alice", "\uff41\uff4c\uff49\uff43\uff45", "fiona", "\ufb01ona", "bob"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "mle.ipynb").write_text("{}")
    found = submissions.find_submissions("mle", tmp_path, "mle.ipynb")
    assert found["bob"].data == b"{}"
    refused = {s: sub.reason for s, sub in found.items() if s != "bob"}
    assert len(refused) == 4
    for student, reason in refused.items():
        assert "differ only in case or Unicode form" in reason, student
        pair = ("alice", "\uff41\uff4c\uff49\uff43\uff45") if "alice" in reason else ("fiona",
                                                                                 "\ufb01ona")
        assert all(repr(name) in reason for name in pair), reason
