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
import json
import os
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from sqlalchemy import Engine
from sqlalchemy.engine import URL

from campaign import benchmark, testhooks
from campaign.agents.client_version import read_client_version
from campaign.lanes.probe import probe_catalogs
from campaign.lanes.wire import WireRoute, resolve_route
from campaign.agents.profiles import AgentProfile, load_profile, profile_identity
from campaign.config import BaseConfig, VariantConfig, load_base_config, parse_base_config, render_variant
from campaign.errors import CampaignError, ConflictError, Interrupted, RerunWith, UsageProblem
from campaign.lanes import continuation, holders, parallel, worker
from campaign.lanes import options as opt
from campaign.plan import canonical_digest
from campaign.progress import AttemptFinished, Progress, ProviderPlan, TrialsNotAttempted
from campaign.providers import Catalog, Provider, load_catalog, resolve_providers
from campaign.report import write_report
from campaign.schedule import VARIANTS, build_schedule
from campaign.store import chain, leases, repository
from campaign.store.engine import describe
from campaign.store.migrate import open_store
from campaign.supervise import critical, interruptible
from campaign.supervise.procfs import ProcFS

STORE_NAME = "campaign.db"


@dataclass(frozen=True)
class CampaignInputs:
    output_dir: Path
    db: str
    catalog: Catalog
    providers: tuple[Provider, ...]
    profiles: Mapping[str, AgentProfile]
    tasks: tuple[benchmark.Task, ...]
    variants: tuple[str, ...]
    repetitions: int
    seed: int
    timeout: int
    base_config: BaseConfig
    configs: Mapping[str, VariantConfig]
    control_plane_port: int | None
    failure_dir: Path | None
    # Per provider: the recording proxy's route when its agent talks through {proxy_url}.
    wires: Mapping[str, WireRoute | None] = dataclasses.field(default_factory=dict)
    # Per provider: the installed client's version, and for "wire" profiles the probe's catalogs.
    client_versions: Mapping[str, str | None] = dataclasses.field(default_factory=dict)
    wire_catalogs: Mapping[str, dict[str, list[str]] | None] = dataclasses.field(default_factory=dict)


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
    caps: leases.Caps | None = None


class ResumeRefused(CampaignError):
    """Resume would admit work it must not (tampering, unproven cleanup, a changed experiment)."""


# --- validation (reads only) ---------------------------------------------------


def parse_variants(value: str | None) -> tuple[str, ...]:
    names = tuple(v.strip() for v in (value or ",".join(VARIANTS)).split(","))
    if sorted(names) != sorted(VARIANTS):
        raise UsageProblem(f"only baseline,coding is supported, got {value!r}", option="--variants")
    return names


def with_model(providers: tuple[Provider, ...], model: str | None) -> tuple[Provider, ...]:
    """``--model`` replaces the catalog's default model of the one provider selected (for
    example to rehearse a live model's exact catalog against the replay provider)."""
    if model is None:
        return providers
    route = opt.parse_model(model)
    if len(providers) != 1:
        raise UsageProblem("--model applies to a campaign of one provider; with several, each takes its model from the providers catalog", option="--model")
    (provider,) = providers
    if route.provider != provider.route:
        raise UsageProblem(f"the route must be {provider.route}:MODEL for provider {provider.name}, got {model}", option="--model")
    return (dataclasses.replace(provider, default_model=route.model),)


