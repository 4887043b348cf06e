"""The report's SQL: per-variant aggregates, per-task paired means, completion counts.

With ``store/`` this is the one place SQL lives. Everything here is SQLAlchemy
Core (GROUP BY and conditional sums, no dialect-specific functions), so it
runs the same on SQLite and PostgreSQL and the database, not Python, does the
counting over large stores. Unknown stays NULL: ``sum`` and ``avg`` skip NULLs,
and every count of "known" values is a ``count(column)``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, Float, and_, case, cast, func, null, or_, select

from campaign.store.models import Attempt, Trial

attempts = Attempt.__table__
trials = Trial.__table__

BASELINE, CODING = "baseline", "coding"

# Counters whose NULLs the report counts per variant ("what is missing").
MISSING_COUNTERS = (
    "wall_seconds",
    "completed_turns",
    "uncached_input_tokens",
    "cached_input_tokens",
    "cache_write_tokens",
    "output_tokens",
    "tool_errors",
    "cost_usd",
    "verified_pass",
)
# Bridge diagnostics count only with the diagnostic version marker.
DIAGNOSTIC_COUNTERS = ("discovery_failures", "incorrect_tool_calls")


@dataclass(frozen=True)
class Scope:
    """Which trials a report covers: one campaign, optionally one provider of it."""

    campaign_id: int
    provider: str | None = None

    def where(self) -> list[Any]:
        clauses = [trials.c.campaign_id == self.campaign_id]
        if self.provider is not None:
            clauses.append(trials.c.provider == self.provider)
        return clauses


_joined = trials.join(attempts, attempts.c.trial_pk == trials.c.id)
_outer = trials.outerjoin(attempts, attempts.c.trial_pk == trials.c.id)


def _count_if(condition) -> Any:
    return func.coalesce(func.sum(case((condition, 1), else_=0)), 0)


def _passed() -> Any:
    return attempts.c.verified_pass.is_(True)


@dataclass(frozen=True)
class VariantRow:
    variant: str
    attempts: int
    unfinished_attempts: int
    successes: int
    cost_sum: float | None
    with_cost: int
    complete_spend: int
    equivalent_sum: float | None
    with_equivalent: int
    wall_mean: float | None
    with_wall: int
    recoveries: int
    recoveries_known: int
    missing: dict[str, int]


def variant_rows(conn: Connection, scope: Scope) -> list[VariantRow]:
    """One row per variant that has at least one attempt."""
    c = attempts.c
    complete = and_(c.spend_complete.is_(True), c.cost_usd.is_not(None))
    missing_cols = [_count_if(getattr(c, name).is_(None)).label(f"missing_{name}") for name in MISSING_COUNTERS]
    missing_cols += [
        _count_if(or_(c.diagnostic_events_version.is_(None), getattr(c, name).is_(None))).label(f"missing_{name}") for name in DIAGNOSTIC_COUNTERS
    ]
    stmt = (
        select(
            trials.c.variant,
            func.count(c.id).label("attempts"),
            _count_if(c.status != "finished").label("unfinished"),
            _count_if(_passed()).label("successes"),
            func.sum(c.cost_usd).label("cost_sum"),
            func.count(c.cost_usd).label("with_cost"),
            _count_if(complete).label("complete_spend"),
            func.sum(c.equivalent_spend_usd).label("equivalent_sum"),
            func.count(c.equivalent_spend_usd).label("with_equivalent"),
            func.avg(cast(c.wall_seconds, Float)).label("wall_mean"),
            func.count(c.wall_seconds).label("with_wall"),
            _count_if(and_(c.tool_errors >= 1, _passed())).label("recoveries"),
            func.count(c.tool_errors).label("recoveries_known"),
            *missing_cols,
        )
        .select_from(_joined)
        .where(*scope.where())
        .group_by(trials.c.variant)
        .order_by(trials.c.variant)
    )
    out = []
    for row in conn.execute(stmt).mappings():
        out.append(
            VariantRow(
                variant=row["variant"],
                attempts=int(row["attempts"]),
                unfinished_attempts=int(row["unfinished"]),
                successes=int(row["successes"]),
                cost_sum=_float(row["cost_sum"]),
                with_cost=int(row["with_cost"]),
                complete_spend=int(row["complete_spend"]),
                equivalent_sum=_float(row["equivalent_sum"]),
                with_equivalent=int(row["with_equivalent"]),
                wall_mean=_float(row["wall_mean"]),
                with_wall=int(row["with_wall"]),
                recoveries=int(row["recoveries"]),
                recoveries_known=int(row["recoveries_known"]),
                missing={name: int(row[f"missing_{name}"]) for name in MISSING_COUNTERS + DIAGNOSTIC_COUNTERS},
            )
        )
    return out


@dataclass(frozen=True)
class TaskRow:
    task: str
    pairs: int
    success_difference: float
    baseline_successes: int
    coding_successes: int
    wall_pairs: int
    wall_difference: float | None


def task_rows(conn: Connection, scope: Scope) -> list[TaskRow]:
    """Per task: mean over complete pairs of (coding - baseline), for success and wall.

    A pair counts when both its baseline and coding trials were attempted.
    Success is ``verified_pass IS TRUE`` (a timeout or an unverified attempt is
    a failure, as in the per-variant rates). Wall uses only pairs where both
    wall times are known: ``avg`` skips the NULL difference, so a missing wall
    time drops that pair's wall comparison and nothing else.
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
        .select_from(_outer)
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
        )
        for row in rows
    ]


