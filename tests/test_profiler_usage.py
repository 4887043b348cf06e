"""What a stream's end says about its usage: a Responses answer cut short by the
request's own limit is whole and billed, a failed one keeps what it reports as partial;
a stream that contradicts itself about its usage is never complete (found by an
adversarial audit: a second, smaller usage event replaced the real one)."""

from __future__ import annotations

import json

from campaign.profiler import faults, proxy, usage, wire

USAGE = {"input_tokens": 5000, "input_tokens_details": {"cached_tokens": 1200}, "output_tokens": 4096, "total_tokens": 9096}


def _stream(*events: dict) -> usage.UsageObservation:
    observer = usage.StreamObserver("responses")
    observer.feed(b'event: response.created\ndata: {"type": "response.created", "response": {"id": "resp_1", "status": "in_progress", "usage": null}}\n\n')
    for event in events:
        observer.feed(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode())
    return observer.finish()


def _record(observed: usage.UsageObservation) -> dict:
    """The capture line the proxy writes for it, a 200."""
    summary = wire.summarize_request("/v1/responses", json.dumps({"model": "gpt-5-codex", "input": "hi", "stream": True}).encode())
    return proxy.model_record(1, summary, None, 200, observed)


def test_an_answer_cut_at_max_output_tokens_is_whole_billed_usage_and_no_fault():
    observed = _stream(
        {"type": "response.output_text.delta", "delta": "def f():"},
        {"type": "response.incomplete", "response": {"id": "resp_1", "status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"}, "usage": USAGE}},
    )
    assert (observed.uncached_input, observed.cached_input, observed.output) == (3800, 1200, 4096)
    assert observed.complete and observed.error_event is None
    assert faults.billing(_record(observed)) == "complete" and faults.request_fault(_record(observed)) is None


def test_a_failed_response_keeps_the_usage_it_reports_as_partial():
    failed = {"id": "resp_1", "status": "failed", "error": {"code": "server_error", "message": "The model failed"}, "usage": USAGE}
    observed = _stream({"type": "response.failed", "response": failed})
    assert (observed.uncached_input, observed.output) == (3800, 4096)
    assert not observed.complete and observed.error_event == "server_error"
    assert faults.billing(_record(observed)) == "partial" and faults.request_fault(_record(observed)) == "http_5xx"


def test_a_failed_response_without_usage_reads_none_never_zero():
    observed = _stream({"type": "response.failed", "response": {"id": "resp_1", "status": "failed", "error": {"code": "rate_limit_exceeded"}, "usage": None}})
    assert not observed.has_usage and observed.uncached_input is None and observed.error_event == "rate_limited"


def test_a_stream_that_ends_without_its_terminal_event_has_no_usage():
    observed = _stream({"type": "response.output_text.delta", "delta": "def f():"})
    assert not observed.has_usage and not observed.complete


# --- a stream that contradicts itself about its usage: never complete, the larger figure kept


def _observe(fmt: str, *payloads: object) -> usage.UsageObservation:
    observer = usage.StreamObserver(fmt)
    for payload in payloads:
        data = payload if isinstance(payload, str) else json.dumps(payload)
        observer.feed(f"data: {data}\n\n".encode())
    return observer.finish()


COMPLETED = {"type": "response.completed", "response": {"id": "resp_1", "status": "completed", "usage": USAGE}}
SMALL = {"input_tokens": 1, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 1}


def test_a_second_completed_with_smaller_usage_is_a_conflict_and_the_first_figures_stand():
    observed = _observe("responses", COMPLETED, {"type": "response.completed", "response": {"id": "resp_1", "usage": SMALL}})
    assert observed.usage_conflict and not observed.complete
    assert (observed.uncached_input, observed.cached_input, observed.output) == (3800, 1200, 4096)
    assert faults.billing(_record(observed)) == "partial" and faults.request_fault(_record(observed)) is None  # no provider fault


def test_a_repeated_identical_completed_keeps_its_figures_but_proves_nothing():
    observed = _observe("responses", COMPLETED, COMPLETED)
    assert observed.usage_conflict  # a second end of one response is still a contradiction
    assert (observed.uncached_input, observed.output) == (3800, 4096)


