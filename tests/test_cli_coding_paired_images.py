"""`campaign coding --paired` over tasks that ship an image: the plan binds each image (its
ID in the task's fixture digest), the probe measures each variant in the image's container,
and the approved live run finds the images under their tags and runs every attempt in a
fresh container of its task's image, each confirmed on the wire. Real podman, the base
image scripts/test.sh made."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path

import pytest

from campaign import benchmark, containers
from campaign.agents.profiles import PROFILES_DIR
from helpers.containers import base_image, kept_containers
from test_cli_coding_campaign_images import image_suite  # noqa: F401 (a fixture)
from workspace import Workspace, approve_and_go_live

CRED = "OFFLINE_TEST_API_KEY"


@pytest.fixture(autouse=True)
def seeded_cache(monkeypatch, tokenizer_cache):
    monkeypatch.setenv("CAMPAIGN_TOKENIZER_CACHE", str(tokenizer_cache))


def wire_agent(ws: Workspace) -> Path:
    """The offline agent speaking the wire, each variant confirmed by its fingerprint."""
    path = ws.root / "operator" / "wire.toml"
    path.parent.mkdir(exist_ok=True)
    path.write_text((PROFILES_DIR / "offline-wire.toml").read_text().replace('applied_profile_from = "adapter"', 'applied_profile_from = "wire"'))
    return path


def rows(db: Path, sql: str) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        return conn.execute(sql).fetchall()


def test_a_paired_plan_binds_each_image_and_its_live_run_confirms_every_attempt_in_its_container(ws: Workspace, monkeypatch, image_suite):  # noqa: F811
    runtime, suite = image_suite
    monkeypatch.setenv(CRED, "unused-value")
    args = ws.args("--agent", str(wire_agent(ws)), "--task-suite", str(suite), "--repetitions", "1", "--model", "replay:scripted", tasks="sum-in-image,sum-again")
    result, plan, _ = approve_and_go_live(ws, args, CRED)
    assert result.exit_code == 0, result.output
    tasks = {t.name: t for t in benchmark.load_suite(suite).tasks}
    for name, digest in plan["experiment"]["fixture_digests"].items():
        assert digest != benchmark.fixture_digest(tasks[name])  # the image's ID is in it
    attempts = rows(ws.db_path, "SELECT t.variant, a.outcome, a.applied_profiles, a.cleanup_complete, a.flush_complete, a.fixture_digest, t.task FROM attempts a JOIN trials t ON t.id = a.trial_pk")
    assert len(attempts) == 4, attempts
    for variant, outcome, applied, cleanup, flushed, digest, task in attempts:
        assert outcome in ("passed", "failed") and cleanup == 1 and flushed == 1, attempts
        assert json.loads(applied) == [{"baseline": "legacy", "coding": "coding"}[variant]], attempts
        assert digest == plan["experiment"]["fixture_digests"][task]
    assert kept_containers(runtime, ws.db_path) == []


def test_an_image_rebuilt_after_approval_is_a_different_experiment(ws: Workspace, monkeypatch, image_suite):  # noqa: F811
    # The task's tag moved to another image between approval and the live run (a rebuild
    # behind the experiment's back): refused before any trial, naming the digests.
    runtime, suite = image_suite
    monkeypatch.setenv(CRED, "unused-value")
    (task,) = [t for t in benchmark.load_suite(suite).tasks if t.name == "sum-in-image"]
    tag = containers.image_tag(task.name, task.image_context)
    # The offline agent: no probe to run, and the refusal comes before anything would.
    args = ws.args("--task-suite", str(suite), "--repetitions", "1", tasks=task.name)
    built: list[str] = []

    def rebuild() -> None:
        built.append(containers.image_id(runtime, tag))
        subprocess.run([runtime.executable, "tag", base_image()[1], tag], check=True, capture_output=True)

    try:
        result, _, _ = approve_and_go_live(ws, args, CRED, between=rebuild)
    finally:
        if built:
            subprocess.run([runtime.executable, "tag", built[0], tag], check=True, capture_output=True)
    assert result.exit_code == 2 and "fixture_digests[sum-in-image]: the image of task sum-in-image is not the one the plan was approved with" in result.output, result.output
    assert rows(ws.db_path, "SELECT count(*) FROM attempts") == [(0,)]
