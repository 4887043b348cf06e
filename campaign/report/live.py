"""The schema-version-3 report ``live_agentic_coding_paired``, built from the store only.

``build_report(engine, campaign_id)`` reads the campaign, its trials and its
attempts (aggregates in SQL, the bootstrap in numpy), assembles plain values,
and returns them passed through the allowlist schema (``schema.sanitize``).
Nothing else in this package writes a report, and the Markdown and the forest
plot are rendered from this sanitized dictionary, never from the store. So the
report can be regenerated at any time, and what it may contain is decided in
one place.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import json
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any

from sqlalchemy import Engine

from campaign import __version__
from campaign.errors import CampaignError, UsageProblem
from campaign.report import aggregates, stats
from campaign.report.schema import (
    AGENTS,
    NOT_ATTEMPTED_REASONS,
    REDACTION,
    REPORT_SCHEMA,
    SHA256_RE,
    VARIANTS,
    enum_or_unlisted,
    sanitize,
)
from campaign.store import repository
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


def build_report(engine: Engine, campaign_id: int, *, provider: str | None = None) -> dict[str, Any]:
    """The sanitized report dictionary for one campaign (refuses a plan-only campaign).

    ``provider`` limits the report to that provider's trials (a multi-provider
    campaign reports each provider and the whole).
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
    scope = aggregates.Scope(campaign.id, provider)
    with engine.connect() as conn, _gc_paused():
        if is_plan_only(campaign, aggregates.attempt_count(conn, aggregates.Scope(campaign.id))):
            raise PlanOnlyArtifact(
                f"campaign {campaign.id} is plan-only (state {campaign.state}, no attempts); a plan template is not a live result and is not reported as one"
            )
        attempted = aggregates.attempt_count(conn, scope)
        variant_rows = aggregates.variant_rows(conn, scope)
        task_rows = aggregates.task_rows(conn, scope)
        done = aggregates.completion(conn, scope)
        providers, models, observed_models = aggregates.distinct_values(conn, scope)
        unattempted = [_not_attempted(row) for row in aggregates.unattempted_trials(conn, scope)]
        names, rows = aggregates.attempted_trials(conn, scope)
        agent = campaign.agent if campaign.agent in AGENTS else "custom"
        synthetic = _synthetic(agent, experiment, providers)
        success, wall = _differences(task_rows, campaign.seed)
        raw = {
            "schema_version": SCHEMA_VERSION,
            "kind": KIND,
            "synthetic": synthetic,
            "evidence": "live" if campaign.live else "offline_unpaid",
            "generator": {"version": __version__},
            "scope": {"provider": provider},
            "campaign": {
                "id": campaign.id,
                "kind": campaign.kind,
                "state": campaign.state,
                "live": bool(campaign.live),
                "stop_reason": campaign.stop_reason,
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
                "model": experiment.get("model") if isinstance(experiment.get("model"), str) else (models[0] if len(models) == 1 else None),
                "providers": providers,
                "observed_models": observed_models,
                "client_version": _client_version(experiment),
                "client_version_reason": None if _client_version(experiment) else "not_recorded_in_store",
            },
            "runtime_versions": _pricing(experiment),
            "completion": _completion(campaign, done, attempted, unattempted),
            "variants": _variants(variant_rows),
            "paired_differences": {
                "bootstrap": {"resamples": stats.RESAMPLES, "confidence": stats.CONFIDENCE, "seed": campaign.seed},
                # Either comparison resting on few task clusters is exploratory: missing
                # wall times can leave the wall interval far fewer clusters than success.
                "exploratory": stats.exploratory(success.tasks) or (wall.tasks > 0 and stats.exploratory(wall.tasks)),
                "exploratory_below_tasks": stats.EXPLORATORY_BELOW_TASKS,
                "verified_success": _difference("verified_success", success, sum(t.pairs for t in task_rows)),
                "wall_seconds": _difference("wall_seconds", wall, sum(t.wall_pairs for t in task_rows)),
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
                    for t in task_rows
                ],
            },
            "trials": _trials(names, rows),
            "not_attempted_trials": unattempted,
            "uncontrolled_factors": list(ALWAYS_UNCONTROLLED)
            + ["reasoning_provider_default" if experiment.get("reasoning") is None else "reasoning_configured_not_verified"],
            "decision": {"basis": _decision_basis(synthetic, success)},
            "redaction": None,
        }
        report, changed = sanitize(raw, REPORT_SCHEMA)
    report["redaction"] = sanitize(changed.as_dict(), REDACTION)[0]
    return report


# --- pieces ------------------------------------------------------------------------------


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic collector while building many small acyclic dicts.

    The report makes two dicts per trial and no reference cycles; with 100,000
    trials the collector's repeated full passes cost about as much as the work.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _load_object(text: str | None) -> dict[str, Any]:
    try:
        value = json.loads(text) if text else {}
    except ValueError:
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
    status = row.pop("status")
    reason = row.pop("not_attempted_reason")
    if status == "scheduled":
        reason = "not_reached"
    elif status != "not_attempted":
        reason = "admitted_without_attempt"
    row["status"] = status
    row["reason"] = enum_or_unlisted(reason, NOT_ATTEMPTED_REASONS) or "unlisted"
    return row


