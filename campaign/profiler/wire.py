"""What one model request and its response show on the wire, as plain values.

Four wire formats, told apart by the request path:

* Anthropic Messages (``.../messages``): ``input_tokens`` is uncached input;
  ``cache_read_input_tokens`` and ``cache_creation_input_tokens`` are reported
  apart. Streamed, the terminal usage is ``message_start``'s usage overlaid by
  the *last* ``message_delta`` usage: the delta's figures are cumulative, so
  summing them would double count. ``message_stop`` ends a clean stream.
* OpenAI Chat Completions (``.../chat/completions``): ``prompt_tokens`` folds
  in ``prompt_tokens_details.cached_tokens``. Streamed, only the final chunk
  carries ``usage`` (and only when the client asked for it); ``[DONE]`` ends a
  clean stream.
* OpenAI Responses (``.../responses``): ``input_tokens`` folds in
  ``input_tokens_details.cached_tokens``; streamed, ``response.completed``
  carries the usage and ends the stream.
* Gemini API (``.../models/MODEL:generateContent`` and ``:streamGenerateContent``,
  the model in the path, streaming by the method): the catalog is every
  ``tools[].functionDeclarations`` entry; ``usageMetadata.promptTokenCount`` folds
  in ``cachedContentTokenCount``, output is ``candidatesTokenCount`` plus
  ``thoughtsTokenCount``, and a count the API leaves out is 0 (it omits zeros).
  Streamed, each chunk may carry ``usageMetadata`` (cumulative: the last wins),
  and the chunk with a candidate's ``finishReason`` ends the response.

Neither OpenAI format nor Gemini's reports cache writes, so ``cache_write``
stays None there (unobservable, not zero). Nothing here keeps prompt, output or reasoning text:
a request is reduced to its route, model and tool catalog; a response to its
id, usage and how it ended.
"""

from __future__ import annotations

import gzip
import json
import re
import zlib
from dataclasses import dataclass, field
from typing import Any, Literal

from campaign.canonical import text_sha256, wire_json

WireFormat = Literal["anthropic", "chat", "responses", "gemini"]
_SUFFIXES: tuple[tuple[str, WireFormat], ...] = (
    ("/messages", "anthropic"),
    ("/chat/completions", "chat"),
    ("/responses", "responses"),
)
_GEMINI_METHODS = ("generateContent", "streamGenerateContent")
# A response body larger than this is not parsed (it is still forwarded whole).
MAX_PARSED_BODY = 64 * 1024 * 1024
# An upstream that sends nothing for this long, before or inside a response, is silent:
# the request is a provider fault, not a wait the agent's deadline should absorb. Long
# enough for a slow non-streamed completion; a provider may set its own in the catalog.
DEFAULT_SILENCE_S = 300.0


def wire_format(path: str) -> WireFormat | None:
    """The model-request format a path speaks, or None for anything else."""
    bare = path.split("?", 1)[0].rstrip("/")
    for suffix, fmt in _SUFFIXES:
        if bare.endswith(suffix):
            return fmt
    if "/models/" in bare and bare.rsplit(":", 1)[-1] in _GEMINI_METHODS:
        return "gemini"
    return None


@dataclass(frozen=True)
class RequestSummary:
    format: WireFormat
    path: str
    model: str | None
    stream: bool
    # None: the body could not be read, so the catalog is unobserved (not empty).
    tools: list[Any] | None
    catalog_digest: str | None
    tool_digests: tuple[str, ...] | None
    # Tool results in the history this request sends that say the call failed; None
    # where the format has no such mark (both OpenAI formats).
    failed_tool_results: int | None = None

    @property
    def tool_count(self) -> int | None:
        return None if self.tools is None else len(self.tools)


def decode_body(body: bytes, content_encoding: str | None) -> bytes | None:
    """The request body as sent before compression; None when we cannot undo it."""
    encoding = (content_encoding or "identity").strip().lower()
    try:
        if encoding in ("", "identity"):
            return body
        if encoding == "gzip":
            return gzip.decompress(body)
        if encoding == "deflate":
            return zlib.decompress(body)
        if encoding == "zstd":
            import zstandard  # optional: clients that compress requests with zstd

            return zstandard.ZstdDecompressor().decompress(body, max_output_size=MAX_PARSED_BODY)
    except Exception:
        return None
    return None


