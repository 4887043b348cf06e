"""The report's SQL: per-variant aggregates, per-task paired means, completion counts, spend.

With ``store/`` this is the one place SQL lives. Everything here is SQLAlchemy
Core (GROUP BY and conditional sums, no dialect-specific functions), so it
runs the same on SQLite and PostgreSQL and the database, not Python, does the
counting over large stores. Unknown stays NULL: ``sum`` and ``avg`` skip NULLs,
and every count of "known" values is a ``count(column)``. Dollar sums are
exact (``store.money``: integer nano-dollars in SQL, ``Decimal`` here).

Which attempt is a trial's result. A trial may own several attempt rows: an
attempt interrupted on request (or orphaned ``running`` by a killed runner)
keeps its row and its spend but carries no verdict, and the trial gets a fresh
attempt on resume. At most one attempt per trial is ``finished``: that one is
the trial's result. A campaign that continues a blocked one has trials that
carry an earlier campaign's verified result (``trials.carried_from_trial_pk``);
their attempts are read through that link, never copied. ``_OWNER`` below is
the one expression that says whose attempts a trial reads.

Two sets of attempts, then:

- results: the finished attempt of each trial in scope (through ``_OWNER``):
  outcomes, wall time, counters and the paired differences use these only (the
  per-trial rows pair ``scope_trials`` with the attempt rows the chain check read,
  by the same rule, in ``report.results``);
- spend: every attempt row of this campaign and of the campaigns it continues
  (``Scope.lineage``), whatever its status: interrupted attempts and an earlier
  campaign's attempts that were not carried over were paid for too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from sqlalchemy import Connection, Float, and_, case, cast, func, null, or_, select

from campaign.vocabulary import BASELINE, CODING, DIAGNOSTIC_COUNTERS, MISSING_COUNTERS
from campaign.store import money
from campaign.store.models import Attempt, Trial
from campaign.store.repository import counted_usd

attempts = Attempt.__table__
trials = Trial.__table__

# Values whose NULLs the report counts per variant ("what is missing"); the bridge
# diagnostics count apart, only with the diagnostic version marker.
_PLAIN_MISSING = tuple(name for name in MISSING_COUNTERS if name not in DIAGNOSTIC_COUNTERS)

# The trial row whose attempts a trial reads: its own, or, for a trial a
# continuation carried over, the earlier campaign's trial holding its result.
# Every join from a trial to its attempts goes through this expression.
_OWNER = func.coalesce(trials.c.carried_from_trial_pk, trials.c.id)
_FINISHED = attempts.c.status == "finished"
# Ended by the provider or the engine (DESIGN.md §9): no verdict, spend kept, trial ran again.
_FAULTED = attempts.c.status == "faulted"
# A trial with its result attempt (inner: trials that have one; outer: every trial).
_results = trials.join(attempts, and_(attempts.c.trial_pk == _OWNER, _FINISHED))
_results_outer = trials.outerjoin(attempts, and_(attempts.c.trial_pk == _OWNER, _FINISHED))
# An attempt with the trial row it belongs to (for spend: who ran it, not who reads it).
_spent = attempts.join(trials, trials.c.id == attempts.c.trial_pk)


@dataclass(frozen=True)
class Scope:
    """Which trials a report covers: one campaign, optionally one provider of it.

    ``lineage`` is the campaign and every campaign it continues (newest first),
    whose attempts the spend includes; empty means the campaign alone.
    """

    campaign_id: int
    provider: str | None = None
    lineage: tuple[int, ...] = field(default=())

    @property
    def campaigns(self) -> tuple[int, ...]:
        return self.lineage or (self.campaign_id,)

    @property
    def continues(self) -> bool:
        return len(self.campaigns) > 1

    def where(self) -> list[Any]:
        """The trials in scope."""
        clauses = [trials.c.campaign_id == self.campaign_id]
        if self.provider is not None:
            clauses.append(trials.c.provider == self.provider)
        return clauses

    def spend_where(self) -> list[Any]:
        """The attempts in scope for spend (with ``_spent``): the whole lineage's."""
        clauses = [attempts.c.campaign_id.in_(self.campaigns)]
        if self.provider is not None:
            clauses.append(trials.c.provider == self.provider)
        return clauses

    def is_result(self) -> Any:
        """For an attempt row of the lineage: is it the result of a trial in this campaign?

        Finished, and either this campaign's own or carried by one of its trials
        (a continuation's earlier attempts that were not carried are spend only).
        """
        if not self.continues:
            return _FINISHED
        carrying = trials.alias("carrying")
        carried = select(carrying.c.carried_from_trial_pk).where(carrying.c.campaign_id == self.campaign_id, carrying.c.carried_from_trial_pk.is_not(None))
        return and_(_FINISHED, or_(attempts.c.campaign_id == self.campaign_id, attempts.c.trial_pk.in_(carried)))


