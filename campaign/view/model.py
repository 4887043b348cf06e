"""Page values derived from the sanitized report only (pure: no I/O).

Every input here is the dictionary ``build_report`` returned, which already
passed the sharing allowlist; nothing reads the store. The per-variant figures
are shown exactly as the report has them (never recomputed); what is derived
here is only what the report does not group by: progress and spend per
provider, and why a trial has no result (the trial table itself is ``view.trials``).

Unknown stays unknown: a null figure is shown with its reason in words, and a
sum over attempts some of which did not report the value says how many did not.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from campaign.vocabulary import COUNTER_WORDS
from campaign.store.limits import SpendLimits

# Why a report figure is null, in words (keys: schema.NULL_REASONS).
NULL_REASON_WORDS = {
    "no_attempts": "no attempts yet",
    "no_measured_spend": "no attempt reported its cost",
    "incomplete_missing_spend": "unknown: some attempts did not report complete spend",
    "undefined_zero_successes": "undefined: zero verified successes",
    "no_complete_pairs": "no pair has both variants attempted",
    "no_pairs_with_both_wall_times": "no pair has both wall times",
    "single_task_cluster": "one task cluster: no interval",
    "no_spread_between_tasks": "every task's mean difference is the same: no interval",
    "no_providers_catalog": "no providers catalog recorded",
    "not_recorded_in_store": "not recorded in the store",
    "no_diagnostic_events_version": "the agent reported no diagnostic events version",
}
SPEND_STATUS_WORDS = {
    "complete": "every attempt reported its spend",
    "partial": "some attempts did not report their spend",
    "none_measured": "no attempt reported its spend",
    "no_attempts": "no attempts yet",
}
# Why a scheduled trial has no attempt (keys: schema.NOT_ATTEMPTED_REASONS).
NOT_ATTEMPTED_WORDS = {
    "not_reached": "not reached yet",
    "admitted_without_attempt": "admitted, but no attempt row was written",
    "campaign_stopped": "the campaign stopped first",
    "provider_error": "its provider ended its attempts so far (no verdict yet)",
    "spend_limit": "spend limit reached",
    "attempt_exceeded_ceiling": "an attempt exceeded the per-attempt ceiling",
    "spend_incomplete": "an earlier attempt's spend is incomplete",
    "run_deadline": "the run deadline passed",
    "max_attempts": "the approved number of attempts was reached",
    "cleanup_unverified": "an earlier attempt's cleanup is unverified",
    "disposal_failed": "an earlier attempt's disposal failed",
    "finalization_failed": "an earlier attempt's finalization failed",
    "interrupted": "the run was interrupted",
    "engine_error": "an engine error stopped the run",
    "provider_unavailable": "its provider was halted (upstream down, or attempts in a row ended on provider errors)",
    "fault_attempts_exhausted": "its attempts ended on provider errors too many times",
    "worker_lost": "a worker was lost",
    "lease_lost": "the runner's lease was lost",
}
# The trial table's counter columns, in order: (report key, header).
TRIAL_COUNTERS = (
    ("completed_turns", "turns"),
    ("uncached_input_tokens", "uncached in"),
    ("cached_input_tokens", "cached in"),
    ("cache_write_tokens", "cache write"),
    ("output_tokens", "output"),
    ("tool_calls", "tool calls"),
    ("tool_errors", "tool errors"),
    ("cost_usd", "cost USD"),
)
TRIAL_FLAGS = (("cleanup_complete", "cleanup"), ("disposal_complete", "disposal"), ("finalization_failed", "finalization failed"))


def null_reason(reason: str | None) -> str:
    if reason is None:
        return "unknown"
    return NULL_REASON_WORDS.get(reason, reason)


def unknown_of(count: int) -> str:
    """The words for a figure some attempts did not report; never a zero."""
    return f"unknown: {count} attempt{'' if count == 1 else 's'} did not report it"


@dataclass(frozen=True)
class Building:
    """The report shown was built from ``report_rows`` attempt rows; the store holds
    ``store_rows`` now, and a report of what it holds now is being built."""

    report_rows: int
    store_rows: int


@dataclass(frozen=True)
class ProviderProgress:
    provider: str
    scheduled: int
    attempted: int
    not_attempted: int
    passed: int
    # Sum of the costs attempts reported; None when none did.
    spend_usd: float | None
    # Attempts whose cost is unknown (the sum leaves them out).
    spend_unknown: int
    cap_usd: float | None

    def as_dict(self) -> dict[str, Any]:
        return {
            "provider": self.provider,
            "scheduled": self.scheduled,
            "attempted": self.attempted,
            "not_attempted": self.not_attempted,
            "passed": self.passed,
            "spend_usd": self.spend_usd,
            "spend_unknown_attempts": self.spend_unknown,
            "cap_usd": self.cap_usd,
        }


def usd_float(amount: Decimal | None) -> float | None:
    """A cap as the page and its JSON show it: a number of dollars (None: no cap)."""
    return None if amount is None else float(amount)


def provider_progress(report: Mapping[str, Any], limits: SpendLimits | None) -> list[ProviderProgress]:
    """Per provider: scheduled, attempted, verified passes, and measured spend against its
    cap (each provider's ``--max-spend-usd``; None: no cap of its own)."""
    cap = usd_float(limits.provider_max_spend_usd) if limits is not None else None
    trials = report["trials"] or []
    skipped = report["not_attempted_trials"] or []
    names = sorted({str(t["provider"]) for t in [*trials, *skipped] if t["provider"] is not None})
    out = []
    for name in names:
        mine = [t for t in trials if t["provider"] == name]
        costs = [t["cost_usd"] for t in mine if t["cost_usd"] is not None]
        out.append(
            ProviderProgress(
                provider=name,
                scheduled=len(mine) + sum(1 for t in skipped if t["provider"] == name),
                attempted=len(mine),
                not_attempted=sum(1 for t in skipped if t["provider"] == name and t["status"] == "not_attempted"),
                passed=sum(1 for t in mine if t["verified_pass"] is True),
                spend_usd=sum(costs) if costs else None,
                spend_unknown=len(mine) - len(costs),
                cap_usd=cap,
            )
        )
    return out


def total_spend(progress: Sequence[ProviderProgress]) -> tuple[float | None, int]:
    """(measured spend over every provider, attempts whose cost is unknown)."""
    known = [p.spend_usd for p in progress if p.spend_usd is not None]
    return (sum(known) if known else None), sum(p.spend_unknown for p in progress)


def trial_reason(row: Mapping[str, Any]) -> str | None:
    """Why a trial has no result: the not-attempted reason, or what interrupted the attempt."""
    if row["kind"] == "not_attempted":
        reason = row.get("reason")
        return f"{reason}: {NOT_ATTEMPTED_WORDS[reason]}" if reason in NOT_ATTEMPTED_WORDS else reason
    if row.get("attempt_status") == "interrupted" or row.get("outcome") == "interrupted":
        return f"interrupted ({row.get('failure_class') or 'no failure class recorded'})"
    if row.get("attempt_status") == "faulted":
        return f"{row.get('outcome')}: {row.get('failure_class') or 'no failure class recorded'}"
    if row.get("failure_class"):
        return str(row["failure_class"])
    return None


def missing_counters(variant: Mapping[str, Any]) -> list[tuple[str, int]]:
    """(counter in words, attempts that did not report it) for one variant."""
    missing = variant.get("missing") or {}
    return [(COUNTER_WORDS.get(name, name), count) for name, count in missing.items() if count]

