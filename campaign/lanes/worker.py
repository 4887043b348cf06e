"""One provider's trials at a time: the step both the single runner and the workers take.

A worker (``campaign worker``, or one of the local workers ``--parallel-providers``
starts) claims a provider's lease, heartbeats it with the database's clock from
a background thread, and runs that provider's scheduled trials in schedule
order, each admitted through ``leases.admit`` (lease re-checked, ceiling
reserved against the caps, in one transaction). The single runner takes every
provider's lease and steps through the whole schedule the same way, so the
rules are one set whichever way a campaign runs.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine

from campaign.errors import CampaignError, Interrupted
from campaign.lanes import holders
from campaign.lanes.attempt import AttemptOutcome, AttemptPlan, run_attempt
from campaign.lanes.attempt_plan import AttemptSource
from campaign.lanes.breaker import MAX_FAULT_ATTEMPTS, Breaker, Halt
from campaign.progress import AttemptFinished
from campaign.spend import spend_stop
from campaign.store import leases, repository
from campaign.store.limits import SpendLimits
from campaign.store.models import Trial
from campaign.supervise import critical, interruptible
from campaign.vocabulary import VERDICTS
from campaign.lanes.campaign_inputs import CampaignInputs

HEARTBEAT_SECONDS = 2.0
# A worker with nothing to claim while another holds a lease looks again after this long:
# that holder may give its provider back with trials left (interrupted, or lost).
WAIT_SECONDS = 0.5
# A lease not heartbeaten for this long (database clock) belongs to a lost worker.
STALE_SECONDS = 20.0


def source_for(inputs: CampaignInputs, provider_name: str) -> AttemptSource:
    """What every attempt of one provider of a campaign (``CampaignInputs``) shares."""
    provider = next(p for p in inputs.providers if p.name == provider_name)
    return AttemptSource(
        profile=inputs.profiles[provider.name],
        model=provider.model,
        seed=inputs.seed,
        timeout_s=float(inputs.timeout),
        configs={name: config.text for name, config in inputs.configs.items()},
        credential_names=(provider.credential_env,) if provider.credential_env else (),
        failure_dir=inputs.failure_dir,
        provider=provider,
        wire=inputs.wires.get(provider.name),
        expected_catalogs=inputs.wire_catalogs.get(provider.name),
        catalog_format=inputs.wire_catalog_formats.get(provider.name, 1),
        extra_env=(("CAMPAIGN_CONTROL_PLANE_PORT", str(inputs.control_plane_port)),) if inputs.control_plane_port else (),
        images=inputs.images,
    )


def plan_for(inputs: CampaignInputs, trial: Trial) -> AttemptPlan:
    """The attempt plan of one trial of a campaign."""
    return source_for(inputs, trial.provider).plan(inputs.task(trial.task), trial.variant)


@dataclass(frozen=True)
class Step:
    """What one scheduled trial came to."""

    result: AttemptOutcome | None = None
    provider_stop: str | None = None  # this provider admits nothing more (its own cap)
    campaign_stop: str | None = None  # nothing more anywhere (unproven cleanup, ...)
    lost: str | None = None  # this worker may not go on: "lease_lost" or "stopped"
    # The breaker halted this provider: nothing more of it in this run, its trials stay scheduled.
    halted: Halt | None = None
    # The trial reached its bound of provider-fault attempts and is now not_attempted.
    exhausted: bool = False


def step(
    engine: Engine,
    trial: Trial,
    inputs: CampaignInputs,
    *,
    me: leases.WorkerIdentity,
    caps: SpendLimits | None,
    lineage: Sequence[int],
    timer: Callable[[], float],
    breaker: Breaker,
) -> Step:
    """Admit and run one scheduled trial under the caps, the lease and the breaker."""
    if caps is not None and repository.provider_spend(engine, trial.campaign_id, trial.provider).unknown:
        return Step(provider_stop="spend_incomplete")  # an earlier attempt's spend cannot be bounded
    if repository.fault_attempts(engine, lineage, trial.trial_id) >= MAX_FAULT_ATTEMPTS:
        return Step(exhausted=repository.mark_not_attempted(engine, trial.id, "fault_attempts_exhausted"))
    provider = next((p for p in inputs.providers if p.name == trial.provider), None)
    halt = breaker.check(trial.provider, provider.upstream if provider else None)
    if halt is not None:
        leases.halt_unavailable(engine, trial.campaign_id, trial.provider, halt.why)
        return Step(halted=halt)
    why = leases.admit(engine, trial, me=me, caps=caps, lineage=lineage)
    if why == "taken":
        return Step()
    if why in ("spend_limit", "spend_incomplete"):
        return Step(provider_stop=why)
    if why is not None:
        return Step(lost=why)
    result = run_attempt(engine, trial, plan_for(inputs, trial), timer=timer, spend_ceiling_usd=caps.per_attempt_ceiling_usd if caps else None)
    halt = breaker.record(trial.provider, result.outcome, result.provider_faults)
    if halt is not None:
        leases.halt_unavailable(engine, trial.campaign_id, trial.provider, halt.why)
    provider_stop = None
    if caps is not None and result.stop_reason is None:
        # ``--resume`` after a spend_incomplete stop is the operator's to decide.
        provider_stop = spend_stop(result.failure_class, result.record.cost_usd, result.spend_complete, result.equivalent_spend_usd, caps)
    return Step(result=result, provider_stop=provider_stop, campaign_stop=result.stop_reason, halted=halt)


def attempt_event(trial: Trial, outcome: str, failure_class: str | None, cost_usd: float | None, spend_complete: bool | None, equivalent_usd: float | None, seconds: float | None = None) -> AttemptFinished:
    """A finished attempt for the progress display: its verdict, or the outcome that left
    it without one, and its spend as the caps count it (unknown stays unknown)."""
    spent = repository.counted_spend(cost_usd, spend_complete, equivalent_usd)
    verdict = outcome in VERDICTS
    word = None if verdict else (outcome if failure_class in (None, outcome) else f"{outcome} ({failure_class})")
    return AttemptFinished(
        trial.provider, trial.variant, outcome == "passed" if verdict else None, None if spent is None else float(spent), seconds, trial.trial_id,
        outcome=word, spend_partial=spent is not None and spend_complete is not True,
    )


class Heartbeat:
    """Stamps the database clock on this worker's leases every few seconds, from a thread,
    while attempts (minutes long) run in the main thread. ``lost`` turns true when a
    heartbeat finds a lease halted or taken: the worker then admits nothing more."""

    def __init__(self, engine: Engine, campaign_id: int, me: leases.WorkerIdentity, *, every: float = HEARTBEAT_SECONDS) -> None:
        self.engine, self.campaign_id, self.me, self.every = engine, campaign_id, me, every
        self.lost = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="lease-heartbeat", daemon=True)

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            try:
                if not leases.heartbeat(self.engine, self.campaign_id, self.me):
                    self.lost = True
            except Exception:  # a busy store: the next beat retries; staleness is judged by others
                continue


def mark_provider_not_attempted(engine: Engine, campaign_id: int, provider: str, reason: str) -> int:
    n = 0
    for trial in repository.trials_in_order(engine, campaign_id):
        if trial.provider == provider and trial.status == "scheduled":
            n += repository.mark_not_attempted(engine, trial.id, reason)
    return n


def request_stop(engine: Engine, campaign_id: int, reason: str) -> None:
    """Stop the campaign everywhere: every worker checks the state before each admission."""
    try:
        repository.set_campaign_state(engine, campaign_id, expected=("running",), state="stopped", stop_reason=reason)
    except Interrupted:
        raise  # the operator's own stop is not swallowed with the others'
    except Exception:
        pass  # already stopped or interrupted by someone else: their reason stands


@dataclass
class WorkerTally:
    attempted: int = 0
    providers: tuple[str, ...] = ()
    # Providers this worker's breaker halted, with what it saw.
    halts: tuple[Halt, ...] = ()


class WorkerStopped(CampaignError):
    """A worker ended while the campaign still has trials it could not run: never an exit 0."""


def _closed(campaign_id: int, look: leases.Outlook) -> WorkerStopped:
    why = f" ({look.stop_reason})" if look.stop_reason else ""
    return WorkerStopped(
        f"campaign {campaign_id} is {look.state}{why} with {look.left} scheduled trial(s) left, so this worker runs nothing more; "
        "`campaign report` shows where it stands, and the runner's command with --resume continues it"
    )


def run_worker(
    engine: Engine,
    campaign_id: int,
    inputs: CampaignInputs,
    me: leases.WorkerIdentity,
    *,
    providers: Sequence[str] | None = None,
    caps: SpendLimits | None = None,
    stale_seconds: float = STALE_SECONDS,
    on_attempt: Callable[[Trial, AttemptOutcome], None] = lambda trial, result: None,
    timer: Callable[[], float] = time.monotonic,
    wait: Callable[[float], object] = time.sleep,
) -> WorkerTally:
    """Claim providers one after another and run their trials until nothing is left that a
    worker could take and nothing is in flight elsewhere (another holder may give its
    provider back with trials left). Raises ``WorkerStopped`` when the campaign stopped
    with trials left, or this worker lost its lease."""
    tally = WorkerTally()
    shift = _Shift(engine, campaign_id, inputs, me, caps, repository.lineage(engine, campaign_id), on_attempt, timer, Breaker())
    with interruptible():
        while True:
            for lost in leases.lost(engine, campaign_id, stale_seconds, dead=holders.dead_here()):
                leases.halt_lost(engine, campaign_id, lost)
            look = leases.outlook(engine, campaign_id, providers)
            if look.state != "running" and look.left:
                raise _closed(campaign_id, look)
            if look.state != "running" or look.settled:
                return tally
            provider = leases.claim_provider(engine, campaign_id, me, providers) if look.claimable else None
            if provider is None:
                wait(WAIT_SECONDS)
                continue
            tally.providers += (provider,)
            try:
                lost = _run_provider(shift, provider, tally)
            except Interrupted:
                with critical():
                    leases.release(engine, campaign_id, me, provider)
                raise
            leases.release(engine, campaign_id, me, provider)
            if lost == "lease_lost":
                raise WorkerStopped(f"this worker lost its lease on provider {provider} (halted or taken after its heartbeat went stale), so it admits nothing more")


@dataclass(frozen=True)
class _Shift:
    """What a worker brings to every provider it claims."""

    engine: Engine
    campaign_id: int
    inputs: Any
    me: leases.WorkerIdentity
    caps: SpendLimits | None
    lineage: Sequence[int]
    on_attempt: Callable[[Trial, AttemptOutcome], None]
    timer: Callable[[], float]
    breaker: Breaker


def _run_provider(shift: _Shift, provider: str, tally: WorkerTally) -> str | None:
    """The claimed provider's scheduled trials in schedule order, its lease heartbeaten
    meanwhile, in passes: a trial the provider ended goes back to the queue for a later
    pass, until it has a verdict, its bound of fault attempts, or the breaker halts the
    provider (for every worker: its lease is halted). Returns why this worker may not
    go on ("lease_lost", "stopped"), else None."""
    engine, campaign_id = shift.engine, shift.campaign_id
    with Heartbeat(engine, campaign_id, shift.me) as beat:
        ran = True
        while ran:
            ran = False
            for trial in repository.trials_in_order(engine, campaign_id):
                if trial.provider != provider or trial.status != "scheduled":
                    continue
                if beat.lost:
                    return "lease_lost"
                done = step(engine, trial, shift.inputs, me=shift.me, caps=shift.caps, lineage=shift.lineage, timer=shift.timer, breaker=shift.breaker)
                if done.result is not None:
                    tally.attempted += 1
                    ran = True
                    shift.on_attempt(trial, done.result)
                if done.lost:
                    return done.lost
                if done.campaign_stop:
                    request_stop(engine, campaign_id, done.campaign_stop)
                    return "stopped"
                if done.halted:
                    tally.halts += (done.halted,)
                    return None
                if done.provider_stop:
                    mark_provider_not_attempted(engine, campaign_id, provider, done.provider_stop)
                    return None
    return None
