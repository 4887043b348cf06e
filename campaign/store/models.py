"""Typed models. Every counter is nullable: unknown is NULL, never 0.

Column names follow the specification's vocabulary (`pair_id`, `trial_id`,
`spend_complete`, `cleanup_complete`, ...) so a reader of `campaign sql` output
can find each rule in the spec.
"""

from __future__ import annotations

import datetime as dt

from sqlalchemy import Boolean, CheckConstraint, Float, ForeignKey, Index, Integer, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from campaign.store.base import Base, BigInt, intpk, str64, str128
from campaign.vocabulary import ATTEMPT_STATUSES, CAMPAIGN_KINDS, CAMPAIGN_STATES, LEDGER_ROLES, TRIAL_STATUSES


def _one_of(column: str, values: tuple[str, ...]) -> str:
    quoted = ", ".join(f"'{v}'" for v in values)
    return f"{column} IN ({quoted})"


class Campaign(Base):
    __tablename__ = "campaigns"
    __table_args__ = (
        CheckConstraint(_one_of("kind", CAMPAIGN_KINDS), name="kind"),
        CheckConstraint(_one_of("state", CAMPAIGN_STATES), name="state"),
    )

    id: Mapped[intpk]
    kind: Mapped[str64]
    state: Mapped[str64]
    live: Mapped[bool] = mapped_column(Boolean)
    stop_reason: Mapped[str64 | None]
    agent: Mapped[str128]
    seed: Mapped[int]
    experiment_json: Mapped[str] = mapped_column(Text)
    experiment_digest: Mapped[str64]
    plan_digest: Mapped[str64 | None]
    approved_plan_digest: Mapped[str64 | None]
    scheduled_count: Mapped[int]
    completion_json: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[dt.datetime]
    started_at: Mapped[dt.datetime | None]
    finished_at: Mapped[dt.datetime | None]
    deadline_at: Mapped[dt.datetime | None]
    # The runner holding this campaign, by birth-bound identity: a lease that a
    # resumer may take over only after proving that exact process is gone.
    runner_pid: Mapped[int | None]
    runner_start_ticks: Mapped[int | None] = mapped_column(BigInt)
    runner_boot_id: Mapped[str64 | None]
    # Set on a campaign that continues one whose finalization blocked it: the
    # earlier campaign's finished, verified trials are carried over, never edited.
    continues_campaign_id: Mapped[int | None] = mapped_column(ForeignKey("campaigns.id"))
    # The spend limits in force for the latest run, as exact decimal text:
    # {"max_spend_usd": "5", "per_attempt_ceiling_usd": "0.5", "scope": "campaign"|"provider"}.
    spend_limits_json: Mapped[str | None] = mapped_column(Text)


class Trial(Base):
    __tablename__ = "trials"
    __table_args__ = (
        UniqueConstraint("campaign_id", "trial_id"),
        UniqueConstraint("campaign_id", "position"),
        CheckConstraint(_one_of("status", TRIAL_STATUSES), name="status"),
        CheckConstraint("repetition >= 1", name="repetition_positive"),
        # Admission and resume look up a campaign's trials by status.
        Index("ix_trials_campaign_id_status", "campaign_id", "status"),
    )

    id: Mapped[intpk]
    campaign_id: Mapped[int] = mapped_column(ForeignKey("campaigns.id"), index=True)
    pair_id: Mapped[str128]
    trial_id: Mapped[str128]
    provider: Mapped[str64]
    model: Mapped[str128]
    task: Mapped[str128]
    variant: Mapped[str64]
    repetition: Mapped[int]
    pair_order: Mapped[int]
    position: Mapped[int]
    status: Mapped[str64]
    not_attempted_reason: Mapped[str64 | None]
    updated_at: Mapped[dt.datetime]
    # A continuation's trial that an earlier campaign already ran to a verified end:
    # its result is that trial's attempt, read through this link.
    carried_from_trial_pk: Mapped[int | None] = mapped_column(ForeignKey("trials.id"))


