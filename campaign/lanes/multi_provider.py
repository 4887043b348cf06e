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
from campaign.agents import seeds
from campaign.agents.client_version import read_client_version
from campaign.lanes.probe import probe_catalogs
from campaign.lanes.wire import WireRoute, resolve_route
from campaign.agents.profiles import AgentProfile, load_profile, profile_identity, uses_wire
from campaign.config import BaseConfig, VariantConfig, load_base_config, parse_base_config, render_variant
from campaign.errors import CampaignError, ConflictError, Interrupted, RerunWith, UsageProblem
from campaign.lanes import continuation, holders, parallel, worker
from campaign.lanes.breaker import Breaker, Halt
from campaign.lanes import options as opt
from campaign.plan import canonical_digest
from campaign.progress import UNDER_OTHER_CAP, Progress, ProviderPlan, TrialsNotAttempted
from campaign.providers import REPLAY, Catalog, Provider, load_catalog, resolve_providers
from campaign.report import write_report
from campaign.schedule import VARIANTS, build_schedule
from campaign.store import chain, leases, repository
from campaign.store.engine import describe
from campaign.store.migrate import open_store
from campaign.supervise import critical, interruptible
from campaign.supervise.procfs import ProcFS

STORE_NAME = "campaign.db"
# Trials a stop left not_attempted that a resume tries again, under the same gates. Not
# reopened: unproven cleanup, disposal or finalization (they block: continue instead), an
# attempt that exceeded its ceiling, and a trial whose fault attempts are exhausted.
REOPEN_ON_RESUME = ("spend_limit", "spend_incomplete", "run_deadline", "max_attempts", "engine_error", "interrupted", "provider_unavailable", "worker_lost", "lease_lost")


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
    # --rehearse: every upstream is the replay provider, every price synthetic.
    rehearsal: bool = False


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
    # Providers the circuit breaker halted: their trials wait for a resume.
    halts: tuple[Halt, ...] = ()
    # Trials recorded not_attempted, by reason.
    not_attempted: Mapping[str, int] = dataclasses.field(default_factory=dict)
    # What stopped an engine_error attempt, for the operator (never stored).
    engine_error: str | None = None

    @property
    def unfinished(self) -> bool:
        """Trials are left without a result (scheduled, or not attempted for a reason)."""
        return bool(self.left or self.not_attempted)


class ResumeRefused(CampaignError):
    """Resume would admit work it must not (tampering, unproven cleanup, a changed experiment)."""


# --- validation (reads only) ---------------------------------------------------


def parse_variants(value: str | None) -> tuple[str, ...]:
    names = tuple(v.strip() for v in (",".join(VARIANTS) if value is None else value).split(","))
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


def _probed(profile: AgentProfile, provider: Provider, wire: WireRoute | None, version: str | None, task: benchmark.Task, stored: Mapping[str, Any] | None, probe: bool) -> dict[str, list[str]] | None:
    """A wire profile's per-variant catalogs: the stored campaign's when it has them (a
    resume or a worker never probes again), else measured now by the probe. A client
    whose version changed since is a different experiment: refused, naming the field."""
    if profile.applied_profile_from != "wire" or wire is None:
        return None
    before = next((p for p in (stored or {}).get("providers", []) if p.get("name") == provider.name), None)
    if before is not None and before.get("wire_catalogs"):
        if before.get("client_version") != version:
            raise UsageProblem(
                f"providers[{provider.name}].client_version: the campaign was run with {before.get('client_version')!r}, the installed client is {version!r}; "
                "a different client is a different experiment: reinstall that version, or start a new --output-dir",
                option="--resume",
            )
        return before["wire_catalogs"]
    if not probe:
        return None
    return probe_catalogs(profile, model=provider.model, task=task, route=wire, runner_python=sys.executable)


