"""What an attempt came to, from what it observed: the profile gate, the outcome and
its failure class, whose fault it was, the counters for its row, and its spend.

Pure functions over plain values (the plan, the adapter's record, what the
supervisor and the verifier reported); ``attempt`` calls them once the
attempt's processes are gone.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import replace
from pathlib import Path
from typing import Any

from campaign import config
from campaign.agents.record import AgentRecord
from campaign.lanes.attempt_plan import AttemptPlan
from campaign.providers import equivalent_spend
from campaign.spend import CACHE_WRITES_UNSEEN, spend_gap, wire_cost
from campaign.vocabulary import CLIENT_COST_BASIS, PROVIDER_FAULTS, RECORD_COUNTERS, WIRE_COST_BASIS


def provider_fault_of(record: AgentRecord) -> str | None:
    """The fault the recording proxy says ended the attempt (the last model request's)."""
    value = (record.schema_diagnostics or {}).get("ending_fault")
    return value if value in PROVIDER_FAULTS else None


def resolved_profile(config_path: Path | None) -> str | None:
    """The disclosure profile the agent will read from its config file, or None."""
    if config_path is None:
        return None
    try:
        return config.resolved_profile(tomllib.loads(config_path.read_text(encoding="utf-8")))
    except (OSError, tomllib.TOMLDecodeError):
        return None


def profile_gate(plan: AttemptPlan, config_path: Path | None) -> bool:
    """Before any client call: the variant must be one this client can be seen to apply,
    and its config must resolve to the variant's disclosure profile (if it applies one);
    otherwise no coding label on legacy."""
    if plan.variant is None:
        return True  # a run without variants: its agent's own configuration
    if plan.profile.applied_profile_from == "none" or (plan.expected_label is None and not plan.probe):
        return False  # (the probe's own runs only measure: nothing is confirmed by them)
    if plan.profile.applied_profile_from == "wire" and not plan.expected_catalogs and not plan.probe:
        return False  # nothing to compare the wire with: the variant could never be confirmed
    expected = plan.expected_disclosure
    return expected is None or resolved_profile(config_path) == expected


def counter_fields(record: AgentRecord) -> dict[str, Any]:
    """The attempt columns an adapter record fills; None stays None."""
    return {
        **{name: getattr(record, name) for name in RECORD_COUNTERS},
        "diagnostic_events_version": record.diagnostic_events_version,
        "cost_usd": record.cost_usd,
        "cost_reported": record.cost_reported if record.cost_usd is not None else None,
        "agent_model": (record.model or None) and record.model[:128],
        "applied_profiles": None if record.applied_profiles is None else json.dumps(list(record.applied_profiles)),
        "schema_diagnostics": None if record.schema_diagnostics is None else json.dumps(record.schema_diagnostics, sort_keys=True),
    }


def classify(
    plan: AttemptPlan,
    *,
    gate_ok: bool,
    boot_ok: bool,
    client_timed_out: bool,
    wire_ok: bool = True,
    output_ok: bool = True,
    workspace_ok: bool = True,
    record: AgentRecord,
    verifier_exit: int | None,
    verifier_timed_out: bool,
    reward: bool | None = None,
) -> tuple[str, str | None, bool | None]:
    """(outcome, failure_class, verified_pass) from what was observed; the words come
    from campaign.vocabulary, the only ones a report may carry.

    The verifier alone decides whether the code passes; the recovery task also
    needs an observed failed tool call, and a paired trial needs the applied
    profile confirmed. A check that never ran leaves verified_pass False, not a pass:
    nor does one skipped because the client's captures (``output_ok``) or the
    root's layout (``workspace_ok``) were not what the engine left there. A Harbor
    verifier's reward file (``reward``), when it wrote one, decides over its exit code.
    """
    if not gate_ok:
        return "failed", "profile_gate", False
    if not boot_ok:
        return "failed", "runtime_boot_failed", False
    if not wire_ok:
        return "failed", "profiler_unavailable", False
    if client_timed_out:
        return "timeout", "timeout", False
    if not output_ok:
        return "failed", "unparseable_output", False
    if not workspace_ok:
        return "failed", "workspace_tampered", False
    if verifier_timed_out or verifier_exit is None:
        return "failed", "verifier_timeout", False
    if (verifier_exit != 0) if reward is None else not reward:
        return "failed", record.error_class or "verifier_failed", False
    if plan.task.requires_failed_tool_call and not (record.tool_errors or 0) >= 1:
        return "failed", "no_failed_tool_call", False
    expected = plan.expected_label
    # Its own treatment and nothing else: an attempt whose wire also carried another
    # variant's catalog (or whose client reported two profiles) is no evidence for either.
    if expected is not None and set(record.applied_profiles or ()) != {expected}:
        return "failed", "profile_unconfirmed", False
    return "passed", None, True


def priced(record: AgentRecord, plan: AttemptPlan, flush_complete: bool | None) -> tuple[AgentRecord, str | None, float | None]:
    """(record with its cost, why its spend is not complete (``spend_gap``; None when it is),
    list-price equivalent). A client that reports no cost (Codex) is costed from the wire's
    proven usage at the catalog's prices; one that reports its own keeps it, and the wire
    figure is a cross-check in the diagnostics."""
    # Cache writes cross no OpenAI-format wire: unknown there, and not billed apart (price 0.0).
    unbilled = ("cache_write_tokens",) if (record.schema_diagnostics or {}).get("cache_write_observable") is False else ()
    one_hour = (record.schema_diagnostics or {}).get("cache_write_1h_tokens")
    one_hour = one_hour if isinstance(one_hour, int) and not isinstance(one_hour, bool) else None
    equivalent = equivalent_spend(record, plan.provider, unbilled=unbilled, cache_write_1h_tokens=one_hour).usd if plan.provider else None
    estimated = wire_cost(record, flush_complete=flush_complete, equivalent_usd=equivalent) if plan.profiling else None
    diagnostics = dict(record.schema_diagnostics or {}) if plan.profiling else None
    if estimated is not None:
        record = replace(record, cost_usd=estimated, schema_diagnostics={**diagnostics, "cost_basis": WIRE_COST_BASIS})
    elif diagnostics is not None and record.cost_usd is not None:
        record = replace(record, schema_diagnostics={**diagnostics, "cost_basis": CLIENT_COST_BASIS, "wire_cost_usd": equivalent})
    gap = spend_gap(record, flush_complete=flush_complete, wire_costed=estimated is not None)
    # A route that bills cache writes apart whose responses did not say how many were
    # written (an Anthropic response without cache_creation_input_tokens): that spend is
    # unknown, so no figure for the attempt, the client's own included, is complete.
    unseen_cache_writes = plan.profiling and plan.provider is not None and plan.provider.prices.cache_write > 0 and record.cache_write_tokens is None
    return record, CACHE_WRITES_UNSEEN if gap is None and unseen_cache_writes else gap, equivalent
