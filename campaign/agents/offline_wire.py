"""The offline agent's wire mode: its planned turns as real Anthropic Messages requests.

Each turn is one ``POST {base_url}/v1/messages`` carrying the disclosure
profile's synthetic tool catalog, so the recording proxy sees a catalog that
differs by variant exactly as a real client's would. The conversation grows by
one placeholder assistant/user exchange per turn (so a stateless replay server
advances through its script); no task text is sent. Even turns stream.
"""

from __future__ import annotations

import json
import random
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import Any

# Tools a legacy catalog discloses up front; the coding profile discloses the first six.
_TOOL_NAMES = ("read_file", "write_file", "edit_file", "run_command", "search_tools", "invoke_tool") + tuple(
    f"bridge_tool_{k:02d}" for k in range(31)
)
CATALOG_SIZES = {"legacy": 37, "coding": 6}
_TIMEOUT_S = 60


class WireFailed(Exception):
    """A model request did not complete (connection, status or unreadable body)."""


def synthetic_tools(profile: str | None) -> list[dict[str, Any]]:
    size = CATALOG_SIZES.get(profile or "legacy", CATALOG_SIZES["legacy"])
    return [
        {
            "name": name,
            "description": f"Synthetic offline tool {name} (no effect).",
            "input_schema": {
                "type": "object",
                "properties": {"path": {"type": "string"}, "command": {"type": "string"}, "content": {"type": "string"}},
                "required": [],
            },
        }
        for name in _TOOL_NAMES[:size]
    ]


def send_turns(
    base_url: str, model: str, profile: str | None, turns: Sequence[dict[str, Any]], shuffle: str | None = None, thinking_budget: int | None = None,
    system: str | None = None,
) -> tuple[dict[str, Any], ...]:
    """One request per planned turn; the turns come back with the server's ids and usage.
    ``shuffle``: send the tools in an order drawn from this string (the same catalog);
    ``thinking_budget``: ask for extended thinking with it; ``system``: send this system prompt."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    tools = synthetic_tools(profile)
    if shuffle is not None:
        random.Random(shuffle).shuffle(tools)
    messages: list[dict[str, Any]] = []
    out = []
    for i, turn in enumerate(turns, start=1):
        messages.append({"role": "user", "content": f"offline turn {i}"})
        body = {"model": model.partition(":")[2] or model, "max_tokens": 1024, "tools": tools, "messages": messages, "stream": i % 2 == 0}
        if system is not None:
            body["system"] = system
        if thinking_budget is not None:
            body["thinking"] = {"type": "enabled", "budget_tokens": thinking_budget}
        response_id, usage = _post(opener, base_url.rstrip("/") + "/v1/messages", body)
        out.append({**turn, "usage_id": response_id, "usage": usage})
        messages.append({"role": "assistant", "content": [{"type": "text", "text": f"offline step {i}"}]})
    return tuple(out)


def _post(opener, url: str, body: dict[str, Any]) -> tuple[str, dict[str, int]]:
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode("utf-8"),
        headers={"content-type": "application/json", "anthropic-version": "2023-06-01", "x-api-key": "offline"},
        method="POST",
    )
    try:
        with opener.open(request, timeout=_TIMEOUT_S) as response:
            raw = response.read()
            streamed = "text/event-stream" in response.headers.get("Content-Type", "")
    except (urllib.error.URLError, OSError) as exc:
        raise WireFailed(exc.__class__.__name__) from None
    message_id, usage = _from_stream(raw) if streamed else _from_json(raw)
    if not isinstance(message_id, str) or not isinstance(usage, dict):
        raise WireFailed("no message id or usage in the response")
    return message_id, _counters(usage)


def _from_json(raw: bytes) -> tuple[Any, Any]:
    try:
        data = json.loads(raw)
    except ValueError:
        raise WireFailed("unreadable response body") from None
    return (data.get("id"), data.get("usage")) if isinstance(data, dict) else (None, None)


def _from_stream(raw: bytes) -> tuple[Any, Any]:
    message_id, usage = None, None
    for line in raw.decode("utf-8", errors="replace").splitlines():
        if not line.startswith("data:"):
            continue
        try:
            event = json.loads(line[5:])
        except ValueError:
            continue
        if event.get("type") == "message_start":
            message_id = event["message"].get("id")
            usage = dict(event["message"].get("usage") or {})
        elif event.get("type") == "message_delta" and usage is not None:
            usage.update(event.get("usage") or {})  # cumulative figures: override, never add
    return message_id, usage


def _counters(usage: dict[str, Any]) -> dict[str, int]:
    def n(key: str) -> int:
        value = usage.get(key)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise WireFailed(f"usage {key} is not a count")
        return value

    return {
        "input_tokens": n("input_tokens"),
        "cached_input_tokens": n("cache_read_input_tokens"),
        "cache_write_tokens": n("cache_creation_input_tokens"),
        "output_tokens": n("output_tokens"),
    }
