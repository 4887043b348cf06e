"""Agent profiles: how the engine launches one agent client and reads its output.

A profile is a small TOML file, either built in (``campaign/agents/profiles/``)
or given as ``--agent FILE.toml``. It is validated strictly: an unknown key, an
unknown placeholder or a missing config delivery is an error at load time, not a
surprise in the middle of a paid run. Every field is documented on
``AgentProfile``; ``profiles/generic.toml`` is a commented example.

Argv templates use whole placeholders such as ``{prompt_file}``; rendering is a
single pass, so text substituted in (a prompt containing ``{cwd}``) is never
expanded again. ``{{`` and ``}}`` stand for literal braces.
"""

from __future__ import annotations

import glob
import json
import math
import os
import re
import tomllib
import dataclasses
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Iterator, Literal, Mapping, Sequence

from campaign.vocabulary import VARIANTS
from campaign import inputs
from campaign.canonical import spec_json
from campaign.agents.adapters import adapter_names
from campaign.errors import UsageProblem

PROFILES_DIR = Path(__file__).resolve().parent / "profiles"
_OPTION = "--agent"

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
# Variables a profile's [env] may not set: the engine owns them, or they carry credentials
# (only the approved plan may forward a credential, and never as a profile literal).
_ENGINE_VARS = frozenset({"HOME", "TMPDIR", "PATH", "LANG", "LC_ALL"})
_TOKEN = re.compile(r"\{\{|\}\}|\{([^{}]*)\}|[{}]")
_ENV_NAME = re.compile(r"^[A-Z][A-Z0-9_]*$")
_CREDENTIAL = re.compile(r"^[A-Z][A-Z0-9_]*(API_KEY|ACCESS_TOKEN|AUTH_TOKEN)$")
_PROFILE_NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,63}$")


@dataclass(frozen=True)
class HealthCheck:
    """How to tell the runtime is up: it prints its loopback port, then answers on it."""

    kind: Literal["tcp", "http"]  # tcp: the port accepts a connection; http: GET path returns 2xx
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
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    # (file under HOME, canonical JSON) deep-merged over the profile's own home_json.
    home_json: tuple[tuple[str, str], ...] = ()




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
    # Where the profile came from: None for built-ins, else the resolved file.
    path: Path | None = None
    # The --source tree the build-artifact globs are relative to.
    source: Path | None = None


def builtin_profile_names() -> tuple[str, ...]:
    return tuple(sorted(p.stem for p in PROFILES_DIR.glob("*.toml")))


def names_a_file(name_or_path: str) -> bool:
    """Whether ``--agent`` names a profile file (a ``.toml`` name or a path) rather than a built-in."""
    return name_or_path.endswith(".toml") or os.sep in name_or_path


def load_profile(name_or_path: str, source: Path | None = None) -> AgentProfile:
    """A built-in profile by name, or a profile from a ``.toml`` file (relative to the cwd)."""
    is_file = names_a_file(name_or_path)
    if is_file:
        given = Path(name_or_path).expanduser()
        text = inputs.read_text(given, _OPTION, "agent profile")
        path = given.resolve()
    else:
        if name_or_path not in builtin_profile_names():
            known = ", ".join(builtin_profile_names())
            message = f"unknown agent {name_or_path!r}; built-ins: {known}; or give a FILE.toml"
            raise UsageProblem(message, option=_OPTION)
        path = PROFILES_DIR / f"{name_or_path}.toml"
        text = path.read_text(encoding="utf-8")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UsageProblem(f"cannot read agent profile {name_or_path}: {exc}", option=_OPTION) from exc
    try:
        profile = parse_profile(data, default_name=path.stem)
    except ValueError as exc:
        raise UsageProblem(f"agent profile {name_or_path}: {exc}", option=_OPTION) from exc
    bound_source = Path(source).resolve() if source is not None else None
    return replace(profile, path=path if is_file else None, source=bound_source)


# --- validation -------------------------------------------------------------------


