"""The runner's start: the filter, the pipes, then serving the grader (or the prepared image);
the last part, which runs :func:`main` when the joined text runs as ``__main__``."""

import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # (one namespace once joined: see seccomp.py)
    from .image import zygote
    from .pipe import _Blocker, send
    from .seccomp import _install_seccomp
    from .serve import _serve, prepare

def main(argv: list[str] | None = None) -> None:
    """Serve the grader: ``argv`` (default ``sys.argv[1:]``) is ``READ_FD WRITE_FD MODE``, the
    mode ``namespace`` or ``fallback``, with ``-probe`` to only report the defences and exit;
    or ``CONTROL_FD zygote`` for the prepared image (:func:`zygote`)."""
    global SECCOMP, _in, _out
    args = sys.argv[1:] if argv is None else list(argv)
    if args[1:2] == ["zygote"]:  # (no filter: its children make namespaces and mounts)
        zygote(int(args[0]))
    SECCOMP = _install_seccomp([int(a) for a in args[:2] if a.isdigit()])  # before anything
    read_fd, write_fd, mode = int(args[0]), int(args[1]), args[2]
    probe = mode.endswith("-probe")  # only say which defences hold, then exit
    mode = mode.removesuffix("-probe")
    _in = os.fdopen(read_fd, "rb", buffering=0)
    _out = os.fdopen(write_fd, "wb", buffering=0)
    if probe:
        send({"event": "ready", "pid": os.getpid(), "seccomp": SECCOMP, "uid": os.getuid()})
        os._exit(0)
    if mode == "fallback":
        sys.meta_path.insert(0, _Blocker())

    prepare()
    send({"event": "ready", "pid": os.getpid(), "seccomp": SECCOMP, "uid": os.getuid()})
    _serve(write_fd)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)  # (the protocol's descriptors stay open: seccomp refuses to close them)


if __name__ == "__main__":
    main()
