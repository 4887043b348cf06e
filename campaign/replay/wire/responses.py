"""OpenAI Responses API (``POST /v1/responses``, what Codex CLI speaks), streamed and not."""

from __future__ import annotations

import copy
import json
from typing import Any

from campaign.replay.tools import ToolSpec
from campaign.replay.turns import Conversation, Reply
from campaign.replay.wire.sse import frame, new_id, now, pieces, text_parts

# Items the model produced. Codex replays its history as these items, so one
# model turn is a run of consecutive ones (reasoning, a message, a function call)
# between the inputs that answer it (function_call_output, user messages).
_MODEL_ITEMS = {
    "function_call", "custom_tool_call", "local_shell_call", "reasoning", "web_search_call",
    "computer_call", "file_search_call", "image_generation_call", "mcp_call", "code_interpreter_call",
}
_INPUT_ITEMS = {"function_call_output", "custom_tool_call_output", "local_shell_call_output", "computer_call_output", "mcp_call_output"}
_OPENING_ROLES = ("system", "developer", "user")


def _kind(item: dict[str, Any]) -> str:
    """``model``, ``input`` or ``other`` (unknown items neither start nor end a turn)."""
    kind = item.get("type", "message" if "role" in item else None)
    if kind == "message":
        return "model" if item.get("role") == "assistant" else "input"
    if kind in _MODEL_ITEMS:
        return "model"
    return "input" if kind in _INPUT_ITEMS else "other"



def _turns_and_opening(items: list[dict[str, Any]]) -> tuple[int, list[str]]:
    turns, in_turn, opening = 0, False, []
    for item in items:
        kind = _kind(item)
        if kind == "model" and not in_turn:
            turns, in_turn = turns + 1, True
        elif kind == "input":
            in_turn = False
            if turns == 0 and item.get("role") in _OPENING_ROLES:
                opening += _texts_of(item.get("content"))
    return turns, opening


def _texts_of(content: Any) -> list[str]:
    return text_parts(content, ("input_text", "text"))


def parse(body: dict[str, Any], path: str = "") -> Conversation:
    del path  # the format is all in the body
    raw = body.get("input")
    items = [{"role": "user", "content": raw}] if isinstance(raw, str) else [i for i in raw or [] if isinstance(i, dict)]
    turns, opening = _turns_and_opening(items)
    if isinstance(body.get("instructions"), str):
        opening.insert(0, body["instructions"])
    tools = tuple(
        ToolSpec(t["name"], t.get("description") or "", t.get("parameters") or {})
        for t in body.get("tools") or []
        # Custom (free-form) and built-in tools (apply_patch, local_shell, web_search) are not used.
        if isinstance(t, dict) and t.get("type") == "function" and isinstance(t.get("name"), str)
    )
    return Conversation(
        model=str(body.get("model") or "replay"),
        tools=tools,
        assistant_turns=turns,
        opening=tuple(opening),
        stream=bool(body.get("stream")),
    )


def render(reply: Reply, conversation: Conversation) -> dict[str, Any]:
    output: list[dict[str, Any]] = []
    if reply.action.text:
        part = {"type": "output_text", "text": reply.action.text, "annotations": []}
        output.append({"type": "message", "id": new_id("msg_"), "status": "completed", "role": "assistant", "content": [part]})
    call = reply.action.call
    if call is not None:
        output.append({
            "type": "function_call", "id": new_id("fc_"), "call_id": new_id("call_"),
            "name": call.name, "arguments": json.dumps(call.arguments), "status": "completed",
        })
    u = reply.usage
    return {
        "id": new_id("resp_"),
        "object": "response",
        "created_at": now(),
        "status": "completed",
        "error": None,
        "incomplete_details": None,
        "model": conversation.model,
        "output": output,
        "parallel_tool_calls": False,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            # OpenAI counts cached tokens inside input_tokens.
            "input_tokens": u.prompt_total,
            "input_tokens_details": {"cached_tokens": u.cached_input},
            "output_tokens": u.output,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": u.prompt_total + u.output,
        },
    }


def _item_events(index: int, item: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    ref = {"item_id": item["id"], "output_index": index}
    if item["type"] == "message":
        part = item["content"][0]
        text = part["text"]
        return [
            ("response.output_item.added", {"output_index": index, "item": {**item, "status": "in_progress", "content": []}}),
            ("response.content_part.added", {**ref, "content_index": 0, "part": {**part, "text": ""}}),
            *(("response.output_text.delta", {**ref, "content_index": 0, "delta": p, "logprobs": []}) for p in pieces(text, 24)),
            ("response.output_text.done", {**ref, "content_index": 0, "text": text, "logprobs": []}),
            ("response.content_part.done", {**ref, "content_index": 0, "part": part}),
            ("response.output_item.done", {"output_index": index, "item": item}),
        ]
    arguments = item["arguments"]
    return [
        ("response.output_item.added", {"output_index": index, "item": {**item, "status": "in_progress", "arguments": ""}}),
        *(("response.function_call_arguments.delta", {**ref, "delta": p}) for p in pieces(arguments, 32)),
        ("response.function_call_arguments.done", {**ref, "name": item["name"], "arguments": arguments}),
        ("response.output_item.done", {"output_index": index, "item": item}),
    ]


def stream(body: dict[str, Any], conversation: Conversation) -> list[bytes]:
    del conversation
    pending = copy.deepcopy(body)
    pending.update(status="in_progress", output=[], usage=None)
    events = [("response.created", {"response": pending}), ("response.in_progress", {"response": pending})]
    for index, item in enumerate(body["output"]):
        events += _item_events(index, item)
    events.append(("response.completed", {"response": body}))
    return [frame({"type": name, "sequence_number": n, **data}, name) for n, (name, data) in enumerate(events)]


def error(message: str, kind: str = "server_error") -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}
