"""`campaign tasks check`: prove each task sound before anyone pays for it.

A task is sound when its untouched fixture fails the verifier, the fixture plus
the reference solution passes it, and the verifier says the same run after run.
Each of those runs is a real attempt through the path every trial takes (private
root, supervisor, ledger, the verifier installed after the "agent" ended, proven
teardown), with the engine's offline agent as the agent: told to do nothing, or
to apply the reference solution (overlay, or ``solve.sh`` in the working copy).
The attempts go to a throwaway store: they prove the task, they are no experiment.
A task that ships its own image (a Harbor Dockerfile a container runtime can build)
is checked in fresh containers of that image instead (``image_check``).

Each task gets one reason when it is unsound (``vocabulary.TASK_CHECK_REASONS``);
a sound task is recorded under its digest (``benchmark.checks``), so that lanes
running it later know it was checked as it is now.
"""

from __future__ import annotations

import datetime as dt
import os
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from campaign import containers, experiment
from campaign.agents.profiles import load_profile
from campaign.benchmark import Task, TaskSuite, checks, task_digest, unrunnable
from campaign.lanes.attempt import AttemptPlan, run_attempt
from campaign.lanes import image_check
from campaign.lanes.attempt_plan import AttemptOutcome
from campaign.lanes.image_check import ContainerRun
from campaign.lanes.options import DEFAULT_TIMEOUT
from campaign.schedule import ScheduledTrial
from campaign.store import repository
from campaign.store.migrate import open_store
from campaign.supervise import confine, critical, interruptible

CONDITIONS = ("fixture", "solution")
OFFLINE_MODEL = "offline:synthetic"
# An exit status a shell gives when it could not find (127) or run (126) a command.
COMMAND_NOT_FOUND = (126, 127)
# Stops after which no later attempt may start (the lanes' fail-closed stops).
_BLOCKING = ("cleanup_unverified", "disposal_failed", "finalization_failed")


@dataclass(frozen=True)
class TaskCheck:
    task: str
    reason: str | None = None  # None: sound
    detail: str = ""

    @property
    def sound(self) -> bool:
        return self.reason is None

    def line(self) -> str:
        if self.sound:
            return f"sound    {self.task}"
        return f"unsound  {self.task}: {self.reason}" + (f" ({self.detail})" if self.detail else "")


def static_reason(task: Task, privileged: bool) -> TaskCheck | None:
    """What makes a task unrunnable before any attempt: no image, no mount namespace."""
    found = unrunnable(task, privileged)
    return None if found is None else TaskCheck(task.name, *found)


def needs_runtime(tasks: Sequence[Task]) -> bool:
    """Whether checking ``tasks`` builds an image (so a container runtime must be there)."""
    return any(t.ships_image for t in tasks)


def judge(task: str, fixture: Sequence[AttemptOutcome | ContainerRun], solution: Sequence[AttemptOutcome | ContainerRun]) -> TaskCheck:
    """The task's one reason from its runs (each an attempt with its verifier's verdict)."""
    runs = [*fixture, *solution]
    broken = next((r for r in runs if r.verifier.could_not_start), None)
    if broken is not None:
        return TaskCheck(task, "verifier_error", broken.error or "the verifier could not start")
    if any(r.verifier.timed_out for r in runs):
        return TaskCheck(task, "verifier_timeout", "the verifier did not finish within its deadline")
    lost = next((r for r in runs if r.verifier.passed is None), None)
    if lost is not None:
        return TaskCheck(task, "engine_error", f"an attempt ended {lost.outcome} ({lost.failure_class}) before the verifier's verdict")
    before, after = [r.verifier.passed for r in fixture], [r.verifier.passed for r in solution]
    if len(set(before)) > 1 or len(set(after)) > 1:
        return TaskCheck(task, "verifier_flaky", f"fixture {_tally(before)}, solution {_tally(after)}")
    if before[0]:
        return TaskCheck(task, "fixture_passes", f"the untouched fixture passed {len(before)} of {len(before)} runs")
    if not after[0]:
        if all(r.verifier.exit_code in COMMAND_NOT_FOUND and r.verifier.reward is None for r in solution):
            return TaskCheck(task, "verifier_error", f"the verifier exited {solution[0].verifier.exit_code}: a command it runs was not found")
        return TaskCheck(task, "solution_fails", f"fixture plus solution failed {len(after)} of {len(after)} runs")
    return TaskCheck(task)


def _tally(passes: Sequence[bool | None]) -> str:
    return f"passed {sum(p is True for p in passes)} of {len(passes)} runs"