def _completion(campaign: Campaign, done: aggregates.Completion, attempted: int, unattempted: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "state": campaign.state,
        "stop_reason": campaign.stop_reason,
        "scheduled": done.scheduled,
        "attempted": attempted,
        "attempts_by_status": done.attempts_by_status,
        "not_attempted": len(unattempted),
        "not_attempted_by_reason": dict(sorted(Counter(row["reason"] for row in unattempted).items())),
        "all_scheduled_attempted": attempted == done.scheduled and not unattempted,
    }


def _variants(rows: Sequence[aggregates.VariantRow]) -> list[dict[str, Any]]:
    by_name = {row.variant: row for row in rows}
    names = list(VARIANTS) + sorted(set(by_name) - set(VARIANTS))
    return [_variant(name, by_name.get(name)) for name in names]


def _variant(name: str, row: aggregates.VariantRow | None) -> dict[str, Any]:
    if row is None or row.attempts == 0:
        return {
            "variant": name,
            "attempts": 0,
            "unfinished_attempts": 0,
            "successes": 0,
            "success_rate": None,
            "success_rate_reason": "no_attempts",
            "measured_spend_status": "no_attempts",
            "attempts_with_cost": 0,
            "attempts_with_complete_spend": 0,
            "spend_complete": None,
            "cost_per_verified_success_reason": "undefined_zero_successes",
            "equivalent_spend_status": "no_attempts",
            "equivalent_cost_per_verified_success_reason": "undefined_zero_successes",
            "wall_seconds_measured": 0,
            "tool_error_recoveries_known": 0,
            "missing": {},
        }
    n = row.attempts
    spend_complete = row.complete_spend == n
    cost, cost_reason = _per_success(row.cost_sum, row.successes, spend_complete)
    equivalent_complete = row.with_equivalent == n
    eq_cost, eq_reason = _per_success(row.equivalent_sum, row.successes, equivalent_complete)
    return {
        "variant": name,
        "attempts": n,
        "unfinished_attempts": row.unfinished_attempts,
        "successes": row.successes,
        "success_rate": row.successes / n,
        "success_rate_reason": None,
        "measured_spend_usd": row.cost_sum if row.with_cost else None,
        "measured_spend_status": _spend_status(row.with_cost, spend_complete),
        "attempts_with_cost": row.with_cost,
        "attempts_with_complete_spend": row.complete_spend,
        "spend_complete": spend_complete,
        "cost_per_verified_success_usd": cost,
        "cost_per_verified_success_reason": cost_reason,
        "equivalent_spend_usd": row.equivalent_sum if row.with_equivalent else None,
        "equivalent_spend_status": _spend_status(row.with_equivalent, equivalent_complete),
        "equivalent_cost_per_verified_success_usd": eq_cost,
        "equivalent_cost_per_verified_success_reason": eq_reason,
        "wall_seconds_mean": row.wall_mean,
        "wall_seconds_measured": row.with_wall,
        "tool_error_recoveries": row.recoveries if row.recoveries_known else None,
        "tool_error_recoveries_known": row.recoveries_known,
        "missing": {k: v for k, v in row.missing.items() if v},
    }


def _spend_status(measured: int, complete: bool) -> str:
    if measured == 0:
        return "none_measured"
    return "complete" if complete else "partial"


def _per_success(total: float | None, successes: int, complete: bool) -> tuple[float | None, str | None]:
    """All-attempt spend / verified successes, or null with the reason (zero successes wins)."""
    if successes == 0:
        return None, "undefined_zero_successes"
    if not complete or total is None:
        return None, "incomplete_missing_spend"
    return total / successes, None


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


def _trials(names: list[str], rows: Iterator[tuple[Any, ...]]) -> Iterator[dict[str, Any]]:
    """Per-trial dicts, streamed into the schema one at a time."""
    for row in rows:
        d = dict(zip(names, row))
        if d["diagnostic_events_version"] is None:
            # Without the version marker the bridge counters are not defined.
            d["discovery_failures"] = None
            d["incorrect_tool_calls"] = None
        errors = d["tool_errors"]
        d["tool_error_recoveries"] = None if errors is None else int(errors >= 1 and d["verified_pass"] is True)
        profiles = _profiles(d["applied_profiles"])
        d["applied_profiles"] = profiles
        expected = EXPECTED_PROFILE.get(d["variant"])
        d["applied_profile_matches_variant"] = None if profiles is None else (bool(profiles) and all(p == expected for p in profiles))
        diagnostics = d["schema_diagnostics"]
        d["schema_diagnostics"] = (_load_object(diagnostics) or None) if diagnostics else None
        yield d


def _profiles(text: str | None) -> list[str] | None:
    if not text:
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