def rehearsed(providers: tuple[Provider, ...], profiles: Mapping[str, AgentProfile]) -> tuple[Provider, ...]:
    """``--rehearse``: the same providers, agents, models and tasks, each upstream the replay
    provider and each price synthetic, and no credential to read. A paid client that does
    not reach its model through the recording proxy cannot be pointed at the replay: refused."""
    out = []
    for provider in providers:
        profile = profiles[provider.name]
        if profile.paid and not uses_wire(profile):
            raise UsageProblem(
                f"the {profile.name} agent of provider {provider.name} does not reach its model through {{proxy_url}}, "
                "so its calls cannot be sent to the replay provider; a rehearsal would spend",
                option="--rehearse",
            )
        out.append(dataclasses.replace(provider, upstream=REPLAY, basis="synthetic", credential_env=None, price_source=f"rehearsal of {provider.name}: replay provider, synthetic prices"))
    return tuple(out)


def validate(
    opts: opt.CodingOptions, db: str | None, catalog_path: Path | None, environ: Mapping[str, str], *, stored: Mapping[str, Any] | None = None, probe: bool = True
) -> CampaignInputs:
    """Every check of a campaign's inputs. ``stored`` is the campaign's recorded experiment
    (a resume, a worker): its probe results are reused. ``probe=False`` (nothing will run)
    skips measuring the catalogs."""
    catalog = load_catalog(catalog_path)
    providers = with_model(resolve_providers(opts.providers, catalog), opts.model)
    variants = parse_variants(opts.variants)
    tasks = benchmark.resolve_tasks(opts.tasks)
    output_dir = Path(opts.output_dir).expanduser().absolute()  # type: ignore[arg-type]
    if output_dir.exists() and not output_dir.is_dir():
        raise UsageProblem(f"{opts.output_dir} is not a directory", option="--output-dir")
    profiles = {p.name: load_profile(opts.agent or p.agent) for p in providers}
    if opts.rehearse:
        providers = rehearsed(providers, profiles)
    for provider in providers:
        profile = profiles[provider.name]
        if profile.applied_profile_from == "none":
            raise UsageProblem(
                f"the {profile.name} agent cannot report which disclosure profile it applied, so no paired trial through it could pass; "
                "use an agent profile with applied_profile_from = \"adapter\" or \"wire\"",
                option="--agent",
            )
    wires = {p.name: resolve_route(profiles[p.name], p, profile_python=sys.executable, environ=environ) for p in providers}
    for profile in profiles.values():
        seeds.check(profile, environ)
    versions = {p.name: read_client_version(profiles[p.name], environ) for p in providers}
    catalogs = {p.name: _probed(profiles[p.name], p, wires[p.name], versions[p.name], tasks[0], stored, probe) for p in providers}
    base = load_base_config(Path(opts.config).expanduser()) if opts.config else parse_base_config(b"", "the empty base config")
    configs = {name: render_variant(base, name) for name in variants}
    if opts.live or opts.rehearse:
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
        rehearsal=opts.rehearse,
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
        # Only on a rehearsal, so the campaigns before this option keep their identity.
        **({"rehearsal": True} if inputs.rehearsal else {}),
    }


def schedule_for(inputs: CampaignInputs):
    return build_schedule([t.name for t in inputs.tasks], inputs.repetitions, inputs.seed, inputs.variants, [p.name for p in inputs.providers])


# --- resume checks ----------------------------------------------------------------


