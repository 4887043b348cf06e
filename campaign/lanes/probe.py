"""The wire probe: which tool catalog a real client sends under each variant.

For a profile with ``applied_profile_from = "wire"`` the engine cannot ask the
client which disclosure profile it applied; it watches the catalog on the wire
instead. The expected catalog of each variant is measured before any trial, for
free: the client runs once per variant, exactly as an attempt would (private
root, supervisor, recording proxy, the same model name), against the replay
provider, never a paid one. The digests become part of the experiment, so the
approval binds them, and a client upgrade that changes its catalog is a
different experiment. A profile whose variants send the same catalog does not
apply a treatment and is refused.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from campaign import benchmark, experiment
from campaign.agents import seeds
from campaign.agents.client_version import read_client_version
from campaign.agents.profile_model import AgentProfile
from campaign.agents.profiles import load_profile, run_variants, variant_disclosure
from campaign.benchmark import Task
from campaign.config import parse_base_config, render_config
from campaign.errors import CampaignError, UsageProblem
from campaign.lanes import options as opt
from campaign.lanes.attempt import run_attempt
from campaign.lanes.attempt_plan import AttemptSource, ContainerSpec
from campaign.lanes.probe_cache import ProbeCache
from campaign.lanes.wire import WireRoute, resolve_route
from campaign.profiler import fingerprint as wire_fingerprint
from campaign.profiler.wire import CATALOG_DIGEST_FORMAT, CATALOG_DIGEST_KEYS
from campaign.providers import REPLAY, load_catalog, provider_for_route
from campaign.schedule import build_schedule
from campaign.store import repository
from campaign.store.engine import make_engine, resolve_url
from campaign.store.migrate import upgrade_engine
from campaign.vocabulary import VARIANTS

PROBE_TIMEOUT_S = 300.0


class ProbeFailed(CampaignError):
    """The client did not show a tool catalog under one of the variants."""


@dataclass(frozen=True)
class Probed:
    """What the probe bound: per variant, the digests its requests carried in
    ``catalog_format`` (format 3: whole fingerprints), and from format 3 each variant's
    fingerprint part by part ({variant: {part: sorted digests}}). No catalogs: nothing was
    probed (a profile the adapter confirms)."""

    catalogs: dict[str, list[str]] | None
    catalog_format: int
    fingerprints: dict[str, dict[str, list[str]]] | None = None


def probe_catalogs(
    profile: AgentProfile,
    *,
    model: str,
    task: Task,
    route: WireRoute,
    runner_python: str,
    timeout_s: float = PROBE_TIMEOUT_S,
    option: str = "--agent",
    catalog_format: int = CATALOG_DIGEST_FORMAT,
    client_version: str | None = None,
    configs: Mapping[str, str] | None = None,
    container: ContainerSpec | None = None,
) -> Probed:
    """What each variant sent, from one replayed run per variant (or a cached one:
    ``probe_cache``; ``client_version``, when the caller has read it, saves reading it
    again for the cache's key). ``configs`` are the variants to run, each with its config
    text; the built-in pair when None. ``container``: ``task`` ships an image, and the
    probe runs in a container of it, as its attempts will (``merged`` joins the probes of
    a run's environments).

    Two variants that sent one fingerprint (in format 1 and 2: one catalog) are refused,
    naming both: the wire could never tell their attempts apart, so neither label would
    be confirmed."""
    cache = ProbeCache.from_environ(os.environ)
    image = container.image if container is not None else None
    key = cache.key(profile, model=model, task=task, runner_python=runner_python, environ=os.environ, client_version=client_version, configs=configs, image=image) if cache else ""
    configs = variant_configs(profile, VARIANTS) if configs is None else configs
    measured = cache.load(key) if cache else None
    if measured is None:
        measured = measure(profile, model=model, task=task, route=route, runner_python=runner_python, timeout_s=timeout_s, configs=configs, container=container)
        if cache:
            cache.store(key, measured)
    found = {variant: sorted(measured[variant][CATALOG_DIGEST_KEYS[catalog_format]]) for variant in configs}
    parts = {variant: wire_fingerprint.variant_parts(measured[variant].get("fingerprints") or {}) for variant in configs} if catalog_format >= 3 else None
    return _distinct(Probed(found, catalog_format, parts), profile.name, option)


def merged(probes: Sequence[Probed], agent: str, option: str = "--agent") -> Probed:
    """The probes of one run's environments (the host, each task image) as one binding: a
    variant's attempt is confirmed by any fingerprint that variant sent in any of them
    (a client's system prompt names its working directory, shell and repository, which an
    image sets), and no fingerprint may belong to two variants."""
    first = probes[0]
    if len(probes) == 1 or first.catalogs is None:
        return first
    catalogs = {v: sorted({d for p in probes for d in (p.catalogs or {}).get(v, [])}) for v in first.catalogs}
    parts = None
    if first.fingerprints is not None:
        parts = {
            v: {part: sorted({d for p in probes for d in (p.fingerprints or {}).get(v, {}).get(part, [])}) for part in first.fingerprints[v]}
            for v in first.fingerprints
        }
    return _distinct(Probed(catalogs, first.catalog_format, parts), agent, option)


def _distinct(probed: Probed, agent: str, option: str) -> Probed:
    found = probed.catalogs or {}
    names = list(found)
    for i, first in enumerate(names):
        second = next((other for other in names[i + 1 :] if set(found[first]) & set(found[other])), None)
        if second is not None:
            raise UsageProblem(same_on_the_wire(agent, first, second, probed.catalog_format), option=option)
    return probed


def probe_environments(tasks: Sequence[Task], images: Mapping[str, ContainerSpec]) -> list[tuple[Task, ContainerSpec | None]]:
    """Where the probe measures a client: as its attempts will run, on this machine (the
    first task without an image) and in each task image's container."""
    host = next((t for t in tasks if t.name not in images), None)
    return [*([(host, None)] if host is not None else []), *((t, images[t.name]) for t in tasks if t.name in images)]


def same_on_the_wire(agent: str, first: str, second: str, catalog_format: int) -> str:
    what, compared = ("wire fingerprint", f" (compared: {wire_fingerprint.COMPARED})") if catalog_format >= 3 else ("tool catalog", "")
    return (
        f"the {agent} agent sends the same {what} under {first} and {second}{compared}, so its variants apply no treatment the wire can tell apart; "
        f"give [variants.{first}] and [variants.{second}] settings the client sends differently"
    )


def variant_configs(profile: AgentProfile, variants: Sequence[str]) -> dict[str, str]:
    """Each of ``variants``' configs over the probe's empty base config, as the profile
    defines the variant (its disclosure profile, or none)."""
    base = parse_base_config(b"", "the probe's empty base config")
    return {v: render_config(base, v, variant_disclosure(profile, v)).text for v in variants}


def measure(
    profile: AgentProfile,
    *,
    model: str,
    task: Task,
    route: WireRoute,
    runner_python: str,
    timeout_s: float = PROBE_TIMEOUT_S,
    configs: Mapping[str, str] | None = None,
    container: ContainerSpec | None = None,
) -> dict[str, dict]:
    """{variant: the wire diagnostics of its replayed run}, for each variant of ``configs``
    (the built-in pair when None); ProbeFailed when a variant shows no catalog."""
    replayed = WireRoute(upstream=REPLAY, profile_python=route.profile_python, tokenizer_cache=route.tokenizer_cache)
    configs = variant_configs(profile, VARIANTS) if configs is None else configs
    found: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="campaign-probe-") as tmp:
        engine = make_engine(resolve_url(str(Path(tmp) / "probe.db")))
        try:
            upgrade_engine(engine)
            new = repository.NewCampaign(kind="paired", state="running", live=False, agent=profile.name, seed=0, experiment=experiment.probe())
            campaign_id = repository.create_campaign(engine, new, build_schedule([task.name], 1, seed=0, variants=list(configs)), model=model, default_provider=REPLAY)
            # The probe's own runs measure the catalogs: nothing to confirm yet (probe=True).
            source = AttemptSource(
                profile=profile, model=model, seed=0, timeout_s=timeout_s, configs=configs,
                python=runner_python, wire=replayed, probe=True, images={task.name: container} if container is not None else {},
            )  # fmt: skip
            for trial in repository.trials_in_order(engine, campaign_id):
                repository.admit_trial(engine, trial.id)
                plan = source.plan(task, trial.variant)
                outcome = run_attempt(engine, trial, plan)
                diagnostics = outcome.record.schema_diagnostics or {}
                digests = diagnostics.get("catalog_digests") or []
                if not outcome.cleanup_complete:
                    raise ProbeFailed(f"the {profile.name} probe under {trial.variant} left processes it could not prove gone; nothing was started")
                if not digests:
                    raise ProbeFailed(
                        f"the {profile.name} client sent no tool catalog under {trial.variant} against the replay provider "
                        f"(outcome {outcome.outcome}, {outcome.failure_class or 'no failure class'}); is it installed and does its profile reach {{proxy_url}}?"
                    )
                found[trial.variant] = diagnostics
        finally:
            engine.dispose()
    return {variant: found[variant] for variant in configs}  # in the experiment's order, not the run's




@dataclass(frozen=True)
class ProbeReport:
    agent: str
    client_version: str | None
    model: str
    measured: dict[str, dict]

    def differences(self) -> dict[str, list[str]]:
        """{candidate: the fingerprint parts in which it differs from the first variant}."""
        parts = {v: wire_fingerprint.variant_parts(d.get("fingerprints") or {}) for v, d in self.measured.items()}
        names = list(parts)
        return {v: wire_fingerprint.differing_parts(parts[names[0]], parts[v]) for v in names[1:]}


def run_probe(agent: str, model: str, task_name: str, environ: Mapping[str, str]) -> ProbeReport:
    """`campaign probe`: load the profile, check its wire, measure each variant's catalog."""
    profile = load_profile(agent)
    route = opt.parse_model(model)
    task = benchmark.builtin_suite().get(task_name, option="--task")
    provider = provider_for_route(load_catalog(), route.provider)
    if provider is None:
        raise UsageProblem(f"no provider of the built-in catalog takes the route {route.provider!r}; give --model PROVIDER:MODEL with one of its routes", option="--model")
    wire = resolve_route(profile, provider, profile_python=sys.executable, environ=environ, option="--agent")
    if wire is None:
        raise UsageProblem(f"the {profile.name} agent does not reach its model through {{proxy_url}}, so there is no wire to probe", option="--agent")
    seeds.check(profile, environ)
    version = read_client_version(profile, environ)
    configs = variant_configs(profile, run_variants(profile))
    return ProbeReport(profile.name, version, str(route), measure(profile, model=str(route), task=task, route=wire, runner_python=sys.executable, configs=configs))
