"""`campaign coding --campaign --variants`: an experiment of a profile's own variants,
run, confirmed per attempt, reported candidate by candidate, and bound to its definition."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from campaign.agents.profiles import PROFILES_DIR, load_profile
from campaign.config import parse_base_config
from campaign.errors import UsageProblem
from campaign.lanes.campaign_inputs import variant_configs
from test_cli_coding_paired_variants import WIRE_TABLES
from workspace import run

TASKS = "semver-precedence,invoice-rounding,logstat-json-output"
# The offline agent applied to a treatment of its own: "lean" discloses the coding profile
# and, through its own args, solves far more often; "default" is the legacy disclosure.
VARIANT_TABLES = """
[variants.default]
disclosure = "legacy"

[variants.lean]
disclosure = "coding"
args = ["--success-coding", "0.98"]
"""


def profile(tmp_path: Path, tables: str = VARIANT_TABLES) -> Path:
    path = tmp_path / "offline-variants.toml"
    path.write_text((PROFILES_DIR / "offline.toml").read_text() + tables)
    return path


def campaign(out: Path, agent: Path, *extra: str) -> list[str]:
    return ["coding", "--campaign", "--agent", str(agent), "--tasks", TASKS, "--repetitions", "2", "--output-dir", str(out), "--live", *extra]


def rows(out: Path, sql: str) -> list[tuple]:
    with sqlite3.connect(out / "campaign.db") as conn:
        return conn.execute(sql).fetchall()


def test_a_profiles_own_variants_run_confirmed_and_are_compared_with_the_first(tmp_path):
    agent, out = profile(tmp_path), tmp_path / "out"
    done = run(campaign(out, agent, "--variants", "default,lean"))
    assert done.exit_code == 0, done.output
    assert rows(out, "SELECT variant, count(*) FROM trials GROUP BY variant ORDER BY variant") == [("default", 6), ("lean", 6)]
    # Every attempt was seen to apply its own variant's treatment: none unconfirmed.
    attempts = rows(out, "SELECT t.variant, a.applied_profiles, a.failure_class FROM attempts a JOIN trials t ON t.id = a.trial_pk")
    assert {(v, json.loads(applied)[0]) for v, applied, _ in attempts} == {("default", "legacy"), ("lean", "coding")}
    assert "profile_unconfirmed" not in {f for *_, f in attempts} and "profile_gate" not in {f for *_, f in attempts}
    # Both positions within a pair, each variant first as often as the other over repetitions.
    firsts = rows(out, "SELECT variant, count(*) FROM trials WHERE pair_order = 0 GROUP BY variant ORDER BY variant")
    assert firsts == [("default", 3), ("lean", 3)]
    report = json.loads((out / "report.json").read_text())
    assert [v["name"] for v in report["experiment"]["variants"]] == ["default", "lean"]
    pd = report["paired_differences"]
    assert (pd["baseline"], [c["candidate"] for c in pd["comparisons"]]) == ("default", ["lean"])
    lean = pd["comparisons"][0]["verified_success"]
    assert lean["pairs"] == 6 and lean["estimate"] > 0
    assert "### lean minus default" in (out / "report.md").read_text()
    # Each variant's label is in the experiment (its disclosure: default legacy, lean
    # coding), so every trial is seen to have applied its own.
    assert {t["applied_profile_matches_variant"] for t in report["trials"]} == {True}
    # Nothing left: the same command finds every trial done.
    again = run(campaign(out, agent, "--variants", "default,lean", "--resume"))
    assert again.exit_code == 0, again.output
    assert len(rows(out, "SELECT id FROM attempts")) == 12


def test_a_changed_variant_is_a_different_experiment_on_resume(tmp_path):
    agent, out = profile(tmp_path), tmp_path / "out"
    first = run(campaign(out, agent, "--variants", "default,lean", "--tasks", "semver-precedence", "--repetitions", "1"))
    assert first.exit_code == 0, first.output
    # Another set of variants: refused, naming the field.
    other = run(campaign(out, agent, "--variants", "default,coding", "--resume"))
    assert other.exit_code == 2 and "variants" in other.output, other.output
    # The same names, lean's args edited: the agent profile's digest names it.
    agent.write_text(agent.read_text().replace('"0.98"', '"0.5"'))
    edited = run(campaign(out, agent, "--variants", "default,lean", "--resume"))
    assert edited.exit_code == 2 and "agent_profile_digest" in edited.output, edited.output
    assert len(rows(out, "SELECT id FROM attempts")) == 2


@pytest.mark.parametrize(
    ("tables", "variants", "says"),
    [
        (VARIANT_TABLES, "default,terse", "unknown variant terse: agent profile offline-variants defines baseline, coding, default, lean"),
        (VARIANT_TABLES, "coding,lean", "variants coding and lean would both be confirmed as coding with agent offline-variants"),
        ("\n[variants.plain]\nargs = []\n", "baseline,plain", "variant plain could never be confirmed with agent offline-variants"),
    ],
)
def test_variants_no_attempt_could_tell_apart_are_refused_before_anything_runs(tmp_path, tables, variants, says):
    agent, out = profile(tmp_path, tables), tmp_path / "out"
    refused = run(campaign(out, agent, "--variants", variants))
    assert refused.exit_code == 2, refused.output
    (line,) = [x for x in refused.output.splitlines() if x.startswith("Error:")]
    assert line.startswith("Error: --variants: ") and says in line, line
    assert not out.exists()



def test_a_variant_two_agent_profiles_define_with_different_disclosures_is_refused(tmp_path):
    # Through the CLI one --agent FILE serves every provider, and the catalog names only
    # built-in profiles (which define the built-in pair alone): the check guards the lane.
    alike = load_profile(str(profile(tmp_path)))
    other_path = tmp_path / "other" / "offline-variants.toml"
    other_path.parent.mkdir()
    other_path.write_text((PROFILES_DIR / "offline.toml").read_text() + VARIANT_TABLES.replace('[variants.lean]\ndisclosure = "coding"', '[variants.lean]\ndisclosure = "legacy"'))
    base = parse_base_config(b"", "the empty base config")
    assert set(variant_configs(base, ("default", "lean"), [alike, alike])) == {"default", "lean"}
    with pytest.raises(UsageProblem, match="variant lean applies the disclosure profiles coding and legacy under different agent profiles") as refused:
        variant_configs(base, ("default", "lean"), [alike, load_profile(str(other_path))])
    assert refused.value.option == "--variants"


def test_three_variants_of_one_catalog_are_each_confirmed_by_their_wire_fingerprint(tmp_path, tokenizer_cache, monkeypatch):
    monkeypatch.setenv("CAMPAIGN_TOKENIZER_CACHE", str(tokenizer_cache))
    agent, out = tmp_path / "offline-wire-variants.toml", tmp_path / "out"
    wire = (PROFILES_DIR / "offline-wire.toml").read_text().replace('applied_profile_from = "adapter"', 'applied_profile_from = "wire"')
    agent.write_text(wire + WIRE_TABLES)
    done = run(["coding", "--campaign", "--providers", "replay", "--agent", str(agent), "--tasks", "semver-precedence,invoice-rounding",
                "--repetitions", "1", "--variants", "plain,terse,think", "--live", "--output-dir", str(out)])  # fmt: skip
    assert done.exit_code == 0, done.output
    (provider,) = json.loads(rows(out, "SELECT experiment_json FROM campaigns")[0][0])["providers"]
    assert provider["wire_catalog_format"] == 3 and set(provider["wire_fingerprints"]) == {"plain", "terse", "think"}
    # Each attempt's requests carried its own variant's fingerprint, and no other's.
    attempts = rows(out, "SELECT t.variant, a.applied_profiles, a.failure_class, a.schema_diagnostics FROM attempts a JOIN trials t ON t.id = a.trial_pk")
    assert len(attempts) == 6
    for variant, applied, failure, diagnostics in attempts:
        assert json.loads(applied) == [variant] and failure != "profile_unconfirmed", (variant, applied, failure)
        assert set(json.loads(diagnostics)["fingerprint_digests"]) <= set(provider["wire_catalogs"][variant])
    report = json.loads((out / "report.json").read_text())
    assert provider["confirmed_as"] == {"plain": "plain", "terse": "terse", "think": "think"}
    assert {t["applied_profile_matches_variant"] for t in report["trials"]} == {True}
    assert report["experiment"]["wire_differences"] == [
        {"provider": "replay", "variant": "terse", "differs_in": ["system"]},
        {"provider": "replay", "variant": "think", "differs_in": ["reasoning"]},
    ]
    markdown = (out / "report.md").read_text()
    assert "- terse (replay): system prompt\n- think (replay): reasoning setting" in markdown


def test_the_readmes_offline_experiment_runs_as_written(tmp_path):
    # One file defines it (it extends the offline profile and names its variants): the
    # README's command, without --variants.
    shipped = Path(__file__).resolve().parents[1] / "examples" / "experiments" / "offline-lean.toml"
    out = tmp_path / "lean-out"
    done = run(["coding", "--campaign", "--agent", str(shipped), "--tasks", TASKS, "--output-dir", str(out), "--live"])
    assert done.exit_code == 0, done.output
    assert rows(out, "SELECT variant, count(*) FROM trials GROUP BY variant ORDER BY variant") == [("default", 12), ("lean", 12)]  # four repetitions by default
    report = json.loads((out / "report.json").read_text())
    assert {t["applied_profile_matches_variant"] for t in report["trials"]} == {True}
    assert "### lean minus default" in (out / "report.md").read_text()


def test_wire_variants_that_differ_only_in_a_setting_the_client_ignores_are_refused_naming_both(tmp_path, tokenizer_cache, monkeypatch):
    # "label" sets an environment variable the offline agent never reads: its requests are
    # plain's, so no attempt could be seen to apply either treatment.
    monkeypatch.setenv("CAMPAIGN_TOKENIZER_CACHE", str(tokenizer_cache))
    agent, out = tmp_path / "ignored.toml", tmp_path / "out"
    wire = (PROFILES_DIR / "offline-wire.toml").read_text().replace('applied_profile_from = "adapter"', 'applied_profile_from = "wire"')
    agent.write_text(wire + WIRE_TABLES + '\n[variants.label]\ndisclosure = "coding"\nenv = { UNREAD_SETTING = "1" }\n')
    refused = run(["coding", "--campaign", "--providers", "replay", "--agent", str(agent), "--tasks", "semver-precedence",
                   "--variants", "plain,terse,label", "--live", "--output-dir", str(out)])  # fmt: skip
    assert refused.exit_code == 2, refused.output
    (line,) = [x for x in refused.output.splitlines() if x.startswith("Error:")]
    assert "sends the same wire fingerprint under plain and label (compared: tool catalog, system prompt, model" in line, line
    assert not out.exists()
