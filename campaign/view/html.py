"""The markup helpers every page uses: each escapes every value it inserts.

``h`` escapes text and attribute values alike; ``el`` writes an element whose
content is markup already and whose attribute values are escaped.
"""

from __future__ import annotations

import html
import json
from typing import Any


def h(value: Any) -> str:
    return html.escape(str(value), quote=True)


def el(tag: str, content: str = "", **attrs: Any) -> str:
    """``<tag attrs>content</tag>``; ``content`` is markup already, attribute values are escaped.

    A trailing underscore is dropped from a name (``class_``), other
    underscores become hyphens (``data_field``); None values are left out.
    """
    parts = [tag]
    for name, value in attrs.items():
        if value is None or value is False:
            continue
        key = name.rstrip("_").replace("_", "-")
        parts.append(key if value is True else f'{key}="{h(value)}"')
    return f"<{' '.join(parts)}>{content}</{tag}>"


def text(tag: str, value: Any, **attrs: Any) -> str:
    return el(tag, h(value), **attrs)


def json_attr(value: Any) -> str:
    """A value as the JSON the report holds, for ``data-value`` (tests compare it exactly)."""
    return json.dumps(value, allow_nan=False, sort_keys=True)


def fmt(value: Any, kind: str = "num") -> str:
    """Display text of a known value (callers handle None with a reason)."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        digits = {"usd": 4, "seconds": 3, "rate": 3, "signed": 3}.get(kind, 3)
        return f"{value:+.{digits}f}" if kind == "signed" else f"{value:.{digits}f}"
    return str(value)


def flag(value: Any) -> str:
    return "unknown" if value is None else ("yes" if value else "no")


__all__ = ["el", "flag", "fmt", "h", "json_attr", "text"]