# What an attempt's own paths become in a catalog before it is digested.
ATTEMPT_ROOT_TOKEN = "<attempt-root>"


def normalized_tools(tools: list[Any], attempt_roots: tuple[str, ...]) -> list[Any]:
    """``tools`` with the attempt's private root replaced by a fixed token: a client that
    writes its temp dir into a tool description (opencode's bash tool names
    ``$TMPDIR/opencode``) shows the same catalog in every attempt, so the probe's
    digests can confirm it."""
    if not attempt_roots:
        return tools
    text = wire_json(tools)
    for root in attempt_roots:
        text = text.replace(root, ATTEMPT_ROOT_TOKEN)
    return json.loads(text)


def summarize_request(path: str, body: bytes, content_encoding: str | None = None, attempt_roots: tuple[str, ...] = ()) -> RequestSummary | None:
    """The catalog facts of a model request; None when the path is not a model route."""
    fmt = wire_format(path)
    if fmt is None:
        return None
    raw = decode_body(body, content_encoding)
    data: Any = None
    if raw is not None:
        try:
            data = json.loads(raw)
        except ValueError:
            data = None
    if not isinstance(data, dict):
        return RequestSummary(fmt, path.split("?", 1)[0], None, False, None, None, None)
    tools = _gemini_declarations(data.get("tools", [])) if fmt == "gemini" else data.get("tools", [])
    tools = normalized_tools(tools, attempt_roots) if isinstance(tools, list) else None
    model = _gemini_model(path) if fmt == "gemini" else data.get("model")
    return RequestSummary(
        format=fmt,
        path=path.split("?", 1)[0],
        model=model if isinstance(model, str) else None,
        stream=path.split("?", 1)[0].endswith(":streamGenerateContent") if fmt == "gemini" else data.get("stream") is True,
        tools=tools,
        catalog_digest=None if tools is None else text_sha256(wire_json(tools)),
        tool_digests=None if tools is None else tuple(text_sha256(wire_json(t)) for t in tools),
        failed_tool_results=_failed_results(fmt, data),
    )


_EXIT_CODE = re.compile(r"Exit Code: (-?\d+)")


