"""The schema-version-3 report ``live_agentic_coding_paired``, built from the store only.

``build_report(engine, campaign_id)`` reads the campaign, its trials and its
attempts (aggregates in SQL, the bootstrap in numpy), assembles plain values,
and returns them passed through the allowlist schema (``schema.sanitize``).
Nothing else in this package writes a report, and the Markdown and the forest
plot are rendered from this sanitized dictionary, never from the store. So the
report can be regenerated at any time, and what it may contain is decided in
one place.

Outcomes (success, wall time, counters, the paired differences) come from each
trial's result, its one finished attempt; an interrupted attempt has no verdict
and is counted as interrupted, never as a failure. Spend comes from every
attempt paid for, over the campaign and the campaigns it continues, in exact
sums. Equivalent spend keeps its price basis per provider and is never summed
across bases. ``integrity`` says whether the rows verified (``campaign verify``).
"""

from __future__ import annotations

import functools
import json
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from sqlalchemy import Connection, Engine

from campaign import __version__
from campaign.bulk import collector_paused
from campaign.errors import CampaignError, UsageProblem
from campaign.report import aggregates, detectable, results, stats
from campaign.report.integrity import Integrity, check_rows, read_lineage, refuse_unless_verified
from campaign.report.schema import (
    AGENTS,
    NOT_ATTEMPTED_REASONS,
    REDACTION,
    REPORT_SCHEMA,
    SHA256_RE,
    TRIAL,
    VARIANTS,
    enum_or_unlisted,
    sanitize,
)
from campaign.store import repository, snapshot
from campaign.store.models import Campaign

KIND = "live_agentic_coding_paired"
SCHEMA_VERSION = 3
EXPECTED_PROFILE = {"baseline": "legacy", "coding": "coding"}
ALWAYS_UNCONTROLLED = ("provider_cache_state", "provider_queue", "provider_load", "pricing_drift", "route_drift", "os_scheduling")


