"""An attempt of a task that ships its environment as an image: run in a fresh container.

The container is the attempt's environment (its ``/app``, the image's own workspace) and
the agent's confinement; the attempt's supervisor still owns every process of it
(``container_run``). The client runs inside with a private HOME and TMPDIR (tmpfs), its
prompt and config mounted read-only at ``/campaign/in``, no network; the offline agent
runs on the image's own python3 with the engine's package mounted read-only (it imports
nothing beyond the standard library). Once the client ends, whatever it left running is
ended with the container's stop, proven, and the container started again: the task's
tests are copied in only then, and its verifier runs in ``/app`` under its own deadline;
its reward file is copied out and read as a host task's. The container is removed as the
attempt's last supervised step, whatever happened.

Not yet here (issue 54 step 4): a client reaching its model through the recording proxy
(the container has no network at all), and the real clients' installations mounted in.
"""

from __future__ import annotations

import os
from pathlib import Path

from campaign import containers, testhooks
from campaign.agents import profiles
from campaign.containers import Mount
from campaign.lanes.attempt_plan import AttemptPlan
from campaign.lanes.attempt_state import AttemptRun, client_record, oracle_args, placeholder_values, tampered, within
from campaign.lanes.container_run import ContainerSession
from campaign.lanes.pinned_root import PinnedRoot
from campaign.lanes.verdict import counter_fields, profile_gate
from campaign.benchmark import read_reward
from campaign.store import repository
from campaign.supervise import Supervisor, critical

PACKAGE = Path(__file__).resolve().parents[1]
INBOX, HOME, TMP, PACKAGE_MOUNT, APP = "/campaign/in", "/campaign/home", "/campaign/tmp", "/opt/campaign", "/app"


def drive(run: AttemptRun, held: PinnedRoot, sup: Supervisor) -> None:
    """The container attempt from its inputs to the verifier's verdict (``attempt._drive``
    for a host task); the container is removed before this returns, whatever happened."""
    plan = run.plan
    assert plan.container is not None
    if plan.wire is not None:
        raise containers.ContainerProblem(f"the {plan.profile.name} agent reaches its model through the recording proxy, which a task's container cannot reach yet")
    run.container = session = ContainerSession.for_attempt(sup, plan.container.runtime, os.environ)
    try:
        _run_inside(run, held, sup, session)
    finally:
        with critical():
            if not session.remove():
                sup.log(f"container {session.name} could not be removed; the runtime is asked again after teardown")


def _run_inside(run: AttemptRun, held: PinnedRoot, sup: Supervisor, session: ContainerSession) -> None:
    engine, trial, plan, state, deadline, timer = run.engine, run.trial, run.plan, run.state, run.deadline, run.timer
    root = held.root
    inbox = root.path / "container-in"
    inbox.mkdir(mode=0o755)
    (inbox / "prompt.md").write_text(plan.task.prompt, encoding="utf-8")
    config_path = None
    if plan.config_text is not None:
        config_path = inbox / "agent-config.toml"
        config_path.write_text(plan.config_text, encoding="utf-8")
    state.gate_ok = profile_gate(plan, config_path)
    if not state.gate_ok:
        return
    values = placeholder_values(plan, trial, root, Path(INBOX) / "prompt.md", Path(INBOX) / "agent-config.toml" if config_path else None)
    values |= {"cwd": APP, "python": "python3"}
    inside = {"HOME": HOME, "TMPDIR": TMP, "PYTHONPATH": PACKAGE_MOUNT, "PYTHONDONTWRITEBYTECODE": "1"}
    inside |= dict(plan.extra_env) | profiles.client_env(plan.profile, Path(INBOX) / "agent-config.toml" if config_path else None, values, plan.variant)
    sup.verify_ledger()
    if not session.start(plan.container.image, mounts=_mounts(plan, inbox), tmpfs=[HOME, TMP]):
        sup.log(f"the container of image {plan.container.image[:12]} did not start")
        state.boot_ok = False
        return
    argv = profiles.client_argv(plan.profile, values, plan.variant) + list(plan.extra_client_args) + oracle_args(plan)
    with held.stdio("client") as io:
        result = session.exec("client", argv, timeout=within(deadline - timer(), plan.task.agent_timeout_sec), workdir=APP, env=inside, stdout=io.out, stderr=io.err)
    state.client_timed_out, state.wall = result.timed_out, result.wall_seconds
    state.record = client_record(plan, held, sup, state, result.exit_code)
    with critical():
        repository.update_attempt(engine, run.attempt_id, wall_seconds=result.wall_seconds, **counter_fields(state.record))
    testhooks.reached("client")  # the kill windows of a host attempt, here with the container up
    if result.timed_out or not state.output_ok:
        return
    if not session.quiesce():
        tampered(sup, state, "processes the agent left running in its container could not be stopped before verification")
        return
    _verify(run, held, session)


def _verify(run: AttemptRun, held: PinnedRoot, session: ContainerSession) -> None:
    plan, state, deadline, timer = run.plan, run.state, run.deadline, run.timer
    task = plan.task
    if not session.copy_in(task.verifier_dir, "/tests") or session.exec("verifier", ["mkdir", "-p", "/logs/verifier"], timeout=60).exit_code != 0:
        state.verifier_error = "the task's tests could not be copied into its container"
        return
    with held.stdio("verifier") as io:
        verdict = session.exec(
            "verifier", list(task.verifier.argv), timeout=within(deadline - timer(), task.verifier.timeout_sec), workdir=APP, env=dict(task.verifier.env), stdout=io.out, stderr=io.err
        )
    state.verifier_exit, state.verifier_timed_out = verdict.exit_code, verdict.timed_out
    testhooks.reached("verifier")
    if verdict.timed_out:
        return
    logs = held.root.path / "verifier-logs"
    if session.copy_out("/logs/verifier", logs):
        fd = os.open(logs, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        try:
            state.reward = read_reward(fd)
        finally:
            os.close(fd)


def _mounts(plan: AttemptPlan, inbox: Path) -> list[Mount]:
    mounts = [Mount(inbox, INBOX)]
    if oracle_args(plan):
        # The engine's own offline agent: its package, and the suite it solves the task from
        # (at the path it is told); no other client gets either.
        mounts += [Mount(PACKAGE, f"{PACKAGE_MOUNT}/campaign"), Mount(Path(str(plan.task.suite_root)), str(plan.task.suite_root))]
    return mounts

