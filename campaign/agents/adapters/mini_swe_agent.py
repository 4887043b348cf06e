"""mini-swe-agent: the trajectory JSON (``mini ... -o FILE``, printed to stdout by the profile).

Shape (2.x, ``"trajectory_format": "mini-swe-agent-1.1"``)::

    {"info": {"exit_status": "Submitted" | "LimitsExceeded" | "RepeatedFormatError" | "<ExceptionName>",
              "model_stats": {"instance_cost": 0.05, "api_calls": 7},
              "config": {"model": {"model_name": "anthropic/claude-sonnet-4-5", ...}}},
     "messages": [
       {"role": "assistant", "content": "...", "tool_calls": [...],
        "extra": {"cost": 0.002, "response": {"id": "chatcmpl-...", "model": "...",
                  "usage": {"prompt_tokens", "completion_tokens",
                            "prompt_tokens_details": {"cached_tokens"},
                            "cache_creation_input_tokens"}}}},
       {"role": "tool", "tool_call_id": "...", "content": "{\\"returncode\\": 1, \\"output\\": ...}",
        "extra": {"returncode": 1, "exception_info": "", ...}},
       {"role": "user", "content": "Format error: ...",
        "extra": {"interrupt_type": "FormatError", "cost": 0.001, "response": {...}}},
       {"role": "exit", "extra": {"exit_status": "Submitted"}}]}

Every model call is one completed parent turn: an assistant message, or a
format-error message that keeps the response it could not parse (2.x). The
Responses-API model class stores the response object itself as the message
(``"object": "response"``, usage ``input_tokens``/``output_tokens``/
``input_tokens_details.cached_tokens``). A response id names both the request
and the usage that came back with it. Input figures include cache reads (OpenAI
convention); through litellm's Anthropic route they also include cache writes
(``cache_creation_input_tokens``), which are taken out of the uncached part.

Each command's result is an observation message. 2.x keeps the return code in
``extra.returncode``: the tool-calling config sends it as a ``tool`` message
whose content is JSON (``{"returncode": N, ...}``), the text-based one as a
``user`` message starting ``<returncode>N</returncode>``. A non-zero code is a
failed call; a command killed at its timeout gets code -1 (2.x) or, in 1.x, the
``timeout_template`` observation ("The last command <command>...</command> timed
out and has been killed."), also a failure. The tool-calling config pads the
submit command, which ended the run, with a result of code -1 and
``exception_info`` "action was not executed": that is the end of the run, not a
failed command, and the text-based config records no result for it at all, so
it is not counted (the two variants count the same commands). A 1.x trajectory
has no ``extra`` on observations: its codes are read from the content, and with
none found the tool counts are unknown rather than 0.

Cost: ``instance_cost``. With ``MSWEA_COST_TRACKING=ignore_errors`` a model
litellm cannot price costs 0.0, which is not an observation (a real call is
never free): a 0.0 total after model calls is unknown, and a total with some
0.0 calls in it is a partial sum, not a reported cost.
"""

from __future__ import annotations

import re
from typing import Any

from campaign.agents.adapters.base import Adapter
from campaign.agents.adapters._read import count, get, load_json, money, text, total
from campaign.agents.record import AgentRecord, ErrorClass, TurnUsage, unknown_record, with_error

_RETURNCODE = re.compile(r"<returncode>\s*(-?\d+)\s*</returncode>")
_TIMED_OUT = re.compile(r"\s*The last command <command>.*</command> timed out and has been killed", re.S)
_TIMEOUT_CODE = -1  # stands for "no return code: killed at the timeout", which is a failure
_NOT_EXECUTED = "action was not executed"
_V2_FORMAT = "mini-swe-agent-1.1"


def parse(body: str, exit_code: int | None) -> AgentRecord:
    trajectory = load_json(body)
    if not isinstance(trajectory, dict) or not isinstance(trajectory.get("messages"), list):
        return unknown_record("unparseable_output", input_includes_cached=True)
    messages = [m for m in trajectory["messages"] if isinstance(m, dict)]
    responses = [r for r in (_response(m) for m in messages) if r is not None]
    turns = tuple(_turn(r) for r in responses)
    writes = [_cache_write(get(r, "usage")) for r in responses]
    outcomes = _tool_outcomes(messages)
    # 2.x records every observation in ``extra``, so no observation is an observed 0.
    tools_visible = bool(outcomes) or trajectory.get("trajectory_format") == _V2_FORMAT
    cost, cost_reported = _cost(trajectory, messages, len(responses))
    record = AgentRecord(
        completed_turns=len(turns),
        uncached_input_tokens=total([t.input_tokens for t in turns]),
        cached_input_tokens=total([t.cache_read_tokens for t in turns]),
        cache_write_tokens=total(writes),
        output_tokens=total([t.output_tokens for t in turns]),
        tool_calls=len(outcomes) if tools_visible else None,
        tool_errors=sum(1 for failed in outcomes if failed) if tools_visible else None,
        cost_usd=cost,
        cost_reported=cost_reported,
        model=text(get(trajectory, "info", "config", "model", "model_name")) or _first_model(responses),
        error_class=_error_class(get(trajectory, "info", "exit_status")),
        turn_usage=turns,
        # One agent, one conversation: the trajectory format has no sub-sessions.
        nested_sessions_observed=False,
        input_includes_cached=True,
    )
    if exit_code not in (0, None):
        record = with_error(record, "agent_error")
    return record


