"""The two canonical JSON texts the stored digests are computed over.

Every digest the store keeps is a SHA-256 of one of these texts, so each form is
defined once and pinned byte for byte by ``tests/test_canonical.py``; changing one
silently would orphan every stored digest and approval made with it.

- ``spec_json``: the specification's form for plans and identities (sorted keys, no
  spaces, non-ASCII escaped, NaN and infinities refused). An approval digest has to
  be reproducible by an operator with nothing but ``json.dumps``.
- ``wire_json``: the form for what a client put on the wire (tool catalogs). The
  text is also what the tokenizer counts, so non-ASCII stays as the client sent it
  instead of turning into six-character escapes that would inflate the count.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any


def spec_json(value: Any) -> str:
    """The spec's canonical text (ValueError on NaN or infinities)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False)


def wire_json(value: Any) -> str:
    """A client's JSON as it would count on the wire: sorted, compact, UTF-8."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def spec_digest(value: Any) -> str:
    return text_sha256(spec_json(value))