class PlanOnlyArtifact(CampaignError):
    """The campaign was only planned: there is no live result to report or share."""


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
    engine: Engine, campaign_id: int, *, provider: str | None = None, integrity: Integrity | None = None, require_verified: bool = False
) -> dict[str, Any]:
    """The sanitized report dictionary for one campaign (refuses a plan-only campaign).

    ``provider`` limits the report to that provider's trials (a multi-provider
    campaign reports each provider and the whole). ``integrity`` is the hash-chain
    verification of the campaign and the campaigns it continues; when not given it
    runs here, on the rows the report reads anyway, so every report says whether its
    rows verify, and ``require_verified`` then refuses (``UnverifiedStore``) rows that
    do not. Everything is read from one state of the store: the database aggregates
    on a second connection in a thread while the rows are read and checked here.
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
    experiment = _load_object(campaign.experiment_json)
    lineage = tuple(repository.lineage(engine, campaign.id))
    scope = aggregates.Scope(campaign.id, provider, lineage)
    with snapshot.readers(engine) as read, collector_paused():
        if is_plan_only(campaign, int(aggregates.has_attempts(read.conn, scope))):
            raise PlanOnlyArtifact(
                f"campaign {campaign.id} is plan-only (state {campaign.state}, no attempts); a plan template is not a live result and is not reported as one"
            )
        in_scope = read.beside(lambda conn: aggregates.scope_trials(conn, scope))
        counted = read.beside(lambda conn: _Counted.read(conn, scope))
        attempts = read_lineage(read.conn, lineage)
        if integrity is None:
            integrity = check_rows(read.conn, lineage, attempts)
            if require_verified:
                refuse_unless_verified(integrity, campaign.id)
        rows = results.result_rows(in_scope.result(), attempts)
        del attempts
        c = counted.result()
        agent = campaign.agent if campaign.agent in AGENTS else "custom"
        synthetic = _synthetic(agent, experiment, c.providers)
        bases = _provider_bases(agent, experiment, c.providers)
        success, wall = _differences(c.tasks, campaign.seed)
        raw = {
            "schema_version": SCHEMA_VERSION,
            "kind": KIND,
            "synthetic": synthetic,
            "evidence": "live" if campaign.live else "offline_unpaid",
            "integrity": integrity.as_report(),
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
                "approved": _is_sha256(campaign.approved_plan_digest),
            },
            "experiment": _experiment(experiment, campaign),
            "runtime": {
                "agent": agent,
                "model": experiment.get("model") if isinstance(experiment.get("model"), str) else (c.models[0] if len(c.models) == 1 else None),
                "providers": c.providers,
                "observed_models": c.observed_models,
                "client_version": _client_version(experiment),
                "client_version_reason": None if _client_version(experiment) else "not_recorded_in_store",
            },
            "runtime_versions": _pricing(experiment),
            "completion": _completion(campaign, c.by_status, c.variants, c.spend, c.unattempted),
            "variants": _variants(c.variants, c.spend, bases),
            "paired_differences": {
                "bootstrap": {"resamples": stats.RESAMPLES, "confidence": stats.CONFIDENCE, "seed": campaign.seed},
                # Either comparison resting on few task clusters is exploratory: missing
                # wall times can leave the wall interval far fewer clusters than success.
                "exploratory": stats.exploratory(success.tasks) or (wall.tasks > 0 and stats.exploratory(wall.tasks)),
                "exploratory_below_tasks": stats.EXPLORATORY_BELOW_TASKS,
                "verified_success": _difference("verified_success", success, sum(t.pairs for t in c.tasks)),
                "wall_seconds": _difference("wall_seconds", wall, sum(t.wall_pairs for t in c.tasks)),
                "detectable_effect": detectable.block(c.tasks, campaign.seed),
                "per_task": [
                    {
                        "task": t.task,
                        "pairs": t.pairs,
                        "success_difference": t.success_difference,
                        "baseline_successes": t.baseline_successes,
                        "coding_successes": t.coding_successes,
                        "wall_pairs": t.wall_pairs,
                        "wall_seconds_difference": t.wall_difference,
                    }
                    for t in c.tasks
                ],
            },
            "providers": [_provider(name, bases[name], [r for r in c.spend if r.provider == name]) for name in c.providers],
            "provider_faults": _provider_faults(c.faults),
            "spend": _spend(scope, c.spend, bases),
            "trials": None,  # cleaned straight from the stored rows below
            "not_attempted_trials": c.unattempted,
            "spend_only_attempts": c.spend_only,
            "uncontrolled_factors": list(ALWAYS_UNCONTROLLED)
            + ["reasoning_provider_default" if experiment.get("reasoning") is None else "reasoning_configured_not_verified"],
            "decision": {"basis": _decision_basis(synthetic, success)},
            "redaction": None,
        }
        report, changed = sanitize(raw, REPORT_SCHEMA)
        # The per-trial rows (one per trial with a result: 100,000 in the benchmark) go
        # through the same TRIAL schema, cleaned from the row tuples in one generated loop.
        report["trials"] = _trial_cleaner(integrity.verified is True)(rows, changed)
        del rows  # 100,000 stored rows freed now, before the collector is back on
    report["redaction"] = sanitize(changed.as_dict(), REDACTION)[0]
    return report


@dataclass(frozen=True)
class _Counted:
    """What the database counts and sums for a report (``aggregates``)."""

    variants: list[aggregates.VariantRow]
    spend: list[aggregates.SpendRow]
    tasks: list[aggregates.TaskRow]
    by_status: dict[str, int]
    providers: list[str]
    models: list[str]
    observed_models: list[str]
    unattempted: list[dict[str, Any]]
    spend_only: list[dict[str, Any]]
    faults: list[aggregates.FaultRow]

    @classmethod
    def read(cls, conn: Connection, scope: aggregates.Scope) -> _Counted:
        providers, models, observed = aggregates.distinct_values(conn, scope)
        return cls(
            variants=aggregates.variant_rows(conn, scope),
            spend=aggregates.spend_rows(conn, scope),
            tasks=aggregates.task_rows(conn, scope),
            by_status=aggregates.trials_by_status(conn, scope),
            providers=providers,
            models=models,
            observed_models=observed,
            unattempted=[_not_attempted(row) for row in aggregates.unattempted_trials(conn, scope)],
            spend_only=[_spend_only(row) for row in aggregates.spend_only_attempts(conn, scope)],
            faults=aggregates.fault_rows(conn, scope),
        )


# --- pieces ------------------------------------------------------------------------------


def _load_object(text: str | None) -> dict[str, Any]:
    try:
        value = json.loads(text) if text else {}
    except (ValueError, TypeError):
        return {}
    return value if isinstance(value, dict) else {}


def _is_sha256(value: Any) -> bool:
    return isinstance(value, str) and SHA256_RE.fullmatch(value) is not None


def _experiment(exp: dict[str, Any], campaign: Campaign) -> dict[str, Any]:
    agent = exp.get("agent")
    if isinstance(agent, dict):
        agent = agent.get("name")
    return {
        "tasks": exp.get("tasks"),
        "model": exp.get("model"),
        "agent": agent if agent in AGENTS else ("custom" if agent is not None else None),
        "revision": exp.get("revision"),
        "source_digest": exp.get("source_digest"),
        "compiled_build_digest": exp.get("compiled_build_digest"),
        "repetitions": exp.get("repetitions"),
        "seed": exp.get("seed", campaign.seed),
        "timeout": exp.get("timeout"),
        "run_timeout": exp.get("run_timeout"),
        "variants": _variant_identities(exp.get("variants")),
        "config_digest": exp.get("config_digest"),
        "fixture_digests": exp.get("fixture_digests"),
        "profile_python_digest": exp.get("profile_python_digest"),
        "wire_catalogs": exp.get("wire_catalogs"),
        "reasoning": exp.get("reasoning") if exp.get("reasoning") is not None else "provider_default",
    }


def _variant_identities(value: Any) -> list[dict[str, Any]] | None:
    """Variants as [{name, overlay_digest}] whichever way the experiment spelled them."""
    if isinstance(value, dict):
        return [{"name": k, "overlay_digest": v if isinstance(v, str) else _digest_of(v)} for k, v in value.items()]
    if isinstance(value, (list, tuple)):
        out = []
        for item in value:
            if isinstance(item, str):
                out.append({"name": item, "overlay_digest": None})
            elif isinstance(item, dict):
                out.append({"name": item.get("name"), "overlay_digest": _digest_of(item)})
        return out
    return None


def _digest_of(item: Any) -> Any:
    if isinstance(item, dict):
        for key in ("overlay_digest", "digest", "config_digest", "sha256"):
            if key in item:
                return item[key]
    return None


def _synthetic(agent: str, exp: dict[str, Any], providers: Sequence[str]) -> bool:
    """The offline agent ran some of these trials: its figures are test data, not evidence.

    A multi-provider campaign records "custom" as its agent when its providers
    use different agents, and a catalog may give the offline agent (or a
    synthetic price basis) to a provider under any name; so every provider in
    scope is looked up in the experiment too.
    """
    if agent == "offline" or "offline" in providers:
        return True
    entries = exp.get("providers")
    if not isinstance(entries, list):
        return False
    return any(
        isinstance(e, dict) and e.get("name") in providers and (e.get("agent") == "offline" or e.get("basis") == "synthetic")
        for e in entries
    )


def _pricing(exp: dict[str, Any]) -> dict[str, Any]:
    nested = exp.get("runtime_versions")
    digest = exp.get("pricing_catalog_digest")
    if digest is None and isinstance(nested, dict):
        digest = nested.get("pricing_catalog_digest")
    if _is_sha256(digest):
        return {"pricing_catalog_digest": digest, "pricing_catalog_digest_reason": None}
    return {"pricing_catalog_digest": None, "pricing_catalog_digest_reason": "no_providers_catalog"}


def _not_attempted(row: dict[str, Any]) -> dict[str, Any]:
    """A trial without a result: why (its not-attempted reason, or what its attempts were)."""
    status = row.pop("status")
    reason = row.pop("not_attempted_reason")
    if status != "not_attempted":
        if row["interrupted_attempts"]:
            # Its attempts were stopped (or left running by a killed runner) with no verdict.
            reason = "interrupted"
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
) -> dict[str, Any]:
    scheduled = sum(by_status.values())
    # Trials with a result (a finished attempt); interrupted attempts are counted apart.
    with_result = sum(r.attempts for r in results)
    interrupted, running, every = (sum(r.interrupted for r in spend), sum(r.running for r in spend), sum(r.attempts for r in spend))
    faulted = sum(r.provider_errors + r.engine_errors for r in spend)
    attempts_by_status = {"finished": every - interrupted - faulted, "interrupted": interrupted - running, "running": running, "faulted": faulted}
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
        "not_attempted": len(unattempted),
        "not_attempted_by_reason": dict(sorted(Counter(row["reason"] for row in unattempted).items())),
        "all_scheduled_attempted": with_result == scheduled and not unattempted,
    }


# --- spend --------------------------------------------------------------------------------

_BASIS_IDS = {"public list price": "public_list_price", "public_list_price": "public_list_price", "synthetic": "synthetic"}
_EQUIVALENT_LABEL = {"public_list_price": "list-price equivalent, not billed", "synthetic": "synthetic-price equivalent, not billed"}


def _provider_bases(agent: str, exp: dict[str, Any], providers: Sequence[str]) -> dict[str, str | None]:
    """Each provider's price basis: the catalog's, recorded in the experiment; the offline
    agent's simulated route is synthetic; otherwise unknown (None), never guessed."""
    entries = exp.get("providers")
    by_name = {e.get("name"): e for e in entries if isinstance(e, dict)} if isinstance(entries, list) else {}
    out: dict[str, str | None] = {}
    for name in providers:
        entry = by_name.get(name)
        basis = _BASIS_IDS.get(entry.get("basis")) if isinstance(entry, dict) and isinstance(entry.get("basis"), str) else None
        if basis is None and (name == "offline" or (isinstance(entry, dict) and entry.get("agent") == "offline") or (entry is None and agent == "offline")):
            basis = "synthetic"
        out[name] = basis
    return out


