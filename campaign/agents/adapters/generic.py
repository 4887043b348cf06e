"""The generic format: how a custom agent (or a Lemon-style client) reports a run.

Full reference with examples: ``campaign/agents/GENERIC_FORMAT.md``. In short,
stdout is either

* one JSON object, the *result* (pretty-printing allowed), or
* JSON Lines: telemetry *events* (objects with an ``"event"`` key), then the
  result as the last non-blank line, marked ``"type": "result"``.

Result fields (every one optional; absent means unknown, never 0):

``format_version``  1 (any other value: the output is not read)
``session_id``, ``model``  strings
``error``  null, a string, or ``{"class": CLASS}``; CLASS is one of
    ``agent_error``, ``max_turns``, ``permission_denied`` (anything else is
    ``agent_error``). Messages are never copied into the record.
``num_turns``  completed parent turns (default: the length of ``turns``)
``turns``  one object per completed parent turn:
    ``{"request_id", "usage_id", "usage": USAGE}``
``usage``  run totals as USAGE (default: the sum over ``turns``)
    USAGE = ``{"input_tokens", "cached_input_tokens", "cache_write_tokens",
    "output_tokens"}``; ``input_tokens`` EXCLUDES cache reads and cache writes
``tool_calls``, ``tool_errors``  integers, or ``tools``: ``[{"status": "ok" |
    "error" | "cancelled"}]`` (every entry is a call, ``error`` ones are errors;
    an entry with any other status leaves the error count unknown)
``cost_usd``  number or null
``applied_profiles``  ``["legacy" | "coding", ...]``, merged with applied events
``nested_sessions_observed``  boolean
``schema_diagnostics``  object of plain JSON values
``events``  the same telemetry events, for the single-object form
``synthetic``  true when the figures are test data (the offline agent)

Telemetry events (rules in ``_disclosure.py``):
``{"event": "disclosure.applied", "profile": "coding", "diagnostic_events_version": 1}``,
``{"event": "disclosure.search", "status": "ok|error|malformed|cancelled", "matched_count": N}``,
``{"event": "disclosure.invoke_rejected", "reason": "unknown_tool|invalid_arguments|invalid_request|cancelled"}``,
``{"event": "disclosure.invoke", "tool_sha256": HEX, "status": "ok|error"}``.
"""

from __future__ import annotations

from typing import Any

from campaign.agents.adapters.base import Adapter
from campaign.agents.adapters._disclosure import profile_name, read_disclosure
from campaign.agents.adapters._read import count, get, load_json, load_lines, money, one_of, plain_json, text, total
from campaign.agents.record import AgentRecord, ErrorClass, TurnUsage, unknown_record, with_error
from campaign.vocabulary import ERROR_CLASSES, GENERIC_USAGE_KEYS

FORMAT_VERSION = 1
_RESULT_ERRORS = ERROR_CLASSES - {"unparseable_output", "empty_output"}
_TOOL_STATUSES = frozenset({"ok", "error", "cancelled"})


def parse(body: str, exit_code: int | None) -> AgentRecord:
    whole = load_json(body)
    if isinstance(whole, dict) and "event" not in whole:
        result, events, damaged = whole, _events(whole), False
    else:
        lines = load_lines(body)
        if lines.garbled or not lines.objects:
            return unknown_record("unparseable_output", input_includes_cached=False)
        # Only an intact last line may be the result: a stream cut short has none.
        last = lines.objects[-1]
        result = last if last.get("type") == "result" and not lines.truncated else None
        events = [o for o in lines.objects if "event" in o] + (_events(result) if result else [])
        damaged = lines.truncated
    if result is not None and result.get("format_version", FORMAT_VERSION) != FORMAT_VERSION:
        return unknown_record("unparseable_output", input_includes_cached=False)
    # A cut-short stream keeps what it showed before the cut (the class marks it partial).
    record = _record(result or {}, events, whole=not damaged and result is not None)
    if damaged or result is None:
        record = with_error(record, "unparseable_output")
    record = with_error(record, _result_error(result))
    if exit_code not in (0, None):
        record = with_error(record, "agent_error")
    return record


def _events(result: dict[str, Any]) -> list[dict[str, Any]]:
    events = result.get("events")
    return [e for e in events if isinstance(e, dict)] if isinstance(events, list) else []


