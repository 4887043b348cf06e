"""The operator's base TOML and the per-variant disclosure overlay.

The base config must not set ``runtime.tools.disclosure`` in any form: the runner
owns that table. The check reads the *parsed* tree (``tomllib``), so every way
TOML can spell the key (a ``[runtime.tools.disclosure]`` header, dotted keys at
any level, inline tables, quoted keys, arrays of tables) is caught alike.

Each variant's config is the base text, byte for byte, followed by one appended
``[runtime.tools.disclosure]`` table (the spec's "appends to a copy"). The
rendered text is parsed again and must resolve to exactly the base tree plus the
expected table; a base whose ``runtime`` or ``runtime.tools`` is an inline table
(which TOML forbids extending) is refused up front with a fix to apply.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from campaign.vocabulary import VARIANT_PROFILES
from campaign import inputs
from campaign.canonical import text_sha256
from campaign.digests import bytes_sha256
from campaign.errors import UsageProblem

OPTION = "--config"
DISCLOSURE_PATH = ("runtime", "tools", "disclosure")

# The fixed treatment, identical for both variants but for the profile. The coding
# profile ignores budget_tokens; 40000 stays the legacy activation threshold.
DISCLOSURE_SETTINGS: Mapping[str, Any] = {
    "enabled": True,
    "catalog_tokens": 2000,
    "max_results": 5,
    "budget_tokens": 40000,
}


@dataclass(frozen=True)
class BaseConfig:
    text: str
    data: Mapping[str, Any]
    digest: str  # SHA-256 of the file's bytes


@dataclass(frozen=True)
class VariantConfig:
    variant: str
    profile: str | None  # the disclosure profile it applies; None: the base config as is
    overlay: str  # the appended text
    overlay_digest: str
    text: str  # base text + overlay: what the agent reads
    digest: str  # SHA-256 of ``text``


def load_base_config(path: Path) -> BaseConfig:
    """Read, parse and check the base config; every problem is a UsageProblem on --config."""
    raw = inputs.read_bytes(Path(path), OPTION, "base config")
    return parse_base_config(raw, name=str(path))


def parse_base_config(raw: bytes, name: str = "the base config") -> BaseConfig:
    text = inputs.decode_text(raw, name, OPTION, "base config")
    try:
        data = inputs.toml_loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UsageProblem(f"{name} is not valid TOML: {exc}", option=OPTION) from None
    check_base_tree(data, name)
    return BaseConfig(text=text, data=data, digest=bytes_sha256(raw))


def check_base_tree(data: Mapping[str, Any], name: str = "the base config") -> None:
    """Refuse a base that sets the disclosure table or cannot take the overlay."""
    if any(True for _ in _disclosure_nodes(data)):
        raise UsageProblem(
            f"{name} sets runtime.tools.disclosure; remove it (in every form: table, dotted, inline, quoted "
            "or array): the runner appends that table itself, one per variant",
            option=OPTION,
        )
    runtime = data.get("runtime")
    if runtime is not None and not isinstance(runtime, dict):
        raise UsageProblem(f"{name}: runtime must be a table so the runner can add [runtime.tools.disclosure]", option=OPTION)
    tools = runtime.get("tools") if isinstance(runtime, dict) else None
    if tools is not None and not isinstance(tools, dict):
        raise UsageProblem(f"{name}: runtime.tools must be a table so the runner can add [runtime.tools.disclosure]", option=OPTION)


def _disclosure_nodes(node: Any, depth: int = 0) -> Iterator[Any]:
    """Every value reachable as runtime -> tools -> disclosure, through arrays of tables too."""
    if isinstance(node, list):
        for item in node:
            yield from _disclosure_nodes(item, depth)
    elif isinstance(node, dict) and depth < len(DISCLOSURE_PATH):
        key = DISCLOSURE_PATH[depth]
        if key in node:
            if depth == len(DISCLOSURE_PATH) - 1:
                yield node[key]
            else:
                yield from _disclosure_nodes(node[key], depth + 1)


def disclosure_table(profile: str) -> dict[str, Any]:
    """The table a config applying the disclosure ``profile`` must resolve to."""
    return {"enabled": True, "profile": profile, **{k: v for k, v in DISCLOSURE_SETTINGS.items() if k != "enabled"}}


def render_overlay(variant: str, disclosure: str) -> str:
    table = disclosure_table(disclosure)
    lines = [
        f"# Appended by campaign for the {variant} variant; not part of the operator's base config.",
        "[runtime.tools.disclosure]",
        *(f"{key} = {_toml_value(value)}" for key, value in table.items()),
    ]
    return "\n".join(lines) + "\n"


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str) and value.isascii() and value.replace("_", "").isalnum():
        return f'"{value}"'
    raise TypeError(f"no TOML rendering for {value!r}")


def render_variant(base: BaseConfig, variant: str) -> VariantConfig:
    """A built-in variant's config: the base with its disclosure profile appended."""
    try:
        disclosure = VARIANT_PROFILES[variant]
    except KeyError:
        raise UsageProblem(f"unknown variant {variant!r}; only baseline and coding have a disclosure profile of their own") from None
    return render_config(base, variant, disclosure)


