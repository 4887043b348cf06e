"""The experiment: what a run must reproduce, in one home.

Two lanes bind one. The paired lanes bind a ``PairedExperiment``: the plan an operator
approves holds it, and it is stored without a ``kind``. The campaign lane binds a
``CampaignExperiment`` (``kind: "campaign"``), one entry per provider. Both name their
variants in order; the first is the baseline every other variant is compared with.

The JSON is the identity: its digest is the campaign row's ``experiment_digest`` and the
hash chain's genesis, and a plan's digest covers it. So each ``as_dict`` writes exactly
the fields an earlier engine wrote, an optional one absent (never null) when unset, and a
store or plan written before keeps its digest.

``Stored`` reads one back, whichever lane (or older engine) wrote it, for the store's
checks, the report, resume and workers: what it cannot read is None, never guessed.
``differences`` names, field by field, what a rerun would change.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from campaign.canonical import spec_digest
from campaign.errors import UsageProblem
from campaign.schedule import ScheduledTrial, build_schedule, schedule_rows, single_rows

# What each lane stores under ``kind`` (the paired lanes store none); ``lane_of``.
CAMPAIGN, NONPAIRED, PAIRED = "campaign", "nonpaired", "paired"
# Experiments that pin no schedule: a probe's and a task check's.
PROBE, TASK_CHECK = "probe", "task_check"


# A variant's name is an operator's id that reaches trial ids, the store and the reports:
# lower case, digits, '-' and '_', starting with a letter, short enough for a table.
VARIANT_NAME = re.compile(r"[a-z][a-z0-9_-]{0,31}")
VARIANT_NAME_RULE = "a lower-case letter, then lower-case letters, digits, '-' or '_', at most 32 characters"
# The most variants one experiment compares (the report lists each with its comparison).
MAX_VARIANTS = 8


def variant_names(value: str | None, defined: Sequence[str], *, option: str = "--variants", by: str = "the agent profile") -> tuple[str, ...]:
    """The variants ``value`` (``A,B,C``) picks, in its order, the first the baseline; all of
    ``defined`` in their order when it is None. One line naming what is wrong otherwise."""
    if value is None:
        return tuple(defined)
    names = tuple(v.strip() for v in value.split(","))
    for name in names:
        if not VARIANT_NAME.fullmatch(name):
            shown = repr(name) if len(name) <= 40 else repr(name[:40] + "...")
            raise UsageProblem(f"{shown} is not a variant name: {VARIANT_NAME_RULE}", option=option)
    repeated = next((n for i, n in enumerate(names) if n in names[:i]), None)
    if repeated is not None:
        raise UsageProblem(f"variant {repeated} is listed twice; each variant runs once per pair", option=option)
    if len(names) < 2:
        raise UsageProblem(f"a paired comparison needs at least two variants, the first the baseline; got {value!r}", option=option)
    if len(names) > MAX_VARIANTS:
        raise UsageProblem(f"{len(names)} variants: one experiment compares at most {MAX_VARIANTS}", option=option)
    unknown = next((n for n in names if n not in defined), None)
    if unknown is not None:
        raise UsageProblem(f"unknown variant {unknown}: {by} defines {', '.join(defined)}", option=option)
    return names


@dataclass(frozen=True)
class Variant:
    """A named treatment, as the experiment binds it."""

    name: str
    overlay_digest: str  # SHA-256 of the appended [runtime.tools.disclosure] text
    config_digest: str  # SHA-256 of the rendered variant config (base + overlay)

    def as_dict(self) -> dict[str, str]:
        return asdict(self)


class _Variants:
    """What both experiment types say about their variants (the first is the baseline)."""

    variants: tuple[Variant, ...]

    @property
    def variant_names(self) -> tuple[str, ...]:
        return tuple(v.name for v in self.variants)

    @property
    def baseline(self) -> Variant:
        return self.variants[0]

    @property
    def candidates(self) -> tuple[Variant, ...]:
        return self.variants[1:]


@dataclass(frozen=True)
class PairedExperiment(_Variants):
    """Everything a live paired run must reproduce exactly; compared field by field.

    The spec's fields, plus the agent: its profile name, the digest of the
    profile's settings (a custom FILE.toml can change the client command), and
    the launcher as a path relative to the source with its content digest (an
    ignored, locally built launcher is not covered by the source digest).
    """

    agent: str
    agent_profile_digest: str
    launcher: str | None
    launcher_digest: str | None
    tasks: tuple[str, ...]
    model: str
    revision: str | None
    source_digest: str
    compiled_build_digest: str
    repetitions: int
    seed: int
    timeout: int
    run_timeout: int
    variants: tuple[Variant, ...]
    config_digest: str
    fixture_digests: Mapping[str, str]
    profile_python_digest: str
    # Where the recording proxy forwards model requests (wire profiles only).
    wire_upstream: str | None = None
    # The installed client's version (profiles with client_version).
    client_version: str | None = None
    # applied_profile_from = "wire": {variant: catalog digests} measured by the probe.
    wire_catalogs: Mapping[str, list[str]] | None = None
    # Their digest format (profiler.wire.CATALOG_DIGEST_KEYS); None is format 1, the one
    # plans approved before format 2 were bound with.
    wire_catalog_format: int | None = None
    # From format 3: {variant: {part: digests}}, each variant's fingerprint part by part
    # (profiler.fingerprint), so a reader sees what each treatment changed on the wire.
    wire_fingerprints: Mapping[str, Mapping[str, list[str]]] | None = None
    # Variants outside the built-in pair: {variant: what its attempts must be seen to apply}
    # (profiles.confirmation_label), so the report can tell each trial's confirmation.
    confirmed_as: Mapping[str, str] | None = None
    # --task-suite: its name, each task's digest, their digest, and the tasks never checked.
    task_suite: Mapping[str, Any] | None = None
    # The providers catalog whose prices cost a client that reports none (and whose
    # silence bound the proxy keeps): a plan approved under one catalog runs under it.
    pricing_catalog_digest: str | None = None

    def as_dict(self) -> dict[str, Any]:
        # Field order is the plan template's (written unsorted for the reviewer).
        data = asdict(self)
        for optional in ("wire_upstream", "client_version", "wire_catalogs", "wire_catalog_format", "wire_fingerprints", "confirmed_as", "task_suite", "pricing_catalog_digest"):
            if data[optional] is None:  # absent, so experiments without them keep their digest
                del data[optional]
        data["tasks"] = list(self.tasks)
        data["variants"] = [v.as_dict() for v in self.variants]
        data["fixture_digests"] = dict(sorted(self.fixture_digests.items()))
        return data

    def schedule(self) -> tuple[ScheduledTrial, ...]:
        return build_schedule(self.tasks, self.repetitions, self.seed, self.variant_names)


@dataclass(frozen=True)
class ProviderBinding:
    """One provider of a campaign: its route, agent and what its probe measured."""

    name: str
    model: str
    agent: str
    agent_profile_digest: str
    credential_env: str | None
    basis: str
    # Each only where it applies, so campaigns without it keep their identity.
    wire_upstream: str | None = None
    client_version: str | None = None
    wire_catalogs: Mapping[str, list[str]] | None = None
    wire_catalog_format: int | None = None
    wire_fingerprints: Mapping[str, Mapping[str, list[str]]] | None = None
    confirmed_as: Mapping[str, str] | None = None

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        for optional in ("wire_upstream", "client_version", "wire_catalogs", "wire_catalog_format", "wire_fingerprints", "confirmed_as"):
            if not data[optional]:  # an empty catalog map or format 0 was never written either
                del data[optional]
        return data


@dataclass(frozen=True)
class CampaignExperiment(_Variants):
    """Everything a resume or a joining worker must reproduce; compared field by field."""

    agent: str  # the providers' one agent, or "custom"
    model: str | None  # the one provider's PROVIDER:MODEL; None for several
    providers: tuple[ProviderBinding, ...]
    pricing_catalog_digest: str
    tasks: tuple[str, ...]
    variants: tuple[Variant, ...]
    repetitions: int
    seed: int
    timeout: int
    config_digest: str
    fixture_digests: Mapping[str, str]
    control_plane_port: int | None
    # Only on a rehearsal, so the campaigns before that option keep their identity.
    rehearsal: bool = False
    # Only for --task-suite, so campaigns of the built-in tasks keep their identity.
    task_suite: Mapping[str, Any] | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": CAMPAIGN,
            "agent": self.agent,
            "model": self.model,
            "providers": [p.as_dict() for p in self.providers],
            "pricing_catalog_digest": self.pricing_catalog_digest,
            "tasks": list(self.tasks),
            "variants": [v.as_dict() for v in self.variants],
            "repetitions": self.repetitions,
            "seed": self.seed,
            "timeout": self.timeout,
            "config_digest": self.config_digest,
            "fixture_digests": dict(self.fixture_digests),
            "control_plane_port": self.control_plane_port,
            **({"rehearsal": True} if self.rehearsal else {}),
            **({"task_suite": dict(self.task_suite)} if self.task_suite else {}),
        }


def nonpaired(agent: str, model: str, tasks: Sequence[str], timeout: int, task_suite: Mapping[str, Any] | None) -> dict[str, Any]:
    """A nonpaired run's: one trial per task, no variants."""
    data: dict[str, Any] = {"kind": NONPAIRED, "agent": agent, "model": model, "tasks": list(tasks), "timeout": timeout}
    if task_suite is not None:  # only then, so runs of the built-in tasks keep their identity
        data["task_suite"] = task_suite
    return data


