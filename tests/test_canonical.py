"""The two canonical texts are pinned byte for byte: every stored digest depends on them."""

from __future__ import annotations

import math

import pytest

from campaign import canonical

# Keys out of order, nesting, non-ASCII from three scripts and an astral emoji, a line
# separator, a negative zero: the cases where two JSON encoders most often disagree.
VALUE = {"b": [1, 2.5, None, True], "a": "naïve 日本 🙂", "c": {"z": "\u2028", "y": -0.0}}

SPEC_TEXT = '{"a":"na\\u00efve \\u65e5\\u672c \\ud83d\\ude42","b":[1,2.5,null,true],"c":{"y":-0.0,"z":"\\u2028"}}'
WIRE_TEXT = '{"a":"naïve 日本 🙂","b":[1,2.5,null,true],"c":{"y":-0.0,"z":"\u2028"}}'


def test_the_spec_form_is_pinned_byte_for_byte():
    assert canonical.spec_json(VALUE) == SPEC_TEXT
    assert canonical.spec_json(VALUE).isascii()
    assert canonical.spec_digest(VALUE) == "cbb7affe0745d3f01b1f0a7b0f5285748180a87a29e1659927b6635ab0c8e109"


def test_the_wire_form_is_pinned_byte_for_byte():
    assert canonical.wire_json(VALUE) == WIRE_TEXT
    assert canonical.text_sha256(canonical.wire_json(VALUE)) == "a319f0dca06a4a3dfc7bf4f8133237432e1bfc174f47e57f5f69046ca3787975"


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_the_spec_form_refuses_what_json_cannot_say(bad):
    with pytest.raises(ValueError, match="JSON compliant"):
        canonical.spec_json({"max_spend_usd": bad})
