"""What ran, for the report: the experiment's identity, its price catalog and client.

Read from the campaign's stored experiment JSON, whichever shape an older
engine wrote it in; a field that cannot be read is null, never guessed. The
allowlist (``report/schema.py``) then decides what of it may be shown.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from campaign.experiment import parse
from campaign.report import fingerprints
from campaign.report.fields import AGENTS, SHA256_RE
from campaign.store.models import Campaign
from campaign.vocabulary import REPLAY


def load_object(text: str | None) -> dict[str, Any]:
    return parse(text) or {}

def is_sha256(value: Any) -> bool:
    return isinstance(value, str) and SHA256_RE.fullmatch(value) is not None

def experiment_section(exp: dict[str, Any], campaign: Campaign) -> dict[str, Any]:
    agent = exp.get("agent")
    if isinstance(agent, dict):
        agent = agent.get("name")
    section = {
        "tasks": exp.get("tasks"),
        "model": exp.get("model"),
        "agent": agent if agent in AGENTS else ("custom" if agent is not None else None),
        "revision": exp.get("revision"),
        "source_digest": exp.get("source_digest"),
        "compiled_build_digest": exp.get("compiled_build_digest"),
        "repetitions": exp.get("repetitions"),
        "seed": exp.get("seed", campaign.seed),
        "timeout": exp.get("timeout"),
        "run_timeout": exp.get("run_timeout"),
        "variants": _variant_identities(exp.get("variants")),
        "config_digest": exp.get("config_digest"),
        "fixture_digests": exp.get("fixture_digests"),
        "profile_python_digest": exp.get("profile_python_digest"),
        "wire_catalogs": exp.get("wire_catalogs"),
        "wire_catalog_format": exp.get("wire_catalog_format", 1) if exp.get("wire_catalogs") else None,
        "reasoning": exp.get("reasoning") if exp.get("reasoning") is not None else "provider_default",
        "task_suite": _task_suite(exp.get("task_suite")),
    }
    differences = fingerprints.wire_differences(exp)
    if differences is not None:  # only then, so experiments bound before keep their report
        section[fingerprints.KEY] = differences
    return section


def confirmation_labels(exp: dict[str, Any]) -> tuple[tuple[str | None, str, str], ...]:
    """(provider, variant, label) for each of its own variants the experiment recorded a
    label for (``confirmed_as``): the paired lane's under provider None, a campaign's per
    provider; sorted, so one experiment is one key of ``results.trial_cleaner``."""
    bindings = [(None, exp)] + [(p.get("name"), p) for p in exp.get("providers") or [] if isinstance(p, dict)]
    out = set()
    for provider, binding in bindings:
        labels = binding.get("confirmed_as")
        if isinstance(labels, dict) and (provider is None or isinstance(provider, str)):
            out |= {(provider, v, label) for v, label in labels.items() if isinstance(v, str) and isinstance(label, str)}
    return tuple(sorted(out, key=lambda t: (t[0] or "", t[1], t[2])))


def _task_suite(value: Any) -> dict[str, Any] | None:
    """The suite's name and digest, and its unchecked tasks; its per-task digests stay in the store."""
    if not isinstance(value, dict):
        return None
    return {"name": value.get("name"), "digest": value.get("digest"), "unchecked_tasks": value.get("unchecked")}

def _variant_identities(value: Any) -> list[dict[str, Any]] | None:
    """Variants as [{name, overlay_digest}] whichever way the experiment spelled them."""
    if isinstance(value, dict):
        return [{"name": k, "overlay_digest": v if isinstance(v, str) else _digest_of(v)} for k, v in value.items()]
    if isinstance(value, (list, tuple)):
        out = []
        for item in value:
            if isinstance(item, str):
                out.append({"name": item, "overlay_digest": None})
            elif isinstance(item, dict):
                out.append({"name": item.get("name"), "overlay_digest": _digest_of(item)})
        return out
    return None

def _digest_of(item: Any) -> Any:
    if isinstance(item, dict):
        for key in ("overlay_digest", "digest", "config_digest", "sha256"):
            if key in item:
                return item[key]
    return None

def is_synthetic(agent: str, exp: dict[str, Any], providers: Sequence[str]) -> bool:
    """The offline agent, or the replay provider's scripted model, ran some of these trials:
    their figures are test data, not evidence.

    A multi-provider campaign records "custom" as its agent when its providers
    use different agents, and a catalog may give the offline agent (or a
    synthetic price basis, or the replay upstream) to a provider under any name,
    even one priced at a public list price; so every provider in scope is looked
    up in the experiment too.
    """
    if agent == "offline" or "offline" in providers or exp.get("wire_upstream") == REPLAY:
        return True
    entries = exp.get("providers")
    if not isinstance(entries, list):
        return False
    return any(
        isinstance(e, dict)
        and e.get("name") in providers
        and (e.get("agent") == "offline" or e.get("basis") == "synthetic" or e.get("wire_upstream") == REPLAY)
        for e in entries
    )

def pricing_section(exp: dict[str, Any]) -> dict[str, Any]:
    nested = exp.get("runtime_versions")
    digest = exp.get("pricing_catalog_digest")
    if digest is None and isinstance(nested, dict):
        digest = nested.get("pricing_catalog_digest")
    if is_sha256(digest):
        return {"pricing_catalog_digest": digest, "pricing_catalog_digest_reason": None}
    return {"pricing_catalog_digest": None, "pricing_catalog_digest_reason": "no_providers_catalog"}

def client_version(experiment: dict[str, Any]) -> str | None:
    """The bound client version: the experiment's, or the one every provider's client shares."""
    if isinstance(experiment.get("client_version"), str):
        return experiment["client_version"]
    providers = experiment.get("providers")
    versions = {p.get("client_version") for p in providers if isinstance(p, dict)} if isinstance(providers, list) else set()
    return versions.pop() if len(versions) == 1 and isinstance(next(iter(versions)), str) else None
