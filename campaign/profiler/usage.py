"""What a model response shows on the wire: its id, its usage and how it ended.

The request side, and what each of the four formats reports, is in ``wire``.
A response is reduced to counters and end markers; nothing of its text is kept.

Every format's usage figures are cumulative, and a stream carries one response
with one end. A stream that says otherwise (a count that goes down, a second
message or terminal event, anything after its end, more Gemini answer after its
finishing chunk) is a ``usage_conflict``, as is a total that does not match its parts
(Gemini's ``totalTokenCount``): the larger figures are kept and the
request's usage is never complete, since a client may have read either. Chat
output after the usage chunk makes that usage not the final one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from campaign.profiler.wire import MAX_PARSED_BODY, WireFormat


@dataclass(frozen=True)
class UsageObservation:
    response_id: str | None
    uncached_input: int | None
    cached_input: int | None
    cache_write: int | None
    output: int | None
    cache_read_observable: bool
    cache_write_observable: bool
    # The format's terminal usage was seen (final message_delta / usage chunk / response.completed).
    terminal: bool
    # The body or stream ended the way the format ends a complete response.
    clean_end: bool
    # An error event inside a 200 stream (Anthropic's overloaded_error mid-stream, an
    # OpenAI error chunk or response.failed), as one of ERROR_EVENTS; None without one.
    error_event: str | None = None
    # The stream contradicted itself about its usage: a count that went down, a second
    # message or terminal response, events after its end. The larger figures are kept.
    usage_conflict: bool = False
    # Of cache_write, the tokens written to Anthropic's 1-hour cache (priced apart from the
    # 5-minute writes); None where the response gave no breakdown.
    cache_write_1h: int | None = None

    @property
    def has_usage(self) -> bool:
        """Some usage figure was seen, terminal or not (a cut stream's message_start)."""
        return any(v is not None for v in (self.uncached_input, self.cached_input, self.cache_write, self.output))

    @property
    def complete(self) -> bool:
        """Usage proven for this request: terminal, clean, uncontradicted and every billed counter numeric."""
        counters = (self.uncached_input, self.output, self.cached_input)
        return self.terminal and self.clean_end and not self.usage_conflict and self.response_id is not None and None not in counters


# What a provider's error says, reduced to the words the fault classes need: an error
# event inside a 200 stream, a 200 whose JSON body is an error and no answer, or the
# body of an HTTP error response (where only ``billing`` changes whose fault it is).
ERROR_EVENTS = ("overloaded", "rate_limited", "server_error", "billing", "other")
# How providers word a refusal for money, not for the request: Anthropic's "Your credit
# balance is too low" (a 400 invalid_request_error), OpenAI's insufficient_quota (a 429),
# OpenRouter's "Insufficient credits" (402), DeepSeek's "Insufficient Balance" (402).
_BILLING_WORDS = ("credit balance", "insufficient credit", "insufficient_quota", "insufficient balance", "insufficient funds", "payment required", "billing_error", "exceeded your current quota")


def _error_event(error: Any) -> str:
    fields = ("type", "code", "status") if isinstance(error, dict) else ()
    text = " ".join(str(error.get(f)) for f in fields).lower()  # Gemini: {"code": 429, "status": "RESOURCE_EXHAUSTED"}
    message = str(error.get("message")).lower() if isinstance(error, dict) else ""
    # OpenRouter puts the upstream's HTTP status in a numeric code: {"code": 502, "message": "Provider returned error"}.
    code = error.get("code") if isinstance(error, dict) else None
    code = code if isinstance(code, int) and not isinstance(code, bool) else None
    if code == 402 or any(w in text or w in message for w in _BILLING_WORDS):
        return "billing"
    if "overloaded" in text or "unavailable" in text or code == 529:
        return "overloaded"
    if "rate_limit" in text or "resource_exhausted" in text or code == 429:
        return "rate_limited"
    if "server_error" in text or "api_error" in text or "internal" in text or (code is not None and (code == 408 or 500 <= code <= 599)):
        return "server_error"
    return "other"


def _body_error(data: dict[str, Any]) -> str | None:
    """The error a JSON body carries instead of an answer (Anthropic's ``{"type": "error"}``,
    the OpenAI and Gemini ``{"error": {...}}``), as one of ERROR_EVENTS; None for an answer."""
    if any(data.get(k) for k in ("choices", "content", "output", "candidates")):
        return None  # some answer came: an error beside it is not what the body is
    error = data.get("error")
    if isinstance(error, dict) or (data.get("type") == "error" and error is not None):
        return _error_event(error)
    return None


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


_CHAT_OUTPUT = ("content", "tool_calls", "reasoning_content", "reasoning", "refusal")


def _chat_output(choices: Any) -> bool:
    """Some chat choice's delta carries output (text, a tool call, reasoning)."""
    return isinstance(choices, list) and any(isinstance(c, dict) and isinstance(c.get("delta"), dict) and any(c["delta"].get(k) for k in _CHAT_OUTPUT) for c in choices)


def _gemini_output(candidates: Any) -> bool:
    """Some Gemini candidate carries a part (text, a function call)."""
    return isinstance(candidates, list) and any(isinstance(c, dict) and _dig(c, "content", "parts") for c in candidates)


def _dig(obj: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(key)
    return obj


def _anthropic_usage(usage: dict[str, Any]) -> dict[str, Any]:
    return {
        "uncached_input": _count(usage.get("input_tokens")),
        "cached_input": _count(usage.get("cache_read_input_tokens")),
        "cache_write": _count(usage.get("cache_creation_input_tokens")),
        "output": _count(usage.get("output_tokens")),
        "cache_read_observable": "cache_read_input_tokens" in usage,
        "cache_write_observable": "cache_creation_input_tokens" in usage,
        "cache_write_1h": _count(_dig(usage, "cache_creation", "ephemeral_1h_input_tokens")),
    }


def _openai_usage(usage: dict[str, Any], input_key: str, output_key: str, details_key: str) -> dict[str, Any]:
    total = _count(usage.get(input_key))
    details = usage.get(details_key)
    cached = _count(details.get("cached_tokens")) if isinstance(details, dict) else None
    uncached = None if total is None or cached is None or cached > total else total - cached
    return {
        "uncached_input": uncached,
        "cached_input": cached,
        "cache_write": None,
        "output": _count(usage.get(output_key)),
        "cache_read_observable": cached is not None,
        "cache_write_observable": False,
    }


def _gemini_usage(usage: dict[str, Any]) -> dict[str, Any]:
    # The API leaves a zero count out of usageMetadata: absent is 0, except the prompt.
    prompt = _count(usage.get("promptTokenCount"))
    cached = _count(usage.get("cachedContentTokenCount", 0))
    # What a server-side tool (search grounding, code execution) fed the model is counted
    # apart from the prompt and billed as input; left out, it was never priced.
    tool_prompt = _count(usage.get("toolUsePromptTokenCount", 0))
    candidates, thoughts = _count(usage.get("candidatesTokenCount", 0)), _count(usage.get("thoughtsTokenCount", 0))
    unknown_input = prompt is None or cached is None or tool_prompt is None or cached > prompt
    return {
        "uncached_input": None if unknown_input else prompt - cached + tool_prompt,
        "cached_input": cached,
        "cache_write": None,
        "output": None if candidates is None or thoughts is None else candidates + thoughts,
        "cache_read_observable": True,
        "cache_write_observable": False,
    }


# What Gemini's totalTokenCount is the sum of (cachedContentTokenCount is part of the prompt).
_GEMINI_PARTS = ("promptTokenCount", "candidatesTokenCount", "thoughtsTokenCount", "toolUsePromptTokenCount")


def _parts_disagree(fmt: WireFormat, usage: Any) -> bool:
    """A total that could be checked against its parts and does not match them (Gemini's
    totalTokenCount): a conflict, as a stream that contradicts itself is."""
    if fmt != "gemini" or not isinstance(usage, dict) or "totalTokenCount" not in usage:
        return False
    total = _count(usage.get("totalTokenCount"))
    parts = [_count(usage.get(key, 0)) for key in _GEMINI_PARTS]
    if None in parts:
        return False  # a part that is no count already makes the usage unknown
    return total is None or total != sum(parts)  # type: ignore[arg-type]


def _merged(old: dict[str, Any] | None, new: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """A later usage object over an earlier one: every format's figures are cumulative, so
    each count keeps the larger of the two, and (True) a count that went down is a conflict."""
    if old is None:
        return dict(new), False
    out, down = dict(old), False
    for key, value in new.items():
        before = old.get(key)
        if isinstance(value, dict) and isinstance(before, dict):
            out[key], nested = _merged(before, value)
            down = down or nested
        elif _count(value) is not None and _count(before) is not None and value < before:
            down = True  # out keeps the larger, earlier figure
        else:
            out[key] = value
    return out, down


def _usage_fields(fmt: WireFormat, usage: Any) -> dict[str, Any] | None:
    if not isinstance(usage, dict):
        return None
    if fmt == "anthropic":
        return _anthropic_usage(usage)
    if fmt == "gemini":
        return _gemini_usage(usage)
    if fmt == "chat":
        return _openai_usage(usage, "prompt_tokens", "completion_tokens", "prompt_tokens_details")
    return _openai_usage(usage, "input_tokens", "output_tokens", "input_tokens_details")


_NO_USAGE = {
    "uncached_input": None,
    "cached_input": None,
    "cache_write": None,
    "output": None,
    "cache_read_observable": False,
    "cache_write_observable": False,
}


def observe_json(fmt: WireFormat, body: bytes) -> UsageObservation:
    """A non-streamed response: the whole body is one JSON object."""
    try:
        data = json.loads(body)
    except ValueError:
        data = None
    if not isinstance(data, dict):
        return UsageObservation(None, **_NO_USAGE, terminal=False, clean_end=False)
    id_key, usage_key = ("responseId", "usageMetadata") if fmt == "gemini" else ("id", "usage")
    response_id = data.get(id_key) if isinstance(data.get(id_key), str) else None
    fields = _usage_fields(fmt, data.get(usage_key))
    error = _body_error(data)
    # An error body is whole JSON, but no complete response: like a stream's error event.
    return UsageObservation(
        response_id, **(fields or _NO_USAGE), terminal=fields is not None, clean_end=error is None, error_event=error,
        usage_conflict=_parts_disagree(fmt, data.get(usage_key)),
    )  # fmt: skip


@dataclass
class StreamObserver:
    """Reads a server-sent event stream incrementally, keeping only ids and usage."""

    fmt: WireFormat
    response_id: str | None = None
    usage: dict[str, Any] | None = None
    terminal: bool = False
    clean_end: bool = False
    errored: bool = False
    error_event: str | None = None
    conflict: bool = False
    _buffer: bytes = b""
    _data: list[bytes] = field(default_factory=list)
    # The format's end was seen ([DONE], message_stop): nothing may follow it.
    _ended: bool = False

    def feed(self, chunk: bytes) -> None:
        self._buffer += chunk
        while True:
            newline = self._buffer.find(b"\n")
            if newline < 0:
                if len(self._buffer) > MAX_PARSED_BODY:
                    self._buffer = b""  # a runaway line: give up on it, keep forwarding
                return
            line, self._buffer = self._buffer[:newline].rstrip(b"\r"), self._buffer[newline + 1 :]
            self._line(line)

    def _line(self, line: bytes) -> None:
        if not line:
            if self._data:
                self._event(b"\n".join(self._data))
                self._data = []
            return
        if line.startswith(b"data:"):
            self._data.append(line[5:].removeprefix(b" "))

    def finish(self) -> UsageObservation:
        if self._data:  # a last event without its blank line
            self._event(b"\n".join(self._data))
            self._data = []
        fields = _usage_fields(self.fmt, self.usage) if self.usage is not None else None
        return UsageObservation(
            self.response_id,
            **(fields or _NO_USAGE),
            terminal=self.terminal and fields is not None,
            clean_end=self.clean_end and not self.errored,
            error_event=self.error_event,
            usage_conflict=self.conflict or _parts_disagree(self.fmt, self.usage),
        )

    def _take(self, usage: dict[str, Any]) -> None:
        self.usage, down = _merged(self.usage, usage)
        self.conflict = self.conflict or down

    def _event(self, payload: bytes) -> None:
        if self._ended:
            self.conflict = True  # an event after the stream's own end
            return
        if payload.strip() == b"[DONE]":
            if self.fmt == "chat":
                self.clean_end = self._ended = True
            return
        try:
            event = json.loads(payload)
        except ValueError:
            return
        if isinstance(event, dict):
            getattr(self, f"_on_{self.fmt}")(event)

    def _on_anthropic(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "message_start":
            if self.response_id is not None or self.usage is not None:
                self.conflict = True  # one stream carries one message
                return
            message = event.get("message")
            if isinstance(_dig(message, "id"), str):
                self.response_id = message["id"]
            start = _dig(message, "usage")
            self.usage = dict(start) if isinstance(start, dict) else {}
        elif kind == "message_delta" and isinstance(event.get("usage"), dict):
            # Cumulative figures: a later delta overrides field by field, never adds.
            self._take(event["usage"])
            self.terminal = True
        elif kind == "message_stop":
            self.clean_end = self._ended = True
        elif kind == "error":
            self._error(event.get("error"))

    def _on_chat(self, event: dict[str, Any]) -> None:
        if isinstance(event.get("id"), str) and self.response_id is None:
            self.response_id = event["id"]
        if isinstance(event.get("usage"), dict):
            self._take(event["usage"])
            self.terminal = True
        elif _chat_output(event.get("choices")):
            self.terminal = False  # output after the usage chunk: its counts are not the final ones
        if isinstance(event.get("error"), dict):
            self._error(event["error"])

    def _on_gemini(self, event: dict[str, Any]) -> None:
        if isinstance(event.get("responseId"), str):
            self.response_id = event["responseId"]
        candidates = event.get("candidates")
        finished = isinstance(candidates, list) and any(isinstance(c, dict) and c.get("finishReason") for c in candidates)
        if self.terminal and _gemini_output(candidates):
            self.conflict = True  # more answer after the chunk that finished it
        if isinstance(event.get("usageMetadata"), dict):
            self._take(event["usageMetadata"])  # cumulative
        if finished:
            self.terminal = self.clean_end = True
        if isinstance(event.get("error"), dict):
            self._error(event["error"])

    def _on_responses(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        response = event.get("response")
        if isinstance(_dig(response, "id"), str):
            if self.response_id not in (None, response["id"]):
                self.conflict = True  # one stream carries one response
            self.response_id = self.response_id or response["id"]
        if kind in ("response.completed", "response.incomplete"):
            # Incomplete is a whole, billed answer cut short by the request's own limit
            # (max_output_tokens, a content filter): its usage is final, and it is no fault.
            if self.terminal:
                self.conflict = True  # a second end of one response
            if isinstance(_dig(response, "usage"), dict):
                self._take(response["usage"])
            self.terminal = True
            self.clean_end = True
        elif kind == "response.failed":
            # What it processed before failing may be billed: its usage counts, as partial.
            if isinstance(_dig(response, "usage"), dict):
                self._take(response["usage"])
                self.terminal = True
            self._error(_dig(response, "error"))
        elif kind == "error":
            self._error(event.get("error", event))

    def _error(self, error: Any) -> None:
        self.errored = True
        self.error_event = self.error_event or _error_event(error)