_TOP_KEYS = {
    "name", "description", "client", "adapter", "paid", "runtime", "build_artifacts", "sdk_path_vars",
    "config_env", "config_flag", "applied_profile_from", "credential_env_default", "env", "variants", "client_version",
    "home_json", "home_seed",
}


def parse_profile(data: Mapping[str, Any], default_name: str) -> AgentProfile:
    """Validate a profile table; ValueError names the first thing wrong."""
    _no_unknown_keys(data, _TOP_KEYS, "")
    name = _opt(data, "name", str, default_name)
    if not _PROFILE_NAME.match(name):
        raise ValueError(f"name {name!r} must be lowercase letters, digits, '.', '_' or '-'")
    runtime = _runtime(data["runtime"]) if "runtime" in data else None
    client = _argv(data.get("client"), "client", allow_runtime_port=runtime is not None)
    adapter = _opt(data, "adapter", str, None)
    if adapter not in adapter_names():
        raise ValueError(f"adapter must be one of {', '.join(adapter_names())}, got {adapter!r}")
    config_env = _opt(data, "config_env", str, None)
    config_flag = _opt(data, "config_flag", str, None)
    if config_env is not None and not _ENV_NAME.match(config_env):
        raise ValueError(f"config_env {config_env!r} is not an environment variable name")
    if config_flag is not None and not config_flag.startswith("-"):
        raise ValueError(f"config_flag {config_flag!r} must be an option such as --config")
    if config_env is None and config_flag is None and "config_path" not in placeholders(client):
        # Without this the profile gate would check a config the client never reads.
        raise ValueError("the variant config cannot reach the client: set config_env, config_flag or use {config_path}")
    applied_from = _opt(data, "applied_profile_from", str, "adapter")
    if applied_from not in ("adapter", "wire", "none"):
        raise ValueError(f"applied_profile_from must be 'adapter', 'wire' or 'none', got {applied_from!r}")
    credential = _opt(data, "credential_env_default", str, None)
    if credential is not None and not _CREDENTIAL.match(credential):
        raise ValueError(
            f"credential_env_default {credential!r} must be an uppercase name ending in API_KEY, ACCESS_TOKEN or AUTH_TOKEN"
        )
    globs = data.get("build_artifacts", [])
    profile = AgentProfile(
        name=name,
        description=_opt(data, "description", str, ""),
        client=client,
        adapter=adapter,
        paid=_opt(data, "paid", bool, True),
        runtime=runtime,
        build_artifacts=tuple(_relative(g, "build_artifacts") for g in _str_list(globs, "build_artifacts")),
        sdk_path_vars=_sdk_vars(data.get("sdk_path_vars", {})),
        config_env=config_env,
        config_flag=config_flag,
        applied_profile_from=applied_from,  # type: ignore[arg-type]
        credential_env_default=credential,
        env=_env(data.get("env", {}), allow_runtime_port=runtime is not None),
        variants=_variants(data.get("variants", {}), allow_runtime_port=runtime is not None),
        client_version=None if "client_version" not in data else _argv(data["client_version"], "client_version", allow_runtime_port=False),
        home_json=_home_json(data.get("home_json", {}), "home_json", allow_runtime_port=runtime is not None),
        home_seed=_home_seed(data.get("home_seed", {})),
    )
    if profile.applied_profile_from == "wire" and not uses_wire(profile):
        raise ValueError('applied_profile_from = "wire" needs the client to reach its model through {proxy_url}')
    if profile.client_version is not None and placeholders(profile.client_version):
        raise ValueError("client_version must be a plain command without placeholders")
    return profile


