"""What the trials in scope came to: per variant, per task (the paired differences), per
status, and each trial in schedule order (``scope_trials``, which the report pairs with
the attempt rows the chain check read)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, Float, and_, case, cast, func, null, or_, select

from campaign.report.aggregates.selections import (
    FAULTED,
    FINISHED,
    OWNER,
    RESULTS,
    RESULTS_OUTER,
    TRIAL_COLUMNS,
    Scope,
    as_float,
    attempts,
    count_if,
    trials,
    verified_passed,
)
from campaign.vocabulary import BASELINE, CODING, DIAGNOSTIC_COUNTERS, MISSING_COUNTERS

# Values whose NULLs the report counts per variant ("what is missing"); the bridge
# diagnostics count apart, only with the diagnostic version marker.
_PLAIN_MISSING = tuple(name for name in MISSING_COUNTERS if name not in DIAGNOSTIC_COUNTERS)


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
    missing_cols = [count_if(getattr(c, name).is_(None)).label(f"missing_{name}") for name in _PLAIN_MISSING]
    missing_cols += [
        count_if(or_(c.diagnostic_events_version.is_(None), getattr(c, name).is_(None))).label(f"missing_{name}") for name in DIAGNOSTIC_COUNTERS
    ]
    stmt = (
        select(
            trials.c.variant,
            func.count(c.id).label("attempts"),
            func.count(trials.c.carried_from_trial_pk).label("carried"),
            count_if(verified_passed()).label("successes"),
            func.avg(cast(c.wall_seconds, Float)).label("wall_mean"),
            func.count(c.wall_seconds).label("with_wall"),
            count_if(and_(c.tool_errors >= 1, verified_passed())).label("recoveries"),
            func.count(c.tool_errors).label("recoveries_known"),
            *missing_cols,
        )
        .select_from(RESULTS)
        .where(*scope.where())
        .group_by(trials.c.variant)
    )
    return [
        VariantRow(
            variant=row["variant"],
            attempts=int(row["attempts"]),
            carried=int(row["carried"]),
            successes=int(row["successes"]),
            wall_mean=as_float(row["wall_mean"]),
            with_wall=int(row["with_wall"]),
            recoveries=int(row["recoveries"]),
            recoveries_known=int(row["recoveries_known"]),
            missing={name: int(row[f"missing_{name}"]) for name in _PLAIN_MISSING + DIAGNOSTIC_COUNTERS},
        )
        for row in conn.execute(stmt).mappings()
    ]


# --- paired differences ----------------------------------------------------------------


@dataclass(frozen=True)
class TaskRow:
    """One task's pairs, compared candidate minus baseline (the built-in experiment:
    coding minus baseline)."""

    task: str
    pairs: int
    success_difference: float
    baseline_successes: int
    candidate_successes: int
    wall_pairs: int
    wall_difference: float | None
    # The pairs that disagreed, each way: with ``pairs`` they are the task's whole
    # distribution of pair differences (+1, 0, -1), which the planner resamples.
    candidate_only: int = 0
    baseline_only: int = 0
    # Each pair's wall difference (candidate minus baseline, seconds) where both are known.
    wall_differences: tuple[float, ...] = ()


def task_rows(conn: Connection, scope: Scope, baseline: str = BASELINE, candidate: str = CODING) -> list[TaskRow]:
    """Per task: mean over complete pairs of (candidate - baseline), for success and wall,
    with the pairs' own differences (the report's interval reads their spread). A pair
    of more than two variants is compared one candidate at a time: its other trials
    are not read.

    A pair is complete when both its baseline and candidate trials have a result
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
    passed = case((verified_passed(), 1), else_=0)
    pair = (
        select(
            t.task.label("task"),
            per_variant(baseline, attempted).label("b_att"),
            per_variant(candidate, attempted).label("c_att"),
            per_variant(baseline, passed).label("b_pass"),
            per_variant(candidate, passed).label("c_pass"),
            per_variant(baseline, c.wall_seconds).label("b_wall"),
            per_variant(candidate, c.wall_seconds).label("c_wall"),
        )
        .select_from(RESULTS_OUTER)
        .where(*scope.where(), t.variant.in_((baseline, candidate)))
        .group_by(t.task, t.pair_id)
        .subquery("pair")
    )
    p = pair.c
    wall_diff = cast(p.c_wall, Float) - cast(p.b_wall, Float)
    walls: dict[str, list[float]] = {}
    for task, diff in conn.execute(select(p.task, wall_diff).where(p.b_att == 1, p.c_att == 1, wall_diff.is_not(None))):
        walls.setdefault(task, []).append(float(diff))
    stmt = (
        select(
            p.task,
            func.count().label("pairs"),
            func.avg(cast(p.c_pass - p.b_pass, Float)).label("success_difference"),
            func.sum(p.b_pass).label("b_successes"),
            func.sum(p.c_pass).label("c_successes"),
            func.count(wall_diff).label("wall_pairs"),
            func.avg(wall_diff).label("wall_difference"),
            count_if(p.c_pass > p.b_pass).label("candidate_only"),
            count_if(p.b_pass > p.c_pass).label("baseline_only"),
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
            candidate_successes=int(row.c_successes),
            wall_pairs=int(row.wall_pairs),
            wall_difference=as_float(row.wall_difference),
            candidate_only=int(row.candidate_only),
            baseline_only=int(row.baseline_only),
            wall_differences=tuple(sorted(walls.get(row.task, ()))),  # sorted: a row order the database may choose must not move a float sum
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
        select(c.agent_model).select_from(RESULTS).where(*scope.where(), c.agent_model.is_not(None)).distinct().order_by(c.agent_model).limit(64)
    ).scalars().all()
    return list(providers), list(models), list(observed)


# --- per-trial rows --------------------------------------------------------------------


def _unfinished_per_trial(scope: Scope) -> Any:
    """trial_pk -> its attempts without a verdict (spend scope only): interrupted (or left
    running by a killed runner), ended by the provider, and ended by the engine."""
    c = attempts.c
    return (
        select(
            c.trial_pk.label("trial_pk"),
            count_if(and_(~FINISHED, ~FAULTED)).label("interrupted"),
            count_if(and_(FAULTED, c.outcome == "provider_error")).label("provider_errors"),
            count_if(and_(FAULTED, c.outcome != "provider_error")).label("engine_errors"),
        )
        .where(c.campaign_id.in_(scope.campaigns), ~FINISHED)
        .group_by(c.trial_pk)
        .subquery("unfinished")
    )


# The columns ``scope_trials`` returns, in order.
SCOPE_TRIAL_NAMES = ("id", "carried_from_trial_pk", *(c.name for c in TRIAL_COLUMNS))


def scope_trials(conn: Connection, scope: Scope) -> Sequence[Sequence[Any]]:
    """Every trial in scope, in schedule order (``SCOPE_TRIAL_NAMES``): the report pairs
    each with its result from the attempt rows it read for the chain check."""
    stmt = select(trials.c.id, trials.c.carried_from_trial_pk, *TRIAL_COLUMNS).where(*scope.where()).order_by(trials.c.position)
    return conn.execute(stmt).all()


def unattempted_trials(conn: Connection, scope: Scope) -> list[dict[str, Any]]:
    """Scheduled trials without a result (stopped, not reached, or only attempts without a
    verdict), with how many of those were interrupted and how many the provider or the engine ended."""
    counts = _unfinished_per_trial(scope)
    stmt = (
        select(
            *TRIAL_COLUMNS,
            trials.c.status,
            trials.c.not_attempted_reason,
            func.coalesce(counts.c.interrupted, 0).label("interrupted_attempts"),
            func.coalesce(counts.c.provider_errors, 0).label("provider_error_attempts"),
            func.coalesce(counts.c.engine_errors, 0).label("engine_error_attempts"),
        )
        .select_from(RESULTS_OUTER.outerjoin(counts, counts.c.trial_pk == OWNER))
        .where(*scope.where(), attempts.c.id.is_(None))
        .order_by(trials.c.position)
    )
    return [dict(row) for row in conn.execute(stmt).mappings()]


__all__ = ["SCOPE_TRIAL_NAMES", "TaskRow", "VariantRow", "distinct_values", "scope_trials", "task_rows", "trials_by_status", "unattempted_trials", "variant_rows"]
