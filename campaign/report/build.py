"""The schema-version-3 report ``live_agentic_coding_paired``, built from the store only.

``build_report(engine, campaign_id)`` reads the campaign, its trials and its
attempts (aggregates in SQL, the intervals in numpy), assembles plain values,
and returns them passed through the allowlist (``schema.REPORT_SCHEMA``).
Nothing else in this package writes a report, and the Markdown and the forest
plot are rendered from this sanitized dictionary, never from the store. So the
report can be regenerated at any time, and what it may contain is decided in
one place. What ran is read in ``identity``, the spend in ``spending``, the
per-trial rows in ``results``; the counting is the database's (``aggregates``).

Outcomes (success, wall time, counters, the paired differences) come from each
trial's result, its one finished attempt; an interrupted attempt has no verdict
and is counted as interrupted, never as a failure. Spend comes from every
attempt paid for, over the campaign and the campaigns it continues, in exact
sums. Equivalent spend keeps its price basis per provider and is never summed
across bases. ``integrity`` says whether the rows verified (``campaign verify``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, Engine

from campaign import __version__, testhooks
from campaign.bulk import collector_paused
from campaign.errors import UnreadableValue, UsageProblem
from campaign.report import aggregates, comparisons, identity, paired, reasoning, results, spending, stats
from campaign.report.allowlist import enum_or_unlisted, sanitize
from campaign.report.integrity import Integrity, check_rows, read_lineage, refuse_unless_verified
from campaign.report.fields import AGENTS
from campaign.report.schema import REDACTION, REPORT_SCHEMA
from campaign.store import chain, repository, snapshot
from campaign.store.limits import SpendLimits
from campaign.store.models import Campaign
from campaign.vocabulary import NOT_ATTEMPTED_REASONS


KIND = "live_agentic_coding_paired"

SCHEMA_VERSION = 3

ALWAYS_UNCONTROLLED = ("provider_cache_state", "provider_queue", "provider_load", "pricing_drift", "route_drift", "os_scheduling")

class PlanOnlyArtifact(UsageProblem):
    """The campaign was only planned: there is no live result to report or share (the
    operator named the wrong campaign, as with a nonpaired one: exit 2)."""

def resolve_campaign(engine: Engine, campaign_id: int | None) -> Campaign:
    """The asked-for campaign, or the latest paired or multi-provider one when none is
    named (a nonpaired run has no paired report, so it is never the default)."""
    if campaign_id is None:
        found = repository.latest_campaign(engine, kind="campaign")
        paired = repository.latest_campaign(engine, kind="paired")
        if found is None or (paired is not None and paired.id > found.id):
            found = paired
        if found is None:
            raise UsageProblem("the store holds no paired or multi-provider campaign yet; run `campaign coding --paired` or `--campaign` first", option="CAMPAIGN_ID")
        return found
    found = repository.get_campaign(engine, campaign_id)
    if found is None:
        raise UsageProblem(
            f"no campaign {campaign_id} in this store; list them with `campaign sql \"SELECT id, kind, state FROM campaigns\"`",
            option="CAMPAIGN_ID",
        )
    return found

def is_plan_only(campaign: Campaign, attempts: int) -> bool:
    """Planned, or never live and never attempted: a plan template, not a result."""
    return campaign.state == "planned" or (not campaign.live and attempts == 0)

def build_report(
    engine: Engine,
    campaign_id: int,
    *,
    provider: str | None = None,
    integrity: Integrity | None = None,
    require_verified: bool = False,
    on_checked: Callable[[Integrity], None] | None = None,
) -> dict[str, Any]:
    """The sanitized report dictionary for one campaign (refuses a plan-only campaign).

    ``provider`` limits the report to that provider's trials (a multi-provider
    campaign reports each provider and the whole). ``integrity`` is the hash-chain
    verification of the campaign and the campaigns it continues; when not given it
    runs here, on the rows the report reads anyway, so every report says whether its
    rows verify, and ``require_verified`` then refuses (``UnverifiedStore``) rows that
    do not; ``on_checked`` is told what that check found (a reader that keeps verdicts
    per chain head, the view, then need not read the rows again to verify them).
    Everything is read from one state of the store: the database aggregates
    and the simulations in a forked child (or a thread, in a process that has threads)
    on connections of their own while the rows are read and checked here.
    """
    campaign = resolve_campaign(engine, campaign_id)
    if campaign.kind == "nonpaired":
        # One unpaired trial per task is a separate diagnostic lane: labelling it
        # live_agentic_coding_paired would present it as paired evidence.
        raise UsageProblem(
            f"campaign {campaign.id} is a nonpaired run, not a paired experiment; it has no {KIND} report "
            "(its own report is the one `campaign coding` wrote); name a paired campaign",
            option="CAMPAIGN_ID",
        )
    if type(campaign.seed) is not int:  # the bootstrap's and the sign flips' seed: a report published unverified needs one too
        raise UnreadableValue(f"campaign {campaign.id}'s seed is not a whole number (the row was edited outside the engine); `campaign verify` names it")
    experiment = identity.load_object(campaign.experiment_json)
    lineage = tuple(repository.lineage(engine, campaign.id))
    scope = aggregates.Scope(campaign.id, provider, lineage)
    with snapshot.readers(engine) as read, collector_paused():
        if is_plan_only(campaign, int(aggregates.has_attempts(read.conn, scope))):
            raise PlanOnlyArtifact(
                f"campaign {campaign.id} is plan-only (state {campaign.state}, no attempts); a plan template is not a live result and is not reported as one;"
                " name a campaign that ran with --live",
                option="CAMPAIGN_ID",
            )
        # The counts and the simulations: apart, in a child on another core when this
        # process may fork (else beside, in a thread), while this one reads and checks
        # every row and cleans the trials.
        order = comparisons.variant_order(experiment)
        counted = read.apart(lambda conn: _Counted.read(conn, scope, campaign.seed, order))
        testhooks.reached("report")
        in_scope = read.beside(lambda conn: aggregates.scope_trials(conn, scope))
        attempts = read_lineage(read.conn, lineage)
        if integrity is None:
            integrity = check_rows(read.conn, lineage, attempts)
            if on_checked is not None:
                on_checked(integrity)
            if require_verified:
                refuse_unless_verified(integrity, campaign.id)
        ends = chain.chain_ends(read.conn, attempts)
        rows = results.result_rows(in_scope.result(), attempts)
        del attempts
        c = counted.result()
        agent = campaign.agent if campaign.agent in AGENTS else "custom"
        synthetic = identity.is_synthetic(agent, experiment, c.providers)
        bases = spending.provider_bases(agent, experiment, c.providers)
        raw = {
            "schema_version": SCHEMA_VERSION,
            "kind": KIND,
            "synthetic": synthetic,
            "evidence": "live" if campaign.live else "offline_unpaid",
            "integrity": integrity.as_report(ends),
            "generator": {"version": __version__},
            "scope": {"provider": provider},
            "campaign": {
                "id": campaign.id,
                "kind": campaign.kind,
                "state": campaign.state,
                "live": bool(campaign.live),
                "stop_reason": campaign.stop_reason,
                "continues_campaign_id": campaign.continues_campaign_id,
                "created_at": campaign.created_at,
                "started_at": campaign.started_at,
                "finished_at": campaign.finished_at,
                "deadline_at": campaign.deadline_at,
            },
            "approval": {
                "experiment_digest": campaign.experiment_digest,
                "plan_digest": campaign.plan_digest,
                "approved_plan_digest": campaign.approved_plan_digest,
                "approved": identity.is_sha256(campaign.approved_plan_digest),
            },
            "experiment": identity.experiment_section(experiment, campaign),
            "runtime": {
                "agent": agent,
                "model": experiment.get("model") if isinstance(experiment.get("model"), str) else (c.models[0] if len(c.models) == 1 else None),
                "providers": c.providers,
                "observed_models": c.observed_models,
                "client_version": identity.client_version(experiment),
                "client_version_reason": None if identity.client_version(experiment) else "not_recorded_in_store",
            },
            "runtime_versions": identity.pricing_section(experiment),
            "completion": _completion(campaign, c.by_status, c.variants, c.spend, c.unattempted, c.paid_without_result),
            "variants": spending.variants_section(c.variants, c.spend, bases, order),
            "paired_differences": _paired_differences(campaign.seed, order, c, synthetic),
            "providers": [spending.provider_section(name, bases[name], [r for r in c.spend if r.provider == name]) for name in c.providers],
            "provider_faults": _provider_faults(c.faults),
            "spend": spending.spend_section(scope, c.spend, bases, SpendLimits.from_stored(campaign.spend_limits_json)),
            "trials": None,  # cleaned straight from the stored rows below
            "not_attempted_trials": c.unattempted,
            "spend_only_attempts": c.spend_only,
            "uncontrolled_factors": list(ALWAYS_UNCONTROLLED)
            + ["reasoning_provider_default" if experiment.get("reasoning") is None else "reasoning_configured_not_verified"],
            # An experiment of its own variants decides per candidate (its comparisons).
            "decision": (
                {"coding_profile": "opt_in", "basis": _decision_basis(synthetic, c.comparisons[0].success.headline)}
                if comparisons.is_builtin(order)
                else {"basis": None}
            ),
            "redaction": None,
        }
        report, changed = sanitize(raw, REPORT_SCHEMA)
        # The per-trial rows (one per trial with a result: 100,000 in the benchmark) go
        # through the same TRIAL schema, cleaned from the row tuples in one generated loop.
        report["trials"] = results.trial_cleaner(identity.confirmation_labels(experiment))(rows, changed)
        _reasoning_from_the_wire(report, experiment)
        del rows  # 100,000 stored rows freed now, before the collector is back on
    report["redaction"] = sanitize(changed.as_dict(), REDACTION)[0]
    return report

@dataclass(frozen=True)
class _Counted:
    """What the database counts and sums for a report (``aggregates``), and what the
    statistics make of the task rows: plain values, so a child process can hand them back."""

    variants: list[aggregates.VariantRow]
    spend: list[aggregates.SpendRow]
    by_status: dict[str, int]
    providers: list[str]
    models: list[str]
    observed_models: list[str]
    unattempted: list[dict[str, Any]]
    # The trial ids among them with an attempt (interrupted, or ended by the provider or the engine).
    paid_without_result: frozenset[str]
    spend_only: list[dict[str, Any]]
    faults: list[aggregates.FaultRow]
    # What the task rows give, per candidate against the baseline: the paired differences
    # and the detectable effect (seeded). The built-in experiment's one is coding's.
    comparisons: tuple[comparisons.Comparison, ...]

    @classmethod
    def read(cls, conn: Connection, scope: aggregates.Scope, seed: int, order: Sequence[str]) -> _Counted:
        providers, models, observed = aggregates.distinct_values(conn, scope)
        unattempted = aggregates.unattempted_trials(conn, scope)
        paid = frozenset(r["trial_id"] for r in unattempted if r["interrupted_attempts"] or r["provider_error_attempts"] or r["engine_error_attempts"])
        return cls(
            variants=aggregates.variant_rows(conn, scope),
            spend=aggregates.spend_rows(conn, scope),
            by_status=aggregates.trials_by_status(conn, scope),
            providers=providers,
            models=models,
            observed_models=observed,
            unattempted=[_not_attempted(row) for row in unattempted],
            paid_without_result=paid,
            spend_only=[_spend_only(row) for row in aggregates.spend_only_attempts(conn, scope)],
            faults=aggregates.fault_rows(conn, scope),
            comparisons=comparisons.read(conn, scope, order, seed),
        )


def _paired_differences(seed: int, order: Sequence[str], c: _Counted, synthetic: bool) -> dict[str, Any]:
    """The built-in experiment's one comparison, coding minus baseline, as reports always had
    it; an experiment of its own variants has each candidate's under ``comparisons``."""
    common = {**paired.methods(seed), "exploratory_below_tasks": stats.EXPLORATORY_BELOW_TASKS}
    if not comparisons.is_builtin(order):
        return {
            **common,
            "direction": "candidate_minus_baseline",
            **comparisons.section(order[0], c.comparisons, lambda success: _decision_basis(synthetic, success)),
        }
    (coding,) = c.comparisons
    return {
        **common,
        "direction": "coding_minus_baseline",
        "exploratory": paired.exploratory(coding.success, coding.wall),
        "verified_success": paired.as_report("verified_success", coding.success),
        "wall_seconds": paired.as_report("wall_seconds", coding.wall),
        "detectable_effect": coding.detectable,
        "per_task": comparisons.per_task(coding.tasks, "coding_successes"),
    }

