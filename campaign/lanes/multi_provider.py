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
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from sqlalchemy import Engine
from sqlalchemy.engine import URL

from campaign import benchmark
from campaign.agents.client_version import read_client_version
from campaign.lanes.probe import probe_catalogs
from campaign.lanes.wire import WireRoute, resolve_route
from campaign.agents.profiles import AgentProfile, load_profile, profile_identity
from campaign.config import BaseConfig, VariantConfig, load_base_config, parse_base_config, render_variant
from campaign.errors import CampaignError, ConflictError, Interrupted, UsageProblem
from campaign.lanes import options as opt
from campaign.lanes.attempt import AttemptPlan, run_attempt
from campaign.plan import canonical_digest
from campaign.progress import AttemptFinished, Progress, ProviderPlan, TrialsNotAttempted
from campaign.providers import Catalog, Provider, load_catalog, resolve_providers
from campaign.report import write_report
from campaign.schedule import VARIANTS, build_schedule
from campaign.store import chain, repository
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


# A blocking fact -> the stop reason it records, most serious first.
_BLOCKING = (
    ("cleanup_unverified", "cleanup unverified", lambda a: a.cleanup_complete is not True),
    ("finalization_failed", "finalization incomplete", lambda a: a.finalization_failed is True),
    ("disposal_failed", "disposal failed", lambda a: a.disposal_complete is False),
)


def blocking_attempts(engine: Engine, campaign_id: int) -> tuple[str | None, list[str]]:
    """(stop reason, one line per attempt) for finished attempts whose cleanup, disposal or
    finalization is unproven: while any exists, resume admits nothing."""
    reasons: list[str] = []
    lines = []
    for a in repository.unresolved_attempts(engine, campaign_id):
        if a.status == "running":
            continue  # orphans are recovered first, then judged
        facts = [(reason, text) for reason, text, bad in _BLOCKING if bad(a)]
        if facts:
            reasons += [reason for reason, _ in facts]
            lines.append(f"attempt {a.id}: {', '.join(text for _, text in facts)}")
    first = next((reason for reason, _, _ in _BLOCKING if reason in reasons), None)
    return first, lines


def recover_orphans(engine: Engine, campaign_id: int, url: URL) -> list[int]:
    """Run the credential-free recovery on attempts a killed runner left running, then
    record them interrupted with their finalization incomplete. Returns their ids."""
    orphans = [a for a in repository.attempts_for(engine, campaign_id) if a.status == "running"]
    for attempt in orphans:
        env = {k: os.environ[k] for k in ("PATH", "LANG", "LC_ALL") if k in os.environ}
        argv = [sys.executable, "-I", "-m", "campaign.supervise.recovery", str(attempt.id)]
        if url.password:
            env["CAMPAIGN_DB"] = url.render_as_string(hide_password=False)  # never in the process list
        else:
            argv += ["--db", url.render_as_string(hide_password=False)]
        subprocess.run(
            argv,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=120,
            check=False,
        )
        fresh = repository.get_attempt(engine, attempt.id)
        with critical():
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


def _alive(identity: repository.RunnerIdentity, proc: ProcFS) -> bool:
    return identity.boot_id == proc.boot_id() and proc.start_ticks(identity.pid) == identity.start_ticks


def take_lease(engine: Engine, campaign_id: int, me: repository.RunnerIdentity, proc: ProcFS) -> None:
    holder = repository.campaign_runner(engine, campaign_id)
    if holder is not None and _alive(holder, proc):
        raise ConflictError(f"campaign {campaign_id} is being run by pid {holder.pid}; only one runner at a time, so this one exits without running anything")
    if not repository.acquire_campaign(engine, campaign_id, me, stale=holder):
        raise ConflictError(f"another runner took campaign {campaign_id} first; this one exits without running anything")


# --- the lane ---------------------------------------------------------------------------


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
        raise UsageProblem(f"{inputs.output_dir} already holds a campaign; add --resume to continue it, or choose a new --output-dir", option="--resume")

    engine = open_store(inputs.db)
    proc = ProcFS()
    me = my_identity(proc)
    existing = repository.latest_campaign(engine, kind="campaign")
    if opts.resume and existing is not None:
        campaign_id = existing.id
        differing = mismatched_fields(_stored_experiment(existing), current)
        if differing:
            raise UsageProblem(f"these options would change the experiment: {', '.join(differing)}; resume with the original options or start a new --output-dir", option="--resume")
        problems = chain.verify_chain(engine, campaign_id)
        if problems:
            raise ResumeRefused("the attempt rows fail their hash chain (edited, deleted or reordered); resume refuses:\n" + "\n".join(p.line() for p in problems))
        take_lease(engine, campaign_id, me, proc)
    else:
        # --resume on an empty --output-dir starts the campaign, so one command both
        # starts and continues it.
        if existing is not None:
            raise UsageProblem(f"{describe(engine.url)} already holds campaign {existing.id}; add --resume", option="--resume")
        campaign_id = repository.create_campaign(
            engine,
            repository.NewCampaign(kind="campaign", state="running", live=True, agent=current["agent"], seed=inputs.seed, experiment=current, experiment_digest=canonical_digest(current)),
            schedule,
            model=inputs.providers[0].model,
            default_provider=inputs.providers[0].name,
        )
        take_lease(engine, campaign_id, me, proc)
    try:
        return _drive(engine, campaign_id, inputs, schedule, stream, timer, resumed=existing is not None)
    finally:
        repository.release_campaign(engine, campaign_id, me)


