"""What a shared report may hold: the report's allowlist, declared.

A report is built as plain Python values, then passed through the allowlist
(``report/allowlist.py``) with ``REPORT_SCHEMA`` before anything is written. The
schema has no type for free text: a leaf is a number, a boolean, null, a
SHA-256 hex digest, a timestamp, a member of a code-authored enum, or an
identifier matching one of the strict patterns of ``report/fields.py``. So a prompt, model
output, an exception message, a header, a credential or a path cannot reach
the JSON, and the Markdown and SVG (which are rendered from the sanitized JSON
only) cannot show one either. Keys not declared here are dropped; that is how
new store columns stay private until someone adds them here on purpose. To
report a new class, extend its word list in ``campaign/vocabulary.py`` (the
engine's words) or in ``report/fields.py`` (the words only the report authors).
"""

from __future__ import annotations

from campaign import vocabulary
from campaign.report.allowlist import (
    Bool,
    Const,
    Enum,
    Int,
    List,
    Map,
    Num,
    Timestamp,
)
from campaign.report.codegen import Obj
from campaign.report.schema_paired import PAIRED_DIFFERENCES
from campaign.report.fields import (
    AGENTS,
    DECISION_BASIS,
    EQUIVALENT_LABELS,
    EVIDENCE,
    Id,
    Model,
    NULL_REASONS,
    PRICE_BASES,
    REASONING,
    ReasoningSetting,
    Revision,
    SPEND_STATUS,
    ScheduleId,
    Sha256,
    UNCONTROLLED_FACTORS,
    VariantName,
    Version,
)
from campaign.experiment import MAX_VARIANTS
from campaign.profiler.fingerprint import PARTS as FINGERPRINT_PARTS

# --- the report -----------------------------------------------------------------------

_NULLABLE_REASON = Enum(NULL_REASONS)

SCHEMA_DIAGNOSTICS = Obj(
    {
        "basis": Const("diagnostic_only_not_outcome_evidence"),
        "catalog_digests": List(Sha256(), max_items=64),
        "catalog_set_digests": List(Sha256(), max_items=64),
        "catalog_sets": Map(Sha256(), Sha256(), max_items=64),
        "full_catalog_digests": List(Sha256(), max_items=64),
        "request_count": Int(),
        "terminal_usage_observations": Int(),
        "cache_observable": Bool(),
        "visible_schema_tokens": Int(),
        # The recording proxy's view (campaign.profiler.summary): digests and numbers only.
        "tool_bearing_requests": Int(),
        "unmatched_requests": Int(),
        "streams_not_clean": Int(),
        # What the provider did on the wire (campaign.profiler.faults): bounded words and counts.
        "unbilled_error_responses": Int(),
        "provider_faults": Map(Enum(vocabulary.PROVIDER_FAULTS), Int(), max_items=16),
        "ending_fault": Enum(vocabulary.PROVIDER_FAULTS),
        # Whose figure cost_usd is: the client's, or wire usage x catalog prices (an estimate).
        "cost_basis": Enum(vocabulary.COST_BASES),
        "wire_cost_usd": Num(),
        "cache_write_observable": Bool(),
        # Each reasoning setting the attempt's requests asked for (campaign.profiler.wire): words and numbers.
        "reasoning_requested": List(ReasoningSetting(), max_items=16),
        "catalog_tool_counts": Map(Sha256(), Int(), max_items=64),
        "catalog_schema_tokens": Map(Sha256(), Int(), max_items=64),
        "wire_adapter_disagreements": Map(Enum(vocabulary.DISAGREEMENT_COUNTERS), Obj({"wire": Int(), "adapter": Int()}), max_items=8),
        # One measurement per disclosure application the runtime reported.
        "disclosure_measurements": List(
            Obj(
                {
                    "profile": Enum(vocabulary.DISCLOSURE_PROFILES),
                    "active": Bool(),
                    "estimated_tokens": Int(),
                    "disclosed_tokens": Int(),
                    "hidden_count": Int(),
                    "disclosed_count": Int(),
                }
            ),
            max_items=16,
        ),
        "resolved_bridge_invocations": Map(Sha256(), Obj({"calls": Int(), "errors": Int()}), max_items=256),
    }
)