def mismatched_fields(stored: Mapping[str, Any], current: Mapping[str, Any]) -> list[str]:
    """The experiment's fields that differ; inside ``providers``, each provider's own
    (``providers[zai].client_version``), so the operator sees what changed."""
    out = []
    for key in sorted(set(stored) | set(current)):
        before, now = stored.get(key), current.get(key)
        if before == now:
            continue
        if key == "providers" and isinstance(before, list) and isinstance(now, list):
            old = {p.get("name"): p for p in before if isinstance(p, dict)}
            new = {p.get("name"): p for p in now if isinstance(p, dict)}
            if list(old) == list(new):
                out += [f"providers[{name}].{field}" for name in new for field in sorted(set(old[name]) | set(new[name])) if old[name].get(field) != new[name].get(field)]
                continue
        out.append(key)
    return out


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
    runs = bool(opts.live or opts.rehearse)
    inputs = validate(opts, db, catalog_path, environ, stored=_stored_experiment_of(opts, db) if opts.resume and runs else None, probe=runs)
    current = experiment(inputs)
    schedule = schedule_for(inputs)
    store_file = inputs.output_dir / STORE_NAME if db is None else None
    if not runs:
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
            repository.NewCampaign(kind="campaign", state="running", live=not inputs.rehearsal, agent=current["agent"], seed=inputs.seed, experiment=current, experiment_digest=canonical_digest(current)),
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
            leases.reopen_unavailable(engine, campaign_id)
            repository.reopen_trials(engine, campaign_id, REOPEN_ON_RESUME)
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


def _stored_experiment_of(opts: opt.CodingOptions, db: str | None) -> dict[str, Any] | None:
    """The experiment of the campaign a resume continues, when its store exists."""
    store_file = Path(opts.output_dir).expanduser().absolute() / STORE_NAME  # type: ignore[arg-type]
    if db is None and not store_file.is_file():
        return None
    engine = open_store(db or str(store_file))
    try:
        row = repository.latest_campaign(engine, kind="campaign")
        return _stored_experiment(row) if row is not None else None
    finally:
        engine.dispose()


def _drive(engine, campaign_id, inputs: CampaignInputs, schedule, stream, timer, caps: leases.Caps | None = None, me: leases.WorkerIdentity | None = None) -> CampaignResult:
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
    progress = _progress(engine, campaign_id, inputs, trials, stream, caps)
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
    result = _result(engine, campaign_id, inputs, schedule, attempted, stop_reason, caps, halts=tuple(breaker.halted.values()))
    return dataclasses.replace(result, engine_error=engine_error)


def close_run(engine, campaign_id: int, stop_reason: str | None, *, ran_now: bool) -> None:
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


def _result(
    engine, campaign_id: int, inputs: CampaignInputs, schedule, attempted: int, stop_reason: str | None, caps: leases.Caps | None, *, halts: tuple[Halt, ...] = ()
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


def _progress(engine, campaign_id: int, inputs: CampaignInputs, trials, stream, caps: leases.Caps | None = None) -> Progress | None:
    if stream is None:
        return None
    totals = {p.name: 0 for p in inputs.providers}
    for t in trials:
        totals[t.provider] += 1
    total_cap = float(caps.campaign_max_usd) if caps and caps.campaign_max_usd is not None else None
    each = float(caps.provider_max_usd) if caps and caps.provider_max_usd is not None else (UNDER_OTHER_CAP if total_cap is not None else None)
    # With caps but none over the whole campaign, the header's sum has no cap of its own.
    header_cap = UNDER_OTHER_CAP if caps is not None and total_cap is None else total_cap
    progress = Progress([ProviderPlan(name, total, each) for name, total in totals.items()], inputs.variants, stream=stream, cap_usd=header_cap)
    by_pk = {t.id: t for t in trials}

    def seconds(a) -> float | None:
        return (a.ended_at - a.started_at).total_seconds() if a.ended_at else None

    # Results and faulted attempts; an interrupted attempt was counted by the run it ended.
    done = [
        worker.attempt_event(by_pk[a.trial_pk], a.outcome, a.failure_class, a.cost_usd, a.spend_complete, a.equivalent_spend_usd, seconds(a))
        for a in repository.attempts_for(engine, campaign_id)
        if a.status in ("finished", "faulted")
    ]
    done += [worker.attempt_event(t, a.outcome, a.failure_class, a.cost_usd, a.spend_complete, a.equivalent_spend_usd, seconds(a)) for t, a in repository.carried_results(engine, campaign_id)]
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


