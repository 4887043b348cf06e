"""mini-swe-agent: the trajectory JSON (``mini ... -o FILE``, printed to stdout by the profile).

Shape::

    {"info": {"exit_status": "Submitted" | "LimitsExceeded" | "<ExceptionName>",
              "model_stats": {"instance_cost": 0.05, "api_calls": 7},
              "config": {"model": {"model_name": "..."}}},
     "messages": [{"role": "assistant", "content": "...",
                   "extra": {"response": {"id": "chatcmpl-...", "model": "...",
                                          "usage": {"prompt_tokens", "completion_tokens",
                                                    "prompt_tokens_details": {"cached_tokens"}}}}},
                  {"role": "user", "content": "<returncode>1</returncode>\\n<output>..."}],
     "trajectory_format": "mini-swe-agent-1"}

Every assistant message is one model call, i.e. one completed parent turn; its
response id names both the request and the usage that came back with it.
``prompt_tokens`` includes cached tokens (OpenAI convention). Each command's
observation starts with ``<returncode>N</returncode>``; a non-zero code is a
tool error. A command killed at its timeout gets no return code: its
observation is the default ``timeout_template`` ("The last command
<command>...</command> timed out and has been killed."), also a failed call.
"""

from __future__ import annotations

import re
from typing import Any

from campaign.agents.adapters import Adapter
from campaign.agents.adapters._read import count, get, load_json, money, text, total
from campaign.agents.record import AgentRecord, ErrorClass, TurnUsage, uncached_input, unknown_record, with_error

_RETURNCODE = re.compile(r"<returncode>\s*(-?\d+)\s*</returncode>")
_TIMED_OUT = re.compile(r"\s*The last command <command>.*</command> timed out and has been killed", re.S)
_TIMEOUT_CODE = -1  # stands for "no return code: killed at the timeout", which is a failure


def parse(body: str, exit_code: int | None) -> AgentRecord:
    trajectory = load_json(body)
    if not isinstance(trajectory, dict) or not isinstance(trajectory.get("messages"), list):
        return unknown_record("unparseable_output", input_includes_cached=True)
    messages = [m for m in trajectory["messages"] if isinstance(m, dict)]
    usages = [get(m, "extra", "response", "usage") for m in messages if m.get("role") == "assistant"]
    responses = [get(m, "extra", "response") for m in messages if m.get("role") == "assistant"]
    turns = tuple(_turn(r) for r in responses)
    codes = _return_codes(messages)
    cost = money(get(trajectory, "info", "model_stats", "instance_cost"))
    record = AgentRecord(
        completed_turns=len(turns),
        uncached_input_tokens=total([t.input_tokens for t in turns]),
        cached_input_tokens=total([t.cache_read_tokens for t in turns]),
        output_tokens=total([count(get(u, "completion_tokens")) for u in usages]),
        tool_calls=len(codes) if codes else None,
        tool_errors=sum(1 for c in codes if c != 0) if codes else None,
        cost_usd=cost,
        cost_reported=cost is not None,
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


def _turn(response: Any) -> TurnUsage:
    usage = get(response, "usage")
    cached = count(get(usage, "prompt_tokens_details", "cached_tokens"))
    return TurnUsage(
        request_id=text(get(response, "id")),
        usage_id=text(get(response, "id")),
        input_tokens=uncached_input(count(get(usage, "prompt_tokens")), cached, input_includes_cached=True),
        output_tokens=count(get(usage, "completion_tokens")),
        cache_read_tokens=cached,
    )


def _return_codes(messages: list[dict[str, Any]]) -> list[int]:
    codes = []
    for message in messages:
        content = message.get("content")
        if message.get("role") == "user" and isinstance(content, str):
            match = _RETURNCODE.search(content)
            if match:
                codes.append(int(match.group(1)))
            elif _TIMED_OUT.match(content):
                codes.append(_TIMEOUT_CODE)
    return codes


def _error_class(exit_status: Any) -> ErrorClass | None:
    if exit_status in (None, "Submitted"):
        return None
    return "max_turns" if exit_status == "LimitsExceeded" else "agent_error"


def _first_model(responses: list[Any]) -> str | None:
    return next((m for m in (text(get(r, "model")) for r in responses) if m), None)


ADAPTER = Adapter(name="mini-swe-agent", input_includes_cached=True, parse_output=parse)
