"""What one attempt has seen so far, and the steps a host attempt and a container attempt
share (``attempt`` and ``attempt_container`` both drive an attempt through them)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from decimal import Decimal
from pathlib import Path

from sqlalchemy import Engine

from campaign import isolation, testhooks
from campaign.agents import profiles
from campaign.agents.applied import confirmed_profiles
from campaign.agents.adapters import get_adapter
from campaign.agents.record import AgentRecord, unknown_record
from campaign.lanes import wire as lanes_wire
from campaign.lanes.attempt_plan import AttemptPlan
from campaign.lanes.container_client import is_offline_agent
from campaign.lanes.container_run import ContainerSession
from campaign.lanes.harbor import HarborPaths
from campaign.lanes.pinned_root import PinnedRoot
from campaign.lanes.verdict import counter_fields
from campaign.profiler import summary as wire_summary
from campaign.profiler.capture import Capture
from campaign.profiler.wire import CATALOG_DIGEST_KEYS
from campaign.spend import Overrun
from campaign.store import repository
from campaign.store.models import Trial
from campaign.supervise import Supervisor, critical
from campaign.supervise.teardown import RunResult
from campaign.supervise.pinned import NotOurs

# The replay provider takes any key; clients refuse to start without one.
REPLAY_PLACEHOLDER_CREDENTIAL = "replay-placeholder-not-a-credential"


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
    if plan.task.suite_root is None or not is_offline_agent(plan.profile):
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


def with_wire(record: AgentRecord, capture: Capture, plan: AttemptPlan, session: lanes_wire.WireSession) -> AgentRecord:
    """The adapter's record, with the wire's counters when the capture could be read, and,
    for a wire-confirmed profile, the disclosure profiles its catalogs confirm."""
    if capture.problem is not None:
        return replace(record, applied_profiles=None) if plan.profile.applied_profile_from == "wire" else record
    counted = lanes_wire.schema_tokens(session, plan.wire) if plan.wire is not None else None
    merged = wire_summary.merge(record, wire_summary.summarize(capture, counted))
    if plan.profile.applied_profile_from == "wire" and plan.expected_catalogs is not None:
        observed = (merged.schema_diagnostics or {}).get(CATALOG_DIGEST_KEYS[plan.catalog_format])
        labels = {variant: profiles.confirmation_label(plan.profile, variant) for variant in plan.expected_catalogs}
        merged = replace(merged, applied_profiles=confirmed_profiles(observed, plan.expected_catalogs, labels))
    return merged


def client_ended(run: AttemptRun, held: PinnedRoot, sup: Supervisor, result: RunResult, watch: lanes_wire.FaultWatch | None) -> bool:
    """What the client ended with, recorded (its watch's reason for stopping it, its
    record with the wire's counters, the attempt row's counters); whether the attempt
    goes on to the verifier. Shared by host and container attempts."""
    state = run.state
    if result.stopped and watch is not None:
        # A provider that kept failing, or spend past the attempt's ceiling (the operator's budget).
        state.gave_out, state.overrun = watch.fault, watch.overrun
        if watch.fault is not None:
            sup.log(f"the client kept retrying into a failing provider ({watch.fault}); stopped it")
        if watch.overrun is not None:
            sup.log(f"{watch.overrun.line()} (as the wire saw it while the client ran)")
    state.client_timed_out, state.wall = result.timed_out, result.wall_seconds
    record = client_record(run.plan, held, sup, state, result.exit_code)
    if state.wire is not None:
        record = with_wire(record, lanes_wire.collect(state.wire), run.plan, state.wire)
    state.record = record
    with critical():
        repository.update_attempt(run.engine, run.attempt_id, wall_seconds=result.wall_seconds, **counter_fields(record))
    testhooks.reached("client")  # a kill window (a container attempt's with its container up)
    return not (result.timed_out or result.stopped or not state.output_ok)
