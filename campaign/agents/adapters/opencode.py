"""opencode: ``opencode run --format json`` (JSON Lines).

Events used (each carries ``sessionID`` and a ``part``)::

    {"type": "step_start",  "part": {"id": "prt_a", "type": "step-start", ...}}
    {"type": "tool_use",    "part": {"id": "prt_b", "type": "tool", "tool": "bash", "callID": "call_b",
                                     "state": {"status": "completed" | "error",
                                               "metadata": {"exit": 1, ...}, ...}}}
    {"type": "step_finish", "part": {"id": "prt_c", "type": "step-finish", "cost": 0.01,
                                     "tokens": {"input", "output", "reasoning",
                                                "cache": {"read", "write"}}}}
    {"type": "error", "error": {"name": "...", "data": {...}}}
    {"type": "done", "reason": "idle", ...}    # last line, from newer clients

One step is one model request, so a ``step_finish`` closes the ``step_start``
just before it, and that pair is one completed parent turn; the start part id
names the request and the finish part id its terminal usage. A start that no
finish closes (a request that errored and was retried, or was cut off) is a
request without terminal usage: it stays in ``turn_usage`` unmatched.
``tokens.input`` excludes cache reads and writes; output is ``output +
reasoning`` (reasoning is billed as output). Only the first (parent) session is
counted: another session, or a ``task`` tool that spawns a subagent, marks
``nested_sessions_observed`` because its spend is not proven to be in ours.

A failed tool call is an ``error`` state, or a shell command that exited
non-zero (``state.metadata.exit``, like Codex's failed command executions).
Older clients emit ``tool_use`` only for completed tools, so a failed call is
invisible. Tool counts are therefore reported only when the stream shows it
can carry failures: a failed tool part, a shell's exit code, or the closing
``done`` event that clients reporting failed parts print; otherwise they stay
None, not 0.
"""

from __future__ import annotations

from typing import Any

from campaign.agents.adapters.base import Adapter
from campaign.agents.adapters._read import count, get, load_lines, money, text, total
from campaign.agents.record import AgentRecord, TurnUsage, unknown_record, with_error


def parse(body: str, exit_code: int | None) -> AgentRecord:
    lines = load_lines(body)
    if lines.garbled or not lines.objects:
        return unknown_record("unparseable_output", input_includes_cached=False)
    events = lines.objects
    parent = next((s for s in (_session(e) for e in events) if s), None)
    mine = [e for e in events if _session(e) in (parent, None)]
    turns, finishes = _steps(mine)
    tools = _tools(mine)
    errors = sum(1 for t in tools.values() if _failed(t))
    # Shown failures: a failed part, the closing done event, or a shell's exit code.
    failures_visible = errors > 0 or any(e.get("type") == "done" for e in mine) or any(_exit(t) is not None for t in tools.values())
    costs = [_cost(f) for f in finishes]
    known_costs = [c for c in costs if c is not None]
    record = AgentRecord(
        completed_turns=len(finishes),
        uncached_input_tokens=total([count(get(f, "tokens", "input")) for f in finishes]),
        cached_input_tokens=total([count(get(f, "tokens", "cache", "read")) for f in finishes]),
        cache_write_tokens=total([count(get(f, "tokens", "cache", "write")) for f in finishes]),
        output_tokens=total([_output(f) for f in finishes]),
        tool_calls=len(tools) if failures_visible else None,
        tool_errors=errors if failures_visible else None,
        # A partial sum is kept as a number but not called reported (see AgentRecord):
        # a finish without a cost, or a request that never finished, has no figure.
        cost_usd=sum(known_costs) if known_costs else None,
        cost_reported=bool(costs) and len(known_costs) == len(costs) and len(turns) == len(finishes),
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


def _cost(finish: dict[str, Any]) -> float | None:
    """A step's cost; None when it billed tokens at 0.0: opencode prices a model missing from
    its table at 0, which is unpriced, not free (the wire's figure is then the cost)."""
    cost = money(get(finish, "cost"))
    billed = any(n for n in (count(get(finish, "tokens", "input")), _output(finish), count(get(finish, "tokens", "cache", "read"))))
    return None if cost == 0 and billed else cost


def _session(event: dict[str, Any]) -> str | None:
    return text(event.get("sessionID")) or text(get(event, "part", "sessionID"))


def _steps(events: list[dict[str, Any]]) -> tuple[tuple[TurnUsage, ...], list[dict[str, Any]]]:
    """Pair each step_finish with the latest open step_start; a finish without one keeps
    request_id None, and a start never finished is appended with usage_id None."""
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
                    request_id=pending.pop() if pending else None,
                    usage_id=text(part.get("id")),
                    input_tokens=count(get(part, "tokens", "input")),
                    output_tokens=_output(part),
                    cache_read_tokens=count(get(part, "tokens", "cache", "read")),
                )
            )
    turns += [TurnUsage(request_id=start, usage_id=None, input_tokens=None, output_tokens=None, cache_read_tokens=None)
              for start in pending]
    return tuple(turns), finishes


def _output(finish: Any) -> int | None:
    return total([count(get(finish, "tokens", "output")), count(get(finish, "tokens", "reasoning"))])


def _tools(events: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Finished tool parts by id, or by call id (1.18 parts carry only ``callID``); a part
    may be re-emitted as its state changes."""
    tools: dict[str, dict[str, Any]] = {}
    for index, event in enumerate(events):
        part = event.get("part")
        if event.get("type") == "tool_use" and isinstance(part, dict):
            tools[text(part.get("id")) or text(part.get("callID")) or f"#{index}"] = part
    return tools


def _exit(tool: dict[str, Any]) -> int | None:
    """A shell tool's exit code (``state.metadata.exit``), when the part shows one."""
    code = get(tool, "state", "metadata", "exit")
    return code if isinstance(code, int) and not isinstance(code, bool) else None


def _failed(tool: dict[str, Any]) -> bool:
    """A tool call that failed: an error state, or a command that exited non-zero."""
    return get(tool, "state", "status") == "error" or (_exit(tool) or 0) != 0


ADAPTER = Adapter(name="opencode", input_includes_cached=False, parse_output=parse)
