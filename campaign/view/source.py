"""What the view reads from the store, opened read-only.

The database enforces read-only, not this code: SQLite files are opened with
``mode=ro`` and ``query_only`` (the engine factory's read-only mode, the one
``campaign sql`` uses), and a PostgreSQL session starts with
``default_transaction_read_only`` on. Beyond the report (``build_report``),
the view reads only the campaigns list's allowlisted columns, the hash-chain
verdict ``campaign verify`` computes, and the spend caps the experiment
records, each reduced here to values a shared report may hold.
"""

from __future__ import annotations

import json
import math
import re
import threading
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, case, func, select

from campaign.errors import SchemaAhead, SchemaBehind, StoreError, UsageProblem
from campaign.store import STORE_NAME
from campaign.report.integrity import Integrity
from campaign.report.allowlist import enum_or_unlisted
from campaign.report.schema import TOKEN_RE
from campaign.vocabulary import CAMPAIGN_KINDS, CAMPAIGN_STATES, STOP_REASONS
from campaign.store import chain, repository
from campaign.store.engine import describe, make_engine, resolve_url
from campaign.store.migrate import schema_state
from campaign.store.models import Campaign, Trial

# The kinds of problem `campaign verify` names (chain.ChainProblem.kind).
CHAIN_PROBLEM_KINDS = ("edited", "missing", "broken_link", "unsealed", "running_not_last", "unreadable")


@dataclass(frozen=True)
class CampaignSummary:
    """One row of the campaigns list: enum members and counts only."""

    id: int
    kind: str
    state: str
    stop_reason: str | None
    finished: int
    scheduled: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "state": self.state,
            "stop_reason": self.stop_reason,
            "finished": self.finished,
            "scheduled": self.scheduled,
        }

    def fingerprint(self) -> str:
        """What the auto-refresh compares: a running page reloads when this changes."""
        return f"{self.state}:{self.stop_reason}:{self.finished}/{self.scheduled}"


@dataclass(frozen=True)
class ChainVerdict:
    """What `campaign verify` found: how many rows, and each problem's kind and seq."""

    rows: int
    problems: tuple[tuple[str, int | None], ...]

    @property
    def intact(self) -> bool:
        return not self.problems

    def by_kind(self) -> dict[str, int]:
        return dict(sorted(Counter(kind for kind, _ in self.problems).items()))

    def as_dict(self) -> dict[str, Any]:
        return {"intact": self.intact, "rows": self.rows, "problems": self.by_kind(), "seqs": sorted({s for _, s in self.problems if s is not None})}


@dataclass(frozen=True)
class SpendCaps:
    """Spend caps the experiment records: overall and per provider (USD; None: no cap)."""

    total_usd: float | None
    per_provider_usd: tuple[tuple[str, float], ...] = ()

    def for_provider(self, name: str) -> float | None:
        return dict(self.per_provider_usd).get(name)


# --- opening ----------------------------------------------------------------------


def store_target(db: str | None, output_dir: Path | None) -> str | None:
    """``--output-dir DIR`` means DIR/campaign.db, as `campaign coding --campaign` writes it."""
    if output_dir is None:
        return db
    directory = Path(output_dir).expanduser()
    if not directory.is_dir():
        raise UsageProblem(f"{output_dir} is not a directory; give the --output-dir a campaign ran with", option="--output-dir")
    store = directory / STORE_NAME
    if not store.is_file():
        raise UsageProblem(f"{output_dir} holds no campaign store ({STORE_NAME}); give the --output-dir a campaign ran with", option="--output-dir")
    return str(store.resolve())


def open_readonly(db: str | None) -> Engine:
    """An engine that cannot write, for a store at head; never creates or migrates anything."""
    url = resolve_url(db, must_exist=True)
    engine = make_engine(url, readonly=True)
    try:
        state = schema_state(engine)
    except Exception as exc:  # a file that is not a database, a refused connection
        engine.dispose()
        raise StoreError(f"cannot open the store at {describe(url)}: {exc.__class__.__name__}") from None
    problem = {
        "empty": UsageProblem(f"{describe(url)} holds no campaign store; nothing to show", option="--db"),
        "behind": SchemaBehind(f"the store at {describe(url)} is at an older schema; run `campaign db upgrade` (the view never changes a store)"),
        "ahead": SchemaAhead(f"the store at {describe(url)} was written by a newer campaign; upgrade campaign"),
    }.get(state)
    if problem is not None:
        engine.dispose()
        raise problem
    return engine


# --- reads -----------------------------------------------------------------------