def _variants(table: Any, *, allow_runtime_port: bool) -> tuple[tuple[str, VariantTreatment], ...]:
    if not isinstance(table, dict):
        raise ValueError("variants must be a table with [variants.baseline] and/or [variants.coding]")
    _no_unknown_keys(table, set(VARIANTS), "variants.")
    out = []
    for name in VARIANTS:
        if name not in table:
            continue
        entry = table[name]
        if not isinstance(entry, dict):
            raise ValueError(f"variants.{name} must be a table")
        _no_unknown_keys(entry, {"args", "env", "home_json"}, f"variants.{name}.")
        args = entry.get("args", [])
        if args:
            args = _argv(args, f"variants.{name}.args", allow_runtime_port=allow_runtime_port)
        elif not isinstance(args, list):
            raise ValueError(f"variants.{name}.args must be a list of strings")
        env = _env(entry.get("env", {}), allow_runtime_port=allow_runtime_port)
        home = _home_json(entry.get("home_json", {}), f"variants.{name}.home_json", allow_runtime_port=allow_runtime_port)
        out.append((name, VariantTreatment(args=tuple(args), env=env, home_json=home)))
    return tuple(out)


def _env(table: Any, *, allow_runtime_port: bool) -> tuple[tuple[str, str], ...]:
    if not isinstance(table, dict):
        raise ValueError('env must be a table of VARIABLE = "value with {placeholders}"')
    out = []
    for var, value in sorted(table.items()):
        if not _ENV_NAME.match(var) or not isinstance(value, str):
            raise ValueError(f"env.{var} must map an uppercase variable to a string")
        if var in _ENGINE_VARS:
            raise ValueError(f"env.{var} is set by the engine for every attempt; a profile cannot change it")
        if _CREDENTIAL.match(var):
            raise ValueError(f"env.{var} looks like a credential; name it in the plan's credential_env instead")
        _argv([value or " "], f"env.{var}", allow_runtime_port=allow_runtime_port)
        out.append((var, value))
    return tuple(out)


def _home_json(table: Any, where: str, *, allow_runtime_port: bool) -> tuple[tuple[str, str], ...]:
    if not isinstance(table, dict):
        raise ValueError(f'{where} must be a table of "path under HOME" = {{ a TOML table written as JSON }}')
    out = []
    for rel, content in sorted(table.items()):
        _relative(rel, f"{where}.{rel}")
        if not isinstance(content, dict):
            raise ValueError(f"{where}.{rel} must be a table (it is written as a JSON object)")
        strings = list(_json_strings(content))
        if strings:
            _argv(strings, f"{where}.{rel}", allow_runtime_port=allow_runtime_port)
        out.append((rel, spec_json(content)))
    return tuple(out)


def _json_strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _json_strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _json_strings(item)


def _home_seed(table: Any) -> tuple[tuple[str, str], ...]:
    if not isinstance(table, dict):
        raise ValueError('home_seed must be a table of "directory under HOME" = "seed name"')
    out = []
    for rel, name in sorted(table.items()):
        _relative(rel, f"home_seed.{rel}")
        if not (isinstance(name, str) and _PROFILE_NAME.match(name)):
            raise ValueError(f"home_seed.{rel} must name a seed (lowercase letters, digits, '.', '_' or '-')")
        out.append((rel, name))
    return tuple(out)


def _runtime(table: Any) -> RuntimeSpec:
    if not isinstance(table, dict):
        raise ValueError("runtime must be a table")
    _no_unknown_keys(table, {"argv", "health", "deadline_seconds"}, "runtime.")
    deadline = table.get("deadline_seconds")
    numeric = isinstance(deadline, (int, float)) and not isinstance(deadline, bool)
    if not (numeric and math.isfinite(deadline) and deadline > 0):
        raise ValueError("runtime.deadline_seconds must be a positive number")
    health = table.get("health")
    if not isinstance(health, dict):
        raise ValueError("runtime.health must be a table")
    _no_unknown_keys(health, {"kind", "port_pattern", "path"}, "runtime.health.")
    kind = health.get("kind")
    if kind not in ("tcp", "http"):
        raise ValueError("runtime.health.kind must be 'tcp' or 'http'")
    pattern = health.get("port_pattern")
    try:
        groups = re.compile(pattern).groups if isinstance(pattern, str) else 0
    except re.error as exc:
        raise ValueError(f"runtime.health.port_pattern is not a regex: {exc}") from exc
    if groups < 1:
        raise ValueError("runtime.health.port_pattern needs a group capturing the port")
    path = health.get("path")
    if kind == "http" and not (isinstance(path, str) and path.startswith("/")):
        raise ValueError("runtime.health.path must start with '/' for an http check")
    if kind == "tcp" and path is not None:
        raise ValueError("runtime.health.path only applies to an http check")
    return RuntimeSpec(
        argv=_argv(table.get("argv"), "runtime.argv", allow_runtime_port=False),
        health=HealthCheck(kind=kind, port_pattern=pattern, path=path),
        deadline_seconds=float(deadline),
    )


