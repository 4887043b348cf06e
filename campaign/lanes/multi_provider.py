"""Resumable multi-provider campaigns: `campaign coding --campaign`.

The paired workflow's schedule, isolation, verifiers, redaction and uncertainty
method, run across several providers as one resumable command. An explicit
``--live`` replaces the plan/digest gate, and only the named provider's own
credential variable reaches its attempts.

Resume derives what is left from the store alone. It refuses when the options
would change the experiment, when the hash chain shows an edited, deleted or
reordered row, and when an earlier attempt's cleanup, disposal or finalization
is unproven. A runner killed mid-attempt leaves a running row: resume runs the
credential-free recovery on it, records what recovery proved, and, because
that attempt's finalization never completed, admits no more work.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TextIO


from campaign import testhooks
from campaign.errors import Interrupted, RerunWith, UsageProblem
from campaign.lanes import holders, options as opt, parallel, spend_watch, worker
from campaign.lanes.breaker import Breaker
from campaign.experiment import differences
from campaign.lanes.campaign_inputs import CampaignInputs, experiment, report_outputs, schedule_for, stored_experiment, stored_experiment_of, validate
from campaign.lanes.campaign_outputs import CampaignResult, build_result, close_run, open_progress, write_reports
from campaign.lanes.continuation import REOPEN_ON_RESUME, ResumeRefused, my_identity, raised_ceiling_providers, reopen_under_a_raised_ceiling, settle_resume, take_lease
from campaign.progress import TrialsNotAttempted
from campaign.spend import ATTEMPT_EXCEEDED_CEILING
from campaign.store import STORE_NAME, chain, leases, repository
from campaign.store.engine import describe
from campaign.store.limits import SpendLimits
from campaign.store.migrate import open_store
from campaign.supervise import critical, interruptible
from campaign.supervise.procfs import ProcFS
from sqlalchemy import Engine
from campaign.schedule import ScheduledTrial


def _nothing_to_continue() -> RerunWith:
    return RerunWith("there is no campaign here to continue; to start one, drop --continue-blocked", option="--continue-blocked", drop=("--continue-blocked",))


def _say_tasks(inputs: CampaignInputs, stream: TextIO | None) -> None:
    for line in inputs.selection.lines() if stream is not None and inputs.selection else ():
        print(line, file=stream, flush=True)


def _preview(opts: opt.CodingOptions, db: str | None, catalog_path: Path | None, environ: Mapping[str, str], inputs: CampaignInputs, scheduled: int) -> tuple[int, str | None]:
    """Without --live: how many trials --live would run with the store as it is, or why it
    would refuse (read-only: the preview writes nothing, not even a new store)."""
    try:
        engine = open_store(inputs.db, readonly=True)
    except UsageProblem:
        return scheduled, None  # no store yet: --live starts the campaign
    try:
        existing = repository.latest_campaign(engine, kind="campaign")
        if existing is None:
            return scheduled, None
        if not opts.resume:
            return 0, f"{describe(engine.url)} already holds campaign {existing.id}: --live would refuse; add --resume to continue it"
        stored = stored_experiment(existing)
        differing = differences(stored, experiment(validate(opts, db, catalog_path, environ, stored=stored, probe=False)))
        if differing:
            return 0, f"--live --resume would refuse: these options would change campaign {existing.id}'s experiment: {', '.join(differing)}"
        trials = repository.trials_in_order(engine, existing.id)
        raised = raised_ceiling_providers(engine, existing.id, opt.spend_limits(opts))
        left = sum(
            t.status == "scheduled"
            or (t.status == "not_attempted" and (t.not_attempted_reason in REOPEN_ON_RESUME or (t.not_attempted_reason == ATTEMPT_EXCEEDED_CEILING and t.provider in raised)))
            for t in trials
        )
        return left, f"--resume continues campaign {existing.id} in {describe(engine.url)}: {len(trials) - left} of its {len(trials)} trials are settled"
    finally:
        engine.dispose()


def run(
    opts: opt.CodingOptions,
    db: str | None,
    *,
    limits: SpendLimits | None,
    catalog_path: Path | None = None,
    environ: Mapping[str, str] | None = None,
    stream: TextIO | None = None,
    timer: Callable[[], float] = time.monotonic,
) -> CampaignResult:
    environ = os.environ if environ is None else environ
    runs = bool(opts.live or opts.rehearse)
    inputs = validate(opts, db, catalog_path, environ, stored=stored_experiment_of(opts, db) if opts.resume and runs else None, probe=runs)
    current = experiment(inputs)
    schedule = schedule_for(inputs)
    store_file = inputs.output_dir / STORE_NAME if db is None else None
    if not runs:
        _say_tasks(inputs, stream)
        left, note = _preview(opts, db, catalog_path, environ, inputs, len(schedule))
        return CampaignResult(None, inputs.db, (), len(schedule), 0, left, None, live=False, note=note)
    # Whatever --db says, a new campaign's reports would replace those already in --output-dir.
    holds = [p for p in (inputs.output_dir / STORE_NAME, report_outputs(inputs.output_dir, ())[0]) if p.exists()]
    if not opts.resume and holds:
        raise RerunWith(f"{inputs.output_dir} already holds a campaign; choose a new --output-dir, or continue it with --resume", option="--resume", add=("--resume",))
    if opts.continue_blocked and store_file is not None and not store_file.exists():
        raise _nothing_to_continue()

    with critical():  # a first run's migration is never cut short
        engine = open_store(inputs.db)
    try:
        return _run_on(engine, opts, inputs, current, schedule, limits=limits, stream=stream, timer=timer)
    finally:
        # Closed here, not whenever the collector gets to it: the last connection to close
        # checkpoints SQLite's WAL into the store file, and that must not happen later,
        # under whatever reads the store next (a preview that promises to write nothing).
        engine.dispose()


def _run_on(
    engine: Engine,
    opts: opt.CodingOptions,
    inputs: CampaignInputs,
    current: dict,
    schedule: Sequence[ScheduledTrial],
    *,
    limits: SpendLimits | None,
    stream: TextIO | None,
    timer: Callable[[], float],
) -> CampaignResult:
    proc = ProcFS()
    me = my_identity(proc)
    existing = repository.latest_campaign(engine, kind="campaign")
    if opts.resume and existing is not None:
        campaign_id = existing.id
        differing = differences(stored_experiment(existing), current)
        if differing:
            raise UsageProblem(f"these options would change the experiment: {', '.join(differing)}; resume with the original options or start a new --output-dir", option="--resume")
        problems = [p for cid in repository.lineage(engine, campaign_id) for p in chain.verify_chain(engine, cid)]
        if problems:
            raise ResumeRefused("the store fails its hash chain check (rows edited, deleted or reordered); resume refuses:\n" + "\n".join(p.line() for p in problems))
        take_lease(engine, campaign_id, me, proc)
    else:
        # --resume on an empty --output-dir starts the campaign, so one command both
        # starts and continues it.
        if opts.continue_blocked:
            raise _nothing_to_continue()
        if existing is not None:
            raise RerunWith(f"{describe(engine.url)} already holds campaign {existing.id}; continue it with --resume", option="--resume", add=("--resume",))
        campaign_id = repository.create_campaign(
            engine,
            repository.NewCampaign(kind="campaign", state="running", live=not inputs.rehearsal, agent=current["agent"], seed=inputs.seed, experiment=current),
            schedule,
            model=inputs.providers[0].model,
            provider_models={p.name: p.model for p in inputs.providers},
            default_provider=inputs.providers[0].name,
        )
        take_lease(engine, campaign_id, me, proc)
    _say_tasks(inputs, stream)  # once the options proved to be the experiment's
    testhooks.reached("leased")
    worker_me = leases.WorkerIdentity.of(me)
    try:
        if existing is not None and opts.resume:
            campaign_id = settle_resume(engine, campaign_id, inputs, me, proc, continue_blocked=opts.continue_blocked, stream=stream)
            leases.reopen_unavailable(engine, campaign_id)
            repository.reopen_trials(engine, campaign_id, REOPEN_ON_RESUME)
            reopen_under_a_raised_ceiling(engine, campaign_id, limits)
        if limits is not None:
            repository.record_spend_limits(engine, campaign_id, limits)
        leases.ensure_leases(engine, campaign_id, [p.name for p in inputs.providers])
        if opts.parallel_providers:
            return parallel.coordinate(engine, campaign_id, inputs, schedule, opts, stream=stream, caps=limits, timer=timer)
        _hold_every_lease(engine, campaign_id, worker_me, proc)
        try:
            return _drive(engine, campaign_id, inputs, schedule, stream, timer, limits, worker_me)
        finally:
            with critical():  # a stop landing here must not leave a lease behind
                leases.release(engine, campaign_id, worker_me)
    finally:
        with critical():
            repository.release_campaign(engine, campaign_id, me)


def _hold_every_lease(engine: Engine, campaign_id: int, me: leases.WorkerIdentity, proc: ProcFS) -> None:
    """The single runner drives every provider: it must hold every lease, so no worker
    elsewhere runs one of them at the same time. Leases of lost workers are settled first:
    a holder proven dead on this machine at once, any other once its heartbeat is stale."""
    for lost in leases.lost(engine, campaign_id, worker.STALE_SECONDS, dead=holders.dead_here(proc)):
        leases.halt_lost(engine, campaign_id, lost)
    others = leases.claim_all(engine, campaign_id, me)
    if others:
        leases.release(engine, campaign_id, me)
        raise holders.LeaseHeld(campaign_id, holders.held_by_others(engine, campaign_id, others, proc), stale_seconds=worker.STALE_SECONDS, db=describe(engine.url))


def _drive(engine: Engine, campaign_id: int, inputs: CampaignInputs, schedule: Sequence[ScheduledTrial], stream: TextIO | None, timer: Callable[[], float], caps: SpendLimits | None = None, me: leases.WorkerIdentity | None = None) -> CampaignResult:
    """Run every provider's scheduled trials here, in schedule order, holding every lease.

    A pass walks the schedule once; a trial whose attempt the provider ended goes back
    to the queue and runs again in a later pass, until it has a verdict, reaches its
    bound of fault attempts, or its provider is halted. The campaign stays as it was
    (a stopped one keeps its reason) until a trial is actually admitted."""
    stop_reason: str | None = None
    # A provider stopped by its spend cap admits nothing more; the others go on.
    provider_stops: dict[str, str] = {}
    breaker = Breaker()
    trials = repository.trials_in_order(engine, campaign_id)
    progress = open_progress(engine, campaign_id, inputs, trials, stream, caps)
    lineage = repository.lineage(engine, campaign_id)
    attempted = 0
    running = False
    engine_error: str | None = None
    try:
        with interruptible(), worker.Heartbeat(engine, campaign_id, me):
            while stop_reason is None:
                pending = [t for t in repository.trials_in_order(engine, campaign_id) if t.status == "scheduled" and t.provider not in breaker.halted]
                ran = 0
                for trial in pending:
                    if stop_reason is not None or trial.provider in breaker.halted:
                        continue
                    done = worker.Step(provider_stop=provider_stops[trial.provider]) if trial.provider in provider_stops else None
                    if done is None and not running:
                        # Work continues now: until here a stopped campaign kept its reason.
                        repository.set_campaign_state(engine, campaign_id, expected=("running", "interrupted", "stopped", "completed"), state="running")
                        running = True
                    done = done or worker.step(engine, trial, inputs, me=me, caps=caps, lineage=lineage, timer=timer, breaker=breaker)
                    if done.result is not None:
                        attempted += 1
                        ran += 1
                        engine_error = done.result.error or engine_error
                        if progress:
                            r = done.result
                            progress.update(worker.attempt_event(trial, r.outcome, r.failure_class, r.record.cost_usd, r.spend_complete, r.equivalent_spend_usd))
                            if line := spend_watch.ceiling_line(trial, r, caps) or spend_watch.gap_line(trial, r, caps):
                                progress.message(line)
                    if done.exhausted and progress:
                        progress.update(TrialsNotAttempted(trial.provider, 1, "fault_attempts_exhausted"))
                    stop_reason = done.campaign_stop or done.lost
                    if done.provider_stop:
                        if trial.provider not in provider_stops:
                            provider_stops[trial.provider] = done.provider_stop
                        if done.result is None and repository.mark_not_attempted(engine, trial.id, done.provider_stop) and progress:
                            progress.update(TrialsNotAttempted(trial.provider, 1, done.provider_stop))
                    if done.halted and progress:
                        progress.message(f"halted {done.halted.line()}")
                    testhooks.reached("between")
                if not ran:
                    break  # nothing was admitted in this pass: what is left waits for a resume
            testhooks.reached("last")
        with critical():
            close_run(engine, campaign_id, stop_reason, ran_now=running)
    except Interrupted:
        with critical():
            # Trials not reached stay scheduled (an interrupted attempt's trial too): --resume runs them.
            # A stop that lands once the campaign is closed leaves its state as it is.
            if repository.get_campaign(engine, campaign_id).state == "running":
                repository.set_campaign_state(engine, campaign_id, expected=("running",), state="interrupted", stop_reason="interrupted")
            write_reports(engine, campaign_id, inputs)
        raise
    finally:
        if progress:
            progress.close()
    result = build_result(engine, campaign_id, inputs, schedule, attempted, stop_reason, caps, halts=tuple(breaker.halted.values()))
    return dataclasses.replace(result, engine_error=engine_error)
