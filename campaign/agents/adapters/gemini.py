"""Gemini CLI: ``gemini -p --output-format stream-json`` (JSON Lines), or ``json``.

The stream (what the built-in profile asks for) is one event per line::

    {"type": "init", "session_id": "...", "model": "gemini-2.5-pro"}
    {"type": "message", "role": "assistant", "content": "...", "delta": true}
    {"type": "tool_use", "tool_name": "run_shell_command", "tool_id": "...", "parameters": {...}}
    {"type": "tool_result", "tool_id": "...", "status": "success" | "error", "error": {...}}
    {"type": "result", "status": "success" | "error",
     "stats": {"input_tokens", "cached", "input", "output_tokens", "tool_calls", "models": {...}}}

``input_tokens`` includes ``cached`` (``input`` is the uncached part). A tool
call whose result has status ``error`` failed; a shell command that exits
non-zero is a *successful* call to the CLI, so that failure shows only on the
wire (the recording proxy counts it from what the CLI sends the model). There is
no per-request identity and no cost: the wire supplies turns, and the engine
costs the attempt from the wire's proven usage.

The older single-object output (``--output-format json``) is one object::

    {"session_id": "...", "response": "...",
     "stats": {"models": {"<model>": {"api": {"totalRequests", "totalErrors", ...},
                                      "tokens": {"prompt", "candidates", "cached",
                                                 "thoughts", "tool", "total"}}},
               "tools": {"totalCalls", "totalSuccess", "totalFail", ...}},
     "error": {"type": "...", "message": "...", "code": ...}}

Several models may appear (the CLI routes some calls to a small model); their
tokens are summed. ``prompt`` includes ``cached`` (Gemini's cached content is a
subset of the prompt), so uncached input is the difference. Output is
``candidates + thoughts``, because thinking tokens are billed as output. The
CLI reports no cost, no cache writes, no per-request identities and nothing
that maps onto parent turns, so those stay None.
"""

from __future__ import annotations

from typing import Any

from campaign.agents.adapters.base import Adapter
from campaign.agents.adapters._read import count, get, load_json, load_lines, text, total
from campaign.agents.record import AgentRecord, uncached_input, unknown_record, with_error


def parse(body: str, exit_code: int | None) -> AgentRecord:
    result = load_json(body)
    if not isinstance(result, dict):
        return _parse_stream(body, exit_code)
    models = get(result, "stats", "models")
    tokens = [get(m, "tokens") for m in models.values()] if isinstance(models, dict) and models else []
    prompt = total([count(get(t, "prompt")) for t in tokens])
    cached = total([count(get(t, "cached")) for t in tokens])
    output = total([_output(t) for t in tokens])
    record = AgentRecord(
        uncached_input_tokens=uncached_input(prompt, cached, input_includes_cached=True),
        cached_input_tokens=cached,
        output_tokens=output,
        tool_calls=count(get(result, "stats", "tools", "totalCalls")),
        tool_errors=count(get(result, "stats", "tools", "totalFail")),
        cost_usd=None,
        cost_reported=False,
        session_id=text(result.get("session_id")),
        model=_main_model(models),
        error_class="agent_error" if result.get("error") not in (None, False) else None,
        input_includes_cached=True,
    )
    if exit_code not in (0, None):
        record = with_error(record, "agent_error")
    return record


def _parse_stream(body: str, exit_code: int | None) -> AgentRecord:
    lines = load_lines(body)
    if lines.garbled or not lines.objects:
        return unknown_record("unparseable_output", input_includes_cached=True)
    events = lines.objects
    init = next((e for e in events if e.get("type") == "init"), {})
    result = next((e for e in reversed(events) if e.get("type") == "result"), None)
    stats = get(result, "stats") if result else None
    calls = {text(e.get("tool_id")) or f"#{i}": e for i, e in enumerate(events) if e.get("type") == "tool_use"}
    failed = {text(e.get("tool_id")) for e in events if e.get("type") == "tool_result" and e.get("status") == "error"}
    prompt, cached = count(get(stats, "input_tokens")), count(get(stats, "cached"))
    record = AgentRecord(
        uncached_input_tokens=uncached_input(prompt, cached, input_includes_cached=True),
        cached_input_tokens=cached,
        output_tokens=count(get(stats, "output_tokens")),
        tool_calls=len(calls),
        tool_errors=len(failed),
        cost_usd=None,
        cost_reported=False,
        session_id=text(init.get("session_id")),
        model=text(init.get("model")),
        input_includes_cached=True,
    )
    if lines.truncated:  # killed mid-write: keep what the complete lines showed
        record = with_error(record, "unparseable_output")
    if result is None or result.get("status") != "success" or any(e.get("type") == "error" for e in events):
        record = with_error(record, "agent_error")
    if exit_code not in (0, None):
        record = with_error(record, "agent_error")
    return record


def _output(tokens: Any) -> int | None:
    # Without the thoughts figure the billed output is unknown, not just the candidates.
    return total([count(get(tokens, "candidates")), count(get(tokens, "thoughts"))])


def _main_model(models: Any) -> str | None:
    """The model that served the most requests (the router model serves few)."""
    if not isinstance(models, dict) or not models:
        return None
    ranked = sorted(models.items(), key=lambda kv: (count(get(kv[1], "api", "totalRequests")) or 0, kv[0]))
    return text(ranked[-1][0])


ADAPTER = Adapter(name="gemini", input_includes_cached=True, parse_output=parse)
