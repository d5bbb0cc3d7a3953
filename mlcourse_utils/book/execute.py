"""Sphinx extension: execute the chapters that need it in parallel, before Sphinx reads them.

MyST-NB in ``execute_notebooks: cache`` mode executes a chapter while Sphinx reads it, one chapter
after the other. On a machine with several cores most of a cold build is then spent waiting for
one kernel at a time. This extension runs when Sphinx knows which documents it will read
(``env-before-read-docs``): it reads each of those chapters exactly as MyST-NB will (the same
reader, so the same notebook and the same cache key), looks it up in the execution cache, and
executes the ones missing from the cache side by side (``mlcourse_nb_execution_jobs`` processes,
default: the number of CPUs, at most 4). The executed notebooks go into the cache; when Sphinx
then reads the chapters, MyST-NB finds every one of them there.

Nothing changes in what is executed: the same kernel, working folder and time limit as
MyST-NB's own execution. A chapter that fails is left out of the cache, so MyST-NB executes it
again while reading and reports the error as it always does. Two things differ, for the build's
output: the kernels talk over IPC sockets on POSIX (as ``mlcourse check``'s do), not over TCP,
about which every kernel would print a warning that reads like a failure ("running over TCP
without encryption"); and while chapters run, a line at least every :data:`HEARTBEAT` seconds
names the ones still running, so a long chapter never looks like a hang.
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import os
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sphinx.util import logging

if TYPE_CHECKING:
    from sphinx.application import Sphinx
    from sphinx.environment import BuildEnvironment

logger = logging.getLogger(__name__)

#: Seconds between two "still executing" lines at most.
HEARTBEAT = 20


def _execute(nb, cwd, timeout):
    """Worker: execute one notebook; returns (executed notebook or None, seconds, error text)."""
    import tempfile

    from jupyter_cache.executors.utils import single_nb_execution
    from jupyter_client.manager import KernelManager

    from ..grading.execute import kernel_transport

    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="mlc-") as sockets:
        transport, ip = kernel_transport(os.name, sockets)
        km = KernelManager(kernel_name=nb.metadata.get("kernelspec", {}).get("name", "python3"),
                           transport=transport, ip=ip)
        try:
            result = single_nb_execution(nb, cwd=cwd, timeout=timeout, allow_errors=False,
                                         meta_override=True, km=km)
        finally:  # (nbclient leaves a kernel manager it was given running)
            if km.has_kernel:
                km.shutdown_kernel(now=True)
    seconds = time.perf_counter() - start
    if result.err is not None:
        return None, seconds, f"{type(result.err).__name__}: {result.err}"
    return nb, seconds, ""


def _stale_notebooks(app, env, docnames):
    """``(cache, stale)``: the execution cache and ``[(docname, path, notebook, read_fmt)]`` of
    the documents it cannot serve."""
    from jupyter_cache import get_cache
    from myst_nb.core.read import create_nb_reader

    cache = get_cache(env.mystnb_config.execution_cache_path)
    stale = []
    for docname in sorted(docnames):
        path = Path(env.doc2path(docname))
        if path.suffix not in (".md", ".ipynb") or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8")
        reader = create_nb_reader(str(path), env.myst_config, env.mystnb_config, text)
        if reader is None:  # plain Markdown, not a notebook
            continue
        nb = reader.read(text)
        if not any(cell.cell_type == "code" for cell in nb.cells):
            continue
        try:
            cache.match_cache_notebook(nb)
        except KeyError:
            stale.append((docname, path, nb, reader.read_fmt))
    return cache, stale


def execute_in_parallel(app: Sphinx, env: BuildEnvironment, docnames: Iterable[str]) -> None:
    """``env-before-read-docs``: fill the execution cache for the documents about to be read."""
    config = env.mystnb_config
    if config.execution_mode != "cache" or config.execution_in_temp:
        return
    jobs = app.config.mlcourse_nb_execution_jobs or min(4, os.cpu_count() or 1)
    cache, stale = _stale_notebooks(app, env, docnames)
    if not stale:
        return
    from jupyter_cache.base import CacheBundleIn

    kernels = min(jobs, len(stale))
    logger.info(f"executing {len(stale)} chapter{'s' if len(stale) != 1 else ''} in {kernels} "
                f"parallel kernel{'s' if kernels != 1 else ''}")
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        futures = {pool.submit(_execute, nb, str(path.parent), config.execution_timeout):
                   (docname, path, read_fmt) for docname, path, nb, read_fmt in stale}
        for future in _as_completed_with_heartbeat(futures, time.monotonic()):
            docname, path, read_fmt = futures[future]
            try:
                executed, seconds, error = future.result()
            except Exception as exc:  # noqa: BLE001 (MyST-NB will execute and report it)
                executed, seconds, error = None, 0.0, f"{type(exc).__name__}: {exc}"
            if executed is None:
                logger.info(f"{docname}: parallel execution failed ({error}); it is executed "
                            "again while read")
                continue
            record = (cache.add_nb_to_project(str(path), read_data=read_fmt) if read_fmt
                      else cache.add_nb_to_project(str(path)))
            cache.cache_notebook_bundle(
                CacheBundleIn(executed, record.uri, data={"execution_seconds": seconds}),
                check_validity=False, overwrite=True)
            logger.info(f"{docname}: executed in {seconds:.1f} s")


def _as_completed_with_heartbeat(futures, start):
    """``concurrent.futures.as_completed(futures)``, logging the chapters still running whenever
    :data:`HEARTBEAT` seconds pass without one finishing."""
    pending = set(futures)
    while pending:
        done, pending = concurrent.futures.wait(pending, timeout=HEARTBEAT,
                                                return_when=concurrent.futures.FIRST_COMPLETED)
        if not done:
            running = ", ".join(sorted(futures[f][0] for f in pending))
            logger.info(f"still executing ({time.monotonic() - start:.0f} s): {running}")
        yield from done


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_config_value("mlcourse_nb_execution_jobs", 0, "")
    # After MyST-NB has built its configuration (builder-inited), before any document is read.
    app.connect("env-before-read-docs", execute_in_parallel)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
