"""The Sphinx extension that executes stale chapters in parallel (book/execute.py).

Named test_book_execute because test_execute is grading/execute.py's. Which chapters count as
stale, and when the extension stays out of MyST-NB's way, are tested here without Sphinx; the
cold website build that uses it is test_website's.
"""

from __future__ import annotations

import os
import types

import pytest

from mlcourse_utils.book import execute

NOTEBOOK = """\
---
jupytext:
  text_representation:
    format_name: myst
kernelspec:
  name: python3
  display_name: Python 3
---
# A chapter

```{code-cell} ipython3
x = 1 + 1
```
"""

PLAIN = "# Only text\n\nNo code here.\n"


@pytest.fixture
def env(tmp_path):
    from myst_nb.core.config import NbParserConfig
    from myst_parser.config.main import MdParserConfig

    (tmp_path / "book").mkdir()
    (tmp_path / "book" / "one.md").write_text(NOTEBOOK)
    (tmp_path / "book" / "two.md").write_text(NOTEBOOK.replace("1 + 1", "2 + 2"))
    (tmp_path / "book" / "text.md").write_text(PLAIN)
    (tmp_path / "book" / "image.png").write_bytes(b"\x89PNG")
    nb_config = NbParserConfig(execution_mode="cache",
                               execution_cache_path=str(tmp_path / "cache"))
    return types.SimpleNamespace(
        mystnb_config=nb_config, myst_config=MdParserConfig(),
        doc2path=lambda docname: str(tmp_path / "book" / docname))


def test_only_notebooks_with_code_missing_from_the_cache_are_stale(env):
    docnames = ["two.md", "text.md", "one.md", "image.png", "missing.md"]
    cache, stale = execute._stale_notebooks(None, env, docnames)
    assert [docname for docname, *_ in stale] == ["one.md", "two.md"]  # sorted, code only
    # read as MyST-NB reads them, so the cache key is the one it looks up
    assert [read_fmt for *_, read_fmt in stale] == [{"type": "plugin", "name": "myst_nb_md"}] * 2
    assert cache.list_cache_records() == []
    # once a chapter is in the cache (as the extension puts it there), it is not stale
    from jupyter_cache.base import CacheBundleIn

    _, path, nb, read_fmt = stale[0]
    record = cache.add_nb_to_project(str(path), read_data=read_fmt)
    cache.cache_notebook_bundle(CacheBundleIn(nb, record.uri), check_validity=False)
    assert [d for d, *_ in execute._stale_notebooks(None, env, docnames)[1]] == ["two.md"]


def _app(jobs):
    return types.SimpleNamespace(config=types.SimpleNamespace(mlcourse_nb_execution_jobs=jobs))


def test_nothing_is_run_outside_cache_mode_or_when_nothing_is_stale(env, monkeypatch):
    def no_pool(*args, **kwargs):
        raise AssertionError("no execution expected")

    monkeypatch.setattr(execute.concurrent.futures, "ProcessPoolExecutor", no_pool)
    execute.execute_in_parallel(_app(4), env, ["text.md"])  # nothing with code is stale
    monkeypatch.setattr(execute, "_stale_notebooks", no_pool)
    for mode in ("off", "force", "auto"):
        env.mystnb_config = env.mystnb_config.copy(execution_mode=mode)
        execute.execute_in_parallel(_app(4), env, ["one.md", "two.md"])


def test_one_stale_chapter_runs_here_too_over_ipc_and_is_cached(env):
    """A single stale chapter is executed by the extension as well (not left to MyST-NB, whose
    kernels talk over TCP and warn about it); the result is in the cache for MyST-NB."""
    execute.execute_in_parallel(_app(1), env, ["one.md"])
    cache, stale = execute._stale_notebooks(None, env, ["one.md", "two.md"])
    assert [d for d, *_ in stale] == ["two.md"]
    (record,) = cache.list_cache_records()
    (cell,) = [c for c in cache.get_cache_bundle(record.pk).nb.cells if c.cell_type == "code"]
    assert cell.execution_count == 1  # executed (x = 1 + 1 prints nothing)


def test_a_kernel_over_ipc_on_posix_warns_of_no_tcp(tmp_path, capfd):
    """The kernel the extension starts uses IPC sockets on POSIX: ipykernel's warning about TCP
    without encryption (printed by every TCP kernel, on its stderr) never appears."""
    import nbformat

    if os.name == "nt":
        pytest.skip("Windows has no IPC transport")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import sys; sys.version")])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    executed, seconds, error = execute._execute(nb, str(tmp_path), 60)
    assert error == "" and executed.cells[0].outputs
    captured = capfd.readouterr()
    assert "without encryption" not in captured.out + captured.err
    assert list(tmp_path.iterdir()) == []  # no socket file left in the chapter's folder


def test_chapters_still_running_are_named_at_least_every_heartbeat(monkeypatch):
    """While no chapter finishes, one line per HEARTBEAT names those still running."""
    import concurrent.futures
    import threading

    monkeypatch.setattr(execute, "HEARTBEAT", 0.05)
    lines = []
    monkeypatch.setattr(execute.logger, "info", lines.append)
    release = threading.Event()
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        slow = pool.submit(release.wait, 5)
        fast = pool.submit(lambda: None)
        futures = {slow: ("book/slow",), fast: ("book/fast",)}
        done = []
        for future in execute._as_completed_with_heartbeat(futures, 0.0):
            done.append(futures[future][0])
            if len(done) == 1:
                threading.Timer(0.3, release.set).start()
    assert done == ["book/fast", "book/slow"]
    beats = [line for line in lines if line.startswith("still executing")]
    assert beats and all(line.endswith(": book/slow") for line in beats), lines
