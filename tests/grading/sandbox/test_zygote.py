"""Sandboxes forked from a prepared image (grading/sandbox/zygote.py, runner/image.py).

A sandbox forked from the image must be what a sandbox started from scratch is: the runner as
nobody with no capability, no_new_privs and the seccomp filter, its own cgroup, only its pipes
open, PID 2 of a PID namespace of its own; and two of them share nothing (files in /tmp and
/dev/shm, network and abstract sockets, random state). Where the image cannot start, a sandbox
still starts, from scratch.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from mlcourse_utils.grading.protocol import SandboxError
from mlcourse_utils.grading.sandbox import isolation, root, zygote
from mlcourse_utils.grading.sandbox.channel import Sandbox, namespace_flags

pytestmark = pytest.mark.skipif(
    namespace_flags() is None or os.geteuid() != 0,
    reason="the prepared image is used where the grader is root and namespaces work")

INSIDE = """
import os, socket, numpy as np
def probe():
    status = dict(line.split(':', 1) for line in open('/proc/self/status').read().splitlines())
    fds = sorted(int(fd) for fd in os.listdir('/proc/self/fd'))
    return {
        'ids': [status[k].split() for k in ('Uid', 'Gid')],
        'groups': status['Groups'].split(),
        'caps': [int(status[k], 16) for k in ('CapInh', 'CapPrm', 'CapEff', 'CapBnd', 'CapAmb')],
        'nnp': status['NoNewPrivs'].strip(), 'seccomp': status['Seccomp'].strip(),
        'pid': os.getpid(), 'procs': sorted(p for p in os.listdir('/proc') if p.isdigit()),
        'fds': fds[:-1],  # (the last is the listing's own)
        'cgroup': open('/proc/self/cgroup').read(),
        'net': os.stat('/proc/self/ns/net').st_ino, 'mnt': os.stat('/proc/self/ns/mnt').st_ino,
        'tmp': sorted(os.listdir('/tmp')), 'shm': sorted(os.listdir('/dev/shm')),
        'random': np.random.random(), 'cwd': os.getcwd(),
        'mounted': [line.split()[4] for line in open('/proc/self/mountinfo')],
        'environ': len(open('/proc/self/environ', 'rb').read()) > 0,
        'oldpwd': os.environ.get('OLDPWD'),
    }
def leave_marks():
    open('/tmp/mark', 'w').write('x')
    open('/dev/shm/mark', 'w').write('x')
    global server
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind('\\0mlcourse-zygote-test')
    server.listen(1)
def reach_marks():
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        client.connect('\\0mlcourse-zygote-test')
        return 'connected'
    except OSError as exc:
        return type(exc).__name__
