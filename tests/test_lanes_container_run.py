"""An attempt's container driven through the attempt's real supervisor: the offline agent
solves an image task inside a fresh container, the verifier judges it after the agent's
processes are proven gone, and teardown proves every process of the runtime gone and
leaves no container. Real podman, the offline base image scripts/test.sh made."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import campaign
from campaign import containers, experiment, isolation
from campaign.benchmark import load_suite, read_reward
from campaign.containers import Mount
from campaign.lanes.container_run import ContainerSession, cli_env
from campaign.schedule import ScheduledTrial
from campaign.store import repository
from campaign.store.migrate import open_store
from campaign.supervise import Supervisor
from campaign.supervise.cgroup import PARENT, cgroup_v1_mounts
from helpers.containers import base_image
from test_containers import harbor_image_task

PACKAGE = Path(campaign.__file__).resolve().parent
STEPS = 'RUN printf "1 2 3\\n" > /app/numbers.txt\n'


@pytest.fixture(scope="module")
def image_task(tmp_path_factory):
    runtime, base = base_image()
    task_dir = harbor_image_task(tmp_path_factory.mktemp("image-task"), base, STEPS)
    tag = containers.image_tag("sum-in-image", task_dir / "environment")
    image = containers.build_image(runtime, task_dir / "environment", tag, task="sum-in-image")
    yield runtime, image, task_dir
    containers.remove_image(runtime, tag)


def attempt(tmp_path: Path):
    engine = open_store(str(tmp_path / "store.db"))
    new = repository.NewCampaign(kind="nonpaired", state="running", live=False, agent="offline", seed=0, experiment=experiment.task_check("containers"))
    trial = ScheduledTrial(position=0, pair_id="p", trial_id="p/t", provider="", task="sum-in-image", variant="fixture", repetition=1, pair_order=0)
    campaign_id = repository.create_campaign(engine, new, [trial], model="offline:synthetic", default_provider="offline")
    (row,) = repository.trials_in_order(engine, campaign_id)
    repository.admit_trial(engine, row.id)
    where = isolation.new_root_path(str(tmp_path))
    attempt_id = repository.start_attempt(engine, row, private_root=str(where))
    return engine, attempt_id, isolation.create_private_root(path=where)


def offline_agent(task_dir: Path, *extra: str) -> list[str]:
    return ["python3", "-P", "-m", "campaign.agents.offline", "--task", "sum-in-image", "--task-suite", str(task_dir.parent),
            "--model", "offline:synthetic", "--seed", "0", "--trial-id", "t", *extra]  # fmt: skip


def run_in_container(tmp_path: Path, image_task, agent_args: list[str], agent_timeout: float):
    runtime, image, task_dir = image_task
    (task,) = load_suite(task_dir.parent).tasks
    engine, attempt_id, root = attempt(tmp_path)
    sup = Supervisor(engine, attempt_id, root, confine_members=False)
    with sup:
        session = ContainerSession.for_attempt(sup, runtime, os.environ)
        mounts = [Mount(PACKAGE, "/opt/campaign/campaign"), Mount(task_dir.parent, str(task_dir.parent))]
        assert session.start(image, mounts=mounts, tmpfs=["/campaign/home", "/campaign/tmp"])
        env = {"HOME": "/campaign/home", "TMPDIR": "/campaign/tmp", "PYTHONPATH": "/opt/campaign", "PYTHONDONTWRITEBYTECODE": "1"}
        client = session.exec("client", offline_agent(task_dir, *agent_args), timeout=agent_timeout, workdir="/app", env=env)
        quiesced = session.quiesce()
        assert session.copy_in(task.verifier_dir, "/tests")
        assert session.exec("verifier", ["mkdir", "-p", "/logs/verifier"], timeout=60).exit_code == 0
        verified = session.exec("verifier", list(task.verifier.argv), timeout=120, workdir="/app")
        assert session.copy_out("/logs/verifier", Path(root.path) / "verifier-logs")
        logs = os.open(Path(root.path) / "verifier-logs", os.O_RDONLY | os.O_DIRECTORY)
        try:
            reward = read_reward(logs)
        finally:
            os.close(logs)
        removed = session.remove()
        verdict = sup.teardown()
    ledger = repository.ledger_for(engine, attempt_id)
    left = containers.containers_labelled(runtime, containers.ATTEMPT_LABEL, session.name)
    return client, quiesced, verified, reward, removed, verdict, ledger, session, left


def test_the_offline_agent_solves_an_image_task_in_its_container_and_nothing_is_left(tmp_path, image_task):
    client, quiesced, verified, reward, removed, verdict, ledger, session, left = run_in_container(tmp_path, image_task, ["--success-legacy", "1"], 120)
    assert client.exit_code == 0 and quiesced and verified.exit_code == 0, session.output()
    assert reward is True
    assert removed and verdict.cleanup_complete, verdict
    # The runtime's own processes (conmon, the container's pid 1, the exec sessions) were
    # the attempt's members, each proven gone; the runtime has no such container.
    assert len(ledger) > 8 and all(row.state == "gone" for row in ledger), [(r.role, r.state) for r in ledger]
    assert {"runtime", "client", "verifier"} <= {row.role for row in ledger}
    assert session.gone() is True and left == []
    # Nor a cgroup of it: the v1 hierarchies' twins the runtime made are removed too.
    name = Path(session.sup.cgroup.path).name
    assert not [m for m in cgroup_v1_mounts() if (Path(m) / PARENT / name).exists()]


def test_an_agent_left_running_in_the_container_is_ended_and_proven_gone_before_the_verifier(tmp_path, image_task):
    # A hung agent: its podman exec is stopped at the deadline, the agent itself is not
    # (the runtime leaves it running), so the container is stopped and that is proven.
    client, quiesced, verified, reward, removed, verdict, ledger, session, left = run_in_container(tmp_path, image_task, ["--mode", "hang"], 3)
    assert client.timed_out and quiesced
    assert verified.exit_code == 0 and reward is False  # the untouched fixture fails
    assert removed and verdict.cleanup_complete and all(row.state == "gone" for row in ledger)
    assert session.gone() is True and left == []


def test_the_runtime_client_gets_its_configuration_and_no_credential():
    environ = {"PATH": "/bin", "CONTAINERS_CONF": "/etc/c.conf", "ANTHROPIC_API_KEY": "secret", "HOME": "/root"}
    assert cli_env(environ) == {"PATH": "/bin", "CONTAINERS_CONF": "/etc/c.conf"}


def test_the_v1_twins_of_an_attempt_are_removed_deepest_first_and_only_its_own(tmp_path):
    from campaign.supervise.cgroup import remove_v1_twins

    mounts = [tmp_path / "pids", tmp_path / "memory"]
    for mount in mounts:
        (mount / PARENT / "attempt-7-abc" / "conmon").mkdir(parents=True)
        (mount / PARENT / "attempt-8-def").mkdir(parents=True)
    assert remove_v1_twins("attempt-7-abc", [str(m) for m in mounts]) == []
    assert [sorted(p.name for p in (m / PARENT).iterdir()) for m in mounts] == [["attempt-8-def"], ["attempt-8-def"]]
    assert remove_v1_twins("attempt-9-none", [str(m) for m in mounts]) == []
