"""opencode: ``opencode run --format json`` (JSON Lines).

Events used (each carries ``sessionID`` and a ``part``)::

    {"type": "step_start",  "part": {"id": "prt_a", "type": "step-start", ...}}
    {"type": "tool_use",    "part": {"id": "prt_b", "type": "tool", "tool": "bash",
                                     "state": {"status": "completed" | "error", ...}}}
    {"type": "step_finish", "part": {"id": "prt_c", "type": "step-finish", "cost": 0.01,
                                     "tokens": {"input", "output", "reasoning",
                                                "cache": {"read", "write"}}}}
    {"type": "error", "error": {"name": "...", "data": {...}}}

One step is one model request, so a ``step_start`` matched with the next
``step_finish`` of the same session is one completed parent turn; the start
part id names the request and the finish part id its terminal usage.
``tokens.input`` excludes cache reads and writes; output is ``output +
reasoning`` (reasoning is billed as output). Only the first (parent) session is
counted: another session, or a ``task`` tool that spawns a subagent, marks
``nested_sessions_observed`` because its spend is not proven to be in ours.
"""

from __future__ import annotations

from typing import Any

from campaign.agents.adapters import Adapter
from campaign.agents.adapters._read import count, decode, get, load_lines, money, text, total
from campaign.agents.record import AgentRecord, TurnUsage, unknown_record, with_error


def parse(stdout: bytes, stderr: bytes, exit_code: int | None) -> AgentRecord:
    body = decode(stdout)
    if body is None:
        return unknown_record("unparseable_output", input_includes_cached=False)
    if not body.strip():
        return unknown_record("empty_output", input_includes_cached=False)
    lines = load_lines(body)
    if lines.garbled or not lines.objects:
        return unknown_record("unparseable_output", input_includes_cached=False)
    events = lines.objects
    parent = next((s for s in (_session(e) for e in events) if s), None)
    mine = [e for e in events if _session(e) in (parent, None)]
    turns, finishes = _steps(mine)
    tools = _tools(mine)
    costs = [money(get(f, "cost")) for f in finishes]
    known_costs = [c for c in costs if c is not None]
    record = AgentRecord(
        completed_turns=len(turns),
        uncached_input_tokens=total([count(get(f, "tokens", "input")) for f in finishes]),
        cached_input_tokens=total([count(get(f, "tokens", "cache", "read")) for f in finishes]),
        cache_write_tokens=total([count(get(f, "tokens", "cache", "write")) for f in finishes]),
        output_tokens=total([_output(f) for f in finishes]),
        tool_calls=len(tools),
        tool_errors=sum(1 for t in tools.values() if get(t, "state", "status") == "error"),
        # A partial sum is kept as a number but not called reported (see AgentRecord).
        cost_usd=sum(known_costs) if known_costs else None,
        cost_reported=bool(costs) and len(known_costs) == len(costs),
        session_id=parent,
        turn_usage=turns,
        nested_sessions_observed=len(mine) < len(events) or any(t.get("tool") == "task" for t in tools.values()),
        input_includes_cached=False,
    )
    if lines.truncated:  # killed mid-write: keep what the complete lines showed
        record = with_error(record, "unparseable_output")
    if any(e.get("type") == "error" for e in events):
        record = with_error(record, "agent_error")
    if exit_code not in (0, None):
        record = with_error(record, "agent_error")
    return record


def _session(event: dict[str, Any]) -> str | None:
    return text(event.get("sessionID")) or text(get(event, "part", "sessionID"))


def _steps(events: list[dict[str, Any]]) -> tuple[tuple[TurnUsage, ...], list[dict[str, Any]]]:
    """Pair each step_finish with the step_start before it; unmatched ones keep request_id None."""
    pending: list[str | None] = []
    turns: list[TurnUsage] = []
    finishes: list[dict[str, Any]] = []
    for event in events:
        part = event.get("part") if isinstance(event.get("part"), dict) else {}
        if event.get("type") == "step_start":
            pending.append(text(part.get("id")))
        elif event.get("type") == "step_finish":
            finishes.append(part)
            turns.append(
                TurnUsage(
                    request_id=pending.pop(0) if pending else None,
                    usage_id=text(part.get("id")),
                    input_tokens=count(get(part, "tokens", "input")),
                    output_tokens=_output(part),
                    cache_read_tokens=count(get(part, "tokens", "cache", "read")),
                )
            )
    return tuple(turns), finishes


def _output(finish: Any) -> int | None:
    return total([count(get(finish, "tokens", "output")), count(get(finish, "tokens", "reasoning"))])


def _tools(events: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Finished tool parts by id (a part may be re-emitted as its state changes)."""
    tools: dict[str, dict[str, Any]] = {}
    for index, event in enumerate(events):
        part = event.get("part")
        if event.get("type") == "tool_use" and isinstance(part, dict):
            tools[text(part.get("id")) or f"#{index}"] = part
    return tools


ADAPTER = Adapter(name="opencode", input_includes_cached=False, parse_output=parse)