def test_a_second_response_in_one_stream_is_a_conflict():
    other = {"type": "response.completed", "response": {"id": "resp_2", "usage": USAGE}}
    observed = _observe("responses", {"type": "response.created", "response": {"id": "resp_1"}}, other)
    assert observed.usage_conflict and observed.response_id == "resp_1"


CHAT_USAGE = {"prompt_tokens": 5000, "completion_tokens": 800, "prompt_tokens_details": {"cached_tokens": 1000}}


def _chunk(content: str | None = None, usage_: dict | None = None) -> dict:
    choices = [] if content is None else [{"index": 0, "delta": {"content": content}, "finish_reason": None}]
    return {"id": "chatcmpl-1", "choices": choices, "usage": usage_}


def test_chat_usage_then_more_output_is_not_the_final_usage():
    observed = _observe("chat", _chunk("a"), _chunk(None, CHAT_USAGE), _chunk("more text"), "[DONE]")
    assert not observed.terminal and not observed.complete and observed.clean_end


def test_chat_usage_repeated_in_every_chunk_is_cumulative_and_complete():
    grown = {**CHAT_USAGE, "completion_tokens": 900}
    observed = _observe("chat", {**_chunk("a"), "usage": CHAT_USAGE}, {**_chunk("b"), "usage": grown}, "[DONE]")
    assert observed.complete and observed.output == 900 and not observed.usage_conflict


def test_chat_usage_after_done_or_going_down_is_a_conflict():
    after_done = _observe("chat", _chunk("a"), _chunk(None, CHAT_USAGE), "[DONE]", _chunk(None, {**CHAT_USAGE, "completion_tokens": 1}))
    assert after_done.usage_conflict and not after_done.complete and after_done.output == 800
    shrunk = _observe("chat", _chunk(None, CHAT_USAGE), _chunk(None, {**CHAT_USAGE, "prompt_tokens": 1100}), "[DONE]")
    assert shrunk.usage_conflict and shrunk.uncached_input == 4000


def _anthropic(*events: dict) -> usage.UsageObservation:
    return _observe("anthropic", *events)


START = {"type": "message_start", "message": {"id": "msg_1", "usage": {"input_tokens": 5000, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0, "output_tokens": 1}}}
STOP = {"type": "message_stop"}


def test_anthropic_a_delta_that_lowers_a_count_or_a_second_message_is_a_conflict():
    healthy = _anthropic(START, {"type": "message_delta", "usage": {"output_tokens": 800}}, STOP)
    assert healthy.complete and (healthy.uncached_input, healthy.output) == (5000, 800)
    lowered = _anthropic(START, {"type": "message_delta", "usage": {"input_tokens": 0, "output_tokens": 800}}, STOP)
    assert lowered.usage_conflict and not lowered.complete and lowered.uncached_input == 5000
    second_start = {"type": "message_start", "message": {"id": "msg_2", "usage": {"input_tokens": 1, "cache_read_input_tokens": 0, "output_tokens": 1}}}
    twice = _anthropic(START, {"type": "message_delta", "usage": {"output_tokens": 800}}, second_start, STOP)
    assert twice.usage_conflict and not twice.complete and (twice.response_id, twice.uncached_input, twice.output) == ("msg_1", 5000, 800)
    after_stop = _anthropic(START, {"type": "message_delta", "usage": {"output_tokens": 800}}, STOP, {"type": "message_delta", "usage": {"output_tokens": 1}})
    assert after_stop.usage_conflict and after_stop.output == 800


def test_gemini_more_answer_after_the_finishing_chunk_is_a_conflict():
    def chunk(text: str, finish: str | None, meta: dict) -> dict:
        candidate = {"content": {"parts": [{"text": text}]}, **({"finishReason": finish} if finish else {})}
        return {"responseId": "g1", "candidates": [candidate], "usageMetadata": meta}

    healthy = _observe("gemini", chunk("a", None, {"promptTokenCount": 5000, "candidatesTokenCount": 1}), chunk("b", "STOP", {"promptTokenCount": 5000, "candidatesTokenCount": 800}))
    assert healthy.complete and healthy.output == 800
    more = _observe("gemini", chunk("a", "STOP", {"promptTokenCount": 5000, "candidatesTokenCount": 1}), chunk("x" * 1000, None, {"promptTokenCount": 5000, "candidatesTokenCount": 1}))
    assert more.usage_conflict and not more.complete


