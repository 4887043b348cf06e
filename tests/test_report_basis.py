"""Equivalent spend keeps its price basis (issue 14, item 5).

Each provider's basis comes from the providers catalog, recorded in the
experiment; the offline agent's simulated route is synthetic. A synthetic
figure and a list-price figure are never added into one sum, and the Markdown
calls synthetic prices synthetic.
"""

from __future__ import annotations

from test_report_fixtures import full_attempt, insert_campaign

from campaign.report import build_report
from campaign.report.markdown import render_markdown

EXPERIMENT = {
    "kind": "campaign",
    "agent": "custom",
    "model": None,
    "seed": 107,
    "tasks": ["a", "b"],
    "providers": [
        {"name": "openai-codex", "model": "openai-codex:gpt-5-codex", "agent": "codex", "basis": "public list price"},
        {"name": "offline", "model": "offline:synthetic", "agent": "offline", "basis": "synthetic"},
    ],
}
PRICES = {"openai-codex": 0.5, "offline": 0.25}


def _campaign(engine, providers=("openai-codex", "offline"), experiment=EXPERIMENT, agent="custom") -> int:
    trials = [
        {"task": task, "repetition": 1, "variant": variant, "provider": provider, "attempt": full_attempt(equivalent_spend_usd=PRICES[provider], cost_usd=0.1)}
        for provider in providers
        for task in ("a", "b")
        for variant in ("baseline", "coding")
    ]
    return insert_campaign(engine, trials, agent=agent, kind="campaign", experiment=experiment)


def test_each_provider_records_its_basis_and_mixed_bases_are_never_summed(engine):
    cid = _campaign(engine)
    report = build_report(engine, cid)
    providers = {p["name"]: p for p in report["providers"]}
    assert providers["openai-codex"]["basis"] == "public_list_price" and providers["offline"]["basis"] == "synthetic"
    assert providers["openai-codex"]["equivalent_spend_usd"] == 2.0 and providers["offline"]["equivalent_spend_usd"] == 1.0
    assert providers["openai-codex"]["attempts"] == 4 and providers["openai-codex"]["measured_spend_usd"] == 0.4

    spend = report["spend"]
    assert spend["equivalent_spend_by_basis"] == {"public_list_price": 2.0, "synthetic": 1.0}
    assert spend["equivalent_spend_usd"] is None and spend["equivalent_spend_reason"] == "mixed_price_bases"
    assert spend["measured_spend_usd"] == 0.8  # measured cost is one basis: the clients' reported cost
    for v in report["variants"]:
        # 0.5 + 0.5 list price and 0.25 + 0.25 synthetic: never 1.5 in one column.
        assert v["equivalent_spend_usd"] is None and v["equivalent_spend_status"] == "mixed_price_bases"
        assert v["equivalent_spend_basis"] is None and v["equivalent_spend_label"] is None
        assert v["equivalent_cost_per_verified_success_usd"] is None
        assert v["equivalent_cost_per_verified_success_reason"] == "mixed_price_bases"

    md = render_markdown(report, "p.svg")
    assert "never added into one sum" in md and "public_list_price: 2.0000; synthetic: 1.0000" in md
    assert "Equivalent spend for provider `offline` is recorded token counters x synthetic prices" in md
    assert "Equivalent spend for provider `openai-codex` is recorded token counters x the provider's public list price" in md
    assert "| offline | synthetic | 4 | 0 |" in md and "| openai-codex | public_list_price | 4 | 0 |" in md
    assert "null (mixed_price_bases)" in md


def test_one_provider_scope_sums_its_one_basis_with_its_label(engine):
    cid = _campaign(engine)
    offline = build_report(engine, cid, provider="offline")
    listed = build_report(engine, cid, provider="openai-codex")
    for report, basis, label, total in (
        (offline, "synthetic", "synthetic-price equivalent, not billed", 0.5),
        (listed, "public_list_price", "list-price equivalent, not billed", 1.0),
    ):
        for v in report["variants"]:
            assert (v["equivalent_spend_usd"], v["equivalent_spend_basis"], v["equivalent_spend_label"]) == (total, basis, label)
            assert v["equivalent_cost_per_verified_success_usd"] == total / 2
        assert report["spend"]["equivalent_spend_usd"] == 2 * total and report["spend"]["equivalent_spend_basis"] == basis
        assert report["spend"]["equivalent_spend_by_basis"] == {basis: 2 * total}
    md = render_markdown(offline, "p.svg")
    assert "synthetic-price equivalent, not billed" in md
    assert "list price" not in md.replace("not a list price", "") and "list-price" not in md


def test_the_offline_route_is_synthetic_without_a_providers_list(engine):
    """A paired campaign of the offline agent records no providers catalog: its prices are
    still the offline agent's synthetic ones, never called public list prices."""
    cid = _campaign(engine, providers=("offline",), experiment={"model": "offline:synthetic", "seed": 1, "tasks": ["a", "b"]}, agent="offline")
    report = build_report(engine, cid)
    assert [(p["name"], p["basis"], p["basis_reason"]) for p in report["providers"]] == [("offline", "synthetic", None)]
    assert {v["equivalent_spend_label"] for v in report["variants"]} == {"synthetic-price equivalent, not billed"}
    md = render_markdown(report, "p.svg")
    assert "equivalent spend USD (synthetic-price equivalent, not billed)" in md
    assert "public list price" not in md


def test_an_unrecorded_basis_is_null_with_a_reason_never_guessed(engine):
    cid = _campaign(engine, providers=("openai-codex",), experiment={"model": "openai-codex:gpt-5-codex", "seed": 1, "tasks": ["a", "b"]}, agent="codex")
    report = build_report(engine, cid)
    assert [(p["basis"], p["basis_reason"]) for p in report["providers"]] == [(None, "not_recorded_in_store")]
    # One (unknown) basis: a total, but no basis label that would claim one.
    assert report["spend"]["equivalent_spend_usd"] == 2.0 and report["spend"]["equivalent_spend_basis"] is None
    assert report["spend"]["equivalent_spend_by_basis"] == {}
    assert {v["equivalent_spend_label"] for v in report["variants"]} == {None}
    md = render_markdown(report, "p.svg")
    assert "price bases differ or are unrecorded" in md and "basis is not recorded in the store" in md
