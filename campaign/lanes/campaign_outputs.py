"""What a campaign run leaves: how it closes, its result, its progress display and its reports.

Shared by the single runner (``multi_provider``) and the coordinator of local and
outside workers (``parallel``): one set of rules for when a campaign is
completed or stopped, whichever way it ran.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import TextIO
from dataclasses import dataclass
from pathlib import Path


from campaign.lanes import worker
from campaign.lanes.breaker import Halt
from campaign.lanes.campaign_inputs import CampaignInputs, report_outputs
from campaign.progress import UNDER_OTHER_CAP, Progress, ProviderPlan, SpentBefore, TrialsNotAttempted
from campaign import report  # its builder is imported when a report is written, not by every worker
from campaign.store import leases, repository
from campaign.store.engine import describe
from sqlalchemy import Engine
from campaign.schedule import ScheduledTrial
from campaign.store.models import Attempt, Trial
from campaign.store.limits import SpendLimits


@dataclass(frozen=True)
class CampaignResult:
    campaign_id: int | None
    store: str
    reports: tuple[Path, ...]
    scheduled: int
    attempted_now: int
    left: int
    stop_reason: str | None
    live: bool
    # With spend caps: each provider's exact spend and the basis it was counted on.
    spends: Mapping[str, repository.ProviderSpend] = dataclasses.field(default_factory=dict)
    caps: SpendLimits | None = None
    # Providers the circuit breaker halted: their trials wait for a resume.
    halts: tuple[Halt, ...] = ()
    # Trials recorded not_attempted, by reason.
    not_attempted: Mapping[str, int] = dataclasses.field(default_factory=dict)
    # What stopped an engine_error attempt, for the operator (never stored).
    engine_error: str | None = None
    # Without --live: what the store means for a --live run (a refusal, or what a resume continues).
    note: str | None = None

    @property
    def unfinished(self) -> bool:
        """Trials are left without a result (scheduled, or not attempted for a reason)."""
        return bool(self.left or self.not_attempted)


def close_run(engine: Engine, campaign_id: int, stop_reason: str | None, *, ran_now: bool) -> None:
    """End a run of the campaign. A campaign-wide stop closes what is left (not_attempted
    with its reason). Otherwise the trials decide: completed when every one has a result;
    else stopped, for provider_unavailable while halted providers' trials wait for a
    resume, or for the reason recorded on the trials left. A run that admitted nothing
    leaves a stopped campaign as it was, reason and all."""
    if stop_reason is not None:
        repository.close_campaign(engine, campaign_id, stop_reason, state="stopped")
        return
    trials = repository.trials_in_order(engine, campaign_id)
    if all(t.status == "finished" for t in trials):
        repository.close_campaign(engine, campaign_id, None, state="completed")
        return
    if not ran_now and repository.get_campaign(engine, campaign_id).state == "stopped":
        return
    waiting = any(t.status == "scheduled" for t in trials)
    reason = "provider_unavailable" if waiting else next(t.not_attempted_reason for t in trials if t.status == "not_attempted")
    repository.close_campaign(engine, campaign_id, reason, state="stopped", mark_remaining=False)


def build_result(
    engine: Engine, campaign_id: int, inputs: CampaignInputs, schedule: Sequence[ScheduledTrial], attempted: int, stop_reason: str | None, caps: SpendLimits | None, *, halts: tuple[Halt, ...] = ()
) -> CampaignResult:
    reports = write_reports(engine, campaign_id, inputs)
    trials = repository.trials_in_order(engine, campaign_id)
    left = sum(t.status == "scheduled" for t in trials)
    not_attempted: dict[str, int] = {}
    for t in trials:
        if t.status == "not_attempted":
            reason = t.not_attempted_reason or "unknown"
            not_attempted[reason] = not_attempted.get(reason, 0) + 1
    row = repository.get_campaign(engine, campaign_id)
    spends = {p.name: repository.provider_spend(engine, campaign_id, p.name) for p in inputs.providers} if caps else {}
    if not halts:
        halts = tuple(Halt(lease.provider, lease.halted_note or "halted") for lease in leases.halted(engine, campaign_id, leases.UNAVAILABLE))
    return CampaignResult(
        campaign_id, describe(engine.url), reports, len(schedule), attempted, left, stop_reason or row.stop_reason, live=True, spends=spends, caps=caps,
        halts=halts, not_attempted=not_attempted,
    )


def open_progress(engine: Engine, campaign_id: int, inputs: CampaignInputs, trials: Sequence[Trial], stream: TextIO | None, caps: SpendLimits | None = None) -> Progress | None:
    if stream is None:
        return None
    totals = {p.name: 0 for p in inputs.providers}
    for t in trials:
        totals[t.provider] += 1
    total_cap = float(caps.max_spend_usd) if caps and caps.max_spend_usd is not None else None
    each = float(caps.provider_max_spend_usd) if caps and caps.provider_max_spend_usd is not None else (UNDER_OTHER_CAP if total_cap is not None else None)
    # With caps but none over the whole campaign, the header's sum has no cap of its own.
    header_cap = UNDER_OTHER_CAP if caps is not None and total_cap is None else total_cap
    progress = Progress([ProviderPlan(name, total, each) for name, total in totals.items()], inputs.variants, stream=stream, cap_usd=header_cap)
    by_pk = {t.id: t for t in trials}

    def seconds(a: Attempt) -> float | None:
        return (a.ended_at - a.started_at).total_seconds() if a.ended_at else None

    # Results, faulted attempts and the interrupted attempts of earlier runs: they have no
    # verdict, but what they spent counts against the caps, so it is in the spend shown.
    done = [
        worker.attempt_event(by_pk[a.trial_pk], a.outcome or a.status, a.failure_class, a.cost_usd, a.spend_complete, a.equivalent_spend_usd, seconds(a))
        for a in repository.attempts_for(engine, campaign_id)
        if a.status in ("finished", "faulted", "interrupted")
    ]
    carried = repository.carried_results(engine, campaign_id)
    done += [worker.attempt_event(t, a.outcome, a.failure_class, a.cost_usd, a.spend_complete, a.equivalent_spend_usd, seconds(a)) for t, a in carried]
    skipped = [TrialsNotAttempted(t.provider, 1, t.not_attempted_reason) for t in trials if t.status == "not_attempted"]
    progress.preload([*done, *skipped, *_spent_before(engine, campaign_id, {a.id for _, a in carried})])
    progress.start()
    return progress


def _spent_before(engine: Engine, campaign_id: int, carried: set[int]) -> list[SpentBefore]:
    """What the campaigns this one continues spent on attempts it did not carry over (an
    interrupted one, or the one a kill left unfinished): the caps count it, so the spend
    shown does too, unknown where it is unknown."""
    spent = []
    for earlier in repository.lineage(engine, campaign_id)[1:]:
        provider = {t.id: t.provider for t in repository.trials_in_order(engine, earlier)}
        for a in repository.attempts_for(engine, earlier):
            if a.id not in carried:
                usd = repository.counted_spend(a.cost_usd, a.spend_complete, a.equivalent_spend_usd)
                spent.append(SpentBefore(provider[a.trial_pk], None if usd is None else float(usd), usd is not None and a.spend_complete is not True))
    return spent


def write_reports(engine: Engine, campaign_id: int, inputs: CampaignInputs) -> tuple[Path, ...]:
    """The overall report and one per provider, regenerated from the store."""
    if not repository.attempts_for(engine, campaign_id):
        return ()
    inputs.output_dir.mkdir(parents=True, exist_ok=True)
    overall, *each = report_outputs(inputs.output_dir, [p.name for p in inputs.providers])
    written = [report.write_report(engine, campaign_id, overall).json]
    for provider, output in zip(inputs.providers, each):
        written.append(report.write_report(engine, campaign_id, output, provider=provider.name).json)
    return tuple(written)