def list_campaigns(engine: Engine, campaign_id: int | None = None) -> list[CampaignSummary]:
    """Every campaign (or one), oldest first, with finished/scheduled trial counts."""
    t = Trial.__table__.c
    counts = (
        select(t.campaign_id, func.count().label("scheduled"), func.coalesce(func.sum(case((t.status == "finished", 1), else_=0)), 0).label("finished"))
        .group_by(t.campaign_id)
        .subquery()
    )
    stmt = (
        select(Campaign.id, Campaign.kind, Campaign.state, Campaign.stop_reason, counts.c.finished, counts.c.scheduled)
        .outerjoin(counts, counts.c.campaign_id == Campaign.id)
        .order_by(Campaign.id)
    )
    if campaign_id is not None:
        stmt = stmt.where(Campaign.id == campaign_id)
    with engine.connect() as conn:
        rows = conn.execute(stmt).all()
    return [
        CampaignSummary(
            id=int(cid),
            # Stored text passes through the report's vocabularies, as in a shared report.
            kind=enum_or_unlisted(kind, CAMPAIGN_KINDS) or "unlisted",
            state=enum_or_unlisted(state, CAMPAIGN_STATES) or "unlisted",
            stop_reason=enum_or_unlisted(stop_reason, STOP_REASONS),
            finished=int(finished or 0),
            scheduled=int(scheduled or 0),
        )
        for cid, kind, state, stop_reason, finished, scheduled in rows
    ]


def get_summary(engine: Engine, campaign_id: int) -> CampaignSummary:
    found = list_campaigns(engine, campaign_id)
    if not found:
        raise UsageProblem(f"no campaign {int(campaign_id)} in this store", option="--campaign")
    return found[0]


class ChainChecks:
    """Each campaign's chain problems, verified once per change of its chain head.

    A page shows the chain verdict and a report that states it; verifying 100,000
    rows for every page (and again for its report) would cost seconds per refresh, so
    a campaign is verified again only when its head (``chain.head``) has moved. An
    edit made outside the engine to an older row shows once the head moves next.
    """

    def __init__(self) -> None:
        self._seen: dict[int, tuple[tuple[Any, ...], tuple[chain.ChainProblem, ...]]] = {}
        self._lock = threading.Lock()

    def problems(self, engine: Engine, campaign_id: int) -> tuple[chain.ChainProblem, ...]:
        at = chain.head(engine, campaign_id)
        with self._lock:
            seen = self._seen.get(campaign_id)
        if seen is not None and seen[0] == at:
            return seen[1]
        found = tuple(chain.verify_chain(engine, campaign_id))
        with self._lock:
            self._seen[campaign_id] = (at, found)
        return found

    def integrity(self, engine: Engine, campaign_id: int) -> Integrity:
        """The report's integrity block: the campaign and every campaign it continues."""
        campaigns = tuple(repository.lineage(engine, campaign_id))
        return Integrity(checked=True, campaigns=campaigns, problems=tuple(p for cid in campaigns for p in self.problems(engine, cid)))


def verify(engine: Engine, checks: ChainChecks, campaign_id: int | None = None) -> ChainVerdict:
    """The hash chain as `campaign verify` checks it, reduced to problem kinds and seqs."""
    ids = [campaign_id] if campaign_id is not None else [c.id for c in list_campaigns(engine)]
    problems = [p for cid in ids for p in checks.problems(engine, cid)]
    reduced = tuple((enum_or_unlisted(p.kind, CHAIN_PROBLEM_KINDS) or "unlisted", p.seq if isinstance(p.seq, int) else None) for p in problems)
    return ChainVerdict(chain.count_rows(engine, campaign_id), reduced)


def spend_caps(engine: Engine, campaign_id: int) -> SpendCaps:
    """The spend limits the latest run recorded: the campaign's cap (the paired lane's
    approved maximum, ``--max-total-spend-usd``) and each provider's (``--max-spend-usd``)."""
    with engine.connect() as conn:
        row = conn.execute(select(Campaign.spend_limits_json, Campaign.experiment_json).where(Campaign.id == campaign_id)).one_or_none()
    if row is None or not row.spend_limits_json:
        return SpendCaps(None)
    try:
        limits = json.loads(row.spend_limits_json)
        experiment = json.loads(row.experiment_json or "{}")
    except ValueError:
        return SpendCaps(None)
    if not isinstance(limits, dict):
        return SpendCaps(None)
    per_provider = _cap(limits.get("provider_max_spend_usd"))
    providers = experiment.get("providers") if isinstance(experiment, dict) else None
    names = [e["name"] for e in providers if isinstance(e, dict) and isinstance(e.get("name"), str) and TOKEN_RE.fullmatch(e["name"])] if isinstance(providers, list) else []
    return SpendCaps(_cap(limits.get("max_spend_usd")), tuple((name, per_provider) for name in names if per_provider is not None))


def _cap(value: Any) -> float | None:
    """A cap is a positive finite number (or its exact decimal text, as limits are kept); anything else is no cap."""
    if isinstance(value, str) and _DECIMAL_RE.fullmatch(value):
        value = float(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) and value > 0 else None


_DECIMAL_RE = re.compile(r"[0-9]{1,12}(?:\.[0-9]{1,12})?")
