"""Parse ``.env`` text: one ``KEY=value`` assignment per line.

The conventions are those of python-dotenv and docker compose: unquoted values
are stripped and may end in an inline comment (``#`` after whitespace); single
quotes are literal; double quotes understand a few backslash escapes.
"""

from __future__ import annotations

import re

_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")
_INLINE_COMMENT = re.compile(r"\s#")
_ESCAPES = {'"': '"', "\\": "\\", "n": "\n", "t": "\t", "r": "\r"}


class EnvSyntaxError(ValueError):
    """A line that is not a valid assignment; ``lineno`` is 1-based."""

    def __init__(self, message: str, lineno: int) -> None:
        super().__init__(f"line {lineno}: {message}")
        self.lineno = lineno


def parse_env(text: str) -> dict[str, str]:
    """Return the assignments in ``text``; a later assignment of a key wins."""
    result: dict[str, str] = {}
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("export "):
            line = line[len("export "):].lstrip()
        key, sep, value = line.partition("=")
        if not sep:
            raise EnvSyntaxError(f"expected KEY=value, got {line!r}", lineno)
        key = key.strip()
        if not _KEY.fullmatch(key):
            raise EnvSyntaxError(f"invalid variable name {key!r}", lineno)
        result[key] = _parse_value(value.strip(), lineno)
    return result


def _parse_value(value: str, lineno: int) -> str:
    if value[:1] in ("'", '"'):
        parsed, rest = _parse_quoted(value, lineno)
        rest = rest.strip()
        if rest and not rest.startswith("#"):
            raise EnvSyntaxError(f"unexpected text after closing quote: {rest!r}", lineno)
        return parsed
    comment = _INLINE_COMMENT.search(value)
    if comment:
        value = value[: comment.start()]
    return value.strip()


def _parse_quoted(value: str, lineno: int) -> tuple[str, str]:
    """Split ``value`` (starting with a quote) into the unquoted text and what follows."""
    quote = value[0]
    out: list[str] = []
    i = 1
    while i < len(value):
        ch = value[i]
        if ch == quote:
            return "".join(out), value[i + 1 :]
        if ch == "\\" and quote == '"' and i + 1 < len(value) and value[i + 1] in _ESCAPES:
            out.append(_ESCAPES[value[i + 1]])
            i += 2
            continue
        out.append(ch)
        i += 1
    raise EnvSyntaxError(f"unterminated {quote} quote", lineno)
