"""`campaign tasks check` for a task that ships its own image (``Task.image_context``), or
names a prebuilt one (``Task.image_ref``, used as it is on this machine, never pulled).

The task's ``environment/`` is built once with the machine's container runtime (no
network, tagged by the digest of the context), and each run gets a fresh container of
it: for the solution condition the reference solution is copied in and run, then (for
both conditions) the hidden tests are copied in, only then, and the verifier runs under
its own deadline; its reward file (or its exit status) is the verdict, judged exactly
as for host tasks. Every container is removed when its run ends, and an image the check
built when the task's check ends: a check leaves nothing in the runtime's store.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from campaign import containers
from campaign.benchmark import Task, read_reward
from campaign.lanes.attempt_plan import Verdict
from campaign.lanes.options import DEFAULT_TIMEOUT

LABEL = "campaign.check"
HARBOR_TESTS, HARBOR_SOLUTION, HARBOR_LOGS = "/tests", "/solution", "/logs/verifier"


@dataclass(frozen=True)
class ContainerRun:
    """One run of one condition in a fresh container: what ``task_check.judge`` reads."""

    verifier: Verdict
    outcome: str = "finished"
    failure_class: str | None = None
    error: str | None = None


@dataclass(frozen=True)
class NoImage:
    """Why a task's check had no image to run in: its reason and the one line saying so."""

    reason: str  # image_missing | image_build_failed
    detail: str


def check_in_image(task: Task, runtime: containers.Runtime, runs: int, timeout: float = DEFAULT_TIMEOUT) -> tuple[list[ContainerRun], list[ContainerRun]] | NoImage:
    """(fixture runs, solution runs), or why there was no image to run them in."""
    if task.image_ref is not None:
        # Prebuilt: used by its ID as it is here (never pulled), and left where it was.
        try:
            image = containers.image_id(runtime, task.image_ref)
        except containers.ContainerProblem:
            return NoImage("image_missing", f"task.toml names {task.image_ref}, which is not on this machine; nothing is pulled: load it here first")
        return _runs(task, runtime, image, runs, timeout)
    assert task.image_context is not None
    tag = containers.image_tag(task.name, task.image_context)
    try:
        image = containers.build_image(runtime, task.image_context, tag, task=task.name)
    except containers.ContainerProblem as exc:
        return NoImage("image_build_failed", str(exc).removeprefix(f"task {task.name}: "))
    try:
        return _runs(task, runtime, image, runs, timeout)
    finally:
        containers.remove_image(runtime, tag)


def _runs(task: Task, runtime: containers.Runtime, image: str, runs: int, timeout: float) -> tuple[list[ContainerRun], list[ContainerRun]]:
    fixture = [_run(task, runtime, image, solve=False, timeout=timeout) for _ in range(runs)]
    return fixture, [_run(task, runtime, image, solve=True, timeout=timeout) for _ in range(runs)]


def _run(task: Task, runtime: containers.Runtime, image: str, *, solve: bool, timeout: float) -> ContainerRun:
    try:
        container = containers.start(runtime, image, labels={LABEL: task.name})
    except containers.ContainerProblem as exc:
        return ContainerRun(Verdict(could_not_start=True), "engine_error", "container_failed", str(exc))
    try:
        if solve:
            containers.copy_in(runtime, container, task.solution_dir, HARBOR_SOLUTION)
            ran = containers.exec_in(runtime, container, ["bash", f"{HARBOR_SOLUTION}/solve.sh"], timeout=task.agent_timeout_sec or timeout)
            if ran.timed_out:
                return ContainerRun(Verdict(), "timeout", "agent_timeout", "the reference solution ran past the agent's deadline")
        # The tests reach the container only now, after the "agent" ended.
        containers.copy_in(runtime, container, task.verifier_dir, HARBOR_TESTS)
        containers.exec_in(runtime, container, ["mkdir", "-p", HARBOR_LOGS], timeout=60)
        verified = containers.exec_in(runtime, container, list(task.verifier.argv), timeout=task.verifier.timeout_sec or timeout, env=dict(task.verifier.env))
        if verified.timed_out:
            return ContainerRun(Verdict(timed_out=True))
        return ContainerRun(Verdict(exit_code=verified.returncode, reward=_reward(runtime, container)))
    except containers.ContainerProblem as exc:
        return ContainerRun(Verdict(), "engine_error", "container_failed", str(exc))
    finally:
        containers.remove(runtime, container)


def _reward(runtime: containers.Runtime, container: str) -> bool | None:
    """The reward file the verifier wrote, read as for a host task (None: it wrote none)."""
    with tempfile.TemporaryDirectory(prefix="campaign-check-logs-") as scratch:
        logs = Path(scratch) / "verifier"
        if not containers.copy_out(runtime, container, HARBOR_LOGS, logs):
            return None
        fd = os.open(logs, os.O_RDONLY | os.O_DIRECTORY)
        try:
            return read_reward(fd)
        finally:
            os.close(fd)
