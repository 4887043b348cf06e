"""From a capture to the attempt row: wire counters, identities and diagnostics.

When the profiler ran, the wire is the witness: completed parent turns, token
counters and the request/usage identity pairs come from it. The adapter's own
figures are cross-checked, never averaged: a disagreement is recorded in
``schema_diagnostics.wire_adapter_disagreements`` and the wire value is kept.
A counter the wire cannot show (cache writes on OpenAI formats) keeps the
adapter's value, and is None when neither saw it.

Provider faults (``faults``): a request answered with an HTTP error and no
usage was not billed, so it is neither a turn nor an unmatched request; a cut
stream's usage as far as the wire saw it (``message_start``'s input) counts,
partial, and leaves spend incomplete; a request the wire saw no usage for
leaves it incomplete too. The fault that ended the attempt, if the provider
ended it, is ``ending_fault``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from campaign.vocabulary import PRICE_CATEGORIES, SPEND_COUNTERS, WIRE_COUNTERS
from campaign.agents.record import AgentRecord, TurnUsage
from campaign.profiler import faults
from campaign.profiler.capture import Capture
from campaign.profiler.wire import PROVIDER_DEFAULT

_USAGE_KEYS = dict(zip(SPEND_COUNTERS, PRICE_CATEGORIES, strict=True))


@dataclass(frozen=True)
class WireSummary:
    flush_complete: bool
    model_requests: int
    counters: dict[str, int | None]
    turn_usage: tuple[TurnUsage, ...]
    # Every billed model request succeeded with its own terminal usage, one to one.
    usage_matched: bool
    diagnostics: dict[str, Any]
    # The provider fault of the attempt's last model request: the provider ended it.
    ending_fault: str | None = None
    # Some billed request has usage the wire did not see whole: the client's cost is partial.
    spend_unseen: bool = False
    # Failed tool results the client sent back to the model (the most any request carried:
    # each resends the history); None where the format cannot mark a failure.
    failed_tool_results: int | None = None


def _ok(record: dict[str, Any]) -> bool:
    status = record.get("status")
    return isinstance(status, int) and 200 <= status < 300


def _first_int(*values: Any) -> int | None:
    return next((v for v in values if isinstance(v, int) and not isinstance(v, bool)), None)


def _sum(values: list[Any]) -> int | None:
    numbers = [v for v in values if isinstance(v, int) and not isinstance(v, bool)]
    return sum(numbers) if numbers else None


def summarize(capture: Capture, schema_tokens: Mapping[str, int] | None = None) -> WireSummary:
    """What the wire shows of one attempt. ``schema_tokens`` holds the estimates the engine
    counted for catalogs the proxy handed over (``catalogs``) instead of counting itself."""
    requests = capture.model_requests
    billed = [r for r in requests if faults.billing(r) != "unbilled"]
    completed = [r for r in billed if faults.billing(r) == "complete" and _ok(r)]
    usages = [r["usage"] for r in billed if isinstance(r.get("usage"), dict)]
    counters: dict[str, int | None] = {"completed_turns": len(completed) if capture.flush_complete or completed else None}
    # Every request flushed and none billed (error responses without usage, no connection):
    # the wire proves the usage is zero, not unknown.
    none_billed = capture.flush_complete and bool(requests) and not billed
    for column, key in _USAGE_KEYS.items():
        counters[column] = 0 if none_billed else _sum([u.get(key) for u in usages])
    turn_usage = tuple(
        TurnUsage(
            request_id=f"wire-{r.get('seq')}",
            usage_id=r.get("response_id"),
            input_tokens=(r.get("usage") or {}).get("uncached_input"),
            output_tokens=(r.get("usage") or {}).get("output"),
            cache_read_tokens=(r.get("usage") or {}).get("cached_input"),
        )
        for r in billed
    )
    response_ids = [r.get("response_id") for r in billed]
    matched = (
        capture.flush_complete
        and bool(billed)
        and len(completed) == len(billed)
        and None not in response_ids
        and len(set(response_ids)) == len(response_ids)
    )
    return WireSummary(
        flush_complete=capture.flush_complete,
        model_requests=len(requests),
        counters=counters,
        turn_usage=turn_usage,
        usage_matched=matched,
        diagnostics=_diagnostics(capture, completed, billed, schema_tokens or {}),
        ending_fault=faults.ending_fault(requests),
        spend_unseen=len(completed) != len(billed),
        failed_tool_results=max((r["failed_tool_results"] for r in requests if isinstance(r.get("failed_tool_results"), int)), default=None),
    )


def _diagnostics(capture: Capture, completed: list[dict[str, Any]], billed: list[dict[str, Any]], counted: Mapping[str, int]) -> dict[str, Any]:
    requests = capture.model_requests
    with_catalog = [r for r in requests if isinstance(r.get("tool_count"), int)]
    # A run that never offered a tool (a text-protocol client) has the empty catalog as
    # its catalog; otherwise tool-less side requests (titles, summaries) are not the catalog.
    tool_bearing = [r for r in with_catalog if r["tool_count"] > 0]
    catalog_requests = tool_bearing or with_catalog
    catalogs = _distinct(catalog_requests, "catalog_digest")
    tokens = {r["catalog_digest"]: _first_int(r.get("schema_tokens"), counted.get(r["catalog_digest"])) for r in catalog_requests if isinstance(r.get("catalog_digest"), str)}
    estimates = [t for t in tokens.values() if isinstance(t, int)]
    with_usage = [r for r in requests if r.get("terminal") is True]
    return {
        "basis": "diagnostic_only_not_outcome_evidence",
        "catalog_digests": catalogs,
        "catalog_set_digests": _distinct(catalog_requests, "catalog_set_digest"),
        # Each catalog as sent -> the same catalog as a set (two orders of one set: one value).
        "catalog_sets": {r["catalog_digest"]: r["catalog_set_digest"] for r in catalog_requests if isinstance(r.get("catalog_digest"), str) and isinstance(r.get("catalog_set_digest"), str)},
        # Each request's whole fingerprint (profiler.fingerprint), and its parts by digest.
        "fingerprint_digests": _distinct(catalog_requests, "fingerprint_digest"),
        "fingerprints": {r["fingerprint_digest"]: r["fingerprint"] for r in catalog_requests if isinstance(r.get("fingerprint_digest"), str) and isinstance(r.get("fingerprint"), dict)},
        "request_count": len(requests),
        "tool_bearing_requests": len(tool_bearing),
        "terminal_usage_observations": len(with_usage),
        "unmatched_requests": len(billed) - len(completed),
        # HTTP error responses without usage: not billed, so neither turns nor unmatched.
        "unbilled_error_responses": len(requests) - len(billed),
        "provider_faults": faults.fault_counts(requests),
        "ending_fault": faults.ending_fault(requests),
        "streams_not_clean": sum(1 for r in requests if r.get("stream") is True and r.get("clean_end") is not True),
        "cache_observable": (all(r.get("cache_read_observable") is True for r in with_usage) if with_usage else None),
        "cache_write_observable": (all(r.get("cache_write_observable") is True for r in with_usage) if with_usage else None),
        # The largest catalog's estimate: what one request shows the model up front.
        "visible_schema_tokens": max(estimates) if estimates else None,
        "catalog_tool_counts": {r["catalog_digest"]: r["tool_count"] for r in catalog_requests if isinstance(r.get("catalog_digest"), str)},
        "catalog_schema_tokens": tokens,
        "flush_complete": capture.flush_complete,
        "reasoning_requested": reasoning_requested(requests),
        # Of the cache writes, those to the 1-hour cache (priced apart); None: no breakdown seen.
        "cache_write_1h_tokens": _sum([(r.get("usage") or {}).get("cache_write_1h") for r in billed]),
    }


def reasoning_requested(requests: list[dict[str, Any]]) -> list[str] | None:
    """The reasoning settings the attempt's model requests asked for, each once, sorted;
    ``[provider_default]`` when none asked for one; None when no request's body was read
    (nothing is known: not the default)."""
    read = [r for r in requests if "reasoning" in r and isinstance(r.get("tool_count"), int)]
    if not read:
        return None
    return sorted({r["reasoning"] for r in read if isinstance(r["reasoning"], str)}) or [PROVIDER_DEFAULT]


def merge(record: AgentRecord, summary: WireSummary) -> AgentRecord:
    """The adapter's record with the wire's counters and identities where the wire saw them."""
    updates: dict[str, Any] = {}
    disagreements: dict[str, dict[str, int]] = {}
    for name in WIRE_COUNTERS:
        wire_value = summary.counters.get(name)
        adapter_value = getattr(record, name)
        if wire_value is None:
            if name == "cache_write_tokens" and summary.diagnostics.get("cache_write_observable") is False:
                # No response carried a cache-write count (the Chat Completions, Responses and
                # Gemini formats have none): a client's figure for it (opencode's
                # `cache.write: 0`) is its default, not an observation, so it is unknown.
                updates[name] = None
            elif summary.spend_unseen and name in _USAGE_KEYS and name != "cache_write_tokens":
                # Requests the provider may have billed crossed the wire with no usage in
                # sight: the client's figure cannot cover them, so the counter is unknown.
                updates[name] = None
            continue
        if adapter_value is not None and adapter_value != wire_value:
            disagreements[name] = {"wire": wire_value, "adapter": adapter_value}
        updates[name] = wire_value
    diagnostics = dict(record.schema_diagnostics or {})
    diagnostics.update(summary.diagnostics)
    diagnostics["wire_adapter_disagreements"] = disagreements
    if summary.spend_unseen:
        # The client's cost covers only what it saw; the wire shows more may have been billed.
        updates["cost_reported"] = False
    wire_errors = summary.failed_tool_results
    if wire_errors is not None and (record.tool_errors is None or wire_errors > record.tool_errors):
        # A failure the client's output does not mark (Gemini CLI's failing shell command) is
        # still a failed tool call: the model was told so on the wire.
        if record.tool_errors is not None:
            disagreements["tool_errors"] = {"wire": wire_errors, "adapter": record.tool_errors}
        updates["tool_errors"] = wire_errors
    return replace(
        record,
        **updates,
        turn_usage=summary.turn_usage,
        schema_diagnostics=diagnostics,
        # The wire saw every request that crossed it; an adapter that saw nested sessions still wins.
        nested_sessions_observed=True if record.nested_sessions_observed else False,
        wire_requests=summary.model_requests,
    )


def _distinct(requests: list[dict[str, Any]], key: str) -> list[str]:
    """The digests under ``key``, each once, in the order first seen."""
    found: list[str] = []
    for r in requests:
        if isinstance(r.get(key), str) and r[key] not in found:
            found.append(r[key])
    return found