def probe() -> dict[str, Any]:
    """A probe's: it binds nothing a later run reproduces (its catalogs go into the run's own)."""
    return {"kind": PROBE}


def task_check(suite: str) -> dict[str, Any]:
    return {"kind": TASK_CHECK, "suite": suite}


def digest(experiment: PairedExperiment | CampaignExperiment | Mapping[str, Any]) -> str:
    """The experiment's canonical digest (the spec's canonical JSON, SHA-256)."""
    return spec_digest(experiment if isinstance(experiment, Mapping) else experiment.as_dict())


# --- comparing --------------------------------------------------------------


def differences(bound: Any, current: Mapping[str, Any]) -> list[str]:
    """The fields of ``current`` that differ from the ``bound`` experiment's, in key order;
    inside ``providers``, each provider's own (``providers[zai].client_version``), inside
    ``task_suite`` each task (``task_suite.tasks[NAME]``), so the operator sees what changed."""
    if not isinstance(bound, Mapping):
        return sorted(current)
    out: list[str] = []
    for key in sorted(set(bound) | set(current)):
        before, now = bound.get(key), current.get(key)
        if key == "task_suite":
            out += suite_differences(before, now)
            continue
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


def suite_differences(before: Any, now: Any) -> list[str]:
    """What differs between two ``task_suite`` entries, naming each changed task
    (``task_suite.tasks[NAME]``). Only what the trials run is compared: ``unchecked``
    records what was known when the run started and may differ."""
    if not isinstance(before, Mapping) or not isinstance(now, Mapping):
        return [] if before == now else ["task_suite"]
    out = ["task_suite.name"] if before.get("name") != now.get("name") else []
    old, new = before.get("tasks") or {}, now.get("tasks") or {}
    out += [f"task_suite.tasks[{name}]" for name in sorted(set(old) | set(new)) if old.get(name) != new.get(name)]
    if not out and before.get("digest") != now.get("digest"):
        out.append("task_suite.digest")
    return out