TRIAL = Obj(
    {
        "trial_id": ScheduleId(),
        "pair_id": ScheduleId(),
        "task": Id(),
        "variant": VariantName(),
        "provider": Id(),
        "repetition": Int(),
        "pair_order": Int(),
        "position": Int(),
        "attempt_seq": Int(),
        "attempt_status": Enum(vocabulary.ATTEMPT_STATUSES),
        "interrupted_attempts": Int(),
        "carried": Bool(),
        "outcome": Enum(vocabulary.OUTCOMES),
        "failure_class": Enum(vocabulary.FAILURE_CLASSES),
        "verified_pass": Bool(),
        "verifier_exit_code": Int(),
        "wall_seconds": Num(),
        "completed_turns": Int(),
        "uncached_input_tokens": Int(),
        "cached_input_tokens": Int(),
        "cache_write_tokens": Int(),
        "output_tokens": Int(),
        "tool_calls": Int(),
        "tool_errors": Int(),
        "diagnostic_events_version": Int(),
        "discovery_failures": Int(),
        "incorrect_tool_calls": Int(),
        "tool_error_recoveries": Int(),
        "cost_usd": Num(),
        "cost_reported": Bool(),
        "spend_complete": Bool(),
        "flush_complete": Bool(),
        "equivalent_spend_usd": Num(),
        "cleanup_complete": Bool(),
        "disposal_complete": Bool(),
        "finalization_failed": Bool(),
        "teardown_outcome": Enum(vocabulary.TEARDOWN_OUTCOMES),
        "containment": Enum(vocabulary.CONTAINMENTS),
        "config_digest": Sha256(),
        "fixture_digest": Sha256(),
        "agent_model": Model(),
        "applied_profiles": List(Enum(vocabulary.DISCLOSURE_PROFILES), max_items=8),
        "applied_profile_matches_variant": Bool(),
        "schema_diagnostics": SCHEMA_DIAGNOSTICS,
    }
)

NOT_ATTEMPTED = Obj(
    {
        "trial_id": ScheduleId(),
        "pair_id": ScheduleId(),
        "task": Id(),
        "variant": VariantName(),
        "provider": Id(),
        "repetition": Int(),
        "pair_order": Int(),
        "position": Int(),
        "status": Enum(vocabulary.TRIAL_STATUSES),
        "reason": Enum(vocabulary.NOT_ATTEMPTED_REASONS),
        "interrupted_attempts": Int(),
    }
)

# An attempt that counts towards spend and nothing else: never an outcome, never a failure.
SPEND_ONLY_ATTEMPT = Obj(
    {
        "trial_id": ScheduleId(),
        "pair_id": ScheduleId(),
        "task": Id(),
        "variant": VariantName(),
        "provider": Id(),
        "repetition": Int(),
        "pair_order": Int(),
        "position": Int(),
        "campaign_id": Int(),
        "attempt_seq": Int(),
        "attempt_status": Enum(vocabulary.ATTEMPT_STATUSES),
        "why": Enum(vocabulary.SPEND_ONLY_REASONS),
        "wall_seconds": Num(),
        "cost_usd": Num(),
        "cost_reported": Bool(),
        "spend_complete": Bool(),
        "equivalent_spend_usd": Num(),
        "cleanup_complete": Bool(),
        "disposal_complete": Bool(),
        "finalization_failed": Bool(),
        "teardown_outcome": Enum(vocabulary.TEARDOWN_OUTCOMES),
        "containment": Enum(vocabulary.CONTAINMENTS),
    }
)


VARIANT = Obj(
    {
        "variant": VariantName(),
        "attempts": Int(),
        "interrupted_attempts": Int(),
        "provider_error_attempts": Int(),
        "engine_error_attempts": Int(),
        "unfinished_attempts": Int(),
        "not_carried_attempts": Int(),
        "spend_attempts": Int(),
        "successes": Int(),
        "success_rate": Num(),
        "success_rate_reason": _NULLABLE_REASON,
        "measured_spend_usd": Num(),
        "measured_spend_status": Enum(SPEND_STATUS),
        "attempts_with_cost": Int(),
        "attempts_with_complete_spend": Int(),
        "spend_complete": Bool(),
        "cost_per_verified_success_usd": Num(),
        "cost_per_verified_success_reason": _NULLABLE_REASON,
        "equivalent_spend_usd": Num(),
        "equivalent_spend_status": Enum(SPEND_STATUS),
        "equivalent_spend_basis": Enum(PRICE_BASES),
        "equivalent_spend_label": Enum(EQUIVALENT_LABELS),
        "equivalent_cost_per_verified_success_usd": Num(),
        "equivalent_cost_per_verified_success_reason": _NULLABLE_REASON,
        "wall_seconds_mean": Num(),
        "wall_seconds_measured": Int(),
        "tool_error_recoveries": Int(),
        "tool_error_recoveries_known": Int(),
        "missing": Map(Enum(vocabulary.MISSING_COUNTERS), Int()),
    }
)

