"""The scan of student code (grading/names.py): imports resolved, tampering noted, long or broken
cells judged by their text.
"""

from __future__ import annotations

import pytest

from mlcourse_utils.grading import (
    names,
)


@pytest.mark.parametrize("source,watch,uses", [
    ("import numpy as np\ndef f(a):\n    return np.linalg.inv(a)", "numpy.linalg.inv", True),
    ("from scipy.stats import entropy as H\ndef f(p):\n    return H(p)", "scipy.stats.entropy",
     True),
    ("from scipy import stats\ndef f(p):\n    return stats.entropy(p)", "scipy.stats.entropy",
     True),
    ("import scipy.stats\ndef f(p):\n    return scipy.stats.entropy(p)", "scipy.stats.entropy",
     True),
    ("def entropy(p):\n    return 0.0\nentropy([1])", "scipy.stats.entropy", False),
    ("# scipy.stats.entropy would do it\nx = 'scipy.stats.entropy'", "scipy.stats.entropy", False),
    ("import scipy.stats as ss\nss.norm.pdf(0)", "scipy.stats.entropy", False),
    ("%timeit -n1 1\n!ls\nfrom mlcourse_utils import mle", "mlcourse_utils", True),
    ("%%time\nimport mlcourse_utils.mle as m", "mlcourse_utils", True),
])
def test_scan_code_resolves_imports(source, watch, uses):
    """Names are followed through `import ... as`, `from ... import` and attribute chains (by
    hand: each source either reaches `watch` through its imports or does not)."""
    scan = names.scan_code(source, [watch])
    assert scan.parsed
    assert scan.uses == ([watch] if uses else [])


def test_scan_code_judges_long_or_broken_cells_by_their_text():
    """A cell beyond MAX_PARSED_CELL characters, or not Python, is judged by its text."""
    long = "x = [" + "1," * names.MAX_PARSED_CELL + "]\n# mlcourse_utils.mle\n"
    scan = names.scan_code(long)
    assert not scan.parsed and "longer than" in scan.reason and scan.uses == ["mlcourse_utils"]
    broken = names.scan_code("def f(:\n    from mlcourse_utils import mle")
    assert not broken.parsed and broken.uses == ["mlcourse_utils"]
    assert names.scan_code("def f(:\n    return 1").uses == []


def test_scan_code_notes_tampering_and_no_false_alarm_on_long_text():
    """The tamper patterns find what they name, and stay silent on the long near-misses that
    used to make them quadratic (no `] =` after `sys.modules[`, blank lines, no `=`)."""
    assert names.scan_code("import sys\nsys.modules['numpy'] = None").tamper == [
        "replaces modules in sys.modules"]
    assert names.scan_code("import builtins\nbuiltins.abs = max").tamper == [
        "replaces built-in functions"]
    assert names.scan_code("np.testing.assert_allclose = print").tamper == [
        "monkeypatches numpy"]
    assert names.scan_code("sys.modules[" * 20_000).tamper == []
    assert names.scan_code(" \n" * 50_000 + "$").tamper == []
    assert names.scan_code("builtins." + "a" * 100_000).tamper == []
