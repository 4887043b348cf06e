"""`campaign coding --campaign` over a Harbor suite whose tasks ship an image: each image
built once and bound to the experiment, each attempt in a fresh container of it, every
verdict the task's own verifier's, cleanup proven, nothing of the runtime left behind.
Real podman and the offline base image scripts/test.sh made."""

from __future__ import annotations

import json
import shutil
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from campaign import benchmark, containers
from helpers.containers import base_image, kept_containers
from helpers.literal import Disruption, experiment_problems, operator_in
from test_containers import harbor_image_task
from workspace import run

STEPS = 'RUN printf "1 2 3\\n" > /app/numbers.txt\n'


@pytest.fixture(scope="module")
def image_suite(tmp_path_factory) -> tuple[containers.Runtime, Path]:
    # One suite, its images built once, for the module: its tests only read it.
    runtime, base = base_image()
    first = harbor_image_task(tmp_path_factory.mktemp("image-suite"), base, STEPS)
    second = first.parent / "sum-again"
    shutil.copytree(first, second)
    for task in (first, second):  # contexts of this test's own: a neighbour never shares their tags
        (task / "environment" / "nonce.txt").write_text(str(task))
    yield runtime, first.parent
    for task in benchmark.load_suite(first.parent).tasks:
        try:
            containers.remove_image(runtime, containers.image_tag(task.name, task.image_context))
        except containers.ContainerProblem:
            pass  # never built (a test refused before any build)


def volume_names(runtime: containers.Runtime) -> set[str]:
    return set(subprocess.run([runtime.executable, "volume", "ls", "--quiet"], capture_output=True, text=True, check=True).stdout.split())


def rows(out: Path, sql: str) -> list[tuple]:
    with sqlite3.connect(out / "campaign.db") as conn:
        return conn.execute(sql).fetchall()


def test_a_campaign_runs_each_image_task_in_its_own_container(tmp_path, image_suite):
    runtime, suite = image_suite
    out = tmp_path / "out"
    args = ["coding", "--campaign", "--providers", "offline", "--task-suite", str(suite), "--repetitions", "2", "--live", "--output-dir", str(out)]
    volumes = volume_names(runtime)
    done = run(args)
    assert done.exit_code == 0, done.output
    assert volume_names(runtime) == volumes  # an attempt's mounts are binds and tmpfs: no volume is made
    attempts = rows(out, "SELECT t.task, a.outcome, a.cleanup_complete, a.fixture_digest FROM attempts a JOIN trials t ON t.id = a.trial_pk")
    assert len(attempts) == 8 and {o for _, o, _, _ in attempts} <= {"passed", "failed"} and all(c == 1 for _, _, c, _ in attempts), attempts
    assert "passed" in {o for _, o, _, _ in attempts}  # the offline agent solves some, judged inside
    # The image is part of what each attempt started from: its ID is in the fixture digest.
    experiment = json.loads(rows(out, "SELECT experiment_json FROM campaigns")[0][0])
    tasks = {t.name: t for t in benchmark.load_suite(suite).tasks}
    for name, digest in experiment["fixture_digests"].items():
        assert digest != benchmark.fixture_digest(tasks[name])
        assert {f for t, _, _, f in attempts if t == name} == {digest}
    # No attempt's container is left (each named from its row, as recovery would find it).
    assert kept_containers(runtime, out / "campaign.db") == []
    # Resumed: the images the campaign ran are found, not rebuilt: the same experiment.
    again = run(args + ["--resume"])
    assert again.exit_code == 0, again.output
    assert len(rows(out, "SELECT id FROM attempts")) == 8


def test_an_agent_that_talks_through_the_proxy_reaches_it_and_nothing_else_from_its_container(tmp_path, image_suite):
    # The offline agent speaking the wire: every turn a real request from inside the
    # container to the proxy on its loopback, forwarded to the replay on the host's.
    runtime, suite = image_suite
    out = tmp_path / "out"
    done = run(["coding", "--campaign", "--providers", "offline", "--agent", "offline-wire", "--task-suite", str(suite), "--repetitions", "1", "--live", "--output-dir", str(out)])
    assert done.exit_code == 0, done.output
    attempts = rows(out, "SELECT outcome, cleanup_complete, flush_complete, completed_turns, output_tokens FROM attempts")
    assert len(attempts) == 4 and {a[0] for a in attempts} <= {"passed", "failed"}, attempts
    assert all(c == 1 and f == 1 and turns and tokens for _, c, f, turns, tokens in attempts), attempts
    assert kept_containers(runtime, out / "campaign.db") == []


