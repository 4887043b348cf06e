"""Where a chain ended when a report read it, and whether a store still holds that chain.

A chain is self-checking but not anchored: removing its last rows (and setting their
trials back to not attempted) leaves a shorter chain that verifies, and whoever runs
this code can reseal an edited one. A report therefore publishes each campaign's end:
how many links were sealed, and ``head``, the ``row_hash`` of the last one (the
experiment digest when there is none: the hash the next link would point to). Anyone
who holds the report can later check a store against it (``campaign verify
--against``): the link at that seq must still bear that hash. The chain may have
grown since (a resumed campaign appends), but what the report was built from cannot
have been cut off or resealed without the check naming it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, Engine, func, select

from campaign.store import scope
from campaign.store.chain.rows import ATTEMPTS, ROW_HASH, SEQ, ChainProblem, in_chain
from campaign.store.models import Campaign


@dataclass(frozen=True)
class ChainEnd:
    campaign_id: int
    links: int  # the seq of the last sealed link (all of seq 1..links, in a chain that verifies)
    head: str

    def as_report(self) -> dict[str, Any]:
        return {"campaign_id": self.campaign_id, "links": self.links, "head": self.head}


def chain_ends(conn: Connection, rows: Mapping[int, Sequence[Sequence[Any]]]) -> tuple[ChainEnd, ...]:
    """Each campaign's end, from its attempt rows as ``read_rows`` returned them (seq order)."""
    found = conn.execute(select(Campaign.id, Campaign.experiment_digest).where(Campaign.id.in_(list(rows))))
    genesis = {campaign_id: digest for campaign_id, digest in found}
    ends = []
    for campaign_id, campaign_rows in rows.items():
        sealed = [row for row in campaign_rows if row[ROW_HASH] is not None and type(row[SEQ]) is int and row[SEQ] > 0]
        last = sealed[-1] if sealed else None
        ends.append(ChainEnd(campaign_id, 0, genesis[campaign_id]) if last is None else ChainEnd(campaign_id, last[SEQ], last[ROW_HASH]))
    return tuple(ends)


def check_ends(engine: Engine, ends: Sequence[ChainEnd]) -> list[ChainProblem]:
    """What keeps this store from holding the chains that ended at ``ends``: a campaign
    gone, fewer links than were published, or another hash at the published end."""
    problems = []
    with scope.reading(engine) as conn:
        for end in ends:
            problem = _check_end(conn, end)
            if problem is not None:
                problems.append(problem)
    return problems


def _check_end(conn: Connection, end: ChainEnd) -> ChainProblem | None:
    cid = end.campaign_id
    genesis = conn.execute(select(Campaign.experiment_digest).where(Campaign.id == cid)).scalar_one_or_none()
    if genesis is None:
        return ChainProblem(cid, "missing", "the report's campaign is not in this store (it was deleted, or this is another store)")
    if end.links == 0:
        if genesis == end.head:
            return None
        return ChainProblem(cid, "edited", "the campaign's experiment digest is not the one the report published (the campaign row was edited, or this is another store)")
    mine = (ATTEMPTS.c.campaign_id == cid) & in_chain()
    link = conn.execute(select(ATTEMPTS.c.id, ATTEMPTS.c.row_hash).where(mine, ATTEMPTS.c.seq == end.links)).first()
    if link is None:
        have = conn.execute(select(func.max(ATTEMPTS.c.seq)).where(mine, ATTEMPTS.c.row_hash.is_not(None))).scalar()
        detail = f"the report published {end.links} links and the store's chain has {have or 0} (rows were removed from its end)"
        return ChainProblem(cid, "missing", detail, end.links)
    if link[1] == end.head:
        return None
    detail = "its row_hash is not the head the report published: the chain up to it is not the one the report was built from (rows were edited and resealed, or this is another store)"
    return ChainProblem(cid, "edited", detail, end.links, link[0])


__all__ = ["ChainEnd", "chain_ends", "check_ends"]
