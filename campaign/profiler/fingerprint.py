"""A model request's wire fingerprint: what a variant's treatment can change, digested.

A variant is only worth its label if its effective treatment differs on the wire, so
the probe binds, per variant, the fingerprints its requests carry, and an attempt is
confirmed by its own. A fingerprint has one digest per part:

  tools        the tool catalog, as a set: its ``catalog_set_digest`` itself
  system       the system prompt's text: Anthropic ``system``, Responses ``instructions``
               and system/developer input items, Chat system/developer messages, Gemini
               ``systemInstruction``
  model        the model name the request asked for
  reasoning    the reasoning setting (``wire.reasoning_setting``)
  sampling     temperature, top_p and top_k
  max_tokens   the output cap (``max_tokens``, ``max_completion_tokens``,
               ``max_output_tokens``, ``maxOutputTokens``)

An absent value digests as JSON ``null``: "not sent" is a setting too (the provider's
default). Nothing raw is kept: the prompt and the settings leave this module as SHA-256.

What a client writes into its prompt that is not the treatment is normalised first, so
one variant shows one fingerprint in every attempt: the attempt's private root (the
working directory, HOME), today's date, and Claude Code's billing header (a hash of the
conversation, not of the prompt). A message's id is never part of its text.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from campaign.canonical import text_sha256, wire_json

PARTS = ("tools", "system", "model", "reasoning", "sampling", "max_tokens")
# How the parts read in a refusal or a report.
PART_WORDS = {
    "tools": "tool catalog",
    "system": "system prompt",
    "model": "model",
    "reasoning": "reasoning setting",
    "sampling": "sampling (temperature, top_p, top_k)",
    "max_tokens": "max output tokens",
}
COMPARED = ", ".join(PART_WORDS[p] for p in PARTS)

# What an attempt's own paths and today's date become before the prompt is digested.
ATTEMPT_ROOT_TOKEN = "<attempt-root>"
DATE_TOKEN = "<date>"
_MONTHS = "Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec"
_DAYS = "Mon|Tue|Wed|Thu|Fri|Sat|Sun"
_DATES = re.compile(
    r"\b\d{4}-\d{2}-\d{2}\b"  # 2026-12-07 (Claude Code, Codex)
    rf"|\b(?:{_DAYS})[a-z]*,? (?:{_MONTHS})[a-z]* \d{{1,2}},? \d{{4}}\b"  # Mon Dec 07 2026 (opencode)
    rf"|\b(?:{_MONTHS})[a-z]* \d{{1,2}}, \d{{4}}\b"  # December 7, 2026
    r"|\b\d{1,2}/\d{1,2}/\d{4}\b"  # 12/7/2026
)
_BILLING_HEADER = re.compile(r"^x-anthropic-billing-header:.*$", re.MULTILINE)
_SYSTEM_ROLES = ("system", "developer")


def fingerprint(fmt: str, data: Mapping[str, Any], *, tools_digest: str | None, model: str | None, reasoning: str | None, attempt_roots: tuple[str, ...] = ()) -> dict[str, str]:
    """The request's fingerprint: {part: digest} for every part of ``PARTS``."""
    values: dict[str, Any] = {
        "system": normalized_text(system_texts(fmt, data), attempt_roots),
        "model": model,
        "reasoning": reasoning,
        "sampling": _sampling(fmt, data),
        "max_tokens": _max_tokens(fmt, data),
    }
    digests = {part: text_sha256(wire_json(value)) for part, value in values.items()}
    # The catalog is digested already: its part is the catalog's own set digest, so a
    # reader matches it with the attempt's ``catalog_set_digests``.
    return {part: tools_digest if part == "tools" and tools_digest else digests.get(part, text_sha256("null")) for part in PARTS}


def digest(parts: Mapping[str, str]) -> str:
    """One digest for a whole fingerprint."""
    return text_sha256(wire_json({part: parts[part] for part in PARTS}))


def differing_parts(a: Mapping[str, list[str]], b: Mapping[str, list[str]]) -> list[str]:
    """The parts in which two variants' fingerprints differ (each variant's part as the set
    of digests its requests carried), in ``PARTS`` order."""
    return [p for p in PARTS if set(a.get(p) or ()) != set(b.get(p) or ())]


def variant_parts(fingerprints: Mapping[str, Mapping[str, str]]) -> dict[str, list[str]]:
    """{part: sorted digests} over the fingerprints one variant's requests carried."""
    return {p: sorted({parts[p] for parts in fingerprints.values() if isinstance(parts.get(p), str)}) for p in PARTS}


def system_texts(fmt: str, data: Mapping[str, Any]) -> list[str]:
    """The system prompt's texts, in the order sent; [] when the request has none."""
    if fmt == "anthropic":
        return _texts(data.get("system"))
    if fmt == "responses":
        items = data.get("input")
        texts = _texts(data.get("instructions"))
        for item in items if isinstance(items, list) else []:
            if isinstance(item, Mapping) and item.get("role") in _SYSTEM_ROLES:
                texts += _texts(item.get("content"))
        return texts
    if fmt == "chat":
        messages = data.get("messages")
        return [t for m in messages if isinstance(m, Mapping) and m.get("role") in _SYSTEM_ROLES for t in _texts(m.get("content"))] if isinstance(messages, list) else []
    instruction = data.get("systemInstruction") or data.get("system_instruction")
    return _texts(instruction.get("parts") if isinstance(instruction, Mapping) else instruction)


def normalized_text(texts: list[str], attempt_roots: tuple[str, ...]) -> list[str]:
    out = []
    for text in texts:
        for root in attempt_roots:
            text = text.replace(root, ATTEMPT_ROOT_TOKEN)
        text = _BILLING_HEADER.sub("", _DATES.sub(DATE_TOKEN, text))
        if text.strip():
            out.append(text)
    return out


def _texts(content: Any) -> list[str]:
    """The text of a content value: a string, or a list of parts/blocks with ``text``."""
    if isinstance(content, str):
        return [content]
    if isinstance(content, Mapping):
        return _texts([content])
    if not isinstance(content, list):
        return []
    return [part if isinstance(part, str) else part["text"] for part in content if isinstance(part, str) or (isinstance(part, Mapping) and isinstance(part.get("text"), str))]


def _generation(fmt: str, data: Mapping[str, Any]) -> Mapping[str, Any]:
    if fmt == "gemini":
        config = data.get("generationConfig") or data.get("generation_config")
        return config if isinstance(config, Mapping) else {}
    return data


def _sampling(fmt: str, data: Mapping[str, Any]) -> dict[str, Any] | None:
    source = _generation(fmt, data)
    keys = ("temperature", "topP", "topK") if fmt == "gemini" else ("temperature", "top_p", "top_k")
    found = {name: _number(source.get(key)) for name, key in zip(("temperature", "top_p", "top_k"), keys) if source.get(key) is not None}
    return found or None


def _max_tokens(fmt: str, data: Mapping[str, Any]) -> Any:
    source = _generation(fmt, data)
    keys = {"anthropic": ("max_tokens",), "chat": ("max_completion_tokens", "max_tokens"), "responses": ("max_output_tokens",)}.get(fmt, ("maxOutputTokens",))
    return next((_number(source[k]) for k in keys if source.get(k) is not None), None)


def _number(value: Any) -> Any:
    """A setting as a comparable value: 1 and 1.0 are one temperature."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return value if isinstance(value, str | bool) else "other"
    return float(value)
