"""`campaign coding --paired --variants`: a plan over a profile's own variants, approved and
run, each attempt confirmed by its own wire fingerprint, and bound to the variants' definition."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from campaign.agents.profiles import PROFILES_DIR
from campaign.canonical import spec_digest
from workspace import Workspace, approve_and_go_live, run

TASKS = "semver-precedence,invoice-rounding"
CRED = "OFFLINE_TEST_API_KEY"
# Three treatments of one tool catalog, told apart on the wire by their system prompt and
# their reasoning setting.
WIRE_TABLES = """
[variants.plain]
disclosure = "coding"

[variants.terse]
disclosure = "coding"
args = ["--system-prompt", "Be terse."]

[variants.think]
disclosure = "coding"
args = ["--thinking-budget", "2048"]
"""


@pytest.fixture(autouse=True)
def seeded_cache(monkeypatch, tokenizer_cache):
    monkeypatch.setenv("CAMPAIGN_TOKENIZER_CACHE", str(tokenizer_cache))


def agent(ws: Workspace) -> Path:
    path = ws.root / "operator" / "three.toml"
    path.parent.mkdir(exist_ok=True)
    wire = (PROFILES_DIR / "offline-wire.toml").read_text().replace('applied_profile_from = "adapter"', 'applied_profile_from = "wire"')
    path.write_text(wire + WIRE_TABLES)
    return path


def rows(db: Path, sql: str) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        return conn.execute(sql).fetchall()


def test_a_plan_over_three_variants_is_approved_run_and_bound_to_their_definition(ws: Workspace, monkeypatch):
    monkeypatch.setenv(CRED, "unused-value")
    profile = agent(ws)
    args = ws.args("--agent", str(profile), "--variants", "plain,terse,think", "--repetitions", "3", "--model", "replay:scripted", tasks=TASKS)
    result, plan, report = approve_and_go_live(ws, args, CRED)
    assert result.exit_code == 0, result.output
    assert [v["name"] for v in plan["experiment"]["variants"]] == ["plain", "terse", "think"]
    assert set(plan["experiment"]["wire_fingerprints"]) == {"plain", "terse", "think"}
    # A pair is a task x repetition with one trial per variant; over a task's three
    # repetitions each variant takes each position once (a cyclic Latin square).
    trials = rows(ws.db_path, "SELECT task, variant, pair_order FROM trials WHERE campaign_id = (SELECT max(id) FROM campaigns)")
    assert len(trials) == 2 * 3 * 3
    for task in TASKS.split(","):
        positions = sorted((v, o) for t, v, o in trials if t == task)
        assert positions == sorted((v, o) for v in ("plain", "terse", "think") for o in range(3)), positions
    attempts = rows(ws.db_path, "SELECT t.variant, a.applied_profiles, a.failure_class FROM attempts a JOIN trials t ON t.id = a.trial_pk")
    assert len(attempts) == 18 and all(json.loads(applied) == [v] and failure != "profile_unconfirmed" for v, applied, failure in attempts), attempts
    data = json.loads(report.read_text())
    assert [c["candidate"] for c in data["paired_differences"]["comparisons"]] == ["terse", "think"]
    assert [(d["variant"], d["differs_in"]) for d in data["experiment"]["wire_differences"]] == [("terse", ["system"]), ("think", ["reasoning"])]
    assert plan["experiment"]["confirmed_as"] == {"plain": "plain", "terse": "terse", "think": "think"}
    assert {t["applied_profile_matches_variant"] for t in data["trials"]} == {True}

    # One variant's args edited after approval: a different experiment, refused before any trial.
    profile.write_text(profile.read_text().replace('"--system-prompt", "Be terse."', '"--system-prompt", "Be very terse."'))
    live = [*args, "--live", "--plan", str(ws.root / "operator" / "plan.json"), "--approve-plan-digest", spec_digest(plan)]
    live[live.index("--output") + 1] = str(ws.root / "reports" / "again.json")
    again = run(live)
    assert again.exit_code == 2 and "agent_profile_digest" in again.output, again.output
    assert len(rows(ws.db_path, "SELECT id FROM attempts")) == 18


@pytest.mark.parametrize(
    ("variants", "says"),
    [
        ("plain", "a paired comparison needs at least two variants"),
        ("plain,plain", "variant plain is listed twice"),
        ("plain,nosuch", "unknown variant nosuch"),
        ("plain,Terse", "'Terse' is not a variant name"),
    ],
)
def test_a_bad_variant_list_is_one_line_and_writes_nothing(ws: Workspace, variants, says):
    result = run(ws.args("--agent", str(agent(ws)), "--variants", variants, "--model", "replay:scripted", tasks=TASKS))
    assert result.exit_code == 2 and says in result.output and "--variants" in result.output, result.output
    assert ws.nothing_written()
