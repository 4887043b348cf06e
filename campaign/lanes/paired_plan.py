"""The paired plan-only lane: validate, compute the experiment, write the template, record it.

No trial runs and no model is called here. The order is the contract:

1. ``validate``: every rejection (options, source, launcher, agent, config,
   interpreter, output location), with nothing written;
2. ``compute_experiment``: read-only hashing of source, build artifacts,
   config, fixtures and interpreter;
3. ``run``: open the store, stage the template beside ``--output``, insert the
   planned campaign and its schedule, then rename the template into place (a
   failure before the rename leaves neither a stray file nor a half-written one).
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from campaign import benchmark
from campaign.agents import seeds
from campaign.canonical import spec_digest
from campaign.agents.client_version import read_client_version
from campaign.lanes import task_images
from campaign.lanes.attempt_plan import ContainerSpec
from campaign.lanes.probe import Probed, merged, probe_catalogs, probe_environments
from campaign.lanes.probe import variant_configs as probe_configs
from campaign.lanes.wire import WireRoute, resolve_route
from campaign.profiler.wire import CATALOG_DIGEST_FORMAT, recorded_catalog_format
from campaign.providers import Provider, load_catalog, provider_for_route
from campaign.agents.profile_model import AgentProfile, placeholders
from campaign.agents.profiles import build_artifact_paths, confirmed_as, load_profile, profile_identity, select_variants, variant_disclosure
from campaign.benchmark import Task
from campaign.config import BaseConfig, VariantConfig, load_base_config, render_config
from campaign.digests import GitProblem, PythonInfo, build_digest, file_sha256, git_revision, python_digest, source_digest
from campaign.errors import UsageProblem
from campaign.lanes.options import (
    DEFAULT_AGENT,
    DEFAULT_REPETITIONS,
    DEFAULT_RUN_TIMEOUT,
    DEFAULT_SEED,
    DEFAULT_TIMEOUT,
    CodingOptions,
    ModelRoute,
    Selection,
    check_applied_profile_shown,
    check_live_options,
    check_mode,
    check_outside_source,
    or_default,
    parse_model,
    resolve_launcher,
    resolve_profile_python,
    resolve_source,
    select_tasks,
)
from campaign.experiment import PairedExperiment, Variant
from campaign.plan import (
    read_json_object,
    render_document,
    stage_atomic,
    template_document,
)
from campaign.store import repository
from campaign.store.engine import DB_ENV, default_db_path, describe
from campaign.store.migrate import open_store

LIVE_ELSEWHERE = "live paired runs go through campaign.lanes.paired_live, not the plan-only lane"


@dataclass(frozen=True)
class PairedInputs:
    """Validated, resolved inputs of a paired run (no digests yet)."""

    source: Path
    launcher: Path | None
    profile: AgentProfile
    model: ModelRoute
    tasks: tuple[Task, ...]
    repetitions: int
    seed: int
    timeout: int
    run_timeout: int
    base_config: BaseConfig
    variants: tuple[VariantConfig, ...]
    python: PythonInfo
    output: Path
    wire: WireRoute | None = None
    # The catalog's provider for the model's route: its prices cost a client that reports none.
    provider: Provider | None = None
    catalog_digest: str | None = None
    # Where the tasks come from (--task-suite), and which of them were never checked.
    suite: benchmark.TaskSuite = dataclasses.field(default_factory=benchmark.builtin_suite)
    unchecked: tuple[str, ...] = ()
    # {task: its runtime and image} for the tasks that ship one (lanes.task_images).
    images: Mapping[str, ContainerSpec] = dataclasses.field(default_factory=dict)

    @property
    def selection(self) -> Selection:
        return Selection(self.suite, self.tasks, self.unchecked)


@dataclass(frozen=True)
class PlanResult:
    output: Path
    store: str
    campaign_id: int
    plan_digest: str
    scheduled: int
    tasks: int
    repetitions: int
    variants: tuple[str, ...]
    # What to say about the tasks first (their suite, unchecked ones): said, never refused.
    lines: tuple[str, ...] = ()


# --- 1. validation ----------------------------------------------------------


def validate(opts: CodingOptions, db: str | None, cwd: Path) -> PairedInputs:
    """Every rejection of a paired invocation, in a fixed order; reads, never writes."""
    check_mode(opts)
    if not opts.paired:
        raise UsageProblem("the paired lane needs --paired", option="--paired")
    check_live_options(opts)
    if opts.config is None:
        raise UsageProblem("--config FILE.toml is required with --paired: the explicit base config every variant shares", option="--config")
    model = parse_model(opts.model)
    selection = select_tasks(opts, images=True)
    source = resolve_source(opts.source, cwd)
    output = Path(opts.output).expanduser().absolute()  # type: ignore[arg-type]
    check_output(output, source, opts)
    check_outside_source(opts.config, source, "--config")
    check_outside_source(opts.failure_dir, source, "--failure-dir")
    store_file = sqlite_file(db)
    if store_file is not None:
        check_outside_source(store_file, source, "--db")
    launcher = resolve_launcher(opts.launcher, source)
    profile = load_profile(opts.agent or DEFAULT_AGENT, source)
    check_applied_profile_shown(profile)
    check_launcher_needed(profile, launcher)
    seeds.check(profile, os.environ)
    base = load_base_config(Path(opts.config).expanduser())
    variants = tuple(render_config(base, name, variant_disclosure(profile, name)) for name in select_variants(opts.variants, [profile]))
    python = resolve_profile_python(opts.profile_python)
    # Run the interpreter by the path given, not its resolved binary: a venv's python
    # resolves to the base interpreter, which lacks the venv's packages.
    profile_python = str(Path(opts.profile_python).expanduser().absolute()) if opts.profile_python else sys.executable
    catalog = load_catalog(opts.providers_catalog)
    provider = provider_for_route(catalog, model.provider)
    wire = resolve_route(profile, provider, profile_python=profile_python, environ=os.environ, option="--model")
    if wire is not None and (python.tiktoken is None or python.aiohttp is None):
        raise UsageProblem(
            f"{profile_python} runs the recording proxy for the {profile.name} agent and needs tiktoken and aiohttp installed; "
            "give an interpreter that has them (pip install tiktoken aiohttp)",
            option="--profile-python",
        )
    if opts.live:
        read_json_object(Path(opts.plan).expanduser(), "the plan", option="--plan")  # type: ignore[arg-type]
    # Built before the plan is (its image IDs are in the plan's digests); the live run of an
    # approved plan finds them under their tags, never rebuilds them.
    images = task_images.prepare(selection.tasks, [profile], opts.container_runtime, live=True)  # a paired plan is for a live run
    return PairedInputs(
        source=source,
        launcher=launcher,
        profile=profile,
        model=model,
        tasks=selection.tasks,
        repetitions=or_default(opts.repetitions, DEFAULT_REPETITIONS),
        seed=or_default(opts.seed, DEFAULT_SEED),
        timeout=or_default(opts.timeout, DEFAULT_TIMEOUT),
        run_timeout=or_default(opts.run_timeout, DEFAULT_RUN_TIMEOUT),
        base_config=base,
        variants=variants,
        python=python,
        output=output,
        wire=wire,
        provider=provider,
        catalog_digest=catalog.digest,
        suite=selection.suite,
        unchecked=selection.unchecked,
        images=images,
    )


def check_output(output: Path, source: Path, opts: CodingOptions) -> None:
    """The template goes outside the checkout, to a file path that is not an input."""
    check_outside_source(output, source, "--output")
    if output.is_dir():
        raise UsageProblem(f"{opts.output} is a directory; give a file path", option="--output")
    for name, value in (("--config", opts.config), ("--plan", opts.plan), ("--profile-python", opts.profile_python)):
        if value is not None and Path(value).expanduser().resolve() == output.resolve():
            raise UsageProblem(f"would overwrite the {name} file", option="--output")
    parent = next((p for p in output.parents if p.exists()), None)
    if parent is None or not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
        raise UsageProblem(f"cannot create {output}: {parent} is not a writable directory", option="--output")


def check_launcher_needed(profile: AgentProfile, launcher: Path | None) -> None:
    """A profile that runs ``{launcher}`` needs --launcher; there is no implicit default."""
    uses = placeholders(profile.client) | (placeholders(profile.runtime.argv) if profile.runtime else set())
    if "launcher" in uses and launcher is None:
        raise UsageProblem(
            f"the agent profile {profile.name!r} runs {{launcher}}; give --launcher PATH, the executable in the --source checkout",
            option="--launcher",
        )


def sqlite_file(db: str | None) -> Path | None:
    """The SQLite file ``--db`` names (without creating anything); None for other backends."""
    raw = db or os.environ.get(DB_ENV) or str(default_db_path())
    if "://" not in raw:
        return Path(raw).expanduser()
    try:
        url = make_url(raw)
    except ArgumentError:
        return None  # open_store reports the malformed URL
    if url.get_backend_name() != "sqlite" or not url.database or url.database == ":memory:":
        return None
    return Path(url.database).expanduser()


# --- 2. the experiment ------------------------------------------------------


def compute_experiment(inputs: PairedInputs, catalog_format: int = CATALOG_DIGEST_FORMAT) -> PairedExperiment:
    """Hash everything the live run must reproduce (reads files, runs git; writes nothing).
    ``catalog_format``: how a wire profile's catalogs are digested (the live run of a plan
    approved under format 1 measures them as that plan did)."""
    source = inputs.source
    try:
        revision = git_revision(source)
        source_hash = source_digest(source)
    except GitProblem as exc:
        raise UsageProblem(f"cannot list the files of {source}: {exc}", option="--source") from None
    except OSError as exc:
        raise UsageProblem(f"cannot read {exc.filename or 'a file'} in the source checkout: {exc.strerror}", option="--source") from None
    client_version = read_client_version(inputs.profile, os.environ)
    probed = _probe(inputs, catalog_format, client_version)
    catalogs = probed.catalogs if probed else None
    return PairedExperiment(
        agent=inputs.profile.name,
        agent_profile_digest=spec_digest(profile_identity(inputs.profile)),
        launcher=inputs.launcher.relative_to(source).as_posix() if inputs.launcher else None,
        launcher_digest=file_sha256(inputs.launcher) if inputs.launcher else None,
        tasks=tuple(task.name for task in inputs.tasks),
        model=str(inputs.model),
        revision=revision,
        source_digest=source_hash,
        compiled_build_digest=build_digest(source, build_artifact_paths(inputs.profile, source)),
        repetitions=inputs.repetitions,
        seed=inputs.seed,
        timeout=inputs.timeout,
        run_timeout=inputs.run_timeout,
        variants=tuple(
            Variant(name=v.variant, overlay_digest=v.overlay_digest, config_digest=v.digest) for v in inputs.variants
        ),
        config_digest=inputs.base_config.digest,
        fixture_digests=task_images.digests(inputs.tasks, inputs.images),
        profile_python_digest=python_digest(inputs.python.executable, inputs.python.version, inputs.python.tiktoken),
        wire_upstream=inputs.wire.upstream if inputs.wire else None,
        client_version=client_version,
        wire_catalogs=catalogs,
        wire_catalog_format=recorded_catalog_format(catalogs, catalog_format),
        wire_fingerprints=probed.fingerprints if probed else None,
        confirmed_as=confirmed_as(inputs.profile, [v.variant for v in inputs.variants]),
        task_suite=inputs.selection.identity(),
        pricing_catalog_digest=inputs.catalog_digest,
    )


def _probe(inputs: PairedInputs, catalog_format: int, client_version: str | None) -> Probed | None:
    if inputs.profile.applied_profile_from != "wire" or inputs.wire is None:
        return None
    configs = probe_configs(inputs.profile, [v.variant for v in inputs.variants])
    probes = [
        probe_catalogs(
            inputs.profile, model=str(inputs.model), task=task, route=inputs.wire, runner_python=sys.executable,
            catalog_format=catalog_format, client_version=client_version, configs=configs, container=container,
        )  # fmt: skip
        for task, container in probe_environments(inputs.tasks, inputs.images)
    ]
    return merged(probes, inputs.profile.name)


# --- 3. the lane ------------------------------------------------------------


def run(opts: CodingOptions, db: str | None, cwd: Path | None = None) -> PlanResult:
    """Plan-only paired mode: write the template and record the planned campaign."""
    inputs = validate(opts, db, Path(cwd or Path.cwd()))
    if opts.live:
        raise UsageProblem(LIVE_ELSEWHERE, option="--live")
    experiment = compute_experiment(inputs)
    schedule = experiment.schedule()
    document = template_document(experiment, schedule)

    engine = open_store(db)
    try:
        staged = stage_atomic(inputs.output, render_document(document))
        try:
            campaign_id = repository.create_campaign(
                engine,
                repository.NewCampaign(
                    kind="paired",
                    state="planned",
                    live=False,
                    agent=experiment.agent,
                    seed=experiment.seed,
                    experiment=experiment.as_dict(),
                    plan_digest=document["plan_digest"],
                ),
                schedule,
                model=experiment.model,
                default_provider=inputs.model.provider,
            )
            os.replace(staged, inputs.output)
        except BaseException:
            staged.unlink(missing_ok=True)
            raise
        store = describe(engine.url)
    finally:
        engine.dispose()
    return PlanResult(
        output=inputs.output,
        store=store,
        campaign_id=campaign_id,
        plan_digest=document["plan_digest"],
        scheduled=len(schedule),
        tasks=len(experiment.tasks),
        repetitions=experiment.repetitions,
        variants=tuple(v.name for v in experiment.variants),
        lines=tuple(inputs.selection.lines()),
    )
