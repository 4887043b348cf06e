"""Gemini API (``POST /v1beta/models/MODEL:generateContent`` and
``:streamGenerateContent?alt=sse``): the model is in the path and so is streaming.

A request's ``contents`` alternate ``user`` and ``model`` turns; function calls
are ``functionCall`` parts of a model turn and their results ``functionResponse``
parts of the next user turn. Usage is ``usageMetadata``: the prompt count folds
in cached tokens, and Gemini has no cache-write category (written tokens are
prompt tokens), like OpenAI. A streamed reply is a chunk per piece, the last one
with ``finishReason`` and the usage.
"""

from __future__ import annotations

import copy
from typing import Any

from campaign.replay.tools import ToolSpec
from campaign.replay.turns import Conversation, Reply, count_turns
from campaign.replay.wire.sse import frame, new_id, pieces


def parse(body: dict[str, Any], path: str = "") -> Conversation:
    contents = [c for c in body.get("contents") or [] if isinstance(c, dict)]
    opening = _texts(body.get("systemInstruction"))
    for content in contents:
        if content.get("role") == "model":
            break
        opening += _texts(content)
    tools = tuple(
        ToolSpec(d["name"], d.get("description") or "", d.get("parameters") or d.get("parametersJsonSchema") or {})
        for t in body.get("tools") or []
        if isinstance(t, dict)
        for d in t.get("functionDeclarations") or []
        if isinstance(d, dict) and isinstance(d.get("name"), str)
    )
    bare = path.split("?", 1)[0]
    return Conversation(
        model=bare.rsplit("/models/", 1)[-1].rsplit(":", 1)[0] or "replay",
        tools=tools,
        assistant_turns=count_turns(c.get("role") == "model" for c in contents),
        opening=tuple(opening),
        stream=bare.endswith(":streamGenerateContent"),
    )


def _texts(content: Any) -> list[str]:
    parts = content.get("parts") if isinstance(content, dict) else None
    return [p["text"] for p in parts or [] if isinstance(p, dict) and isinstance(p.get("text"), str)]


def _usage(reply: Reply) -> dict[str, Any]:
    u = reply.usage
    return {
        "promptTokenCount": u.prompt_total,
        "candidatesTokenCount": u.output,
        "totalTokenCount": u.prompt_total + u.output,
        "cachedContentTokenCount": u.cached_input,
    }


def render(reply: Reply, conversation: Conversation) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    if reply.action.text:
        parts.append({"text": reply.action.text})
    call = reply.action.call
    if call is not None:
        parts.append({"functionCall": {"name": call.name, "args": call.arguments}})
    return {
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": _usage(reply),
        "modelVersion": conversation.model,
        "responseId": new_id("resp-"),
    }


def stream(body: dict[str, Any], conversation: Conversation) -> list[bytes]:
    del conversation
    candidate = body["candidates"][0]
    base = {"modelVersion": body["modelVersion"], "responseId": body["responseId"]}
    frames = []
    for part in candidate["content"]["parts"]:
        if "text" in part:
            frames += [frame({**base, "candidates": [{"content": {"role": "model", "parts": [{"text": p}]}, "index": 0}]}) for p in pieces(part["text"], 24)]
        else:
            frames.append(frame({**base, "candidates": [{"content": {"role": "model", "parts": [copy.deepcopy(part)]}, "index": 0}]}))
    # The last chunk ends the response: its finish reason and the whole call's usage.
    last = {"content": {"role": "model", "parts": []}, "finishReason": candidate["finishReason"], "index": 0}
    frames.append(frame({**base, "candidates": [last], "usageMetadata": body["usageMetadata"]}))
    return frames


# The replay's own error kinds, as the Gemini API names them (status, code).
_STATUSES = {
    "rate_limit_error": ("RESOURCE_EXHAUSTED", 429),
    "overloaded_error": ("UNAVAILABLE", 503),
    "invalid_request_error": ("INVALID_ARGUMENT", 400),
}


def error(message: str, kind: str = "INTERNAL") -> dict[str, Any]:
    status, code = _STATUSES.get(kind, ("INTERNAL", 500))
    return {"error": {"code": code, "message": message, "status": status}}
