"""Small, total readers shared by the adapters: bytes to JSON, JSON to counters.

Every function here returns ``None`` for anything it does not recognise rather
than raising or guessing, because a wrong number is worse than a missing one.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Lines:
    """A JSONL stream: the objects that parsed, and what did not.

    ``truncated``: only the last line is bad, which is what a client killed
    mid-write leaves; the complete lines before it are real observations.
    ``garbled``: a bad line with good lines after it; the stream itself is
    corrupt and no total drawn from it can be trusted.
    """

    objects: tuple[dict[str, Any], ...]
    truncated: bool
    garbled: bool

    @property
    def damaged(self) -> bool:
        return self.truncated or self.garbled


def decode(raw: bytes) -> str | None:
    """UTF-8 text, or None if the bytes are not UTF-8 (a mangled stream)."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return None


def load_json(text: str) -> Any:
    """The one JSON value in ``text``, or None when it is not exactly one value."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def load_lines(text: str) -> Lines:
    """Parse every non-blank line as a JSON object."""
    objects: list[dict[str, Any]] = []
    bad = [False]
    for line in text.splitlines():
        if not line.strip():
            continue
        value = load_json(line)
        if isinstance(value, dict):
            objects.append(value)
            bad.append(False)
        else:
            bad.append(True)
    return Lines(tuple(objects), truncated=bad[-1], garbled=any(bad[:-1]))


def get(value: Any, *path: str) -> Any:
    """``value[p0][p1]...`` through dicts only; None when any step is missing."""
    for key in path:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def count(value: Any) -> int | None:
    """A non-negative integer counter, or None. Booleans are not counters."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    if isinstance(value, float) and math.isfinite(value) and value.is_integer() and value >= 0:
        return int(value)
    return None


def money(value: Any) -> float | None:
    """A finite, non-negative USD amount, or None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return value if math.isfinite(value) and value >= 0 else None


def text(value: Any) -> str | None:
    """A non-empty string id, or None."""
    return value if isinstance(value, str) and value else None


def one_of(value: Any, allowed: frozenset[str]) -> bool:
    """Membership that cannot raise: JSON lists and objects are unhashable."""
    return isinstance(value, str) and value in allowed


def total(values: list[int | None]) -> int | None:
    """Sum when every part is known; one unknown part makes the sum unknown."""
    if not values or any(v is None for v in values):
        return None
    return sum(v for v in values if v is not None)


def plain_json(value: Any, depth: int = 0) -> bool:
    """Whether ``value`` is plain JSON data (finite numbers, str keys, bounded depth)."""
    if depth > 32:
        return False
    if value is None or isinstance(value, (bool, str, int)):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list):
        return all(plain_json(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and plain_json(v, depth + 1) for k, v in value.items())
    return False
