"""Validating an agent profile's TOML table: strict, so a mistake is found at load time.

An unknown key, an unknown placeholder, a missing config delivery or a literal
credential is a ``ValueError`` naming the first thing wrong, not a surprise in
the middle of a paid run.
"""

from __future__ import annotations

import math
import posixpath
import re
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from campaign.agents.adapters import adapter_names
from campaign.agents.profile_model import AgentProfile, HealthCheck, RuntimeSpec, VariantTreatment, json_strings, placeholders, uses_wire
from campaign.canonical import spec_json
from campaign.errors import UsageProblem
from campaign.experiment import MAX_VARIANTS, VARIANT_NAME, VARIANT_NAME_RULE, variant_names
from campaign.vocabulary import DISCLOSURE_PROFILES, VARIANT_PROFILES, VARIANTS


# Variables a profile's [env] may not set: the engine owns them, or they carry credentials
# (only the approved plan may forward a credential, and never as a profile literal).
_ENGINE_VARS = frozenset({"HOME", "TMPDIR", "PATH", "LANG", "LC_ALL"})


_ENV_NAME = re.compile(r"^[A-Z][A-Z0-9_]*$")


_CREDENTIAL = re.compile(r"^[A-Z][A-Z0-9_]*(API_KEY|ACCESS_TOKEN|AUTH_TOKEN)$")


_PROFILE_NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,63}$")


_TOP_KEYS = {
    "name", "description", "client", "adapter", "paid", "runtime", "build_artifacts", "sdk_path_vars",
    "config_env", "config_flag", "applied_profile_from", "credential_env_default", "env", "variants", "client_version",
    "home_json", "home_seed", "default_variants", "container_install",
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
        container_install=_container_install(data),
    )
    if "default_variants" in data:
        profile = replace(profile, default_variants=_default_variants(data["default_variants"], profile))
    if profile.applied_profile_from == "wire" and not uses_wire(profile):
        raise ValueError('applied_profile_from = "wire" needs the client to reach its model through {proxy_url}')
    if profile.client_version is not None and placeholders(profile.client_version):
        raise ValueError("client_version must be a plain command without placeholders")
    return profile


def _container_install(data: Mapping[str, Any]) -> str | None:
    value = _opt(data, "container_install", str, None)
    if value is None:
        return None
    path = posixpath.normpath(value)
    if posixpath.isabs(value) or any(part != ".." for part in path.split("/") if part != "."):
        raise ValueError(f"container_install {value!r} must be '.' or '..' steps up from the client executable's directory, e.g. \"..\"")
    return path


def _variants(table: Any, *, allow_runtime_port: bool) -> tuple[tuple[str, VariantTreatment], ...]:
    """Each [variants.NAME] table: the built-in pair first (whatever the file's order),
    then the others in the file's order, which is the order --variants lists by default."""
    if not isinstance(table, dict):
        raise ValueError("variants must be a table of [variants.NAME] tables")
    for name in table:
        if not VARIANT_NAME.fullmatch(name):
            raise ValueError(f"variants.{name}: {name!r} is not a variant name: {VARIANT_NAME_RULE}")
        if name in DISCLOSURE_PROFILES and name not in VARIANTS:
            # On the wire a variant is recorded by its name, the built-in pair by their
            # disclosure words: this name would read as the baseline's.
            raise ValueError(f"variants.{name}: {name!r} names a disclosure profile (the baseline's); name the variant otherwise")
    if len(table) > MAX_VARIANTS:
        raise ValueError(f"variants: {len(table)} tables; a profile defines at most {MAX_VARIANTS}")
    out = []
    for name in [*(n for n in VARIANTS if n in table), *(n for n in table if n not in VARIANTS)]:
        entry = table[name]
        if not isinstance(entry, dict):
            raise ValueError(f"variants.{name} must be a table")
        _no_unknown_keys(entry, {"args", "env", "home_json", "disclosure"}, f"variants.{name}.")
        disclosure = _disclosure(entry, name)
        args = entry.get("args", [])
        if args:
            args = _argv(args, f"variants.{name}.args", allow_runtime_port=allow_runtime_port)
        elif not isinstance(args, list):
            raise ValueError(f"variants.{name}.args must be a list of strings")
        env = _env(entry.get("env", {}), allow_runtime_port=allow_runtime_port)
        home = _home_json(entry.get("home_json", {}), f"variants.{name}.home_json", allow_runtime_port=allow_runtime_port)
        out.append((name, VariantTreatment(args=tuple(args), env=env, home_json=home, disclosure=disclosure)))
    return tuple(out)


def _default_variants(value: Any, profile: AgentProfile) -> tuple[str, ...]:
    """The variants a run compares by default: two or more the profile defines, once each."""
    names = _str_list(value, "default_variants")
    defined = (*VARIANTS, *(n for n, _ in profile.variants if n not in VARIANTS))
    try:
        return variant_names(",".join(names), defined, option="default_variants", by="the profile")
    except UsageProblem as exc:
        raise ValueError(f"default_variants: {exc.reason}") from None


def _disclosure(entry: Mapping[str, Any], name: str) -> str | None:
    """A variant's disclosure profile; the built-in variants' are fixed by their names."""
    if "disclosure" not in entry:
        return None
    value = entry["disclosure"]
    if value not in DISCLOSURE_PROFILES:
        raise ValueError(f"variants.{name}.disclosure must be one of {', '.join(DISCLOSURE_PROFILES)}, got {value!r}")
    if name in VARIANT_PROFILES and value != VARIANT_PROFILES[name]:
        raise ValueError(f"variants.{name}.disclosure: {name} is the {VARIANT_PROFILES[name]} disclosure by definition; name the variant otherwise")
    return value


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
        strings = list(json_strings(content))
        if strings:
            _argv(strings, f"{where}.{rel}", allow_runtime_port=allow_runtime_port)
        out.append((rel, spec_json(content)))
    return tuple(out)


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
    if any("\0" in v for v in value):
        # exec refuses it only once an attempt (perhaps a paid one) is already running.
        raise ValueError(f"{where} holds a NUL character, which no process argument can carry")
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
