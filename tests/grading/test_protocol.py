"""The messages between grader and sandbox (grading/protocol.py): the plain-data codec and its
limits on hostile replies.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from mlcourse_utils.grading.protocol import (
    MAX_ELEMENTS,
    decode,
    encode,
    parse_reply,
)


def test_codec_round_trip_of_plain_data():
    value = (1, 2.5, -np.inf, "ham", None, True, [np.arange(6).reshape(2, 3)],
             {"k": np.array(["a", "bb"])}, np.array(3.0))
    back = decode(json.loads(json.dumps(encode(value))))
    assert isinstance(back, tuple) and len(back) == len(value)
    assert back[:6] == (1, 2.5, -np.inf, "ham", None, True)
    np.testing.assert_array_equal(back[6][0], value[6][0])
    assert back[6][0].dtype == np.int64
    np.testing.assert_array_equal(back[7]["k"], ["a", "bb"])
    assert back[8].shape == () and back[8] == 3.0


@pytest.mark.parametrize("payload", [
    {"$a": "AAAA", "dtype": "|O", "shape": [1]},                  # object arrays
    {"$a": "AAAAAAAAAAA=", "dtype": "<f8", "shape": [2]},         # data does not fit the shape
    {"$a": "AAAAAAAAAAA=", "dtype": "<f8", "shape": [-1]},        # negative shape
    {"$a": "AAAAAAAAAAA=", "dtype": "<f8", "shape": [1], "x": 1},  # unknown key
    {"__class__": "os.system"},
    {"$f": "1e400"},
])
def test_decode_rejects_anything_but_plain_data(payload):
    with pytest.raises((ValueError, TypeError)):
        decode(payload)


def test_parse_reply_refuses_swelling_and_deep_replies():
    with pytest.raises(ValueError, match="lists and dicts"):
        parse_reply(b'{"value": [' + b"[]," * MAX_ELEMENTS + b"[]]}")
    with pytest.raises(ValueError):
        parse_reply(b"[" * 50_000 + b"]" * 50_000)
    with pytest.raises(ValueError, match="not an object"):
        parse_reply(b"[1, 2]")
    assert parse_reply(b'{"ok": true}') == {"ok": True}


def test_decode_cleans_strings_and_counts_elements():
    assert decode("bad \ud800").encode("utf-8")
    arr = decode(encode(np.array(["a", "b\x01c"])))
    assert list(arr) == ["a", "b\\x01c"]
    with pytest.raises(ValueError, match="elements"):
        decode([[] for _ in range(MAX_ELEMENTS + 1)])
    overflow = {"$a": "", "dtype": "<f8", "shape": [2**32, 2**32]}  # wraps to 0 in int64
    with pytest.raises(ValueError, match="shape"):
        decode(overflow)


# Text without control characters and lone surrogates (decode cleans those: see above).
_text = st.text(st.characters(blacklist_categories=("Cc", "Cs")), max_size=20)


_scalars = st.one_of(st.none(), st.booleans(), st.integers(-2**62, 2**62),
                     st.floats(allow_nan=False), _text)


_arrays = hnp.arrays(dtype=st.sampled_from([np.float64, np.int64, np.bool_, np.float32]),
                     shape=hnp.array_shapes(min_dims=0, max_dims=3, max_side=4))


_values = st.recursive(
    st.one_of(_scalars, _arrays),
    lambda children: st.one_of(st.lists(children, max_size=4),
                               st.lists(children, max_size=4).map(tuple),
                               st.dictionaries(_text, children, max_size=3)),
    max_leaves=12)


def _same(a, b):
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.dtype == b.dtype and a.shape == b.shape and \
            np.array_equal(a, b, equal_nan=True)
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return a == b and type(a) is type(b)


@settings(max_examples=200, deadline=None)
@given(_values)
def test_codec_round_trips_plain_data(value):
    """What the grader sends arrives as the same plain data (types, dtypes and shapes kept)."""
    back = decode(json.loads(json.dumps(encode(value))))
    assert _same(value, back)
