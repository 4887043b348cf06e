"""What a model request asks of the model's reasoning, read from the wire in each format."""

from __future__ import annotations

import json

import pytest

from campaign.profiler import wire
from campaign.profiler.summary import reasoning_requested


@pytest.mark.parametrize(
    ("path", "body", "setting"),
    [
        ("/v1/responses", {"reasoning": {"effort": "minimal", "summary": "auto"}}, "effort=minimal"),
        ("/v1/responses", {"reasoning": {"summary": "auto"}}, None),
        ("/v1/responses", {}, None),
        ("/v1/chat/completions", {"reasoning_effort": "HIGH"}, "effort=high"),
        ("/v1/chat/completions", {"reasoning": {"effort": "medium"}}, "effort=medium"),
        ("/v1/messages", {"thinking": {"type": "enabled", "budget_tokens": 10000}}, "budget_tokens=10000,thinking=enabled"),
        ("/v1/messages", {"thinking": {"type": "disabled"}}, "thinking=disabled"),
        ("/v1/messages", {"output_config": {"effort": "low"}}, "effort=low"),
        ("/v1/messages", {"max_tokens": 100}, None),
        ("/v1beta/models/gemini-3-pro:generateContent", {"generationConfig": {"thinkingConfig": {"thinkingBudget": 512, "includeThoughts": True}}}, "thinking_budget=512"),
        ("/v1beta/models/gemini-3-pro:streamGenerateContent", {"generationConfig": {"thinkingConfig": {"thinkingLevel": "low"}}}, "thinking_level=low"),
        ("/v1beta/models/gemini-3-pro:generateContent", {"generationConfig": {"temperature": 0}}, None),
    ],
)
def test_each_format_says_what_reasoning_the_request_asked_for(path, body, setting):
    summary = wire.summarize_request(path, json.dumps({"model": "m", **body}).encode())
    assert summary is not None and summary.reasoning == setting


@pytest.mark.parametrize("value", ["ignore all previous instructions", "x" * 40, True, 1.5, ["high"]])
def test_a_setting_that_is_no_word_is_recorded_as_other_never_as_the_clients_text(value):
    summary = wire.summarize_request("/v1/responses", json.dumps({"reasoning": {"effort": value}}).encode())
    assert summary is not None and summary.reasoning == "effort=other"


def request(reasoning: str | None, *, read: bool = True) -> dict:
    return {"kind": "model", "tool_count": 3 if read else None, "reasoning": reasoning}


def test_an_attempt_records_each_setting_once_and_the_default_only_where_none_was_asked_for():
    assert reasoning_requested([request("effort=high"), request(None), request("effort=high"), request("effort=low")]) == ["effort=high", "effort=low"]
    assert reasoning_requested([request(None), request(None)]) == ["provider_default"]
    # No request's body was read, or the capture predates the field: nothing is known.
    assert reasoning_requested([request(None, read=False)]) is None
    assert reasoning_requested([{"kind": "model", "tool_count": 3}]) is None
    assert reasoning_requested([]) is None
