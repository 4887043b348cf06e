"""The wire probe: each variant's catalog measured against the replay provider."""

from __future__ import annotations

import dataclasses
import re
import os
import sys
from pathlib import Path

import pytest

from campaign import benchmark
from campaign.agents.profiles import load_profile
from campaign.vocabulary import VARIANT_PROFILES
from campaign.errors import UsageProblem
from campaign.agents.applied import confirmed_profiles
from campaign.lanes.campaign_inputs import _probed
from campaign.lanes.probe import Probed, merged, probe_catalogs, variant_configs
from campaign.lanes.wire import WireRoute
from campaign.profiler import fingerprint
from campaign.profiler.wire import CATALOG_DIGEST_FORMAT, catalog_set_digest
from campaign.providers import load_catalog
from workspace import run

EXPECTED = {"baseline": ["b" * 64], "coding": ["c" * 64, "d" * 64]}
OFFLINE_WIRE = Path(__file__).resolve().parents[1] / "campaign" / "agents" / "profiles" / "offline-wire.toml"


@pytest.fixture(autouse=True)
def seeded_cache(monkeypatch, tokenizer_cache):
    monkeypatch.setenv("CAMPAIGN_TOKENIZER_CACHE", str(tokenizer_cache))


@pytest.mark.parametrize(
    ("observed", "applied"),
    [
        (["b" * 64], ("legacy",)),
        (["c" * 64, "d" * 64], ("coding",)),
        (["b" * 64, "c" * 64], ("legacy", "coding")),  # mixed: the attempt cannot pass as either
        (["e" * 64], ()),  # a catalog no variant produced confirms nothing
        ([], None),
        (None, None),
    ],
)
def test_confirmed_profiles(observed, applied):
    assert confirmed_profiles(observed, EXPECTED, VARIANT_PROFILES) == applied


def test_on_the_wire_a_variant_of_another_name_is_confirmed_as_itself(tmp_path):
    from campaign.agents.profiles import confirmation_label

    custom = tmp_path / "custom.toml"
    custom.write_text(OFFLINE_WIRE.read_text().replace('applied_profile_from = "adapter"', 'applied_profile_from = "wire"') + '[variants.lean]\nargs = []\n')
    profile = load_profile(str(custom))
    expected = {**EXPECTED, "lean": ["f" * 64]}
    labels = {v: confirmation_label(profile, v) for v in expected}
    assert labels == {"baseline": "legacy", "coding": "coding", "lean": "lean"}
    assert confirmed_profiles(["f" * 64], expected, labels) == ("lean",)
    assert confirmed_profiles(["f" * 64, "b" * 64], expected, labels) == ("lean", "legacy")