# --- Gemini: what a server-side tool fed the model is input it billed


def test_gemini_tool_use_prompt_tokens_are_uncached_input():
    meta = {"promptTokenCount": 5000, "cachedContentTokenCount": 1000, "toolUsePromptTokenCount": 700, "candidatesTokenCount": 300, "thoughtsTokenCount": 50, "totalTokenCount": 6050}
    answer = {"responseId": "g1", "candidates": [{"content": {"parts": [{"text": "ok"}]}, "finishReason": "STOP"}], "usageMetadata": meta}
    for observed in (usage.observe_json("gemini", json.dumps(answer).encode()), _observe("gemini", answer)):
        assert (observed.uncached_input, observed.cached_input, observed.output) == (4700, 1000, 350)
        assert observed.complete
    # The sum the API reports is what the counters add up to: nothing billed was left out.
    assert observed.uncached_input + observed.cached_input + observed.output == meta["totalTokenCount"]


def test_gemini_tool_use_prompt_count_that_is_not_a_count_makes_the_input_unknown():
    meta = {"promptTokenCount": 5000, "toolUsePromptTokenCount": "700", "candidatesTokenCount": 300}
    answer = {"responseId": "g1", "candidates": [{"content": {"parts": [{"text": "ok"}]}, "finishReason": "STOP"}], "usageMetadata": meta}
    observed = usage.observe_json("gemini", json.dumps(answer).encode())
    assert observed.uncached_input is None and observed.output == 300 and not observed.complete


def test_a_gemini_total_that_does_not_match_its_parts_is_a_conflict():
    meta = {"promptTokenCount": 5000, "candidatesTokenCount": 300, "thoughtsTokenCount": 50, "totalTokenCount": 5350}
    answer = {"responseId": "g1", "candidates": [{"content": {"parts": [{"text": "ok"}]}, "finishReason": "STOP"}], "usageMetadata": meta}
    assert usage.observe_json("gemini", json.dumps(answer).encode()).complete
    for total in (9999, "5350", None):
        wrong = {**answer, "usageMetadata": {**meta, "totalTokenCount": total}}
        for observed in (usage.observe_json("gemini", json.dumps(wrong).encode()), _observe("gemini", wrong)):
            assert observed.usage_conflict and not observed.complete, total


# --- Anthropic's 1-hour cache writes: counted apart where the response breaks them down


def test_an_anthropic_response_says_how_many_cache_writes_went_to_the_1_hour_cache():
    body = {"id": "msg_1", "usage": {"input_tokens": 10, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 3000,
                                     "cache_creation": {"ephemeral_5m_input_tokens": 1000, "ephemeral_1h_input_tokens": 2000}, "output_tokens": 5}}  # fmt: skip
    observed = usage.observe_json("anthropic", json.dumps(body).encode())
    assert (observed.cache_write, observed.cache_write_1h) == (3000, 2000)
    streamed = _observe(
        "anthropic",
        {"type": "message_start", "message": {"id": "msg_1", "usage": body["usage"] | {"output_tokens": 1}}},
        {"type": "message_delta", "usage": {"output_tokens": 5}},
        {"type": "message_stop"},
    )
    assert (streamed.cache_write, streamed.cache_write_1h, streamed.complete) == (3000, 2000, True)
    summary = wire.summarize_request("/v1/messages", json.dumps({"model": "m", "messages": []}).encode())
    assert proxy.model_record(1, summary, None, 200, observed)["usage"]["cache_write_1h"] == 2000
    # No breakdown: nothing is said about the 1-hour cache, and the capture line is as before.
    plain = usage.observe_json("anthropic", json.dumps({"id": "msg_2", "usage": {"input_tokens": 1, "cache_creation_input_tokens": 7, "output_tokens": 1}}).encode())
    assert plain.cache_write_1h is None and "cache_write_1h" not in proxy.model_record(2, summary, None, 200, plain)["usage"]
