"""The reference modules' tests pass under other BLAS kernels, not only this machine's.

Which summation order a BLAS uses depends on the CPU kernel it picks (AVX-512, AVX2, AVX, SSE
have different block sizes and accumulators) as well as on its thread count. The conftest runs
every reference test with one and with two threads; here the same tests run again in a fresh
interpreter with OpenBLAS told to use another machine's kernel (``OPENBLAS_CORETYPE``, read when
the library loads), so a tolerance that holds for one order only fails here, not on a student's
laptop. The kernel names are x86-64's; elsewhere these tests are skipped.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

from tolerances import REFERENCE_TEST_MODULES

ROOT = Path(__file__).resolve().parents[1]

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(platform.machine().lower() not in {"x86_64", "amd64"},
                       reason="OPENBLAS_CORETYPE names x86-64 kernels"),
]


def _blas_architecture(env):
    """The kernel OpenBLAS reports in a fresh interpreter started with ``env``."""
    code = ("import numpy, threadpoolctl; "
            "print(*[i.get('architecture') for i in threadpoolctl.threadpool_info() "
            "if i.get('internal_api') == 'openblas'])")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, timeout=120, check=True)
    return out.stdout.split()


@pytest.mark.parametrize("coretype", ["Haswell", "Sandybridge"])
def test_reference_tests_pass_under_another_kernel(coretype):
    env = {**os.environ, "OPENBLAS_CORETYPE": coretype}
    arch = _blas_architecture(env)
    if not arch:
        pytest.skip("numpy's BLAS is not OpenBLAS here")
    # The override took effect (OpenBLAS ignores a kernel the CPU cannot run and says so).
    assert all(a.lower() == coretype.lower() for a in arch), arch
    files = sorted(str(ROOT / "tests" / f"{m}.py") for m in REFERENCE_TEST_MODULES)
    run = subprocess.run(
        [sys.executable, "-m", "pytest", *files, "-q", "-m", "not slow", "-p", "no:xdist",
         "-p", "no:cacheprovider", "-x", "--no-header"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=1200)
    assert run.returncode == 0, (
        f"reference tests fail with OPENBLAS_CORETYPE={coretype}:\n{run.stdout[-4000:]}")
