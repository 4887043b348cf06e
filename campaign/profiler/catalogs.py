"""The tool catalogs an attempt's proxy saw, handed to the engine to count.

A catalog's schema-token estimate needs an o200k_base Encoding, and building one
costs about 0.3 s of CPU (and holds the GIL while it does, which a proxy serving a
request must not). A proxy lives for one attempt; the engine lives for the whole run.
So the proxy writes each distinct catalog's canonical JSON here, once, beside the
capture (which holds digests only, never text), and the engine counts them after the
attempt with the Encoding it built once (``count``).

A line is trusted only as far as its digest: an entry whose text does not hash to
the digest it names (a client that wrote into the profiler's directory) counts nothing.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path

from campaign.canonical import spec_json, text_sha256
from campaign.profiler.capture import create_fresh

CATALOGS_NAME = "catalogs.jsonl"
# Larger than any real catalog set; a bigger file is not read (its estimates unknown).
MAX_CATALOGS_BYTES = 64 * 1024 * 1024


class CatalogWriter:
    """Append-only, created fresh; each catalog digest written once."""

    def __init__(self, path: Path) -> None:
        self._fd = create_fresh(path)
        self._seen: set[str] = set()

    def write(self, catalog_digest: str, catalog_json: str) -> None:
        if catalog_digest in self._seen:
            return
        self._seen.add(catalog_digest)
        os.write(self._fd, (spec_json({"catalog_digest": catalog_digest, "json": catalog_json}) + "\n").encode("utf-8"))

    def close(self) -> None:
        os.close(self._fd)


def read(dir_fd: int, *, limit: int = MAX_CATALOGS_BYTES) -> dict[str, str]:
    """Each catalog's canonical JSON by its digest, read through the engine's pinned
    directory; empty when the file is missing, not a regular file or too large (then
    every estimate is unknown). Lines that are not an entry, or whose text is not what
    their digest names, are left out."""
    from campaign.supervise.pinned import NotOurs, read_regular  # engine side only

    try:
        data = read_regular(dir_fd, CATALOGS_NAME, expected=None, limit=limit)
    except NotOurs:
        return {}
    out: dict[str, str] = {}
    for line in data.split(b"\n"):
        try:
            entry = json.loads(line) if line else None
        except ValueError:
            continue
        if not isinstance(entry, dict):
            continue
        digest, text = entry.get("catalog_digest"), entry.get("json")
        if isinstance(digest, str) and isinstance(text, str) and text_sha256(text) == digest:
            out[digest] = text
    return out


def count(catalogs: Mapping[str, str], count_tokens: Callable[[str], int]) -> dict[str, int]:
    """Each catalog's schema-token estimate: the count of its canonical JSON
    (``tokenizer.tool_schema_tokens``, from the text the proxy already serialized)."""
    return {digest: count_tokens(text) for digest, text in catalogs.items()}