def _not_attempted(row: dict[str, Any]) -> dict[str, Any]:
    """A trial without a result: why (its not-attempted reason, or what its attempts were)."""
    status = row.pop("status")
    reason = row.pop("not_attempted_reason")
    provider_errors, engine_errors = row.pop("provider_error_attempts"), row.pop("engine_error_attempts")
    if status != "not_attempted":
        if row["interrupted_attempts"]:
            # Its attempts were stopped (or left running by a killed runner) with no verdict.
            reason = "interrupted"
        elif provider_errors:
            # Its provider ended its attempts (a fault, never the agent's verdict).
            reason = "provider_error"
        elif engine_errors:
            reason = "engine_error"
        elif status == "scheduled":
            reason = "not_reached"
        else:
            reason = "admitted_without_attempt"
    row["status"] = status
    row["reason"] = enum_or_unlisted(reason, NOT_ATTEMPTED_REASONS) or "unlisted"
    return row

def _spend_only(row: dict[str, Any]) -> dict[str, Any]:
    status = row["attempt_status"]
    faulted = row.pop("outcome", None) if status == "faulted" else None
    row.pop("outcome", None)
    row["why"] = "not_carried" if status == "finished" else ("left_running" if status == "running" else faulted or "interrupted")
    return row

def _provider_faults(rows: Sequence[aggregates.FaultRow]) -> list[dict[str, Any]]:
    """Per provider and variant: attempts the provider ended, and the fault that ended each."""
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for r in rows:
        entry = out.setdefault((r.provider, r.variant), {"provider": r.provider, "variant": r.variant, "attempts": 0, "by_fault": {}})
        entry["attempts"] += r.attempts
        entry["by_fault"][r.fault] = entry["by_fault"].get(r.fault, 0) + r.attempts
    return list(out.values())

