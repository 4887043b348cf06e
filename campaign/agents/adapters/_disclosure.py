"""Disclosure-bridge telemetry events -> applied profiles, bridge counters, diagnostics.

The rules are the spec's "Schema diagnostics" section:

* ``disclosure.applied`` names the profile the runtime applied and advertises
  ``diagnostic_events_version``. Without a known version the two bridge
  counters stay None; with it and no relevant events they are an observed 0.
* ``disclosure.search`` with status ``error``, or ``ok`` with ``matched_count``
  0, is a discovery failure; status ``malformed`` is an incorrect tool call.
* ``disclosure.invoke_rejected`` with reason ``unknown_tool``,
  ``invalid_arguments`` or ``invalid_request`` is an incorrect tool call.
* ``cancelled`` searches or rejections count for neither.
* ``disclosure.invoke`` with a SHA-256 tool identity feeds
  ``resolved_bridge_invocations`` ({sha: {calls, errors}}).

Measurements carried by the applied event are collected as-is, never recomputed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable

from campaign.agents.adapters._read import count, one_of, text
from campaign.vocabulary import DISCLOSURE_PROFILES

KNOWN_DIAGNOSTIC_VERSIONS = frozenset({1})
INCORRECT_REJECTIONS = frozenset({"unknown_tool", "invalid_arguments", "invalid_request"})
_MEASUREMENTS = ("estimated_tokens", "disclosed_tokens", "hidden_count", "disclosed_count")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


@dataclass(frozen=True)
class Disclosure:
    applied_profiles: tuple[str, ...] | None
    diagnostic_events_version: int | None
    discovery_failures: int | None
    incorrect_tool_calls: int | None
    schema_diagnostics: dict[str, Any] | None


def read_disclosure(events: Iterable[dict[str, Any]]) -> Disclosure:
    events = [e for e in events if isinstance(e, dict) and str(e.get("event", "")).startswith("disclosure.")]
    applied = [e for e in events if e.get("event") == "disclosure.applied"]
    versions = [v for v in (count(e.get("diagnostic_events_version")) for e in applied) if v is not None]
    version = max(versions) if versions else None
    failures, incorrect = _bridge_counts(events) if version in KNOWN_DIAGNOSTIC_VERSIONS else (None, None)
    return Disclosure(
        applied_profiles=_profiles(applied),
        diagnostic_events_version=version,
        discovery_failures=failures,
        incorrect_tool_calls=incorrect,
        schema_diagnostics=_diagnostics(applied, events),
    )


def _profiles(applied: list[dict[str, Any]]) -> tuple[str, ...] | None:
    if not applied:
        return None
    seen: list[str] = []
    for event in applied:
        name = profile_name(event.get("profile"))
        if name not in seen:
            seen.append(name)
    return tuple(seen)


def profile_name(value: Any) -> str:
    """Only code-authored names reach a report; anything else shows as "unknown",
    so a mismatch stays visible without copying agent text."""
    return value if one_of(value, DISCLOSURE_PROFILES) else "unknown"


def _bridge_counts(events: list[dict[str, Any]]) -> tuple[int | None, int | None]:
    failures: int | None = 0
    incorrect = 0
    for event in events:
        kind = event.get("event")
        if kind == "disclosure.search":
            status = event.get("status")
            if status == "malformed":
                incorrect += 1
            elif status == "error":
                failures = None if failures is None else failures + 1
            elif status == "ok":
                matched = count(event.get("matched_count"))
                if matched is None:
                    failures = None  # an "ok" search of unknown size cannot be classified
                elif matched == 0 and failures is not None:
                    failures += 1
            elif status != "cancelled":
                failures = None
        elif kind == "disclosure.invoke_rejected" and one_of(event.get("reason"), INCORRECT_REJECTIONS):
            incorrect += 1
    return failures, incorrect


def _diagnostics(applied: list[dict[str, Any]], events: list[dict[str, Any]]) -> dict[str, Any] | None:
    out: dict[str, Any] = {}
    digests = sorted({d for d in (text(e.get("full_catalog_digest")) for e in applied) if d and _SHA256.match(d)})
    if digests:
        out["full_catalog_digests"] = digests
    measurements = [_measurement(e) for e in applied if any(k in e for k in (*_MEASUREMENTS, "active"))]
    if measurements:
        out["disclosure_measurements"] = measurements
    invocations: dict[str, dict[str, int]] = {}
    for event in events:
        sha = text(event.get("tool_sha256"))
        if event.get("event") == "disclosure.invoke" and sha and _SHA256.match(sha):
            slot = invocations.setdefault(sha, {"calls": 0, "errors": 0})
            slot["calls"] += 1
            slot["errors"] += 1 if event.get("status") == "error" else 0
    if invocations:
        out["resolved_bridge_invocations"] = invocations
    return out or None


def _measurement(event: dict[str, Any]) -> dict[str, Any]:
    active = event.get("active")
    return {
        "profile": profile_name(event.get("profile")),
        "active": active if isinstance(active, bool) else None,
        **{k: count(event.get(k)) for k in _MEASUREMENTS},
    }