"""


def _in_tmp():
    """What a fresh sandbox's /tmp holds: its work folder, and the top folders of what lies
    under /tmp on the host and is mounted into it (the environment and the decoy of the
    reference package, where the repository is cloned under /tmp as CI does)."""
    mounted = [*root._environment_paths([]), root.PACKAGE_DIR]
    return sorted({"work"} | {Path(p).resolve().relative_to("/tmp").parts[0] for p in mounted
                              if root._is_within(p, "/tmp")})


def _box(**kwargs):
    box = Sandbox(memory_mb=1024, **kwargs).start()
    error, _ = box.exec_cell(INSIDE, 30)
    assert error is None, error
    return box


def _probe(box):
    return box.call("probe", (), {}, 30)[0]


def test_a_forked_sandbox_is_the_runner_as_nobody_with_nothing_of_the_image():
    box = _box()
    try:
        assert isinstance(box.proc, zygote.ZygoteChild)  # (forked, not started from scratch)
        seen = _probe(box)
        nobody = str(isolation.NOBODY)
        assert seen["ids"] == [[nobody] * 4, [nobody] * 4] and seen["groups"] == []
        assert seen["caps"] == [0] * 5 and seen["nnp"] == "1" and seen["seccomp"] == "2"
        # PID 2 under its own PID 1, which is all it sees; only its pipes (and 0-2) are open.
        assert seen["pid"] == 2 and seen["procs"] == ["1", "2"]
        assert len(seen["fds"]) == 5 and seen["fds"][:3] == [0, 1, 2]
        assert seen["cwd"] == "/tmp/work" and seen["tmp"] == _in_tmp()
        # The image's /tmp, /dev/shm and /proc are detached, not merely covered; the process
        # reads its own /proc files as one started from scratch does.
        assert [seen["mounted"].count(m) for m in ("/tmp", "/dev/shm", "/proc")] == [1, 1, 1]
        assert seen["environ"] and seen["oldpwd"] is None
        if box.info["cgroup"]:  # in the cgroup the grader made for it, in every hierarchy
            names = {folder.name for folder in box._process.cgroup.folders.values()}
            wanted = set(box.info["cgroup_controllers"]) if box.info["cgroup"] == "v1" else {""}
            lines = [ln for ln in seen["cgroup"].splitlines()
                     if set(ln.split(":")[1].split(",")) & wanted]
            assert lines and all(ln.rsplit("/", 1)[-1] in names for ln in lines)
    finally:
        box.kill()


def test_two_sandboxes_from_one_image_share_nothing():
    first, second = _box(), _box()
    try:
        first.call("leave_marks", (), {}, 30)
        a, b = _probe(first), _probe(second)
        assert a["tmp"] == sorted(["mark", *_in_tmp()]) and a["shm"] == ["mark"]
        assert b["tmp"] == _in_tmp() and b["shm"] == []
        assert a["net"] != b["net"] and a["mnt"] != b["mnt"]
        assert a["random"] != b["random"]  # (this image has not imported numpy.random)
        assert second.call("reach_marks", (), {}, 30)[0] == "ConnectionRefusedError"
        assert first.call("reach_marks", (), {}, 30)[0] == "connected"  # (the probe works)
        first.kill()
        assert first.proc.returncode is not None
        assert _probe(second)["pid"] == 2  # one sandbox's end is not another's
    finally:
        first.kill()
        second.kill()


def test_sandboxes_of_an_image_that_imported_numpy_random_draw_different_numbers():
    """numpy does not reseed its legacy global generator after a fork: once the image has
    imported numpy.random (scipy.stats does, and six assignments of seven preload it), every
    sandbox drew the same np.random.rand(). Python's random is reseeded too (CPython does it
    after os.fork; the runner does it again). Equal draws by chance: about 2**-50."""
    draw = ("import random\nimport numpy as np\n"
            "def draw():\n"
            "    return [float(np.random.rand()), float(np.random.randn()), random.random(),\n"
            "            int(np.random.randint(2**62))]\n")
    boxes = [Sandbox(memory_mb=1024, preload=["numpy.random"]) for _ in range(2)]
    try:
        seen = []
        for box in boxes:
            box.start()
            assert isinstance(box.proc, zygote.ZygoteChild)
            assert box.exec_cell(draw, 30)[0] is None
            seen.append(box.call("draw", (), {}, 30)[0])
        for a, b in zip(*seen, strict=True):
            assert a != b, seen
    finally:
        for box in boxes:
            box.kill()


# What a sandbox tries, as an attacker would, to watch another's file activity: inotify,
# fanotify (unprivileged since Linux 5.13 with FAN_REPORT_FID) and dnotify (fcntl F_NOTIFY on a
# folder, answered with SIGIO), each on numpy's folder, which every sandbox shares read-only.
WATCHER = """
import ctypes, fcntl, os, select, signal, numpy
libc = ctypes.CDLL(None, use_errno=True)
folder = os.path.dirname(numpy.__file__)
target = os.path.join(folder, 'version.py')
def watch():
    global fds, signals
    fds, signals, refused = [], [], {}
    fd = libc.inotify_init1(os.O_NONBLOCK)
    refused['inotify_init1'] = ctypes.get_errno() if fd < 0 else 0
    if fd >= 0:
        fds.append(fd)
        libc.inotify_add_watch(fd, target.encode(), 0x1 | 0x20)  # IN_ACCESS | IN_OPEN
        libc.inotify_add_watch(fd, folder.encode(), 0x1 | 0x20)
    fd = libc.fanotify_init(0x200 | 0x2, os.O_RDONLY)  # FAN_REPORT_FID | FAN_NONBLOCK
    refused['fanotify_init'] = ctypes.get_errno() if fd < 0 else 0
    if fd >= 0:
        fds.append(fd)
        libc.fanotify_mark.argtypes = [ctypes.c_int, ctypes.c_uint, ctypes.c_uint64,
                                       ctypes.c_int, ctypes.c_char_p]
        libc.fanotify_mark(fd, 1, 0x20 | 0x1, -100, target.encode())  # FAN_OPEN | FAN_ACCESS
    signal.signal(signal.SIGIO, lambda *args: signals.append(1))
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.fcntl(fd, fcntl.F_NOTIFY, fcntl.DN_ACCESS | fcntl.DN_MULTISHOT)
        refused['dnotify'] = 0
    except OSError as exc:
        refused['dnotify'] = exc.errno
    if os.uname().machine == 'x86_64':  # (inotify_init has no number on aarch64)
        fd = libc.syscall(253)
        refused['inotify_init'] = ctypes.get_errno() if fd < 0 else 0
        fd = libc.syscall(0x40000000 | 294, 0)  # the x32 ABI's inotify_init1
        refused['x32 inotify_init1'] = ctypes.get_errno() if fd < 0 else 0
    return refused