def test_probe_shows_each_variants_catalog(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = run(["probe", "--agent", "offline-wire", "--model", "replay:scripted"])
    assert result.exit_code == 0, result.output
    lines = [line for line in result.output.splitlines() if line.startswith(("baseline: catalog", "coding: catalog"))]
    assert len(lines) == 2 and "tools 37" in " ".join(lines) and "tools 6" in " ".join(lines)
    assert list(tmp_path.iterdir()) == []  # the probe's store and roots are temporary


def test_a_profile_whose_variants_send_one_catalog_is_refused(tmp_path, monkeypatch):
    # The variant config never reaches the agent, so both variants run the default catalog.
    same = tmp_path / "same.toml"
    same.write_text(OFFLINE_WIRE.read_text().replace('config_env = "CAMPAIGN_AGENT_CONFIG"', 'config_env = "SOMEWHERE_ELSE"'))
    route = WireRoute("replay", sys.executable, Path(os.environ["CAMPAIGN_TOKENIZER_CACHE"]))
    with pytest.raises(UsageProblem, match="same wire fingerprint under baseline and coding"):
        probe_catalogs(load_profile(str(same)), model="replay:scripted", task=benchmark.get_task("semver-precedence"), route=route, runner_python=sys.executable)


@pytest.mark.parametrize(
    ("table", "variants", "says"),
    [
        # The built-in coding's disclosure under another name: one catalog, two labels.
        ('[variants.terse]\ndisclosure = "coding"\n', ("baseline", "coding", "terse"), "same wire fingerprint under coding and terse"),
        # No disclosure of its own: the base config, whose default is the legacy catalog.
        ('[variants.lean]\nenv = { LEAN = "1" }\n', ("baseline", "lean"), "same wire fingerprint under baseline and lean (compared: tool catalog, system prompt, model"),
    ],
    ids=["same-disclosure", "only-a-setting-the-client-ignores"],
)
def test_variants_the_wire_cannot_tell_apart_are_refused_naming_both(tmp_path, table, variants, says):
    custom = tmp_path / "custom.toml"
    custom.write_text(OFFLINE_WIRE.read_text() + table)
    profile = load_profile(str(custom))
    route = WireRoute("replay", sys.executable, Path(os.environ["CAMPAIGN_TOKENIZER_CACHE"]))
    with pytest.raises(UsageProblem, match=re.escape(says)):
        probe_catalogs(profile, model="replay:scripted", task=benchmark.get_task("semver-precedence"), route=route, runner_python=sys.executable,
                       configs=variant_configs(profile, variants))  # fmt: skip


def test_variants_that_change_only_the_prompt_or_the_reasoning_are_told_apart_and_say_how(tmp_path):
    # One catalog for all three: the fingerprint's other parts carry the treatment.
    custom = tmp_path / "custom.toml"
    custom.write_text(
        OFFLINE_WIRE.read_text()
        + '[variants.terse]\ndisclosure = "coding"\nargs = ["--system-prompt", "Be terse."]\n'
        + '[variants.think]\ndisclosure = "coding"\nargs = ["--thinking-budget", "2048"]\n'
    )
    profile = load_profile(str(custom))
    route = WireRoute("replay", sys.executable, Path(os.environ["CAMPAIGN_TOKENIZER_CACHE"]))
    probed = probe_catalogs(profile, model="replay:scripted", task=benchmark.get_task("semver-precedence"), route=route, runner_python=sys.executable,
                            configs=variant_configs(profile, ("coding", "terse", "think")))  # fmt: skip
    assert probed.catalog_format == 3 and len({tuple(d) for d in probed.catalogs.values()}) == 3
    parts = probed.fingerprints
    assert fingerprint.differing_parts(parts["coding"], parts["terse"]) == ["system"]
    assert fingerprint.differing_parts(parts["coding"], parts["think"]) == ["reasoning"]


def test_probe_shows_every_variant_the_profile_defines(tmp_path, monkeypatch):
    custom = tmp_path / "custom.toml"
    custom.write_text(OFFLINE_WIRE.read_text() + '[variants.terse]\ndisclosure = "coding"\n')
    monkeypatch.chdir(tmp_path)
    result = run(["probe", "--agent", str(custom), "--model", "replay:scripted"])
    assert result.exit_code == 0, result.output
    shown = {line.split(":")[0]: line for line in result.output.splitlines() if line.startswith(("baseline: catalog", "coding: catalog", "terse: catalog"))}
    assert set(shown) == {"baseline", "coding", "terse"} and "tools 6" in shown["terse"] and "tools 37" in shown["baseline"]
    assert "coding: differs from baseline in tool catalog\n" in result.output and "terse: differs from baseline in tool catalog\n" in result.output


def test_probe_refuses_an_agent_without_a_wire(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = run(["probe", "--agent", "offline", "--model", "replay:scripted"])
    assert result.exit_code == 2 and "no wire to probe" in result.output


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--model", "replay:scripted", "--task", "nosuch"], "Error: --task: unknown task 'nosuch'"),
        (["--model", "zz:synthetic"], "no provider of the built-in catalog takes the route 'zz'; give --model PROVIDER:MODEL"),
    ],
)
def test_probe_refusals_name_the_option_at_fault(tmp_path, monkeypatch, args, says):
    monkeypatch.chdir(tmp_path)
    result = run(["probe", "--agent", "offline-wire", *args])
    assert result.exit_code == 2 and says in result.output, result.output
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("stored_format", "expected"), [(None, 1), (2, 2)])
def test_a_campaign_keeps_the_catalog_format_it_was_bound_with(stored_format, expected):
    # A campaign bound before format 2 has no wire_catalog_format: its resume and its
    # workers confirm attempts by format 1, the digests it holds, and never probe again.
    profile = dataclasses.replace(load_profile(str(OFFLINE_WIRE)), applied_profile_from="wire")
    provider = load_catalog().get("replay")
    route = WireRoute("replay", sys.executable, Path(os.environ["CAMPAIGN_TOKENIZER_CACHE"]))
    stored = {"providers": [{"name": provider.name, "client_version": None, "wire_catalogs": EXPECTED, **({"wire_catalog_format": stored_format} if stored_format else {})}]}
    where = [(benchmark.get_task("semver-precedence"), None)]
    assert _probed(profile, provider, route, None, where, stored, probe=True) == Probed(EXPECTED, expected)
    # A new campaign is probed and bound by whole fingerprints.
    assert _probed(profile, provider, route, None, where, None, probe=False) == Probed(None, CATALOG_DIGEST_FORMAT) and CATALOG_DIGEST_FORMAT == 3


def test_the_probes_of_a_runs_environments_bind_every_fingerprint_each_variant_sent():
    # On the host and in a task image's container a client names another working directory
    # and shell in its system prompt: each environment's fingerprint confirms its variant.
    host = Probed({"baseline": ["b-host"], "coding": ["c-host"]}, 3, {"baseline": {"system": ["s1"], "tools": ["t1"]}, "coding": {"system": ["s2"], "tools": ["t2"]}})
    image = Probed({"baseline": ["b-image"], "coding": ["c-image"]}, 3, {"baseline": {"system": ["s3"], "tools": ["t1"]}, "coding": {"system": ["s4"], "tools": ["t2"]}})
    both = merged([host, image], "claude-code")
    assert both.catalogs == {"baseline": ["b-host", "b-image"], "coding": ["c-host", "c-image"]}
    assert both.fingerprints == {"baseline": {"system": ["s1", "s3"], "tools": ["t1"]}, "coding": {"system": ["s2", "s4"], "tools": ["t2"]}}
    assert merged([host], "claude-code") is host
    # One fingerprint sent under two variants in different environments could confirm neither.
    crossed = Probed({"baseline": ["c-host"], "coding": ["x"]}, 3, None)
    with pytest.raises(UsageProblem, match="under baseline and coding"):
        merged([host, crossed], "claude-code")


def test_the_set_digest_ignores_the_order_of_the_tools_and_nothing_else():
    tools = [{"name": n, "input_schema": {"type": "object", "properties": {}}} for n in ("read", "write", "run")]
    assert catalog_set_digest(tools) == catalog_set_digest(tools[::-1])
    assert catalog_set_digest(tools) != catalog_set_digest(tools[:2])
    changed = [tools[0], tools[1], {**tools[2], "description": "another"}]
    assert catalog_set_digest(tools) != catalog_set_digest(changed)
