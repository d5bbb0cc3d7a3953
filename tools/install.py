"""`make`'s install step: pip, with a few lines of progress instead of pip's hundreds.

    python3 tools/install.py VENV_PYTHON PIP_ARGS...

Runs ``VENV_PYTHON -m pip install PIP_ARGS...`` and prints one line when it starts (what is
installed and about how long it takes), a line at least every 20 seconds while pip works (how
many packages it has collected, or that it is installing them), and one line at the end. pip's
whole output goes to ``.venv/pip.log``; when pip fails, its last 40 lines are printed too. Only
the standard library: it runs before anything is installed.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

#: Seconds between two progress lines at most.
EVERY = 20


def main(argv: list[str]) -> int:
    python, *pip_args = argv
    log = Path(python).absolute().parents[1] / "pip.log"
    print("installing the course package with its book, grading and test tools into "
          f"{os.path.relpath(log.parent)}/ (about 170 packages: 2-4 minutes the first time; "
          f"pip's output goes to {os.path.relpath(log)})", flush=True)
    start = time.monotonic()
    state = {"collected": 0, "phase": "resolving", "last": start}
    lock = threading.Lock()

    def say(text: str) -> None:
        with lock:
            state["last"] = time.monotonic()
        print(f"  {text} ({time.monotonic() - start:.0f} s)", flush=True)

    def heartbeat() -> None:
        while not done.wait(min(1.0, EVERY / 4)):
            if time.monotonic() - state["last"] >= EVERY:
                if state["phase"] == "installing":
                    say("still installing the packages")
                else:
                    say(f"resolving: {state['collected']} packages collected")

    done = threading.Event()
    threading.Thread(target=heartbeat, daemon=True).start()
    with open(log, "w", encoding="utf-8") as out:
        proc = subprocess.Popen([python, "-m", "pip", "install", "--progress-bar", "off",
                                 "--disable-pip-version-check", *pip_args],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                errors="replace")
        for line in proc.stdout:
            out.write(line)
            if line.startswith("Collecting "):
                state["collected"] += 1
            elif line.startswith("Installing collected packages"):
                state["phase"] = "installing"
                say(f"installing {line.count(',') + 1} packages")
        status = proc.wait()
    done.set()
    if status != 0:
        print(f"pip failed (exit status {status}); the end of {log}:", file=sys.stderr)
        print("".join(log.read_text(encoding="utf-8").splitlines(True)[-40:]), file=sys.stderr)
        return status
    print(f"installed in {time.monotonic() - start:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
