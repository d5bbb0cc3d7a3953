"""Sphinx extension: execute the chapters that need it in parallel, before Sphinx reads them.

MyST-NB in ``execute_notebooks: cache`` mode executes a chapter while Sphinx reads it, one chapter
after the other. On a machine with several cores most of a cold build is then spent waiting for
one kernel at a time. This extension runs when Sphinx knows which documents it will read
(``env-before-read-docs``): it reads each of those chapters exactly as MyST-NB will (the same
reader, so the same notebook and the same cache key), looks it up in the execution cache, and
executes the ones missing from the cache side by side (``mlcourse_nb_execution_jobs`` processes,
default: the number of CPUs, at most 4). The executed notebooks go into the cache; when Sphinx
then reads the chapters, MyST-NB finds every one of them there.

Nothing changes in what is executed or how: the same kernel, working folder and time limit as
MyST-NB's own execution. A chapter that fails is left out of the cache, so MyST-NB executes it
again while reading and reports the error as it always does.
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


def _execute(nb, cwd, timeout):
    """Worker: execute one notebook; returns (executed notebook or None, seconds, error text)."""
    from jupyter_cache.executors.utils import single_nb_execution

    start = time.perf_counter()
    result = single_nb_execution(nb, cwd=cwd, timeout=timeout, allow_errors=False,
                                 meta_override=True)
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
    if len(stale) < 2 or jobs < 2:
        return  # one chapter: MyST-NB executes it as usual
    from jupyter_cache.base import CacheBundleIn

    logger.info(f"executing {len(stale)} chapters in {min(jobs, len(stale))} parallel kernels")
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        futures = {pool.submit(_execute, nb, str(path.parent), config.execution_timeout):
                   (docname, path, read_fmt) for docname, path, nb, read_fmt in stale}
        for future in concurrent.futures.as_completed(futures):
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


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_config_value("mlcourse_nb_execution_jobs", 0, "")
    # After MyST-NB has built its configuration (builder-inited), before any document is read.
    app.connect("env-before-read-docs", execute_in_parallel)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
