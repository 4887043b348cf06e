"""An attempt is planned one way (``AttemptSource.plan``), whichever lane runs it."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from campaign import benchmark
from campaign.agents.profiles import load_profile
from campaign.approval import Approval
from campaign.lanes import campaign_inputs, paired_live, paired_plan, worker
from campaign.containers import Runtime
from campaign.lanes.attempt_plan import AttemptPlan, AttemptSource, ContainerSpec
from campaign.lanes.options import CodingOptions
from campaign.profiler.wire import bound_catalog_format
from campaign.providers import load_catalog
from campaign.store.limits import SpendLimits


def test_the_paired_lane_and_a_campaign_worker_plan_the_same_attempt_alike(ws, tmp_path: Path):
    task = benchmark.task_names()[0]
    paired = paired_plan.validate(
        CodingOptions(paired=True, source=ws.source, config=ws.config, output=ws.output, tasks=task, repetitions=2, model="offline:synthetic"),
        str(ws.db_path), ws.source,
    )  # fmt: skip
    experiment = paired_plan.compute_experiment(paired)
    approval = Approval(plan_digest="0" * 64, limits=SpendLimits(1.0, 0.5), max_attempts=4, credential_env=())
    from_plan = paired_live.attempt_source(paired, experiment, approval, bound_catalog_format(experiment.as_dict()), None)
    options = CodingOptions(campaign=True, live=True, providers="offline", config=ws.config, tasks=task, repetitions=2, output_dir=tmp_path / "out")
    campaign = campaign_inputs.validate(options, str(tmp_path / "campaign.db"), None, os.environ)
    from_worker = worker.source_for(campaign, "offline")
    for variant in ("baseline", "coding"):
        one, other = from_plan.plan(paired.tasks[0], variant), from_worker.plan(campaign.task(task), variant)
        # The one difference the lanes have a reason for: the paired lane resolves its
        # agent profile in the --source checkout it binds.
        assert one.profile.source == ws.source and other.profile.source is None
        assert dataclasses.replace(one, profile=dataclasses.replace(one.profile, source=None)) == other
    assert from_plan.plan(paired.tasks[0], "baseline").config_text != from_plan.plan(paired.tasks[0], "coding").config_text


def test_every_shared_value_reaches_each_attempt_and_the_variant_picks_its_config(tmp_path: Path):
    task = benchmark.all_tasks()[0]
    provider = next(p for p in load_catalog(None).providers if p.name == "offline")
    source = AttemptSource(
        profile=load_profile("offline"), model="offline:synthetic", seed=7, timeout_s=12.5, configs={"a": "[a]\n", "b": "[b]\n"},
        credential_names=("X_API_KEY",), provider=provider, wire=None, expected_catalogs={"a": ["1" * 64]}, catalog_format=2,
        launcher="bin/agent", failure_dir=tmp_path, extra_env=(("K", "v"),), python="/usr/bin/python3", probe=True,
        images={task.name: ContainerSpec(Runtime("podman", "/usr/bin/podman"), "a" * 64)},
    )  # fmt: skip
    plan = source.plan(task, "b")
    # Each task gets its own image's container (a host task: none).
    assert plan.container == source.images[task.name] and source.plan(benchmark.all_tasks()[1], "b").container is None
    assert isinstance(plan, AttemptPlan) and plan.task == task and plan.variant == "b" and plan.config_text == "[b]\n"
    for field in dataclasses.fields(AttemptSource):
        if field.name not in ("configs", "images"):
            assert getattr(plan, field.name) == getattr(source, field.name), field.name
