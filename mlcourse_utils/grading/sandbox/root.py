"""The sandbox's minimal root: the host folders bound into it read-only, and the set-up script
that builds it (with a decoy of the reference package) and starts the runner in it.

``isolation.py`` runs the script inside new namespaces (``sh -c``, as root of them); the
prepared image (``zygote.py``) is started by the same script, in mode ``zygote``.
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

#: The reference package, replaced by a decoy inside the sandbox.
PACKAGE_DIR = Path(__file__).resolve().parents[2]

#: The unprivileged user that runs student code where the grader is root.
NOBODY = 65534
#: The reference package's __init__.py in the sandbox: it reports its import and refuses it.
DECOY = '''"""Stand-in for the reference package while a notebook is graded."""
import os, json, struct, sys
try:
    _data = json.dumps({"event": "delegation"}).encode()
    os.write(int(sys.argv[2]), struct.pack(">I", len(_data)) + _data)
except Exception:
    pass
raise ImportError("mlcourse_utils is not available while your notebook is graded: "
                  "answers must not use the reference implementation")
'''


def _environment_paths(hidden):
    """Host folders the runner needs, read-only in the sandbox: the system and Python."""
    paths = {Path("/usr")}
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.isdir(top) and not os.path.islink(top):
            paths.add(Path(top))
    for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
              Path(os.path.realpath(sys.executable)).parent.parent):
        paths.add(Path(p))
    for entry in sys.path:
        if entry and os.path.isdir(entry) and \
                ("site-packages" in entry or "dist-packages" in entry):
            paths.add(Path(entry))
    # The interpreter and its libraries are needed even inside a hidden folder (a .venv in the
    # repository); anything else inside one stays out.
    env = {Path(p).resolve() for p in (sys.prefix, sys.base_prefix)}
    keep = set()
    for p in paths:
        p = p.resolve()
        if any(_is_within(p, h) for h in hidden) and not any(_is_within(p, e) for e in env):
            continue
        keep.add(p)
    # Drop folders inside another kept folder (their content is already there).
    return sorted(p for p in keep if not any(q != p and _is_within(p, q) for q in keep))


def _setup_script(root, python, runner_code, fds, binds, uid, mode="namespace"):
    """Shell commands run as root inside the new namespaces, ending in the runner.

    Builds the minimal root on a tmpfs at ``root`` (an empty folder of the host, used as a
    mount point only inside this mount namespace), switches to it with ``pivot_root``, and
    starts the runner as ``uid`` without capabilities. With ``mode`` "zygote" it starts the
    prepared image instead (``zygote.py``; ``fds`` is its control descriptor alone, on which it
    is told what to import), as the namespace's root: each sandbox forked from it drops to
    ``uid`` itself.
    """
    q = shlex.quote
    lines = _root_lines(root, binds, uid, mode)
    if mode == "zygote":
        lines.append(f"exec {q(python)} -I -c {q(runner_code)} {fds[0]} zygote")
        return "\n".join(lines)
    change_user = f"--reuid={uid} --regid={uid} --clear-groups " if uid is not None else ""
    # Not `exec`: the shell stays PID 1 of the namespace, so the student's process is an
    # ordinary one (signals it sends itself are delivered) and everything dies with the shell.
    lines.append(
        f"setpriv {change_user}--no-new-privs --inh-caps=-all --ambient-caps=-all "
        f"--bounding-set=-all {q(python)} -I -c {q(runner_code)} {fds[0]} {fds[1]} {mode}")
    return "\n".join(lines)


def _root_lines(root, binds, uid, mode):
    """The set-up script's commands up to the runner: the minimal root built at ``root`` and
    switched to with ``pivot_root`` (:func:`_setup_script`)."""
    q = shlex.quote
    r = q(str(root))
    pkg = str(PACKAGE_DIR)
    # Each external command is a process started per sandbox: files are created with the
    # shell's own `: > FILE` and `printf`, and folders several to one `mkdir -p`. Bind targets
    # are never nested (see _environment_paths), so making them all before the first bind is
    # the same as making each before its own; those under /tmp are made once it is mounted.
    in_tmp = [src for src in binds if _is_within(src, "/tmp")]
    early = " ".join(f"{r}{q(str(src))}" for src in binds if src not in in_tmp)
    lines = [
        "set -e",
        "PATH=/usr/sbin:/usr/bin:/sbin:/bin",
        "mount --make-rprivate /",
        f"mount -n -t tmpfs -o size=16m,mode=755 mlcourse-root {r}",
        f"mkdir -p {r}/tmp {r}/proc {r}/dev {r}/etc {r}/.old {early}".rstrip()
        + (f" {r}/.scratch" if mode == "zygote" else ""),
        # /tmp first: the environment may live under /tmp (CI clones there) and is bound on top.
        f"mount -n -t tmpfs -o size=512m,mode=1777,nosuid,nodev mlcourse-tmp {r}/tmp",
        f"mkdir -m 700 {r}/tmp/work" if uid is None else
        f"install -d -m 700 -o {uid} -g {uid} {r}/tmp/work",
    ]
    if in_tmp:
        lines.append("mkdir -p " + " ".join(f"{r}{q(str(src))}" for src in in_tmp))
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(top):
            lines.append(f"ln -s {q(os.readlink(top))} {r}{top}")
    for src in binds:
        s = q(str(src))
        lines += [f"mount -n --bind {s} {r}{s}",
                  f"mount -n -o remount,bind,ro,nosuid,nodev {r}{s}"]
    for f in ("/etc/ld.so.cache", "/etc/localtime"):
        if os.path.isfile(f):
            lines += [f": > {r}{f}", f"mount -n --bind {f} {r}{f}",
                      f"mount -n -o remount,bind,ro {r}{f}"]
    lines += [
        f"echo 'root:x:0:0::/:/bin/sh' > {r}/etc/passwd",
        f"echo 'nobody:x:{NOBODY}:{NOBODY}:nobody:/tmp/work:/bin/sh' >> {r}/etc/passwd",
        f"printf 'root:x:0:\\nnogroup:x:{NOBODY}:\\n' > {r}/etc/group",
        f"mount -n -t proc -o nosuid,nodev,noexec proc {r}/proc",
        f"mount -n -t tmpfs -o size=1m,mode=755,nosuid dev {r}/dev",
        f"for d in null zero full random urandom; do : > {r}/dev/$d; "
        f"mount -n --bind /dev/$d {r}/dev/$d; done",
        f"mkdir {r}/dev/shm",
        f"mount -n -t tmpfs -o size=64m,mode=1777,nosuid,nodev shm {r}/dev/shm",
        # The reference package: a decoy where the import system would find it.
        f"mkdir -p {r}{q(pkg)}",
        f"mount -n -t tmpfs -o size=1m,mode=755 mlcourse-decoy {r}{q(pkg)}",
        f"printf '%s' {q(DECOY)} > {r}{q(pkg)}/__init__.py",
        f"mount -n -o remount,ro {r}{q(pkg)}",
        f"mount -n -o remount,ro,nosuid,nodev {r}",
        f"cd {r}",
        "pivot_root . .old",
        "umount -n -l /.old",
        "cd /tmp/work",
    ]
    lines.append("unset OLDPWD")  # (the host's name of the root folder)
    return lines


def _is_within(path, parent):
    try:
        Path(path).resolve().relative_to(Path(parent).resolve())
        return True
    except ValueError:
        return False
