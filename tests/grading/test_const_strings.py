"""Constant strings folded from syntax (grading/const_strings.py), as the scan of student code
reads names spelled through them; each expected value is the expression evaluated by hand.
"""

from __future__ import annotations

import ast

import pytest

from mlcourse_utils.grading.const_strings import const_str


def _folded(expression):
    return const_str(ast.parse(expression, mode="eval").body)


@pytest.mark.parametrize("expression,value", [
    ("'ex' + 'pit'", "expit"),
    ("'ab' * 2", "abab"),
    ("2 * 'ab'", "abab"),
    ("'tipxe'[::-1]", "expit"),
    ("'xexpit'[1:]", "expit"),
    ("'expitx'[:-1]", "expit"),
    ("''.join(['ex', 'pit'])", "expit"),
    ("'.'.join(('scipy', 'special'))", "scipy.special"),
    ("f'{\"ex\"}pit'", "expit"),
    ("'EXPIT'.lower()", "expit"),
    ("' expit '.strip()", "expit"),
])
def test_a_string_made_of_constants_is_folded(expression, value):
    assert _folded(expression) == value


@pytest.mark.parametrize("expression", [
    "name + 'pit'",             # a run-time value
    "'ab' * n",
    "'abc'[::0]",               # a slice Python itself refuses
    "f'{\"ex\":>5}pit'",        # a format spec
    "'x'.join(['a', b])",
    "'ab'.replace('a', 'b')",   # a method not folded
    "1 + 2",                    # not a string
    "'a' * 501",                # longer than the 500 characters folded
    "'a' * 300 + 'b' * 300",
])
def test_anything_else_is_none(expression):
    assert _folded(expression) is None
