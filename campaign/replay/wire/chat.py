"""OpenAI Chat Completions (``POST /v1/chat/completions``), streamed and not."""

from __future__ import annotations

import json
from typing import Any

from campaign.replay.tools import ToolSpec
from campaign.replay.turns import Conversation, Reply, count_turns
from campaign.replay.wire.sse import frame, new_id, now, pieces, text_parts

_OPENING_ROLES = ("system", "developer", "user")



def parse(body: dict[str, Any], path: str = "") -> Conversation:
    del path  # the format is all in the body
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    opening: list[str] = []
    for message in messages:
        if message.get("role") == "assistant":
            break
        if message.get("role") in _OPENING_ROLES:
            opening += text_parts(message.get("content"))
    tools = tuple(
        ToolSpec(f["name"], f.get("description") or "", f.get("parameters") or {})
        for t in body.get("tools") or []
        if isinstance(t, dict) and t.get("type") == "function"
        and isinstance(f := t.get("function"), dict) and isinstance(f.get("name"), str)
    )
    options = body.get("stream_options")
    return Conversation(
        model=str(body.get("model") or "replay"),
        tools=tools,
        assistant_turns=count_turns(m.get("role") == "assistant" for m in messages),
        opening=tuple(opening),
        stream=bool(body.get("stream")),
        include_usage=isinstance(options, dict) and options.get("include_usage") is True,
    )


def _usage(reply: Reply) -> dict[str, Any]:
    u = reply.usage
    # OpenAI counts cached tokens inside prompt_tokens.
    return {
        "prompt_tokens": u.prompt_total,
        "completion_tokens": u.output,
        "total_tokens": u.prompt_total + u.output,
        "prompt_tokens_details": {"cached_tokens": u.cached_input},
        "completion_tokens_details": {"reasoning_tokens": 0},
    }


def render(reply: Reply, conversation: Conversation) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.action.text or None}
    call = reply.action.call
    if call is not None:
        arguments = json.dumps(call.arguments)
        message["tool_calls"] = [{"id": new_id("call_"), "type": "function", "function": {"name": call.name, "arguments": arguments}}]
    return {
        "id": new_id("chatcmpl-"),
        "object": "chat.completion",
        "created": now(),
        "model": conversation.model,
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": "tool_calls" if call is not None else "stop"}],
        "usage": _usage(reply),
    }


def stream(body: dict[str, Any], conversation: Conversation) -> list[bytes]:
    choice = body["choices"][0]
    message = choice["message"]
    base = {"id": body["id"], "object": "chat.completion.chunk", "created": body["created"], "model": body["model"]}
    # With include_usage every chunk has "usage": null except the extra last one.
    extra = {"usage": None} if conversation.include_usage else {}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        return frame({**base, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}], **extra})

    frames = [chunk({"role": "assistant", "content": ""})]
    frames += [chunk({"content": p}) for p in pieces(message["content"], 24)] if message["content"] else []
    for index, call in enumerate(message.get("tool_calls") or []):
        head = {"index": index, "id": call["id"], "type": "function", "function": {"name": call["function"]["name"], "arguments": ""}}
        frames.append(chunk({"tool_calls": [head]}))
        frames += [chunk({"tool_calls": [{"index": index, "function": {"arguments": p}}]}) for p in pieces(call["function"]["arguments"], 32)]
    frames.append(chunk({}, choice["finish_reason"]))
    if conversation.include_usage:
        frames.append(frame({**base, "choices": [], "usage": body["usage"]}))
    frames.append(frame("[DONE]"))
    return frames


def error(message: str, kind: str = "server_error") -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}
