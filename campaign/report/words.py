"""How the Markdown writes a number: plain, signed, or with the reason it is missing.
Shared by the summary's sections (``report.markdown``, ``report.differences``)."""

from __future__ import annotations

from typing import Any


def num(value: Any, digits: int = 3) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    return f"{value:.{digits}f}"


def signed(value: Any, digits: int = 3) -> str:
    """Signed, with more digits where ``digits`` would round a difference to zero: -0.0004
    never reads as 0 (nor as "-0.0"), and only a true zero prints as one."""
    if value is None:
        return "null"
    if value == 0:
        return f"{0.0:+.{digits}f}"
    text = f"{value:+.{digits}f}"
    while float(text) == 0 and digits < 12:
        digits += 1
        text = f"{value:+.{digits}f}"
    return text


def or_reason(value: str, reason: Any) -> str:
    return f"{value} ({reason})" if reason else value
