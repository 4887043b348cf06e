"""An agent profile, as the engine holds it: the launch recipe of one agent client.

A profile is a small TOML file, either built in (``campaign/agents/profiles/``)
or given as ``--agent FILE.toml``; ``profile_parse`` validates it into the
frozen ``AgentProfile`` below, where every field is documented, and
``profiles`` loads it and renders it for an attempt.

Argv templates use whole placeholders such as ``{prompt_file}``; rendering is a
single pass, so text substituted in (a prompt containing ``{cwd}``) is never
expanded again. ``{{`` and ``}}`` stand for literal braces.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal


# What each placeholder becomes; the engine supplies the values per attempt.
PLACEHOLDERS: Mapping[str, str] = {
    "prompt_file": "path of a file holding the task prompt",
    "prompt": "the task prompt itself, as one argument",
    "cwd": "the attempt's working copy of the fixture (also the client's cwd)",
    "config_path": "the variant's configuration TOML written for this attempt",
    "model": "the PROVIDER:MODEL route of the experiment",
    "model_provider": "the PROVIDER part of the route",
    "model_name": "the MODEL part of the route (what most third-party clients expect)",
    "python": "the runner's Python interpreter",
    "task": "the benchmark task name",
    "launcher": "the --launcher executable from the --source checkout",
    "trial_id": "the stable trial id (seeds the offline agent)",
    "seed": "the experiment seed",
    "runtime_port": "the loopback port the profile's runtime reported (runtime profiles only)",
    "proxy_url": "the attempt's recording proxy, http://127.0.0.1:PORT (using it turns the profiler on)",
}


_TOKEN = re.compile(r"\{\{|\}\}|\{([^{}]*)\}|[{}]")


@dataclass(frozen=True)
class HealthCheck:
    """How to tell the runtime is up: it prints its loopback port, then answers on it."""

    # tcp: the port accepts a connection; http: GET path returns 2xx; announced (the
    # engine's own servers on a socket it bound and handed over, maybe in a container's
    # namespace the runner cannot connect from): the announcement is the answer.
    kind: Literal["tcp", "http", "announced"]
    port_pattern: str  # regex over the runtime's stdout lines; group 1 is the port
    path: str | None = None  # http only, e.g. "/healthz"


@dataclass(frozen=True)
class RuntimeSpec:
    """A server booted fresh per attempt (binding loopback, port 0) before the client runs."""

    argv: tuple[str, ...]
    health: HealthCheck
    deadline_seconds: float


@dataclass(frozen=True)
class VariantTreatment:
    """What one named variant changes for this client ([variants.NAME])."""

    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    # (file under HOME, canonical JSON) deep-merged over the profile's own home_json.
    home_json: tuple[tuple[str, str], ...] = ()
    # The [runtime.tools.disclosure] profile its config applies; None: the built-in
    # variant's own (baseline: legacy, coding: coding), or none for another variant.
    disclosure: str | None = None


@dataclass(frozen=True)
class AgentProfile:
    name: str
    description: str
    # The client command; placeholders from PLACEHOLDERS.
    client: tuple[str, ...]
    # Output adapter name (see campaign.agents.adapters).
    adapter: str
    # Whether running it can spend money; unknown profiles are assumed paid.
    paid: bool
    runtime: RuntimeSpec | None
    # Globs relative to --source whose files form compiled_build_digest; may be empty.
    build_artifacts: tuple[str, ...]
    # (VARIABLE, default subdirectory of the original home), e.g. ("MIX_HOME", ".mix").
    sdk_path_vars: tuple[tuple[str, str], ...]
    # How the variant's config reaches the client: an env var holding its path,
    # and/or a flag appended to the client argv as [flag, path].
    config_env: str | None
    config_flag: str | None
    # "adapter": the output reports applied disclosure profiles; "wire": the recording
    # proxy confirms each variant by the tool catalog the client sent (expected
    # catalogs come from a probe against the replay provider); "none": this client
    # cannot show them, so no paired trial through it can confirm a variant.
    applied_profile_from: Literal["adapter", "wire", "none"]
    credential_env_default: str | None
    # Variables added to the client's allowlisted environment, VALUE templated with
    # PLACEHOLDERS (e.g. ANTHROPIC_BASE_URL = "{proxy_url}"), as sorted pairs.
    env: tuple[tuple[str, str], ...] = ()
    # Per variant ("baseline", "coding"): argv appended to the client command and
    # variables added to its environment; how a real client applies the treatment.
    variants: tuple[tuple[str, VariantTreatment], ...] = ()
    # A command whose first stdout line names the installed client's version; it is
    # bound into the experiment (an upgrade is a different experiment).
    client_version: tuple[str, ...] | None = None
    # Files written into the attempt's private HOME before the client starts, as
    # (path under HOME, canonical JSON of the TOML table); string leaves are templated
    # with PLACEHOLDERS. How a client that reads settings files is configured.
    home_json: tuple[tuple[str, str], ...] = ()
    # (directory under HOME, seed name): a directory copied fresh into each attempt's
    # HOME from the installed clients' seeds (campaign.agents.seeds), e.g. the plugin
    # a client would otherwise download at start.
    home_seed: tuple[tuple[str, str], ...] = ()
    # The variants a run of this profile compares when --variants is not given, in order
    # (an experiment file's own); None: every variant it defines.
    default_variants: tuple[str, ...] | None = None
    # Where the client's installation is, from the directory of its executable's real file
    # (found on this machine's PATH), e.g. ".." for a package's bin/: mounted read-only at
    # the same path when the client runs in a task's container. None: it cannot run in one.
    # Not in the profile's identity: where the client is installed is not what runs
    # (client_version binds that).
    container_install: str | None = None
    # Where the profile came from: None for built-ins, else the resolved file.
    path: Path | None = None
    # The --source tree the build-artifact globs are relative to.
    source: Path | None = None


def placeholders(template: Sequence[str]) -> set[str]:
    """The placeholders used in an argv template; ValueError on unknown or stray braces."""
    used: set[str] = set()
    for arg in template:
        for match in _TOKEN.finditer(arg):
            token, name = match.group(0), match.group(1)
            if token in ("{{", "}}"):
                continue
            if name is None:
                raise ValueError(f"stray brace in {arg!r} (write {{{{ or }}}} for a literal brace)")
            if name not in PLACEHOLDERS:
                raise ValueError(f"unknown placeholder {{{name}}}; known: {', '.join(sorted(PLACEHOLDERS))}")
            used.add(name)
    return used


def render(template: Sequence[str], values: Mapping[str, str]) -> list[str]:
    """Substitute placeholders in one pass; every placeholder used must have a value."""
    missing = placeholders(template) - set(values)
    if missing:
        raise ValueError(f"no value for placeholder(s): {', '.join(sorted(missing))}")

    def one(match: re.Match[str]) -> str:
        if match.group(1) is None:  # an escaped brace
            return match.group(0)[0]
        return str(values[match.group(1)])

    return [_TOKEN.sub(one, arg) for arg in template]


def json_strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from json_strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from json_strings(item)


def uses_wire(profile: AgentProfile) -> bool:
    """Whether the client reaches its model through the recording proxy (``{proxy_url}``)."""
    texts = [*profile.client, *(value for _, value in profile.env)]
    texts += [s for _, text in profile.home_json for s in json_strings(json.loads(text))]
    for _, t in profile.variants:
        texts += [*t.args, *(value for _, value in t.env)]
        texts += [s for _, text in t.home_json for s in json_strings(json.loads(text))]
    return "proxy_url" in placeholders(texts)