def _count_if(condition) -> Any:
    return func.coalesce(func.sum(case((condition, 1), else_=0)), 0)


def _passed() -> Any:
    return attempts.c.verified_pass.is_(True)


# --- per variant: results ------------------------------------------------------------


@dataclass(frozen=True)
class VariantRow:
    """One variant's result attempts (at most one finished attempt per trial)."""

    variant: str
    attempts: int
    carried: int
    successes: int
    wall_mean: float | None
    with_wall: int
    recoveries: int
    recoveries_known: int
    missing: dict[str, int]


def variant_rows(conn: Connection, scope: Scope) -> list[VariantRow]:
    """One row per variant that has at least one result attempt."""
    c = attempts.c
    missing_cols = [_count_if(getattr(c, name).is_(None)).label(f"missing_{name}") for name in _PLAIN_MISSING]
    missing_cols += [
        _count_if(or_(c.diagnostic_events_version.is_(None), getattr(c, name).is_(None))).label(f"missing_{name}") for name in DIAGNOSTIC_COUNTERS
    ]
    stmt = (
        select(
            trials.c.variant,
            func.count(c.id).label("attempts"),
            func.count(trials.c.carried_from_trial_pk).label("carried"),
            _count_if(_passed()).label("successes"),
            func.avg(cast(c.wall_seconds, Float)).label("wall_mean"),
            func.count(c.wall_seconds).label("with_wall"),
            _count_if(and_(c.tool_errors >= 1, _passed())).label("recoveries"),
            func.count(c.tool_errors).label("recoveries_known"),
            *missing_cols,
        )
        .select_from(_results)
        .where(*scope.where())
        .group_by(trials.c.variant)
    )
    return [
        VariantRow(
            variant=row["variant"],
            attempts=int(row["attempts"]),
            carried=int(row["carried"]),
            successes=int(row["successes"]),
            wall_mean=_float(row["wall_mean"]),
            with_wall=int(row["with_wall"]),
            recoveries=int(row["recoveries"]),
            recoveries_known=int(row["recoveries_known"]),
            missing={name: int(row[f"missing_{name}"]) for name in _PLAIN_MISSING + DIAGNOSTIC_COUNTERS},
        )
        for row in conn.execute(stmt).mappings()
    ]


# --- spend: every attempt of the lineage ----------------------------------------------


@dataclass(frozen=True)
class SpendRow:
    """What one provider's attempts of one variant spent, over the whole lineage.

    ``attempts`` counts every attempt row; ``results`` those that are a trial's
    result; ``interrupted`` those the operator stopped (or left running by a killed
    runner, ``running`` of them); ``provider_errors`` and ``engine_errors`` those
    the provider or the engine ended (no verdict either); ``not_carried`` finished
    attempts of an earlier campaign whose trial ran again here. Sums are exact ``Decimal``.
    """

    provider: str
    variant: str
    attempts: int
    results: int
    interrupted: int
    running: int
    not_carried: int
    cost_sum: Decimal | None
    with_cost: int
    complete_spend: int
    equivalent_sum: Decimal | None
    with_equivalent: int
    provider_errors: int = 0
    engine_errors: int = 0


