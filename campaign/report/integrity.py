"""Before a report publishes numbers, the attempt rows behind them must verify.

``check`` runs the store's hash-chain verification (``campaign verify``) over
the campaign and every campaign it continues (a continuation's results and
spend include theirs). ``refuse_unless_verified`` turns a failed check into
one line naming the first problem; ``campaign report`` and ``campaign export``
stop there unless the operator passes ``--allow-unverified``, and the report
they then write says ``integrity.chain_verified: false`` in its JSON and in a
warning at the top of its Markdown.

Each report also publishes where the chains it read ended (``integrity.chains``):
``published_ends`` reads them back for ``campaign verify --against``, which checks
that a store still holds what the report was built from.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from sqlalchemy import Connection, Engine

from campaign import inputs
from campaign.errors import CampaignError, UsageProblem
from campaign.store import chain, repository
from campaign.store import MAX_INTEGER


class UnverifiedStore(CampaignError):
    """The store's hash chain does not verify: its numbers may have been edited."""


@dataclass(frozen=True)
class Integrity:
    """The verification of the campaigns behind a report (``checked`` False: not run)."""

    checked: bool
    campaigns: tuple[int, ...] = ()
    problems: tuple[chain.ChainProblem, ...] = ()

    @property
    def verified(self) -> bool | None:
        return (not self.problems) if self.checked else None

    def as_report(self, ends: Sequence[chain.ChainEnd] = ()) -> dict[str, Any]:
        """``ends``: where the chains the report read ended (published whether or not
        they verified: they say which rows the report was built from)."""
        return {
            "chain_verified": self.verified,
            "chain_verified_reason": None if self.checked else "not_checked",
            "problems": len(self.problems) if self.checked else None,
            "campaigns_verified": list(self.campaigns) if self.checked else None,
            "chains": [end.as_report() for end in ends],
        }


NOT_CHECKED = Integrity(checked=False)


def check(engine: Engine, campaign_id: int) -> Integrity:
    """Verify the campaign's chain and those of the campaigns it continues."""
    campaigns = tuple(repository.lineage(engine, campaign_id))
    with engine.connect() as conn:
        return check_rows(conn, campaigns, read_lineage(conn, campaigns))


def read_lineage(conn: Connection, campaigns: Sequence[int]) -> dict[int, list[Sequence[Any]]]:
    """Every attempt row of each campaign, as stored (``chain.read_rows``)."""
    return {cid: chain.read_rows(conn, cid) for cid in campaigns}


def check_rows(conn: Connection, campaigns: Sequence[int], rows: Mapping[int, Sequence[Sequence[Any]]]) -> Integrity:
    """The chain check of these campaigns from their rows, read once: a report builds its
    trials from the same rows."""
    problems = [p for cid in campaigns for p in chain.verify_rows(conn, cid, rows[cid])]
    return Integrity(checked=True, campaigns=tuple(campaigns), problems=tuple(problems))


_HEX64 = re.compile(r"[0-9a-f]{64}")
# As many as the report's schema lets a report publish (one per campaign of its lineage).
MAX_CHAINS = 64


def published_ends(path: Path) -> tuple[chain.ChainEnd, ...]:
    """The chain ends a report's JSON published, for ``campaign verify --against``."""
    raw = inputs.read_bytes(path, "--against", "report")  # a FIFO, a device or a loop refused by name
    try:
        report = orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise UsageProblem(f"{path} is not JSON; name the report.json `campaign report` wrote", option="--against") from None
    integrity = report.get("integrity") if isinstance(report, dict) else None
    chains = integrity.get("chains") if isinstance(integrity, dict) else None
    if not isinstance(chains, list) or not chains:
        raise UsageProblem(
            f"{path} publishes no chain ends (integrity.chains): it is not a campaign report, or one written before reports published them; "
            "write it again with `campaign report` from a store you trust",
            option="--against",
        )
    if len(chains) > MAX_CHAINS:
        raise UsageProblem(f"{path}: integrity.chains has {len(chains)} entries and a report publishes at most {MAX_CHAINS}; the report was edited", option="--against")
    ends = tuple(_end(path, i, item) for i, item in enumerate(chains))
    if len({end.campaign_id for end in ends}) != len(ends):
        raise UsageProblem(f"{path}: integrity.chains names a campaign twice; the report was edited", option="--against")
    return ends


def _end(path: Path, i: int, item: Any) -> chain.ChainEnd:
    fields = (item.get("campaign_id"), item.get("links"), item.get("head"), item.get("final")) if isinstance(item, dict) else (None,) * 4
    cid, links, head, final = fields
    if _whole(cid, 1) and _whole(links, 0) and isinstance(head, str) and _HEX64.fullmatch(head) and type(final) is bool:
        return chain.ChainEnd(cid, links, head, final)
    raise UsageProblem(
        f"{path}: integrity.chains[{i}] is not a chain end (a campaign_id, a count of links, a 64-hex head, final true or false); the report was edited",
        option="--against",
    )


def _whole(value: Any, least: int) -> bool:
    return type(value) is int and least <= value <= MAX_INTEGER


PUBLISH_ANYWAY = "`--allow-unverified` publishes the report anyway, marked unverified"


def refuse_unless_verified(integrity: Integrity, campaign_id: int, *, what_then: str = PUBLISH_ANYWAY) -> None:
    """One line naming the first problem, what shows them all, and ``what_then`` (by default,
    how to publish anyway)."""
    if integrity.verified is not False:
        return
    n = len(integrity.problems)
    raise UnverifiedStore(
        f"campaign {campaign_id}: the attempt rows do not verify ({n} problem{'s' if n != 1 else ''}; first: {' '.join(integrity.problems[0].line().split())}); "
        f"`campaign verify` shows all, {what_then}"
    )


__all__ = ["NOT_CHECKED", "Integrity", "UnverifiedStore", "check", "check_rows", "published_ends", "read_lineage", "refuse_unless_verified"]