@dataclass
class _Sums:
    """Exact spend sums over a set of SpendRows (a variant, a provider, the whole scope)."""

    attempts: int = 0
    results: int = 0
    interrupted: int = 0
    running: int = 0
    not_carried: int = 0
    provider_errors: int = 0
    engine_errors: int = 0
    cost: Decimal | None = None
    with_cost: int = 0
    complete: int = 0
    with_equivalent: int = 0
    # basis (None: unknown) -> exact equivalent sum of the providers on that basis
    equivalent: dict[str | None, Decimal] = field(default_factory=dict)

    @classmethod
    def of(cls, rows: Iterable[aggregates.SpendRow], bases: dict[str, str | None]) -> _Sums:
        out = cls()
        for r in rows:
            out.attempts += r.attempts
            out.results += r.results
            out.interrupted += r.interrupted
            out.running += r.running
            out.not_carried += r.not_carried
            out.provider_errors += r.provider_errors
            out.engine_errors += r.engine_errors
            out.with_cost += r.with_cost
            out.complete += r.complete_spend
            out.with_equivalent += r.with_equivalent
            if r.cost_sum is not None:
                out.cost = r.cost_sum if out.cost is None else out.cost + r.cost_sum
            if r.equivalent_sum is not None:
                basis = bases.get(r.provider)
                out.equivalent[basis] = out.equivalent.get(basis, Decimal(0)) + r.equivalent_sum
        return out

    @property
    def spend_complete(self) -> bool | None:
        return self.complete == self.attempts if self.attempts else None

    def measured(self) -> tuple[float | None, str]:
        if not self.attempts:
            return None, "no_attempts"
        return (_usd(self.cost) if self.with_cost else None), _spend_status(self.with_cost, self.complete == self.attempts)

    def equivalent_total(self) -> tuple[Decimal | None, str | None, str | None]:
        """(exact sum, basis, status): one basis is summed; two bases are never added."""
        if not self.attempts:
            return None, None, "no_attempts"
        if len(self.equivalent) > 1:
            return None, None, "mixed_price_bases"
        if not self.equivalent:
            return None, None, "none_measured"
        ((basis, total),) = self.equivalent.items()
        return total, basis, _spend_status(self.with_equivalent, self.with_equivalent == self.attempts)


