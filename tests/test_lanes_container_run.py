"""An attempt's container driven through the attempt's real supervisor: the offline agent
solves an image task inside a fresh container, the verifier judges it after the agent's
processes are proven gone, and teardown proves every process of the runtime gone and
leaves no container. Real podman, the offline base image scripts/test.sh made."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

import campaign
from campaign import containers, experiment, isolation
from campaign.benchmark import load_suite, read_reward
from campaign.containers import Mount, cli_env
from campaign.agents.profiles import load_profile
from campaign.lanes.attempt import AttemptPlan, run_attempt
from campaign.lanes.attempt_plan import ContainerSpec
from campaign.lanes.container_run import ContainerSession
from campaign.lanes.continuation import Blocker, kept_container
from campaign.schedule import ScheduledTrial
from campaign.store import repository
from campaign.store.migrate import open_store
from campaign.supervise import Supervisor
from campaign.supervise.recovery import recover_attempt
from campaign.supervise.cgroup import PARENT, attempt_cgroup_name, cgroup_v1_mounts, remove_v1_twins
from helpers.containers import base_image, kept_containers
from test_containers import harbor_image_task

PACKAGE = Path(campaign.__file__).resolve().parent
STEPS = 'RUN printf "1 2 3\\n" > /app/numbers.txt\n'


@pytest.fixture(scope="module")
def image_task(tmp_path_factory):
    runtime, base = base_image()
    task_dir = harbor_image_task(tmp_path_factory.mktemp("image-task"), base, STEPS)
    # The tag is the context's digest: a context of this run's own, so a neighbour building
    # the same task (another worker, another run) never removes the image under this one.
    (task_dir / "environment" / "nonce.txt").write_text(str(task_dir))
    tag = containers.image_tag("sum-in-image", task_dir / "environment")
    image = containers.build_image(runtime, task_dir / "environment", tag, task="sum-in-image")
    yield runtime, image, task_dir
    containers.remove_image(runtime, tag)


def trial_row(tmp_path: Path):
    """A store with one admitted trial of the image task."""
    engine = open_store(str(tmp_path / "store.db"))
    new = repository.NewCampaign(kind="nonpaired", state="running", live=False, agent="offline", seed=0, experiment=experiment.task_check("containers"))
    trial = ScheduledTrial(position=0, pair_id="p", trial_id="p/t", provider="", task="sum-in-image", variant="fixture", repetition=1, pair_order=0)
    campaign_id = repository.create_campaign(engine, new, [trial], model="offline:synthetic", default_provider="offline")
    (row,) = repository.trials_in_order(engine, campaign_id)
    repository.admit_trial(engine, row.id)
    return engine, row


def attempt(tmp_path: Path):
    engine, row = trial_row(tmp_path)
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
        session.start(image, mounts=mounts, tmpfs=["/campaign/home", "/campaign/tmp"])
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


_PROBE = """
import os, socket, sys
def reach(port):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
        return "reached"
    except OSError:
        return "refused"
