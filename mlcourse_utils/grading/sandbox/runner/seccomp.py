"""The runner's first part: the seccomp filter it installs before anything else.

The parts of the runner (this folder) are joined into one text in the order of ``PARTS`` in
``__init__.py``, and run as one program with ``python -I -c``: they share one namespace, and a
name a part uses from an earlier one is imported under ``TYPE_CHECKING`` only, for the reader
and the linters. This part comes first, so it also holds the ``__future__`` import.
"""

from __future__ import annotations

import ctypes
import platform
import sys

# ---------------------------------------------------------------- seccomp, before anything else
# A filter that every process and thread started from here inherits and cannot remove: no new
# namespaces (a nested user namespace would hand out capabilities), no mounts, no ptrace of a
# neighbour, no kernel keyrings, modules, BPF or io_uring, and no new program (execve: a fresh
# Python would run without the watch on forbidden calls). The process has no capabilities and
# runs as an unprivileged user already; this closes the doors that stay open to such a user.
# No file-change notifications either (inotify, fanotify, and dnotify's fcntl F_NOTIFY): they
# work on files, not mounts, so a watch on the Python environment, which every sandbox shares
# read-only, would see another student's sandbox open and read it.

_ERRNO, _ALLOW, _KILL = 0x00050000, 0x7FFF0000, 0x80000000
_EPERM, _ENOSYS = 1, 38
_F_NOTIFY = 1026
_NS_FLAGS = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000
_SYSCALLS = {  # (audit arch, clone, clone3, denied syscall numbers)
    "x86_64": (0xC000003E, 56, 435, [
        272, 308, 165, 166, 155, 161, 101, 310, 311, 250, 248, 249, 321, 298, 246, 320, 175, 313,
        176, 304, 303, 323, 167, 168, 169, 163, 425, 426, 427, 428, 429, 430, 431, 432, 433, 442,
        135, 179, 164, 227, 159, 305, 103, 170, 171, 172, 173, 134, 153, 59, 322,  # execve(at)
        253, 254, 294, 300, 301]),  # inotify_init, _add_watch, _init1, fanotify_init, _mark
    "aarch64": (0xC00000B7, 220, 435, [
        97, 268, 40, 39, 41, 51, 117, 270, 271, 219, 217, 218, 280, 241, 104, 294, 105, 273, 106,
        265, 264, 282, 224, 225, 142, 89, 425, 426, 427, 428, 429, 430, 431, 432, 433, 442, 92,
        60, 170, 112, 116, 161, 162, 171, 266, 58, 221, 281,  # execve, execveat
        26, 27, 262, 263]),  # inotify_init1, inotify_add_watch, fanotify_init, fanotify_mark
}


def _install_seccomp(fds):
    """Install the filter (classic BPF through prctl); returns False where unsupported.
    ``fds``: the protocol's descriptors, which it keeps from being closed or replaced."""
    table = _SYSCALLS.get(platform.machine())
    if table is None or sys.platform != "linux":
        return False
    prog = _filter_program(*table, fds)

    class SockFilter(ctypes.Structure):
        _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte),
                    ("k", ctypes.c_uint)]

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(SockFilter))]

    filters = (SockFilter * len(prog))(*[SockFilter(*ins) for ins in prog])
    fprog = SockFprog(len(prog), filters)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p, ctypes.c_ulong,
                           ctypes.c_ulong]
    PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, None, 0, 0) != 0:
        return False
    return libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(fprog), 0, 0) == 0


def _filter_program(arch, clone, clone3, denied, fds):
    """The filter's instructions for one architecture, as (code, jt, jf, k) tuples."""
    prog = []

    def op(code, k, jt=0, jf=0):
        prog.append((code, jt, jf, k))

    LD, JEQ, JSET, JGE, RET = 0x20, 0x15, 0x45, 0x35, 0x06
    op(LD, 4)                                   # seccomp_data.arch
    op(JEQ, arch, 1, 0)
    op(RET, _KILL)                              # another ABI (e.g. 32-bit calls): refuse
    # The protocol's descriptors can be neither closed nor replaced (the grader's record of
    # forbidden calls travels on them): close, dup2 and dup3 onto them, close_range over them.
    close_, dups, close_range = (3, (33, 292), 436) if arch == 0xC000003E else (57, (24,), 436)
    fcntl = 72 if arch == 0xC000003E else 25
    for fd in fds:
        for nr, offset in ((close_, 16), *((d, 24) for d in dups)):
            op(LD, 0)
            op(JEQ, nr, 0, 3)
            op(LD, offset)                      # the descriptor argument (low 32 bits)
            op(JEQ, fd, 0, 1)
            op(RET, _ERRNO | _EPERM)
    if fds:
        op(LD, 0)
        op(JEQ, close_range, 0, 3)
        op(LD, 16)
        op(JGE, max(fds) + 1, 1, 0)
        op(RET, _ERRNO | _EPERM)
    op(LD, 0)
    op(JEQ, fcntl, 0, 3)
    op(LD, 24)                                  # fcntl's command
    op(JEQ, _F_NOTIFY, 0, 1)
    op(RET, _ERRNO | _EPERM)                    # dnotify: a watch on a folder
    op(LD, 0)                                   # seccomp_data.nr
    if arch == 0xC000003E:
        op(JGE, 0x40000000, 0, 1)               # the x32 ABI
        op(RET, _ERRNO | _EPERM)
    for nr in denied:
        op(JEQ, nr, 0, 1)
        op(RET, _ERRNO | _EPERM)
    op(JEQ, clone3, 0, 1)
    op(RET, _ERRNO | _ENOSYS)                   # libc falls back to clone, checked below
    op(JEQ, clone, 0, 3)
    op(LD, 16)                                  # clone's flags (low 32 bits of args[0])
    op(JSET, _NS_FLAGS, 0, 1)
    op(RET, _ERRNO | _EPERM)
    op(RET, _ALLOW)
    return prog