def spend_rows(conn: Connection, scope: Scope) -> list[SpendRow]:
    """Per (provider, variant): counts and exact sums over every attempt in the spend scope."""
    c = attempts.c
    result = scope.is_result()
    complete = and_(c.spend_complete.is_(True), c.cost_usd.is_not(None))
    stmt = (
        select(
            trials.c.provider,
            trials.c.variant,
            func.count(c.id).label("attempts"),
            _count_if(result).label("results"),
            _count_if(and_(~_FINISHED, ~_FAULTED)).label("interrupted"),
            _count_if(and_(_FAULTED, c.outcome == "provider_error")).label("provider_errors"),
            _count_if(and_(_FAULTED, c.outcome != "provider_error")).label("engine_errors"),
            _count_if(c.status == "running").label("running"),
            _count_if(and_(_FINISHED, ~result)).label("not_carried"),
            money.sum_usd(c.cost_usd).label("cost_sum"),
            func.count(c.cost_usd).label("with_cost"),
            _count_if(complete).label("complete_spend"),
            money.sum_usd(c.equivalent_spend_usd).label("equivalent_sum"),
            func.count(c.equivalent_spend_usd).label("with_equivalent"),
        )
        .select_from(_spent)
        .where(*scope.spend_where())
        .group_by(trials.c.provider, trials.c.variant)
    )
    return [
        SpendRow(
            provider=row["provider"],
            variant=row["variant"],
            attempts=int(row["attempts"]),
            results=int(row["results"]),
            interrupted=int(row["interrupted"]),
            running=int(row["running"]),
            not_carried=int(row["not_carried"]),
            cost_sum=money.usd(row["cost_sum"]),
            with_cost=int(row["with_cost"]),
            complete_spend=int(row["complete_spend"]),
            equivalent_sum=money.usd(row["equivalent_sum"]),
            with_equivalent=int(row["with_equivalent"]),
            provider_errors=int(row["provider_errors"]),
            engine_errors=int(row["engine_errors"]),
        )
        for row in conn.execute(stmt).mappings()
    ]


@dataclass(frozen=True)
class FaultRow:
    """How many of one provider's attempts of one variant the provider ended, by fault."""

    provider: str
    variant: str
    fault: str
    attempts: int


def fault_rows(conn: Connection, scope: Scope) -> list[FaultRow]:
    """Per (provider, variant, fault): attempts the provider ended (the spend scope's, so a
    continuation counts its lineage), so an imbalance between variants shows."""
    c = attempts.c
    stmt = (
        select(trials.c.provider, trials.c.variant, c.failure_class, func.count(c.id))
        .select_from(_spent)
        .where(*scope.spend_where(), c.outcome == "provider_error")
        .group_by(trials.c.provider, trials.c.variant, c.failure_class)
        .order_by(trials.c.provider, trials.c.variant, c.failure_class)
    )
    return [FaultRow(provider, variant, fault or "unknown", int(n)) for provider, variant, fault, n in conn.execute(stmt)]


@dataclass(frozen=True)
class AttemptCost:
    """One attempt of the spend scope, as a plan counts it (``campaign power``)."""

    provider: str
    task: str
    variant: str
    kind: str  # "result", "faulted" (the provider or the engine ended it) or "other"
    spend_nano: int | None  # counted spend (measured when complete, else list-price equivalent)
    measured: bool
    started_at: Any
    ended_at: Any


def attempt_costs(conn: Connection, scope: Scope) -> list[AttemptCost]:
    """Every attempt in the spend scope with its counted spend and its start and end (the
    durations are taken in Python: no dialect-neutral SQL subtracts two timestamps)."""
    c = attempts.c
    complete = and_(c.spend_complete.is_(True), c.cost_usd.is_not(None))
    kind = case((scope.is_result(), "result"), (_FAULTED, "faulted"), else_="other")
    stmt = (
        select(trials.c.provider, trials.c.task, trials.c.variant, kind, money.nano_usd(counted_usd()), complete, c.started_at, c.ended_at)
        .select_from(_spent)
        .where(*scope.spend_where())
    )
    return [
        AttemptCost(provider, task, variant, kind, None if nano is None else int(nano), bool(measured), started, ended)
        for provider, task, variant, kind, nano, measured, started, ended in conn.execute(stmt)
    ]


# --- paired differences ----------------------------------------------------------------


@dataclass(frozen=True)
class TaskRow:
    task: str
    pairs: int
    success_difference: float
    baseline_successes: int
    coding_successes: int
    wall_pairs: int
    wall_difference: float | None
    # The pairs that disagreed, each way: with ``pairs`` they are the task's whole
    # distribution of pair differences (+1, 0, -1), which the planner resamples.
    coding_only: int = 0
    baseline_only: int = 0


