"""One student cannot break, stall, starve or spy on a class's grading.

One `mlcourse grade` batch of the `mle` assignment puts honest students beside hostile ones, as a
teaching assistant would meet them in a real class. Every probe is bounded (a fixed number of
processes, bytes and seconds). For every hostile submission the test asserts that

* the batch finishes (exit status 0, a row for everyone) within a stated bound,
* the honest students keep their exact full marks,
* the hostile student keeps what its honest parts earn and its feedback gives a reason,
* nothing stays on the host: no process, no SysV segment, no cgroup, no temporary file.

Where a hostile answer probes a defence (a nested user namespace, a root-only file, another
sandbox's shared memory), the answer returns the right value only when the defence held, so the
task's score shows whether it did.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

import assignment_support as sup
from mlcourse_utils.grading import cgroups
from mlcourse_utils.grading.notebook import load_assignment
from mlcourse_utils.grading.sandbox import namespace_flags

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("grade-hostile")]

NAME = "mle"
TIMEOUT = 6           # --timeout: per cell and per test cell
STUDENT_TIMEOUT = 20  # --student-timeout: one student's whole budget
JOBS = 2
MEMORY = 1024         # --memory, MB
MARKER = f"mlhog{uuid.uuid4().hex[:8]}"  # the name (comm) of processes a notebook starts
SHM_KEY = 0x4D4C4331
SECRET = f"TOPSECRET-{uuid.uuid4().hex}"

ISOLATED = namespace_flags() is not None  # (without namespaces: README, Limits)
CGROUP_VERSION, CGROUP_PARENTS = cgroups.layout()
CPU_LIMITED = "cpu" in CGROUP_PARENTS
MEMORY_LIMITED = "memory" in CGROUP_PARENTS
AS_ROOT = os.geteuid() == 0

BERNOULLI = ("    import numpy as np\n"
             "    x = np.asarray(x, dtype=float)\n"
             "    return float(x.sum() / x.size)\n")


def _probe_answer(prelude):
    """A `bernoulli_mle` that is right only when ``prelude`` leaves ``broke_out`` False."""
    body = "".join(f"    {line}\n" for line in prelude.strip("\n").splitlines())
    return (f"def bernoulli_mle(x):\n    broke_out = False\n{body}"
            "    if broke_out:\n        return -1.0\n" + BERNOULLI)


def _raw_reply(value):
    """A `bernoulli_mle` that writes its own reply, ``{"ok": true, "value": VALUE}``, straight
    to the grader's pipe (nested empty lists: cheap to send, costly to decode)."""
    return ("import os, struct, sys, time\n"
            "def bernoulli_mle(x):\n"
            f"    data = b'{{\"ok\": true, \"id\": 0, \"value\": ' + {value} + b'}}'\n"
            "    data = memoryview(struct.pack('>I', len(data)) + data)\n"
            "    while data:\n"
            "        data = data[os.write(int(sys.argv[2]), data):]\n"
            "    time.sleep(60)\n")


LIBC = "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"

STOP_READING = ("import gc, time\n"  # the runner's loop stops reading its requests
                "for obj in gc.get_objects():\n"
                "    if isinstance(obj, dict) and 'receive' in obj and 'READ_FD' in obj:\n"
                "        obj['receive'] = lambda: time.sleep(3600)")

HOG = (  # 100 busy processes of at most 60 s each, forked by one child so the cell returns
    "import ctypes, os, time\n"
    "if os.fork() == 0:\n"
    "    for _ in range(99):\n"
    "        if os.fork() == 0:\n"
    "            break\n"
    "    os.setsid()\n"  # a session each: the scheduler's autogroups would share by session
    f"    ctypes.CDLL(None).prctl(15, {MARKER.encode()!r}, 0, 0, 0)\n"
    "    end = time.time() + 60\n"
    "    while time.time() < end:\n"
    "        pass\n"
    "    os._exit(0)\n")

SHM_WRITER = (LIBC + "import ctypes\n"
              f"shmid = libc.shmget({SHM_KEY}, 1 << 20, 0o1666)\n"
              "addr = libc.shmat(shmid, None, 0)\n")


