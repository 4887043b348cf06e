"""The experiment's one home: each lane's shape, its digest, comparing, reading it back.

That a store written before keeps its digest, report and schedule is pinned end to end by
tests/test_experiment_pinned.py; here, the rules each shape keeps to get there."""

from __future__ import annotations

import json

import pytest

from campaign import experiment
from campaign.canonical import spec_digest
from campaign.errors import UsageProblem
from campaign.experiment import CampaignExperiment, ProviderBinding, Stored, Variant
from campaign.schedule import build_schedule, single_run

H = "0" * 64


def binding(**changes) -> ProviderBinding:
    fields = dict(name="zai", model="zai:glm-5", agent="offline", agent_profile_digest=H, credential_env=None, basis="synthetic")
    return ProviderBinding(**{**fields, **changes})


def campaign(**changes) -> CampaignExperiment:
    fields = dict(
        agent="offline",
        model="zai:glm-5",
        providers=(binding(),),
        pricing_catalog_digest="1" * 64,
        tasks=("alpha", "beta"),
        variants=(Variant("baseline", "3" * 64, "4" * 64), Variant("coding", "5" * 64, "6" * 64)),
        repetitions=2,
        seed=107,
        timeout=660,
        config_digest="7" * 64,
        fixture_digests={"alpha": "8" * 64, "beta": "9" * 64},
        control_plane_port=None,
    )
    return CampaignExperiment(**{**fields, **changes})


def test_a_campaign_writes_only_the_fields_it_uses_so_older_experiments_keep_their_digest():
    data = campaign().as_dict()
    assert data["kind"] == "campaign"
    assert data["providers"] == [{"name": "zai", "model": "zai:glm-5", "agent": "offline", "agent_profile_digest": H, "credential_env": None, "basis": "synthetic"}]
    assert "rehearsal" not in data and "task_suite" not in data
    assert data["control_plane_port"] is None  # always written, null included
    wired = campaign(providers=(binding(wire_upstream="replay", client_version="2.1.0", wire_catalogs={"baseline": ["a" * 64]}, wire_catalog_format=2),), rehearsal=True)
    written = wired.as_dict()
    assert written["providers"][0] | {} == {**data["providers"][0], "wire_upstream": "replay", "client_version": "2.1.0", "wire_catalogs": {"baseline": ["a" * 64]}, "wire_catalog_format": 2}
    assert written["rehearsal"] is True
    assert experiment.digest(wired) == spec_digest(written) != experiment.digest(campaign())


def test_the_first_variant_is_the_baseline_and_the_rest_are_candidates():
    three = campaign(variants=(Variant("default", H, H), Variant("lean", H, "1" * 64), Variant("terse", H, "2" * 64)))
    assert three.baseline.name == "default"
    assert [v.name for v in three.candidates] == ["lean", "terse"]
    assert three.variant_names == ("default", "lean", "terse")


def test_differences_name_each_changed_field_each_provider_and_each_task():
    assert experiment.differences({"a": 1, "b": 2}, {"a": 1, "b": 3, "c": 4}) == ["b", "c"]
    assert experiment.differences(None, {"a": 1}) == ["a"]
    before = campaign().as_dict()
    now = campaign(seed=108, providers=(binding(client_version="2.1.0"),)).as_dict()
    assert experiment.differences(before, now) == ["providers[zai].client_version", "seed"]
    renamed = campaign(providers=(binding(name="kimi"),)).as_dict()
    assert experiment.differences(before, renamed) == ["providers"]
    suite = {"name": "s", "digest": "d", "tasks": {"alpha": "1", "beta": "2"}}
    changed = {**suite, "digest": "e", "tasks": {"alpha": "1", "beta": "3"}}
    assert experiment.differences({"task_suite": suite}, {"task_suite": changed}) == ["task_suite.tasks[beta]"]


@pytest.mark.parametrize(
    ("data", "lane"),
    [
        (campaign().as_dict(), "campaign"),
        ({"variants": [], "tasks": []}, "paired"),
        (experiment.nonpaired("offline", "offline:offline", ["alpha"], 660, None), "nonpaired"),
        (experiment.probe(), "probe"),
        (experiment.task_check("suite"), "task_check"),
        ({"tasks": []}, None),
        ({"kind": 3}, None),
    ],
)
def test_a_stored_experiment_names_the_lane_that_wrote_it(data, lane):
    assert experiment.lane_of(data) == lane
    assert experiment.read(json.dumps(data)).lane == lane  # type: ignore[union-attr]


