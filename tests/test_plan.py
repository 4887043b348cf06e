"""The paired experiment's identity in a plan, template shape, canonical digest and strict plan JSON."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import shutil
from pathlib import Path

import pytest

from campaign import benchmark
from campaign.canonical import spec_digest as canonical_digest
from campaign.errors import UsageProblem
from campaign.experiment import PairedExperiment, Variant
from campaign.experiment import digest as experiment_digest
from campaign.plan import (
    PENDING_DECISION,
    digest_plan_file,
    extract_plan,
    parse_json_object,
    plan_object,
    template_document,
)
from campaign.schedule import build_schedule

H = "0" * 64


def spec_digest(plan) -> str:
    """The spec's snippet, verbatim apart from taking the object directly."""
    canonical = json.dumps(plan, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def make_experiment(**changes) -> PairedExperiment:
    fields = dict(
        agent="offline",
        agent_profile_digest=H,
        launcher=None,
        launcher_digest=None,
        tasks=("alpha", "beta"),
        model="openai-codex:gpt-6.1-sol",
        revision="a" * 40,
        source_digest="1" * 64,
        compiled_build_digest="2" * 64,
        repetitions=2,
        seed=107,
        timeout=660,
        run_timeout=7200,
        variants=(Variant("baseline", "3" * 64, "4" * 64), Variant("coding", "5" * 64, "6" * 64)),
        config_digest="7" * 64,
        fixture_digests={"beta": "9" * 64, "alpha": "8" * 64},
        profile_python_digest="f" * 64,
    )
    fields.update(changes)
    return PairedExperiment(**fields)


def test_experiment_has_the_spec_binding_fields():
    data = make_experiment().as_dict()
    for field in (
        "tasks", "model", "revision", "source_digest", "compiled_build_digest", "repetitions", "seed",
        "timeout", "run_timeout", "variants", "config_digest", "fixture_digests", "profile_python_digest", "agent",
    ):
        assert field in data
    assert data["variants"][0] == {"name": "baseline", "overlay_digest": "3" * 64, "config_digest": "4" * 64}
    assert list(data["fixture_digests"]) == ["alpha", "beta"]
    json.dumps(data, allow_nan=False)


def test_template_has_the_spec_shape():
    experiment = make_experiment()
    schedule = build_schedule(experiment.tasks, experiment.repetitions, experiment.seed)
    doc = template_document(experiment, schedule)
    assert doc["schema_version"] == 3
    assert doc["kind"] == "paired_disclosure_plan"
    assert doc["live_calls"] == 0
    assert doc["decision"] == dict(PENDING_DECISION) == {
        "status": "pending",
        "recommendation": "keep current defaults; keep the coding disclosure profile opt-in",
    }
    assert "not authorization" in doc["note"]
    assert doc["plan"] == {
        "approved": False,
        "experiment": experiment.as_dict(),
        "max_attempts": 8,
        "max_spend_usd": None,
        "per_attempt_spend_ceiling_usd": None,
        "provider_budget_enforced": False,
        "credential_env": [],
    }
    assert doc["plan_digest"] == spec_digest(doc["plan"])
    assert doc["scheduled_trials"][0].keys() == {"position", "pair_id", "trial_id", "task", "variant", "repetition", "pair_order"}
    assert len(doc["scheduled_trials"]) == 8


@pytest.mark.parametrize(
    "change",
    [
        {"seed": 108},
        {"repetitions": 3},
        {"timeout": 661},
        {"run_timeout": 7201},
        {"source_digest": "e" * 64},
        {"revision": None},
        {"compiled_build_digest": "e" * 64},
        {"config_digest": "e" * 64},
        {"profile_python_digest": "e" * 64},
        {"fixture_digests": {"alpha": "8" * 64, "beta": "e" * 64}},
        {"tasks": ("beta", "alpha")},
        {"model": "zai:glm-5"},
        {"agent": "codex"},
        {"launcher": "bin/agent"},
    ],
)
def test_every_bound_field_changes_the_experiment_and_plan_digest(change):
    base = make_experiment()
    changed = make_experiment(**change)
    assert experiment_digest(changed) != experiment_digest(base)
    assert canonical_digest(plan_object(changed, 8)) != canonical_digest(plan_object(base, 8))


def test_one_fixture_byte_changes_fixture_digest_and_plan_digest(tmp_path: Path):
    task = benchmark.all_tasks()[0]
    copy_root = tmp_path / task.name
    shutil.copytree(task.root, copy_root)
    copy = dataclasses.replace(task, root=copy_root)
    before = benchmark.fixture_digest(copy)
    assert before == benchmark.fixture_digest(task)
    victim = next(p for p in sorted(copy.fixture_dir.rglob("*")) if p.is_file())
    data = bytearray(victim.read_bytes())
    data[0] ^= 1
    victim.write_bytes(bytes(data))
    after = benchmark.fixture_digest(copy)
    assert after != before
    plan_before = plan_object(make_experiment(fixture_digests={task.name: before}), 8)
    plan_after = plan_object(make_experiment(fixture_digests={task.name: after}), 8)
    assert canonical_digest(plan_before) != canonical_digest(plan_after)


def test_canonical_digest_matches_the_spec_on_non_ascii_and_nesting():
    plan = {
        "approved": True,
        "experiment": {"tasks": ["naïve-ünïcode", "日本語", "emoji-🙂", "line\u2028sep"], "z": 1.5, "a": None},
        "credential_env": ["ZAI_API_KEY"],
        "max_spend_usd": 12.25,
        "nested": [{"b": 1, "a": [True, False, None]}],
    }
    assert canonical_digest(plan) == spec_digest(plan)
    # ASCII escaping: the canonical bytes are pure ASCII.
    assert json.dumps(plan, sort_keys=True, separators=(",", ":"), allow_nan=False).isascii()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"max_spend_usd": NaN}', "NaN is not a JSON number"),
        ('{"max_spend_usd": Infinity}', "Infinity is not a JSON number"),
        ('{"max_spend_usd": -Infinity}', "-Infinity is not a JSON number"),
        ('{"max_spend_usd": 1e999}', "too large"),
        ('{"a": [1, {"b": 1e400}]}', "too large"),
        ("[1, 2]", "JSON array, not an object"),
        ('"plan"', "JSON string, not an object"),
        ("3", "JSON number, not an object"),
        ("null", "JSON null, not an object"),
        ("true", "JSON boolean, not an object"),
        ('{"a": 1, "a": 2}', "appears twice"),
        ("{'a': 1}", "not valid JSON"),
        ("", "not valid JSON"),
    ],
)
def test_strict_json_refusals(text: str, message: str):
    with pytest.raises(UsageProblem, match=message):
        parse_json_object(text, "the plan")


