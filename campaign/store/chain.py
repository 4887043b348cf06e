"""Tamper evidence: every finished attempt row is hashed and chained to the one before.

``row_hash`` is a SHA-256 over the row's hashed values plus ``prev_hash``, the
``row_hash`` of the row before it in the same campaign by ``seq``; the first
row's ``prev_hash`` is the campaign's ``experiment_digest`` (the genesis), so
the chain is also bound to the experiment it ran. ``seq`` is the order
attempts were finalized: a running row holds a provisional negative seq and is
not yet a link, so workers running providers in parallel append to one chain
without ever leaving a running row inside it (stores from before kept the seq
given at the start, which was the same order while one runner ran everything).

Two encodings of a row exist, and a row verifies when it matches the one it
was sealed with (2 is tried first):

- format 2, how this engine seals: the compact canonical JSON (ASCII, no NaN)
  of the array ``[prev_hash, <HASHED_COLUMNS values in order>]``, each value as
  the store holds it: booleans 0/1, datetimes as UTC text
  ``YYYY-MM-DD HH:MM:SS.ffffff`` (SQLite's own text; other databases' values are
  put in that form). One array per row in a fixed column order, so a whole
  campaign is checked from one query of plain tuples, with ``orjson`` doing the
  encoding where its bytes are provably the same (any row where they might not
  be is encoded again by the reference encoder);
- format 1, rows sealed before: the canonical JSON object (sorted keys) of
  ``{"prev_hash": ..., <column>: <value>}`` with each value as the models' types
  return it (datetimes ISO 8601 UTC), so an edit that changes nothing a reader
  sees (a boolean stored as 2 instead of 1) is not a change for those rows.

``seal_attempt`` runs right after ``finish_attempt`` (status ``finished``, ``faulted`` or
``interrupted``), in its own transaction, with a compare-and-set on
``row_hash IS NULL``. ``verify_chain`` recomputes everything and names each
problem: an edited row, a deleted row (a gap in ``seq``, a broken link, or a
finished trial whose attempt row is gone), a reordered row, a finished row left
unsealed, or a running row with later rows after it. Only a ``running`` row at
the end of a chain may be unsealed.

This detects edits made outside the engine (ad-hoc SQL, a restored backup
spliced with another); it is not a signature: whoever runs this code can
recompute a chain. ``private_root`` is a local path set while the attempt runs
and is never exported, so it is left out of the hash.

Adding a column to ``attempts``: rows sealed earlier were hashed without it, so
extending HASHED_COLUMNS needs a new format that verifies both shapes; the test
that compares HASHED_COLUMNS with the model fails until someone decides.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from operator import itemgetter, methodcaller
from typing import Any

import orjson
from sqlalchemy import Connection, Engine, Float, String, exists, func, select, type_coerce, update
from sqlalchemy.types import NullType

from campaign.bulk import collector_paused
from campaign.errors import ConflictError, StoreError, UsageProblem
from campaign.plan import canonical_digest
from campaign.store import scope
from campaign.store.models import Attempt, Campaign, Trial

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
_FLOAT_COLUMNS = frozenset(c.name for c in Attempt.__table__.columns if isinstance(c.type, Float))
_ATTEMPTS = Attempt.__table__

# A row as ``read_rows`` returns it: identity and hashes, then the hashed values, as
# stored. ``row[PAYLOAD]`` is the row's format-2 array.
RAW_COLUMNS = ("id", "row_hash", "prev_hash", *HASHED_COLUMNS)
COLUMN = {name: i for i, name in enumerate(RAW_COLUMNS)}
PAYLOAD = slice(COLUMN["prev_hash"], None)
_ID, _ROW_HASH, _PREV_HASH, _SEQ, _STATUS = (COLUMN[n] for n in ("id", "row_hash", "prev_hash", "seq", "status"))
# The hashed columns SQLite may hold a number in (every one that is not text).
_NUMBERS = tuple(name for name in HASHED_COLUMNS if not isinstance(_ATTEMPTS.c[name].type, String))


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


# --- hashing (pure) ---------------------------------------------------------------


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
    non-finite number (``_finite``): orjson writes one as ``null``, so a NULL edited to
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
    return canonical_digest({**row, "prev_hash": prev_hash})


def _json_value(name: str, value: Any) -> Any:
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            raise ValueError(f"{name} is a naive datetime")
        return value.astimezone(dt.timezone.utc).isoformat()
    if name in _FLOAT_COLUMNS and isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, (int, float)):
        return value
    raise ValueError(f"{name} holds a {type(value).__name__}, which has no canonical JSON form")


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


# --- sealing ----------------------------------------------------------------------


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
    row = _row(conn, attempt_id)
    if row["row_hash"] is not None:
        return row["row_hash"]
    if row["status"] == "running":
        raise ConflictError(f"attempt {attempt_id} is still running; seal it after finish_attempt")
    prev, _ = _seal_tail(conn, row["campaign_id"], before_seq=row["seq"])
    return _seal_one(conn, row, prev)


def _seal_pending(conn: Connection, campaign_id: int) -> int:
    links = _links(conn, campaign_id)
    # A running row may end the chain; everything finished before it gets sealed.
    before = links[-1]["seq"] if links and links[-1]["status"] == "running" else None
    return _seal_tail(conn, campaign_id, before_seq=before)[1]


def _seal_tail(conn: Connection, campaign_id: int, *, before_seq: int | None) -> tuple[str, int]:
    """Check the rows before ``before_seq`` form a chain and seal its unsealed finished tail.

    Returns the last row_hash (the genesis for an empty chain) and how many rows were sealed.
    """
    prev = _genesis(conn, campaign_id)
    pending: list[int] = []
    expected = 1
    for link in _links(conn, campaign_id):
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
        prev = _seal_one(conn, _row(conn, attempt_id), prev)
    return prev, len(pending)


def _seal_one(conn: Connection, row: Mapping[str, Any], prev: str) -> str:
    digest = _seal_digest(conn, row["id"], prev)
    stmt = (
        update(_ATTEMPTS)
        .where(_ATTEMPTS.c.id == row["id"], _ATTEMPTS.c.row_hash.is_(None), _ATTEMPTS.c.status != "running")
        .values(prev_hash=prev, row_hash=digest)
    )
    if conn.execute(stmt).rowcount != 1:
        stored = _row(conn, row["id"])
        if stored["row_hash"] != digest or stored["prev_hash"] != prev:
            raise ConflictError(f"attempt {row['id']} was sealed or changed by someone else; run `campaign verify`")
    return digest


def _amend(conn: Connection, attempt_id: int, fields: Mapping[str, Any]) -> str | None:
    row = _row(conn, attempt_id)
    later = conn.execute(
        select(func.count()).select_from(_ATTEMPTS).where(_ATTEMPTS.c.campaign_id == row["campaign_id"], _ATTEMPTS.c.seq > row["seq"])
    ).scalar_one()
    if later:
        raise ConflictError(f"attempt {attempt_id} is not the last row of its campaign; its recorded facts stay as they are")
    if row["row_hash"] is not None and _mismatch(_raw_row(conn, attempt_id), row) is not None:
        raise ChainBroken(f"attempt {attempt_id} no longer matches its hash; run `campaign verify`")
    stmt = update(_ATTEMPTS).where(_ATTEMPTS.c.id == attempt_id, _ATTEMPTS.c.status == row["status"])
    stmt = stmt.where(_ATTEMPTS.c.row_hash.is_(None) if row["row_hash"] is None else _ATTEMPTS.c.row_hash == row["row_hash"])
    if conn.execute(stmt.values(**fields)).rowcount != 1:
        raise ConflictError(f"attempt {attempt_id} changed under us; refusing to overwrite")
    fresh = _row(conn, attempt_id)
    if fresh["row_hash"] is None:
        return None
    digest = _seal_digest(conn, attempt_id, fresh["prev_hash"])
    conn.execute(update(_ATTEMPTS).where(_ATTEMPTS.c.id == attempt_id).values(row_hash=digest))
    return digest


# --- verification -----------------------------------------------------------------


def verify_chain(engine: Engine, campaign_id: int | None = None) -> list[ChainProblem]:
    """Every problem in one campaign's chain, or in every campaign's; empty when intact."""
    with scope.reading(engine) as conn:
        if campaign_id is not None:
            if conn.execute(select(Campaign.id).where(Campaign.id == campaign_id)).first() is None:
                raise UsageProblem(f"no campaign {campaign_id} in this store", option="CAMPAIGN_ID")
            ids = [campaign_id]
        else:
            ids = list(conn.execute(select(Campaign.id).order_by(Campaign.id)).scalars())
        problems: list[ChainProblem] = []
        for cid in ids:
            with collector_paused():
                problems += verify_rows(conn, cid, read_rows(conn, cid))
        return problems


def head(engine: Engine, campaign_id: int) -> tuple[Any, ...]:
    """What changes whenever the engine adds, finishes, seals or amends a row of the
    campaign: how many rows, how many sealed, the highest seq and id, and the last link's
    hash. A reader that verified the chain at one head need not again until it moves."""
    c = _ATTEMPTS.c
    mine = c.campaign_id == campaign_id
    with scope.reading(engine) as conn:
        counts = conn.execute(select(func.count(), func.count(c.row_hash), func.max(c.seq), func.max(c.id)).where(mine)).one()
        last = conn.execute(select(c.row_hash).where(mine).order_by(c.seq.desc()).limit(1)).scalar_one_or_none()
    return (*counts, last)


def count_rows(engine: Engine, campaign_id: int | None = None) -> int:
    """How many attempt rows a verification covers."""
    stmt = select(func.count()).select_from(_ATTEMPTS)
    if campaign_id is not None:
        stmt = stmt.where(_ATTEMPTS.c.campaign_id == campaign_id)
    with scope.reading(engine) as conn:
        return conn.execute(stmt).scalar_one()


def verify_rows(conn: Connection, campaign_id: int, rows: Sequence[Sequence[Any]]) -> list[ChainProblem]:
    """The problems of a campaign's chain, given every attempt row of it as ``read_rows``
    returned them (a report reads them once, for this and for its trials).

    An intact chain is proven column by column; only a chain that is not gets the
    row-by-row pass that names each problem."""
    links = rows[_provisional(rows) :]
    problems = [] if _intact(conn, campaign_id, links) else _problems(conn, campaign_id, links)
    return problems + _orphans(conn, campaign_id)


def _provisional(rows: Sequence[Sequence[Any]]) -> int:
    """How many rows at the start are running rows still holding their provisional
    negative seq: not links yet (they sort first, before seq 1)."""
    n = 0
    for row in rows:
        seq = row[_SEQ]
        if row[_STATUS] != "running" or type(seq) is not int or seq >= 0:
            break
        n += 1
    return n


def _intact(conn: Connection, campaign_id: int, links: Sequence[Sequence[Any]]) -> bool:
    """seq 1..n without a gap, every row sealed but a running last one, each prev_hash the
    row_hash before it (the genesis first), and every sealed row matching its hash."""
    n = len(links)
    if list(map(itemgetter(_SEQ), links)) != list(range(1, n + 1)):
        return False
    hashes = list(map(itemgetter(_ROW_HASH), links))
    sealed = n - 1 if n and hashes[-1] is None and links[-1][_STATUS] == "running" else n
    if None in hashes[:sealed]:
        return False
    prevs = list(map(itemgetter(_PREV_HASH), links[:sealed]))
    if sealed and (prevs[0] != _genesis(conn, campaign_id) or prevs[1:] != hashes[: sealed - 1]):
        return False
    return _all_match(conn, campaign_id, links[:sealed])


def _all_match(conn: Connection, campaign_id: int, links: Sequence[Sequence[Any]]) -> bool:
    """Every row matches its row_hash: format 2 by orjson, then by the reference encoder
    or as format 1 (rows sealed before format 2 existed), the likelier first: a few
    rows left over are format 2 with text or floats orjson spells its own way; most of
    a chain left over is an older store's."""
    stale = links
    if links and _finite(conn, campaign_id):
        stale = [row for row, digest in zip(links, fast_digests(links)) if digest != row[_ROW_HASH]]
    checks = (_format2_matches, _format1_matches) if len(stale) * 10 < len(links) else (_format1_matches, _format2_matches)
    for matches in checks:
        if not stale:
            return True
        stale = matches(conn, campaign_id, stale)
        if stale is None:
            return False
    return not stale