def _response(message: dict[str, Any]) -> dict[str, Any] | None:
    """The model response this message records, if it records one."""
    if message.get("object") == "response":  # Responses-API model class: the message is the response
        return message
    response = get(message, "extra", "response")
    if message.get("role") == "assistant" or get(message, "extra", "interrupt_type") == "FormatError":
        return response if isinstance(response, dict) else {}
    return None


def _turn(response: dict[str, Any]) -> TurnUsage:
    usage = get(response, "usage")
    chat = isinstance(usage, dict) and "prompt_tokens" in usage
    raw_input = count(get(usage, "prompt_tokens" if chat else "input_tokens"))
    cached = count(get(usage, "prompt_tokens_details" if chat else "input_tokens_details", "cached_tokens"))
    return TurnUsage(
        request_id=text(get(response, "id")),
        usage_id=text(get(response, "id")),
        input_tokens=_uncached(raw_input, cached, _cache_write(usage)),
        output_tokens=count(get(usage, "completion_tokens" if chat else "output_tokens")),
        cache_read_tokens=cached,
    )


def _cache_write(usage: Any) -> int | None:
    """Cache writes litellm reports for the Anthropic route (folded into ``prompt_tokens``)."""
    for path in (("cache_creation_input_tokens",), ("prompt_tokens_details", "cache_creation_tokens")):
        value = count(get(usage, *path))
        if value is not None:
            return value
    return None


def _uncached(raw_input: int | None, cached: int | None, written: int | None) -> int | None:
    if raw_input is None or cached is None:
        return None
    rest = raw_input - cached - (written or 0)
    return rest if rest >= 0 else None


def _tool_outcomes(messages: list[dict[str, Any]]) -> list[bool]:
    """One entry per command that ran, True when it failed."""
    outcomes = []
    for message in messages:
        extra = message.get("extra")
        if isinstance(extra, dict) and "returncode" in extra and _is_observation(message):
            if extra.get("exception_info") == _NOT_EXECUTED:
                continue
            code = extra.get("returncode")
            outcomes.append(not (type(code) is int and code == 0))
            continue
        code = _code_in_content(message)
        if code is not None:
            outcomes.append(code != 0)
    return outcomes


def _is_observation(message: dict[str, Any]) -> bool:
    return message.get("role") in ("tool", "user") or message.get("type") == "function_call_output"


def _code_in_content(message: dict[str, Any]) -> int | None:
    """A 1.x observation's return code, read from its text (None: not an observation)."""
    content = message.get("content")
    if not isinstance(content, str):
        return None
    if message.get("role") == "user":
        match = _RETURNCODE.search(content)
        if match:
            return int(match.group(1))
        return _TIMEOUT_CODE if _TIMED_OUT.match(content) else None
    if message.get("role") == "tool":
        value = load_json(content)
        code = value.get("returncode") if isinstance(value, dict) else None
        return code if type(code) is int else None
    return None


def _cost(trajectory: dict[str, Any], messages: list[dict[str, Any]], calls: int) -> tuple[float | None, bool]:
    cost = money(get(trajectory, "info", "model_stats", "instance_cost"))
    if cost is None or (cost == 0 and calls > 0):
        return None, False
    # 2.x records each call's cost next to its response; 1.x only the total.
    per_call = [get(m, "extra", "cost") for m in messages if _response(m) is not None and _has(m.get("extra"), "cost")]
    unpriced = any(not money(c) for c in per_call)
    return cost, not unpriced


def _has(value: Any, key: str) -> bool:
    return isinstance(value, dict) and key in value


def _error_class(exit_status: Any) -> ErrorClass | None:
    if exit_status in (None, "Submitted"):
        return None
    return "max_turns" if exit_status == "LimitsExceeded" else "agent_error"


def _first_model(responses: list[dict[str, Any]]) -> str | None:
    return next((m for m in (text(get(r, "model")) for r in responses) if m), None)


ADAPTER = Adapter(name="mini-swe-agent", input_includes_cached=True, parse_output=parse)
