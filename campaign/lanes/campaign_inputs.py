"""A campaign's inputs: the options checked, the providers, profiles and probes resolved,
and the experiment they define (what a resume or a worker must reproduce).

``validate`` reads and checks, never writes: every refusal is a UsageProblem naming
the option, before any store row or process exists. ``experiment`` is the identity
a resume compares field by field (``campaign.experiment.differences`` names what changed).
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from campaign import benchmark
from campaign.agents import seeds
from campaign.agents.client_version import read_client_version
from campaign.agents.profile_model import AgentProfile, uses_wire
from campaign.agents.profiles import confirmed_as, load_profile, profile_identity, select_variants, variant_disclosure
from campaign.config import BaseConfig, VariantConfig, load_base_config, parse_base_config, render_config
from campaign.errors import UnreadableValue, UsageProblem
from campaign.experiment import CampaignExperiment, ProviderBinding, Variant
from campaign.experiment import parse as parse_experiment
from campaign.lanes import options as opt
from campaign.lanes import task_images
from campaign.lanes.attempt_plan import ContainerSpec
from campaign.lanes.probe import Probed, merged, probe_catalogs, probe_environments
from campaign.lanes.probe import variant_configs as probe_configs
from campaign.profiler.wire import CATALOG_DIGEST_FORMAT, bound_catalog_format, recorded_catalog_format
from campaign.lanes.wire import WireRoute, resolve_route
from campaign.canonical import spec_digest
from campaign.providers import REPLAY, Catalog, Provider, load_catalog, resolve_providers
from campaign.report.outputs import check_report_output
from campaign.schedule import build_schedule
from campaign.store import STORE_NAME, repository
from campaign.store.migrate import open_store
from campaign.schedule import ScheduledTrial
from campaign.vocabulary import VARIANTS
from campaign.store.models import Campaign


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
    # ... and the digest format of each provider's catalogs (profiler.wire.CATALOG_DIGEST_KEYS).
    wire_catalog_formats: Mapping[str, int] = dataclasses.field(default_factory=dict)
    # ... and from format 3 each variant's fingerprint, part by part (probe.Probed).
    wire_fingerprints: Mapping[str, dict[str, dict[str, list[str]]] | None] = dataclasses.field(default_factory=dict)
    # --rehearse: every upstream is the replay provider, every price synthetic.
    rehearsal: bool = False
    # Where the tasks come from (--task-suite), and which of them were never checked.
    selection: opt.Selection | None = None
    # {task: its runtime and image} for the tasks that ship one (lanes.task_images).
    images: Mapping[str, ContainerSpec] = dataclasses.field(default_factory=dict)

    def task(self, name: str) -> benchmark.Task:
        return next(t for t in self.tasks if t.name == name)


def report_outputs(output_dir: Path, providers: Sequence[str]) -> list[Path]:
    """The reports a campaign writes into its --output-dir: the overall one, and one per
    provider when there are several (each with its .md and .svg beside it)."""
    return [output_dir / "report.json", *(output_dir / f"report-{name}.json" for name in providers if len(providers) > 1)]


def variant_configs(base: BaseConfig, variants: Sequence[str], profiles: Sequence[AgentProfile]) -> dict[str, VariantConfig]:
    """Each variant's config: the base with the disclosure profile its table applies (the
    built-in pair's by their names). One variant is one config for every provider."""
    out = {}
    for name in variants:
        disclosures = sorted({variant_disclosure(p, name) or "none" for p in profiles})
        if len(disclosures) > 1:
            raise UsageProblem(
                f"variant {name} applies the disclosure profiles {' and '.join(disclosures)} under different agent profiles; a variant is one treatment, "
                "so define it alike in each, or run the providers as separate campaigns",
                option="--variants",
            )
        out[name] = render_config(base, name, variant_disclosure(profiles[0], name))
    return out


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