@dataclass(frozen=True)
class Completion:
    scheduled: int
    trials_by_status: dict[str, int]
    attempts_by_status: dict[str, int]


def completion(conn: Connection, scope: Scope) -> Completion:
    t, c = trials.c, attempts.c
    by_status = dict(conn.execute(select(t.status, func.count()).where(*scope.where()).group_by(t.status)).all())
    attempt_status = dict(conn.execute(select(c.status, func.count()).select_from(_joined).where(*scope.where()).group_by(c.status)).all())
    return Completion(
        scheduled=int(sum(by_status.values())),
        trials_by_status={k: int(v) for k, v in by_status.items()},
        attempts_by_status={k: int(v) for k, v in attempt_status.items()},
    )


def distinct_values(conn: Connection, scope: Scope) -> tuple[list[str], list[str], list[str]]:
    """(providers, scheduled models, observed agent models), sorted."""
    t, c = trials.c, attempts.c
    # Sorted in Python (code point order), not by the database's collation.
    providers = sorted(conn.execute(select(t.provider).where(*scope.where()).distinct()).scalars().all())
    models = sorted(conn.execute(select(t.model).where(*scope.where()).distinct()).scalars().all())
    observed = conn.execute(
        select(c.agent_model).select_from(_joined).where(*scope.where(), c.agent_model.is_not(None)).distinct().order_by(c.agent_model).limit(64)
    ).scalars().all()
    return list(providers), list(models), list(observed)


# The per-trial columns a report may read. Attempt.private_root, prev_hash and
# row_hash are deliberately absent: the query never selects them.
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
ATTEMPT_COLUMNS: Sequence[Any] = (
    attempts.c.seq.label("attempt_seq"),
    attempts.c.status.label("attempt_status"),
    attempts.c.outcome,
    attempts.c.failure_class,
    attempts.c.verified_pass,
    attempts.c.verifier_exit_code,
    attempts.c.wall_seconds,
    attempts.c.completed_turns,
    attempts.c.uncached_input_tokens,
    attempts.c.cached_input_tokens,
    attempts.c.cache_write_tokens,
    attempts.c.output_tokens,
    attempts.c.tool_calls,
    attempts.c.tool_errors,
    attempts.c.diagnostic_events_version,
    attempts.c.discovery_failures,
    attempts.c.incorrect_tool_calls,
    attempts.c.cost_usd,
    attempts.c.cost_reported,
    attempts.c.spend_complete,
    attempts.c.flush_complete,
    attempts.c.equivalent_spend_usd,
    attempts.c.cleanup_complete,
    attempts.c.disposal_complete,
    attempts.c.finalization_failed,
    attempts.c.teardown_outcome,
    attempts.c.containment,
    attempts.c.config_digest,
    attempts.c.fixture_digest,
    attempts.c.agent_model,
    attempts.c.applied_profiles,
    attempts.c.schema_diagnostics,
)


def attempted_trials(conn: Connection, scope: Scope) -> tuple[list[str], Iterator[tuple[Any, ...]]]:
    """(column names, rows) of every attempted trial, in schedule order."""
    stmt = (
        select(*TRIAL_COLUMNS, *ATTEMPT_COLUMNS)
        .select_from(_joined)
        .where(*scope.where())
        .order_by(trials.c.position)
    )
    result = conn.execute(stmt)
    return list(result.keys()), iter(result.all())


def unattempted_trials(conn: Connection, scope: Scope) -> list[dict[str, Any]]:
    """Scheduled trials with no attempt row (stopped, not reached, or admitted and lost)."""
    stmt = (
        select(*TRIAL_COLUMNS, trials.c.status, trials.c.not_attempted_reason)
        .select_from(_outer)
        .where(*scope.where(), attempts.c.id.is_(None))
        .order_by(trials.c.position)
    )
    return [dict(row) for row in conn.execute(stmt).mappings()]


def attempt_count(conn: Connection, scope: Scope) -> int:
    return int(conn.execute(select(func.count(attempts.c.id)).select_from(_joined).where(*scope.where())).scalar_one())


def _float(value: Any) -> float | None:
    return None if value is None else float(value)


__all__ = [
    "Completion",
    "Scope",
    "TaskRow",
    "VariantRow",
    "attempt_count",
    "attempted_trials",
    "completion",
    "distinct_values",
    "task_rows",
    "unattempted_trials",
    "variant_rows",
]
