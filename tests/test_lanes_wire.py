"""The wire layer inside real runs: replay provider + recording proxy per attempt.

Every run here uses the offline agent's wire mode (``offline-wire``): each of
its turns is a real Anthropic Messages request through the attempt's proxy to a
fresh replay provider on loopback. No network beyond loopback, no spend.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from workspace import Workspace, approve_and_go_live, run

TASK = "semver-precedence"
CRED = "OFFLINE_TEST_API_KEY"


@pytest.fixture(autouse=True)
def seeded_cache(monkeypatch, tokenizer_cache):
    monkeypatch.setenv("CAMPAIGN_TOKENIZER_CACHE", str(tokenizer_cache))


def rows(db: Path, sql: str):
    with sqlite3.connect(db) as conn:
        conn.row_factory = sqlite3.Row
        return [dict(r) for r in conn.execute(sql)]


def campaign_args(out: Path, *extra: str) -> list[str]:
    return ["coding", "--campaign", "--providers", "replay", "--tasks", TASK, "--repetitions", "1", "--output-dir", str(out), *extra]


def test_a_campaign_through_the_proxy_records_the_wire(tmp_path):
    out = tmp_path / "out"
    result = run(campaign_args(out, "--live"))
    assert result.exit_code == 0, result.output
    attempts = rows(out / "campaign.db", "SELECT t.variant, a.* FROM attempts a JOIN trials t ON t.id = a.trial_pk ORDER BY a.seq")
    assert len(attempts) == 2
    digests = {}
    for a in attempts:
        assert a["outcome"] in ("passed", "failed") and a["failure_class"] in (None, "verifier_failed")
        assert a["flush_complete"] == 1 and a["spend_complete"] == 1
        assert a["cleanup_complete"] == 1 and a["disposal_complete"] == 1 and a["finalization_failed"] == 0
        diagnostics = json.loads(a["schema_diagnostics"])
        assert diagnostics["request_count"] == a["completed_turns"] >= 3
        assert diagnostics["unmatched_requests"] == 0 and diagnostics["flush_complete"] is True
        # The adapter's own counters agree with the wire: nothing to record as a disagreement.
        assert diagnostics["wire_adapter_disagreements"] == {}
        (digest,) = diagnostics["catalog_digests"]
        digests[a["variant"]] = (digest, diagnostics["catalog_tool_counts"][digest], diagnostics["visible_schema_tokens"])
    # The treatment is visible on the wire: coding sends a smaller catalog than legacy.
    assert digests["baseline"][0] != digests["coding"][0]
    assert digests["coding"][1] < digests["baseline"][1] and digests["coding"][2] < digests["baseline"][2]
    ledger = rows(out / "campaign.db", "SELECT role, state FROM ledger")
    assert sorted({r["role"] for r in ledger}) == ["client", "profiler", "provider", "verifier"]
    report = json.loads((out / "report.json").read_text())
    for trial in report["trials"]:
        shown = trial["schema_diagnostics"]
        assert shown["catalog_digests"] and shown["request_count"] >= 3 and shown["visible_schema_tokens"] > 0
        assert trial["flush_complete"] is True
    assert report["experiment"]["providers"][0]["wire_upstream"] == "replay" if "providers" in report["experiment"] else True


def test_a_missing_tokenizer_cache_is_refused_before_anything_runs(tmp_path, monkeypatch):
    monkeypatch.setenv("CAMPAIGN_TOKENIZER_CACHE", str(tmp_path / "empty-cache"))
    out = tmp_path / "out"
    result = run(campaign_args(out, "--live"))
    assert result.exit_code == 1
    assert "prepare-cache" in result.output
    assert not out.exists()


def test_a_wire_agent_needs_an_upstream_for_its_provider(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    catalog = tmp_path / "catalog.toml"
    catalog.write_text(
        '[providers.local]\nroute = "local"\ndefault_model = "m"\nagent = "offline-wire"\nbasis = "synthetic"\n'
        'price_source = "test"\nprice_date = "2026-01-01"\n[providers.local.prices]\n'
        "uncached_input = 1.0\ncached_input = 0.1\ncache_write = 1.0\noutput = 2.0\n"
    )
    result = run(["coding", "--campaign", "--providers", "local", "--providers-catalog", str(catalog), "--output-dir", str(tmp_path / "out"), "--live"])
    assert result.exit_code == 2
    assert "--providers" in result.output and "no upstream" in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["catalog.toml"]


def test_a_paired_live_run_binds_the_upstream_and_records_the_wire(ws: Workspace, monkeypatch):
    monkeypatch.setenv(CRED, "unused-value")
    args = ws.args("--agent", "offline-wire", "--repetitions", "1", "--model", "replay:scripted", tasks=TASK)
    result, plan, _ = approve_and_go_live(ws, args, CRED)
    assert result.exit_code == 0, result.output
    assert plan["experiment"]["wire_upstream"] == "replay"
    attempts = rows(ws.db_path, "SELECT flush_complete, spend_complete, schema_diagnostics FROM attempts")
    assert len(attempts) == 2
    assert all(a["flush_complete"] == 1 and a["spend_complete"] == 1 for a in attempts)
    assert len({json.loads(a["schema_diagnostics"])["catalog_digests"][0] for a in attempts}) == 2
