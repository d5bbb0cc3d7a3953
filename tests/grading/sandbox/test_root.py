"""The sandbox's minimal root (grading/sandbox/root.py): the folders bound into it, and the
set-up script that builds it, with the reference's decoy, and starts the runner in it."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

from mlcourse_utils.grading.sandbox import root
from mlcourse_utils.grading.sandbox.runner import MAX_ARG_STRLEN, runner_text


def test_is_within(tmp_path):
    (tmp_path / "a" / "b").mkdir(parents=True)
    assert root._is_within(tmp_path / "a" / "b", tmp_path / "a")
    assert root._is_within(tmp_path / "a", tmp_path / "a")
    assert not root._is_within(tmp_path / "a", tmp_path / "a" / "b")
    assert not root._is_within(tmp_path / "ab", tmp_path / "a")  # a prefix is not a parent
    assert root._is_within(tmp_path / "a" / ".." / "a" / "b", tmp_path / "a")


def test_environment_paths_hold_the_system_and_python_but_no_hidden_folder(tmp_path):
    paths = root._environment_paths([tmp_path])
    assert Path("/usr") in paths
    assert any(root._is_within(Path(sys.executable).resolve(), p) for p in paths)
    assert not any(root._is_within(p, tmp_path) for p in paths)
    # none inside another (the inner one is there already)
    assert not any(p != q and root._is_within(p, q) for p in paths for q in paths)


def test_a_hidden_folder_around_the_environment_keeps_the_environment_only():
    env = Path(sys.prefix).resolve()
    paths = root._environment_paths([env.parent])
    assert any(root._is_within(env, p) for p in paths)
    assert not any(p == env.parent.resolve() for p in paths)


def test_the_decoy_covers_the_whole_package_wherever_root_py_lies():
    """PACKAGE_DIR is found from root.py's own place (grading/sandbox/): it must be the
    package's folder, not a sub-package, or the sandbox would leave the reference importable."""
    import mlcourse_utils

    assert root.PACKAGE_DIR == Path(mlcourse_utils.__file__).resolve().parent


def test_setup_script_builds_a_minimal_root_and_drops_privileges(tmp_path):
    script = root._setup_script(tmp_path / "root", "/usr/bin/python3", "print('runner')",
                                (5, 6), [Path("/usr")], 65534)
    lines = script.split("\n")
    assert lines[0] == "set -e"
    top = str(tmp_path / "root")
    assert f"mount -n --bind /usr {top}/usr" in lines
    assert f"mount -n -o remount,bind,ro,nosuid,nodev {top}/usr" in lines
    assert "pivot_root . .old" in lines and "umount -n -l /.old" in lines
    # the reference package is a read-only decoy that refuses its import
    assert f"mount -n -o remount,ro {top}{root.PACKAGE_DIR}" in lines
    assert "raise ImportError" in script
    last = lines[-1]
    assert last.startswith("setpriv --reuid=65534 --regid=65534 --clear-groups --no-new-privs")
    assert last.endswith("-I -c 'print('\"'\"'runner'\"'\"')' 5 6 namespace")  # quoted
    assert "--bounding-set=-all" in last
    # without a user change (not root) no --reuid, and the mode is passed on
    other = root._setup_script(tmp_path / "r", "py", "x", (1, 2), [], None, "namespace-probe")
    assert "--reuid" not in other and other.endswith("x 1 2 namespace-probe")


def test_the_longest_argument_with_the_runner_fits_linux_limit(tmp_path):
    """The runner's text travels inside the set-up script, one argument of ``sh -c``, quoted
    once more where a cgroup is joined (``sh -c '... exec prlimit ... sh -c SCRIPT'``, as
    ``isolation.Process._spawn`` builds it): that argument stays under Linux's limit on one
    argument, with room to spare for more bound folders and a longer text."""
    script = root._setup_script(tmp_path / "root", sys.executable, runner_text(), (5, 6),
                                root._environment_paths([tmp_path]), 65534)
    inner = ["prlimit", "--as=1", "--", "unshare", "--mount", "--pid", "sh", "-c", script]
    joining = 'for f in "$@"; do echo $$ > "$f" || exit 111; done; exec ' + shlex.join(inner)
    assert shlex.quote(runner_text()) in script
    assert len(joining.encode()) < MAX_ARG_STRLEN - 16384