def _variants(solution):
    """{student: (changed task scores, feedback fragment, how to build the notebook)}."""
    tasks = list(solution)
    return {
        # ---- text at the boundary
        "text_surrogates": ({"bernoulli_mle": 0, "gaussian_mle": 0}, "cell", dict(
            answers={**solution,
                     "bernoulli_mle": "def bernoulli_mle(x):\n    raise ValueError('\\ud800')\n",
                     "gaussian_mle": "def gaussian_mle(x):\n    return ('\\ud800', 1.0)\n"},
            append_cells=["import warnings\nwarnings.warn('bad \\udcff text')",
                          "import os\nos.write(1, b'raw \\xff\\xfe bytes \\x00\\x1b[31m')",
                          "print('\\ud800')",
                          "raise ValueError('\\ud800')"])),
        # ---- deadlines
        "stalls_its_input": (dict.fromkeys(tasks, 0), "timed out", dict(
            answers=solution,
            append_cells=[STOP_READING,
                          "# padding\n" + "#" * 300_000])),
        "budget_cells": (dict.fromkeys(tasks, 0), "total grading time", dict(
            answers=solution, append_cells=["import time\ntime.sleep(5)"] * 5)),
        "budget_restarts": (dict.fromkeys(tasks, 0), "total grading time", dict(
            answers={t: f"import os\ndef {t}(*args, **kwargs):\n    os._exit(1)\n"
                     for t in solution},
            append_cells=["import time\ntime.sleep(4)"] * 2)),
        # ---- resources
        # (graded beside honest_0..5, which come next in the class's order: "h_" < "ho")
        "h_cpu_hog": (dict.fromkeys(tasks, 0), "timed out", dict(
            answers={t: f"def {t}(*args, **kwargs):\n    while True:\n        pass\n"
                     for t in solution},
            append_cells=[HOG])),
        "shm_writer": ({}, "", dict(answers=solution, append_cells=[SHM_WRITER])),
        "shm_reader": ({}, "", dict(answers={**solution, "bernoulli_mle": _probe_answer(
            LIBC + f"broke_out = libc.shmget({SHM_KEY}, 0, 0) >= 0")})),
        "memfd_hog": ({"bernoulli_mle": 0}, "memory" if MEMORY_LIMITED else "", dict(
            answers={**solution, "bernoulli_mle": (
                "import os\ndef bernoulli_mle(x):\n    fds = []\n"
                f"    for _ in range({2 * MEMORY // 60}):\n"
                "        fd = os.memfd_create('x')\n"
                "        os.posix_fallocate(fd, 0, 60 << 20)\n        fds.append(fd)\n"
                "    return -1.0\n")})),
        # ---- least privilege
        "privilege": ({}, "", dict(answers={**solution, "bernoulli_mle": _probe_answer(
            LIBC
            + "broke_out = libc.unshare(0x10000000) == 0\n"                   # user namespace
            + "broke_out = broke_out or libc.mount(b'x', b'/tmp', b'tmpfs', 0, None) == 0\n"
            + (("import os\nbroke_out = broke_out or os.getuid() == 0\n") if AS_ROOT else "")
            + "try:\n"
            + "    secret = open(SECRET_PATH).read()\n"
            + "    print(secret)\n"
            + "    broke_out = True\n"
            + "except OSError:\n"
            + "    pass\n")})),
        # ---- the grader's own limits
        "swell_oversized": ({"bernoulli_mle": 0}, "reply", dict(answers={
            **solution, "bernoulli_mle": _raw_reply("b'[' + b'[],' * 20_000_000 + b'[]]'")})),
        "swell_elements": ({"bernoulli_mle": 0}, "reply", dict(answers={
            **solution, "bernoulli_mle": _raw_reply("b'[' + b'[],' * 900_000 + b'[]]'")})),
        # ---- submissions as data
        "script_outputs": ({}, "", dict(answers=solution)),
        "odd_metadata": ({}, "", dict(answers=solution)),
    }