def _argv(value: Any, where: str, *, allow_runtime_port: bool) -> tuple[str, ...]:
    argv = _str_list(value, where)
    if not argv or not argv[0]:
        raise ValueError(f"{where} must be a non-empty list of strings")
    try:
        used = placeholders(argv)
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from exc
    if "runtime_port" in used and not allow_runtime_port:
        raise ValueError(f"{where}: {{runtime_port}} needs a [runtime] that reports one")
    return tuple(argv)


def _sdk_vars(table: Any) -> tuple[tuple[str, str], ...]:
    if not isinstance(table, dict):
        raise ValueError("sdk_path_vars must be a table of VARIABLE = \"subdir of the original home\"")
    out = []
    for var, subdir in sorted(table.items()):
        if not _ENV_NAME.match(var) or not isinstance(subdir, str):
            raise ValueError(f"sdk_path_vars.{var} must map an uppercase variable to a string")
        out.append((var, _relative(subdir, f"sdk_path_vars.{var}")))
    return tuple(out)


def _relative(value: str, where: str) -> str:
    """A non-empty relative path that cannot climb out of its base directory."""
    if not value or value.startswith(("/", "~")) or ".." in Path(value).parts:
        raise ValueError(f"{where}: {value!r} must be a relative path without '..'")
    return value


