"""What the view reads from the store, opened read-only.

The database enforces read-only, not this code: SQLite files are opened with
``mode=ro`` and ``query_only`` (the engine factory's read-only mode, the one
``campaign sql`` uses), and a PostgreSQL session starts with
``default_transaction_read_only`` on. Beyond the report (``build_report``),
the view reads only the campaigns list's allowlisted columns, the hash-chain
verdict ``campaign verify`` computes, and the spend limits the run recorded,
each through the store's own queries and reduced here to values a shared
report may hold.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import Engine

from campaign.errors import SchemaAhead, SchemaBehind, StoreError, UsageProblem
from campaign.store import STORE_NAME
from campaign.report.integrity import Integrity
from campaign.report.allowlist import enum_or_unlisted
from campaign.vocabulary import CAMPAIGN_KINDS, CAMPAIGN_STATES, STOP_REASONS
from campaign.store import chain, repository
from campaign.store.engine import describe, make_engine, resolve_url
from campaign.store.migrate import schema_state

# The kinds of problem `campaign verify` names (chain.ChainProblem.kind).
CHAIN_PROBLEM_KINDS = ("edited", "missing", "broken_link", "unsealed", "running_not_last", "unreadable")


class CampaignSummary(repository.CampaignCounts):
    """One row of the campaigns list (``list_campaigns``): its words passed through the
    report's vocabularies, so enum members and counts only."""

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

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
        "foreign": UsageProblem(f"{describe(url)} is a database with tables that are not a campaign store; nothing to show", option="--db"),
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
    return [
        CampaignSummary(
            id=c.id,
            # Stored text passes through the report's vocabularies, as in a shared report.
            kind=enum_or_unlisted(c.kind, CAMPAIGN_KINDS) or "unlisted",
            state=enum_or_unlisted(c.state, CAMPAIGN_STATES) or "unlisted",
            stop_reason=enum_or_unlisted(c.stop_reason, STOP_REASONS),
            finished=c.finished,
            scheduled=c.scheduled,
        )
        for c in repository.campaign_counts(engine, campaign_id)
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
    edit made outside the engine (to an older row, a trial or the campaign row) moves
    the head of a campaign that is not running at once (the store's change stamp).
    A running one's moves with its next attempt, and its state is not in the chain
    (an edit can make a closed campaign read as running), so under such a head
    (``chain.settled``) a verdict is kept at most ``RECHECK_S``, and never lent to a
    report: a report built then verifies the rows it shows. A report built after
    the head moved verifies the rows it reads and leaves its verdict here
    (``record``), so a page reads them once. ``clock``: seconds, monotonic.
    """

    RECHECK_S = 30.0

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        # campaign id -> (the head it was verified at, its problems, when)
        self._seen: dict[int, tuple[tuple[Any, ...], tuple[chain.ChainProblem, ...], float]] = {}
        self._lock = threading.Lock()

    def problems(self, engine: Engine, campaign_id: int) -> tuple[chain.ChainProblem, ...]:
        at = chain.head(engine, campaign_id)
        now = self._clock()
        with self._lock:
            seen = self._seen.get(campaign_id)
        if seen is not None and seen[0] == at and (chain.settled(at) or now - seen[2] < self.RECHECK_S):
            return seen[1]
        found = tuple(chain.verify_chain(engine, campaign_id))
        with self._lock:
            self._seen[campaign_id] = (at, found, now)
        return found

    def known(self, heads: Mapping[int, tuple[Any, ...]]) -> Integrity | None:
        """The verification of these campaigns when each was verified at the head given,
        a settled one (None: one of them was not)."""
        with self._lock:
            seen = [self._seen.get(cid) for cid in heads]
        if not heads or any(s is None or s[0] != heads[cid] or not chain.settled(s[0]) for cid, s in zip(heads, seen)):
            return None
        return Integrity(checked=True, campaigns=tuple(heads), problems=tuple(p for s in seen if s is not None for p in s[1]))

    def record(self, heads: Mapping[int, tuple[Any, ...]], integrity: Integrity) -> None:
        """Keep what a report's own check found, under the heads read before it read its
        rows: if they moved meanwhile, the next call sees a newer head and verifies again."""
        if not integrity.checked or tuple(heads) != integrity.campaigns:
            return
        now = self._clock()
        with self._lock:
            for cid, at in heads.items():
                self._seen[cid] = (at, tuple(p for p in integrity.problems if p.campaign_id == cid), now)


def verify(engine: Engine, checks: ChainChecks, campaign_id: int | None = None) -> ChainVerdict:
    """The hash chain as `campaign verify` checks it, reduced to problem kinds and seqs."""
    ids = [campaign_id] if campaign_id is not None else [c.id for c in list_campaigns(engine)]
    return verdict(chain.count_rows(engine, campaign_id), [p for cid in ids for p in checks.problems(engine, cid)])


def verdict(rows: int, problems: Iterable[chain.ChainProblem]) -> ChainVerdict:
    """Problems reduced to what a page may show: their kinds (in the vocabulary) and seqs."""
    return ChainVerdict(rows, tuple((enum_or_unlisted(p.kind, CHAIN_PROBLEM_KINDS) or "unlisted", p.seq if isinstance(p.seq, int) else None) for p in problems))
