"""The report says what each variant's requests asked of the model's reasoning, as the wire
showed it: the same for every variant, or not (a confound unless it is the treatment)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from campaign.agents.profiles import PROFILES_DIR
from campaign.report import reasoning
from workspace import run

DIFFERENT = "reasoning_differs_between_variants"


@pytest.mark.parametrize(
    ("observed", "variants", "factor"),
    [
        ({}, ["baseline", "coding"], "reasoning_provider_default"),
        ({"baseline": ["provider_default"], "coding": ["provider_default"]}, ["baseline", "coding"], "reasoning_provider_default_on_wire"),
        ({"baseline": ["effort=high"], "coding": ["effort=high"]}, ["baseline", "coding"], "reasoning_same_on_wire"),
        ({"baseline": ["provider_default"], "coding": ["effort=high"]}, ["baseline", "coding"], DIFFERENT),
        ({"baseline": ["effort=high"], "coding": ["effort=high", "effort=low"]}, ["baseline", "coding"], DIFFERENT),
        ({"baseline": ["effort=high"]}, ["baseline", "coding"], "reasoning_observed_for_some_variants"),
    ],
)
def test_the_factor_says_what_the_wire_showed_of_every_variant(observed, variants, factor):
    assert reasoning.factor(observed, variants, None) == factor


def test_a_store_the_wire_never_saw_keeps_the_experiments_word():
    assert reasoning.factor({}, ["baseline", "coding"], "high") == "reasoning_configured_not_verified"


def test_each_variant_gathers_the_settings_of_its_attempts():
    rows = [
        ("coding", {"reasoning_requested": ["effort=low"]}),
        ("coding", {"reasoning_requested": ["effort=high"]}),
        ("baseline", {"reasoning_requested": ["provider_default"]}),
        ("baseline", None),  # an attempt the wire did not see
        ("baseline", {"catalog_digests": []}),  # ... or from before the field
    ]
    assert reasoning.by_variant(rows) == {"baseline": ["provider_default"], "coding": ["effort=high", "effort=low"]}


def wired_profile(tmp_path: Path, coding_args: str) -> Path:
    """The offline agent through the recording proxy; ``coding_args`` are the coding variant's own."""
    text = (PROFILES_DIR / "offline-wire.toml").read_text() + f"\n[variants.coding]\nargs = {coding_args}\n"
    path = tmp_path / "wired.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("coding_args", "factor", "settings"),
    [
        ('["--thinking-budget", "2048"]', DIFFERENT, {"baseline": ["provider_default"], "coding": ["budget_tokens=2048,thinking=enabled"]}),
        ("[]", "reasoning_provider_default_on_wire", {"baseline": ["provider_default"], "coding": ["provider_default"]}),
    ],
    ids=["coding-asks-for-thinking", "neither-asks"],
)
def test_a_campaign_through_the_proxy_reports_each_variants_reasoning(tmp_path, tokenizer_cache, monkeypatch, coding_args, factor, settings):
    monkeypatch.setenv("CAMPAIGN_TOKENIZER_CACHE", str(tokenizer_cache))
    out = tmp_path / "out"
    args = ["coding", "--campaign", "--providers", "replay", "--agent", str(wired_profile(tmp_path, coding_args)), "--tasks", "semver-precedence",
            "--repetitions", "2", "--live", "--output-dir", str(out)]  # fmt: skip
    done = run(args)
    assert done.exit_code == 0, done.output
    report = json.loads((out / "report.json").read_text())
    assert report["uncontrolled_factors"][-1] == factor
    seen = {t["variant"]: t["schema_diagnostics"]["reasoning_requested"] for t in report["trials"]}
    assert seen == settings
    markdown = (out / "report.md").read_text()
    for variant, values in settings.items():
        assert f"  - {variant}: " + ", ".join(f"`{v}`" for v in values) in markdown