def _format2_matches(conn: Connection, campaign_id: int, rows: Sequence[Sequence[Any]]) -> list[Sequence[Any]] | None:
    """The rows that do not match as format 2 (the reference encoder)."""
    return [row for row in rows if _digest_or_none(row_digest, row[PAYLOAD]) != row[_ROW_HASH]]


def _format1_matches(conn: Connection, campaign_id: int, rows: Sequence[Sequence[Any]]) -> list[Sequence[Any]] | None:
    """The rows that do not match as format 1, read through the models' types (None: a
    value its type cannot read, which the row-by-row pass names)."""
    try:
        typed = {row["id"]: row for row in conn.execute(select(_ATTEMPTS).where(_ATTEMPTS.c.campaign_id == campaign_id)).mappings()}
    except (ValueError, TypeError):
        return None
    return [row for row in rows if row[_ID] not in typed or _format1(typed[row[_ID]]) != row[_ROW_HASH]]


def _finite(conn: Connection, campaign_id: int) -> bool:
    """No column of the campaign's rows holds an infinity (what orjson would write as null).

    SQLite stores one in any column that is not text, and cannot store NaN; one sum per
    column over the rows settles it (a sum of finite values here stays finite). Other
    databases' rows are put in SQLite's form value by value (``stored_form``), which
    writes a non-finite number as its text, so for them there is nothing to check."""
    if conn.dialect.name != "sqlite":
        return True
    total = conn.execute(select(sum(func.total(_ATTEMPTS.c[name]) for name in _NUMBERS)).where(_ATTEMPTS.c.campaign_id == campaign_id)).scalar()
    return total is not None and math.isfinite(total)


