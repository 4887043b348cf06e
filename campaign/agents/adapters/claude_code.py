"""Claude Code: ``claude -p --output-format json``.

The output is one result object::

    {"type": "result", "subtype": "success" | "error_max_turns" | "error_during_execution",
     "is_error": false, "num_turns": 6, "session_id": "...", "total_cost_usd": 0.12,
     "usage": {"input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens",
               "output_tokens", ...},
     "modelUsage": {"<model>": {"outputTokens", "costUSD", ...}},
     "permission_denials": [{"tool_name", "tool_use_id", "tool_input"}]}

With ``--verbose`` (or ``stream-json``) the same result object is the last
element of an array (or the last line) of messages; it is found either way.
``input_tokens`` here excludes cache reads and cache writes. The result object
has no tool-call counts or per-request usage identities, so those stay None.
"""

from __future__ import annotations

from typing import Any

from campaign.agents.adapters import Adapter
from campaign.agents.adapters._read import count, get, load_json, load_lines, money, text
from campaign.agents.record import AgentRecord, ErrorClass, unknown_record, with_error


def parse(body: str, exit_code: int | None) -> AgentRecord:
    result = _find_result(body)
    if result is None:
        return unknown_record("unparseable_output", input_includes_cached=False)
    cost = money(result.get("total_cost_usd"))
    record = AgentRecord(
        completed_turns=count(result.get("num_turns")),
        uncached_input_tokens=count(get(result, "usage", "input_tokens")),
        cached_input_tokens=count(get(result, "usage", "cache_read_input_tokens")),
        cache_write_tokens=count(get(result, "usage", "cache_creation_input_tokens")),
        output_tokens=count(get(result, "usage", "output_tokens")),
        cost_usd=cost,
        cost_reported=cost is not None,
        session_id=text(result.get("session_id")),
        model=_main_model(result.get("modelUsage")),
        error_class=_error_class(result),
        input_includes_cached=False,
    )
    if exit_code not in (0, None):
        record = with_error(record, "agent_error")
    return record


def _find_result(body: str) -> dict[str, Any] | None:
    whole = load_json(body)
    if isinstance(whole, dict):
        candidates = [whole]
    elif isinstance(whole, list):
        candidates = [m for m in whole if isinstance(m, dict)]
    else:
        lines = load_lines(body)
        if lines.damaged:
            return None
        candidates = list(lines.objects)
    last = candidates[-1] if candidates else None
    return last if last is not None and last.get("type") == "result" else None


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
