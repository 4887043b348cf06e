"""Redaction is structural: nothing outside the allowlist schema reaches a shared file.

A canary string is planted in every free-text place the store (and the
environment) can hold; none may reach the exported JSON, Markdown or SVG.
A property test feeds arbitrary values through the schema and checks every
string that comes out is an enum member, a constant, or fits a strict pattern.
"""

from __future__ import annotations

import json
import math
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import update
from test_report_fixtures import insert_campaign, paired_trials

from campaign.cli import cli
from campaign.report import build_report
from campaign.report import allowlist as A
from campaign.report import fields as F
from campaign.report import schema as S
from campaign.report.codegen import Obj
from campaign.store.models import Campaign

CANARY = "CANARYq7x"  # no hex letters beyond 'a'/'c': a redacted hash cannot spell it


def _canary(tag: str) -> str:
    return f"{CANARY}{tag}"


def plant(engine, monkeypatch) -> int:
    """A campaign with a canary in every free-text field we can reach."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-" + _canary("env"))
    monkeypatch.setenv("CAMPAIGN_PROMPT", _canary("prompt-env"))
    experiment = {
        # legitimate keys with values that do not fit their types
        "model": f"openai-codex:gpt 6 {_canary('model')}",
        "revision": _canary("rev"),
        "tasks": ["fix-bug", f"/srv/{_canary('taskpath')}"],
        "variants": [{"name": _canary("variant"), "overlay": f"[runtime] secret = '{_canary('overlay')}'"}],
        "fixture_digests": {f"/home/op/{_canary('fix')}": "0" * 64, "fix-bug": _canary("fixdigest")},
        "reasoning": f"think hard {_canary('reasoning')}",
        "agent": {"name": f"/home/op/{_canary('agentfile')}.toml"},
        "pricing_catalog_digest": _canary("pricing"),
        "timeout": f"{_canary('timeout')}",
        # keys that are not in the schema at all
        "prompt": f"Please fix {_canary('prompt')}",
        "base_config": f"[provider]\napi_key = '{_canary('config')}'",
        "env": {"OPENAI_API_KEY": _canary("envsnap")},
        "headers": {"Authorization": f"Bearer {_canary('header')}"},
    }

    diagnostics = {
        "prompt": _canary("diagprompt"),
        "catalog_digests": [_canary("catdigest"), "c" * 64],
        "disclosure_measurements": {"profile": _canary("dmprofile"), "estimated_tokens": _canary("dmtokens"), "raw": _canary("dmraw")},
        "resolved_bridge_invocations": {
            _canary("tool"): {"calls": 1, "errors": 0},
            "d" * 64: {"calls": _canary("calls"), "errors": 1, "arguments": _canary("args")},
        },
        "tool_outputs": [_canary("tooloutput")],
        "reasoning": _canary("hiddenreasoning"),
    }

    def attempt(task, rep, variant):
        return {
            "outcome": f"failed: {_canary('outcome')}",
            "failure_class": f"RuntimeError: {_canary('exception')} at /home/op/x.py:1",
            "verified_pass": rep % 2 == 0,
            "wall_seconds": 12.5,
            "tool_errors": 1,
            "cost_usd": 0.1,
            "spend_complete": True,
            "teardown_outcome": _canary("teardown"),
            "containment": _canary("containment"),
            "config_digest": _canary("cfg"),
            "fixture_digest": f"/path/{_canary('fixd')}",
            "agent_model": f"gpt-6\n{_canary('agentmodel')}",
            "applied_profiles": json.dumps(["coding", f"model said {_canary('profile')}"]),
            # The first attempt's diagnostics are not JSON at all.
            "schema_diagnostics": f"not json {_canary('badjson')}" if (task, rep, variant) == ("fix-bug", 1, "baseline") else json.dumps(diagnostics),
            "private_root": f"/tmp/campaign-paired-runtime-{_canary('root')}",
        }

    trials = paired_trials(["fix-bug", f"fix bug {_canary('taskname')}"], 2, attempt)
    trials.append({"task": "fix-bug", "repetition": 3, "variant": "baseline", "attempt": None, "reason": f"boom: {_canary('reason')}"})
    for t in trials[:2]:
        t["model"] = f"openai-codex:{_canary('trialmodel')} with spaces"
        t["provider"] = f"../{_canary('provider')}"
    cid = insert_campaign(engine, trials, agent=f"/home/op/{_canary('agent')}.toml", experiment=experiment, stop_reason=f"Traceback {_canary('stop')}")
    with engine.begin() as conn:
        conn.execute(update(Campaign).where(Campaign.id == cid).values(completion_json=json.dumps({"note": _canary("completion")})))
    return cid


def _assert_clean(text: str, where: str) -> None:
    assert CANARY.lower() not in text.lower(), f"canary reached {where}"
    assert "/home/op" not in text and "/tmp/campaign-paired-runtime" not in text, f"a path reached {where}"


def test_no_canary_reaches_the_report_or_the_export(engine, db_url, runner, tmp_path, monkeypatch):
    cid = plant(engine, monkeypatch)
    out = tmp_path / "out" / "report.json"
    # No engine writes such rows (the campaign row's agent is not its experiment's), so
    # they do not verify; the report published anyway is where a canary could leak.
    refused = runner.invoke(cli, ["report", str(cid), "--output", str(out), "--db", db_url])
    assert refused.exit_code == 1 and "agent is not its experiment's" in refused.output
    _assert_clean(refused.output, "report stderr")
    result = runner.invoke(cli, ["report", str(cid), "--output", str(out), "--allow-unverified", "--db", db_url])
    assert result.exit_code == 0, result.output
    _assert_clean(result.output, "report stdout")
    result = runner.invoke(cli, ["export", str(cid), "--output-dir", str(tmp_path / "share"), "--allow-unverified", "--db", db_url])
    assert result.exit_code == 0, result.output
    files = [out, out.with_suffix(".md"), out.with_suffix(".svg"), *sorted((tmp_path / "share").iterdir())]
    assert len(files) == 6
    for path in files:
        _assert_clean(path.read_text(), path.name)

    report = json.loads(out.read_text())
    # The planted values were replaced, not silently kept elsewhere.
    assert report["runtime"]["agent"] == "custom" and report["experiment"]["agent"] == "custom"
    assert report["experiment"]["model"].startswith("redacted-")
    assert report["experiment"]["revision"] is None
    assert report["experiment"]["reasoning"] == "unlisted"
    assert report["campaign"]["stop_reason"] == "unlisted"
    assert {t["failure_class"] for t in report["trials"]} == {"unlisted"}
    assert all(t["applied_profiles"] == ["coding", "unlisted"] for t in report["trials"])
    assert all(t["config_digest"] is None for t in report["trials"])
    assert report["runtime_versions"]["pricing_catalog_digest"] is None
    assert report["not_attempted_trials"][0]["reason"] == "unlisted"
    diag = report["trials"][1]["schema_diagnostics"]
    assert diag["catalog_digests"] == [None, "c" * 64]
    assert diag["resolved_bridge_invocations"] == {"d" * 64: {"calls": None, "errors": 1}}
    assert diag["basis"] == "diagnostic_only_not_outcome_evidence"
    assert report["trials"][0]["schema_diagnostics"] is None  # unreadable JSON is dropped, not echoed
    # Tasks whose names do not fit the id pattern stay distinct clusters under a hashed id.
    assert len(report["paired_differences"]["per_task"]) == 2
    assert report["redaction"]["redacted_ids"] > 0 and report["redaction"]["dropped_keys"] > 0
    assert "private_root" not in json.dumps(report)


# --- the schema itself -------------------------------------------------------------


def _allowed_strings(node: A.Type, acc: set[str]) -> set[str]:
    if isinstance(node, A.Enum):
        acc.update(node.values)
    elif isinstance(node, A.Const) and isinstance(node.value, str):
        acc.add(node.value)
    elif isinstance(node, Obj):
        for child in node.fields.values():
            _allowed_strings(child, acc)
    elif isinstance(node, A.List):
        _allowed_strings(node.item, acc)
    elif isinstance(node, A.Map):
        _allowed_strings(node.key, acc)
        _allowed_strings(node.value, acc)
    return acc


ALLOWED = _allowed_strings(S.REPORT_SCHEMA, {A.UNLISTED})
PATTERNS = (F.SCHEDULE_ID_RE, F.MODEL_RE, F.SHA256_RE, F.REVISION_RE, A.TIMESTAMP_RE, F.VERSION_RE)
SAFE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+@:/-]*")


def _leaves(value, path="$"):
    if isinstance(value, dict):
        for k, v in value.items():
            yield f"{path}.key", k
            yield from _leaves(v, f"{path}.{k}")
    elif isinstance(value, list):
        for v in value:
            yield from _leaves(v, f"{path}[]")
    else:
        yield path, value


def assert_only_allowed(doc) -> None:
    for path, leaf in _leaves(doc):
        if isinstance(leaf, str):
            assert leaf in ALLOWED or any(p.fullmatch(leaf) for p in PATTERNS), (path, leaf)
            assert SAFE_ID.fullmatch(leaf) or leaf in ALLOWED, (path, leaf)
        else:
            assert leaf is None or isinstance(leaf, (bool, int, float)), (path, leaf)
            if isinstance(leaf, float):
                assert math.isfinite(leaf)


json_leaf = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=20), st.sampled_from(sorted(ALLOWED)))
any_json = st.recursive(json_leaf, lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)), max_leaves=8)


def strategy_for(node: A.Type, depth: int = 0):
    if isinstance(node, Obj):
        fields = {k: strategy_for(v, depth + 1) for k, v in node.fields.items() if k not in node.optional}
        optional = {k: strategy_for(node.fields[k], depth + 1) for k in node.optional}
        return st.one_of(st.fixed_dictionaries(fields, optional={**optional, "free_text": st.text(max_size=20), "prompt": any_json}), any_json)
    if isinstance(node, A.List):
        return st.one_of(st.lists(strategy_for(node.item, depth + 1), max_size=2 if depth else 3), any_json)
    if isinstance(node, A.Map):
        return st.one_of(st.dictionaries(st.text(max_size=70) | st.sampled_from(sorted(ALLOWED)), strategy_for(node.value, depth + 1), max_size=2), any_json)
    return any_json


@settings(max_examples=60, deadline=None)
@given(strategy_for(S.REPORT_SCHEMA))
def test_anything_passed_through_the_schema_is_allowlisted(doc):
    clean, _ = A.sanitize(doc, S.REPORT_SCHEMA)
    if clean is not None:
        assert_only_allowed(clean)
        again, changed = A.sanitize(clean, S.REPORT_SCHEMA)
        assert again == clean and not any(changed.as_dict().values())


@settings(max_examples=150, deadline=None)
@given(strategy_for(S.REPORT_SCHEMA))
def test_the_export_fixed_point_check_agrees_with_the_cleaners(doc):
    """`campaign export` checks the report without re-cleaning it: the check must say
    "unchanged" exactly when the cleaners would change nothing."""
    clean, changed = A.sanitize(doc, S.REPORT_SCHEMA)
    unchanged = not any(changed.as_dict().values()) and json.dumps(clean, sort_keys=True) == json.dumps(doc, sort_keys=True)
    assert A.is_allowlisted(doc, S.REPORT_SCHEMA) == unchanged
    assert A.is_allowlisted(clean, S.REPORT_SCHEMA)


def test_built_reports_hold_only_allowlisted_strings(engine, monkeypatch):
    assert_only_allowed(build_report(engine, plant(engine, monkeypatch)))


@pytest.mark.parametrize(
    "value, kept",
    [
        ("openai-codex:gpt-6.1-sol", True),
        ("openrouter:meta-llama/llama-3.1-70b", True),
        ("anthropic:claude-sonnet-4-5@20250929", True),
        # Real names in use (providers.toml, the agents' outputs, the tests).
        ("anthropic:claude-sonnet-4-5-20250929", True),
        ("claude-sonnet-4-5-20250929", True),
        ("openai:gpt-5.1-codex", True),
        ("openai:gpt-5-codex", True),
        ("openrouter:anthropic/claude-sonnet-4.5", True),
        ("offline:synthetic", True),
        ("replay:scripted", True),
        ("zai:glm-4.6", True),
        ("gpt-4.1-mini-2025-04-14", True),
        ("anthropic:claude-3-5-sonnet-latest", True),
        ("vertex:claude-opus-4@latest", True),
        ("/home/user/model", False),
        ("gpt 4", False),
        ("a:b/../../etc", False),
        ("x" * 200, False),
        ("model\n", False),
        # Paths, identifiers and addresses are never model names (issue 14, item 6).
        ("anthropic:home/alice/secret", False),
        ("anthropic:home/alice", False),
        ("openrouter:Users/alice", False),
        ("openrouter:a/b/c", False),
        ("anthropic:123e4567-e89b-12d3-a456-426614174000", False),
        ("123e4567-e89b-12d3-a456-426614174000", False),
        ("openai:req-0123456789abcdef", False),
        ("openai:alice@example.com", False),
        ("alice@example.com", False),
        ("anthropic:claude@home", False),
        ("openai:settings.toml", False),
        ("anthropic:id_rsa.pem", False),
    ],
)
def test_model_pattern(value, kept):
    clean, _ = A.sanitize(value, F.Model())
    assert (clean == value) is kept
    if not kept:
        assert clean == A.redacted_id(value)


def test_a_credential_shaped_model_name_never_reaches_a_report():
    from campaign.report.fields import MODEL_RE

    for model in ("claude-sonnet-4-5-20250929", "openai:gpt-5-codex", "offline:synthetic", "zai:glm-4.6"):
        assert MODEL_RE.fullmatch(model), model
    for secret in ("sk-proj-" + "a1B2" * 12, "AKIAIOSFODNN7EXAMPLE", "ghp_" + "x" * 36, "anthropic:sk-ant-" + "Q" * 40):
        assert not MODEL_RE.fullmatch(secret), secret


def test_a_path_uuid_or_address_in_agent_model_is_redacted_never_leaked(engine):
    """Model names reach trials[].agent_model from agent output; a value shaped like a
    path, an identifier or an e-mail address is replaced, and counted, like any refused id."""
    leaks = ["anthropic:home/alice/secret", "anthropic:123e4567-e89b-12d3-a456-426614174000", "openai:alice@example.com"]
    models = iter(leaks + ["anthropic:claude-sonnet-4-5-20250929"])
    cid = insert_campaign(engine, paired_trials(["a", "b"], 1, lambda t, r, v: {"verified_pass": True, "agent_model": next(models)}))
    report = build_report(engine, cid)
    shown = [t["agent_model"] for t in report["trials"]]
    assert shown == [A.redacted_id(v) for v in leaks] + ["anthropic:claude-sonnet-4-5-20250929"]
    text = json.dumps(report)
    assert all(part not in text for part in ("alice", "123e4567", "example.com"))
    assert report["redaction"]["redacted_ids"] >= 3
    assert all(m.startswith("redacted-") or m == "anthropic:claude-sonnet-4-5-20250929" for m in report["runtime"]["observed_models"])


def test_export_refuses_a_report_that_is_not_a_fixed_point(engine):
    import copy

    from campaign.errors import CampaignError
    from campaign.report.export import check_allowlisted

    report = build_report(engine, insert_campaign(engine, paired_trials(["a", "b"], 1, lambda t, r, v: {"verified_pass": True})))
    check_allowlisted(report)
    for tamper in (
        lambda d: d["trials"][0].__setitem__("agent_model", "anthropic:home/alice/secret"),
        lambda d: d["trials"][1].__setitem__("prompt", "fix it"),
        lambda d: d["trials"][1].pop("wall_seconds"),
        lambda d: d["variants"][0].__setitem__("attempts", 2.0),
        lambda d: d.__setitem__("schema_version", 4),
        lambda d: d["completion"]["attempts_by_status"].__setitem__("exploded", 1),
        lambda d: d["integrity"].__setitem__("chain_verified", "yes"),
    ):
        bad = copy.deepcopy(report)
        tamper(bad)
        with pytest.raises(CampaignError, match="allowlist"):
            check_allowlisted(bad)
