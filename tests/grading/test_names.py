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


@pytest.mark.parametrize("source", [
    "from numpy import *\ndef f(X):\n    cov = X.T @ X / len(X)\n    return cov",   # a local
    "from numpy import *\ndef f(cov):\n    return cov + 1",                          # an argument
    "from scipy.stats import *\nentropy = 0.5\nprint(entropy)",                      # a variable
    "from scipy.stats import *\ndef f(p):\n    norm = sum(p)\n    return [x / norm for x in p]",
    "from scipy.stats import *\nf = lambda norm: norm * 2",
    "from scipy.stats import *\nsquares = [norm ** 2 for norm in range(3)]",
    "from scipy.stats import *\ndef norm(x):\n    return abs(x)\nnorm(-1)",          # its own
])
def test_a_star_import_does_not_make_a_local_name_a_use(source):
    """A name the code binds itself (a local variable, an argument, a comprehension's variable,
    a function of its own) is not the star-imported function of that name; an unbound one is."""
    watch = ["numpy.cov", "scipy.stats.entropy", "scipy.stats.norm"]
    assert names.scan_code(source, watch).uses == []
    free = source.split("\n", 1)[0] + "\ndef g(x):\n    return cov(x) + entropy(x) + norm.pdf(x)"
    assert names.scan_code(free, watch).uses == [
        w for w in watch if w.startswith(free.split()[1])]


def test_a_variable_bound_in_another_cell_hides_a_star_import():
    """Cells share one namespace: a variable another cell binds is not the star import's."""
    watch = ["scipy.stats.entropy"]
    use = "def f(p):\n    return entropy * 2"
    aliases, star = names.notebook_bindings(["from scipy.stats import *", "entropy = 3.0"])
    assert names.scan_code(use, watch, aliases, star).uses == []
    aliases, star = names.notebook_bindings(["from scipy.stats import *"])
    assert names.scan_code(use, watch, aliases, star).uses == watch
