"""The agent record: unknown stays None, cached tokens are never counted twice."""

from __future__ import annotations

import dataclasses
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from campaign.agents.record import (
    ERROR_CLASSES,
    AgentRecord,
    TurnUsage,
    record_to_json,
    turn_usage_matched,
    uncached_input,
    unknown_record,
    with_error,
)


def test_unknown_record_has_no_counters():
    r = unknown_record("unparseable_output")
    assert r.error_class == "unparseable_output"
    for field in dataclasses.fields(AgentRecord):
        if field.name not in ("error_class", "cost_reported", "synthetic"):
            assert getattr(r, field.name) is None, field.name
    assert r.cost_reported is False and r.synthetic is False


def test_record_is_frozen_and_validates():
    r = AgentRecord(output_tokens=3)
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.output_tokens = 4  # type: ignore[misc]
    with pytest.raises(ValueError):
        AgentRecord(output_tokens=-1)
    with pytest.raises(ValueError):
        AgentRecord(tool_calls=True)  # a bool is not a counter
    with pytest.raises(ValueError):
        AgentRecord(cost_usd=float("nan"))
    with pytest.raises(ValueError):
        AgentRecord(error_class="Traceback: boom")  # type: ignore[arg-type]


def test_error_vocabulary_is_bounded():
    assert ERROR_CLASSES == {"unparseable_output", "empty_output", "agent_error", "max_turns", "permission_denied"}


def test_with_error_keeps_the_more_specific_class():
    assert with_error(AgentRecord(error_class="max_turns"), "agent_error").error_class == "max_turns"
    assert with_error(AgentRecord(), "agent_error").error_class == "agent_error"
    assert with_error(AgentRecord(), None).error_class is None


@given(st.integers(0, 10**9), st.integers(0, 10**9))
def test_uncached_never_double_counts(a, b):
    total, cached = max(a, b), min(a, b)
    assert uncached_input(total, cached, input_includes_cached=True) + cached == total
    assert uncached_input(total, cached, input_includes_cached=False) == total


def test_uncached_unknown_when_it_cannot_be_derived():
    assert uncached_input(None, 5, input_includes_cached=True) is None
    assert uncached_input(100, None, input_includes_cached=True) is None
    assert uncached_input(100, 101, input_includes_cached=True) is None  # inconsistent figures


def matched_record(**changes) -> AgentRecord:
    base = AgentRecord(
        completed_turns=2,
        nested_sessions_observed=False,
        turn_usage=(TurnUsage("r1", "u1", 10, 2, 0), TurnUsage("r2", "u2", 5, 1, 10)),
    )
    return dataclasses.replace(base, **changes)


def test_turn_usage_matched_requires_one_to_one_numeric_turns():
    assert turn_usage_matched(matched_record())
    assert not turn_usage_matched(matched_record(completed_turns=3))  # a turn without usage
    assert not turn_usage_matched(matched_record(nested_sessions_observed=None))  # unobservable
    assert not turn_usage_matched(matched_record(nested_sessions_observed=True))
    assert not turn_usage_matched(matched_record(turn_usage=None))
    retry = (TurnUsage("r1", "u1", 10, 2, 0), TurnUsage("r1", "u2", 5, 1, 10))
    assert not turn_usage_matched(matched_record(turn_usage=retry))  # unmatched retry
    no_cache = (TurnUsage("r1", "u1", 10, 2, None), TurnUsage("r2", "u2", 5, 1, 10))
    assert not turn_usage_matched(matched_record(turn_usage=no_cache))


def test_turn_usage_matched_rejects_an_empty_observation():
    # No turn observed proves nothing about spend (spec: empty observations stay incomplete).
    assert not turn_usage_matched(matched_record(completed_turns=0, turn_usage=()))


def test_record_to_json_is_plain():
    data = record_to_json(matched_record(applied_profiles=("coding",)))
    assert data["turn_usage"][0] == {
        "request_id": "r1", "usage_id": "u1", "input_tokens": 10, "output_tokens": 2, "cache_read_tokens": 0,
    }
    assert data["applied_profiles"] == ["coding"]
    assert json.loads(json.dumps(data)) == data