def _usd(value: Decimal | None) -> float | None:
    """An exact dollar sum as a JSON number (nano-dollar precision, so 0.1 + 0.2 is 0.3)."""
    return None if value is None else float(value)


def _variants(results: Sequence[aggregates.VariantRow], spend: Sequence[aggregates.SpendRow], bases: dict[str, str | None]) -> list[dict[str, Any]]:
    by_name = {row.variant: row for row in results}
    names = list(VARIANTS) + sorted((set(by_name) | {r.variant for r in spend}) - set(VARIANTS))
    return [_variant(name, by_name.get(name), _Sums.of((r for r in spend if r.variant == name), bases)) for name in names]


def _variant(name: str, row: aggregates.VariantRow | None, sums: _Sums) -> dict[str, Any]:
    """Outcomes from the variant's result attempts; spend from every attempt it paid for."""
    n = row.attempts if row is not None else 0
    successes = row.successes if row is not None else 0
    measured, measured_status = sums.measured()
    cost, cost_reason = _per_success(sums.cost, successes, sums.spend_complete is True)
    eq_total, eq_basis, eq_status = sums.equivalent_total()
    if eq_status == "mixed_price_bases":
        eq_cost, eq_reason = None, "mixed_price_bases" if successes else "undefined_zero_successes"
    else:
        eq_cost, eq_reason = _per_success(eq_total, successes, bool(sums.attempts) and sums.with_equivalent == sums.attempts)
    return {
        "variant": name,
        "attempts": n,
        "interrupted_attempts": sums.interrupted,
        "provider_error_attempts": sums.provider_errors,
        "engine_error_attempts": sums.engine_errors,
        "unfinished_attempts": sums.running,
        "not_carried_attempts": sums.not_carried,
        "spend_attempts": sums.attempts,
        "successes": successes,
        "success_rate": successes / n if n else None,
        "success_rate_reason": None if n else "no_attempts",
        "measured_spend_usd": measured,
        "measured_spend_status": measured_status,
        "attempts_with_cost": sums.with_cost,
        "attempts_with_complete_spend": sums.complete,
        "spend_complete": sums.spend_complete,
        "cost_per_verified_success_usd": cost,
        "cost_per_verified_success_reason": cost_reason,
        "equivalent_spend_usd": _usd(eq_total),
        "equivalent_spend_status": eq_status,
        "equivalent_spend_basis": eq_basis,
        "equivalent_spend_label": _EQUIVALENT_LABEL.get(eq_basis) if eq_total is not None else None,
        "equivalent_cost_per_verified_success_usd": eq_cost,
        "equivalent_cost_per_verified_success_reason": eq_reason,
        "wall_seconds_mean": row.wall_mean if row is not None else None,
        "wall_seconds_measured": row.with_wall if row is not None else 0,
        "tool_error_recoveries": row.recoveries if row is not None and row.recoveries_known else None,
        "tool_error_recoveries_known": row.recoveries_known if row is not None else 0,
        "missing": {k: v for k, v in row.missing.items() if v} if row is not None else {},
    }