def task_rows(conn: Connection, scope: Scope) -> list[TaskRow]:
    """Per task: mean over complete pairs of (coding - baseline), for success and wall.

    A pair is complete when both its baseline and coding trials have a result
    (a finished attempt; an interrupted one is no result). Success is
    ``verified_pass IS TRUE`` (a timeout or an unverified finished attempt is a
    failure, as in the per-variant rates). Wall uses only pairs where both wall
    times are known: ``avg`` skips the NULL difference, so a missing wall time
    drops that pair's wall comparison and nothing else.
    """
    c, t = attempts.c, trials.c

    def per_variant(name: str, value) -> Any:
        return func.max(case((t.variant == name, value), else_=null()))

    attempted = case((c.id.is_not(None), 1), else_=0)
    passed = case((_passed(), 1), else_=0)
    pair = (
        select(
            t.task.label("task"),
            per_variant(BASELINE, attempted).label("b_att"),
            per_variant(CODING, attempted).label("c_att"),
            per_variant(BASELINE, passed).label("b_pass"),
            per_variant(CODING, passed).label("c_pass"),
            per_variant(BASELINE, c.wall_seconds).label("b_wall"),
            per_variant(CODING, c.wall_seconds).label("c_wall"),
        )
        .select_from(_results_outer)
        .where(*scope.where(), t.variant.in_((BASELINE, CODING)))
        .group_by(t.task, t.pair_id)
        .subquery("pair")
    )
    p = pair.c
    wall_diff = cast(p.c_wall, Float) - cast(p.b_wall, Float)
    stmt = (
        select(
            p.task,
            func.count().label("pairs"),
            func.avg(cast(p.c_pass - p.b_pass, Float)).label("success_difference"),
            func.sum(p.b_pass).label("b_successes"),
            func.sum(p.c_pass).label("c_successes"),
            func.count(wall_diff).label("wall_pairs"),
            func.avg(wall_diff).label("wall_difference"),
            _count_if(p.c_pass > p.b_pass).label("coding_only"),
            _count_if(p.b_pass > p.c_pass).label("baseline_only"),
        )
        .where(p.b_att == 1, p.c_att == 1)
        .group_by(p.task)
    )
    # Ordered here, by code point, not by ORDER BY: text ORDER BY follows the
    # database's collation (binary on SQLite, often ICU/glibc on PostgreSQL),
    # and the cluster order is the bootstrap's index order, so a collation
    # must not change the interval of the same store.
    rows = sorted(conn.execute(stmt), key=lambda row: row.task)
    return [
        TaskRow(
            task=row.task,
            pairs=int(row.pairs),
            success_difference=float(row.success_difference),
            baseline_successes=int(row.b_successes),
            coding_successes=int(row.c_successes),
            wall_pairs=int(row.wall_pairs),
            wall_difference=_float(row.wall_difference),
            coding_only=int(row.coding_only),
            baseline_only=int(row.baseline_only),
        )
        for row in rows
    ]


# --- completion ----------------------------------------------------------------------


def trials_by_status(conn: Connection, scope: Scope) -> dict[str, int]:
    """How many trials in scope have each status (an index-only count)."""
    t = trials.c
    return {k: int(v) for k, v in conn.execute(select(t.status, func.count()).where(*scope.where()).group_by(t.status)).all()}


def distinct_values(conn: Connection, scope: Scope) -> tuple[list[str], list[str], list[str]]:
    """(providers, scheduled models, observed agent models of the results), sorted."""
    t, c = trials.c, attempts.c
    # Sorted in Python (code point order), not by the database's collation.
    providers = sorted(conn.execute(select(t.provider).where(*scope.where()).distinct()).scalars().all())
    models = sorted(conn.execute(select(t.model).where(*scope.where()).distinct()).scalars().all())
    observed = conn.execute(
        select(c.agent_model).select_from(_results).where(*scope.where(), c.agent_model.is_not(None)).distinct().order_by(c.agent_model).limit(64)
    ).scalars().all()
    return list(providers), list(models), list(observed)


