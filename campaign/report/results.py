"""Each trial's result, from the attempt rows the chain check already read.

The per-trial rows of a report are the trials in scope, in schedule order, each
with its result: its one finished attempt, or, for a trial a continuation
carried over, the finished attempt of the trial it points at (the rule of
``aggregates.selections.OWNER``). The chain check reads every attempt row of the campaign
and of the campaigns it continues, as stored, to hash them; the report pairs the
same rows with ``aggregates.scope_trials`` here instead of reading them again.

A row comes out as one flat tuple, ``NAMES`` in order: the trial's columns, the
count of its attempts without a verdict, whether it was carried, and the
attempt's stored columns (``chain.RAW_COLUMNS``). ``trial_cleaner`` cleans them
through the TRIAL schema with the rules below for what the stored values mean.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from campaign.report.schema import TRIAL
from campaign.experiment import VARIANT_NAME
from campaign.report.allowlist import Enum, List
from campaign.vocabulary import DISCLOSURE_PROFILES, VARIANT_PROFILES
from campaign.report.aggregates import SCOPE_TRIAL_NAMES
from campaign.store.chain import COLUMN, RAW_COLUMNS

_RENAMED = {"id": "attempt_id", "seq": "attempt_seq", "status": "attempt_status"}
NAMES = (*SCOPE_TRIAL_NAMES, "interrupted_attempts", "carried", *(_RENAMED.get(n, n) for n in RAW_COLUMNS))
# Stored 0/1 (SQLite; other databases' rows come in the same form): read as the model's
# Boolean reads them.
BOOLEANS = ("verified_pass", "cost_reported", "spend_complete", "flush_complete", "cleanup_complete", "disposal_complete", "finalization_failed")

_TRIAL_ID, _CARRIED_FROM = SCOPE_TRIAL_NAMES.index("id"), SCOPE_TRIAL_NAMES.index("carried_from_trial_pk")
_TRIAL_PK, _STATUS = COLUMN["trial_pk"], COLUMN["status"]


def result_rows(trials: Sequence[Sequence[Any]], attempts: Mapping[int, Sequence[Sequence[Any]]]) -> list[tuple[Any, ...]]:
    """One row per trial with a result, in the order of ``trials`` (schedule order)."""
    every = next(iter(attempts.values())) if len(attempts) == 1 else [row for rows in attempts.values() for row in rows]
    done = [row for row in every if row[_STATUS] == "finished"]
    owner_of: dict[Any, tuple[Sequence[Any], ...]] = {row[_TRIAL_PK]: (row,) for row in done}
    if len(owner_of) != len(done):
        # Two finished attempts of one trial exist only in an edited store: show both.
        owner_of = {}
        for row in done:
            owner_of[row[_TRIAL_PK]] = owner_of.get(row[_TRIAL_PK], ()) + (row,)
    # Attempts interrupted, or left running by a killed runner (not those the provider or the engine ended).
    unfinished = Counter(row[_TRIAL_PK] for row in every if row[_STATUS] is not None and row[_STATUS] not in ("finished", "faulted"))
    out = []
    for trial in trials:
        carried_from = trial[_CARRIED_FROM]
        owner = trial[_TRIAL_ID] if carried_from is None else carried_from
        for attempt in owner_of.get(owner, ()):
            out.append((*trial, unfinished.get(owner, 0), carried_from is not None, *attempt))
    return out


def with_marker(marker: Any, count: Any) -> Any:
    """A bridge counter means something only with the diagnostic version marker."""
    return None if marker is None else count


def tool_error_recovery(tool_errors: Any, verified_pass: Any) -> int | None:
    """1 for a verified success that had a failed tool call, 0 otherwise; None when the
    tool errors are unknown."""
    if tool_errors is None:
        return None
    return int(isinstance(tool_errors, (int, float)) and tool_errors >= 1 and verified_pass == 1)


# A label of the experiment's own, keyed by (provider, variant); provider None: any (the
# paired lane's one provider).
OwnLabels = tuple[tuple[str | None, str, str], ...]


@functools.lru_cache(maxsize=8)
def trial_cleaner(own: OwnLabels = ()) -> Callable[[Any, Any], list[dict[str, Any]]]:
    """The TRIAL schema compiled for ``results`` rows: stored booleans read as booleans,
    the bridge counters only with their marker, JSON texts parsed on the way. Every value
    is checked, a verified chain's too: anyone can reseal a chain (it is no signature), so
    a verified row may still hold text where a number belongs.

    ``own``: the labels of the experiment's own variants (``confirmed_as``). An applied
    profile is one of the disclosure words or one of these labels, anything else
    ``unlisted``; an attempt of an own variant matches when it applied only its label."""
    labels = {(provider, variant): label for provider, variant, label in own if VARIANT_NAME.fullmatch(label)}
    schema = TRIAL
    if labels:
        allowed = tuple(dict.fromkeys((*DISCLOSURE_PROFILES, *labels.values())))
        schema = dataclasses.replace(TRIAL, fields={**TRIAL.fields, "applied_profiles": List(Enum(allowed), max_items=8)})

    def matches(text: str | None, variant: str, provider: str | None) -> bool | None:
        expected = VARIANT_PROFILES.get(variant) or labels.get((provider, variant)) or labels.get((None, variant))
        return _profile_matches(text, expected)

    return schema.compile_rows(
        NAMES,
        derived={
            "discovery_failures": (with_marker, ("diagnostic_events_version", "discovery_failures")),
            "incorrect_tool_calls": (with_marker, ("diagnostic_events_version", "incorrect_tool_calls")),
            "tool_error_recoveries": (tool_error_recovery, ("tool_errors", "verified_pass")),
            "schema_diagnostics": (_diagnostics, ("schema_diagnostics",)),
        },
        memoized={
            "applied_profiles": (_profiles, ("applied_profiles",)),
            "applied_profile_matches_variant": (matches, ("applied_profiles", "variant", "provider")),
        },
        stored_booleans=BOOLEANS,
    )

_decode = json.JSONDecoder().raw_decode

_WHITESPACE = json.decoder.WHITESPACE

def _diagnostics(text: str | None) -> dict[str, Any] | None:
    """The schema diagnostics JSON object, or None (absent, unreadable, or not an object)."""
    if not text or type(text) is not str:
        return None
    try:
        value, end = _decode(text, _WHITESPACE.match(text, 0).end())
    except ValueError:
        return None
    if end != len(text) and text[end:].strip():
        return None
    return value if type(value) is dict and value else None

def _profile_matches(text: str | None, expected: str | None) -> bool | None:
    """Every applied profile is the variant's expected one (None: nothing observed, or no
    label known for the variant: an experiment's own, recorded before labels were)."""
    profiles = _parsed_profiles(text) if text and isinstance(text, str) else None
    if profiles is None or expected is None:
        return None
    return bool(profiles) and all(p == expected for p in profiles)

def _profiles(text: str | None) -> list[str] | None:
    if not text or not isinstance(text, str):
        return None
    parsed = _parsed_profiles(text)
    return None if parsed is None else list(parsed)

@functools.lru_cache(maxsize=256)
def _parsed_profiles(text: str) -> tuple[str, ...] | None:
    """applied_profiles JSON (a handful of distinct texts per campaign, so cached)."""
    try:
        value = json.loads(text)
    except ValueError:
        return None
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        return None
    return tuple(p for p in value if isinstance(p, str))


__all__ = ["BOOLEANS", "NAMES", "result_rows", "tool_error_recovery", "trial_cleaner", "with_marker"]