@pytest.mark.parametrize(
    ("declared", "says"),
    [("", "does not say where its installation is"), ('container_install = ".."\n', "no-such-client (the custom agent's client) is not on PATH")],
)
def test_a_client_that_cannot_run_in_a_container_is_refused_before_anything_runs(tmp_path, image_suite, declared, says):
    profile = tmp_path / "custom.toml"
    profile.write_text('adapter = "generic"\npaid = false\nclient = ["no-such-client", "{prompt_file}"]\nconfig_env = "AGENT_CONFIG"\n' + declared)
    out = tmp_path / "out"
    refused = run(["coding", "--campaign", "--providers", "offline", "--agent", str(profile), "--task-suite", str(image_suite[1]), "--live", "--output-dir", str(out)])
    (line,) = [line for line in refused.output.splitlines() if line.startswith("Error:")]
    assert refused.exit_code == 2 and line.startswith("Error: --agent: ") and says in line, refused.output
    assert not out.exists()


def test_a_prebuilt_image_named_by_a_tag_is_refused_for_a_live_run_and_by_digest_runs(tmp_path):
    # A tag can move under an approved plan; a digest names one image for good.
    runtime, base = base_image()
    task = harbor_image_task(tmp_path / "tagged", base, STEPS)
    shutil.rmtree(task / "environment")
    (task / "task.toml").write_text(f'[verifier]\ntimeout_sec = 60\n[environment]\ndocker_image = "{base}"\n')
    out = tmp_path / "out"
    args = ["coding", "--campaign", "--providers", "offline", "--task-suite", str(task.parent), "--repetitions", "1", "--live", "--output-dir", str(out)]
    refused = run(args)
    (line,) = [line for line in refused.output.splitlines() if line.startswith("Error:")]
    assert refused.exit_code == 2 and f"names the image {base} by a tag" in line and "--task-suite" in line, refused.output
    assert not out.exists()
    digest = subprocess.run([runtime.executable, "image", "inspect", "--format", "{{.Digest}}", base], capture_output=True, text=True, check=True).stdout.strip()
    (task / "task.toml").write_text(f'[verifier]\ntimeout_sec = 60\n[environment]\ndocker_image = "{base.rsplit(":", 1)[0]}@{digest}"\n')
    done = run(args)
    assert done.exit_code == 0, done.output
    assert {o for (o,) in rows(out, "SELECT outcome FROM attempts")} <= {"passed", "failed"}
    assert kept_containers(runtime, out / "campaign.db") == []


def test_the_nonpaired_lane_runs_each_image_task_once_in_its_own_container(tmp_path, image_suite):
    runtime, suite = image_suite
    db = tmp_path / "store.db"
    done = run(["coding", "--task-suite", str(suite), "--container-runtime", "podman", "--output", str(tmp_path / "report.json"), "--db", str(db)])
    assert done.exit_code == 0, done.output
    with sqlite3.connect(db) as conn:
        attempts = conn.execute("SELECT outcome, cleanup_complete, fixture_digest FROM attempts").fetchall()
    tasks = benchmark.load_suite(suite).tasks
    assert len(attempts) == 2 and {o for o, _, _ in attempts} <= {"passed", "failed"} and all(c == 1 for _, c, _ in attempts), attempts
    assert not {d for _, _, d in attempts} & {benchmark.fixture_digest(t) for t in tasks}  # each image's ID is in its digest
    assert kept_containers(runtime, db) == []


def campaign_of(suite: Path, out: Path) -> list[str]:
    return [sys.executable, "-m", "campaign", "coding", "--campaign", "--providers", "offline", "--task-suite", str(suite),
            "--repetitions", "1", "--live", "--resume", "--output-dir", str(out)]  # fmt: skip


@pytest.fixture(scope="module")
def straight(image_suite, tmp_path_factory) -> dict:
    """The uninterrupted run's report, which every interrupted one must end equal to."""
    root = tmp_path_factory.mktemp("straight")
    done = operator_in(root).run(campaign_of(image_suite[1], root / "out"))
    assert done.finished, done.output
    return json.loads((root / "out" / "report.json").read_text())


@pytest.mark.parametrize("at", ["client:2", "verifier:2"])
def test_a_runner_killed_while_its_container_runs_leaves_no_dead_end_and_no_container(tmp_path, image_suite, straight, at):
    # Killed with the second attempt's container up (after its client, after its verifier):
    # the operator follows the printed lines; recovery removes the container, proven.
    runtime, suite = image_suite
    op = operator_in(tmp_path / "killed")
    out = tmp_path / "killed" / "out"
    op.follow(campaign_of(suite, out), [Disruption(at=at)])
    assert op.runs[0].returncode == -signal.SIGKILL, op.story()
    assert experiment_problems(op, out, tmp_path / "killed" / "runner-tmp", straight, trials=4) == [], op.story()
    assert kept_containers(runtime, out / "campaign.db") == [], op.story()
