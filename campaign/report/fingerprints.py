"""What each candidate's treatment changed on the wire, as the probe measured it.

The experiment binds each variant's wire fingerprint part by part (``wire_fingerprints``,
from catalog format 3): per candidate, the report names the parts whose digests differ
from the baseline's, per provider in a campaign of several. Experiments bound before
(or by a client the adapter confirms) have none, and their reports no such key.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from campaign.profiler.fingerprint import PART_WORDS, PARTS, differing_parts

# The report's experiment key (optional: absent where nothing was bound).
KEY = "wire_differences"


def wire_differences(exp: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    """[{provider, variant, differs_in}] for each candidate of each binding that has
    fingerprints (``provider`` None for a paired lane's one); None when none has."""
    names = [v.get("name") for v in exp.get("variants") or [] if isinstance(v, Mapping)]
    bindings = [(None, exp)] if exp.get("kind") is None else [(p.get("name"), p) for p in exp.get("providers") or [] if isinstance(p, Mapping)]
    rows: list[dict[str, Any]] = []
    for provider, binding in bindings:
        bound = binding.get("wire_fingerprints")
        if not isinstance(bound, Mapping) or not names or not all(isinstance(bound.get(n), Mapping) for n in names):
            continue
        baseline = bound[names[0]]
        rows += [{"provider": provider, "variant": n, "differs_in": differing_parts(baseline, bound[n])} for n in names[1:]]
    return rows or None


def lines(experiment: Mapping[str, Any]) -> list[str]:
    """The Markdown: one line per candidate (and provider)."""
    rows = experiment.get(KEY)
    if not rows:
        return []
    out = ["", "## What each variant changed on the wire", ""]
    out.append(f"Measured before any trial by the probe, each variant once against the replay provider; compared: {', '.join(PART_WORDS[p] for p in PARTS)} (each digested, never stored).")
    out.append("")
    for row in rows:
        where = f" ({row['provider']})" if row["provider"] else ""
        changed = ", ".join(PART_WORDS[p] for p in row["differs_in"]) or "nothing"
        out.append(f"- {row['variant']}{where}: {changed}")
    return out