def _record(result: dict[str, Any], events: list[dict[str, Any]], *, whole: bool = True) -> AgentRecord:
    disclosure = read_disclosure(events)
    # The bridge's counts are of the events seen: a stream cut short (killed, crashed, timed
    # out) may have lost the rest, so its counts are unknown, not the zero seen so far.
    failures, incorrect = (disclosure.discovery_failures, disclosure.incorrect_tool_calls) if whole else (None, None)
    turns = result.get("turns")
    turn_usage = tuple(_turn(t) for t in turns) if isinstance(turns, list) else None
    completed = count(result.get("num_turns"))
    if completed is None and turn_usage is not None:
        completed = len(turn_usage)
    usage = _usage(result.get("usage"), turns if isinstance(turns, list) else None)
    calls, errors = _tools(result)
    cost = money(result.get("cost_usd"))
    nested = result.get("nested_sessions_observed")
    return AgentRecord(
        completed_turns=completed,
        uncached_input_tokens=usage["input_tokens"],
        cached_input_tokens=usage["cached_input_tokens"],
        cache_write_tokens=usage["cache_write_tokens"],
        output_tokens=usage["output_tokens"],
        tool_calls=calls,
        tool_errors=errors,
        cost_usd=cost,
        cost_reported=cost is not None,
        session_id=text(result.get("session_id")),
        model=text(result.get("model")),
        applied_profiles=_merge_profiles(disclosure.applied_profiles, result.get("applied_profiles")),
        diagnostic_events_version=disclosure.diagnostic_events_version,
        discovery_failures=failures,
        incorrect_tool_calls=incorrect,
        turn_usage=turn_usage,
        schema_diagnostics=_diagnostics(result.get("schema_diagnostics"), disclosure.schema_diagnostics),
        nested_sessions_observed=nested if isinstance(nested, bool) else None,
        input_includes_cached=False,
        synthetic=result.get("synthetic") is True,
    )


def _turn(turn: Any) -> TurnUsage:
    return TurnUsage(
        request_id=text(get(turn, "request_id")),
        usage_id=text(get(turn, "usage_id")),
        input_tokens=count(get(turn, "usage", "input_tokens")),
        output_tokens=count(get(turn, "usage", "output_tokens")),
        cache_read_tokens=count(get(turn, "usage", "cached_input_tokens")),
    )


def _usage(totals: Any, turns: list[Any] | None) -> dict[str, int | None]:
    if isinstance(totals, dict):
        return {k: count(totals.get(k)) for k in GENERIC_USAGE_KEYS}
    if turns:
        return {k: total([count(get(t, "usage", k)) for t in turns]) for k in GENERIC_USAGE_KEYS}
    return dict.fromkeys(GENERIC_USAGE_KEYS)


def _tools(result: dict[str, Any]) -> tuple[int | None, int | None]:
    calls, errors = count(result.get("tool_calls")), count(result.get("tool_errors"))
    tools = result.get("tools")
    if isinstance(tools, list):
        if calls is None:
            calls = len(tools)
        # An entry that does not say how the call ended leaves the error count unknown.
        if errors is None and all(one_of(get(t, "status"), _TOOL_STATUSES) for t in tools):
            errors = sum(1 for t in tools if get(t, "status") == "error")
    return calls, errors


def _merge_profiles(from_events: tuple[str, ...] | None, claimed: Any) -> tuple[str, ...] | None:
    if not isinstance(claimed, list):
        return from_events
    merged = list(from_events or ())
    for name in claimed:
        name = profile_name(name)
        if name not in merged:
            merged.append(name)
    return tuple(merged)


def _diagnostics(reported: Any, observed: dict[str, Any] | None) -> dict[str, Any] | None:
    merged = dict(reported) if isinstance(reported, dict) and plain_json(reported) else {}
    merged.update(observed or {})  # what the events show wins over what the result claims
    return merged or None


def _result_error(result: dict[str, Any] | None) -> ErrorClass | None:
    error = None if result is None else result.get("error")
    if error is None or error is False:
        return None
    name = get(error, "class")
    return name if one_of(name, _RESULT_ERRORS) else "agent_error"  # type: ignore[return-value]


ADAPTER = Adapter(name="generic", input_includes_cached=False, parse_output=parse)
