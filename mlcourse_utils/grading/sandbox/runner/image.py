"""The prepared image (zygote): one process that imports what every sandbox needs once, then
forks each sandbox, which leaves for namespaces of its own and becomes the runner."""

import ctypes
import json
import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # (one namespace once joined: see seccomp.py)
    from .serve import prepare

# ---------------------------------------------------------------- the prepared image (zygote)
# Starting Python and importing numpy, IPython and what the solution imports costs each
# sandbox about half a second of CPU. The grader instead starts this program once, as root of
# fresh namespaces with the minimal root already built (``isolation.py``'s set-up script with
# mode ``zygote``); it imports all that, then forks one child per sandbox. Each child leaves
# for namespaces of its own (mount, PID, IPC, UTS, network), with its own /tmp and /dev/shm,
# joins its cgroup, and as PID 1 of its PID namespace starts the runner, which drops to nobody
# with no capabilities, no_new_privs and the filter before it serves the grader. The image
# never runs student code: it only ever reads the grader's requests.

_CLONE_NEWNS, _CLONE_NEWUTS, _CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
_CLONE_NEWPID, _CLONE_NEWNET = 0x20000000, 0x40000000
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 1, 2, 4, 8
_MS_REMOUNT, _MS_BIND, _MS_MOVE, _MS_REC, _MS_PRIVATE = 32, 4096, 8192, 16384, 1 << 18
_PR_SET_NO_NEW_PRIVS, _PR_CAPBSET_DROP, _PR_CAP_AMBIENT = 38, 24, 47
_PR_CAP_AMBIENT_CLEAR_ALL, _PR_SET_DUMPABLE, _MNT_DETACH = 4, 4, 2
#: Where a child builds its fresh /tmp before moving it over the image's.
_SCRATCH = "/.scratch"


def _libc():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong,
                           ctypes.c_char_p]
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong,
                           ctypes.c_ulong]
    libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
    return libc


def _check(result, what):
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _mount(libc, source, target, fstype, flags, data=None):
    enc = (lambda x: None if x is None else os.fsencode(x))
    _check(libc.mount(enc(source), enc(target), enc(fstype), flags, enc(data)),
           f"mount {target}")


def _mounts_under(top):
    """The mount points strictly below ``top`` in this mount namespace, outermost only (a
    mount moves with what is mounted below it)."""
    with open("/proc/self/mountinfo") as fh:
        points = {line.split()[4].replace("\\040", " ") for line in fh}
    below = sorted(p for p in points if p.startswith(top + "/"))
    return [p for p in below if not any(p.startswith(q + "/") for q in below if q != p)]


def _own_namespaces(libc, spec):
    """In the child: join the cgroup, leave for new namespaces, and replace the image's /tmp
    and /dev/shm by fresh ones; what the image has mounted below its /tmp (the environment and
    the reference's decoy, where the repository lies under /tmp as CI clones it) is moved into
    the fresh /tmp as it is, read-only; the image's own are detached, not merely covered."""
    for fd in spec["cgroup_fds"]:
        os.write(fd, b"0")  # "0": the writing process (cgroup v1 and v2)
        os.close(fd)
    os.chdir("/")
    _check(libc.unshare(_CLONE_NEWNS | _CLONE_NEWPID | _CLONE_NEWIPC | _CLONE_NEWUTS
                        | _CLONE_NEWNET), "unshare")
    _mount(libc, None, "/", None, _MS_REC | _MS_PRIVATE)
    _mount(libc, "mlcourse-tmp", _SCRATCH, "tmpfs", _MS_NOSUID | _MS_NODEV,
           "size=512m,mode=1777")
    os.mkdir(_SCRATCH + "/work", 0o700)
    if spec["uid"] is not None:
        os.chown(_SCRATCH + "/work", spec["uid"], spec["uid"])
    for path in _mounts_under("/tmp"):
        target = _SCRATCH + path[len("/tmp"):]
        os.makedirs(target, exist_ok=True)
        _mount(libc, path, target, None, _MS_MOVE)
    _check(libc.umount2(b"/tmp", _MNT_DETACH), "detach the image's /tmp")
    _mount(libc, _SCRATCH, "/tmp", None, _MS_MOVE)
    _check(libc.umount2(b"/dev/shm", _MNT_DETACH), "detach the image's /dev/shm")
    _mount(libc, "shm", "/dev/shm", "tmpfs", _MS_NOSUID | _MS_NODEV, "size=64m,mode=1777")


