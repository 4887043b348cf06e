"""Agent profiles: how the engine launches one agent client and reads its output.

A profile is a small TOML file, either built in (``campaign/agents/profiles/``)
or given as ``--agent FILE.toml``: ``load_profile`` finds and reads it,
``profile_parse`` validates it strictly into an ``AgentProfile``
(``profile_model``, where every field is documented), and the functions below
render it for one attempt (argv, environment, HOME files) and state its
identity for the experiment digest. ``profiles/generic.toml`` is a commented example.
"""

from __future__ import annotations

import glob
import json
import os
import tomllib
import dataclasses
from dataclasses import replace
from pathlib import Path
from typing import Any, Mapping, Sequence

from campaign import inputs
from campaign.errors import UsageProblem
from campaign.experiment import variant_names
from campaign.agents.profile_model import AgentProfile, VariantTreatment, render
from campaign.agents.profile_parse import parse_profile
from campaign.vocabulary import VARIANT_PROFILES, VARIANTS

PROFILES_DIR = Path(__file__).resolve().parent / "profiles"


_OPTION = "--agent"


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
        data = inputs.toml_loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UsageProblem(f"cannot read agent profile {name_or_path}: {exc}", option=_OPTION) from exc
    data = _extended(data, name_or_path)
    try:
        profile = parse_profile(data, default_name=path.stem)
    except ValueError as exc:
        raise UsageProblem(f"agent profile {name_or_path}: {exc}", option=_OPTION) from exc
    bound_source = Path(source).resolve() if source is not None else None
    return replace(profile, path=path if is_file else None, source=bound_source)


# Tables an extending profile merges into its base's by key; every other key it gives replaces the base's.
_MERGED = ("env", "variants", "home_json", "home_seed")


def _extended(data: dict[str, Any], where: str) -> dict[str, Any]:
    """A profile file with ``extends = "BUILT-IN"``: that built-in profile with the file's
    keys over it, its tables (variants, env, home files) merged by name. One file so
    defines an experiment: the client as shipped plus the variants to compare."""
    if "extends" not in data:
        return data
    base_name = data["extends"]
    if base_name not in builtin_profile_names():
        raise UsageProblem(f"agent profile {where}: extends must name a built-in profile ({', '.join(builtin_profile_names())}), got {base_name!r}", option=_OPTION)
    base = inputs.toml_loads((PROFILES_DIR / f"{base_name}.toml").read_text(encoding="utf-8"))
    merged = {**base, **{k: v for k, v in data.items() if k != "extends"}}
    for key in _MERGED:
        if isinstance(base.get(key), dict) and isinstance(data.get(key), dict):
            merged[key] = {**base[key], **data[key]}
    return merged


def run_variants(profile: AgentProfile) -> tuple[str, ...]:
    """What a run of this profile compares without --variants: its default_variants, or
    every variant it defines."""
    return profile.default_variants or defined_variants(profile)


def treatment(profile: AgentProfile, variant: str | None) -> VariantTreatment:
    """The profile's treatment for a variant (nothing for the nonpaired lane or an unset one)."""
    return dict(profile.variants).get(variant or "", VariantTreatment())


def defined_variants(profile: AgentProfile) -> tuple[str, ...]:
    """The variants this client can run, in order: the built-in pair (the disclosure
    experiment, defined for every profile), then the profile's own [variants.NAME]."""
    return (*VARIANTS, *(name for name, _ in profile.variants if name not in VARIANTS))


def variant_disclosure(profile: AgentProfile, variant: str) -> str | None:
    """The [runtime.tools.disclosure] profile a variant's config applies: the built-in
    variants' by definition, another's as its table says (None: its config is the base)."""
    return VARIANT_PROFILES.get(variant) or treatment(profile, variant).disclosure


def confirmation_label(profile: AgentProfile, variant: str) -> str | None:
    """What an attempt of ``variant`` must be seen to apply, as its ``applied_profiles``
    record it. A client that reports its disclosure profile (``adapter``) confirms that
    profile, so a variant without one of its own can never be confirmed there (None). On
    the wire each variant is confirmed by the catalogs only its probe run sent, and
    recorded as the built-in pair's disclosure words or the variant's own name."""
    if profile.applied_profile_from == "wire":
        return VARIANT_PROFILES.get(variant, variant)
    return variant_disclosure(profile, variant)


def confirmed_as(profile: AgentProfile, variants: Sequence[str]) -> dict[str, str] | None:
    """{variant: its confirmation label} for the variants outside the built-in pair (whose
    labels are fixed words), for the experiment to record; None when there are none."""
    labels = {v: confirmation_label(profile, v) for v in variants if v not in VARIANT_PROFILES}
    return {v: label for v, label in labels.items() if label is not None} or None


def select_variants(value: str | None, profiles: Sequence[AgentProfile], option: str = "--variants") -> tuple[str, ...]:
    """The variants ``--variants`` picks (``A,B,C``, the first the baseline), or, when it is
    not given, the profiles' default_variants (when they agree) or every variant all of
    ``profiles`` define, in order. Each must be one every
    profile defines, and one whose attempts each client can be seen to apply, told apart
    from the others': a client that reports its disclosure profile confirms a variant by
    that profile alone, so two variants of one disclosure (or one of none) could never be."""
    defined = [v for v in defined_variants(profiles[0]) if all(v in defined_variants(p) for p in profiles[1:])]
    agents = sorted({p.name for p in profiles})
    by = f"agent profile {agents[0]}" if len(agents) == 1 else f"every one of the agent profiles {', '.join(agents)}"
    defaults = {p.default_variants for p in profiles}
    if value is None and len(defaults) == 1 and None not in defaults:
        value = ",".join(next(iter(defaults)))  # type: ignore[arg-type]
    names = variant_names(value, defined, option=option, by=by)
    for profile in profiles:
        seen: dict[str, str] = {}
        for name in names:
            label = confirmation_label(profile, name)
            if label is None:
                raise UsageProblem(
                    f"variant {name} could never be confirmed with agent {profile.name}: its client reports the disclosure profile it applies, "
                    f"and {name} applies none; give [variants.{name}] a disclosure, or confirm it on the wire (applied_profile_from = \"wire\")",
                    option=option,
                )
            if label in seen:
                raise UsageProblem(
                    f"variants {seen[label]} and {name} would both be confirmed as {label} with agent {profile.name}, so nothing could tell their attempts apart; "
                    "give them different disclosures, or confirm them on the wire (applied_profile_from = \"wire\")",
                    option=option,
                )
            seen[label] = name
    return names


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
            name: {
                "args": list(t.args),
                "env": [list(p) for p in t.env],
                **({"home_json": [list(p) for p in t.home_json]} if t.home_json else {}),
                **({"disclosure": t.disclosure} if t.disclosure is not None else {}),
            }
            for name, t in profile.variants
        }
    if profile.home_json:
        identity["home_json"] = [list(pair) for pair in profile.home_json]
    if profile.home_seed:
        identity["home_seed"] = [list(pair) for pair in profile.home_seed]
    if profile.client_version is not None:
        identity["client_version_command"] = list(profile.client_version)
    return identity