def test_digest_plan_file_refuses_the_template_wrapper(tmp_path: Path):
    experiment = make_experiment()
    doc = template_document(experiment, build_schedule(experiment.tasks, 2, 107))
    path = tmp_path / "template.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(UsageProblem, match="plan template, not a plan"):
        digest_plan_file(path)


def test_extract_writes_what_the_spec_snippet_writes(tmp_path: Path):
    experiment = make_experiment(tasks=("ünï",), fixture_digests={"ünï": H})
    doc = template_document(experiment, build_schedule(experiment.tasks, 2, 107))
    template = tmp_path / "template.json"
    template.write_text(json.dumps(doc, indent=2))
    out = tmp_path / "plans" / "operator-plan.json"
    extract_plan(template, out)
    wrapper = json.loads(template.read_text())
    assert out.read_text() == json.dumps(wrapper["plan"], indent=2) + "\n"
    assert digest_plan_file(out) == doc["plan_digest"]
    assert [p.name for p in out.parent.iterdir()] == ["operator-plan.json"]


def test_extract_refuses_what_is_not_a_template(tmp_path: Path):
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(plan_object(make_experiment(), 8)))
    with pytest.raises(UsageProblem, match="not a paired_disclosure_plan template"):
        extract_plan(plan, tmp_path / "out.json")
    wrong = tmp_path / "v2.json"
    wrong.write_text(json.dumps({"kind": "paired_disclosure_plan", "schema_version": 2, "plan": {}}))
    with pytest.raises(UsageProblem, match="schema_version 2"):
        extract_plan(wrong, tmp_path / "out.json")
    template = tmp_path / "t.json"
    template.write_text(json.dumps({"kind": "paired_disclosure_plan", "schema_version": 3, "plan": {}}))
    with pytest.raises(UsageProblem, match="OUT must differ"):
        extract_plan(template, template)
    assert not (tmp_path / "out.json").exists()