def validate(opts: opt.CodingOptions, db: str | None, catalog_path: Path | None, environ: Mapping[str, str]) -> CampaignInputs:
    catalog = load_catalog(catalog_path)
    providers = with_model(resolve_providers(opts.providers, catalog), opts.model)
    variants = parse_variants(opts.variants)
    tasks = benchmark.resolve_tasks(opts.tasks)
    output_dir = Path(opts.output_dir).expanduser().absolute()  # type: ignore[arg-type]
    if output_dir.exists() and not output_dir.is_dir():
        raise UsageProblem(f"{opts.output_dir} is not a directory", option="--output-dir")
    profiles = {p.name: load_profile(opts.agent or p.agent) for p in providers}
    for provider in providers:
        profile = profiles[provider.name]
        if profile.applied_profile_from == "none":
            raise UsageProblem(
                f"the {profile.name} agent cannot report which disclosure profile it applied, so no paired trial through it could pass; "
                "use an agent profile with applied_profile_from = \"adapter\" or \"wire\"",
                option="--agent",
            )
    wires = {p.name: resolve_route(profiles[p.name], p, profile_python=sys.executable, environ=environ) for p in providers}
    versions = {p.name: read_client_version(profiles[p.name], environ) for p in providers}
    catalogs = {
        p.name: probe_catalogs(profiles[p.name], model=p.model, task=tasks[0], route=wires[p.name], runner_python=sys.executable)
        if profiles[p.name].applied_profile_from == "wire" and wires[p.name] is not None
        else None
        for p in providers
    }
    base = load_base_config(Path(opts.config).expanduser()) if opts.config else parse_base_config(b"", "the empty base config")
    configs = {name: render_variant(base, name) for name in variants}
    if opts.live:
        missing = [p.credential_env for p in providers if p.credential_env and not environ.get(p.credential_env)]
        if missing:
            raise UsageProblem(f"credential variable(s) not set: {', '.join(missing)}; export each provider's own variable before launching", option="--providers")
    return CampaignInputs(
        output_dir=output_dir,
        db=db or str(output_dir / STORE_NAME),
        catalog=catalog,
        providers=providers,
        profiles=profiles,
        tasks=tasks,
        variants=variants,
        repetitions=opt.or_default(opts.repetitions, opt.DEFAULT_REPETITIONS),
        seed=opt.or_default(opts.seed, opt.DEFAULT_SEED),
        timeout=opt.or_default(opts.timeout, opt.DEFAULT_TIMEOUT),
        base_config=base,
        configs=configs,
        control_plane_port=opts.control_plane_port,
        failure_dir=Path(opts.failure_dir).expanduser().resolve() if opts.failure_dir else None,
        wires=wires,
        client_versions=versions,
        wire_catalogs=catalogs,
    )


def experiment(inputs: CampaignInputs) -> dict[str, Any]:
    """Everything a resume must reproduce; compared field by field."""
    agents = sorted({p.name for p in inputs.profiles.values()})
    return {
        "kind": "campaign",
        "agent": agents[0] if len(agents) == 1 else "custom",
        "model": inputs.providers[0].model if len(inputs.providers) == 1 else None,
        "providers": [
            {
                "name": p.name,
                "model": p.model,
                "agent": inputs.profiles[p.name].name,
                "agent_profile_digest": canonical_digest(profile_identity(inputs.profiles[p.name])),
                "credential_env": p.credential_env,
                "basis": p.basis,
                # Only for wire profiles, so campaigns without one keep their identity.
                **({"wire_upstream": inputs.wires[p.name].upstream} if inputs.wires.get(p.name) else {}),
                **({"client_version": inputs.client_versions[p.name]} if inputs.client_versions.get(p.name) else {}),
                **({"wire_catalogs": inputs.wire_catalogs[p.name]} if inputs.wire_catalogs.get(p.name) else {}),
            }
            for p in inputs.providers
        ],
        "pricing_catalog_digest": inputs.catalog.digest,
        "tasks": [t.name for t in inputs.tasks],
        "variants": [{"name": n, "overlay_digest": inputs.configs[n].overlay_digest, "config_digest": inputs.configs[n].digest} for n in inputs.variants],
        "repetitions": inputs.repetitions,
        "seed": inputs.seed,
        "timeout": inputs.timeout,
        "config_digest": inputs.base_config.digest,
        "fixture_digests": {t.name: benchmark.fixture_digest(t) for t in inputs.tasks},
        "control_plane_port": inputs.control_plane_port,
    }


def schedule_for(inputs: CampaignInputs):
    return build_schedule([t.name for t in inputs.tasks], inputs.repetitions, inputs.seed, inputs.variants, [p.name for p in inputs.providers])


# --- resume checks ----------------------------------------------------------------


def mismatched_fields(stored: Mapping[str, Any], current: Mapping[str, Any]) -> list[str]:
    return sorted(k for k in set(stored) | set(current) if stored.get(k) != current.get(k))


def blocking_attempts(engine: Engine, campaign_id: int) -> tuple[str | None, list[str]]:
    """(stop reason, one line per attempt) for finished attempts whose cleanup, disposal or
    finalization is unproven: while any exists, resume admits nothing."""
    found = continuation.blockers(engine, campaign_id)
    return continuation.first_reason(found), [b.line() for b in found]


