"""Providers catalog: built-ins, strict validation, equivalent spend, digest."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from campaign.agents import offline
from campaign.agents.record import AgentRecord
from campaign.errors import UsageProblem
from campaign.providers import (
    BUILTIN_CATALOG,
    EQUIVALENT_SPEND_LABEL,
    Prices,
    catalog_digest,
    equivalent_spend,
    load_catalog,
    resolve_providers,
)

_GOOD = """
[providers.acme]
route = "acme"
default_model = "acme-1"
credential_env = "ACME_API_KEY"
agent = "generic"
basis = "public list price"
price_source = "https://acme.example/pricing"
price_date = "2025-09-30"

[providers.acme.prices]
uncached_input = 1.0
cached_input = 0.1
cache_write = 1.25
output = 4
"""


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "providers.toml"
    path.write_text(text)
    return path


def test_builtins_load_with_their_routes_credentials_and_bases():
    catalog = load_catalog()
    assert catalog.names() == ("openai-codex", "zai", "anthropic", "replay", "offline", "gemini")
    assert catalog.path == BUILTIN_CATALOG
    codex, zai, anthropic, replay, off, gemini = (catalog.get(n) for n in catalog.names())
    assert (replay.upstream, off.upstream, anthropic.upstream) == ("replay", "replay", "https://api.anthropic.com")
    # Every paid provider's client talks through the proxy to its upstream, with its own key.
    assert (zai.upstream, zai.agent, gemini.upstream, gemini.agent) == ("https://api.z.ai/api/paas/v4", "opencode", "https://generativelanguage.googleapis.com", "gemini")
    assert gemini.credential_env == "GEMINI_API_KEY" and gemini.basis == "public list price"
    assert replay.credential_env is None and replay.agent == "offline-wire" and replay.basis == "synthetic"
    assert (codex.credential_env, codex.agent) == ("OPENAI_API_KEY", "codex")
    assert (zai.credential_env, zai.route) == ("ZAI_API_KEY", "zai")
    assert (anthropic.credential_env, anthropic.agent) == ("ANTHROPIC_API_KEY", "claude-code")
    assert off.credential_env is None and off.agent == "offline" and off.basis == "synthetic"
    assert off.model == "offline:synthetic"
    for provider in (codex, zai, anthropic):
        assert provider.basis == "public list price"
        assert provider.price_source and provider.price_date
    assert catalog.digest == catalog_digest() == hashlib.sha256(BUILTIN_CATALOG.read_bytes()).hexdigest()


def test_offline_prices_are_the_offline_agents_own():
    off = load_catalog().get("offline")
    p = off.prices
    # The offline agent prices uncached, cache read, cache write, output in this order.
    assert (p.uncached_input, p.cached_input, p.cache_write, p.output) == offline._PRICES
    turns = [
        {"usage": {"input_tokens": 1200, "cached_input_tokens": 3400, "cache_write_tokens": 560, "output_tokens": 780}},
        {"usage": {"input_tokens": 90, "cached_input_tokens": 0, "cache_write_tokens": 10, "output_tokens": 45}},
    ]
    totals = {key: sum(t["usage"][key] for t in turns) for key in turns[0]["usage"]}
    counters = {
        "uncached_input_tokens": totals["input_tokens"],
        "cached_input_tokens": totals["cached_input_tokens"],
        "cache_write_tokens": totals["cache_write_tokens"],
        "output_tokens": totals["output_tokens"],
    }
    assert equivalent_spend(counters, off).usd == offline.synthetic_cost(turns)


@pytest.mark.parametrize(
    ("counters", "expected"),
    [
        # 1,000,000 uncached at $3 + 2,000,000 cached at $0.30 + 100,000 written at $3.75 + 50,000 out at $15
        ((1_000_000, 2_000_000, 100_000, 50_000), 3.0 + 0.6 + 0.375 + 0.75),
        # 12,345 x 3 + 6,789 x 0.3 + 0 x 3.75 + 1,011 x 15, per million
        ((12_345, 6_789, 0, 1_011), (37_035 + 2_036.7 + 0 + 15_165) / 1e6),
        ((0, 0, 0, 0), 0.0),
    ],
)
def test_equivalent_spend_matches_a_hand_computation(counters, expected):
    anthropic = load_catalog().get("anthropic")
    names = ("uncached_input_tokens", "cached_input_tokens", "cache_write_tokens", "output_tokens")
    spend = equivalent_spend(dict(zip(names, counters)), anthropic)
    assert spend.usd == pytest.approx(expected, abs=1e-6)
    assert spend.basis == "public list price"
    assert spend.label == EQUIVALENT_SPEND_LABEL == "list-price equivalent, not billed"


def test_one_hour_cache_writes_are_priced_at_their_own_price_never_the_5_minute_rate(tmp_path):
    names = ("uncached_input_tokens", "cached_input_tokens", "cache_write_tokens", "output_tokens")
    counters = dict(zip(names, (0, 0, 3_000_000, 0)))
    priced = load_catalog(_write(tmp_path, _GOOD.replace("cache_write = 1.25", "cache_write = 1.25\ncache_write_1h = 2.0"))).get("acme")
    assert priced.prices.cache_write_1h == 2.0
    # 1M of the 3M written went to the 1-hour cache: 2M at 1.25, 1M at 2.0.
    assert equivalent_spend(counters, priced, cache_write_1h_tokens=1_000_000).usd == pytest.approx(4.5)
    assert equivalent_spend(counters, priced).usd == pytest.approx(3.75)
    unpriced = load_catalog(_write(tmp_path, _GOOD)).get("acme")
    assert unpriced.prices.cache_write_1h is None
    assert equivalent_spend(counters, unpriced, cache_write_1h_tokens=1_000_000).usd is None  # unknown, not the 5-minute price
    assert equivalent_spend(counters, unpriced, cache_write_1h_tokens=0).usd == pytest.approx(3.75)


def test_equivalent_spend_reads_agent_records_and_rows():
    zai = load_catalog().get("zai")
    record = AgentRecord(uncached_input_tokens=500_000, cached_input_tokens=1_000_000, cache_write_tokens=0, output_tokens=100_000)
    assert equivalent_spend(record, zai).usd == pytest.approx(0.3 + 0.11 + 0.22)


@pytest.mark.parametrize("missing", ["uncached_input_tokens", "cached_input_tokens", "cache_write_tokens", "output_tokens"])
def test_any_unknown_counter_makes_the_spend_unknown_not_zero(missing):
    counters = {"uncached_input_tokens": 10, "cached_input_tokens": 20, "cache_write_tokens": 30, "output_tokens": 40, missing: None}
    for provider in load_catalog().providers:
        # Even where that counter's price is 0.0, unknown stays unknown.
        spend = equivalent_spend(counters, provider)
        assert spend.usd is None and spend.basis == provider.basis
    # A missing key is as unknown as None.
    del counters[missing]
    assert equivalent_spend(counters, load_catalog().get("offline")).usd is None


def test_bad_counters_are_refused():
    counters = {"uncached_input_tokens": -1, "cached_input_tokens": 0, "cache_write_tokens": 0, "output_tokens": 0}
    with pytest.raises(ValueError, match="non-negative"):
        equivalent_spend(counters, load_catalog().get("offline"))


def test_digest_changes_with_one_byte(tmp_path):
    path = _write(tmp_path, _GOOD)
    before = catalog_digest(path)
    assert load_catalog(path).digest == before
    path.write_bytes(path.read_bytes().replace(b"acme-1", b"acme-2"))
    assert catalog_digest(path) != before
    assert catalog_digest(path) != catalog_digest()


def test_an_override_file_loads(tmp_path):
    catalog = load_catalog(_write(tmp_path, _GOOD))
    acme = catalog.get("acme")
    assert acme.prices == Prices(1.0, 0.1, 1.25, 4.0)
    assert acme.model == "acme:acme-1"
    assert catalog.get("offline") is None


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda t: t + 'colour = "red"\n', "unknown key providers.acme.prices.colour"),
        (lambda t: t.replace('route = "acme"', 'route = "acme"\nregion = "eu"'), "unknown key providers.acme.region"),
        (lambda t: "version = 1\n" + t, "unknown key version"),
        (lambda t: t.replace('default_model = "acme-1"\n', ""), "missing key default_model"),
        (lambda t: t.replace("output = 4\n", ""), "missing key output"),
        (lambda t: t.replace("output = 4", "output = -4"), "non-negative"),
        (lambda t: t.replace("output = 4", 'output = "4"'), "non-negative number"),
        (lambda t: t.replace("output = 4", "output = nan"), "non-negative number"),
        # Any token count priced at 1e308 overflows the float its row is sealed with.
        (lambda t: t.replace("output = 4", "output = 1e308"), "at most 1,000,000"),
        (lambda t: t + "x = " + "[" * 3000 + "]" * 3000, "nested deeper than 64 levels"),
        (lambda t: t.replace("ACME_API_KEY", "ACME_SECRET"), "credential_env"),
        (lambda t: t.replace("ACME_API_KEY", "acme_api_key"), "credential_env"),
        (lambda t: t.replace('credential_env = "ACME_API_KEY"\n', ""), "needs its credential_env"),
        (lambda t: t.replace('"public list price"', '"invoice"'), "basis"),
        (lambda t: t.replace('"2025-09-30"', '"2025-02-30"'), "price_date"),
        (lambda t: t.replace('"2025-09-30"', '"30/09/2025"'), "price_date"),
        (lambda t: t.replace('route = "acme"', 'route = "acme:x"'), "route"),
        # A key pasted as the model would be copied into the store and every report.
        (lambda t: t.replace('"acme-1"', '"sk-proj-4fQx9ZbT2mWc7LpR8sVd"'), "default_model looks like an API key"),
        (lambda t: t.replace('agent = "generic"', 'agent = "no-such-agent"'), "agent"),
        (lambda t: t.replace("[providers.acme]", "[providers.Acme]").replace("[providers.acme.prices]", "[providers.Acme.prices]"), "name"),
        (lambda t: "", "at least one"),
        (lambda t: t.replace("[providers.acme]", "[providers.acme"), "cannot parse"),
        # provider_for_route would silently take the first of two: both are named instead.
        (lambda t: t + t.replace("[providers.acme", "[providers.acme-eu"), "providers.acme and providers.acme-eu both take the route 'acme'"),
    ],
    ids=lambda value: value if isinstance(value, str) else "",
)
def test_strict_validation_names_the_problem(tmp_path, edit, message):
    with pytest.raises(UsageProblem) as raised:
        load_catalog(_write(tmp_path, edit(_GOOD)))
    assert raised.value.option == "--providers-catalog"
    assert message in str(raised.value)


def test_a_missing_catalog_file_is_a_usage_problem(tmp_path):
    with pytest.raises(UsageProblem, match="nope.toml does not exist") as raised:
        load_catalog(tmp_path / "nope.toml")
    assert raised.value.option == "--providers-catalog"
    with pytest.raises(UsageProblem):
        catalog_digest(tmp_path / "nope.toml")


def test_resolve_providers_keeps_order_and_defaults_to_offline():
    catalog = load_catalog()
    assert [p.name for p in resolve_providers("zai, openai-codex", catalog)] == ["zai", "openai-codex"]
    assert [p.name for p in resolve_providers(None, catalog)] == ["offline"]


@pytest.mark.parametrize(("spec", "message"), [("zai,nope", "unknown provider 'nope'"), ("zai,zai", "named twice"), ("", "separated by commas"), ("zai,", "separated by commas")])
def test_resolve_providers_refuses_unknown_and_duplicate_names(spec, message):
    with pytest.raises(UsageProblem) as raised:
        resolve_providers(spec, load_catalog())
    assert raised.value.option == "--providers"
    assert message in str(raised.value)