def _failed_results(fmt: WireFormat, data: dict[str, Any]) -> int | None:
    """Failed tool results the request carries back to the model: Anthropic's
    ``tool_result`` with ``is_error``; a Gemini ``functionResponse`` with an error or a
    non-zero ``Exit Code:`` (Gemini CLI reports a failing shell command only there).
    Counted, never kept: nothing of the result's text leaves this function."""
    if fmt == "anthropic":
        blocks = [b for m in data.get("messages") or [] if isinstance(m, dict) and isinstance(m.get("content"), list) for b in m["content"]]
        return sum(1 for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result" and b.get("is_error") is True)
    if fmt == "gemini":
        parts = [p for c in data.get("contents") or [] if isinstance(c, dict) for p in c.get("parts") or []]
        responses = [p["functionResponse"].get("response") for p in parts if isinstance(p, dict) and isinstance(p.get("functionResponse"), dict)]
        return sum(1 for r in responses if _failed_response(r))
    return None


def _failed_response(response: Any) -> bool:
    if not isinstance(response, dict):
        return False
    if response.get("error"):
        return True
    codes = [int(m) for v in response.values() if isinstance(v, str) for m in _EXIT_CODE.findall(v)]
    return any(code != 0 for code in codes)


def _gemini_declarations(tools: Any) -> list[Any] | None:
    """Gemini's catalog: every function declaration, across the ``tools`` entries."""
    if not isinstance(tools, list):
        return None
    found: list[Any] = []
    for entry in tools:
        declarations = entry.get("functionDeclarations") if isinstance(entry, dict) else None
        if isinstance(declarations, list):
            found += declarations
    return found


def _gemini_model(path: str) -> str | None:
    model = path.split("?", 1)[0].rsplit("/models/", 1)[-1].rsplit(":", 1)[0]
    return model or None


# --- responses ----------------------------------------------------------------


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

    @property
    def has_usage(self) -> bool:
        """Some usage figure was seen, terminal or not (a cut stream's message_start)."""
        return any(v is not None for v in (self.uncached_input, self.cached_input, self.cache_write, self.output))

    @property
    def complete(self) -> bool:
        """Usage proven for this request: terminal, clean and every billed counter numeric."""
        counters = (self.uncached_input, self.output, self.cached_input)
        return self.terminal and self.clean_end and self.response_id is not None and None not in counters


# What a provider's error event says, reduced to the words the fault classes need.
ERROR_EVENTS = ("overloaded", "rate_limited", "server_error", "other")


def _error_event(error: Any) -> str:
    fields = ("type", "code", "status") if isinstance(error, dict) else ()
    text = " ".join(str(error.get(f)) for f in fields).lower()  # Gemini: {"code": 429, "status": "RESOURCE_EXHAUSTED"}
    if "overloaded" in text or "unavailable" in text:
        return "overloaded"
    if "rate_limit" in text or "resource_exhausted" in text:
        return "rate_limited"
    if "server_error" in text or "api_error" in text or "internal" in text:
        return "server_error"
    return "other"


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


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
    candidates, thoughts = _count(usage.get("candidatesTokenCount", 0)), _count(usage.get("thoughtsTokenCount", 0))
    return {
        "uncached_input": None if prompt is None or cached is None or cached > prompt else prompt - cached,
        "cached_input": cached,
        "cache_write": None,
        "output": None if candidates is None or thoughts is None else candidates + thoughts,
        "cache_read_observable": True,
        "cache_write_observable": False,
    }


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
    return UsageObservation(response_id, **(fields or _NO_USAGE), terminal=fields is not None, clean_end=True)


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
    _buffer: bytes = b""
    _data: list[bytes] = field(default_factory=list)
    _start_usage: dict[str, Any] = field(default_factory=dict)

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
        )

    def _event(self, payload: bytes) -> None:
        if payload.strip() == b"[DONE]":
            if self.fmt == "chat":
                self.clean_end = True
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
            message = event.get("message")
            if isinstance(_dig(message, "id"), str):
                self.response_id = message["id"]
            start = _dig(message, "usage")
            self._start_usage = dict(start) if isinstance(start, dict) else {}
            self.usage = dict(self._start_usage)
        elif kind == "message_delta" and isinstance(event.get("usage"), dict):
            # Cumulative figures: the last delta overrides, field by field, never adds.
            self.usage = {**self._start_usage, **event["usage"]}
            self.terminal = True
        elif kind == "message_stop":
            self.clean_end = True
        elif kind == "error":
            self._error(event.get("error"))

    def _on_chat(self, event: dict[str, Any]) -> None:
        if isinstance(event.get("id"), str) and self.response_id is None:
            self.response_id = event["id"]
        if isinstance(event.get("usage"), dict):
            self.usage = event["usage"]
            self.terminal = True
        if isinstance(event.get("error"), dict):
            self._error(event["error"])

    def _on_gemini(self, event: dict[str, Any]) -> None:
        if isinstance(event.get("responseId"), str):
            self.response_id = event["responseId"]
        if isinstance(event.get("usageMetadata"), dict):
            self.usage = event["usageMetadata"]  # cumulative: the last chunk's wins
        candidates = event.get("candidates")
        if isinstance(candidates, list) and any(isinstance(c, dict) and c.get("finishReason") for c in candidates):
            self.terminal = self.clean_end = True
        if isinstance(event.get("error"), dict):
            self._error(event["error"])

    def _on_responses(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        response = event.get("response")
        if isinstance(_dig(response, "id"), str):
            self.response_id = response["id"]
        if kind == "response.completed":
            self.usage = _dig(response, "usage") if isinstance(_dig(response, "usage"), dict) else None
            self.terminal = True
            self.clean_end = True
        elif kind in ("response.failed", "response.incomplete", "error"):
            self._error(_dig(response, "error") if kind == "response.failed" else event.get("error", event))

    def _error(self, error: Any) -> None:
        self.errored = True
        self.error_event = self.error_event or _error_event(error)