def test_each_lane_rebuilds_the_schedule_it_stored():
    stored = Stored(campaign().as_dict()).schedule()
    assert stored is not None and stored.kind == "campaign" and stored.provider_models == {"zai": "zai:glm-5"}
    assert [row[2] for row in stored.rows] == [t.trial_id for t in build_schedule(("alpha", "beta"), 2, 107, ("baseline", "coding"), ("zai",))]
    paired = Stored({"model": "openai:gpt", "tasks": ["alpha"], "repetitions": 2, "seed": 5, "variants": [{"name": "baseline"}, {"name": "coding"}]}).schedule()
    assert paired is not None and (paired.kind, paired.provider, paired.model) == ("paired", "openai", "openai:gpt")
    assert [row[2] for row in paired.rows] == [t.trial_id for t in build_schedule(("alpha",), 2, 5)]
    single = Stored(experiment.nonpaired("offline", "offline:offline", ["alpha", "beta"], 660, None)).schedule()
    assert single is not None and [row[2] for row in single.rows] == [t.trial_id for t in single_run(["alpha", "beta"])]


@pytest.mark.parametrize(
    "data",
    [experiment.probe(), experiment.task_check("s"), {"kind": "campaign", "providers": "zai"}, {"variants": [{"name": "baseline"}], "model": 7}],
)
def test_an_experiment_that_fixes_no_schedule_rebuilds_none(data):
    assert Stored(data).schedule() is None


@pytest.mark.parametrize("text", [None, "", "not json", "[1, 2]", '"text"', "[" * 100_000])
def test_text_that_is_no_object_reads_as_none_never_a_guess(text):
    assert experiment.parse(text) is None
    assert experiment.read(text) is None


def test_what_a_stored_experiment_records_per_variant_and_task():
    stored = Stored({"variants": [{"name": "baseline", "config_digest": "4" * 64}, {"name": "coding"}, "odd"], "fixture_digests": {"alpha": "8" * 64}})
    assert stored.config_digests == {"baseline": "4" * 64}
    assert stored.fixture_digests == {"alpha": "8" * 64}
    assert stored.variant_names is None  # one entry is no variant: no names are guessed
    assert Stored(campaign().as_dict()).variant_names == ("baseline", "coding")
    assert Stored({}).config_digests == {} and Stored({"fixture_digests": []}).fixture_digests == {}
    assert [p["name"] for p in Stored(campaign().as_dict()).providers] == ["zai"]


def test_a_nonpaired_run_names_its_suite_only_when_it_ran_one():
    assert "task_suite" not in experiment.nonpaired("offline", "offline:offline", ["alpha"], 660, None)
    assert experiment.nonpaired("offline", "offline:offline", ["alpha"], 660, {"name": "s"})["task_suite"] == {"name": "s"}


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("default,Lean", "'Lean' is not a variant name"),
        ("default,lean,", "'' is not a variant name"),
        ("default,9lean", "'9lean' is not a variant name"),
        ("default," + "l" * 33, "is not a variant name: a lower-case letter, then lower-case letters, digits, '-' or '_', at most 32 characters"),
        ("default,lean,default", "variant default is listed twice"),
        ("lean", "needs at least two variants, the first the baseline"),
        ("default,terse", "unknown variant terse: the agent profile defines default, lean, long_prompt"),
        (",".join(f"v{i}" for i in range(9)), "9 variants: one experiment compares at most 8"),
    ],
)
def test_a_variant_list_that_is_not_a_comparison_is_one_line_naming_the_option(value, says):
    with pytest.raises(UsageProblem) as raised:
        experiment.variant_names(value, ("default", "lean", "long_prompt"))
    assert says in str(raised.value) and raised.value.option == "--variants" and "\n" not in str(raised.value)


def test_variants_are_picked_in_the_order_given_and_default_to_every_one_defined():
    defined = ("default", "lean", "long_prompt")
    assert experiment.variant_names(None, defined) == defined
    assert experiment.variant_names(" long_prompt, default ", defined) == ("long_prompt", "default")
