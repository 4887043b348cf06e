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
  in ``cachedContentTokenCount``, ``toolUsePromptTokenCount`` (what a server-side
  tool fed the model) is further uncached input, output is ``candidatesTokenCount``
  plus ``thoughtsTokenCount``, and a count the API leaves out is 0 (it omits zeros).
  Streamed, each chunk may carry ``usageMetadata`` (cumulative: the last wins),
  and the chunk with a candidate's ``finishReason`` ends the response.

Neither OpenAI format nor Gemini's reports cache writes, so ``cache_write``
stays None there (unobservable, not zero). Nothing here keeps prompt, output or reasoning text:
a request is reduced to its route, model, tool catalog and fingerprint (digests only,
``fingerprint``) here; a response to its id, usage and how it ended in ``usage``.
"""

from __future__ import annotations

import gzip
import json
import re
import zlib
from dataclasses import dataclass
from collections.abc import Mapping
from typing import Any, Literal

from campaign.canonical import text_sha256, wire_json
from campaign.profiler import fingerprint as wire_fingerprint

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
    # The catalog as a set (format 2 of CATALOG_DIGEST_KEYS); None with catalog_digest.
    catalog_set_digest: str | None = None
    # The reasoning setting the request asked for (``reasoning_setting``); None: it asked
    # for none, so the provider's default applies.
    reasoning: str | None = None
    # What a variant's treatment can change, digested part by part (``fingerprint``); None
    # with the catalog.
    fingerprint: Mapping[str, str] | None = None

    @property
    def fingerprint_digest(self) -> str | None:
        return None if self.fingerprint is None else wire_fingerprint.digest(self.fingerprint)

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


# How a catalog is digested, by format, and the key of an attempt's wire diagnostics that
# lists its catalogs in that format. An experiment records the format its probe used
# (``wire_catalog_format``; absent: 1), and its attempts are confirmed by that format.
#   1: the tools in the order the client sent them (experiments bound before format 2).
#   2: the tools as a set: sorted by name, each as canonical JSON. A client may register
#      its tools in an order that varies from run to run; the catalog is the same, and a
#      paid attempt must not end profile_unconfirmed for it.
#   3: the request's whole fingerprint (``profiler.fingerprint``): the catalog as in 2,
#      the system prompt and the settings a treatment can change.
CATALOG_DIGEST_KEYS = {1: "catalog_digests", 2: "catalog_set_digests", 3: "fingerprint_digests"}
CATALOG_DIGEST_FORMAT = 3


def bound_catalog_format(bound: Mapping[str, Any]) -> int:
    """The format an experiment (or one provider's entry in it) bound its wire catalogs in:
    1 where the field is absent; the current format where there are no catalogs, or where
    the field holds a value this engine does not know (the experiment measured now then
    differs in that field, and the refusal names it)."""
    if not bound.get("wire_catalogs"):
        return CATALOG_DIGEST_FORMAT
    found = bound.get("wire_catalog_format", 1)
    return found if type(found) is int and found in CATALOG_DIGEST_KEYS else CATALOG_DIGEST_FORMAT


def recorded_catalog_format(catalogs: Any, catalog_format: int) -> int | None:
    """The ``wire_catalog_format`` an experiment records: none without catalogs, and none
    for format 1, so experiments bound before format 2 keep their identity."""
    return catalog_format if catalogs and catalog_format != 1 else None


def catalog_set_digest(tools: list[Any]) -> str:
    """Format 2: the same digest for the same tools in any order."""
    keyed = sorted(((t.get("name") if isinstance(t, dict) and isinstance(t.get("name"), str) else "", wire_json(t)) for t in tools))
    return text_sha256("[" + ",".join(text for _, text in keyed) + "]")


# What an attempt's own paths become in a catalog before it is digested (as in the prompt).
ATTEMPT_ROOT_TOKEN = wire_fingerprint.ATTEMPT_ROOT_TOKEN


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
    model = model if isinstance(model, str) else None
    reasoning = reasoning_setting(fmt, data)
    set_digest = None if tools is None else catalog_set_digest(tools)
    return RequestSummary(
        format=fmt,
        path=path.split("?", 1)[0],
        model=model,
        stream=path.split("?", 1)[0].endswith(":streamGenerateContent") if fmt == "gemini" else data.get("stream") is True,
        tools=tools,
        catalog_digest=None if tools is None else text_sha256(wire_json(tools)),
        tool_digests=None if tools is None else tuple(text_sha256(wire_json(t)) for t in tools),
        failed_tool_results=_failed_results(fmt, data),
        catalog_set_digest=set_digest,
        reasoning=reasoning,
        fingerprint=None if tools is None else wire_fingerprint.fingerprint(fmt, data, tools_digest=set_digest, model=model, reasoning=reasoning, attempt_roots=attempt_roots),
    )


# What a request can ask of the model's reasoning, by format, as ``key=value`` pairs:
#   responses   reasoning.effort                               effort=high
#   chat        reasoning_effort (or reasoning.effort)         effort=low
#   anthropic   thinking.type, thinking.budget_tokens,         thinking=enabled,budget_tokens=8000
#               output_config.effort                           effort=medium
#   gemini      generationConfig.thinkingConfig.thinkingBudget thinking_budget=1024
#               and .thinkingLevel                             thinking_level=low
# A word outside [a-z0-9_-] (or longer than a setting's name ever is) is "other": the
# setting is recorded, never text a client chose.
PROVIDER_DEFAULT = "provider_default"
_SETTING_WORD = re.compile(r"[a-z0-9_-]{1,24}")


def reasoning_setting(fmt: WireFormat, data: Mapping[str, Any]) -> str | None:
    """The reasoning setting a model request carried, canonical (sorted ``key=value``
    pairs joined by commas); None when it carried none."""
    pairs: dict[str, Any] = {}
    if fmt in ("responses", "chat"):
        nested = data.get("reasoning")
        pairs["effort"] = data.get("reasoning_effort") if fmt == "chat" and "reasoning_effort" in data else (nested.get("effort") if isinstance(nested, Mapping) else None)
    elif fmt == "anthropic":
        thinking, output = data.get("thinking"), data.get("output_config")
        if isinstance(thinking, Mapping):
            pairs["thinking"], pairs["budget_tokens"] = thinking.get("type"), thinking.get("budget_tokens")
        pairs["effort"] = output.get("effort") if isinstance(output, Mapping) else None
    else:
        config = data.get("generationConfig")
        thinking = config.get("thinkingConfig") if isinstance(config, Mapping) else None
        if isinstance(thinking, Mapping):
            pairs["thinking_budget"], pairs["thinking_level"] = thinking.get("thinkingBudget"), thinking.get("thinkingLevel")
    words = {key: _setting_word(value) for key, value in pairs.items() if value is not None}
    return ",".join(f"{key}={words[key]}" for key in sorted(words)) or None


def _setting_word(value: Any) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, str) and _SETTING_WORD.fullmatch(value.lower()):
        return value.lower()
    return "other"


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