# --- per-trial rows --------------------------------------------------------------------

# The trial columns of the per-trial rows. Attempt.private_root is never read by a
# report (not even the chain check reads it), and the allowlist drops the hashes.
TRIAL_COLUMNS: Sequence[Any] = (
    trials.c.trial_id,
    trials.c.pair_id,
    trials.c.task,
    trials.c.variant,
    trials.c.provider,
    trials.c.repetition,
    trials.c.pair_order,
    trials.c.position,
)


def _interrupted_per_trial(scope: Scope) -> Any:
    """trial_pk -> how many attempts without a verdict it holds (spend scope only)."""
    c = attempts.c
    return (
        select(c.trial_pk.label("trial_pk"), func.count().label("n"))
        .where(c.campaign_id.in_(scope.campaigns), ~_FINISHED)
        .group_by(c.trial_pk)
        .subquery("interrupted")
    )


def _with_interrupted(base: Any, scope: Scope) -> tuple[Any, Any]:
    """``base`` outer-joined to the per-trial interrupted counts, and the count column."""
    counts = _interrupted_per_trial(scope)
    return base.outerjoin(counts, counts.c.trial_pk == _OWNER), func.coalesce(counts.c.n, 0).label("interrupted_attempts")


# The columns ``scope_trials`` returns, in order.
SCOPE_TRIAL_NAMES = ("id", "carried_from_trial_pk", *(c.name for c in TRIAL_COLUMNS))


def scope_trials(conn: Connection, scope: Scope) -> Sequence[Sequence[Any]]:
    """Every trial in scope, in schedule order (``SCOPE_TRIAL_NAMES``): the report pairs
    each with its result from the attempt rows it read for the chain check."""
    stmt = select(trials.c.id, trials.c.carried_from_trial_pk, *TRIAL_COLUMNS).where(*scope.where()).order_by(trials.c.position)
    return conn.execute(stmt).all()


def unattempted_trials(conn: Connection, scope: Scope) -> list[dict[str, Any]]:
    """Scheduled trials without a result (stopped, not reached, or only interrupted attempts)."""
    source, interrupted = _with_interrupted(_results_outer, scope)
    stmt = (
        select(*TRIAL_COLUMNS, trials.c.status, trials.c.not_attempted_reason, interrupted)
        .select_from(source)
        .where(*scope.where(), attempts.c.id.is_(None))
        .order_by(trials.c.position)
    )
    return [dict(row) for row in conn.execute(stmt).mappings()]


def spend_only_attempts(conn: Connection, scope: Scope) -> list[dict[str, Any]]:
    """Attempts that count towards spend but are no trial's result, in campaign and seq order:
    interrupted, left running by a killed runner, or an earlier campaign's not carried over."""
    c = attempts.c
    stmt = (
        select(
            *TRIAL_COLUMNS,
            c.campaign_id,
            c.seq.label("attempt_seq"),
            c.status.label("attempt_status"),
            c.outcome,
            c.wall_seconds,
            c.cost_usd,
            c.cost_reported,
            c.spend_complete,
            c.equivalent_spend_usd,
            c.cleanup_complete,
            c.disposal_complete,
            c.finalization_failed,
            c.teardown_outcome,
            c.containment,
        )
        .select_from(_spent)
        .where(*scope.spend_where(), ~scope.is_result())
        .order_by(c.campaign_id, c.seq)
    )
    return [dict(row) for row in conn.execute(stmt).mappings()]


def has_attempts(conn: Connection, scope: Scope) -> bool:
    """Any attempt row in the spend scope (a campaign with none is plan-only or not started)."""
    return conn.execute(select(attempts.c.id).select_from(_spent).where(*scope.spend_where()).limit(1)).first() is not None


def _float(value: Any) -> float | None:
    return None if value is None else float(value)


__all__ = [
    "AttemptCost",
    "FaultRow",
    "Scope",
    "SpendRow",
    "TaskRow",
    "VariantRow",
    "attempt_costs",
    "distinct_values",
    "fault_rows",
    "has_attempts",
    "scope_trials",
    "spend_only_attempts",
    "spend_rows",
    "task_rows",
    "trials_by_status",
    "unattempted_trials",
    "variant_rows",
]