def recover_orphans(engine: Engine, campaign_id: int, url: URL) -> list[int]:
    """Run the credential-free recovery on attempts a killed runner left running, then
    record them interrupted with their finalization incomplete. Returns their ids."""
    orphans = [a for a in repository.attempts_for(engine, campaign_id) if a.status == "running"]
    for attempt in orphans:
        # A stop waits for recovery (bounded): killing it halfway would prove nothing.
        with critical():
            continuation.run_recovery(url, attempt.id)
            fresh = repository.get_attempt(engine, attempt.id)
            repository.finish_attempt(
                engine,
                attempt.id,
                attempt.trial_pk,
                status="interrupted",
                outcome="interrupted",
                failure_class="interrupted",
                cleanup_complete=fresh.cleanup_complete is True,
                teardown_outcome=fresh.teardown_outcome or "unverified",
                disposal_complete=False,
                finalization_failed=True,
            )
    return [a.id for a in orphans]


# --- the runner lease ---------------------------------------------------------------


def my_identity(proc: ProcFS | None = None) -> repository.RunnerIdentity:
    proc = proc or ProcFS()
    return repository.RunnerIdentity(os.getpid(), proc.start_ticks(os.getpid()), proc.boot_id())


class RunnerBusy(ConflictError):
    """Another live runner holds the campaign; ``describe`` says what to run once it ends."""

    def describe(self, rerun: str = "the same command") -> str:
        return f"{self.args[0]}\nNext: wait for it to end, then run:\n  {rerun}"


def take_lease(engine: Engine, campaign_id: int, me: repository.RunnerIdentity, proc: ProcFS) -> None:
    holder = repository.campaign_runner(engine, campaign_id)
    if holder is not None and holders.runner_alive(holder, proc):
        raise RunnerBusy(f"campaign {campaign_id} is being run by pid {holder.pid}; only one runner at a time, so this one exits without running anything")
    if not repository.acquire_campaign(engine, campaign_id, me, stale=holder):
        raise RunnerBusy(f"another runner took campaign {campaign_id} first; this one exits without running anything")


# --- the lane ---------------------------------------------------------------------------


def _nothing_to_continue() -> RerunWith:
    return RerunWith("there is no campaign here to continue; to start one, drop --continue-blocked", option="--continue-blocked", drop=("--continue-blocked",))


def run(
    opts: opt.CodingOptions,
    db: str | None,
    *,
    catalog_path: Path | None = None,
    environ: Mapping[str, str] | None = None,
    stream: TextIO | None = None,
    timer: Callable[[], float] = time.monotonic,
) -> CampaignResult:
    environ = os.environ if environ is None else environ
    inputs = validate(opts, db, catalog_path, environ)
    current = experiment(inputs)
    schedule = schedule_for(inputs)
    store_file = inputs.output_dir / STORE_NAME if db is None else None
    if not opts.live:
        return CampaignResult(None, inputs.db, (), len(schedule), 0, len(schedule), None, live=False)
    if not opts.resume and store_file is not None and store_file.exists():
        raise RerunWith(f"{inputs.output_dir} already holds a campaign; choose a new --output-dir, or continue it with --resume", option="--resume", add=("--resume",))
    if opts.continue_blocked and store_file is not None and not store_file.exists():
        raise _nothing_to_continue()

    with critical():  # a first run's migration is never cut short
        engine = open_store(inputs.db)
    proc = ProcFS()
    me = my_identity(proc)
    existing = repository.latest_campaign(engine, kind="campaign")
    if opts.resume and existing is not None:
        campaign_id = existing.id
        differing = mismatched_fields(_stored_experiment(existing), current)
        if differing:
            raise UsageProblem(f"these options would change the experiment: {', '.join(differing)}; resume with the original options or start a new --output-dir", option="--resume")
        problems = [p for cid in repository.lineage(engine, campaign_id) for p in chain.verify_chain(engine, cid)]
        if problems:
            raise ResumeRefused("the attempt rows fail their hash chain (edited, deleted or reordered); resume refuses:\n" + "\n".join(p.line() for p in problems))
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
            repository.NewCampaign(kind="campaign", state="running", live=True, agent=current["agent"], seed=inputs.seed, experiment=current, experiment_digest=canonical_digest(current)),
            schedule,
            model=inputs.providers[0].model,
            default_provider=inputs.providers[0].name,
        )
        take_lease(engine, campaign_id, me, proc)
    testhooks.reached("leased")
    caps = opt.campaign_caps(opts)
    worker_me = leases.WorkerIdentity.of(me)
    try:
        if existing is not None and opts.resume:
            campaign_id = _settle_resume(engine, campaign_id, inputs, me, proc, continue_blocked=opts.continue_blocked, stream=stream)
        if caps is not None:
            repository.record_spend_limits(engine, campaign_id, caps)
        leases.ensure_leases(engine, campaign_id, [p.name for p in inputs.providers])
        if opts.parallel_providers:
            return parallel.coordinate(engine, campaign_id, inputs, schedule, opts, stream=stream, caps=caps, timer=timer)
        _hold_every_lease(engine, campaign_id, worker_me, proc)
        try:
            return _drive(engine, campaign_id, inputs, schedule, stream, timer, caps, worker_me)
        finally:
            with critical():  # a stop landing here must not leave a lease behind
                leases.release(engine, campaign_id, worker_me)
    finally:
        with critical():
            repository.release_campaign(engine, campaign_id, me)