# One provider in scope: its price basis and what its attempts spent (the whole lineage).
PROVIDER = Obj(
    {
        "name": Id(),
        "basis": Enum(PRICE_BASES),
        "basis_reason": _NULLABLE_REASON,
        "attempts": Int(),
        "interrupted_attempts": Int(),
        "provider_error_attempts": Int(),
        "engine_error_attempts": Int(),
        "spend_attempts": Int(),
        "measured_spend_usd": Num(),
        "measured_spend_status": Enum(SPEND_STATUS),
        "equivalent_spend_usd": Num(),
        "equivalent_spend_status": Enum(SPEND_STATUS),
    }
)

# Attempts the provider ended, per provider and variant, by the fault that ended them.
PROVIDER_FAULTS = Obj(
    {
        "provider": Id(),
        "variant": VariantName(),
        "attempts": Int(),
        "by_fault": Map(Enum(vocabulary.PROVIDER_FAULTS), Int(), max_items=16),
    }
)

# The whole scope's spend. Equivalent spend is summed per price basis, never across bases.
SPEND = Obj(
    {
        "campaigns": List(Int(), max_items=64),
        "spend_attempts": Int(),
        "measured_spend_usd": Num(),
        "measured_spend_status": Enum(SPEND_STATUS),
        "attempts_with_cost": Int(),
        "attempts_with_complete_spend": Int(),
        "equivalent_spend_by_basis": Map(Enum(PRICE_BASES), Num(), max_items=2),
        "equivalent_spend_usd": Num(),
        "equivalent_spend_basis": Enum(PRICE_BASES),
        "equivalent_spend_reason": _NULLABLE_REASON,
        # The local caps the campaign's latest run was held to (--max-spend-usd or
        # --max-total-spend-usd, --attempt-ceiling-usd); null: it ran under none.
        "limits": Obj({"max_spend_usd": Num(), "provider_max_spend_usd": Num(), "per_attempt_ceiling_usd": Num()}),
    }
)

INTEGRITY = Obj(
    {
        "chain_verified": Bool(),
        "chain_verified_reason": _NULLABLE_REASON,
        "problems": Int(),
        "campaigns_verified": List(Int(), max_items=64),
        # Where each chain the report read ended (its campaign first, then those it continues):
        # `campaign verify --against` checks a store still holds them.
        "chains": List(Obj({"campaign_id": Int(), "links": Int(), "head": Sha256(), "final": Bool()}), max_items=64),
    }
)

REDACTION = Obj(
    {
        "policy": Const("structural_allowlist"),
        "dropped_keys": Int(),
        "unlisted_values": Int(),
        "redacted_ids": Int(),
        "nulled_values": Int(),
    }
)

