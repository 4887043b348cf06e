"""Generated cleaners and checkers of the report's objects (campaign.report.codegen)."""

from __future__ import annotations

import pytest

from campaign.report import allowlist as A
from campaign.report.codegen import Obj

SECTION = Obj({"kept": A.Int(), "grown": A.List(A.Int(), max_items=2)}, optional=frozenset({"grown"}))


def test_an_optional_key_the_value_lacks_stays_out_and_one_it_has_is_cleaned():
    assert A.sanitize({"kept": 1}, SECTION)[0] == {"kept": 1}
    assert A.sanitize({}, SECTION)[0] == {"kept": None}  # a required key is still made null
    assert A.sanitize({"kept": 1, "grown": [1, 2]}, SECTION)[0] == {"kept": 1, "grown": [1, 2]}
    assert A.sanitize({"kept": 1, "grown": None}, SECTION)[0] == {"kept": 1, "grown": None}
    clean, changed = A.sanitize({"kept": 1, "grown": ["x"], "other": 3}, SECTION)
    assert clean == {"kept": 1, "grown": [None]} and changed.as_dict()["dropped_keys"] == 1


def test_the_fixed_point_check_takes_an_absent_optional_key_and_no_absent_required_one():
    assert A.is_allowlisted({"kept": 1}, SECTION)
    assert A.is_allowlisted({"kept": 1, "grown": [2]}, SECTION)
    assert not A.is_allowlisted({"grown": [2]}, SECTION)
    assert not A.is_allowlisted({"kept": 1, "grown": ["x"]}, SECTION)
    assert not A.is_allowlisted({"kept": 1, "other": 2}, SECTION)


def test_optional_keys_are_fields_and_never_in_database_rows():
    with pytest.raises(ValueError, match="not fields"):
        Obj({"kept": A.Int()}, optional=frozenset({"missing"}))
    with pytest.raises(ValueError, match="every column"):
        SECTION.compile_rows(["kept", "grown"])


def test_an_optional_key_between_others_keeps_its_place():
    # Reports are written unsorted: a key's place is part of the bytes a pinned report keeps.
    middle = Obj({"first": A.Int(), "grown": A.Int(), "last": A.Int()}, optional=frozenset({"grown"}))
    clean = middle.compile()
    assert list(clean({"last": 3, "grown": 2, "first": 1}, A.Stats())) == ["first", "grown", "last"]
    assert list(clean({"last": 3, "first": 1}, A.Stats())) == ["first", "last"]
