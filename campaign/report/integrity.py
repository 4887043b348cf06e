"""Before a report publishes numbers, the attempt rows behind them must verify.

``check`` runs the store's hash-chain verification (``campaign verify``) over
the campaign and every campaign it continues (a continuation's results and
spend include theirs). ``refuse_unless_verified`` turns a failed check into
one line naming the first problem; ``campaign report`` and ``campaign export``
stop there unless the operator passes ``--allow-unverified``, and the report
they then write says ``integrity.chain_verified: false`` in its JSON and in a
warning at the top of its Markdown.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, Engine

from campaign.errors import CampaignError
from campaign.store import chain, repository


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

    def as_report(self) -> dict[str, Any]:
        return {
            "chain_verified": self.verified,
            "chain_verified_reason": None if self.checked else "not_checked",
            "problems": len(self.problems) if self.checked else None,
            "campaigns_verified": list(self.campaigns) if self.checked else None,
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


__all__ = ["NOT_CHECKED", "Integrity", "UnverifiedStore", "check", "check_rows", "read_lineage", "refuse_unless_verified"]