# --- reading a stored one ---------------------------------------------------


def parse(text: str | bytes | None) -> dict[str, Any] | None:
    """The stored JSON object, or None where the text is not one (an edited row)."""
    try:
        value = json.loads(text) if text else None
    except (TypeError, ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def lane_of(data: Mapping[str, Any]) -> str | None:
    """Which lane stored this experiment: the paired lanes store no ``kind``."""
    kind = data.get("kind")
    if kind is None:
        return PAIRED if "variants" in data else None
    return kind if isinstance(kind, str) else None


@dataclass(frozen=True)
class Stored:
    """A stored experiment as its readers need it; None wherever it records nothing readable."""

    data: Mapping[str, Any]

    @property
    def lane(self) -> str | None:
        return lane_of(self.data)

    @property
    def variant_names(self) -> tuple[str, ...] | None:
        variants = self.data.get("variants")
        if not isinstance(variants, list) or not all(isinstance(v, dict) and isinstance(v.get("name"), str) for v in variants):
            return None
        return tuple(v["name"] for v in variants)

    @property
    def config_digests(self) -> dict[str, str]:
        """Each variant's config digest (empty where it records none, as a nonpaired run's)."""
        variants = self.data.get("variants")
        if not isinstance(variants, list):
            return {}
        return {v.get("name"): v["config_digest"] for v in variants if isinstance(v, dict) and v.get("config_digest") is not None}

    @property
    def fixture_digests(self) -> dict[str, Any]:
        fixtures = self.data.get("fixture_digests")
        return dict(fixtures) if isinstance(fixtures, dict) else {}

    @property
    def providers(self) -> list[dict[str, Any]]:
        providers = self.data.get("providers")
        return [p for p in providers if isinstance(p, dict)] if isinstance(providers, list) else []

    def schedule(self) -> StoredSchedule | None:
        """The schedule the engine built from this experiment, as each lane stores it; None
        for an experiment that fixes none (a probe's, a task check's) or that no lane wrote.

        The experiment is pinned by its digest, which is the chain's genesis, so the trial
        rows, which are outside the chain, are pinned through it: an edited variant, task
        or provider no longer matches the schedule the experiment rebuilds."""
        try:
            return _stored_schedule(self.data, self.lane)
        except (KeyError, TypeError, ValueError, AttributeError, IndexError):
            return None  # not the shape any lane stores: nothing to rebuild


def read(text: str | bytes | None) -> Stored | None:
    data = parse(text)
    return Stored(data) if data is not None else None


@dataclass(frozen=True)
class StoredSchedule:
    """What a stored experiment fixes about its campaign's trial rows."""

    kind: str  # the campaigns.kind the engine stores such an experiment under
    rows: list[tuple[Any, ...]]  # schedule_rows: in position order
    model: str  # the trial rows' model (a campaign of several providers: the first's)
    provider: str | None  # a one-provider lane's: the provider of the rows that name none
    # A campaign of several providers: each one's own model, which its trial rows carry
    # (stores written before carry the first provider's model on every row instead).
    provider_models: Mapping[str, str] | None = None


def stored_schedule(experiment: Mapping[str, Any]) -> StoredSchedule | None:
    return Stored(experiment).schedule()


def _stored_schedule(e: Mapping[str, Any], lane: str | None) -> StoredSchedule | None:
    if lane == CAMPAIGN:  # every provider's trials
        names = [p["name"] for p in e["providers"]]
        rows = schedule_rows(e["tasks"], e["repetitions"], e["seed"], [v["name"] for v in e["variants"]], names)
        models = {p["name"]: _text(p["model"]) for p in e["providers"]}
        return StoredSchedule(CAMPAIGN, rows, models[names[0]], None, models)
    if lane == NONPAIRED:
        return _one_provider(NONPAIRED, single_rows(e["tasks"]), e["model"])
    if lane == PAIRED:
        return _one_provider(PAIRED, schedule_rows(e["tasks"], e["repetitions"], e["seed"], [v["name"] for v in e["variants"]]), e["model"])
    return None


def _one_provider(kind: str, rows: list[tuple[Any, ...]], model: Any) -> StoredSchedule:
    """A one-provider lane's trials run on the provider its PROVIDER:MODEL names."""
    return StoredSchedule(kind, rows, _text(model), _text(model).partition(":")[0])


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError("not text")
    return value


__all__: Sequence[str] = (
    "CAMPAIGN", "NONPAIRED", "PAIRED", "PROBE", "TASK_CHECK", "VARIANT_NAME", "MAX_VARIANTS", "variant_names",
    "Variant", "PairedExperiment", "ProviderBinding", "CampaignExperiment", "nonpaired", "probe", "task_check", "digest", "differences", "suite_differences",
    "parse", "lane_of", "read", "Stored", "StoredSchedule", "stored_schedule",
)  # fmt: skip