def _problems(conn: Connection, campaign_id: int, links: Sequence[Sequence[Any]]) -> list[ChainProblem]:
    problems: list[ChainProblem] = []

    def problem(kind: str, detail: str, row: Mapping[str, Any] | None = None, seq: int | None = None) -> None:
        problems.append(ChainProblem(campaign_id, kind, detail, seq if row is None else row["seq"], None if row is None else row["id"]))

    raw = {row[_ID]: row for row in links}
    rows = _readable_rows(conn, campaign_id, problem)
    prev: str | None = _genesis(conn, campaign_id)
    expected = 1
    for index, row in enumerate(rows):
        last = index == len(rows) - 1
        seq = row["seq"]
        gap = seq != expected
        if gap:
            if isinstance(seq, int) and seq > expected:
                missing = f"seq {expected}" if seq == expected + 1 else f"seqs {expected}-{seq - 1}"
                problem("missing", f"{missing} missing before this row (a row was deleted or renumbered)", row)
            else:
                problem("broken_link", f"seq {seq!r} is out of order (expected {expected})", row)
        expected = seq + 1 if isinstance(seq, int) else expected + 1
        if row["row_hash"] is None:
            if row["status"] == "running":
                if not last:
                    problem("running_not_last", "still running, yet later rows exist", row)
            elif last:
                problem("unsealed", "finished but not sealed (a crash between finish and seal, or its hash was removed)", row)
            else:
                problem("unsealed", "finished but not sealed, yet later rows are (its hash was removed)", row)
            prev = None
            continue
        wrong = _mismatch(raw.get(row["id"]), row)
        if wrong is not None:
            problem("edited", wrong, row)
        if prev is not None and not gap and row["prev_hash"] != prev:
            before = "the campaign's experiment digest" if index == 0 else f"the row_hash of seq {rows[index - 1]['seq']}"
            problem("broken_link", f"prev_hash is not {before} (a row was deleted, inserted or reordered)", row)
        prev = row["row_hash"]
    return problems


