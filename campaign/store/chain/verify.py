"""Verification: recompute every row's hash and its link, and name each problem.

An intact chain is proven column by column; only a chain that is not gets the
row-by-row pass that names each problem (edited, missing, broken_link,
unsealed, running_not_last, unreadable). The campaign and trial rows the chain
pins through its genesis are checked alongside (``pinned``)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from operator import itemgetter
from typing import Any

from sqlalchemy import Connection, Engine, func, select

from campaign.bulk import collector_paused
from campaign.errors import UsageProblem
from campaign.store import scope
from campaign.store.engine import change_stamp
from campaign.store.chain.hashing import digest_or_none, fast_digests, format1, mismatch, row_digest
from campaign.store.chain.pinned import pinned_problems
from campaign.store.chain.rows import (
    ATTEMPTS,
    ID,
    NUMBERS,
    PAYLOAD,
    PREV_HASH,
    ROW_HASH,
    SEQ,
    STATUS,
    ChainProblem,
    genesis,
    in_chain,
    read_rows,
    row_of,
)
from campaign.store.models import Campaign


def verify_chain(engine: Engine, campaign_id: int | None = None) -> list[ChainProblem]:
    """Every problem in one campaign's chain, or in every campaign's; empty when intact."""
    with scope.one_state(engine) as conn:  # a campaign may be running: its rows and its trials as of one commit
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
    hash. A reader that verified the chain at one head need not again until it moves.

    An edit made outside the engine (to an older row, a trial or the campaign row) moves
    no link; so for a campaign that is not running, whose links no longer move, the head
    holds the store's change stamp too, and any commit to the store moves it. (A running
    campaign's head moves with its next attempt; its runner's and workers' heartbeats
    would move the stamp every few seconds.)"""
    c = ATTEMPTS.c
    mine = c.campaign_id == campaign_id
    stamp = change_stamp(engine)  # first: a commit after it moves the next head
    with scope.reading(engine) as conn:
        running = conn.execute(select(Campaign.state).where(Campaign.id == campaign_id)).scalar_one_or_none() == "running"
        counts = conn.execute(select(func.count(), func.count(c.row_hash), func.max(c.seq), func.max(c.id)).where(mine)).one()
        last = conn.execute(select(c.row_hash).where(mine).order_by(c.seq.desc()).limit(1)).scalar_one_or_none()
    return (*counts, last, None if running else stamp)


def settled(at: tuple[Any, ...]) -> bool:
    """Whether ``at`` (a ``head``) moves with every commit to the store, an edit to an
    older row included: a campaign that is not running, on a store with a change stamp.
    A verdict kept under an unsettled head may be out of date (the campaign's state is
    not in the chain: an edit can make a closed campaign read as running)."""
    return at[-1] is not None


def count_rows(engine: Engine, campaign_id: int | None = None) -> int:
    """How many attempt rows a verification covers."""
    stmt = select(func.count()).select_from(ATTEMPTS)
    if campaign_id is not None:
        stmt = stmt.where(ATTEMPTS.c.campaign_id == campaign_id)
    with scope.reading(engine) as conn:
        return conn.execute(stmt).scalar_one()


def verify_rows(conn: Connection, campaign_id: int, rows: Sequence[Sequence[Any]]) -> list[ChainProblem]:
    """The problems of a campaign's chain, given every attempt row of it as ``read_rows``
    returned them (a report reads them once, for this and for its trials).

    An intact chain is proven column by column; only a chain that is not gets the
    row-by-row pass that names each problem."""
    links = rows[_provisional(rows) :]
    problems = [] if _intact(conn, campaign_id, links) else _problems(conn, campaign_id, links)
    return problems + pinned_problems(conn, campaign_id, rows)


def _provisional(rows: Sequence[Sequence[Any]]) -> int:
    """How many rows at the start are running rows still holding their provisional
    negative seq: not links yet (they sort first, before seq 1)."""
    n = 0
    for row in rows:
        seq = row[SEQ]
        if row[STATUS] != "running" or type(seq) is not int or seq >= 0:
            break
        n += 1
    return n


def _intact(conn: Connection, campaign_id: int, links: Sequence[Sequence[Any]]) -> bool:
    """seq 1..n without a gap, every row sealed but a running last one, each prev_hash the
    row_hash before it (the genesis first), and every sealed row matching its hash."""
    n = len(links)
    if list(map(itemgetter(SEQ), links)) != list(range(1, n + 1)):
        return False
    hashes = list(map(itemgetter(ROW_HASH), links))
    sealed = n - 1 if n and hashes[-1] is None and links[-1][STATUS] == "running" else n
    if None in hashes[:sealed]:
        return False
    prevs = list(map(itemgetter(PREV_HASH), links[:sealed]))
    if sealed and (prevs[0] != genesis(conn, campaign_id) or prevs[1:] != hashes[: sealed - 1]):
        return False
    return _all_match(conn, campaign_id, links[:sealed])


