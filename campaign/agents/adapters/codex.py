"""Codex CLI: ``codex exec --json`` (JSON Lines).

Events used::

    {"type": "thread.started", "thread_id": "..."}
    {"type": "item.completed", "item": {"type": "command_execution", "exit_code": 1, "status": "failed"}}
    {"type": "item.completed", "item": {"type": "error", "message": "..."}}   # a warning only
    {"type": "turn.completed", "usage": {"input_tokens", "cached_input_tokens", "output_tokens"}}
    {"type": "turn.failed", "error": {"message": "..."}}  /  {"type": "error", "message": "..."}

``turn.completed.usage`` is a running total for the thread, so the last one is
the run's total (summing them would double count), and its ``input_tokens``
includes ``cached_input_tokens``. When codex saw no token count it still prints
``Usage::default()``, all zeros; a completed turn always read some input, so an
all-zero usage is unknown, not 0. Codex reports no cost, no model name and no
per-request identities: those stay None. Its ``cache_write_input_tokens``
(0.171) is 0 whenever the provider shows no cache writes, as the Responses API
never does, so a 0 there is not an observation: cache writes stay None too.

A turn here is the user's turn (``codex exec`` has exactly one), not a model
request: one turn holds as many requests as the agent needed, and the events
show no request boundary. So ``completed_turns`` stays None; the recording proxy
counts the requests when the profile routes through it.

A tool call is a completed ``command_execution``, ``file_change``,
``mcp_tool_call`` or ``web_search`` item; it failed when its status is
``failed`` or its command exited non-zero. A command codex declined to run (a
write under ``--sandbox read-only``) leaves no item at all, so it is not counted.

A top-level ``error`` event is also how codex reports a stream retry
("Reconnecting... 1/5"); a fatal error ends the turn with ``turn.failed``. So
an ``error`` is a failure only when no ``turn.completed`` follows it.
"""

from __future__ import annotations

from typing import Any

from campaign.agents.adapters.base import Adapter
from campaign.agents.adapters._read import count, get, load_lines, one_of, text
from campaign.agents.record import AgentRecord, uncached_input, unknown_record, with_error

# Items that are the agent acting on the world (a tool call), and how each one fails.
_TOOL_ITEMS = frozenset({"command_execution", "file_change", "mcp_tool_call", "web_search"})


def parse(body: str, exit_code: int | None) -> AgentRecord:
    lines = load_lines(body)
    events = lines.objects
    if lines.garbled or not events:
        return unknown_record("unparseable_output", input_includes_cached=True)
    completed = [e for e in events if e.get("type") == "turn.completed"]
    usage = completed[-1].get("usage") if completed else None
    if _default_usage(usage):
        usage = None
    raw_input = count(get(usage, "input_tokens"))
    cached = count(get(usage, "cached_input_tokens"))
    tools = [_item(e) for e in events if e.get("type") == "item.completed" and one_of(_item(e).get("type"), _TOOL_ITEMS)]
    record = AgentRecord(
        uncached_input_tokens=uncached_input(raw_input, cached, input_includes_cached=True),
        cached_input_tokens=cached,
        output_tokens=count(get(usage, "output_tokens")),
        tool_calls=len(tools),
        tool_errors=sum(1 for item in tools if _failed(item)),
        cost_usd=None,
        cost_reported=False,
        session_id=next((text(e.get("thread_id")) for e in events if e.get("type") == "thread.started"), None),
        input_includes_cached=True,
    )
    if lines.truncated:  # killed mid-write: keep what the complete lines showed
        record = with_error(record, "unparseable_output")
    if _failed_run(events):
        record = with_error(record, "agent_error")
    if exit_code not in (0, None):
        record = with_error(record, "agent_error")
    return record


def _default_usage(usage: Any) -> bool:
    """Whether ``usage`` is codex's all-zero placeholder for "no token count seen"."""
    figures = [count(get(usage, k)) for k in ("input_tokens", "cached_input_tokens", "output_tokens")]
    return all(f == 0 for f in figures)


def _failed_run(events: tuple[dict[str, Any], ...]) -> bool:
    """A failed turn, or an error event that no completed turn recovered from."""
    last_error = last_completed = -1
    for index, event in enumerate(events):
        kind = event.get("type")
        if kind == "turn.failed":
            return True
        if kind == "error":
            last_error = index
        elif kind == "turn.completed":
            last_completed = index
    return last_error > last_completed


def _item(event: dict[str, Any]) -> dict[str, Any]:
    item = event.get("item")
    return item if isinstance(item, dict) else {}


def _failed(item: dict[str, Any]) -> bool:
    if item.get("status") == "failed":
        return True
    code = item.get("exit_code")
    # Any non-zero int fails, negative ones (killed by a signal) included; bool is not a code.
    return item.get("type") == "command_execution" and type(code) is int and code != 0


ADAPTER = Adapter(name="codex", input_includes_cached=True, parse_output=parse)
