"""Server-sent event framing and the chunking that makes deltas look streamed."""

from __future__ import annotations

import json
import time
import uuid
from typing import Any


def frame(data: Any, event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    body = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
    return f"{head}data: {body}\n\n".encode()


def pieces(text: str, size: int) -> list[str]:
    """Fixed-size slices, so a client must join several deltas to get the whole."""
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def new_id(prefix: str) -> str:
    """A fresh id per response: a retried request must not reuse one."""
    return prefix + uuid.uuid4().hex


def now() -> int:
    return int(time.time())


def text_parts(content: Any, kinds: tuple[str, ...] = ("text",)) -> list[str]:
    """The text of a message ``content``: a string, or the text blocks of a list (tool results skipped)."""
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [b["text"] for b in content if isinstance(b, dict) and b.get("type") in kinds and isinstance(b.get("text"), str)]
    return []
