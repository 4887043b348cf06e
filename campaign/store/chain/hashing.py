"""The two encodings of a row and their digests (pure: no I/O), and whether a sealed row
still matches its hash in the format it was sealed with."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from operator import itemgetter, methodcaller
from typing import Any

import orjson
from sqlalchemy import Float

from campaign.canonical import spec_digest
from campaign.store.chain.rows import ATTEMPTS, HASHED_COLUMNS, PAYLOAD

FLOAT_COLUMNS = frozenset(c.name for c in ATTEMPTS.columns if isinstance(c.type, Float))


def payload(values: Sequence[Any]) -> bytes:
    """Format 2: the bytes hashed for a row, ``values`` being ``row[PAYLOAD]`` (its
    prev_hash, then the hashed values as stored). The reference encoder: whatever
    encodes faster must produce exactly these bytes. ValueError on NaN or infinity."""
    return json.dumps(list(values), separators=(",", ":"), ensure_ascii=True, allow_nan=False).encode("ascii")


def row_digest(values: Sequence[Any]) -> str:
    """Format 2's row_hash of ``row[PAYLOAD]``."""
    return hashlib.sha256(payload(values)).hexdigest()


def fast_digests(rows: Sequence[Sequence[Any]]) -> list[str]:
    """Format 2's row_hash of each row with orjson encoding it, for rows known to hold no
    non-finite number (``verify._finite``): orjson writes one as ``null``, so a NULL edited to
    infinity would hash as the NULL did. Otherwise orjson's bytes differ from
    ``payload``'s only where the row cannot match (non-ASCII text, a float below 1e-4,
    which orjson writes 0.00001 and Python 1e-05): the caller asks ``row_digest`` then."""
    return list(map(methodcaller("hexdigest"), map(hashlib.sha256, map(orjson.dumps, map(itemgetter(PAYLOAD), rows)))))


def canonical_row(attempt: Any) -> dict[str, Any]:
    """Format 1: the hashed values of one attempt row (an Attempt, or a row mapping), as JSON values."""
    get = attempt.__getitem__ if isinstance(attempt, Mapping) else attempt.__getattribute__
    return {name: _json_value(name, get(name)) for name in HASHED_COLUMNS}


def compute_hash(prev_hash: str | None, row: Mapping[str, Any]) -> str:
    """Format 1: SHA-256 over the canonical JSON (the plan digest's form) of the row's values plus its predecessor's hash."""
    if "prev_hash" in row:
        raise ValueError("the row's values must not carry their own prev_hash")
    return spec_digest({**row, "prev_hash": prev_hash})


def _json_value(name: str, value: Any) -> Any:
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            raise ValueError(f"{name} is a naive datetime")
        return value.astimezone(dt.timezone.utc).isoformat()
    if name in FLOAT_COLUMNS and isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, (int, float)):
        return value
    raise ValueError(f"{name} holds a {type(value).__name__}, which has no canonical JSON form")


def mismatch(raw: Sequence[Any] | None, row: Mapping[str, Any]) -> str | None:
    """Why a sealed row does not match its row_hash in either format (None: it matches)."""
    if raw is not None and digest_or_none(row_digest, raw[PAYLOAD]) == row["row_hash"]:
        return None
    try:
        if compute_hash(row["prev_hash"], canonical_row(row)) == row["row_hash"]:
            return None
    except ValueError as exc:
        return f"holds a value that cannot be hashed ({exc})"
    return "contents do not match row_hash (the row was changed after it was sealed)"


def format1(row: Mapping[str, Any]) -> str | None:
    return digest_or_none(lambda r: compute_hash(r["prev_hash"], canonical_row(r)), row)


def digest_or_none(digest: Callable[[Any], str], value: Any) -> str | None:
    try:
        return digest(value)
    except (ValueError, TypeError):  # a value with no canonical form (NaN, a naive datetime, a blob): matches nothing
        return None
