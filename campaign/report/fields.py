"""The words and shapes a report's fields may take: the vocabularies only the report
authors, and the strict patterns an identifier must match to be shown.

``schema`` declares where each field goes; this module says what a leaf may hold.
"""

from __future__ import annotations

import re

from campaign import vocabulary
from campaign.credential_shapes import ID_SHAPES
from campaign.experiment import MAX_VARIANTS, VARIANT_NAME
from campaign.report.allowlist import Pattern

# --- code-authored vocabularies ---------------------------------------------------

# The engine's bounded words come from campaign.vocabulary, so the lanes, the store
# and the allowlist cannot drift apart; the report authors only the words below.
AGENTS = (*vocabulary.BUILTIN_AGENTS, "custom")
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
    "no_spread_between_tasks",
    # An interval that has one, and how it was had (report.stats.paired_interval).
    "between_task_spread_floored",
    "no_spread_bounded",
    "no_providers_catalog",
    "not_recorded_in_store",
    "no_diagnostic_events_version",
    "mixed_price_bases",
    "no_equivalent_spend",
    "not_checked",
    # Why a run's smallest detectable effect is unknown (campaign.report.spread, .simulate).
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
    # From the wire (campaign.report.reasoning): what each variant's requests asked for.
    "reasoning_provider_default_on_wire",
    "reasoning_same_on_wire",
    "reasoning_differs_between_variants",
    "reasoning_observed_for_some_variants",
)
EVIDENCE = ("live", "offline_unpaid")
DECISION_BASIS = (
    "synthetic_figures",
    "no_paired_evidence",
    "single_task_cluster",
    "exploratory_task_sample",
    "no_spread_between_tasks",
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
    + "".join(rf"(?![^\n]*{shape})" for shape in ID_SHAPES)
    + r"(?![^\n]*\.\.)"
    r"(?![^\n]*\.(?:toml|json|ya?ml|py|pem|key|txt|env|cfg|conf|ini|sh|log)$)"
    r"(?:[A-Za-z0-9][A-Za-z0-9._-]{0,63}:)?"
    rf"(?:(?!(?i:{'|'.join(_PATH_ROOTS)})/)[A-Za-z0-9][A-Za-z0-9._-]{{0,63}}/)?"
    r"[A-Za-z0-9][A-Za-z0-9._+-]{0,79}"
    r"(?:@(?:[0-9]{8}|latest))?"
)
SHA256_RE = re.compile(r"[0-9a-f]{64}")
REVISION_RE = re.compile(r"[0-9a-f]{7,64}")
VERSION_RE = re.compile(r"[0-9]+(?:\.[0-9A-Za-z]+){0,4}")
# A reasoning setting as the wire reader writes it (campaign.profiler.wire.reasoning_setting).
REASONING_SETTING_RE = re.compile(r"provider_default|[a-z_]{1,24}=[a-z0-9_-]{1,24}(?:,[a-z_]{1,24}=[a-z0-9_-]{1,24}){0,3}")


def Id() -> Pattern:
    return Pattern(TOKEN_RE)


def VariantName() -> Pattern:
    """An operator's variant name, as the experiment's rule admits it (``VARIANT_NAME``):
    an id, never a word the report lets through because it used to be a fixed one."""
    return Pattern(VARIANT_NAME)


def ScheduleId() -> Pattern:
    return Pattern(SCHEDULE_ID_RE)


def Model() -> Pattern:
    return Pattern(MODEL_RE)


def Sha256() -> Pattern:
    return Pattern(SHA256_RE, redact=False)


def ReasoningSetting() -> Pattern:
    return Pattern(REASONING_SETTING_RE, redact=False)


def Revision() -> Pattern:
    return Pattern(REVISION_RE, redact=False)


def Version() -> Pattern:
    return Pattern(VERSION_RE, redact=False)