def _all_match(conn: Connection, campaign_id: int, links: Sequence[Sequence[Any]]) -> bool:
    """Every row matches its row_hash: format 2 by orjson, then by the reference encoder
    or as format 1 (rows sealed before format 2 existed), the likelier first: a few
    rows left over are format 2 with text or floats orjson spells its own way; most of
    a chain left over is an older store's."""
    stale = links
    if links and _finite(conn, campaign_id):
        try:
            stale = [row for row, digest in zip(links, fast_digests(links)) if digest != row[ROW_HASH]]
        except TypeError:  # a value no encoder takes (a blob written in): each row on its own, then
            stale = links
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
    return [row for row in rows if digest_or_none(row_digest, row[PAYLOAD]) != row[ROW_HASH]]


def _format1_matches(conn: Connection, campaign_id: int, rows: Sequence[Sequence[Any]]) -> list[Sequence[Any]] | None:
    """The rows that do not match as format 1, read through the models' types (None: a
    value its type cannot read, which the row-by-row pass names)."""
    try:
        typed = {row["id"]: row for row in conn.execute(select(ATTEMPTS).where(ATTEMPTS.c.campaign_id == campaign_id)).mappings()}
    except (ValueError, TypeError):
        return None
    return [row for row in rows if row[ID] not in typed or format1(typed[row[ID]]) != row[ROW_HASH]]


def _finite(conn: Connection, campaign_id: int) -> bool:
    """No column of the campaign's rows holds an infinity (what orjson would write as null).

    SQLite stores one in any column that is not text, and cannot store NaN; one sum per
    column over the rows settles it (a sum of finite values here stays finite). Other
    databases' rows are put in SQLite's form value by value (``stored_form``), which
    writes a non-finite number as its text, so for them there is nothing to check."""
    if conn.dialect.name != "sqlite":
        return True
    total = conn.execute(select(sum(func.total(ATTEMPTS.c[name]) for name in NUMBERS)).where(ATTEMPTS.c.campaign_id == campaign_id)).scalar()
    return total is not None and math.isfinite(total)


def _problems(conn: Connection, campaign_id: int, links: Sequence[Sequence[Any]]) -> list[ChainProblem]:
    problems: list[ChainProblem] = []

    def problem(kind: str, detail: str, row: Mapping[str, Any] | None = None, seq: int | None = None) -> None:
        problems.append(ChainProblem(campaign_id, kind, detail, seq if row is None else row["seq"], None if row is None else row["id"]))

    raw = {row[ID]: row for row in links}
    rows = _readable_rows(conn, campaign_id, problem)
    prev: str | None = genesis(conn, campaign_id)
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
        wrong = mismatch(raw.get(row["id"]), row)
        if wrong is not None:
            problem("edited", wrong, row)
        if prev is not None and not gap and row["prev_hash"] != prev:
            before = "the campaign's experiment digest" if index == 0 else f"the row_hash of seq {rows[index - 1]['seq']}"
            problem("broken_link", f"prev_hash is not {before} (a row was deleted, inserted or reordered)", row)
        prev = row["row_hash"]
    return problems


def _readable_rows(conn: Connection, campaign_id: int, problem) -> list[Mapping[str, Any]]:
    """All rows in seq order; a row the types cannot read becomes a problem, not a crash."""
    order = (ATTEMPTS.c.seq, ATTEMPTS.c.id)
    try:
        return list(conn.execute(select(ATTEMPTS).where(ATTEMPTS.c.campaign_id == campaign_id, in_chain()).order_by(*order)).mappings())
    except (ValueError, TypeError):
        pass  # read them one by one to name the bad one
    rows = []
    for attempt_id, seq in conn.execute(select(ATTEMPTS.c.id, ATTEMPTS.c.seq).where(ATTEMPTS.c.campaign_id == campaign_id, in_chain()).order_by(*order)):
        try:
            rows.append(row_of(conn, attempt_id))
        except (ValueError, TypeError):
            detail = f"attempt {attempt_id} holds a value its column's type cannot read (the row was edited)"
            problem("unreadable", detail, seq=seq if isinstance(seq, int) else None)
    return rows
