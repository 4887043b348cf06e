"""Claude Code: ``claude -p --output-format stream-json --verbose`` (or ``json``).

The run ends with one result object::

    {"type": "result", "subtype": "success" | "error_max_turns" | "error_during_execution",
     "is_error": false, "num_turns": 6, "session_id": "...", "total_cost_usd": 0.12,
     "usage": {"input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens",
               "output_tokens", ...},
     "modelUsage": {"<model>": {"outputTokens", "costUSD", ...}},
     "permission_denials": [{"tool_name", "tool_use_id", "tool_input"}]}

With ``--output-format json`` that object is the whole output; with ``--verbose``
it is the last element of an array, and with ``stream-json`` the last line of a
JSON Lines stream. Before it, the array or stream holds every message of the
run (one line per content block with ``stream-json``)::

    {"type": "assistant", "parent_tool_use_id": null,
     "message": {"id": "msg_...", "content": [{"type": "tool_use", "id": "toolu_...", "name": "Bash", ...}]}}
    {"type": "user", "parent_tool_use_id": null,
     "message": {"content": [{"type": "tool_result", "tool_use_id": "toolu_...", "is_error": true, ...}]}}

A ``tool_use`` block is a tool call and a ``tool_result`` with ``is_error: true``
a failed one (Bash exiting non-zero, an Edit that did not apply). Messages of a
subagent carry the ``parent_tool_use_id`` of the Task call that spawned it; its
calls are counted too, and it marks ``nested_sessions_observed``. Only a bare
result object shows no messages: tool counts and nesting then stay None.

``input_tokens`` excludes cache reads and cache writes. The result has no
per-request usage identities, so ``turn_usage`` stays None (the recording proxy
supplies them when the profile routes through it). A stream cut off before its
result line keeps the tool counts of its complete lines, as lower bounds.
"""

from __future__ import annotations

from typing import Any

from campaign.agents.adapters.base import Adapter
from campaign.agents.adapters._read import count, get, load_json, load_lines, money, text
from campaign.agents.record import AgentRecord, ErrorClass, unknown_record, with_error


def parse(body: str, exit_code: int | None) -> AgentRecord:
    messages, result, cut = _read(body)
    if result is None:
        # No result line: a stream killed mid-run shows its complete messages, nothing more.
        if not cut or not messages:
            return unknown_record("unparseable_output", input_includes_cached=False)
        calls, errors = _tool_counts(messages)
        return AgentRecord(
            tool_calls=calls,
            tool_errors=errors,
            session_id=next((s for s in (text(m.get("session_id")) for m in messages) if s), None),
            error_class="unparseable_output",
            nested_sessions_observed=_nested(messages) or None,
            input_includes_cached=False,
        )
    cost = money(result.get("total_cost_usd"))
    calls, errors = _tool_counts(messages) if messages is not None else (None, None)
    record = AgentRecord(
        completed_turns=count(result.get("num_turns")),
        uncached_input_tokens=count(get(result, "usage", "input_tokens")),
        cached_input_tokens=count(get(result, "usage", "cache_read_input_tokens")),
        cache_write_tokens=count(get(result, "usage", "cache_creation_input_tokens")),
        output_tokens=count(get(result, "usage", "output_tokens")),
        tool_calls=calls,
        tool_errors=errors,
        cost_usd=cost,
        cost_reported=cost is not None,
        session_id=text(result.get("session_id")),
        model=_main_model(result.get("modelUsage")),
        error_class=_error_class(result),
        nested_sessions_observed=_nested(messages) if messages is not None else None,
        input_includes_cached=False,
    )
    if exit_code not in (0, None):
        record = with_error(record, "agent_error")
    return record


def _read(body: str) -> tuple[list[dict[str, Any]] | None, dict[str, Any] | None, bool]:
    """(messages before the result or None for a bare result, the result, whether a stream was cut)."""
    whole = load_json(body)
    if isinstance(whole, dict):
        return None, (whole if whole.get("type") == "result" else None), False
    if isinstance(whole, list):
        objects = [m for m in whole if isinstance(m, dict)]
        cut = False
    else:
        lines = load_lines(body)
        if lines.garbled:
            return None, None, False
        objects, cut = list(lines.objects), lines.truncated
    last = objects[-1] if objects else None
    if last is not None and last.get("type") == "result" and not cut:
        return objects[:-1], last, False
    return objects, None, cut or whole is None


def _blocks(message: dict[str, Any], role: str) -> list[dict[str, Any]]:
    if message.get("type") != role:
        return []
    content = get(message, "message", "content")
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _tool_counts(messages: list[dict[str, Any]]) -> tuple[int, int]:
    """Tool calls (tool_use blocks) and failed ones (error tool_results), each id once."""
    calls: set[str] = set()
    anonymous_calls = 0
    failed: set[str] = set()
    anonymous_failures = 0
    for message in messages:
        for block in _blocks(message, "assistant"):
            if block.get("type") == "tool_use":
                call_id = text(block.get("id"))
                if call_id is None:
                    anonymous_calls += 1
                else:
                    calls.add(call_id)
        for block in _blocks(message, "user"):
            if block.get("type") == "tool_result" and block.get("is_error") is True:
                call_id = text(block.get("tool_use_id"))
                if call_id is None:
                    anonymous_failures += 1
                else:
                    failed.add(call_id)
    return len(calls) + anonymous_calls, len(failed) + anonymous_failures


def _nested(messages: list[dict[str, Any]]) -> bool:
    """Whether any message belongs to a subagent (it names the call that spawned it)."""
    return any(text(m.get("parent_tool_use_id")) is not None for m in messages)


def _error_class(result: dict[str, Any]) -> ErrorClass | None:
    subtype = result.get("subtype")
    if subtype == "error_max_turns":
        return "max_turns"
    denials = result.get("permission_denials")
    # In headless mode a denial means a tool call never ran: the run did not do what
    # it was asked, even when the client calls it a success.
    if isinstance(denials, list) and denials:
        return "permission_denied"
    if result.get("is_error") is True or (isinstance(subtype, str) and subtype.startswith("error")):
        return "agent_error"
    return None


def _main_model(model_usage: Any) -> str | None:
    """The model that produced the most output (helper models also appear here)."""
    if not isinstance(model_usage, dict) or not model_usage:
        return None
    ranked = sorted(model_usage.items(), key=lambda kv: (count(get(kv[1], "outputTokens")) or 0, kv[0]))
    return text(ranked[-1][0])


ADAPTER = Adapter(name="claude-code", input_includes_cached=False, parse_output=parse)