class Attempt(Base):
    __tablename__ = "attempts"
    __table_args__ = (
        # Several rows per trial: an attempt interrupted on request keeps its row,
        # and the trial gets a fresh attempt on resume.
        Index("ix_attempts_trial_pk", "trial_pk"),
        UniqueConstraint("campaign_id", "seq"),
        CheckConstraint(_one_of("status", ATTEMPT_STATUSES), name="status"),
    )

    id: Mapped[intpk]
    campaign_id: Mapped[int] = mapped_column(ForeignKey("campaigns.id"), index=True)
    trial_pk: Mapped[int] = mapped_column(ForeignKey("trials.id"))
    seq: Mapped[int]
    status: Mapped[str64]
    started_at: Mapped[dt.datetime]
    ended_at: Mapped[dt.datetime | None]

    outcome: Mapped[str64 | None]
    failure_class: Mapped[str64 | None]
    verified_pass: Mapped[bool | None]
    verifier_exit_code: Mapped[int | None]
    wall_seconds: Mapped[float | None] = mapped_column(Float)

    completed_turns: Mapped[int | None]
    uncached_input_tokens: Mapped[int | None] = mapped_column(BigInt)
    cached_input_tokens: Mapped[int | None] = mapped_column(BigInt)
    cache_write_tokens: Mapped[int | None] = mapped_column(BigInt)
    output_tokens: Mapped[int | None] = mapped_column(BigInt)
    tool_calls: Mapped[int | None]
    tool_errors: Mapped[int | None]
    diagnostic_events_version: Mapped[int | None]
    discovery_failures: Mapped[int | None]
    incorrect_tool_calls: Mapped[int | None]

    cost_usd: Mapped[float | None] = mapped_column(Float)
    cost_reported: Mapped[bool | None]
    equivalent_spend_usd: Mapped[float | None] = mapped_column(Float)
    spend_complete: Mapped[bool | None]
    flush_complete: Mapped[bool | None]

    cleanup_complete: Mapped[bool | None]
    disposal_complete: Mapped[bool | None]
    finalization_failed: Mapped[bool | None]
    teardown_outcome: Mapped[str64 | None]
    containment: Mapped[str64 | None]

    config_digest: Mapped[str64 | None]
    fixture_digest: Mapped[str64 | None]
    agent_model: Mapped[str128 | None]
    applied_profiles: Mapped[str | None] = mapped_column(Text)
    schema_diagnostics: Mapped[str | None] = mapped_column(Text)
    # Local-only path of the retained private root; never exported.
    private_root: Mapped[str | None] = mapped_column(Text)

    prev_hash: Mapped[str64 | None]
    row_hash: Mapped[str64 | None]


class LedgerEntry(Base):
    """A birth-bound ownership proof, committed before the process may exec."""

    __tablename__ = "ledger"
    __table_args__ = (CheckConstraint(_one_of("role", LEDGER_ROLES), name="role"),)

    id: Mapped[intpk]
    attempt_id: Mapped[int] = mapped_column(ForeignKey("attempts.id"), index=True)
    role: Mapped[str64]
    pid: Mapped[int] = mapped_column(Integer)
    start_ticks: Mapped[int] = mapped_column(BigInt)
    boot_id: Mapped[str64]
    pid_ns: Mapped[str64 | None]
    pgid: Mapped[int | None]
    discovered: Mapped[bool] = mapped_column(Boolean)
    created_at: Mapped[dt.datetime]
    state: Mapped[str64]
    verification: Mapped[str64 | None]
    verified_at: Mapped[dt.datetime | None]


class ProviderLease(Base):
    """Who runs a provider's trials right now: one worker per provider, in schedule order.

    ``heartbeat_epoch`` is the database's clock (seconds since the epoch) at the
    holder's last heartbeat, so workers on machines whose clocks disagree still
    agree on staleness. A lease found stale while its worker had an attempt
    running halts the provider (``halted_reason``): nothing more of it runs until
    recovery on ``worker_host`` proves that attempt's processes gone. A run's
    circuit breaker halts a provider too (``provider_unavailable``), with no attempt:
    its trials stay scheduled until a resume reopens it.
    """

    __tablename__ = "provider_leases"
    __table_args__ = (UniqueConstraint("campaign_id", "provider"),)

    id: Mapped[intpk]
    campaign_id: Mapped[int] = mapped_column(ForeignKey("campaigns.id"))
    provider: Mapped[str64]
    worker_host: Mapped[str128 | None]
    worker_pid: Mapped[int | None]
    worker_start_ticks: Mapped[int | None] = mapped_column(BigInt)
    worker_boot_id: Mapped[str64 | None]
    heartbeat_epoch: Mapped[float | None] = mapped_column(Float)
    halted_reason: Mapped[str64 | None]
    halted_attempt_id: Mapped[int | None]
    # For a breaker halt (provider_unavailable): what the engine saw, in its own words.
    halted_note: Mapped[str | None] = mapped_column(Text)


class SpendReservation(Base):
    """The per-attempt ceiling held for an admitted trial until its attempt is finalized.

    Admission inserts it in the same transaction that checks the caps, so racing
    workers can never admit more ceilings than the caps hold; finalization deletes
    it, the attempt's own recorded spend taking its place. A worker that dies
    leaves it in place: its spend is unknown, so the cap stays conservative."""

    __tablename__ = "spend_reservations"
    __table_args__ = (UniqueConstraint("trial_pk"),)

    id: Mapped[intpk]
    campaign_id: Mapped[int] = mapped_column(ForeignKey("campaigns.id"), index=True)
    trial_pk: Mapped[int] = mapped_column(ForeignKey("trials.id"))
    provider: Mapped[str64]
    nano_usd: Mapped[int] = mapped_column(BigInt)
    created_at: Mapped[dt.datetime]
