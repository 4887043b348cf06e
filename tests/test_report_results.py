"""Per-trial confirmation of an experiment's own variants, from the labels it recorded."""

from __future__ import annotations

import json

from campaign.report.allowlist import Stats
from campaign.report.identity import confirmation_labels
from campaign.report.results import NAMES, trial_cleaner


def row(variant: str, applied: list[str] | None, provider: str = "zai") -> tuple:
    values = {"variant": variant, "provider": provider, "applied_profiles": None if applied is None else json.dumps(applied)}
    return tuple(values.get(name) for name in NAMES)


def clean(experiment: dict, rows: list[tuple]) -> tuple[list[dict], Stats]:
    stats = Stats()
    return trial_cleaner(confirmation_labels(experiment))(rows, stats), stats


def test_each_trial_of_an_own_variant_is_checked_against_its_providers_label():
    experiment = {
        "kind": "campaign",
        "providers": [{"name": "zai", "confirmed_as": {"lean": "coding"}}, {"name": "anthropic", "confirmed_as": {"lean": "lean"}}],
    }
    rows = [
        row("lean", ["coding"]),
        row("lean", ["legacy"]),
        row("lean", ["coding", "legacy"]),  # mixed: not its own
        row("lean", ["lean"], provider="anthropic"),
        row("lean", ["coding"], provider="anthropic"),
        row("lean", None),  # nothing observed: unknown, never false
        row("baseline", ["legacy"]),
    ]
    trials, _ = clean(experiment, rows)
    assert [t["applied_profile_matches_variant"] for t in trials] == [True, False, False, True, False, None, True]


def test_only_the_experiments_own_labels_pass_the_allowlist_beside_the_disclosure_words():
    experiment = {"variants": [{"name": "plain"}, {"name": "terse"}], "confirmed_as": {"plain": "plain", "terse": "terse"}}
    trials, stats = clean(experiment, [row("terse", ["terse"]), row("terse", ["plain"]), row("terse", ["hunter2"])])
    assert [t["applied_profiles"] for t in trials] == [["terse"], ["plain"], ["unlisted"]] and stats.unlisted_values == 1
    assert [t["applied_profile_matches_variant"] for t in trials] == [True, False, False]
    # The built-in experiment records no labels: its cleaner is the one it always was.
    assert confirmation_labels({"variants": [{"name": "baseline"}, {"name": "coding"}]}) == ()
    trials, stats = clean({}, [row("coding", ["terse"]), row("coding", ["coding"])])
    assert [t["applied_profiles"] for t in trials] == [["unlisted"], ["coding"]] and stats.unlisted_values == 1