REPORT_SCHEMA = Obj(
    {
        "schema_version": Const(3),
        "kind": Const("live_agentic_coding_paired"),
        "synthetic": Bool(),
        "evidence": Enum(EVIDENCE),
        "integrity": INTEGRITY,
        "generator": Obj({"name": Const("campaign"), "version": Version()}),
        "scope": Obj({"provider": Id()}),
        "campaign": Obj(
            {
                "id": Int(),
                "kind": Enum(vocabulary.CAMPAIGN_KINDS),
                "state": Enum(vocabulary.CAMPAIGN_STATES),
                "live": Bool(),
                "stop_reason": Enum(vocabulary.STOP_REASONS),
                "continues_campaign_id": Int(),
                "created_at": Timestamp(),
                "started_at": Timestamp(),
                "finished_at": Timestamp(),
                "deadline_at": Timestamp(),
            }
        ),
        "approval": Obj(
            {
                "experiment_digest": Sha256(),
                "plan_digest": Sha256(),
                "approved_plan_digest": Sha256(),
                "approved": Bool(),
            }
        ),
        "experiment": Obj(
            {
                "tasks": List(Id()),
                "model": Model(),
                "agent": Enum(AGENTS),
                "revision": Revision(),
                "source_digest": Sha256(),
                "compiled_build_digest": Sha256(),
                "repetitions": Int(),
                "seed": Int(),
                "timeout": Num(),
                "run_timeout": Num(),
                "variants": List(Obj({"name": VariantName(), "overlay_digest": Sha256()}), max_items=MAX_VARIANTS),
                "config_digest": Sha256(),
                "fixture_digests": Map(Id(), Sha256()),
                "profile_python_digest": Sha256(),
                # applied_profile_from = "wire": the catalogs the probe measured per variant.
                "wire_catalogs": Map(VariantName(), List(Sha256(), max_items=16), max_items=MAX_VARIANTS),
                # How those digests were made: 1, the tools in the client's order; 2, as a set
                # (sorted by name). Null where there are no wire catalogs.
                "wire_catalog_format": Int(),
                "reasoning": Enum(REASONING),
                # --task-suite: its name, the digest of every task it ran, and which of them
                # `campaign tasks check` never proved sound as they were (names only, never
                # a path or a file's content). Null: the built-in tasks, bound by the source
                # and fixture digests above.
                "task_suite": Obj({"name": Id(), "digest": Sha256(), "unchecked_tasks": List(Id())}),
                # From catalog format 3: per candidate (and provider), the parts of its wire
                # fingerprint that differ from the baseline's. Absent where none was bound.
                "wire_differences": List(
                    Obj({"provider": Id(), "variant": VariantName(), "differs_in": List(Enum(FINGERPRINT_PARTS))}),
                    max_items=MAX_VARIANTS * 16,
                ),
            },
            optional=frozenset({"wire_differences"}),
        ),
        "runtime": Obj(
            {
                "agent": Enum(AGENTS),
                "model": Model(),
                "providers": List(Id(), max_items=64),
                "observed_models": List(Model(), max_items=64),
                "client_version": Version(),
                "client_version_reason": _NULLABLE_REASON,
            }
        ),
        "runtime_versions": Obj(
            {
                "pricing_catalog_digest": Sha256(),
                "pricing_catalog_digest_reason": _NULLABLE_REASON,
            }
        ),
        "completion": Obj(
            {
                "state": Enum(vocabulary.CAMPAIGN_STATES),
                "stop_reason": Enum(vocabulary.STOP_REASONS),
                "scheduled": Int(),
                "attempted": Int(),
                "carried_trials": Int(),
                "interrupted_attempts": Int(),
                "provider_error_attempts": Int(),
                "engine_error_attempts": Int(),
                "not_carried_attempts": Int(),
                "attempts_by_status": Map(Enum(vocabulary.ATTEMPT_STATUSES), Int()),
                # Trials without a result: never attempted (nothing paid for) ...
                "not_attempted": Int(),
                "not_attempted_by_reason": Map(Enum(vocabulary.NOT_ATTEMPTED_REASONS), Int()),
                # ... and attempted, paid for, left without a verdict; both kinds by reason.
                "attempted_without_result": Int(),
                "without_result_by_reason": Map(Enum(vocabulary.NOT_ATTEMPTED_REASONS), Int()),
                "all_scheduled_attempted": Bool(),
            }
        ),
        "variants": List(VARIANT, max_items=8),
        "paired_differences": PAIRED_DIFFERENCES,
        "providers": List(PROVIDER, max_items=64),
        "provider_faults": List(PROVIDER_FAULTS, max_items=128),
        "spend": SPEND,
        "trials": List(TRIAL),
        "not_attempted_trials": List(NOT_ATTEMPTED),
        "spend_only_attempts": List(SPEND_ONLY_ATTEMPT),
        "cost_basis": Const("runtime_reported_catalog_price_estimate_not_invoice"),
        "uncontrolled_factors": List(Enum(UNCONTROLLED_FACTORS), max_items=16),
        "decision": Obj(
            {
                "recorded": Const("keep_current_defaults"),
                # The spec's decision on its own question (the coding disclosure stays
                # opt-in): only in the built-in experiment's reports.
                "coding_profile": Const("opt_in"),
                "promotion": Const("not_proposed"),
                "basis": Enum(DECISION_BASIS),
                "schema_token_estimates_are_evidence": Const(False),
            },
            optional=frozenset({"coding_profile"}),
        ),
        "redaction": REDACTION,
    }
)