def _completion(
    campaign: Campaign,
    by_status: dict[str, int],
    results: Sequence[aggregates.VariantRow],
    spend: Sequence[aggregates.SpendRow],
    unattempted: list[dict[str, Any]],
    paid_without_result: frozenset[str],
) -> dict[str, Any]:
    scheduled = sum(by_status.values())
    # Trials with a result (a finished attempt); interrupted attempts are counted apart.
    with_result = sum(r.attempts for r in results)
    interrupted, running, every = (sum(r.interrupted for r in spend), sum(r.running for r in spend), sum(r.attempts for r in spend))
    faulted = sum(r.provider_errors + r.engine_errors for r in spend)
    attempts_by_status = {"finished": every - interrupted - faulted, "interrupted": interrupted - running, "running": running, "faulted": faulted}
    never = [row for row in unattempted if row["trial_id"] not in paid_without_result]
    return {
        "state": campaign.state,
        "stop_reason": campaign.stop_reason,
        "scheduled": scheduled,
        "attempted": with_result,
        "carried_trials": sum(r.carried for r in results),
        "interrupted_attempts": interrupted,
        "provider_error_attempts": sum(r.provider_errors for r in spend),
        "engine_error_attempts": sum(r.engine_errors for r in spend),
        "not_carried_attempts": sum(r.not_carried for r in spend),
        # Every attempt row paid for (the campaigns it continues included), by status.
        "attempts_by_status": {k: v for k, v in attempts_by_status.items() if v},
        # Without a result, apart: never attempted (nothing was paid for), or attempted and
        # left without a verdict (interrupted, ended by the provider or the engine: paid for).
        "not_attempted": len(never),
        "not_attempted_by_reason": dict(sorted(Counter(row["reason"] for row in never).items())),
        "attempted_without_result": len(unattempted) - len(never),
        "without_result_by_reason": dict(sorted(Counter(row["reason"] for row in unattempted).items())),
        "all_scheduled_attempted": with_result == scheduled and not unattempted,
    }