def _str_list(value: Any, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{where} must be a list of strings")
    return value


def _opt(data: Mapping[str, Any], key: str, kind: type, default: Any) -> Any:
    if key not in data:
        return default
    value = data[key]
    if not isinstance(value, kind):
        raise ValueError(f"{key} must be a {kind.__name__}")
    return value


def _no_unknown_keys(table: Mapping[str, Any], allowed: set[str], prefix: str) -> None:
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise ValueError(f"unknown key {prefix}{unknown[0]} (allowed: {', '.join(sorted(allowed))})")


# --- templates --------------------------------------------------------------------


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


def treatment(profile: AgentProfile, variant: str | None) -> VariantTreatment:
    """The profile's treatment for a variant (nothing for the nonpaired lane or an unset one)."""
    return dict(profile.variants).get(variant or "", VariantTreatment())


def client_argv(profile: AgentProfile, values: Mapping[str, str], variant: str | None = None) -> list[str]:
    """The client command for one attempt: the variant's args, then the config flag if declared."""
    argv = render(profile.client, values) + render(treatment(profile, variant).args, values)
    if profile.config_flag is not None:
        argv += [profile.config_flag, str(values["config_path"])]
    return argv


def client_env(profile: AgentProfile, config_path: Path | None, values: Mapping[str, str] | None = None, variant: str | None = None) -> dict[str, str]:
    """Variables the profile (and the variant's treatment) add to the allowlisted environment."""
    pairs = [*profile.env, *treatment(profile, variant).env]
    env = {var: render([value], values or {})[0] for var, value in pairs}
    if profile.config_env and config_path is not None:
        env[profile.config_env] = str(config_path)
    return env


def home_files(profile: AgentProfile, values: Mapping[str, str], variant: str | None = None) -> dict[str, bytes]:
    """{path under HOME: bytes} for one attempt: each home_json file with the variant's
    own table deep-merged over it, string leaves rendered with ``values``."""
    files = {rel: json.loads(text) for rel, text in profile.home_json}
    for rel, text in treatment(profile, variant).home_json:
        files[rel] = _merged(files.get(rel, {}), json.loads(text))
    return {rel: (json.dumps(_rendered(content, values), indent=2, sort_keys=True) + "\n").encode("utf-8") for rel, content in files.items()}


def _merged(base: Any, over: Any) -> Any:
    if isinstance(base, dict) and isinstance(over, dict):
        return {**base, **{k: _merged(base.get(k), v) for k, v in over.items()}}
    return over


def _rendered(value: Any, values: Mapping[str, str]) -> Any:
    if isinstance(value, str):
        return render([value], values)[0]
    if isinstance(value, dict):
        return {render([k], values)[0]: _rendered(v, values) for k, v in value.items()}
    if isinstance(value, list):
        return [_rendered(v, values) for v in value]
    return value


def uses_wire(profile: AgentProfile) -> bool:
    """Whether the client reaches its model through the recording proxy (``{proxy_url}``)."""
    texts = [*profile.client, *(value for _, value in profile.env)]
    texts += [s for _, text in profile.home_json for s in _json_strings(json.loads(text))]
    for _, t in profile.variants:
        texts += [*t.args, *(value for _, value in t.env)]
        texts += [s for _, text in t.home_json for s in _json_strings(json.loads(text))]
    return "proxy_url" in placeholders(texts)


# --- source-relative facts --------------------------------------------------------


def build_artifact_paths(profile: AgentProfile, source: Path | None = None) -> list[Path]:
    """Files matched by the build-artifact globs under ``source``, sorted, never outside it."""
    base = Path(source or profile.source or ".").resolve()
    found: set[Path] = set()
    for pattern in profile.build_artifacts:
        for match in glob.glob(pattern, root_dir=base, recursive=True):
            path = (base / match).resolve()
            if path.is_file() and path.is_relative_to(base):
                found.add(path)
    return sorted(found)


def sdk_paths(profile: AgentProfile, environ: Mapping[str, str], home: Path, cwd: Path) -> dict[str, str]:
    """SDK locations fixed before HOME is replaced (spec: Pairing and isolation).

    An explicit value wins, resolved against the original cwd (``~`` against the
    original home); otherwise the default subdirectory of the original home.
    """
    out = {}
    for var, default in profile.sdk_path_vars:
        explicit = environ.get(var)
        if explicit:
            path = Path(home, explicit[2:]) if explicit == "~" or explicit.startswith("~/") else Path(cwd, explicit)
        else:
            path = Path(home, default)
        out[var] = os.path.normpath(path)
    return out


def profile_identity(profile: AgentProfile) -> dict[str, Any]:
    """The profile as plain JSON, for the experiment identity (no paths)."""
    runtime = profile.runtime
    identity = {
        "name": profile.name,
        "client": list(profile.client),
        "adapter": profile.adapter,
        "paid": profile.paid,
        "runtime": None
        if runtime is None
        else {
            "argv": list(runtime.argv),
            "health": dataclasses.asdict(runtime.health),
            "deadline_seconds": runtime.deadline_seconds,
        },
        "build_artifacts": list(profile.build_artifacts),
        "sdk_path_vars": [list(pair) for pair in profile.sdk_path_vars],
        "config_env": profile.config_env,
        "config_flag": profile.config_flag,
        "applied_profile_from": profile.applied_profile_from,
        "credential_env_default": profile.credential_env_default,
    }
    # Only when set, so profiles without them keep their earlier identity.
    if profile.env:
        identity["env"] = [list(pair) for pair in profile.env]
    if profile.variants:
        identity["variants"] = {
            name: {"args": list(t.args), "env": [list(p) for p in t.env], **({"home_json": [list(p) for p in t.home_json]} if t.home_json else {})}
            for name, t in profile.variants
        }
    if profile.home_json:
        identity["home_json"] = [list(pair) for pair in profile.home_json]
    if profile.home_seed:
        identity["home_seed"] = [list(pair) for pair in profile.home_seed]
    if profile.client_version is not None:
        identity["client_version_command"] = list(profile.client_version)
    return identity
