"""Where a chain ended when a report read it, and whether a store still holds that chain.

A chain is self-checking but not anchored: removing its last rows (and setting their
trials back to not attempted) leaves a shorter chain that verifies, and whoever runs
this code can reseal an edited one. A report therefore publishes each campaign's end,
the report's campaign first and then the campaigns it continues: how many links were
sealed, ``head``, the ``row_hash`` of the last one (the experiment digest when there is
none: the hash the next link would point to), and whether the chain was ``final``
(its campaign had completed, or another continues it: it never grows again). Anyone
who holds the report can later check a store against it (``campaign verify
--against``):
- the link at that seq must still bear that hash (nothing before it removed or resealed);
- a final chain must have nothing after it (no verdict or spend added past its end);
- the report's campaign must still continue the same campaigns (a continuation
  unlinked would drop their results and spend).
A chain that was not final may have grown since: a resumed campaign appends."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, Engine, func, select

from campaign.store import scope
from campaign.store.chain.pinned import ancestors
from campaign.store.chain.rows import ATTEMPTS, ROW_HASH, SEQ, ChainProblem, in_chain
from campaign.store.chain.verify import count_rows, verify_chain
from campaign.store.models import Campaign


@dataclass(frozen=True)
class ChainEnd:
    campaign_id: int
    links: int  # the seq of the last sealed link (all of seq 1..links, in a chain that verifies)
    head: str
    final: bool

    def as_report(self) -> dict[str, Any]:
        return {"campaign_id": self.campaign_id, "links": self.links, "head": self.head, "final": self.final}


def chain_ends(conn: Connection, rows: Mapping[int, Sequence[Sequence[Any]]]) -> tuple[ChainEnd, ...]:
    """Each campaign's end, from its attempt rows as ``read_rows`` returned them (seq order),
    in the order of ``rows`` (a report's lineage: its campaign first)."""
    ids = list(rows)
    found = conn.execute(select(Campaign.id, Campaign.experiment_digest, Campaign.state).where(Campaign.id.in_(ids)))
    known = {cid: (digest, state) for cid, digest, state in found}
    continued = set(conn.execute(select(Campaign.continues_campaign_id).where(Campaign.continues_campaign_id.in_(ids))).scalars())
    ends = []
    for campaign_id, campaign_rows in rows.items():
        genesis, state = known[campaign_id]
        final = state == "completed" or campaign_id in continued
        sealed = [row for row in campaign_rows if row[ROW_HASH] is not None and type(row[SEQ]) is int and row[SEQ] > 0]
        last = sealed[-1] if sealed else None
        ends.append(ChainEnd(campaign_id, 0, genesis, final) if last is None else ChainEnd(campaign_id, last[SEQ], last[ROW_HASH], final))
    return tuple(ends)


def verify_against(engine: Engine, campaign_id: int | None, ends: Sequence[ChainEnd]) -> tuple[list[ChainProblem], int]:
    """``verify_chain`` of the campaign (every campaign when None) and of every campaign the
    ends name, then what keeps the store from holding the chains that ended there; with
    how many attempt rows the verification covered."""
    with scope.reading(engine) as conn:
        stored = set(conn.execute(select(Campaign.id)).scalars())
    ids = None if campaign_id is None else sorted({campaign_id, *(end.campaign_id for end in ends if end.campaign_id in stored)})
    if ids is None:
        problems, covered = verify_chain(engine), count_rows(engine)
    else:
        problems, covered = [p for cid in ids for p in verify_chain(engine, cid)], sum(count_rows(engine, cid) for cid in ids)
    with scope.one_state(engine) as conn:
        problems += _lineage(conn, ends) + [p for end in ends if (p := _check_end(conn, end)) is not None]
    return problems, covered


def _lineage(conn: Connection, ends: Sequence[ChainEnd]) -> list[ChainProblem]:
    """The report's campaign still continues the campaigns whose ends it published."""
    if not ends:
        return []
    first = ends[0].campaign_id
    if conn.execute(select(Campaign.id).where(Campaign.id == first)).first() is None:
        return []  # ``_check_end`` names it
    published, stored = [end.campaign_id for end in ends], [first, *ancestors(conn, first)]
    if stored == published:
        return []
    detail = f"the campaign continues {stored[1:] or 'none'}, and the report was built from {published[1:] or 'none'} (continues_campaign_id was edited)"
    return [ChainProblem(first, "edited", detail)]


def _check_end(conn: Connection, end: ChainEnd) -> ChainProblem | None:
    cid = end.campaign_id
    genesis = conn.execute(select(Campaign.experiment_digest).where(Campaign.id == cid)).scalar_one_or_none()
    if genesis is None:
        return ChainProblem(cid, "missing", "the report's campaign is not in this store (it was deleted, or this is another store)")
    mine = (ATTEMPTS.c.campaign_id == cid) & in_chain()
    if end.links == 0:
        if genesis != end.head:
            return ChainProblem(cid, "edited", "the campaign's experiment digest is not the one the report published (the campaign row was edited, or this is another store)")
    else:
        link = conn.execute(select(ATTEMPTS.c.id, ATTEMPTS.c.row_hash).where(mine, ATTEMPTS.c.seq == end.links)).first()
        if link is None:
            have = conn.execute(select(func.max(ATTEMPTS.c.seq)).where(mine, ATTEMPTS.c.row_hash.is_not(None))).scalar()
            detail = f"the report published {end.links} links and the store's chain has {have or 0} (rows were removed from its end)"
            return ChainProblem(cid, "missing", detail, end.links)
        if link[1] != end.head:
            detail = "its row_hash is not the head the report published: the chain up to it is not the one the report was built from (rows were edited and resealed, or this is another store)"
            return ChainProblem(cid, "edited", detail, end.links, link[0])
    if end.final:
        beyond = conn.execute(select(func.count()).where(ATTEMPTS.c.campaign_id == cid, (ATTEMPTS.c.seq > end.links) | (ATTEMPTS.c.seq < 1))).scalar_one()
        if beyond:
            detail = f"{beyond} attempt rows past the end of a chain the report published as final (its campaign had completed, or was continued): the rows were added"
            return ChainProblem(cid, "edited", detail, end.links)
    return None


__all__ = ["ChainEnd", "chain_ends", "verify_against"]
