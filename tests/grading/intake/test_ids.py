"""The id an LMS download's user is graded under (grading/intake/ids.py); collect's tests
(test_collect) cover the roster, refusals and collisions through a whole download. Expected ids
are written by hand from the rules in the docstrings.
"""

from __future__ import annotations

import unicodedata
from types import SimpleNamespace

import pytest

from mlcourse_utils.grading.intake import ids
from mlcourse_utils.grading.text import fold


def test_an_lms_name_becomes_a_clean_composed_id_usable_as_a_file_name():
    decomposed = "  Zoe\u0301 /x\\y "          # e + combining acute, slashes, spaces around
    sid = ids.lms_id(decomposed, "7", "lms")
    assert sid == "Zo\u00e9 _x_y"
    assert unicodedata.is_normalized("NFC", sid)


@pytest.mark.parametrize("name", ["", "   ", ".", ".."])
def test_a_name_that_cannot_be_an_id_gives_the_user_s_number(name):
    assert ids.lms_id(name, "7", "lms") == "lms-user-7"


def test_a_free_id_differs_after_folding_from_every_id_taken_and_is_then_taken():
    taken = {"ann"}
    assert ids.free_id("Ann", taken) == "Ann~"
    assert ids.free_id("ANN", taken) == "ANN~~"
    assert ids.free_id("bob", taken) == "bob"
    assert taken == {"ann", "ann~", "ann~~", "bob"}
    assert all(fold(s) == s for s in taken)


def test_without_a_roster_each_user_wants_their_lms_name():
    by_user = {"12": [(None, SimpleNamespace(name="Ann Lee"))],
               "3": [(None, SimpleNamespace(name=".."))]}
    wanted, students, why_not = ids.wanted_ids(by_user, ["3", "12"], "lms", None)
    assert wanted == {"12": "Ann Lee", "3": "lms-user-3"}
    assert students == {} and why_not == {}