def _provider(name: str, basis: str | None, rows: Sequence[aggregates.SpendRow]) -> dict[str, Any]:
    sums = _Sums.of(rows, {name: basis})
    measured, measured_status = sums.measured()
    eq_total, _, eq_status = sums.equivalent_total()
    return {
        "name": name,
        "basis": basis,
        "basis_reason": None if basis else "not_recorded_in_store",
        "attempts": sums.results,
        "interrupted_attempts": sums.interrupted,
        "provider_error_attempts": sums.provider_errors,
        "engine_error_attempts": sums.engine_errors,
        "spend_attempts": sums.attempts,
        "measured_spend_usd": measured,
        "measured_spend_status": measured_status,
        "equivalent_spend_usd": _usd(eq_total),
        "equivalent_spend_status": eq_status,
    }


def _spend(scope: aggregates.Scope, rows: Sequence[aggregates.SpendRow], bases: dict[str, str | None]) -> dict[str, Any]:
    """The whole scope's spend: measured cost summed; equivalent spend per basis, and one
    total only when every figure shares one basis."""
    sums = _Sums.of(rows, bases)
    measured, measured_status = sums.measured()
    eq_total, eq_basis, eq_status = sums.equivalent_total()
    if eq_status == "mixed_price_bases":
        reason = "mixed_price_bases"
    elif eq_total is None:
        reason = "no_attempts" if eq_status == "no_attempts" else "no_equivalent_spend"
    else:
        reason = None
    return {
        "campaigns": list(scope.campaigns),
        "spend_attempts": sums.attempts,
        "measured_spend_usd": measured,
        "measured_spend_status": measured_status,
        "attempts_with_cost": sums.with_cost,
        "attempts_with_complete_spend": sums.complete,
        "equivalent_spend_by_basis": {basis: _usd(total) for basis, total in sorted(sums.equivalent.items(), key=lambda kv: str(kv[0])) if basis is not None},
        "equivalent_spend_usd": _usd(eq_total),
        "equivalent_spend_basis": eq_basis,
        "equivalent_spend_reason": reason,
    }


def _spend_status(measured: int, complete: bool) -> str:
    if measured == 0:
        return "none_measured"
    return "complete" if complete else "partial"