def _drop_privileges(libc, uid):
    """Become ``uid`` (None: stay the namespace's root) with no capability in any set, no
    supplementary group and no_new_privs; exit unless /proc/self/status says so."""
    with open("/proc/sys/kernel/cap_last_cap") as fh:
        last = int(fh.read())
    for cap in range(last + 1):
        _check(libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0), "drop the bounding set")
    if uid is not None:
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)

    class Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class Data(ctypes.Structure):
        _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                    ("inheritable", ctypes.c_uint32)]

    _check(libc.capset(ctypes.byref(Header(0x20080522, 0)), ctypes.byref((Data * 2)())),
           "clear the capabilities")
    _check(libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0), "clear ambient")
    _check(libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    # Dumpable, as after an exec (a uid change clears it): the process reads its own /proc
    # files as one started from scratch does; ptrace stays refused by the filter.
    _check(libc.prctl(_PR_SET_DUMPABLE, 1, 0, 0, 0), "dumpable")
    with open("/proc/self/status") as fh:
        status = dict(line.split(":", 1) for line in fh.read().splitlines() if ":" in line)
    want = str(0 if uid is None else uid)
    ids_ok = all(status[k].split() == [want] * 4 for k in ("Uid", "Gid"))
    caps_ok = all(int(status[k], 16) == 0 for k in ("CapInh", "CapPrm", "CapEff", "CapBnd",
                                                     "CapAmb"))
    if not (ids_ok and caps_ok and not status["Groups"].split()
            and status["NoNewPrivs"].strip() == "1"):
        os._exit(112)


def _init(libc, spec, read_fd, write_fd, death_fd):
    """PID 1 of the child's PID namespace: mount its own /proc (the image's detached), start
    the runner, reap whatever is orphaned, and when the runner ends write how to the death
    pipe (``E<status>`` or ``S<signal>``; the grader holds the read end) and exit; everything
    left in the namespace dies with it."""
    _check(libc.umount2(b"/proc", _MNT_DETACH), "detach the image's /proc")
    _mount(libc, "proc", "/proc", "proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC)
    runner = os.fork()
    if runner == 0:
        try:
            _become_runner(libc, spec, read_fd, write_fd)
        finally:
            os._exit(113)
    for fd in (read_fd, write_fd, 1, 2):
        os.close(fd)
    while True:
        try:
            pid, status = os.waitpid(-1, 0)
        except ChildProcessError:
            os._exit(113)
        except InterruptedError:
            continue
        if pid == runner:
            how = (f"S{os.WTERMSIG(status)}" if os.WIFSIGNALED(status)
                   else f"E{os.WEXITSTATUS(status)}")
            try:
                os.write(death_fd, how.encode())
            finally:
                os._exit(0)


def _become_runner(libc, spec, read_fd, write_fd):
    """The sandbox's runner, forked from the prepared image: only its pipes open, its limits
    set, its privileges dropped, then :func:`main` (the filter first, as always)."""
    import resource

    keep = sorted({0, 1, 2, read_fd, write_fd})
    for low, high in zip(keep, [*keep[1:], 1 << 20], strict=True):
        os.closerange(low + 1, high)
    os.chdir("/tmp/work")
    for name, value in spec["rlimits"]:
        resource.setrlimit(getattr(resource, name), (value, value))
    _drop_privileges(libc, spec["uid"])
    _fresh_random_state()
    sys.argv = ["-c", str(read_fd), str(write_fd), spec["mode"]]
    main(sys.argv[1:])  # noqa: F821 (main.py, the part joined after this one)


def _fresh_random_state():
    """Reseed, from the OS's entropy, the random state a fork copies from the image: numpy's
    legacy global generator (``np.random.rand``, ``np.random.seed``; numpy never reseeds it
    after a fork, and the image has it once it imports ``numpy.random``, as ``scipy.stats``
    does: every sandbox would draw the same numbers) and Python's ``random`` (CPython reseeds
    it after ``os.fork`` already; reseeded here too, not left to that)."""
    import random

    random.seed()
    mtrand = sys.modules.get("numpy.random.mtrand")  # (not imported yet: seeded at import)
    if mtrand is not None:
        mtrand.seed()


def _spawn_child(libc, spec, fds, report_fd):
    """The forked child (never returns): its namespaces, then PID 1 of the new PID namespace;
    it writes that process's PID to ``report_fd`` and exits. ``fds``: the request pipe's read
    end, the reply pipe's write end, the output pipe's write end, the death pipe's write end
    (held by PID 1 until it exits), then the cgroup files to join."""
    try:
        read_fd, write_fd, out_fd, death_fd = fds[:4]
        os.dup2(out_fd, 1)  # (what goes wrong from here on is in the sandbox's output)
        os.dup2(out_fd, 2)
        os.close(out_fd)
        _own_namespaces(libc, spec)
        pid = os.fork()
        if pid == 0:
            os.close(report_fd)
            try:
                _init(libc, spec, read_fd, write_fd, death_fd)
            finally:
                os._exit(113)
        os.write(report_fd, str(pid).encode())
        os._exit(0)
    except BaseException as exc:  # noqa: BLE001
        try:
            os.write(2, f"the sandbox could not be set up: {exc}\n".encode())
        finally:
            os._exit(111)


def zygote(control_fd: int) -> None:
    """The prepared image: import the modules named in the grader's first message on
    ``control_fd`` (a SEQPACKET socket; the solution's imports), then serve the grader's
    requests there until it closes, one at a time and never waiting on a sandbox.
    ``{"op": "spawn", "spec": ...}`` with the sandbox's pipes and
    cgroup files as descriptors forks a sandbox and answers its PID here; ``{"op": "kill",
    "pid": ...}`` sends SIGKILL to a sandbox it forked and has not reaped (its whole PID
    namespace ends) and forgets it once reaped. How a sandbox ended reaches the grader through
    its death pipe, not through here; the image reaps ended sandboxes before each request."""
    import socket
    import threading

    prepare()
    sock = socket.socket(fileno=control_fd)
    _preload(sock)
    libc = _libc()
    # sandbox PID -> "running", "killed" (not reaped yet) or "reaped" (not asked to end yet);
    # forgotten when both killed and reaped (after that, its PID may be another process's)
    alive = {}
    sock.send(json.dumps({"ready": True}).encode())

    while True:
        try:
            message, fds, _flags, _addr = socket.recv_fds(sock, 1 << 16, 16)
        except InterruptedError:
            continue
        if not message:
            os._exit(0)  # the grader is gone: so is every sandbox (this is PID 1)
        reply = {}
        try:
            _reap_all(alive)
            request = json.loads(message)
            op = request.get("op")
            if op == "spawn":
                if threading.active_count() != 1 or len(os.listdir("/proc/self/task")) != 1:
                    raise RuntimeError("the prepared image has started a thread")
                report_r, report_w = os.pipe()
                spec = dict(request["spec"], cgroup_fds=fds[4:])
                child = os.fork()
                if child == 0:
                    alive.clear()  # (nothing of the other sandboxes stays in this one)
                    message = request = None
                    os.close(report_r)
                    sock.close()
                    _spawn_child(libc, spec, fds, report_w)
                os.close(report_w)
                reply = _spawned(child, report_r, alive)
            elif op == "kill":
                _kill(int(request["pid"]), alive)
        except Exception as exc:  # noqa: BLE001
            reply = {"error": f"{type(exc).__name__}: {exc}"}
        finally:
            for fd in fds:
                try:
                    os.close(fd)
                except OSError:
                    pass
        sock.send(json.dumps(reply).encode())


def _reap_all(alive):
    """Reap the sandboxes that have ended, and forget those also asked to end (``alive``: each
    sandbox's state, as :func:`zygote` keeps it)."""
    while alive:
        try:
            pid, _status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if not pid:
            return
        if alive.get(pid) == "killed":
            del alive[pid]
        elif pid in alive:
            alive[pid] = "reaped"


def _spawned(child, report_r, alive):
    """The reply to a spawn once the image has forked ``child``, which forks the sandbox's PID 1,
    writes its PID to ``report_r`` and exits: ``{"pid": ...}`` or ``{"failed": status}``."""
    import select
    import signal

    got = b""
    while select.select([report_r], [], [], 10)[0]:
        chunk = os.read(report_r, 64)
        if not chunk:
            break
        got += chunk
    os.close(report_r)
    os.kill(child, signal.SIGKILL)  # (exited already, unless it hung)
    _, status = os.waitpid(child, 0)
    if got.isdigit() and os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0:
        alive[int(got)] = "running"
        return {"pid": int(got)}
    if got.isdigit():  # (a child cut short after its fork: none of it runs)
        os.kill(int(got), signal.SIGKILL)
        alive[int(got)] = "killed"
    return {"failed": os.WEXITSTATUS(status) if os.WIFEXITED(status) else -1}


def _kill(pid, alive):
    """End a sandbox the image forked and has not reaped (SIGKILL to PID 1 of its namespace: all
    of it dies); forget one already reaped."""
    import signal

    if alive.get(pid) == "running":  # (never a PID another process may have now)
        os.kill(pid, signal.SIGKILL)
        alive[pid] = "killed"
    elif alive.get(pid) == "reaped":
        del alive[pid]


def _preload(sock):
    """Import the modules that the grader's first message on ``sock`` names (the image's;
    kept nowhere: a sandbox forked later can read its memory)."""
    import importlib

    for name in json.loads(sock.recv(1 << 16)).get("preload", []):
        try:
            importlib.import_module(name)
        except BaseException:  # noqa: BLE001, S110 (its failure is the sandbox's to meet)
            pass