def seen():
    total = len(signals)
    for fd in fds:
        if select.select([fd], [], [], 1.0)[0]:
            total += len(os.read(fd, 4096))
    return total
def i386_inotify_init1():
    import mmap
    code = bytes([0xB8, 0x4C, 0x01, 0, 0, 0x31, 0xDB, 0xCD, 0x80, 0xC3])  # eax=332; int 0x80
    page = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    page.write(code)
    address = ctypes.addressof(ctypes.c_char.from_buffer(page))
    return ctypes.CFUNCTYPE(ctypes.c_int)(address)()
"""
READER = """
import os, numpy
def read():
    return len(open(os.path.join(os.path.dirname(numpy.__file__), 'version.py')).read())
"""


@pytest.mark.parametrize("forked", [True, False])
def test_no_sandbox_can_watch_another_sandboxs_file_activity(forked, monkeypatch):
    """inotify, fanotify and dnotify watch files, not mounts: a watch on the environment saw
    another sandbox open and read it. Each is refused (EPERM), through every system call ABI:
    the x32 calls are refused, a 32-bit call (int 0x80) ends the process. Forked from the image
    or started from scratch (the same filter)."""
    import errno
    import platform

    if not forked:
        monkeypatch.setenv("MLCOURSE_ZYGOTE", "0")
    watcher, reader = Sandbox(memory_mb=1024), Sandbox(memory_mb=1024)
    try:
        for box, code in ((watcher, WATCHER), (reader, READER)):
            box.start()
            assert isinstance(box.proc, zygote.ZygoteChild) is forked
            assert box.exec_cell(code, 30)[0] is None
        refused = watcher.call("watch", (), {}, 30)[0]
        assert refused and set(refused.values()) == {errno.EPERM}, refused
        assert watcher.call("seen", (), {}, 30)[0] == 0
        assert reader.call("read", (), {}, 30)[0] > 0
        assert watcher.call("seen", (), {}, 30)[0] == 0  # (nothing of the reader's open, read)
        if platform.machine() == "x86_64":
            with pytest.raises(SandboxError, match="SIGSYS"):
                watcher.call("i386_inotify_init1", (), {}, 30)
    finally:
        watcher.kill()
        reader.kill()


def test_an_environment_under_tmp_is_bound_again_read_only(tmp_path, monkeypatch):
    """CI clones the repository (and its .venv) under /tmp: each sandbox's fresh /tmp must
    still show the environment, read-only, and the reference package's decoy."""
    env = Path("/tmp") / f"mlcourse-zygote-env-{os.getpid()}"
    (env / "lib").mkdir(parents=True, exist_ok=True)
    (env / "lib" / "data.txt").write_text("from the environment")
    found = isolation._environment_paths
    monkeypatch.setattr(isolation, "_environment_paths", lambda hidden: [*found(hidden), env])
    package = Path("/tmp") / f"mlcourse-zygote-repo-{os.getpid()}" / "mlcourse_utils"
    monkeypatch.setattr(root, "PACKAGE_DIR", package)
    try:
        box = Sandbox(memory_mb=1024).start()
        try:
            assert isinstance(box.proc, zygote.ZygoteChild)
            error, _ = box.exec_cell(
                f"text = open({str(env / 'lib' / 'data.txt')!r}).read()\n"
                "try:\n"
                f"    open({str(env / 'lib' / 'new.txt')!r}, 'w')\n"
                "    wrote = True\n"
                "except OSError:\n"
                "    wrote = False\n"
                "open('/tmp/work/own.txt', 'w').write('mine')\n"
                f"decoy = open({str(package / '__init__.py')!r}).read()\n"
                "def seen():\n    return [text, wrote, 'Stand-in' in decoy]\n", 30)
            assert error is None, error
            assert box.call("seen", (), {}, 30)[0] == ["from the environment", False, True]
        finally:
            box.kill()
        assert not (env / "lib" / "new.txt").exists()
    finally:
        import shutil
        shutil.rmtree(env, ignore_errors=True)
        shutil.rmtree(package.parent, ignore_errors=True)