def _with_outputs(nb):
    """Stored outputs, Markdown HTML and an attachment carrying script, as a hostile file would."""
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            cell["outputs"] = [{"output_type": "display_data", "metadata": {}, "data": {
                "text/html": "<script>alert('student')</script><b>hi</b>",
                "application/javascript": "alert('student')",
                "text/plain": "hi"}}]
            cell["execution_count"] = 1
    nb["cells"].append({"cell_type": "markdown", "id": "evil-md", "metadata": {},
                        "attachments": {"x.png": {"image/png": "AAAA"}},
                        "source": "Derivation <script>alert(1)</script>"
                                  "<img src=x onerror=alert(2)> $a < b$"})
    return nb


def _odd_metadata(nb):
    """Metadata and sources of the wrong types, where nbgrader expects strings and dicts."""
    nb["cells"].insert(1, {"cell_type": "code", "metadata": {"nbgrader": [1, 2]},
                           "source": [1, None, "x = 1\n"], "outputs": []})
    nb["cells"].insert(1, {"cell_type": "code", "metadata": {"nbgrader": {"grade_id": {"a": 1},
                                                                          "grade": True}},
                           "source": {"not": "text"}, "outputs": []})
    nb["cells"].insert(1, "not a cell")
    nb["metadata"] = ["not", "a", "dict"]
    return nb


def _processes_with(marker):
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                if marker.encode() in Path(f"/proc/{pid}/comm").read_bytes():
                    found.append(int(pid))
            except OSError:
                pass
    return found


def _shm_keys():
    try:
        lines = Path("/proc/sysvipc/shm").read_text().splitlines()[1:]
    except OSError:
        return set()
    return {int(line.split()[0]) for line in lines if line.split()}


def _cgroup_leftovers(grader_pid):
    return [p for parent in CGROUP_PARENTS.values()
            for p in parent.glob(f"mlcourse-{grader_pid}-*")]