def _hold_every_lease(engine, campaign_id: int, me: leases.WorkerIdentity, proc: ProcFS) -> None:
    """The single runner drives every provider: it must hold every lease, so no worker
    elsewhere runs one of them at the same time. Leases of lost workers are settled first:
    a holder proven dead on this machine at once, any other once its heartbeat is stale."""
    for lost in leases.lost(engine, campaign_id, worker.STALE_SECONDS, dead=holders.dead_here(proc)):
        leases.halt_lost(engine, campaign_id, lost)
    others = leases.claim_all(engine, campaign_id, me)
    if others:
        leases.release(engine, campaign_id, me)
        raise holders.LeaseHeld(campaign_id, holders.held_by_others(engine, campaign_id, others, proc), stale_seconds=worker.STALE_SECONDS, db=describe(engine.url))


def _settle_resume(engine, campaign_id: int, inputs: CampaignInputs, me, proc: ProcFS, *, continue_blocked: bool, stream: TextIO | None = None) -> int:
    """Make a resumed campaign safe to drive: requeue admissions no process ran for,
    recover what a killed runner left running, and refuse (or, with --continue-blocked
    and every blocker proven gone, continue in a new campaign) when work is unproven.
    A campaign that is not blocked is resumed, --continue-blocked or not: continuing the
    experiment is what was asked. Returns the campaign to drive, with this runner
    holding its lease."""
    repository.reset_admitted_without_attempt(engine, campaign_id)
    recover_orphans(engine, campaign_id, engine.url)
    found = continuation.blockers(engine, campaign_id)
    reason = continuation.first_reason(found)
    if reason is None:
        return campaign_id
    row = repository.get_campaign(engine, campaign_id)
    if row.state != "stopped" or row.stop_reason != reason:
        repository.close_campaign(engine, campaign_id, reason, state="stopped")
    reports = write_reports(engine, campaign_id, inputs)
    carried = repository.carryable_trials(engine, campaign_id)
    if continue_blocked:
        found = continuation.prove_gone(engine, found)
        if all(b.proven_gone for b in found):
            if stream is not None:  # before the continuation exists: a kill right after still named the evidence
                print(continuation.continued(campaign_id, reason, found, carried=len(carried)), file=stream, flush=True)
            successor = repository.create_continuation(engine, campaign_id, carried)
            repository.release_campaign(engine, campaign_id, me)
            take_lease(engine, successor, me, proc)
            return successor
    raise continuation.CampaignBlocked(campaign_id, reason, found, carried=len(carried), db=describe(engine.url), reports=[str(r) for r in reports])


def _stored_experiment(row) -> dict[str, Any]:
    return json.loads(row.experiment_json)


