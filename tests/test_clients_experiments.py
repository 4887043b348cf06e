"""The shipped experiments (examples/experiments/*.toml), each rehearsed end to end with
its real client: the exact paid command with --rehearse (replay provider, synthetic prices,
no credential read), every variant confirmed on the wire by its own fingerprint."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.clients import env_with_clients, require, rows

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "experiments"
# example -> (provider, agent it extends, {candidate: parts its fingerprint must differ in})
# Claude Code (about 2 s an attempt) runs three repetitions: each of its three variants
# takes each position in the pair once, and the positions are counted.
REPETITIONS = {"claude-code-tools": 3}
SHIPPED = {
    "claude-code-tools": ("anthropic", "claude-code", {"four-tools": {"tools"}, "tests-first": {"system"}}),
    "codex-reasoning": ("openai-codex", "codex", {"high": {"reasoning"}}),
    "opencode-no-webfetch": ("zai", "opencode", {"no-webfetch": {"tools"}}),
}


def test_every_shipped_experiment_is_rehearsed_here():
    # The offline one is the README's tour, run in test_cli_coding_campaign_variants.
    assert sorted(p.stem for p in EXAMPLES.glob("*.toml")) == sorted([*SHIPPED, "offline-lean"])


@pytest.mark.parametrize("example", list(SHIPPED))
def test_a_shipped_experiment_rehearses_for_free_with_each_variant_confirmed(example, tmp_path, tokenizer_cache):
    provider, client, changes = SHIPPED[example]
    env = {k: v for k, v in env_with_clients(tokenizer_cache).items() if not k.endswith(("API_KEY", "AUTH_TOKEN", "ACCESS_TOKEN"))}
    require(client, env)
    out, runner_tmp = tmp_path / "rehearsal", tmp_path / "runner-tmp"
    runner_tmp.mkdir()
    args = ["coding", "--campaign", "--providers", provider, "--agent", str(EXAMPLES / f"{example}.toml"), "--tasks", "semver-precedence",
            "--repetitions", str(REPETITIONS.get(example, 1)), "--live", "--rehearse", "--output-dir", str(out)]  # fmt: skip
    done = subprocess.run([sys.executable, "-m", "campaign", *args], capture_output=True, text=True, env={**env, "TMPDIR": str(runner_tmp)}, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    db = out / "campaign.db"
    (campaign,) = rows(db, "SELECT state, experiment_json FROM campaigns")
    experiment = json.loads(campaign["experiment_json"])
    # The file's default_variants, in its order, the first the baseline.
    names = [v["name"] for v in experiment["variants"]]
    assert campaign["state"] == "completed" and names[1:] == list(changes) and len(names) == len(changes) + 1
    attempts = rows(db, "SELECT t.variant, a.verified_pass, a.applied_profiles, a.failure_class FROM attempts a JOIN trials t ON t.id = a.trial_pk")
    repetitions = REPETITIONS.get(example, 1)
    assert sorted(a["variant"] for a in attempts) == sorted(names * repetitions)
    if repetitions == len(names):  # a cyclic Latin square: every variant in every position once
        positions = rows(db, "SELECT variant, pair_order FROM trials")
        assert sorted((p["variant"], p["pair_order"]) for p in positions) == sorted((v, o) for v in names for o in range(len(names)))
    for a in attempts:
        assert json.loads(a["applied_profiles"]) == [a["variant"]] and a["failure_class"] != "profile_unconfirmed", a
    report = json.loads((out / "report.json").read_text())
    assert {t["applied_profile_matches_variant"] for t in report["trials"]} == {True}
    differs = {d["variant"]: set(d["differs_in"]) for d in report["experiment"]["wire_differences"]}
    assert set(differs) == set(changes) and all(changes[v] <= differs[v] for v in changes), differs
    differences = report["paired_differences"]
    assert [c["candidate"] for c in differences["comparisons"]] == list(changes)
    # Each comparison's interval at the family's level: 97.5% each for two candidates.
    assert differences["adjustment"]["candidates"] == len(changes) and differences["adjustment"]["comparison_confidence"] == 1 - 0.05 / len(changes)