def _run_watching_memory(cmd, timeout, env):
    """Run the grader; return (CompletedProcess-like, peak resident memory of the grader in MB)."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=sup.ROOT, env=env)
    peak = [0]

    def watch():
        while proc.poll() is None:
            try:
                for line in Path(f"/proc/{proc.pid}/status").read_text().splitlines():
                    if line.startswith("VmHWM:"):
                        peak[0] = max(peak[0], int(line.split()[1]) // 1024)
            except OSError:
                pass
            time.sleep(0.1)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        pytest.fail(f"the batch did not finish within {timeout:.0f} s:\n{err[-3000:]}")
    watcher.join()
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err), peak[0], proc.pid


class HostileBatch:
    def __init__(self, tmp):
        tmp = Path(tmp)
        self.subs, self.out, self.tmpdir = tmp / "submissions", tmp / "out", tmp / "grader-tmp"
        self.tmpdir.mkdir()
        assignment = load_assignment(NAME, sup.ROOT)
        self.tasks = assignment.tasks
        self.task_max = {t: assignment.task_max(t) for t in self.tasks}
        solution = sup.solution_answers(NAME)
        self.secret_path = Path(sys.prefix) / f".mlcourse-secret-{uuid.uuid4().hex[:8]}"
        self.secret_path.write_text(SECRET)
        os.chmod(self.secret_path, 0o600)
        self.expected, self.fragments = {}, {}

        def add(student, expected, fragment="", **build):
            nb = sup.make_submission(NAME, **build)
            if student == "script_outputs":
                nb = _with_outputs(nb)
            if student == "odd_metadata":
                nb = _odd_metadata(nb)
            text = json.dumps(nb).replace("SECRET_PATH", repr(str(self.secret_path)))
            folder = self.subs / student
            folder.mkdir(parents=True)
            (folder / f"{NAME}.ipynb").write_text(text)
            self.expected[student] = expected
            self.fragments[student] = fragment

        full = dict(self.task_max)
        for k in range(6):
            add(f"honest_{k}", full, answers=solution)
        for student, (changes, fragment, build) in _variants(solution).items():
            if student == "h_cpu_hog" and not CPU_LIMITED:
                continue  # without a CPU cgroup nothing stops it (README, Limits)
            add(student, {**full, **changes}, fragment, **build)
        zero = dict.fromkeys(self.tasks, 0.0)
        # Folder names: undecodable bytes, and spreadsheet formulas.
        latin = os.fsencode(self.subs) + b"/caf\xe9"
        os.mkdir(latin)
        with open(latin + f"/{NAME}.ipynb".encode(), "w") as fh:
            json.dump(sup.make_submission(NAME, solution), fh)
        for formula in ("=1+2", "@SUM(A1)", "+cmd", "-2+3"):
            add(formula, full, answers=solution)
        # Links and files that are not notebooks.
        solutions_nb = sup.ROOT / "solutions" / NAME / f"{NAME}.ipynb"
        (self.subs / "link_notebook").mkdir()
        (self.subs / "link_notebook" / f"{NAME}.ipynb").symlink_to(solutions_nb)
        (self.subs / "link_folder").symlink_to(self.subs / "honest_0")
        (self.subs / "link_nested").mkdir()
        (self.subs / "link_nested" / NAME).symlink_to(solutions_nb.parent)
        (self.subs / "fifo").mkdir()
        os.mkfifo(self.subs / "fifo" / f"{NAME}.ipynb")
        (self.subs / "oversized").mkdir()
        big = sup.make_submission(NAME, solution)
        big["cells"].append({"cell_type": "markdown", "id": "big", "metadata": {},
                             "source": "x" * (17 * 2**20)})
        (self.subs / "oversized" / f"{NAME}.ipynb").write_text(json.dumps(big))
        for student in ("link_notebook", "link_folder", "link_nested"):
            self.expected[student], self.fragments[student] = zero, "symbolic link"
        self.expected["fifo"], self.fragments["fifo"] = zero, "not a regular file"
        self.expected["oversized"], self.fragments["oversized"] = zero, "larger than 16 MB"
        self.n_students = len(self.expected) + 1  # + the Latin-1 folder

        self.bound = self.n_students * STUDENT_TIMEOUT / JOBS + 60
        shm_before = _shm_keys()
        env = dict(os.environ, TMPDIR=str(self.tmpdir))
        try:
            self.proc, self.peak_mb, self.pid = _run_watching_memory(
                [sup.MLCOURSE, "grade", NAME, str(self.subs), "--out", str(self.out),
                 "--jobs", str(JOBS), "--timeout", str(TIMEOUT), "--student-timeout",
                 str(STUDENT_TIMEOUT), "--memory", str(MEMORY)], self.bound, env)
        finally:
            self.secret_path.unlink()
        self.new_shm = _shm_keys() - shm_before
        self.processes = _processes_with(MARKER)
        self.cgroups = _cgroup_leftovers(self.pid)
        self.tmp_left = sorted(p.name for p in self.tmpdir.iterdir())
        self.grades, self.task_scores = (sup.read_scores(self.out) if self.proc.returncode == 0
                                         else ({}, {}))

    def feedback(self, student):
        return (self.out / "feedback" / f"{student}.html").read_text()


@pytest.fixture
def batch(graded_batch):
    return graded_batch("hostile", HostileBatch)


HONEST = [f"honest_{k}" for k in range(6)] + ["=1+2", "@SUM(A1)", "+cmd", "-2+3"]


def test_batch_finishes_with_a_row_for_everyone(batch):
    assert batch.proc.returncode == 0, batch.proc.stderr[-3000:]
    assert len(batch.grades) == batch.n_students
    for student, scores in batch.task_scores.items():
        assert set(scores) == set(batch.tasks), student


@pytest.mark.parametrize("student", HONEST)
def test_honest_students_keep_exact_full_marks(batch, student):
    student_id = "'" + student if student[0] in "=+-@" else student
    got = {t: s for t, (s, _) in batch.task_scores[student_id].items()}
    assert got == batch.task_max, batch.feedback(student)[-3000:]


HOSTILE = ["text_surrogates", "stalls_its_input", "budget_cells", "budget_restarts",
           "shm_writer", "shm_reader", "memfd_hog", "privilege", "swell_oversized",
           "swell_elements", "script_outputs", "odd_metadata", "link_notebook", "link_folder",
           "link_nested", "fifo", "oversized"]


@pytest.mark.parametrize("student", HOSTILE)
def test_hostile_student_keeps_what_its_honest_parts_earn(batch, student):
    if not ISOLATED and student in ("privilege", "shm_reader"):
        pytest.skip("without Linux namespaces there is no separate user, root or IPC namespace")
    got = {t: s for t, (s, _) in batch.task_scores[student].items()}
    assert got == batch.expected[student], batch.feedback(student)[-3000:]
    assert batch.fragments[student] in batch.feedback(student)


def test_cpu_hog_does_not_starve_its_neighbours(batch):
    """100 busy processes, each in its own session, beside honest_0..5: they keep full marks."""
    if not CPU_LIMITED:
        pytest.skip("no writable cpu cgroup here: a CPU share cannot be enforced (README, Limits)")
    got = {t: s for t, (s, _) in batch.task_scores["h_cpu_hog"].items()}
    assert got == batch.expected["h_cpu_hog"]
    for k in range(6):
        assert batch.grades[f"honest_{k}"][0] == sum(batch.task_max.values())


def test_undecodable_folder_name_gets_a_clean_row(batch):
    rows = [s for s in batch.grades if s.startswith("caf\\xe9")]
    assert len(rows) == 1
    assert batch.grades[rows[0]][0] == sum(batch.task_max.values())


def test_csv_cells_never_start_a_formula(batch):
    for name in ("grades.csv", "task_scores.csv"):
        with open(batch.out / name, newline="", encoding="utf-8") as fh:
            for row in csv.DictReader(fh):
                assert not row["student_id"].startswith(("=", "+", "-", "@", "\t", "\r"))
    assert "'=1+2" in batch.grades


def test_nothing_stays_on_the_host(batch):
    assert batch.processes == [], "processes started by a notebook outlived the batch"
    assert SHM_KEY not in batch.new_shm, "a SysV segment outlived its sandbox"
    assert batch.cgroups == [], "a student's cgroup was left behind"
    assert batch.tmp_left == [], f"temporary files were left behind: {batch.tmp_left}"


def test_grader_memory_stays_small(batch):
    """Replies near the message cap (nested empty lists) cannot swell the grader."""
    assert batch.peak_mb < 1024, f"the grader grew to {batch.peak_mb} MB"


def test_secret_file_never_reaches_the_output(batch):
    for path in batch.out.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path


def test_links_are_refused_and_hidden_tests_never_copied(batch):
    hidden = "### BEGIN HIDDEN TESTS"
    for path in batch.out.rglob("*"):
        if path.is_file() and path.suffix in (".ipynb", ".html", ".csv"):
            assert hidden not in path.read_text(errors="replace"), path
    for student in ("link_notebook", "link_folder", "link_nested"):
        assert not (batch.out / "autograded" / student).exists()


def test_gradebook_copy_carries_no_student_html(batch):
    copy = batch.out / "autograded" / "script_outputs" / NAME / f"{NAME}.ipynb"
    nb = json.loads(copy.read_text())
    text = json.dumps(nb)
    assert "<script" not in text and "onerror" not in text and "javascript" not in text
    assert all(not c.get("outputs") for c in nb["cells"] if c["cell_type"] == "code")
    assert all("attachments" not in c for c in nb["cells"])
    assert any("Derivation" in "".join(c["source"]) for c in nb["cells"])


def test_submissions_are_unchanged(batch):
    assert os.path.islink(batch.subs / "link_folder")
    assert (batch.subs / "fifo" / f"{NAME}.ipynb").is_fifo()
    nb = json.loads((batch.subs / "script_outputs" / f"{NAME}.ipynb").read_text())
    assert "<script>" in json.dumps(nb)