def test_a_sandbox_that_ends_says_how_and_its_image_serves_the_next():
    """Its PID 1 says how the runner ended: a status above 128 is a status, not a signal (a
    shell could not tell them apart)."""
    for status in (3, 137):
        box = _box()
        with pytest.raises(SandboxError, match=rf"exited \(status {status}\)"):
            box.exec_cell(f"import os\nos._exit({status})", 30)
        box.kill()
    box = _box()
    try:
        with pytest.raises(SandboxError, match="killed by signal SIGSEGV"):
            box.exec_cell("import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)", 30)
    finally:
        box.kill()
    box = _box()
    try:
        assert _probe(box)["pid"] == 2
    finally:
        box.kill()


def test_without_an_image_a_sandbox_starts_from_scratch(monkeypatch):
    def cannot_start(*args, **kwargs):
        raise zygote.ZygoteError("the prepared image could not start (test)")

    monkeypatch.setattr(zygote, "_images", {})
    monkeypatch.setattr(zygote.Zygote, "start", classmethod(cannot_start))
    box = _box()
    try:
        assert isinstance(box.proc, subprocess.Popen)
        seen = _probe(box)
        assert seen["caps"] == [0] * 5 and seen["seccomp"] == "2"
    finally:
        box.kill()
    monkeypatch.undo()
    monkeypatch.setenv("MLCOURSE_ZYGOTE", "0")
    box = Sandbox(memory_mb=1024).start()
    try:
        assert isinstance(box.proc, subprocess.Popen)
    finally:
        box.kill()


def test_preloaded_modules_are_imported_in_the_image_before_the_sandbox_is_forked():
    loaded = ("import sys\ndef loaded():\n"
              "    return ['colorsys' in sys.modules, 'no_such_module_anywhere' in sys.modules]\n")
    for preload, expected in (([], [False, False]),
                              (["colorsys", "no_such_module_anywhere"], [True, False]),
                              ([], [False, False])):  # (one image per list of imports)
        box = Sandbox(memory_mb=1024, preload=preload).start()
        try:
            assert isinstance(box.proc, zygote.ZygoteChild)
            error, _ = box.exec_cell(loaded, 30)
            assert error is None, error
            assert box.call("loaded", (), {}, 30)[0] == expected
        finally:
            box.kill()