def _mismatch(raw: Sequence[Any] | None, row: Mapping[str, Any]) -> str | None:
    """Why a sealed row does not match its row_hash in either format (None: it matches)."""
    if raw is not None and _digest_or_none(row_digest, raw[PAYLOAD]) == row["row_hash"]:
        return None
    try:
        if compute_hash(row["prev_hash"], canonical_row(row)) == row["row_hash"]:
            return None
    except ValueError as exc:
        return f"holds a value that cannot be hashed ({exc})"
    return "contents do not match row_hash (the row was changed after it was sealed)"


def _format1(row: Mapping[str, Any]) -> str | None:
    return _digest_or_none(lambda r: compute_hash(r["prev_hash"], canonical_row(r)), row)


def _digest_or_none(digest: Callable[[Any], str], value: Any) -> str | None:
    try:
        return digest(value)
    except ValueError:  # a value with no canonical form (NaN, a naive datetime): matches nothing
        return None


def _orphans(conn: Connection, campaign_id: int) -> list[ChainProblem]:
    """A finished trial's result is its own finished attempt, or, for a trial a
    continuation carried over, the finished attempt of the trial it points at."""
    result_row = exists().where(
        _ATTEMPTS.c.trial_pk == func.coalesce(Trial.carried_from_trial_pk, Trial.id), _ATTEMPTS.c.status == "finished"
    )
    orphaned = conn.execute(
        select(Trial.trial_id).where(Trial.campaign_id == campaign_id, Trial.status == "finished", ~result_row).order_by(Trial.position)
    ).scalars()
    return [
        ChainProblem(campaign_id, "missing", f"trial {trial_id} is finished but has no finished attempt row (the row was deleted or edited)")
        for trial_id in orphaned
    ]