def _reasoning_from_the_wire(report: dict[str, Any], experiment: Mapping[str, Any]) -> None:
    """Where the wire showed what each variant's requests asked of reasoning, the report's
    reasoning factor says that instead of the experiment's (cleaned trials: no text of
    their own reaches it, and the factor is a word of the allowlist's)."""
    trials = report["trials"] or []
    observed = reasoning.by_variant([(t.get("variant"), t.get("schema_diagnostics")) for t in trials])
    if observed:
        factors = report["uncontrolled_factors"]
        factors[-1] = reasoning.factor(observed, sorted({t["variant"] for t in trials if t.get("variant")}), experiment.get("reasoning"))


def _decision_basis(synthetic: bool, success: stats.Estimate) -> str:
    """Why the recorded decision stays keep-current-defaults / keep-opt-in.

    The report never promotes a profile: at best it flags a measured benefit for
    human review of security and success checks (and schema-token estimates
    are never part of that).
    """
    if synthetic:
        return "synthetic_figures"
    if success.tasks == 0:
        return "no_paired_evidence"
    if success.tasks == 1:
        return "single_task_cluster"
    # Before any direction: a few tasks say nothing general, whichever way they point.
    if stats.exploratory(success.tasks):
        return "exploratory_task_sample"
    if success.interval_reason == stats.NO_SPREAD_BETWEEN_TASKS:
        return stats.NO_SPREAD_BETWEEN_TASKS
    if success.ci_high is not None and success.ci_high < 0:
        return "success_regression"
    if success.ci_low is not None and success.ci_low > 0:
        return "measured_benefit_requires_review"
    return "interval_includes_zero"