def test_a_sandbox_cannot_read_which_functions_the_solution_imports():
    """The image imports the solution's imports; `from colorsys import rgb_to_hsv` lists
    colorsys.rgb_to_hsv, a hint to a student. Only modules reach the image, on its control
    socket: not its command line (/proc/self/cmdline and /proc/1/cmdline in a sandbox,
    sys.orig_argv), nor a frame above the student's (the image's among them)."""
    look = ("import sys\n"
            "def look():\n"
            "    texts = [open(f'/proc/{p}/cmdline', 'rb').read().decode('utf-8', 'replace')\n"
            "             for p in ('self', '1')] + [repr(sys.orig_argv)]\n"
            "    frame = sys._getframe()\n"
            "    while frame is not None:\n"
            "        texts += [repr(v)[:10000] for v in frame.f_locals.values()\n"
            "                  if isinstance(v, (str, bytes, list, tuple, dict))]\n"
            "        frame = frame.f_back\n"
            "    return [len(texts), [t for t in texts if 'rgb' + '_to_' in t],\n"
            "            'colorsys' in sys.modules]\n")
    box = Sandbox(memory_mb=1024, preload=["colorsys", "colorsys.rgb_to_hsv"]).start()
    try:
        assert isinstance(box.proc, zygote.ZygoteChild)
        assert box.exec_cell(look, 30)[0] is None
        count, naming, imported = box.call("look", (), {}, 30)[0]
        assert count > 3 and naming == [] and imported  # (the module was imported)
    finally:
        box.kill()


def _image_process():
    """The process of the prepared image of sandboxes started with no imports (the child of
    its ``unshare``)."""
    _box().kill()
    image = next(im for key, im in zygote._images.items() if key[-1] == () and not im.broken)
    pid = image.proc.pid
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return image, int(children[0])


def test_an_image_that_stops_answering_is_ended_and_no_late_fork_runs(monkeypatch):
    """A spawn the grader gave up on must not be carried out later on the same pipes: the
    image is ended, and the sandbox starts from scratch on new ones (in a cgroup of its own:
    the failed fork's is removed, not left behind)."""
    import contextlib
    import signal

    from mlcourse_utils.grading.sandbox import cgroups

    image, pid = _image_process()
    monkeypatch.setattr(zygote, "REQUEST_TIMEOUT", 1.0)
    os.kill(pid, signal.SIGSTOP)
    try:
        box = Sandbox(memory_mb=1024).start()
    finally:
        with contextlib.suppress(ProcessLookupError):  # (ended with its image by now)
            os.kill(pid, signal.SIGCONT)
    try:
        assert isinstance(box.proc, subprocess.Popen) and image.broken
        assert image.proc.poll() is not None
        for i in range(10):  # (two runners on one pipe would answer some of these)
            error, _ = box.exec_cell(f"def f():\n    return {i}\n", 30)
            assert error is None, error
            assert box.call("f", (), {}, 30)[0] == i
    finally:
        box.kill()
    assert not [p for parent in cgroups.layout()[1].values()
                for p in parent.glob(f"mlcourse-{os.getpid()}-*")]


def test_a_busy_image_does_not_slow_a_running_sandbox():
    """Whether a sandbox still runs is read from its death pipe, not asked of the image."""
    import signal

    box = _box()
    image, pid = _image_process()
    os.kill(pid, signal.SIGSTOP)
    try:
        error, _ = box.exec_cell("x = 1", 2)
        assert error is None and box.call("probe", (), {}, 2)[0]["pid"] == 2
    finally:
        os.kill(pid, signal.SIGCONT)
        box.kill()
    assert box.proc.returncode is not None


def test_a_librarys_own_import_time_calls_are_not_the_students_forbidden_calls():
    """The image imports the modules that hold the forbidden calls (Assignment.preload), so
    `import scipy.stats` in a cell (whose import calls scipy.special.xlogy) reports nothing,
    while the student's own call still does."""
    from mlcourse_utils.grading import notebook

    assignment = notebook.load_assignment("information_theory")
    assert "scipy.special.xlogy" in assignment.forbidden["entropy"]
    assert {"scipy.special", "scipy.stats"} <= set(assignment.preload)
    box = Sandbox(memory_mb=1024, preload=assignment.preload).start()
    try:
        box.monitor(["scipy.special.xlogy"], 30)
        assert box.exec_cell("import scipy.stats", 30)[0] is None
        assert box.events == []
        assert box.exec_cell("import scipy.special\nscipy.special.xlogy(1.0, 2.0)", 30)[0] is None
        assert box.events == ["forbidden scipy.special.xlogy"]
    finally:
        box.kill()
