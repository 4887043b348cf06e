"""What one attempt has seen so far, and the steps a host attempt and a container attempt
share (``attempt`` and ``attempt_container`` both drive an attempt through them)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

from sqlalchemy import Engine

from campaign import isolation
from campaign.agents.adapters import get_adapter
from campaign.agents.record import AgentRecord, unknown_record
from campaign.lanes import wire as lanes_wire
from campaign.lanes.attempt_plan import AttemptPlan
from campaign.lanes.container_run import ContainerSession
from campaign.lanes.harbor import HarborPaths
from campaign.lanes.pinned_root import PinnedRoot
from campaign.spend import Overrun
from campaign.store.models import Trial
from campaign.supervise import Supervisor
from campaign.supervise.pinned import NotOurs

OFFLINE_AGENT_MODULE = "campaign.agents.offline"


def placeholder_values(plan: AttemptPlan, trial: Trial, root: isolation.PrivateRoot, prompt_file: Path, config_path: Path | None) -> dict[str, str]:
    provider, _, model_name = plan.model.partition(":")
    return {
        "prompt_file": str(prompt_file),
        "prompt": plan.task.prompt,
        "cwd": str(root.cwd),
        "config_path": str(config_path or ""),
        "model": plan.model,
        "model_provider": provider,
        "model_name": model_name,
        "python": plan.python,
        "task": plan.task.name,
        "trial_id": trial.trial_id,
        "seed": str(plan.seed),
        "launcher": plan.launcher or "",
        "proxy_url": "",
    }


@dataclass
class Observed:
    """What one attempt has seen so far; whatever is set when it stops is persisted."""

    record: AgentRecord = field(default_factory=lambda: unknown_record(None))
    gate_ok: bool = True
    boot_ok: bool = True
    client_timed_out: bool = False
    verifier_exit: int | None = None
    verifier_timed_out: bool = False
    wall: float | None = None
    wire_ok: bool = True
    wire: lanes_wire.WireSession | None = None
    # The client was stopped early: the wire showed it retrying into a failing provider.
    gave_out: str | None = None
    # The client was stopped early: the wire showed it spending past its ceiling.
    overrun: Overrun | None = None
    output_ok: bool = True
    workspace_ok: bool = True
    # The verifier could not be started (what the supervisor said): the machine's fault.
    verifier_error: str | None = None
    # A Harbor verifier's reward file: its verdict, or None when it wrote none.
    reward: bool | None = None


@dataclass
class AttemptRun:
    """One attempt's parts as they come to exist: whatever exists when it stops is finished."""

    engine: Engine
    trial: Trial
    plan: AttemptPlan
    deadline: float
    timer: Callable[[], float]
    # The most this attempt may spend (the lane's spend limits), watched while the client runs.
    ceiling: Decimal | None = None
    state: Observed = field(default_factory=Observed)
    attempt_id: int | None = None
    root: isolation.PrivateRoot | None = None
    held: PinnedRoot | None = None
    sup: Supervisor | None = None
    harbor: HarborPaths | None = None
    # A task that ships an image: the attempt's container (``attempt_container``).
    container: ContainerSession | None = None


def within(remaining: float, own: float | None) -> float:
    """A step's deadline: its own timeout (a task's ``timeout_sec``) within what is left of
    the attempt's, which the plan bounds."""
    return max(min(remaining, own) if own is not None else remaining, 0.001)


def oracle_args(plan: AttemptPlan) -> list[str]:
    """The engine's offline agent solves a suite's task from its reference solution, so it
    is told where the suite is; no other client is ever given that path (it leads to the
    hidden verifier)."""
    if plan.task.suite_root is None or OFFLINE_AGENT_MODULE not in plan.profile.client:
        return []
    return ["--task-suite", str(plan.task.suite_root)]


def client_record(plan: AttemptPlan, held: PinnedRoot, sup: Supervisor, state: Observed, exit_code: int | None) -> AgentRecord:
    """The adapter's record of the client's captures, if they are still the files the
    engine created; otherwise unparseable_output, and the attempt cannot pass."""
    adapter = get_adapter(plan.profile.adapter)
    try:
        out, err = held.read("client.out"), held.read("client.err")
    except NotOurs as exc:
        sup.log(f"client capture refused ({exc.reason}): the output is unreadable")
        state.output_ok = False
        return unknown_record("unparseable_output", input_includes_cached=adapter.input_includes_cached)
    return adapter.parse(out, err, exit_code)


def tampered(sup: Supervisor, state: Observed, why: str) -> None:
    sup.log(f"workspace tampered: {why}; the verifier does not run")
    state.workspace_ok = False