print(reach(int(sys.argv[1])), reach(int(sys.argv[2])), os.environ.get("MY_API_KEY"))
"""


def test_a_container_reaches_the_socket_bound_on_its_loopback_and_nothing_of_the_host(tmp_path, image_task):
    # The proxy's socket is bound in the container's own namespace; a server on the host's
    # loopback (the replay's, any other) stays out of reach. A secret goes by name only.
    runtime, image, _ = image_task
    engine, attempt_id, root = attempt(tmp_path)
    host_server = socket.create_server(("127.0.0.1", 0))
    sup = Supervisor(engine, attempt_id, root, confine_members=False)
    with sup, host_server:
        session = ContainerSession.for_attempt(sup, runtime, os.environ)
        session.start(image)
        inside = session.loopback_listener()
        with inside:
            argv = ["python3", "-c", _PROBE, str(inside.getsockname()[1]), str(host_server.getsockname()[1])]
            probe = session.exec("client", argv, timeout=60, secrets={"MY_API_KEY": "sk-not-on-any-argv"}, stdout=str(tmp_path / "probe.out"))
        assert probe.exit_code == 0
        assert (tmp_path / "probe.out").read_text().split() == ["reached", "refused", "sk-not-on-any-argv"]
        assert session.remove()
        verdict = sup.teardown()
    assert verdict.cleanup_complete
    # By name on the runtime's command line; the value travelled in its environment.
    argv = containers.exec_argv(runtime, session.name, ["true"], passed=["MY_API_KEY"])
    assert argv[argv.index("--env") + 1] == "MY_API_KEY" and not any("sk-" in a for a in argv)


def test_the_runtime_client_gets_its_configuration_and_no_credential():
    environ = {"PATH": "/bin", "CONTAINERS_CONF": "/etc/c.conf", "ANTHROPIC_API_KEY": "secret", "HOME": "/root"}
    assert cli_env(environ) == {"PATH": "/bin", "CONTAINERS_CONF": "/etc/c.conf"}


def test_the_v1_twins_of_an_attempt_are_removed_deepest_first_and_only_its_own(tmp_path):
    mounts = [tmp_path / "pids", tmp_path / "memory"]
    for mount in mounts:
        (mount / PARENT / "attempt-7-abc" / "conmon").mkdir(parents=True)
        (mount / PARENT / "attempt-8-def").mkdir(parents=True)
    assert remove_v1_twins("attempt-7-abc", [str(m) for m in mounts]) == []
    assert [sorted(p.name for p in (m / PARENT).iterdir()) for m in mounts] == [["attempt-8-def"], ["attempt-8-def"]]
    assert remove_v1_twins("attempt-9-none", [str(m) for m in mounts]) == []


# A runner killed while its attempt's container runs: the child below starts the attempt,
# its container and a long command in it, then SIGKILLs itself.
KILLED_RUNNER = """
import os, signal, sys
from pathlib import Path
sys.path.insert(0, {tests!r})
from test_lanes_container_run import attempt
from campaign.containers import Runtime
from campaign.lanes.container_run import ContainerSession
from campaign.supervise import Supervisor
from campaign.supervise.recovery import recover_attempt
engine, attempt_id, root = attempt(Path({tmp!r}))
sup = Supervisor(engine, attempt_id, root, confine_members=False)
sup.__enter__()
session = ContainerSession.for_attempt(sup, Runtime("podman", {podman!r}), os.environ)
session.start({image!r})
sup.start("client", session_argv := [{podman!r}, "exec", session.name, "sleep", "600"], env=dict(session.env))
print(attempt_id, session.name, flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


def killed_runner(tmp_path: Path, image_task) -> tuple[int, str]:
    runtime, image, _ = image_task
    script = KILLED_RUNNER.format(tests=str(Path(__file__).parent), tmp=str(tmp_path), podman=runtime.executable, image=image)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert len(done.stdout.split()) == 2, done.stderr
    attempt_id, name = done.stdout.split()
    return int(attempt_id), name


def test_recovery_after_a_killed_runner_removes_the_container_and_proves_it_gone(tmp_path, image_task):
    runtime = image_task[0]
    attempt_id, name = killed_runner(tmp_path, image_task)
    assert containers.exists(runtime, name) is True  # the runner died; its container did not
    engine = open_store(str(tmp_path / "store.db"))
    report = recover_attempt(engine, attempt_id)
    assert report.cleanup_complete, report.line()
    assert report.container == name and containers.exists(runtime, name) is False
    assert repository.get_attempt(engine, attempt_id).cleanup_complete is True


def test_a_container_recovery_cannot_show_removed_is_kept_and_named(tmp_path, image_task, monkeypatch):
    runtime = image_task[0]
    attempt_id, name = killed_runner(tmp_path, image_task)
    # A runtime that fails to remove anything (the recorded one is read from the root).
    shim = tmp_path / "bin" / "podman"
    shim.parent.mkdir()
    shim.write_text(f'#!/bin/sh\n[ "$1" = rm ] && exit 125\nexec {runtime.executable} "$@"\n')
    shim.chmod(0o755)
    record = Path(repository.get_attempt(open_store(str(tmp_path / "store.db")), attempt_id).private_root) / "container.json"
    record.write_text(json.dumps({"runtime": str(shim)}))
    engine = open_store(str(tmp_path / "store.db"))
    try:
        report = recover_attempt(engine, attempt_id)
        assert not report.cleanup_complete and "container_kept" in report.reasons
        assert f"container {name} kept for inspection" in report.line()
        assert repository.get_attempt(engine, attempt_id).cleanup_complete is False
        assert containers.exists(runtime, name) is True
        # A campaign blocked by it names the container beside the kept root, and how to remove it.
        row = repository.get_attempt(engine, attempt_id)
        assert kept_container(row) == (name, "podman")
        blocker = Blocker(attempt_id, ("cleanup_unverified",), ("cleanup unverified",), False, row.private_root, *kept_container(row))
        assert f"kept container {name}: inspect it (podman inspect {name}), then remove it (podman rm -f {name})" in blocker.kept_line()
        # The operator removes it by hand, as the line says: recovery then proves it gone.
        containers.remove(runtime, name)
        assert kept_container(row) is None
        again = recover_attempt(engine, attempt_id)
        assert again.cleanup_complete, again.line()
        assert repository.get_attempt(engine, attempt_id).cleanup_complete is True
    finally:
        if containers.exists(runtime, name):
            containers.remove(runtime, name)


# --- a whole attempt (run_attempt) of an image task -----------------------------------


def image_attempt(tmp_path: Path, image_task, *agent_args: str, timeout: float = 120.0):
    runtime, image, task_dir = image_task
    (task,) = load_suite(task_dir.parent).tasks
    engine, trial = trial_row(tmp_path)
    plan = AttemptPlan(task=task, profile=load_profile("offline"), model="offline:synthetic", seed=0, timeout_s=timeout,
                       extra_client_args=tuple(agent_args), tmp_base=tmp_path, container=ContainerSpec(runtime, image))  # fmt: skip
    return engine, run_attempt(engine, trial, plan)


def test_an_attempt_of_an_image_task_runs_in_its_container_and_is_judged_there(tmp_path, image_task):
    engine, outcome = image_attempt(tmp_path, image_task, "--success-legacy", "1")
    assert (outcome.outcome, outcome.verified_pass, outcome.verifier.reward) == ("passed", True, True), outcome
    assert outcome.cleanup_complete and outcome.disposal_complete and outcome.stop_reason is None
    row = repository.get_attempt(engine, outcome.attempt_id)
    assert row.cleanup_complete is True and row.teardown_outcome in ("clean", "forced")
    # Its container, named from the row, is gone, and the private root disposed of.
    name = containers.attempt_container_name(attempt_cgroup_name(row.id, row.campaign_id, row.started_at))
    assert containers.exists(image_task[0], name) is False and row.private_root is None


def test_an_agent_that_fails_its_image_task_fails_it_in_its_container(tmp_path, image_task):
    engine, outcome = image_attempt(tmp_path, image_task, "--success-legacy", "0")
    assert (outcome.outcome, outcome.verified_pass, outcome.verifier.reward) == ("failed", False, False), outcome
    assert outcome.cleanup_complete


def test_a_container_the_runtime_cannot_start_is_an_engine_fault_never_a_verdict(tmp_path, image_task):
    # The image gone between the plan and the attempt (removed by hand): the machine's
    # failure, recorded with the runtime's own line; no verifier runs, nothing is left.
    runtime, _, task_dir = image_task
    engine, outcome = image_attempt(tmp_path, (runtime, "0" * 64, task_dir), "--success-legacy", "1")
    assert (outcome.outcome, outcome.failure_class, outcome.verified_pass) == ("engine_error", "engine_error", None), outcome
    assert outcome.error.startswith("ContainerProblem: podman cannot start a container of image 000000000000: ") and outcome.cleanup_complete, outcome.error
    assert outcome.verifier.exit_code is None
    assert kept_containers(runtime, tmp_path / "store.db") == []


def test_a_hung_agent_in_its_container_times_out_and_nothing_is_left(tmp_path, image_task):
    engine, outcome = image_attempt(tmp_path, image_task, "--mode", "hang", timeout=4.0)
    assert outcome.outcome == "timeout" and outcome.cleanup_complete, outcome
    row = repository.get_attempt(engine, outcome.attempt_id)
    name = containers.attempt_container_name(attempt_cgroup_name(row.id, row.campaign_id, row.started_at))
    assert containers.exists(image_task[0], name) is False
    assert outcome.verifier.exit_code is None  # a timed-out client is never judged
