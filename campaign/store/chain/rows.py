"""What a chain is made of: the hashed columns, each attempt row as stored, and the
problems a check names. Rows are read untyped (values exactly as the database
returns them), and other databases' values are put in SQLite's stored form."""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, String, select, type_coerce
from sqlalchemy.types import NullType

from campaign.errors import StoreError, UsageProblem
from campaign.store.models import Attempt, Campaign

EXCLUDED_COLUMNS = ("id", "row_hash", "prev_hash", "private_root")
HASHED_COLUMNS = (
    "campaign_id", "trial_pk", "seq", "status", "started_at", "ended_at",
    "outcome", "failure_class", "verified_pass", "verifier_exit_code", "wall_seconds",
    "completed_turns", "uncached_input_tokens", "cached_input_tokens", "cache_write_tokens", "output_tokens",
    "tool_calls", "tool_errors", "diagnostic_events_version", "discovery_failures", "incorrect_tool_calls",
    "cost_usd", "cost_reported", "equivalent_spend_usd", "spend_complete", "flush_complete",
    "cleanup_complete", "disposal_complete", "finalization_failed", "teardown_outcome", "containment",
    "config_digest", "fixture_digest", "agent_model", "applied_profiles", "schema_diagnostics",
)  # fmt: skip
ATTEMPTS = Attempt.__table__

# A row as ``read_rows`` returns it: identity and hashes, then the hashed values, as
# stored. ``row[PAYLOAD]`` is the row's format-2 array.
RAW_COLUMNS = ("id", "row_hash", "prev_hash", *HASHED_COLUMNS)
COLUMN = {name: i for i, name in enumerate(RAW_COLUMNS)}
PAYLOAD = slice(COLUMN["prev_hash"], None)
ID, ROW_HASH, PREV_HASH, SEQ, STATUS = (COLUMN[n] for n in ("id", "row_hash", "prev_hash", "seq", "status"))
# The hashed columns SQLite may hold a number in (every one that is not text).
NUMBERS = tuple(name for name in HASHED_COLUMNS if not isinstance(ATTEMPTS.c[name].type, String))


class ChainBroken(StoreError):
    """The attempt rows no longer match their hashes; ``problems`` says where."""

    def __init__(self, message: str, problems: Sequence[ChainProblem] = ()) -> None:
        super().__init__(message)
        self.problems = tuple(problems)


@dataclass(frozen=True)
class ChainProblem:
    campaign_id: int
    # edited | missing | broken_link | unsealed | running_not_last | unreadable
    kind: str
    detail: str
    seq: int | None = None
    attempt_id: int | None = None

    def line(self) -> str:
        where = f"campaign {self.campaign_id}"
        if self.seq is not None:
            where += f" seq {self.seq}"
        if self.attempt_id is not None:
            where += f" (attempt {self.attempt_id})"
        return f"{where}: {self.kind}: {self.detail}"


def stored_form(value: Any) -> Any:
    """A value as SQLite stores it, from a database with real booleans and timestamps (a
    NaN or an infinity, which has no JSON form and SQLite would not hold, becomes text)."""
    if value is True or value is False:
        return int(value)
    if type(value) is float and not math.isfinite(value):
        return repr(value)
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(dt.timezone.utc)
        return f"{value.year:04d}-{value.month:02d}-{value.day:02d} {value.hour:02d}:{value.minute:02d}:{value.second:02d}.{value.microsecond:06d}"
    return value


def read_rows(conn: Connection, campaign_id: int) -> list[Sequence[Any]]:
    """Every attempt row of a campaign as stored (``RAW_COLUMNS``), in seq order: a running
    row still holding its provisional negative seq comes first and is no link yet."""
    stmt = raw_select().where(ATTEMPTS.c.campaign_id == campaign_id).order_by(ATTEMPTS.c.seq)
    return _stored(conn, conn.execute(stmt).all())


def raw_row(conn: Connection, attempt_id: int) -> Sequence[Any]:
    rows = _stored(conn, conn.execute(raw_select().where(ATTEMPTS.c.id == attempt_id)).all())
    if not rows:
        raise UsageProblem(f"no attempt {attempt_id} in this store", option="ATTEMPT_ID")
    return rows[0]


def raw_select() -> Any:
    """The columns untyped: values exactly as the database returns them (no conversion)."""
    return select(*(type_coerce(ATTEMPTS.c[name], NullType()).label(name) for name in RAW_COLUMNS))


def _stored(conn: Connection, rows: list[Any]) -> list[Sequence[Any]]:
    """SQLite's values are the stored form already; other databases' are put in it."""
    if conn.dialect.name == "sqlite":
        return rows
    return [tuple(map(stored_form, row)) for row in rows]


def row_of(conn: Connection, attempt_id: int) -> Mapping[str, Any]:
    row = conn.execute(select(ATTEMPTS).where(ATTEMPTS.c.id == attempt_id)).mappings().first()
    if row is None:
        raise UsageProblem(f"no attempt {attempt_id} in this store", option="ATTEMPT_ID")
    return row


def in_chain() -> Any:
    """Rows that are links of the chain: all but running rows still holding their
    provisional negative seq (they join the chain when they finish)."""
    return ~((ATTEMPTS.c.status == "running") & (ATTEMPTS.c.seq < 0))


def chain_links(conn: Connection, campaign_id: int) -> list[Mapping[str, Any]]:
    stmt = (
        select(ATTEMPTS.c.id, ATTEMPTS.c.seq, ATTEMPTS.c.status, ATTEMPTS.c.row_hash)
        .where(ATTEMPTS.c.campaign_id == campaign_id, in_chain())
        .order_by(ATTEMPTS.c.seq)
    )
    return list(conn.execute(stmt).mappings())


def genesis(conn: Connection, campaign_id: int) -> str:
    digest = conn.execute(select(Campaign.experiment_digest).where(Campaign.id == campaign_id)).scalar_one_or_none()
    if digest is None:
        raise UsageProblem(f"no campaign {campaign_id} in this store", option="CAMPAIGN_ID")
    return digest
