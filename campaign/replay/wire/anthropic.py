"""Anthropic Messages API (``POST /v1/messages``), streamed and not."""

from __future__ import annotations

import copy
import json
from typing import Any

from campaign.replay.tools import ToolSpec
from campaign.replay.turns import Conversation, Reply, count_turns
from campaign.replay.wire.sse import frame, new_id, pieces, text_parts



def parse(body: dict[str, Any], path: str = "") -> Conversation:
    del path  # the format is all in the body
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    opening = text_parts(body.get("system"))
    for message in messages:
        if message.get("role") == "assistant":
            break
        opening += text_parts(message.get("content"))
    tools = tuple(
        ToolSpec(t["name"], t.get("description") or "", t.get("input_schema") or {})
        for t in body.get("tools") or []
        # Server tools (web search and the like) have a type and no input schema.
        if isinstance(t, dict) and isinstance(t.get("name"), str) and isinstance(t.get("input_schema"), dict)
    )
    return Conversation(
        model=str(body.get("model") or "replay"),
        tools=tools,
        assistant_turns=count_turns(m.get("role") == "assistant" for m in messages),
        opening=tuple(opening),
        stream=bool(body.get("stream")),
    )


def render(reply: Reply, conversation: Conversation) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if reply.action.text:
        content.append({"type": "text", "text": reply.action.text})
    call = reply.action.call
    if call is not None:
        content.append({"type": "tool_use", "id": new_id("toolu_"), "name": call.name, "input": call.arguments})
    usage = reply.usage
    return {
        "id": new_id("msg_"),
        "type": "message",
        "role": "assistant",
        "model": conversation.model,
        "content": content,
        "stop_reason": "tool_use" if call is not None else "end_turn",
        "stop_sequence": None,
        "usage": {
            "input_tokens": usage.uncached_input,
            "cache_read_input_tokens": usage.cached_input,
            "cache_creation_input_tokens": usage.cache_write,
            "output_tokens": usage.output,
        },
    }


def _block_events(index: int, block: dict[str, Any]) -> list[bytes]:
    if block["type"] == "text":
        start = {"type": "text", "text": ""}
        deltas = [{"type": "text_delta", "text": p} for p in pieces(block["text"], 24)]
    else:
        start = {**block, "input": {}}
        deltas = [{"type": "input_json_delta", "partial_json": p} for p in pieces(json.dumps(block["input"]), 32)]
    return [
        frame({"type": "content_block_start", "index": index, "content_block": start}, "content_block_start"),
        *(frame({"type": "content_block_delta", "index": index, "delta": d}, "content_block_delta") for d in deltas),
        frame({"type": "content_block_stop", "index": index}, "content_block_stop"),
    ]


def stream(body: dict[str, Any], conversation: Conversation) -> list[bytes]:
    del conversation
    started = copy.deepcopy(body)
    started.update(content=[], stop_reason=None)
    # The start event carries the input side; output is counted at the end, as Anthropic does.
    started["usage"]["output_tokens"] = 1
    frames = [frame({"type": "message_start", "message": started}, "message_start")]
    for index, block in enumerate(body["content"]):
        frames += _block_events(index, block)
    delta = {
        "type": "message_delta",
        "delta": {"stop_reason": body["stop_reason"], "stop_sequence": None},
        # Cumulative, not an increment: the final output count of the whole message.
        "usage": {"output_tokens": body["usage"]["output_tokens"]},
    }
    frames.append(frame(delta, "message_delta"))
    frames.append(frame({"type": "message_stop"}, "message_stop"))
    return frames


def error(message: str, kind: str = "api_error") -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}
