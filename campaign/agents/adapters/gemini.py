"""Gemini CLI: ``gemini -p --output-format json``.

The output is one object::

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

from campaign.agents.adapters import Adapter
from campaign.agents.adapters._read import count, get, load_json, text, total
from campaign.agents.record import AgentRecord, uncached_input, unknown_record, with_error


def parse(body: str, exit_code: int | None) -> AgentRecord:
    result = load_json(body)
    if not isinstance(result, dict):
        return unknown_record("unparseable_output", input_includes_cached=True)
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
