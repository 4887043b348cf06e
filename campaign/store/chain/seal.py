"""Sealing: a finished attempt row gets its place in the chain (prev_hash, row_hash), in
the transaction that finishes it; the engine's own late findings amend the last row."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import Connection, Engine, func, select, update

from campaign.errors import ConflictError, StoreError
from campaign.store import scope
from campaign.store.chain.hashing import mismatch, row_digest
from campaign.store.chain.rows import ATTEMPTS, COLUMN, HASHED_COLUMNS, ChainBroken, chain_links, genesis, raw_row, row_of


def seal_attempt(target: Engine | Connection, attempt_id: int) -> str:
    """Set prev_hash and row_hash on a finished attempt; returns its row_hash.

    With an Engine this is its own transaction; with a Connection it runs in
    the caller's transaction and the caller commits. Sealing is idempotent. A
    finished but unsealed run of rows just before this one (a crash between
    finish and seal) is sealed first, in ``seq`` order. Refused when the row
    is still running, when an earlier row is still running, or when the
    earlier rows are not a well-formed chain.
    """
    if isinstance(target, Engine):
        with scope.transaction(target) as conn:
            return _seal(conn, attempt_id)
    return _seal(target, attempt_id)


def seal_pending(target: Engine | Connection, campaign_id: int) -> int:
    """Seal a campaign's finished-but-unsealed tail, in seq order; returns how many rows."""
    if isinstance(target, Engine):
        with scope.transaction(target) as conn:
            return _seal_pending(conn, campaign_id)
    return _seal_pending(target, campaign_id)


def amend_tail(target: Engine | Connection, attempt_id: int, **fields: Any) -> str | None:
    """Change recorded facts on the last row of a chain and re-seal it; returns its row_hash (None: unsealed).

    For the engine's own late findings on the campaign's last attempt (e.g.
    ``campaign recover`` proving cleanup after the row was sealed). Refused
    when a later row exists, when the row already fails its hash (it was
    edited outside the engine), or for the row's identity, position or status.
    """
    refused = sorted((set(fields) - set(HASHED_COLUMNS) - {"private_root"}) | ({"campaign_id", "trial_pk", "seq", "status"} & set(fields)))
    if refused:
        raise ValueError(f"cannot amend {', '.join(refused)}: not a recorded fact of a finished row")
    if isinstance(target, Engine):
        with scope.transaction(target) as conn:
            return _amend(conn, attempt_id, fields)
    return _amend(target, attempt_id, fields)


def _seal(conn: Connection, attempt_id: int) -> str:
    row = row_of(conn, attempt_id)
    if row["row_hash"] is not None:
        return row["row_hash"]
    if row["status"] == "running":
        raise ConflictError(f"attempt {attempt_id} is still running; seal it after finish_attempt")
    prev, _ = _seal_tail(conn, row["campaign_id"], before_seq=row["seq"])
    return _seal_one(conn, row, prev)


def _seal_pending(conn: Connection, campaign_id: int) -> int:
    links = chain_links(conn, campaign_id)
    # A running row may end the chain; everything finished before it gets sealed.
    before = links[-1]["seq"] if links and links[-1]["status"] == "running" else None
    return _seal_tail(conn, campaign_id, before_seq=before)[1]


def _seal_tail(conn: Connection, campaign_id: int, *, before_seq: int | None) -> tuple[str, int]:
    """Check the rows before ``before_seq`` form a chain and seal its unsealed finished tail.

    Returns the last row_hash (the genesis for an empty chain) and how many rows were sealed.
    """
    prev = genesis(conn, campaign_id)
    pending: list[int] = []
    expected = 1
    for link in chain_links(conn, campaign_id):
        if before_seq is not None and link["seq"] >= before_seq:
            break
        if link["seq"] != expected:
            raise ChainBroken(f"campaign {campaign_id}: attempt seq {expected} is missing; run `campaign verify`")
        expected += 1
        if link["row_hash"] is None:
            if link["status"] == "running":
                raise ConflictError(f"attempt {link['id']} (seq {link['seq']}) is still running; a later row cannot be sealed past it")
            pending.append(link["id"])
        elif pending:
            raise ChainBroken(f"campaign {campaign_id}: an unsealed row precedes sealed seq {link['seq']}; run `campaign verify`")
        else:
            prev = link["row_hash"]
    if before_seq is not None and before_seq != expected:
        raise ChainBroken(f"campaign {campaign_id}: attempt seq {expected} is missing; run `campaign verify`")
    for attempt_id in pending:
        prev = _seal_one(conn, row_of(conn, attempt_id), prev)
    return prev, len(pending)


def _seal_one(conn: Connection, row: Mapping[str, Any], prev: str) -> str:
    digest = _seal_digest(conn, row["id"], prev)
    stmt = (
        update(ATTEMPTS)
        .where(ATTEMPTS.c.id == row["id"], ATTEMPTS.c.row_hash.is_(None), ATTEMPTS.c.status != "running")
        .values(prev_hash=prev, row_hash=digest)
    )
    if conn.execute(stmt).rowcount != 1:
        stored = row_of(conn, row["id"])
        if stored["row_hash"] != digest or stored["prev_hash"] != prev:
            raise ConflictError(f"attempt {row['id']} was sealed or changed by someone else; run `campaign verify`")
    return digest


def _amend(conn: Connection, attempt_id: int, fields: Mapping[str, Any]) -> str | None:
    row = row_of(conn, attempt_id)
    later = conn.execute(
        select(func.count()).select_from(ATTEMPTS).where(ATTEMPTS.c.campaign_id == row["campaign_id"], ATTEMPTS.c.seq > row["seq"])
    ).scalar_one()
    if later:
        raise ConflictError(f"attempt {attempt_id} is not the last row of its campaign; its recorded facts stay as they are")
    if row["row_hash"] is not None and mismatch(raw_row(conn, attempt_id), row) is not None:
        raise ChainBroken(f"attempt {attempt_id} no longer matches its hash; run `campaign verify`")
    stmt = update(ATTEMPTS).where(ATTEMPTS.c.id == attempt_id, ATTEMPTS.c.status == row["status"])
    stmt = stmt.where(ATTEMPTS.c.row_hash.is_(None) if row["row_hash"] is None else ATTEMPTS.c.row_hash == row["row_hash"])
    if conn.execute(stmt.values(**fields)).rowcount != 1:
        raise ConflictError(f"attempt {attempt_id} changed under us; refusing to overwrite")
    fresh = row_of(conn, attempt_id)
    if fresh["row_hash"] is None:
        return None
    digest = _seal_digest(conn, attempt_id, fresh["prev_hash"])
    conn.execute(update(ATTEMPTS).where(ATTEMPTS.c.id == attempt_id).values(row_hash=digest))
    return digest


def _seal_digest(conn: Connection, attempt_id: int, prev: str | None) -> str:
    """Format 2's row_hash of the row as stored now, after ``prev``."""
    raw = raw_row(conn, attempt_id)
    try:
        return row_digest((prev, *raw[COLUMN["campaign_id"] :]))
    except ValueError as exc:
        raise StoreError(f"attempt {attempt_id} cannot be sealed: {exc}") from None