def _schedule(tasks: Sequence[Task], runs: int) -> list[ScheduledTrial]:
    out = []
    for task in tasks:
        for condition in CONDITIONS:
            for r in range(1, runs + 1):
                pair = f"check/{task.name}/r{r}"
                out.append(ScheduledTrial(position=len(out), pair_id=pair, trial_id=f"{pair}/{condition}", provider="", task=task.name, variant=condition, repetition=r, pair_order=0))
    return out


def check_tasks(
    suite: TaskSuite,
    tasks: Sequence[Task],
    *,
    runs: int = checks.RUNS,
    timeout: float = DEFAULT_TIMEOUT,
    progress: Callable[[TaskCheck], None] = lambda found: None,
    clock: Callable[[], dt.datetime] = repository.utcnow,
    environ: Mapping[str, str] = os.environ,
    runtime: containers.Runtime | None = None,
) -> list[TaskCheck]:
    """Check every task (in the given order), reporting each as soon as it is judged.
    A task that ships its own image is checked in its container, with ``runtime``."""
    checks.check_place(environ)
    privileged = confine.can_map_roots()
    digests = {t.name: task_digest(t) for t in tasks}
    found: dict[str, TaskCheck] = {}
    for task in tasks:
        if task.ships_image and runtime is not None:
            found[task.name] = _in_image(task, runtime, runs, timeout)
            progress(found[task.name])
            continue
        early = static_reason(task, privileged)
        if early is not None:
            found[task.name] = early
            progress(early)
    runnable = [t for t in tasks if t.name not in found]
    with tempfile.TemporaryDirectory(prefix="campaign-check-") as scratch:
        engine = open_store(str(Path(scratch) / "check.db"))
        try:
            _run(engine, suite, runnable, runs, timeout, found, progress)
        finally:
            engine.dispose()
    for task in tasks:
        if task.name not in found:
            found[task.name] = TaskCheck(task.name, "engine_error", "the check stopped before this task")
            progress(found[task.name])
        _record(task, digests[task.name], found[task.name], clock, environ)
    return [found[t.name] for t in tasks]


def _in_image(task: Task, runtime: containers.Runtime, runs: int, timeout: float) -> TaskCheck:
    checked = image_check.check_in_image(task, runtime, runs, timeout)
    if isinstance(checked, image_check.NoImage):
        return TaskCheck(task.name, checked.reason, checked.detail)
    return judge(task.name, *checked)


def _record(task: Task, digest: str, result: TaskCheck, clock: Callable[[], dt.datetime], environ: Mapping[str, str]) -> None:
    if task.suite_root is None:
        return  # the built-in tasks are proven by the engine's own tests
    if result.sound:
        checks.record_sound(task, digest, clock(), environ)
    else:
        checks.forget(digest, environ)


def _run(engine, suite: TaskSuite, tasks: Sequence[Task], runs: int, timeout: float, found: dict[str, TaskCheck], progress: Callable[[TaskCheck], None]) -> None:
    if not tasks:
        return
    new = repository.NewCampaign(kind="nonpaired", state="running", live=False, agent="offline", seed=0, experiment=experiment.task_check(suite.name))
    campaign_id = repository.create_campaign(engine, new, _schedule(tasks, runs), model=OFFLINE_MODEL, default_provider="offline")
    profile = load_profile("offline")
    by_name = {t.name: t for t in tasks}
    outcomes: dict[tuple[str, str], list[AttemptOutcome]] = {}
    with interruptible():
        for trial in repository.trials_in_order(engine, campaign_id):
            if not repository.admit_trial(engine, trial.id):
                continue
            task = by_name[trial.task]
            plan = AttemptPlan(
                task=task, profile=profile, model=OFFLINE_MODEL, seed=0, timeout_s=float(timeout),
                extra_client_args=("--success-legacy", "1" if trial.variant == "solution" else "0"),
            )
            outcome = run_attempt(engine, trial, plan)
            outcomes.setdefault((task.name, trial.variant), []).append(outcome)
            if outcome.stop_reason in _BLOCKING:
                with critical():
                    repository.close_campaign(engine, campaign_id, outcome.stop_reason, state="stopped")
                found[task.name] = TaskCheck(task.name, "engine_error", f"{outcome.stop_reason}: a later attempt may not start")
                progress(found[task.name])
                return
            if trial.variant == "solution" and trial.repetition == runs:
                found[task.name] = judge(task.name, outcomes[(task.name, "fixture")], outcomes[(task.name, "solution")])
                progress(found[task.name])
    repository.close_campaign(engine, campaign_id, None, state="completed")


__all__ = ["TaskCheck", "check_tasks", "judge", "needs_runtime", "static_reason"]