def render_config(base: BaseConfig, variant: str, disclosure: str | None) -> VariantConfig:
    """Base text + the ``disclosure`` profile's appended table, checked to parse to what
    we expect; the base text unchanged (nothing appended) for a variant that applies none."""
    if disclosure is None:
        return VariantConfig(variant=variant, profile=None, overlay="", overlay_digest=text_sha256(""), text=base.text, digest=text_sha256(base.text))
    overlay = render_overlay(variant, disclosure)
    separator = "" if base.text == "" or base.text.endswith("\n") else "\n"
    text = base.text + separator + "\n" + overlay
    check_rendered(base.data, text, variant, disclosure)
    return VariantConfig(
        variant=variant,
        profile=disclosure,
        overlay=overlay,
        overlay_digest=text_sha256(overlay),
        text=text,
        digest=text_sha256(text),
    )


def check_rendered(base_data: Mapping[str, Any], text: str, variant: str, disclosure: str) -> None:
    """The rendered config parses, resolves the variant's profile, and changes nothing else."""
    try:
        merged = inputs.toml_loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UsageProblem(
            f"appending [runtime.tools.disclosure] to the base config does not give valid TOML ({exc}); "
            "write runtime and runtime.tools as [runtime] / [runtime.tools] tables, not inline tables",
            option=OPTION,
        ) from None
    if merged != with_disclosure(base_data, disclosure_table(disclosure)):
        raise UsageProblem(f"the {variant} config does not resolve to the expected disclosure settings", option=OPTION)


def resolved_disclosure(data: Mapping[str, Any]) -> dict[str, Any] | None:
    """``runtime.tools.disclosure`` of a parsed config, as the agent would read it."""
    node: Any = data
    for key in DISCLOSURE_PATH:
        if not isinstance(node, dict) or key not in node:
            return None
        node = node[key]
    return node if isinstance(node, dict) else None


def resolved_profile(data: Mapping[str, Any]) -> str | None:
    table = resolved_disclosure(data)
    if not table or table.get("enabled") is not True:
        return None
    profile = table.get("profile")
    return profile if isinstance(profile, str) else None


def with_disclosure(base_data: Mapping[str, Any], table: Mapping[str, Any]) -> dict[str, Any]:
    """The tree the rendered text must parse to: the base plus runtime.tools.disclosure."""
    merged = dict(base_data)
    runtime = dict(merged.get("runtime", {}))
    tools = dict(runtime.get("tools", {}))
    tools["disclosure"] = dict(table)
    runtime["tools"] = tools
    merged["runtime"] = runtime
    return merged
