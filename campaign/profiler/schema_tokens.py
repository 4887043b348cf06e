"""Tool-schema token counts remembered by catalog digest: a proxy builds a tokenizer only
for a catalog no attempt has counted before.

Building the o200k_base Encoding costs about a second of CPU here, and every attempt's
recording proxy paid it again for the same few catalogs (a client sends one per
variant, attempt after attempt). A count depends only on the catalog's canonical JSON,
which its digest names, so it is kept beside the verified ranks in the tokenizer cache,
one file per digest, written atomically. A count is a diagnostic (the capture's
``schema_tokens``), never outcome evidence; an entry that does not read as a count is
counted again and rewritten, and a cache the proxy cannot write to only costs the time.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import tiktoken

from campaign.profiler import tokenizer

# Named for the counting rule: bump it when tokenizer.tool_schema_tokens changes.
MEMO_DIR = "schema-tokens-1"
_DIGEST = re.compile(r"[0-9a-f]{64}")
_MAX_ENTRY = 32


class SchemaTokens:
    """``count(digest, tools)``: the remembered count, else one counted now (the Encoding
    built from the verified ranks on first need, once per process) and remembered."""

    def __init__(self, cache_dir: Path, ranks: bytes, *, build: Callable[[bytes], tiktoken.Encoding] = tokenizer.encoding_from) -> None:
        self._dir = Path(cache_dir) / MEMO_DIR
        self._ranks = ranks
        self._build = build
        self._encoding: tiktoken.Encoding | None = None

    def count(self, digest: str, tools: list[Any]) -> int:
        if not _DIGEST.fullmatch(digest):
            return self._count(tools)
        remembered = self._read(digest)
        if remembered is not None:
            return remembered
        tokens = self._count(tools)
        self._write(digest, tokens)
        return tokens

    def _count(self, tools: list[Any]) -> int:
        if self._encoding is None:
            self._encoding = self._build(self._ranks)
        return tokenizer.tool_schema_tokens(self._encoding, tools)

    def _read(self, digest: str) -> int | None:
        try:
            fd = os.open(self._dir / digest, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        except OSError:
            return None
        try:
            text = os.read(fd, _MAX_ENTRY + 1)
        except OSError:
            return None
        finally:
            os.close(fd)
        return int(text) if len(text) <= _MAX_ENTRY and text.isdigit() else None

    def _write(self, digest: str, tokens: int) -> None:
        try:
            self._dir.mkdir(mode=0o700, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self._dir, prefix=".tmp-")
            try:
                os.write(fd, str(tokens).encode())
            finally:
                os.close(fd)
            os.replace(tmp, self._dir / digest)
        except OSError:
            pass  # an accelerator: without it the next proxy counts again
