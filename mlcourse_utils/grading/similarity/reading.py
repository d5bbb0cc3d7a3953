"""A notebook's written answers and its id cell, read in a limited child (``mlcourse similarity``).

:mod:`.numbers` compares the numbers a student quotes in the answers graded by hand with the
model numbers of every variant in the class, and the id typed in the notebook's id cell with
the class's ids. Both come from the student's file, so, as grading does
(:mod:`~..engine.analysis`), the JSON is decoded in a fresh child forked from a prepared server
(:mod:`~..sandbox.forkserver`) under a memory and a CPU-time limit, and what comes back is
bounded: the text of each manually graded cell asked for (Markdown, or a code cell's source; at
most :data:`MAX_TEXT` characters) and the id cell's id or why it has none.
"""

from __future__ import annotations

import dataclasses
import json
import math
import resource
import struct
import time
from collections.abc import Iterable

from ..notebook import cell_source, grade_id, is_manual_cell, read_notebook_cells, read_student_id
from ..sandbox import forkserver
from ..text import clean_text

#: Characters of one question's answer kept (its cells joined).
MAX_TEXT = 20_000
#: Cells accepted in one notebook (as grading's reader).
MAX_CELLS = 2000
#: Memory the child may use beyond what it starts with, and its largest answer (bytes).
MEMORY_MB = 512
MAX_REPLY = 4 * 2**20


class ReadingError(Exception):
    """The notebook could not be read within the limits (the reason, in words)."""


@dataclasses.dataclass
class Written:
    """What one notebook says: ``texts`` (grade_id -> its manual cells' text, joined) and the
    id typed in its id cell (normalised; None with ``id_problem`` saying why)."""

    texts: dict[str, str]
    typed_id: str | None
    id_problem: str | None


def _work(data, questions):
    cells = read_notebook_cells(data)
    if len(cells) > MAX_CELLS:
        raise ValueError(f"the notebook has {len(cells)} cells; at most {MAX_CELLS} are accepted")
    texts = {}
    for cell in cells:
        gid = grade_id(cell)
        if gid in questions and is_manual_cell(cell):
            texts[gid] = (texts[gid] + "\n" if gid in texts else "") + cell_source(cell)
            texts[gid] = texts[gid][:MAX_TEXT]
    typed, problem = read_student_id(cells)
    return {"texts": texts, "typed_id": typed, "id_problem": problem}


def answer(message: bytes) -> bytes:
    """The fork server's job (in the child): limits, then :class:`Written` as JSON, or
    ``{"error": reason}``."""
    (n,) = struct.unpack(">I", message[:4])
    raw = json.loads(message[4:4 + n])
    data = message[4 + n:]
    del message
    forkserver.limit_memory(raw["memory_mb"])
    try:
        resource.setrlimit(resource.RLIMIT_CPU, (raw["cpu_seconds"], raw["cpu_seconds"] + 1))
    except (ValueError, OSError):
        pass
    try:
        reply = _work(data, set(raw["questions"]))
    except MemoryError:
        reply = {"error": f"reading the notebook needed more than {raw['memory_mb']} MB"}
    except RecursionError:
        reply = {"error": "the notebook could not be read (nested too deeply)"}
    except Exception as exc:  # noqa: BLE001 (this student's file, said in words)
        reply = {"error": f"the notebook could not be read ({type(exc).__name__}: "
                          f"{clean_text(str(exc), 200)})"}
    return json.dumps(reply, ensure_ascii=True).encode()


_SERVER = forkserver.Server(["mlcourse_utils.grading.notebook"],
                            "mlcourse_utils.grading.similarity.reading:answer", MAX_REPLY)


def read_written(notebook: bytes, questions: Iterable[str], *,
                 timeout: float = 60.0) -> Written:
    """The answers to ``questions`` (grade_ids) and the id cell of a submitted notebook (its
    bytes), read in a limited child. Raises :class:`ReadingError` with the reason."""
    if not isinstance(notebook, bytes):
        raise TypeError(f"notebook must be the notebook's bytes, not {type(notebook).__name__}")
    head = json.dumps({"questions": list(questions), "memory_mb": MEMORY_MB,
                       "cpu_seconds": max(1, math.ceil(timeout) + 1)}).encode()
    reply, timed_out = _SERVER.run(struct.pack(">I", len(head)) + head + notebook,
                                   time.monotonic() + timeout)
    if timed_out:
        raise ReadingError(f"reading the notebook took longer than {timeout:g} s")
    if reply is None:
        raise ReadingError("the notebook could not be read (its reader stopped; it may have "
                           f"needed more than {MEMORY_MB} MB)")
    found = json.loads(reply)
    if "error" in found:
        raise ReadingError(clean_text(str(found["error"]), 300))
    texts = {str(k): str(v)[:MAX_TEXT] for k, v in found.get("texts", {}).items()}
    typed = found.get("typed_id")
    return Written(texts, typed if isinstance(typed, str) else None,
                   None if typed else clean_text(str(found.get("id_problem")), 300))