def _drive(engine, campaign_id, inputs: CampaignInputs, schedule, stream, timer, caps: leases.Caps | None = None, me: leases.WorkerIdentity | None = None) -> CampaignResult:
    """Run every provider's scheduled trials here, in schedule order, holding every lease."""
    stop_reason: str | None = None
    # A provider stopped by its spend cap admits nothing more; the others go on.
    provider_stops: dict[str, str] = {}
    repository.set_campaign_state(engine, campaign_id, expected=("running", "interrupted", "stopped", "completed"), state="running")
    trials = repository.trials_in_order(engine, campaign_id)
    progress = _progress(engine, campaign_id, inputs, trials, stream, caps)
    lineage = repository.lineage(engine, campaign_id)
    attempted = 0
    try:
        with interruptible(), worker.Heartbeat(engine, campaign_id, me):
            for trial in trials:
                if trial.status != "scheduled":
                    continue
                if stop_reason is not None:
                    break
                done = worker.Step(provider_stop=provider_stops[trial.provider]) if trial.provider in provider_stops else None
                done = done or worker.step(engine, trial, inputs, me=me, caps=caps, lineage=lineage, timer=timer)
                if done.result is not None:
                    attempted += 1
                    if progress:
                        # seconds=None: the display times the whole attempt (teardown and verifier included).
                        progress.update(AttemptFinished(trial.provider, trial.variant, done.result.outcome == "passed", done.result.record.cost_usd, None, trial.trial_id))
                stop_reason = done.campaign_stop or done.lost
                if done.provider_stop:
                    if trial.provider not in provider_stops:
                        provider_stops[trial.provider] = done.provider_stop
                    if done.result is None and repository.mark_not_attempted(engine, trial.id, done.provider_stop) and progress:
                        progress.update(TrialsNotAttempted(trial.provider, 1, done.provider_stop))
                testhooks.reached("between")
            testhooks.reached("last")
        stop_reason = stop_reason or next(iter(provider_stops.values()), None)
        with critical():
            repository.close_campaign(engine, campaign_id, stop_reason, state="stopped" if stop_reason else "completed")
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
    return _result(engine, campaign_id, inputs, schedule, attempted, stop_reason, caps)


def _result(engine, campaign_id: int, inputs: CampaignInputs, schedule, attempted: int, stop_reason: str | None, caps: leases.Caps | None) -> CampaignResult:
    reports = write_reports(engine, campaign_id, inputs)
    left = sum(t.status == "scheduled" for t in repository.trials_in_order(engine, campaign_id))
    spends = {p.name: repository.provider_spend(engine, campaign_id, p.name) for p in inputs.providers} if caps else {}
    return CampaignResult(campaign_id, describe(engine.url), reports, len(schedule), attempted, left, stop_reason, live=True, spends=spends, caps=caps)


def _progress(engine, campaign_id: int, inputs: CampaignInputs, trials, stream, caps: leases.Caps | None = None) -> Progress | None:
    if stream is None:
        return None
    totals = {p.name: 0 for p in inputs.providers}
    for t in trials:
        totals[t.provider] += 1
    each = float(caps.provider_max_usd) if caps and caps.provider_max_usd is not None else None
    total_cap = float(caps.campaign_max_usd) if caps and caps.campaign_max_usd is not None else None
    progress = Progress([ProviderPlan(name, total, each) for name, total in totals.items()], inputs.variants, stream=stream, cap_usd=total_cap)
    by_pk = {t.id: t for t in trials}
    # Results only: an interrupted attempt has no verdict and its trial runs again.
    done = [
        AttemptFinished(by_pk[a.trial_pk].provider, by_pk[a.trial_pk].variant, a.outcome == "passed", a.cost_usd, (a.ended_at - a.started_at).total_seconds() if a.ended_at else None)
        for a in repository.attempts_for(engine, campaign_id)
        if a.status == "finished"
    ]
    done += [
        AttemptFinished(t.provider, t.variant, a.outcome == "passed", a.cost_usd, (a.ended_at - a.started_at).total_seconds() if a.ended_at else None)
        for t, a in repository.carried_results(engine, campaign_id)
    ]
    skipped = [TrialsNotAttempted(t.provider, 1, t.not_attempted_reason) for t in trials if t.status == "not_attempted"]
    progress.preload([*done, *skipped])
    progress.start()
    return progress


def write_reports(engine, campaign_id: int, inputs: CampaignInputs) -> tuple[Path, ...]:
    """The overall report and one per provider, regenerated from the store."""
    if not repository.attempts_for(engine, campaign_id):
        return ()
    inputs.output_dir.mkdir(parents=True, exist_ok=True)
    written = [write_report(engine, campaign_id, inputs.output_dir / "report.json").json]
    if len(inputs.providers) > 1:
        for provider in inputs.providers:
            written.append(write_report(engine, campaign_id, inputs.output_dir / f"report-{provider.name}.json", provider=provider.name).json)
    return tuple(written)


