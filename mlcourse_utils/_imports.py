"""Faster start-up of the command-line tools: a slow optional import is skipped.

jsonschema (imported by nbformat, nbgrader and Jupyter Book) imports the optional package
``rfc3987_syntax`` when it is installed, and that import compiles 39 lark grammars: about 3 s
on this course's 2-core machines, in every process that reads a notebook. The tools never
validate the IRI formats it provides, and jsonschema works without it (it guards the import
with ``except ImportError``), so our own processes skip it.
"""

from __future__ import annotations

import sys


def skip_slow_optional_imports() -> None:
    """Make ``import rfc3987_syntax`` fail fast in this process (call before importing nbformat)."""
    sys.modules.setdefault("rfc3987_syntax", None)