def _stored_experiment(row) -> dict[str, Any]:
    return json.loads(row.experiment_json)


def _drive(engine, campaign_id, inputs: CampaignInputs, schedule, stream, timer, *, resumed: bool) -> CampaignResult:
    providers = {p.name: p for p in inputs.providers}
    stop_reason: str | None = None
    if resumed:
        repository.reset_admitted_without_attempt(engine, campaign_id)
        recover_orphans(engine, campaign_id, engine.url)
        stop_reason, blocked = blocking_attempts(engine, campaign_id)
        if stop_reason is not None:
            repository.close_campaign(engine, campaign_id, stop_reason, state="stopped")
            reports = write_reports(engine, campaign_id, inputs)
            detail = "\n".join(blocked)
            raise ResumeRefused(
                f"campaign {campaign_id} admits no more work ({stop_reason}); remaining trials are recorded not_attempted.\n{detail}\n"
                "Retained private roots are evidence: resolve them independently (campaign recover), never by editing rows. "
                f"Reports: {', '.join(str(r) for r in reports)}"
            )
    repository.set_campaign_state(engine, campaign_id, expected=("running", "interrupted", "stopped", "completed"), state="running")
    trials = repository.trials_in_order(engine, campaign_id)
    progress = _progress(engine, campaign_id, inputs, trials, stream)
    attempted = 0
    try:
        with interruptible():
            for trial in trials:
                if trial.status != "scheduled":
                    continue
                if stop_reason is not None:
                    break
                if not repository.admit_trial(engine, trial.id):
                    continue  # another runner's: compare-and-set admission
                provider = providers[trial.provider]
                plan = AttemptPlan(
                    task=benchmark.get_task(trial.task),
                    profile=inputs.profiles[provider.name],
                    model=provider.model,
                    seed=inputs.seed,
                    timeout_s=float(inputs.timeout),
                    variant=trial.variant,
                    config_text=inputs.configs[trial.variant].text,
                    credential_names=(provider.credential_env,) if provider.credential_env else (),
                    failure_dir=inputs.failure_dir,
                    provider=provider,
                    wire=inputs.wires.get(provider.name),
                    expected_catalogs=inputs.wire_catalogs.get(provider.name),
                    extra_env=(("CAMPAIGN_CONTROL_PLANE_PORT", str(inputs.control_plane_port)),) if inputs.control_plane_port else (),
                )
                result = run_attempt(engine, trial, plan, timer=timer)
                attempted += 1
                stop_reason = result.stop_reason
                if progress:
                    # seconds=None: the display times the whole attempt (teardown and verifier included).
                    progress.update(AttemptFinished(provider.name, trial.variant, result.outcome == "passed", result.record.cost_usd, None, trial.trial_id))
        repository.close_campaign(engine, campaign_id, stop_reason, state="stopped" if stop_reason else "completed")
    except Interrupted:
        with critical():
            # Trials not reached stay scheduled: --resume runs them.
            repository.set_campaign_state(engine, campaign_id, expected=("running",), state="interrupted", stop_reason="interrupted")
            write_reports(engine, campaign_id, inputs)
        raise
    finally:
        if progress:
            progress.close()
    reports = write_reports(engine, campaign_id, inputs)
    left = sum(t.status == "scheduled" for t in repository.trials_in_order(engine, campaign_id))
    return CampaignResult(campaign_id, describe(engine.url), reports, len(schedule), attempted, left, stop_reason, live=True)


def _progress(engine, campaign_id: int, inputs: CampaignInputs, trials, stream) -> Progress | None:
    if stream is None:
        return None
    totals = {p.name: 0 for p in inputs.providers}
    for t in trials:
        totals[t.provider] += 1
    progress = Progress([ProviderPlan(name, total) for name, total in totals.items()], inputs.variants, stream=stream)
    by_pk = {t.id: t for t in trials}
    done = [
        AttemptFinished(by_pk[a.trial_pk].provider, by_pk[a.trial_pk].variant, a.outcome == "passed", a.cost_usd, (a.ended_at - a.started_at).total_seconds() if a.ended_at else None)
        for a in repository.attempts_for(engine, campaign_id)
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


