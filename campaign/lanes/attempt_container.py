"""An attempt of a task that ships its environment as an image: run in a fresh container.

The container is the attempt's environment (its ``/app``, the image's own workspace) and
the agent's confinement; the attempt's supervisor still owns every process of it
(``container_run``). The client runs inside with the attempt's private HOME (mounted: the
profile's settings files and seeds are written there first, as for a host attempt) and a
TMPDIR of its own (tmpfs), its
prompt and config mounted read-only at ``/campaign/in``, no network; the offline agent
runs on the image's own python3 with the engine's package mounted read-only (it imports
nothing beyond the standard library). Once the client ends, whatever it left running is
ended with the container's stop, proven, and the container started again: the task's
tests are copied in only then, and its verifier runs in ``/app`` under its own deadline;
its reward file is copied out and read as a host task's. The container is removed as the
attempt's last supervised step, whatever happened.

A client that talks to its model (``{proxy_url}``) reaches the attempt's recording proxy
and nothing else: the proxy serves on a socket the runner bound on the container's own
loopback (``ContainerSession.loopback_listener``), forwarding from the host to the
route's upstream, so the container still has no route anywhere. A real client runs from
its installation on this machine, mounted read-only at its own path
(``container_client``); the route's credential reaches it by name through the runtime
client's environment, never on a command line.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from campaign import testhooks
from campaign.agents import profiles, seeds
from campaign.containers import Mount
from campaign.lanes import container_client, spend_watch
from campaign.lanes import wire as lanes_wire
from campaign.lanes.attempt_plan import AttemptPlan
from campaign.lanes.attempt_state import (
    REPLAY_PLACEHOLDER_CREDENTIAL,
    AttemptRun,
    client_ended,
    oracle_args,
    placeholder_values,
    tampered,
    within,
)
from campaign.lanes.container_client import ClientInstall
from campaign.lanes.container_run import ContainerSession
from campaign.lanes.pinned_root import PinnedRoot
from campaign.lanes.verdict import profile_gate
from campaign.benchmark import read_reward
from campaign.providers import REPLAY
from campaign.supervise import Supervisor, critical

PACKAGE = Path(__file__).resolve().parents[1]
INBOX, HOME, TMP, PACKAGE_MOUNT, APP = "/campaign/in", "/campaign/home", "/campaign/tmp", "/opt/campaign", "/app"


def drive(run: AttemptRun, held: PinnedRoot, sup: Supervisor) -> None:
    """The container attempt from its inputs to the verifier's verdict (``attempt._drive``
    for a host task); the container is removed before this returns, whatever happened."""
    plan = run.plan
    assert plan.container is not None
    run.container = session = ContainerSession.for_attempt(sup, plan.container.runtime, os.environ)
    try:
        _run_inside(run, held, sup, session)
    finally:
        with critical():
            if not session.remove():
                sup.log(f"container {session.name} could not be removed; the runtime is asked again after teardown")


def _run_inside(run: AttemptRun, held: PinnedRoot, sup: Supervisor, session: ContainerSession) -> None:
    trial, plan, state, deadline, timer = run.trial, run.plan, run.state, run.deadline, run.timer
    assert plan.container is not None
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
    # Found before the run began (task_images.prepare); here for its paths.
    install = container_client.installation(plan.profile, os.environ)
    values = placeholder_values(plan, trial, root, Path(INBOX) / "prompt.md", Path(INBOX) / "agent-config.toml" if config_path else None)
    values |= {"cwd": APP, "python": "python3"}
    sup.verify_ledger()
    # A container that cannot start, or a socket that cannot be bound in it, is the
    # machine's failure: it ends the attempt as an engine fault, never a verdict.
    # HOME is the attempt's private HOME, as on the host (what a client's profile writes
    # there before it starts, and a seed, reach it); TMPDIR is the container's own.
    session.start(plan.container.image, mounts=[*_mounts(plan, inbox, install), Mount(root.home, HOME, writable=True)], tmpfs=[TMP])
    secrets: dict[str, str] = {}
    if plan.wire is not None:
        if not _start_wire(run, held, sup, session):
            return
        assert state.wire is not None
        values["proxy_url"] = state.wire.proxy_url
        secrets = _credential(plan, os.environ)
    # Before anything of the client runs (its settings may name the proxy's URL).
    seeds.write_home_files(profiles.home_files(plan.profile, values, plan.variant), root.home)
    seeds.plant(plan.profile, root.home, os.environ)
    inside = {"HOME": HOME, "TMPDIR": TMP}
    if install is None:  # the engine's offline agent, from its mounted package
        inside |= {"PYTHONPATH": PACKAGE_MOUNT, "PYTHONDONTWRITEBYTECODE": "1"}
    inside |= dict(plan.extra_env) | profiles.client_env(plan.profile, Path(INBOX) / "agent-config.toml" if config_path else None, values, plan.variant)
    argv = profiles.client_argv(plan.profile, values, plan.variant) + list(plan.extra_client_args) + oracle_args(plan)
    if install is not None:
        argv[0] = str(install.executable)
    watch = spend_watch.watch(state.wire, plan, run.ceiling, timer) if state.wire is not None else None
    with held.stdio("client") as io:
        timeout = within(deadline - timer(), plan.task.agent_timeout_sec)
        result = session.exec("client", argv, timeout=timeout, workdir=APP, env=inside, secrets=secrets, stdout=io.out, stderr=io.err, stop_when=watch)
    if not client_ended(run, held, sup, result, watch):
        return
    if not session.quiesce():
        tampered(sup, state, "processes the agent left running in its container could not be stopped before verification")
        return
    _verify(run, held, session)


def _start_wire(run: AttemptRun, held: PinnedRoot, sup: Supervisor, session: ContainerSession) -> bool:
    """The replay (when the route's upstream is) and the recording proxy, serving on the
    container's loopback; False (the wire did not start) when either does not answer, as
    on the host. A socket that cannot be bound in the container raises: the machine's."""
    plan, state = run.plan, run.state
    assert plan.wire is not None
    listener = session.loopback_listener()
    try:
        state.wire = lanes_wire.start(sup, held, plan.wire, plan.task, runner_python=plan.python, deadline=run.deadline, timer=run.timer, listener=listener)
    except lanes_wire.WireStartFailed:
        state.wire_ok = False
        return False
    finally:
        listener.close()  # the proxy holds it now
    return True


def _credential(plan: AttemptPlan, environ: Mapping[str, str]) -> dict[str, str]:
    """The route's credential under the name the client reads (``attempt._as_client_reads``
    for a host task), or the replay's placeholder when the route has none."""
    found = {name: environ[name] for name in plan.credential_names if name in environ}
    target = plan.profile.credential_env_default
    if target and len(found) == 1 and target not in found:
        found = {target: next(iter(found.values()))}
    if target and not found and plan.wire is not None and plan.wire.upstream == REPLAY:
        found[target] = REPLAY_PLACEHOLDER_CREDENTIAL
    return found


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


def _mounts(plan: AttemptPlan, inbox: Path, install: ClientInstall | None) -> list[Mount]:
    mounts = [Mount(inbox, INBOX)]
    if install is not None:
        mounts.append(Mount(install.root, str(install.root)))
    else:
        mounts.append(Mount(PACKAGE, f"{PACKAGE_MOUNT}/campaign"))  # the engine's offline agent
    if oracle_args(plan):
        # The suite the offline agent solves the task from, at the path it is told; no
        # other client gets it (it holds the verifier).
        mounts.append(Mount(Path(str(plan.task.suite_root)), str(plan.task.suite_root)))
    return mounts