def _per_success(total: Decimal | None, successes: int, complete: bool) -> tuple[float | None, str | None]:
    """All-attempt spend / verified successes, or null with the reason (zero successes wins)."""
    if successes == 0:
        return None, "undefined_zero_successes"
    if not complete or total is None:
        return None, "incomplete_missing_spend"
    return float(total / successes), None


def _differences(task_rows: Sequence[aggregates.TaskRow], seed: int) -> tuple[stats.Estimate, stats.Estimate]:
    success = stats.summarize([t.success_difference for t in task_rows], seed, empty_reason="no_complete_pairs")
    wall = stats.summarize(
        [t.wall_difference for t in task_rows if t.wall_pairs and t.wall_difference is not None], seed, empty_reason="no_pairs_with_both_wall_times"
    )
    return success, wall


def _difference(metric: str, est: stats.Estimate, pairs: int) -> dict[str, Any]:
    return {
        "metric": metric,
        "estimate": est.estimate,
        "estimate_reason": est.estimate_reason,
        "ci_low": est.ci_low,
        "ci_high": est.ci_high,
        "interval_reason": est.interval_reason,
        "tasks": est.tasks,
        "pairs": pairs,
    }


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
    if success.ci_high is not None and success.ci_high < 0:
        return "success_regression"
    if stats.exploratory(success.tasks):
        return "exploratory_task_sample"
    if success.ci_low is not None and success.ci_low > 0:
        return "measured_benefit_requires_review"
    return "interval_includes_zero"


def _client_version(experiment: dict[str, Any]) -> str | None:
    """The bound client version: the experiment's, or the one every provider's client shares."""
    if isinstance(experiment.get("client_version"), str):
        return experiment["client_version"]
    providers = experiment.get("providers")
    versions = {p.get("client_version") for p in providers if isinstance(p, dict)} if isinstance(providers, list) else set()
    return versions.pop() if len(versions) == 1 and isinstance(next(iter(versions)), str) else None


@functools.lru_cache(maxsize=2)
def _trial_cleaner(verified: bool) -> Callable[[Any, Any], list[dict[str, Any]]]:
    """The TRIAL schema compiled for ``results`` rows: stored booleans read as booleans,
    the bridge counters only with their marker, JSON texts parsed on the way. Rows whose
    chain verified hold what the engine wrote: their numbers and booleans are not checked."""
    return TRIAL.compile_rows(
        results.NAMES,
        derived={
            "discovery_failures": (results.with_marker, ("diagnostic_events_version", "discovery_failures")),
            "incorrect_tool_calls": (results.with_marker, ("diagnostic_events_version", "incorrect_tool_calls")),
            "tool_error_recoveries": (results.tool_error_recovery, ("tool_errors", "verified_pass")),
            "schema_diagnostics": (_diagnostics, ("schema_diagnostics",)),
        },
        memoized={
            "applied_profiles": (_profiles, ("applied_profiles",)),
            "applied_profile_matches_variant": (_profile_matches, ("applied_profiles", "variant")),
        },
        stored_booleans=results.BOOLEANS,
        trusted=results.TRUSTED if verified else (),
    )


_decode = json.JSONDecoder().raw_decode
_WHITESPACE = json.decoder.WHITESPACE


def _diagnostics(text: str | None) -> dict[str, Any] | None:
    """The schema diagnostics JSON object, or None (absent, unreadable, or not an object)."""
    if not text or type(text) is not str:
        return None
    try:
        value, end = _decode(text, _WHITESPACE.match(text, 0).end())
    except ValueError:
        return None
    if end != len(text) and text[end:].strip():
        return None
    return value if type(value) is dict and value else None


def _profile_matches(text: str | None, variant: str) -> bool | None:
    """Every applied profile is the variant's expected one (None: nothing observed)."""
    profiles = _parsed_profiles(text) if text and isinstance(text, str) else None
    if profiles is None:
        return None
    expected = EXPECTED_PROFILE.get(variant)
    return bool(profiles) and all(p == expected for p in profiles)


def _profiles(text: str | None) -> list[str] | None:
    if not text or not isinstance(text, str):
        return None
    parsed = _parsed_profiles(text)
    return None if parsed is None else list(parsed)


@functools.lru_cache(maxsize=256)
def _parsed_profiles(text: str) -> tuple[str, ...] | None:
    """applied_profiles JSON (a handful of distinct texts per campaign, so cached)."""
    try:
        value = json.loads(text)
    except ValueError:
        return None
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        return None
    return tuple(p for p in value if isinstance(p, str))