def _readable_rows(conn: Connection, campaign_id: int, problem) -> list[Mapping[str, Any]]:
    """All rows in seq order; a row the types cannot read becomes a problem, not a crash."""
    order = (_ATTEMPTS.c.seq, _ATTEMPTS.c.id)
    try:
        return list(conn.execute(select(_ATTEMPTS).where(_ATTEMPTS.c.campaign_id == campaign_id, _in_chain()).order_by(*order)).mappings())
    except (ValueError, TypeError):
        pass  # read them one by one to name the bad one
    rows = []
    for attempt_id, seq in conn.execute(select(_ATTEMPTS.c.id, _ATTEMPTS.c.seq).where(_ATTEMPTS.c.campaign_id == campaign_id, _in_chain()).order_by(*order)):
        try:
            rows.append(_row(conn, attempt_id))
        except (ValueError, TypeError):
            detail = f"attempt {attempt_id} holds a value its column's type cannot read (the row was edited)"
            problem("unreadable", detail, seq=seq if isinstance(seq, int) else None)
    return rows


# --- reads ------------------------------------------------------------------------


def read_rows(conn: Connection, campaign_id: int) -> list[Sequence[Any]]:
    """Every attempt row of a campaign as stored (``RAW_COLUMNS``), in seq order: a running
    row still holding its provisional negative seq comes first and is no link yet."""
    stmt = _raw_select().where(_ATTEMPTS.c.campaign_id == campaign_id).order_by(_ATTEMPTS.c.seq)
    return _stored(conn, conn.execute(stmt).all())


def _raw_row(conn: Connection, attempt_id: int) -> Sequence[Any]:
    rows = _stored(conn, conn.execute(_raw_select().where(_ATTEMPTS.c.id == attempt_id)).all())
    if not rows:
        raise UsageProblem(f"no attempt {attempt_id} in this store", option="ATTEMPT_ID")
    return rows[0]


def _raw_select() -> Any:
    """The columns untyped: values exactly as the database returns them (no conversion)."""
    return select(*(type_coerce(_ATTEMPTS.c[name], NullType()).label(name) for name in RAW_COLUMNS))


def _stored(conn: Connection, rows: list[Any]) -> list[Sequence[Any]]:
    """SQLite's values are the stored form already; other databases' are put in it."""
    if conn.dialect.name == "sqlite":
        return rows
    return [tuple(map(stored_form, row)) for row in rows]


def _seal_digest(conn: Connection, attempt_id: int, prev: str | None) -> str:
    """Format 2's row_hash of the row as stored now, after ``prev``."""
    raw = _raw_row(conn, attempt_id)
    try:
        return row_digest((prev, *raw[COLUMN["campaign_id"] :]))
    except ValueError as exc:
        raise StoreError(f"attempt {attempt_id} cannot be sealed: {exc}") from None


def _row(conn: Connection, attempt_id: int) -> Mapping[str, Any]:
    row = conn.execute(select(_ATTEMPTS).where(_ATTEMPTS.c.id == attempt_id)).mappings().first()
    if row is None:
        raise UsageProblem(f"no attempt {attempt_id} in this store", option="ATTEMPT_ID")
    return row


def _in_chain() -> Any:
    """Rows that are links of the chain: all but running rows still holding their
    provisional negative seq (they join the chain when they finish)."""
    return ~((_ATTEMPTS.c.status == "running") & (_ATTEMPTS.c.seq < 0))


def _links(conn: Connection, campaign_id: int) -> list[Mapping[str, Any]]:
    stmt = (
        select(_ATTEMPTS.c.id, _ATTEMPTS.c.seq, _ATTEMPTS.c.status, _ATTEMPTS.c.row_hash)
        .where(_ATTEMPTS.c.campaign_id == campaign_id, _in_chain())
        .order_by(_ATTEMPTS.c.seq)
    )
    return list(conn.execute(stmt).mappings())


def _genesis(conn: Connection, campaign_id: int) -> str:
    digest = conn.execute(select(Campaign.experiment_digest).where(Campaign.id == campaign_id)).scalar_one_or_none()
    if digest is None:
        raise UsageProblem(f"no campaign {campaign_id} in this store", option="CAMPAIGN_ID")
    return digest