def _probed(
    profile: AgentProfile,
    provider: Provider,
    wire: WireRoute | None,
    version: str | None,
    environments: Sequence[tuple[benchmark.Task, ContainerSpec | None]],
    stored: Mapping[str, Any] | None,
    probe: bool,
    variants: Sequence[str] = VARIANTS,
) -> Probed:
    """A wire profile's per-variant catalogs, their digest format and fingerprints: the stored campaign's
    when it has them (a resume or a worker never probes again; a campaign bound before
    format 2 keeps format 1), else measured now by the probe. A client whose version
    changed since is a different experiment: refused, naming the field."""
    if profile.applied_profile_from != "wire" or wire is None:
        return Probed(None, CATALOG_DIGEST_FORMAT)
    before = next((p for p in (stored or {}).get("providers", []) if p.get("name") == provider.name), None)
    if before is not None and before.get("wire_catalogs"):
        if before.get("client_version") != version:
            raise UsageProblem(
                f"providers[{provider.name}].client_version: the campaign was run with {before.get('client_version')!r}, the installed client is {version!r}; "
                "a different client is a different experiment: reinstall that version, or start a new --output-dir",
                option="--resume",
            )
        return Probed(before["wire_catalogs"], bound_catalog_format(before), before.get("wire_fingerprints"))
    if not probe:
        return Probed(None, CATALOG_DIGEST_FORMAT)
    configs = probe_configs(profile, variants)
    probes = [
        probe_catalogs(profile, model=provider.model, task=task, route=wire, runner_python=sys.executable, client_version=version, configs=configs, container=container)
        for task, container in environments
    ]
    return merged(probes, profile.name)


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
    selection = opt.select_tasks(opts, images=True)
    tasks = selection.tasks
    output_dir = Path(opts.output_dir).expanduser().absolute()  # type: ignore[arg-type]
    if output_dir.exists() and not output_dir.is_dir():
        raise UsageProblem(f"{opts.output_dir} is not a directory", option="--output-dir")
    if db is None and (output_dir / STORE_NAME).exists() and not (output_dir / STORE_NAME).is_file():
        # Else it reads as a campaign already there, and its --resume as a --db never given.
        raise UsageProblem(f"{output_dir / STORE_NAME}, where the campaign's store goes, is not a file; move it, or choose another --output-dir", option="--output-dir")
    for report in report_outputs(output_dir, [p.name for p in providers]):
        check_report_output(report, "--output-dir")
    profiles = {p.name: load_profile(opts.agent or p.agent) for p in providers}
    variants = select_variants(opts.variants, list(profiles.values()))
    if opts.rehearse:
        providers = rehearsed(providers, profiles)
    for provider in providers:
        opt.check_applied_profile_shown(profiles[provider.name])
    for p in providers:
        value = environ.get(p.credential_env or "", "").strip()
        if value and p.upstream and value in p.upstream:
            # The upstream is stored with the campaign: a key in it would reach the store.
            raise UsageProblem(
                f"provider {p.name}'s upstream URL holds the value of {p.credential_env}; the credential travels in a header, "
                "never in the URL: give the plain base URL in --providers-catalog",
                option="--providers-catalog",
            )
    wires = {p.name: resolve_route(profiles[p.name], p, profile_python=sys.executable, environ=environ) for p in providers}
    for profile in profiles.values():
        seeds.check(profile, environ)
    versions = {p.name: read_client_version(profiles[p.name], environ) for p in providers}
    base = load_base_config(Path(opts.config).expanduser()) if opts.config else parse_base_config(b"", "the empty base config")
    configs = variant_configs(base, variants, list(profiles.values()))
    # Built only where trials may run: a dry run finds what was built before, builds nothing.
    images = task_images.prepare(tasks, list(profiles.values()), opts.container_runtime, build=probe, live=bool(opts.live))
    environments = probe_environments(tasks, images)
    probed = {p.name: _probed(profiles[p.name], p, wires[p.name], versions[p.name], environments, stored, probe, variants) for p in providers}
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
        wire_catalogs={name: p.catalogs for name, p in probed.items()},
        wire_catalog_formats={name: p.catalog_format for name, p in probed.items()},
        wire_fingerprints={name: p.fingerprints for name, p in probed.items()},
        rehearsal=opts.rehearse,
        selection=selection,
        images=images,
    )


def experiment(inputs: CampaignInputs) -> dict[str, Any]:
    """Everything a resume must reproduce; compared field by field (``experiment.differences``)."""
    return campaign_experiment(inputs).as_dict()


def campaign_experiment(inputs: CampaignInputs) -> CampaignExperiment:
    agents = sorted({p.name for p in inputs.profiles.values()})
    return CampaignExperiment(
        agent=agents[0] if len(agents) == 1 else "custom",
        model=inputs.providers[0].model if len(inputs.providers) == 1 else None,
        providers=tuple(_binding(inputs, p) for p in inputs.providers),
        pricing_catalog_digest=inputs.catalog.digest,
        tasks=tuple(t.name for t in inputs.tasks),
        variants=tuple(Variant(name=n, overlay_digest=inputs.configs[n].overlay_digest, config_digest=inputs.configs[n].digest) for n in inputs.variants),
        repetitions=inputs.repetitions,
        seed=inputs.seed,
        timeout=inputs.timeout,
        config_digest=inputs.base_config.digest,
        fixture_digests=task_images.digests(inputs.tasks, inputs.images),
        control_plane_port=inputs.control_plane_port,
        rehearsal=inputs.rehearsal,
        task_suite=inputs.selection.identity() if inputs.selection else None,
    )


def _binding(inputs: CampaignInputs, p: Provider) -> ProviderBinding:
    profile, wire, catalogs = inputs.profiles[p.name], inputs.wires.get(p.name), inputs.wire_catalogs.get(p.name)
    return ProviderBinding(
        name=p.name,
        model=p.model,
        agent=profile.name,
        agent_profile_digest=spec_digest(profile_identity(profile)),
        credential_env=p.credential_env,
        basis=p.basis,
        wire_upstream=wire.upstream if wire else None,
        client_version=inputs.client_versions.get(p.name),
        wire_catalogs=catalogs,
        wire_catalog_format=recorded_catalog_format(catalogs, inputs.wire_catalog_formats.get(p.name, 1)),
        wire_fingerprints=inputs.wire_fingerprints.get(p.name),
        confirmed_as=confirmed_as(profile, inputs.variants),
    )


def schedule_for(inputs: CampaignInputs) -> list[ScheduledTrial]:
    return build_schedule([t.name for t in inputs.tasks], inputs.repetitions, inputs.seed, inputs.variants, [p.name for p in inputs.providers])


def stored_experiment(row: Campaign) -> dict[str, Any]:
    experiment = parse_experiment(row.experiment_json)
    if experiment is None:
        raise UnreadableValue(f"campaign {row.id}'s experiment is not the JSON object the engine writes (the row was edited outside the engine); `campaign verify` names it")
    return experiment


def stored_experiment_of(opts: opt.CodingOptions, db: str | None) -> dict[str, Any] | None:
    """The experiment of the campaign a resume continues, when its store exists."""
    store_file = Path(opts.output_dir).expanduser().absolute() / STORE_NAME  # type: ignore[arg-type]
    if db is None and not store_file.is_file():
        return None
    engine = open_store(db or str(store_file))
    try:
        row = repository.latest_campaign(engine, kind="campaign")
        return stored_experiment(row) if row is not None else None
    finally:
        engine.dispose()
