"""What the wire showed of each variant's reasoning, as the report says it.

The spec requires identical reasoning settings across variants unless reasoning is the
treatment. The experiment records no setting (the provider's default applies unless a
client asks otherwise), so where the recording proxy read the requests, each attempt's
``schema_diagnostics.reasoning_requested`` says what its requests asked for
(``campaign.profiler.summary``), and the report says per variant what the wire showed:
the same for every variant, or not (then the comparison is confounded, and it says so).
A store with no such observation reads as before: the provider's default, not observed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

PROVIDER_DEFAULT = "provider_default"
DIFFERS = "reasoning_differs_between_variants"
SAME = "reasoning_same_on_wire"
DEFAULT_ON_WIRE = "reasoning_provider_default_on_wire"
PARTLY = "reasoning_observed_for_some_variants"


def by_variant(rows: Sequence[tuple[str, Mapping[str, Any] | None]]) -> dict[str, list[str]]:
    """Each variant's settings over its attempts (``(variant, schema_diagnostics)``), sorted;
    a variant no attempt of which recorded them is absent."""
    found: dict[str, set[str]] = {}
    for variant, diagnostics in rows:
        settings = diagnostics.get("reasoning_requested") if isinstance(diagnostics, Mapping) else None
        if isinstance(settings, list) and settings and all(isinstance(s, str) for s in settings):
            found.setdefault(variant, set()).update(settings)
    return {variant: sorted(settings) for variant, settings in sorted(found.items())}


def factor(observed: Mapping[str, list[str]], variants: Sequence[str], recorded: Any) -> str:
    """The report's uncontrolled factor for reasoning: from the wire where every variant's
    attempts showed it, else (older stores, clients not on the wire) from the experiment."""
    if not observed:
        return "reasoning_provider_default" if recorded is None else "reasoning_configured_not_verified"
    if any(v not in observed for v in variants):
        return PARTLY  # unknown for some variant: neither the same nor different
    sets = {tuple(observed[v]) for v in variants}
    if len(sets) > 1:
        return DIFFERS
    return DEFAULT_ON_WIRE if sets == {(PROVIDER_DEFAULT,)} else SAME
