"""The redaction allowlist: a structural schema of everything a shared report may hold.

A report is built as plain Python values, then passed through ``sanitize``
with ``REPORT_SCHEMA`` before anything is written. The schema has no type for
free text: a leaf is a number, a boolean, null, a SHA-256 hex digest, a
timestamp, a member of a code-authored enum, or an identifier matching a
strict pattern. So a prompt, model output, an exception message, a header, a
credential or a path cannot reach the JSON, and the Markdown and SVG (which
are rendered from the sanitized JSON only) cannot show one either. Keys not in
the schema are dropped; that is how new store columns stay private until
someone adds them here on purpose.

What happens to a value that does not fit:

- an enum value outside its vocabulary becomes ``"unlisted"`` (extend the
  vocabulary below to report a new class);
- an identifier that does not match its pattern becomes ``redacted-<16 hex>``
  (a SHA-256 prefix, so distinct tasks stay distinct clusters);
- a digest that is not 64 lowercase hex, a non-finite number, or a value of
  the wrong type becomes ``null``.

Each of these is counted in the report's ``redaction`` block.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import itertools
import math
import re
import types
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from campaign import vocabulary
from campaign.profiler.summary import DISAGREEMENT_COUNTERS
from campaign.supervise import teardown

UNLISTED = "unlisted"

# --- code-authored vocabularies ---------------------------------------------------

VARIANTS = ("baseline", "coding")
DISCLOSURE_PROFILES = ("legacy", "coding")
CAMPAIGN_KINDS = ("paired", "campaign", "nonpaired")
CAMPAIGN_STATES = ("planned", "running", "stopped", "completed", "interrupted")
TRIAL_STATUSES = ("scheduled", "admitted", "finished", "not_attempted")
ATTEMPT_STATUSES = ("running", "finished", "interrupted", "faulted")
AGENTS = ("offline", "offline-wire", "claude-code", "codex", "gemini", "opencode", "generic", "mini-swe-agent", "custom")

# Bounded vocabularies come from the engine itself, so the lanes and the
# allowlist cannot drift apart.
OUTCOMES = vocabulary.OUTCOMES
FAILURE_CLASSES = vocabulary.FAILURE_CLASSES
TEARDOWN_OUTCOMES = teardown.OUTCOMES
CONTAINMENT = teardown.CONTAINMENTS
STOP_REASONS = vocabulary.STOP_REASONS
# Why a scheduled trial has no attempt: the stop reasons, plus the report's own.
NOT_ATTEMPTED_REASONS = STOP_REASONS + ("not_reached", "admitted_without_attempt", "campaign_stopped")
# Why an attempt counts towards spend but is no trial's result.
SPEND_ONLY_REASONS = ("interrupted", "left_running", "not_carried", "provider_error", "engine_error")
# The basis of an equivalent-spend figure (providers catalog ``basis``, as an id).
PRICE_BASES = ("public_list_price", "synthetic")
EQUIVALENT_LABELS = ("list-price equivalent, not billed", "synthetic-price equivalent, not billed")
REASONING = ("provider_default", "none", "minimal", "low", "medium", "high", "xhigh", "max")

# Why a figure is null (the report authors these; nothing else can).
NULL_REASONS = (
    "no_attempts",
    "no_measured_spend",
    "incomplete_missing_spend",
    "undefined_zero_successes",
    "no_complete_pairs",
    "no_pairs_with_both_wall_times",
    "single_task_cluster",
    "no_providers_catalog",
    "not_recorded_in_store",
    "no_diagnostic_events_version",
    "mixed_price_bases",
    "no_equivalent_spend",
    "not_checked",
    # Why a run's smallest detectable effect is unknown (campaign.power.spread, .simulate).
    "no_spread_observed",
    "one_pair_per_task",
    "not_detectable_at_this_size",
)
SPEND_STATUS = ("complete", "partial", "none_measured", "no_attempts", "mixed_price_bases")
UNCONTROLLED_FACTORS = (
    "provider_cache_state",
    "provider_queue",
    "provider_load",
    "pricing_drift",
    "route_drift",
    "os_scheduling",
    "reasoning_provider_default",
    "reasoning_configured_not_verified",
)
EVIDENCE = ("live", "offline_unpaid")
DECISION_BASIS = (
    "synthetic_figures",
    "no_paired_evidence",
    "single_task_cluster",
    "exploratory_task_sample",
    "interval_includes_zero",
    "success_regression",
    "measured_benefit_requires_review",
)

# --- patterns ----------------------------------------------------------------------

_SEGMENT = r"[A-Za-z0-9][A-Za-z0-9._+@-]{0,63}"
TOKEN_RE = re.compile(rf"{_SEGMENT}")
# pair/trial ids: provider/task/rN/variant
SCHEDULE_ID_RE = re.compile(rf"{_SEGMENT}(?:/{_SEGMENT}){{0,4}}")
# Where a path starts: an ORG/MODEL whose ORG is one of these is a path, not a model.
_PATH_ROOTS = (
    "home", "users", "user", "root", "tmp", "temp", "var", "etc", "usr", "opt", "mnt", "media", "srv",
    "private", "proc", "dev", "run", "sys", "volumes", "workspace", "workspaces", "work", "nix", "snap",
)  # fmt: skip
# [PROVIDER:][ORG/]MODEL[@YYYYMMDD|@latest], e.g. anthropic:claude-sonnet-4-5-20250929,
# openrouter:anthropic/claude-sonnet-4.5, vertex:claude-sonnet-4-5@20250929, offline:synthetic.
# Model names come from agent output, so anything shaped like something else is
# refused: a long unbroken letter/digit run (an API key or token, never a model
# name), a run of 12+ hex digits or a UUID (a request, session or account id), an
# e-mail address ('@' only before an 8-digit date or "latest"), a path (a second
# slash, a '..' step, an ORG that is a filesystem root such as home/), or a file
# name ending in a config or key extension. A value refused once becomes
# redacted-<16 hex>, which must pass again (the allowlist is a fixed point).
MODEL_RE = re.compile(
    r"redacted-[0-9a-f]{16}|"
    r"(?![^\n]*[A-Za-z0-9]{20})"
    r"(?![^\n]*[0-9A-Fa-f]{12})"
    r"(?![^\n]*[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12})"
    r"(?![^\n]*\.\.)"
    r"(?![^\n]*\.(?:toml|json|ya?ml|py|pem|key|txt|env|cfg|conf|ini|sh|log)$)"
    r"(?:[A-Za-z0-9][A-Za-z0-9._-]{0,63}:)?"
    rf"(?:(?!(?i:{'|'.join(_PATH_ROOTS)})/)[A-Za-z0-9][A-Za-z0-9._-]{{0,63}}/)?"
    r"[A-Za-z0-9][A-Za-z0-9._+-]{0,79}"
    r"(?:@(?:[0-9]{8}|latest))?"
)
SHA256_RE = re.compile(r"[0-9a-f]{64}")
REVISION_RE = re.compile(r"[0-9a-f]{7,64}")
TIMESTAMP_RE = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?(?:Z|\+00:00)")
VERSION_RE = re.compile(r"[0-9]+(?:\.[0-9A-Za-z]+){0,4}")
MAX_ID_LENGTH = 160


@dataclass
class Stats:
    """What the sanitizer changed; reported so a reader sees the allowlist at work."""

    dropped_keys: int = 0
    unlisted_values: int = 0
    redacted_ids: int = 0
    nulled_values: int = 0

    def as_dict(self) -> dict[str, int]:
        return {"dropped_keys": self.dropped_keys, "unlisted_values": self.unlisted_values, "redacted_ids": self.redacted_ids, "nulled_values": self.nulled_values}


Cleaner = Callable[[Any, Stats], Any]


class Type:
    """A schema node. ``compile`` returns a function value -> allowed value."""

    def compile(self) -> Cleaner:  # pragma: no cover - abstract
        raise NotImplementedError


@dataclass(frozen=True)
class Int(Type):
    def compile(self) -> Cleaner:
        def clean(v: Any, s: Stats) -> int | None:
            if v is None or type(v) is int:
                return v
            s.nulled_values += 1
            return None

        return clean


@dataclass(frozen=True)
class Num(Type):
    def compile(self) -> Cleaner:
        def clean(v: Any, s: Stats) -> float | int | None:
            t = type(v)
            if v is None or t is int:
                return v
            if t is float and math.isfinite(v):
                return v
            s.nulled_values += 1
            return None

        return clean


@dataclass(frozen=True)
class Bool(Type):
    def compile(self) -> Cleaner:
        def clean(v: Any, s: Stats) -> bool | None:
            if v is None or v is True or v is False:
                return v
            s.nulled_values += 1
            return None

        return clean


@dataclass(frozen=True)
class Const(Type):
    """A fixed code-authored value; anything else is replaced by it."""

    value: Any

    def compile(self) -> Cleaner:
        value = self.value
        return lambda v, s: value


@dataclass(frozen=True)
class Enum(Type):
    values: tuple[str, ...]

    def compile(self) -> Cleaner:
        allowed = frozenset(self.values) | {UNLISTED}

        def clean(v: Any, s: Stats) -> str | None:
            if v is None:
                return None
            if type(v) is str and v in allowed:
                return v
            s.unlisted_values += 1
            return UNLISTED

        return clean


@dataclass(frozen=True)
class Pattern(Type):
    """A string matching ``regex`` in full; otherwise ``redacted-<hash>`` or null."""

    regex: re.Pattern[str]
    redact: bool = True

    def compile(self) -> Cleaner:
        fullmatch = self.regex.fullmatch
        redact = self.redact
        cache: dict[str, tuple[str | None, bool]] = {}

        def clean(v: Any, s: Stats) -> str | None:
            if v is None:
                return None
            if type(v) is not str:
                s.nulled_values += 1
                return None
            hit = cache.get(v)
            if hit is None:
                ok = len(v) <= MAX_ID_LENGTH and fullmatch(v) is not None
                hit = (v, False) if ok else (redacted_id(v) if redact else None, True)
                if len(cache) < 100_000:
                    cache[v] = hit
            if hit[1]:
                _count(s, redact)
            return hit[0]

        clean.cache = cache  # type: ignore[attr-defined]  # read by generated Obj cleaners
        return clean


def _count(s: Stats, redact: bool) -> None:
    if redact:
        s.redacted_ids += 1
    else:
        s.nulled_values += 1


def redacted_id(value: str) -> str:
    return "redacted-" + hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def Id() -> Pattern:
    return Pattern(TOKEN_RE)


def ScheduleId() -> Pattern:
    return Pattern(SCHEDULE_ID_RE)


def Model() -> Pattern:
    return Pattern(MODEL_RE)


def Sha256() -> Pattern:
    return Pattern(SHA256_RE, redact=False)


def Revision() -> Pattern:
    return Pattern(REVISION_RE, redact=False)


def Version() -> Pattern:
    return Pattern(VERSION_RE, redact=False)


@dataclass(frozen=True)
class Timestamp(Type):
    """UTC ISO-8601; datetimes are converted, strings must already be in that form."""

    def compile(self) -> Cleaner:
        def clean(v: Any, s: Stats) -> str | None:
            if v is None:
                return None
            if isinstance(v, dt.datetime) and v.tzinfo is not None:
                return v.astimezone(dt.timezone.utc).isoformat().replace("+00:00", "Z")
            if type(v) is str and TIMESTAMP_RE.fullmatch(v):
                return v
            s.nulled_values += 1
            return None

        return clean


# A generator lets the report stream its per-trial rows through the schema.
_SEQUENCES = (list, tuple, types.GeneratorType)


@dataclass(frozen=True)
class List(Type):
    item: Type
    max_items: int | None = None

    def compile(self) -> Cleaner:
        item = self.item.compile()
        limit = self.max_items

        def clean(v: Any, s: Stats) -> list[Any] | None:
            if v is None:
                return None
            if type(v) not in _SEQUENCES:
                s.nulled_values += 1
                return None
            out = [item(x, s) for x in (v if limit is None else itertools.islice(v, limit))]
            if limit is not None:
                s.dropped_keys += sum(1 for _ in v) if isinstance(v, types.GeneratorType) else max(0, len(v) - limit)
            return out

        return clean


@dataclass(frozen=True)
class Obj(Type):
    """An object with exactly these keys (missing ones become null, extra ones are dropped)."""

    fields: Mapping[str, Type] = field(default_factory=dict)

    def compile(self) -> Cleaner:
        """A generated function: number, boolean, enum and id leaves inlined, other leaves called.

        Same result as calling each field's cleaner in turn; generating it makes
        the per-trial rows (100,000 of them in the benchmark) several times
        cheaper. Only schema keys (checked to be plain identifiers) and fixed
        code go into the generated source.
        """
        namespace: dict[str, Any] = {"keys": frozenset(self.fields), "isfinite": math.isfinite}
        body = [
            "def clean(v, s):",
            "    if v is None:",
            "        return None",
            "    if type(v) is not dict:",
            "        s.nulled_values += 1",
            "        return None",
            "    if not keys.issuperset(v):",
            "        s.dropped_keys += len(set(v) - keys)",
            "    get = v.get",
        ]
        out = []
        for i, (key, node) in enumerate(self.fields.items()):
            out.append(f"{key!r}: a{i}")
            body += _field_code(namespace, i, key, node, f"get({key!r})", "    ")
        body.append("    return {" + ", ".join(out) + "}")
        exec("\n".join(body), namespace)  # noqa: S102 - source built from schema keys only
        return namespace["clean"]

    def compile_rows(
        self,
        columns: Sequence[str],
        derived: Mapping[str, tuple[Callable[..., Any], tuple[str, ...]]] | None = None,
        memoized: Mapping[str, tuple[Callable[..., Any], tuple[str, ...]]] | None = None,
        stored_booleans: Sequence[str] = (),
        trusted: Sequence[str] = (),
    ) -> RowsCleaner:
        """A generated function cleaning whole database rows (tuples) into this object's dicts.

        ``columns`` names the tuple positions; a field found there is read from
        its position, a field in ``derived`` is ``fn(*those columns)`` (e.g. a JSON
        text parsed), and any other field is null. Each value then passes the
        same checks ``compile`` applies, with the same counts, so
        ``compile_rows(cols)(rows, s)`` equals ``[compile()(dict(zip(cols, r)), s)
        for r in rows]`` for rows holding only the schema's keys; it just never
        builds the intermediate dict. A field in ``memoized`` is like one in
        ``derived``, computed and cleaned once per distinct set of column values
        (see ``Memoized``). A column in ``stored_booleans`` holds a boolean as the
        database stores it (0/1 in SQLite) and is read the way SQLAlchemy's Boolean
        reads one (``bool(value)``, None kept) before its check. A number or boolean
        field in ``trusted`` is known to hold a value of its type already (the caller
        proved the rows unedited since the engine wrote them), so it is not checked.
        """
        if any(not isinstance(self.fields[key], (Int, Num, Bool)) for key in trusted):
            raise ValueError("only number and boolean fields can be trusted")
        derived = dict(derived or {})
        memoized = dict(memoized or {})
        index = {name: i for i, name in enumerate(columns)}
        namespace: dict[str, Any] = {"isfinite": math.isfinite}
        body = ["def clean_rows(rows, s):", "    out = []", "    append = out.append", "    for r in rows:"]
        out = []
        for i, (key, node) in enumerate(self.fields.items()):
            out.append(f"{key!r}: a{i}")
            if key in memoized:
                fn, args = memoized[key]
                memo = namespace[f"m{i}"] = Memoized(node, fn)
                namespace[f"k{i}"] = memo.cache
                parts = [f"r[{index[a]}]" for a in args]
                arg = parts[0] if len(parts) == 1 else "(" + ", ".join(parts) + ")"
                body += [
                    f"        x = {arg}",
                    f"        h = k{i}.get(x) if type(x) in memo_keys else None",
                    f"        a{i} = (list(h[0]) if h[2] else h[0]) if h is not None and not h[1] else m{i}(x, s)",
                ]
                namespace["memo_keys"] = Memoized.KEY_TYPES
                continue
            if key in derived:
                fn, args = derived[key]
                namespace[f"d{i}"] = fn
                source = f"d{i}(" + ", ".join(f"r[{index[a]}]" for a in args) + ")"
            elif key in index and key in stored_booleans:
                source = f"(None if r[{index[key]}] is None else bool(r[{index[key]}]))"
            elif key in index:
                source = f"r[{index[key]}]"
            else:
                source = "None"
            if key in trusted:
                body.append(f"        a{i} = {source}")
                continue
            body += _field_code(namespace, i, key, node, source, "        ")
        body.append("        append({" + ", ".join(out) + "})")
        body.append("    return out")
        exec("\n".join(body), namespace)  # noqa: S102 - source built from schema keys only
        return namespace["clean_rows"]


RowsCleaner = Callable[[Any, Stats], list[dict[str, Any]]]


class Memoized:
    """``node``'s cleaner applied to ``fn(*key)``, once per distinct key.

    For columns with a handful of distinct values over many rows (the applied
    profiles' JSON, with the trial's variant). Each call still adds that value's
    counts to the caller's Stats, so the redaction block counts every
    occurrence, and a list comes back as a fresh copy (its items must be
    scalars), never shared between rows. ``cache`` maps a key to (value, whether
    cleaning counted anything, whether it is a list); generated row cleaners read
    it directly and call the object only for a key not seen before or one whose
    cleaning counted something.
    """

    KEY_TYPES = frozenset({str, type(None), tuple, int, bool})
    _LIMIT = 4096

    def __init__(self, node: Type, fn: Callable[..., Any]) -> None:
        self._clean = node.compile()
        self._fn = fn
        self.cache: dict[Any, tuple[Any, tuple[int, int, int, int] | None, bool]] = {}

    def __call__(self, key: Any, s: Stats) -> Any:
        hit = self.cache.get(key) if type(key) in self.KEY_TYPES else None
        if hit is None:
            counts = Stats()
            value = self._clean(self._fn(*key) if type(key) is tuple else self._fn(key), counts)
            counted = (counts.dropped_keys, counts.unlisted_values, counts.redacted_ids, counts.nulled_values)
            hit = (tuple(value) if type(value) is list else value, counted if any(counted) else None, type(value) is list)
            if type(key) in self.KEY_TYPES and len(self.cache) < self._LIMIT:
                self.cache[key] = hit
        value, counted, is_list = hit
        if counted:
            s.dropped_keys += counted[0]
            s.unlisted_values += counted[1]
            s.redacted_ids += counted[2]
            s.nulled_values += counted[3]
        return list(value) if is_list else value


def _field_code(namespace: dict[str, Any], i: int, key: str, node: Type, source: str, indent: str) -> list[str]:
    """Source lines setting ``a{i}`` to the cleaned value of ``source`` for one schema field."""
    if not _KEY_RE.fullmatch(key):
        raise ValueError(f"schema key {key!r} is not a plain identifier")
    var = f"a{i}"
    lines = [f"{var} = {source}"]
    if isinstance(node, Int):
        lines += [f"if {var} is not None and type({var}) is not int:", "    s.nulled_values += 1", f"    {var} = None"]
    elif isinstance(node, Bool):
        lines += [f"if {var} is not None and {var} is not True and {var} is not False:", "    s.nulled_values += 1", f"    {var} = None"]
    elif isinstance(node, Num):
        lines += [
            f"if {var} is not None and type({var}) is not int and (type({var}) is not float or not isfinite({var})):",
            "    s.nulled_values += 1",
            f"    {var} = None",
        ]
    elif isinstance(node, Enum):
        namespace[f"e{i}"] = frozenset(node.values) | {UNLISTED}
        lines += [f"if {var} is not None and (type({var}) is not str or {var} not in e{i}):", "    s.unlisted_values += 1", f"    {var} = {UNLISTED!r}"]
    elif isinstance(node, Const):
        namespace[f"c{i}"] = node.value
        lines = [f"{var} = c{i}"]
    elif isinstance(node, Pattern):
        # A value seen before and allowed is taken from the cleaner's cache; anything
        # else (new, refused, not a string) goes through the cleaner itself.
        cleaner = node.compile()
        namespace[f"f{i}"], namespace[f"k{i}"] = cleaner, cleaner.cache  # type: ignore[attr-defined]
        lines += [
            f"if {var} is not None:",
            f"    h = k{i}.get({var}) if type({var}) is str else None",
            f"    {var} = h[0] if h is not None and not h[1] else f{i}({var}, s)",
        ]
    else:
        # Every cleaner maps None to None: only call it for a value.
        namespace[f"f{i}"] = node.compile()
        lines += [f"if {var} is not None:", f"    {var} = f{i}({var}, s)"]
    return [indent + line for line in lines]


_KEY_RE = re.compile(r"[a-z_][a-z0-9_]{0,63}")


@dataclass(frozen=True)
class Map(Type):
    """An object with data-dependent keys; keys must themselves fit ``key`` (else dropped)."""

    key: Type
    value: Type
    max_items: int | None = None

    def compile(self) -> Cleaner:
        key_fn = self.key.compile()
        value_fn = self.value.compile()
        limit = self.max_items

        def clean(v: Any, s: Stats) -> dict[str, Any] | None:
            if v is None:
                return None
            if type(v) is not dict:
                s.nulled_values += 1
                return None
            out: dict[str, Any] = {}
            for raw_key, raw_value in v.items():
                if limit is not None and len(out) >= limit:
                    s.dropped_keys += 1
                    continue
                key = key_fn(raw_key, s)
                if key is None or key in out:
                    s.dropped_keys += 1
                    continue
                out[key] = value_fn(raw_value, s)
            return out

        return clean


# --- the report -----------------------------------------------------------------------

_NULLABLE_REASON = Enum(NULL_REASONS)

SCHEMA_DIAGNOSTICS = Obj(
    {
        "basis": Const("diagnostic_only_not_outcome_evidence"),
        "catalog_digests": List(Sha256(), max_items=64),
        "full_catalog_digests": List(Sha256(), max_items=64),
        "request_count": Int(),
        "terminal_usage_observations": Int(),
        "cache_observable": Bool(),
        "visible_schema_tokens": Int(),
        # The recording proxy's view (campaign.profiler.summary): digests and numbers only.
        "tool_bearing_requests": Int(),
        "unmatched_requests": Int(),
        "streams_not_clean": Int(),
        # What the provider did on the wire (campaign.profiler.faults): bounded words and counts.
        "unbilled_error_responses": Int(),
        "provider_faults": Map(Enum(vocabulary.PROVIDER_FAULTS), Int(), max_items=16),
        "ending_fault": Enum(vocabulary.PROVIDER_FAULTS),
        # Whose figure cost_usd is: the client's, or wire usage x catalog prices (an estimate).
        "cost_basis": Enum(("client_reported", "wire_usage_x_catalog_price")),
        "wire_cost_usd": Num(),
        "cache_write_observable": Bool(),
        "catalog_tool_counts": Map(Sha256(), Int(), max_items=64),
        "catalog_schema_tokens": Map(Sha256(), Int(), max_items=64),
        "wire_adapter_disagreements": Map(Enum(DISAGREEMENT_COUNTERS), Obj({"wire": Int(), "adapter": Int()}), max_items=8),
        # One measurement per disclosure application the runtime reported.
        "disclosure_measurements": List(
            Obj(
                {
                    "profile": Enum(DISCLOSURE_PROFILES),
                    "active": Bool(),
                    "estimated_tokens": Int(),
                    "disclosed_tokens": Int(),
                    "hidden_count": Int(),
                    "disclosed_count": Int(),
                }
            ),
            max_items=16,
        ),
        "resolved_bridge_invocations": Map(Sha256(), Obj({"calls": Int(), "errors": Int()}), max_items=256),
    }
)

TRIAL = Obj(
    {
        "trial_id": ScheduleId(),
        "pair_id": ScheduleId(),
        "task": Id(),
        "variant": Enum(VARIANTS),
        "provider": Id(),
        "repetition": Int(),
        "pair_order": Int(),
        "position": Int(),
        "attempt_seq": Int(),
        "attempt_status": Enum(ATTEMPT_STATUSES),
        "interrupted_attempts": Int(),
        "carried": Bool(),
        "outcome": Enum(OUTCOMES),
        "failure_class": Enum(FAILURE_CLASSES),
        "verified_pass": Bool(),
        "verifier_exit_code": Int(),
        "wall_seconds": Num(),
        "completed_turns": Int(),
        "uncached_input_tokens": Int(),
        "cached_input_tokens": Int(),
        "cache_write_tokens": Int(),
        "output_tokens": Int(),
        "tool_calls": Int(),
        "tool_errors": Int(),
        "diagnostic_events_version": Int(),
        "discovery_failures": Int(),
        "incorrect_tool_calls": Int(),
        "tool_error_recoveries": Int(),
        "cost_usd": Num(),
        "cost_reported": Bool(),
        "spend_complete": Bool(),
        "flush_complete": Bool(),
        "equivalent_spend_usd": Num(),
        "cleanup_complete": Bool(),
        "disposal_complete": Bool(),
        "finalization_failed": Bool(),
        "teardown_outcome": Enum(TEARDOWN_OUTCOMES),
        "containment": Enum(CONTAINMENT),
        "config_digest": Sha256(),
        "fixture_digest": Sha256(),
        "agent_model": Model(),
        "applied_profiles": List(Enum(DISCLOSURE_PROFILES), max_items=8),
        "applied_profile_matches_variant": Bool(),
        "schema_diagnostics": SCHEMA_DIAGNOSTICS,
    }
)

NOT_ATTEMPTED = Obj(
    {
        "trial_id": ScheduleId(),
        "pair_id": ScheduleId(),
        "task": Id(),
        "variant": Enum(VARIANTS),
        "provider": Id(),
        "repetition": Int(),
        "pair_order": Int(),
        "position": Int(),
        "status": Enum(TRIAL_STATUSES),
        "reason": Enum(NOT_ATTEMPTED_REASONS),
        "interrupted_attempts": Int(),
    }
)

# An attempt that counts towards spend and nothing else: never an outcome, never a failure.
SPEND_ONLY_ATTEMPT = Obj(
    {
        "trial_id": ScheduleId(),
        "pair_id": ScheduleId(),
        "task": Id(),
        "variant": Enum(VARIANTS),
        "provider": Id(),
        "repetition": Int(),
        "pair_order": Int(),
        "position": Int(),
        "campaign_id": Int(),
        "attempt_seq": Int(),
        "attempt_status": Enum(ATTEMPT_STATUSES),
        "why": Enum(SPEND_ONLY_REASONS),
        "wall_seconds": Num(),
        "cost_usd": Num(),
        "cost_reported": Bool(),
        "spend_complete": Bool(),
        "equivalent_spend_usd": Num(),
        "cleanup_complete": Bool(),
        "disposal_complete": Bool(),
        "finalization_failed": Bool(),
        "teardown_outcome": Enum(TEARDOWN_OUTCOMES),
        "containment": Enum(CONTAINMENT),
    }
)

_COUNTER_NAMES = (
    "wall_seconds",
    "completed_turns",
    "uncached_input_tokens",
    "cached_input_tokens",
    "cache_write_tokens",
    "output_tokens",
    "tool_errors",
    "discovery_failures",
    "incorrect_tool_calls",
    "cost_usd",
    "verified_pass",
)

VARIANT = Obj(
    {
        "variant": Enum(VARIANTS),
        "attempts": Int(),
        "interrupted_attempts": Int(),
        "provider_error_attempts": Int(),
        "engine_error_attempts": Int(),
        "unfinished_attempts": Int(),
        "not_carried_attempts": Int(),
        "spend_attempts": Int(),
        "successes": Int(),
        "success_rate": Num(),
        "success_rate_reason": _NULLABLE_REASON,
        "measured_spend_usd": Num(),
        "measured_spend_status": Enum(SPEND_STATUS),
        "attempts_with_cost": Int(),
        "attempts_with_complete_spend": Int(),
        "spend_complete": Bool(),
        "cost_per_verified_success_usd": Num(),
        "cost_per_verified_success_reason": _NULLABLE_REASON,
        "equivalent_spend_usd": Num(),
        "equivalent_spend_status": Enum(SPEND_STATUS),
        "equivalent_spend_basis": Enum(PRICE_BASES),
        "equivalent_spend_label": Enum(EQUIVALENT_LABELS),
        "equivalent_cost_per_verified_success_usd": Num(),
        "equivalent_cost_per_verified_success_reason": _NULLABLE_REASON,
        "wall_seconds_mean": Num(),
        "wall_seconds_measured": Int(),
        "tool_error_recoveries": Int(),
        "tool_error_recoveries_known": Int(),
        "missing": Map(Enum(_COUNTER_NAMES), Int()),
    }
)

DIFFERENCE = Obj(
    {
        "metric": Enum(("verified_success", "wall_seconds")),
        "estimate": Num(),
        "estimate_reason": _NULLABLE_REASON,
        "ci_low": Num(),
        "ci_high": Num(),
        "interval_reason": _NULLABLE_REASON,
        "tasks": Int(),
        "pairs": Int(),
    }
)

# The smallest effect on verified success the run's own size and spread detect
# (report.detectable): null with the reason when the run cannot show its spread.
DETECTABLE = Obj(
    {
        "metric": Const("verified_success"),
        "effect": Num(),
        "effect_reason": _NULLABLE_REASON,
        "power": Num(),
        "confidence": Num(),
        "simulations": Int(),
        "method": Const("simulated_campaigns_of_this_size"),
    }
)

PER_TASK = Obj(
    {
        "task": Id(),
        "pairs": Int(),
        "success_difference": Num(),
        "baseline_successes": Int(),
        "coding_successes": Int(),
        "wall_pairs": Int(),
        "wall_seconds_difference": Num(),
    }
)

# One provider in scope: its price basis and what its attempts spent (the whole lineage).
PROVIDER = Obj(
    {
        "name": Id(),
        "basis": Enum(PRICE_BASES),
        "basis_reason": _NULLABLE_REASON,
        "attempts": Int(),
        "interrupted_attempts": Int(),
        "provider_error_attempts": Int(),
        "engine_error_attempts": Int(),
        "spend_attempts": Int(),
        "measured_spend_usd": Num(),
        "measured_spend_status": Enum(SPEND_STATUS),
        "equivalent_spend_usd": Num(),
        "equivalent_spend_status": Enum(SPEND_STATUS),
    }
)

# Attempts the provider ended, per provider and variant, by the fault that ended them.
PROVIDER_FAULTS = Obj(
    {
        "provider": Id(),
        "variant": Enum(VARIANTS),
        "attempts": Int(),
        "by_fault": Map(Enum(vocabulary.PROVIDER_FAULTS), Int(), max_items=16),
    }
)

# The whole scope's spend. Equivalent spend is summed per price basis, never across bases.
SPEND = Obj(
    {
        "campaigns": List(Int(), max_items=64),
        "spend_attempts": Int(),
        "measured_spend_usd": Num(),
        "measured_spend_status": Enum(SPEND_STATUS),
        "attempts_with_cost": Int(),
        "attempts_with_complete_spend": Int(),
        "equivalent_spend_by_basis": Map(Enum(PRICE_BASES), Num(), max_items=2),
        "equivalent_spend_usd": Num(),
        "equivalent_spend_basis": Enum(PRICE_BASES),
        "equivalent_spend_reason": _NULLABLE_REASON,
    }
)

INTEGRITY = Obj(
    {
        "chain_verified": Bool(),
        "chain_verified_reason": _NULLABLE_REASON,
        "problems": Int(),
        "campaigns_verified": List(Int(), max_items=64),
    }
)

REDACTION = Obj(
    {
        "policy": Const("structural_allowlist"),
        "dropped_keys": Int(),
        "unlisted_values": Int(),
        "redacted_ids": Int(),
        "nulled_values": Int(),
    }
)

REPORT_SCHEMA = Obj(
    {
        "schema_version": Const(3),
        "kind": Const("live_agentic_coding_paired"),
        "synthetic": Bool(),
        "evidence": Enum(EVIDENCE),
        "integrity": INTEGRITY,
        "generator": Obj({"name": Const("campaign"), "version": Version()}),
        "scope": Obj({"provider": Id()}),
        "campaign": Obj(
            {
                "id": Int(),
                "kind": Enum(CAMPAIGN_KINDS),
                "state": Enum(CAMPAIGN_STATES),
                "live": Bool(),
                "stop_reason": Enum(STOP_REASONS),
                "continues_campaign_id": Int(),
                "created_at": Timestamp(),
                "started_at": Timestamp(),
                "finished_at": Timestamp(),
                "deadline_at": Timestamp(),
            }
        ),
        "approval": Obj(
            {
                "experiment_digest": Sha256(),
                "plan_digest": Sha256(),
                "approved_plan_digest": Sha256(),
                "approved": Bool(),
            }
        ),
        "experiment": Obj(
            {
                "tasks": List(Id()),
                "model": Model(),
                "agent": Enum(AGENTS),
                "revision": Revision(),
                "source_digest": Sha256(),
                "compiled_build_digest": Sha256(),
                "repetitions": Int(),
                "seed": Int(),
                "timeout": Num(),
                "run_timeout": Num(),
                "variants": List(Obj({"name": Enum(VARIANTS), "overlay_digest": Sha256()}), max_items=8),
                "config_digest": Sha256(),
                "fixture_digests": Map(Id(), Sha256()),
                "profile_python_digest": Sha256(),
                # applied_profile_from = "wire": the catalogs the probe measured per variant.
                "wire_catalogs": Map(Enum(VARIANTS), List(Sha256(), max_items=16), max_items=2),
                "reasoning": Enum(REASONING),
            }
        ),
        "runtime": Obj(
            {
                "agent": Enum(AGENTS),
                "model": Model(),
                "providers": List(Id(), max_items=64),
                "observed_models": List(Model(), max_items=64),
                "client_version": Version(),
                "client_version_reason": _NULLABLE_REASON,
            }
        ),
        "runtime_versions": Obj(
            {
                "pricing_catalog_digest": Sha256(),
                "pricing_catalog_digest_reason": _NULLABLE_REASON,
            }
        ),
        "completion": Obj(
            {
                "state": Enum(CAMPAIGN_STATES),
                "stop_reason": Enum(STOP_REASONS),
                "scheduled": Int(),
                "attempted": Int(),
                "carried_trials": Int(),
                "interrupted_attempts": Int(),
                "provider_error_attempts": Int(),
                "engine_error_attempts": Int(),
                "not_carried_attempts": Int(),
                "attempts_by_status": Map(Enum(ATTEMPT_STATUSES), Int()),
                "not_attempted": Int(),
                "not_attempted_by_reason": Map(Enum(NOT_ATTEMPTED_REASONS), Int()),
                "all_scheduled_attempted": Bool(),
            }
        ),
        "variants": List(VARIANT, max_items=8),
        "paired_differences": Obj(
            {
                "direction": Const("coding_minus_baseline"),
                "cluster": Const("task"),
                "weighting": Const("tasks_equal_after_within_task_mean"),
                "bootstrap": Obj(
                    {
                        "method": Const("percentile"),
                        "resamples": Int(),
                        "confidence": Num(),
                        "seed": Int(),
                        "generator": Const("numpy_pcg64"),
                        "resampled_unit": Const("task_cluster"),
                    }
                ),
                "exploratory": Bool(),
                "exploratory_below_tasks": Int(),
                "verified_success": DIFFERENCE,
                "wall_seconds": DIFFERENCE,
                "detectable_effect": DETECTABLE,
                "per_task": List(PER_TASK),
            }
        ),
        "providers": List(PROVIDER, max_items=64),
        "provider_faults": List(PROVIDER_FAULTS, max_items=128),
        "spend": SPEND,
        "trials": List(TRIAL),
        "not_attempted_trials": List(NOT_ATTEMPTED),
        "spend_only_attempts": List(SPEND_ONLY_ATTEMPT),
        "cost_basis": Const("runtime_reported_catalog_price_estimate_not_invoice"),
        "uncontrolled_factors": List(Enum(UNCONTROLLED_FACTORS), max_items=16),
        "decision": Obj(
            {
                "recorded": Const("keep_current_defaults"),
                "coding_profile": Const("opt_in"),
                "promotion": Const("not_proposed"),
                "basis": Enum(DECISION_BASIS),
                "schema_token_estimates_are_evidence": Const(False),
            }
        ),
        "redaction": REDACTION,
    }
)

_COMPILED: dict[int, tuple[Type, Cleaner]] = {}


def sanitize(doc: Any, schema: Type = REPORT_SCHEMA) -> tuple[Any, Stats]:
    """The allowlisted copy of ``doc`` and what had to change to get it."""
    entry = _COMPILED.get(id(schema))
    if entry is None or entry[0] is not schema:
        entry = _COMPILED[id(schema)] = (schema, schema.compile())
    stats = Stats()
    return entry[1](doc, stats), stats


# --- the fixed-point check ------------------------------------------------------------


def checker(node: Type) -> Callable[[Any], bool]:
    """A predicate: ``checker(node)(v)`` is True exactly when ``sanitize(v, node)`` would
    return ``v`` unchanged (an equal value, nothing counted).

    What ``campaign export`` re-checks before sharing: the same rules as the
    cleaners, evaluated without building a copy (re-cleaning a 100,000-trial
    report to compare it took longer than building it). Tested against the
    cleaners by a property test.
    """
    if isinstance(node, Int):
        return lambda v: v is None or type(v) is int
    if isinstance(node, Num):
        return lambda v: v is None or type(v) is int or (type(v) is float and math.isfinite(v))
    if isinstance(node, Bool):
        return lambda v: v is None or v is True or v is False
    if isinstance(node, Const):
        value = node.value
        return lambda v: type(v) is type(value) and v == value
    if isinstance(node, Enum):
        allowed = frozenset(node.values) | {UNLISTED}
        return lambda v: v is None or (type(v) is str and v in allowed)
    if isinstance(node, Pattern):
        fullmatch = node.regex.fullmatch
        return lambda v: v is None or (type(v) is str and len(v) <= MAX_ID_LENGTH and fullmatch(v) is not None)
    if isinstance(node, Timestamp):
        return lambda v: v is None or (type(v) is str and TIMESTAMP_RE.fullmatch(v) is not None)
    if isinstance(node, List):
        item, limit = checker(node.item), node.max_items
        return lambda v: v is None or (type(v) is list and (limit is None or len(v) <= limit) and all(map(item, v)))
    if isinstance(node, Map):
        key, value, limit = checker(node.key), checker(node.value), node.max_items
        return lambda v: v is None or (
            type(v) is dict and (limit is None or len(v) <= limit) and all(k is not None and key(k) and value(x) for k, x in v.items())
        )
    if isinstance(node, Obj):
        return _obj_checker(node)
    raise TypeError(f"no fixed-point check for {type(node).__name__}")


def _obj_checker(node: Obj) -> Callable[[Any], bool]:
    """Generated like ``Obj.compile``: scalar leaves inlined, the rest called."""
    namespace: dict[str, Any] = {"keys": frozenset(node.fields), "n": len(node.fields), "isfinite": math.isfinite}
    body = [
        "def check(v):",
        "    if v is None:",
        "        return True",
        "    if type(v) is not dict or len(v) != n or not keys.issuperset(v):",
        "        return False",
    ]
    for i, (key, child) in enumerate(node.fields.items()):
        if not _KEY_RE.fullmatch(key):
            raise ValueError(f"schema key {key!r} is not a plain identifier")
        body.append(f"    x = v[{key!r}]")
        if isinstance(child, Int):
            body.append("    if x is not None and type(x) is not int:")
        elif isinstance(child, Bool):
            body.append("    if x is not None and x is not True and x is not False:")
        elif isinstance(child, Num):
            body.append("    if x is not None and type(x) is not int and (type(x) is not float or not isfinite(x)):")
        elif isinstance(child, Enum):
            namespace[f"e{i}"] = frozenset(child.values) | {UNLISTED}
            body.append(f"    if x is not None and (type(x) is not str or x not in e{i}):")
        else:
            namespace[f"f{i}"] = checker(child)
            body.append(f"    if not f{i}(x):")
        body.append("        return False")
    body.append("    return True")
    exec("\n".join(body), namespace)  # noqa: S102 - source built from schema keys only
    return namespace["check"]


_CHECKERS: dict[int, tuple[Type, Callable[[Any], bool]]] = {}


def is_allowlisted(doc: Any, schema: Type = REPORT_SCHEMA) -> bool:
    """True when ``doc`` passes ``schema`` unchanged (``sanitize`` would return an equal copy, counting nothing)."""
    entry = _CHECKERS.get(id(schema))
    if entry is None or entry[0] is not schema:
        entry = _CHECKERS[id(schema)] = (schema, checker(schema))
    return entry[1](doc)


def enum_or_unlisted(value: Any, vocabulary: tuple[str, ...]) -> str | None:
    """For code that must group by an enum before sanitizing (counts by reason)."""
    if value is None:
        return None
    return value if isinstance(value, str) and value in vocabulary else UNLISTED
