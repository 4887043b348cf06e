"""Providers in parallel: local workers on one store, and `campaign worker` anywhere else.

``campaign coding --campaign --parallel-providers N`` keeps the campaign's
runner lease, starts N ``campaign worker`` processes on the same store and,
while they claim providers and run their trials, shows progress from the
store and settles the leases of workers that were lost. Workers on other
machines join with ``campaign worker --db URL --campaign ID`` and the same
experiment options. Only when no worker anywhere holds a lease and nothing is
left that one could take does it close the campaign and write the reports,
exactly as the single runner does: a report never counts half of what the
workers elsewhere are still finishing.

A lost worker (its lease not heartbeaten for ``STALE_SECONDS`` by the
database's clock, or a local worker seen dead) with an attempt in flight halts
its provider: nothing more of it runs here, the attempt's cleanup is
unverified, and the way forward is the killed runner's one, recovery on the
worker's host and then ``--resume --continue-blocked``. Never a silent retry.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

from sqlalchemy import Engine

from campaign.errors import CampaignError, Interrupted, UsageProblem
from campaign.lanes import options as opt
from campaign.lanes import holders, spend_watch, worker
from campaign.experiment import differences
from campaign.lanes.campaign_inputs import experiment, stored_experiment, validate
from campaign.lanes.campaign_outputs import build_result, close_run, open_progress, write_reports
from campaign.progress import TrialsNotAttempted
from campaign.providers import load_catalog
from campaign.store import leases, repository
from campaign.store.limits import SpendLimits
from campaign.supervise import critical, interruptible
from campaign.supervise.procfs import ProcFS
from campaign.lanes.campaign_inputs import CampaignInputs
from campaign.lanes.campaign_outputs import CampaignResult
from campaign.progress import Progress
from campaign.providers import Catalog
from campaign.schedule import ScheduledTrial
from campaign.store.models import Trial

POLL_SECONDS = 0.5
# How long an interrupted runner waits for workers elsewhere to finish their attempts
# before it leaves the reports to a later `campaign report`.
INTERRUPTED_WAIT_SECONDS = 600.0


class WorkerLost(CampaignError):
    """A worker was lost mid-attempt; its provider is halted until recovery proves cleanup.
    ``describe`` says what to run, given how the caller's own command line reads."""

    def __init__(self, campaign_id: int, halted: Sequence[leases.Lease], db: str) -> None:
        self.campaign_id, self.halted, self.db = campaign_id, tuple(halted), db
        super().__init__(self.describe())

    def describe(self, rerun: str = "the same command with --resume --continue-blocked added", program: str = "campaign") -> str:
        lines = [f"campaign {self.campaign_id} stopped: a worker was lost mid-attempt, so its provider admits no more work."]
        for lease in self.halted:
            lines.append(
                f"provider {lease.provider}: worker pid {lease.holder.pid} on host {lease.holder.host} stopped during attempt {lease.halted_attempt_id}; its cleanup is unverified"
            )
        lines.append("Next, on each host named above, prove the attempt's processes gone:")
        lines += [f"  {program} recover {lease.halted_attempt_id} --db {shlex.quote(self.db)}" for lease in self.halted]
        lines.append(f"then continue the experiment in a new campaign: {rerun}")
        return "\n".join(lines)


def experiment_options(stored: Mapping[str, Any], given: opt.CodingOptions, catalog: Catalog) -> opt.CodingOptions:
    """The options that reproduce a stored campaign experiment; what the worker was given wins.

    Everything but the agent profile file, the base config, a custom providers
    catalog and the task suite's directory is in the experiment; those a worker takes
    as options, and comparing the rebuilt experiment with the stored one proves they
    are the same."""
    names = [p["name"] for p in stored.get("providers", [])]
    suite = stored.get("task_suite")
    if isinstance(suite, Mapping) and given.task_suite is None:
        raise UsageProblem(f"the campaign ran the task suite {suite.get('name')}: give its directory with --task-suite DIR", option="--task-suite")
    if suite is None and given.task_suite is not None:
        raise UsageProblem("the campaign ran the built-in tasks: leave --task-suite out", option="--task-suite")
    model = given.model
    entry = next((p for p in catalog.providers if len(names) == 1 and p.name == names[0]), None)
    # The experiment stores the PROVIDER:MODEL route; a model other than the catalog's
    # default was a --model the worker must repeat.
    if model is None and entry is not None and stored["providers"][0].get("model") != entry.model:
        model = stored["providers"][0].get("model")
    return opt.CodingOptions(
        campaign=True,
        live=True,
        providers=",".join(names),
        tasks=",".join(stored.get("tasks", [])),
        variants=",".join(v["name"] for v in stored.get("variants", [])),
        repetitions=stored.get("repetitions"),
        seed=stored.get("seed"),
        timeout=stored.get("timeout"),
        control_plane_port=stored.get("control_plane_port"),
        agent=given.agent,
        config=given.config,
        providers_catalog=given.providers_catalog,
        failure_dir=given.failure_dir,
        task_suite=given.task_suite,
        model=model,
        rehearse=bool(stored.get("rehearsal")),
        # A worker writes no report; the coordinator (or a later `campaign report`) does.
        output_dir=given.output_dir or Path.cwd(),
    )


def worker_inputs(engine: Engine, campaign_id: int, given: opt.CodingOptions, environ: Mapping[str, str]) -> CampaignInputs:
    """The campaign's inputs rebuilt from its stored experiment, refused when they differ."""
    row = repository.get_campaign(engine, campaign_id)
    if row is None or row.kind != "campaign":
        raise UsageProblem(f"no campaign {campaign_id} (of kind campaign) in this store", option="--campaign-id")
    stored = stored_experiment(row)
    options = experiment_options(stored, given, load_catalog(given.providers_catalog))
    inputs = validate(options, engine.url.render_as_string(hide_password=False), options.providers_catalog, environ, stored=stored)
    differing = differences(stored, experiment(inputs))
    if differing:
        raise UsageProblem(
            f"this worker would run a different experiment ({', '.join(differing)}); give it the campaign's own --agent, --config, --providers-catalog and --task-suite",
            option="--agent",
        )
    return inputs


def worker_argv(db: str, campaign_id: int, opts: opt.CodingOptions) -> list[str]:
    argv = [sys.executable, "-m", "campaign", "worker", "--db", db, "--campaign-id", str(campaign_id)]
    for flag, value in (("--agent", opts.agent), ("--config", opts.config), ("--providers-catalog", opts.providers_catalog), ("--failure-dir", opts.failure_dir), ("--task-suite", opts.task_suite)):
        if value is not None:
            argv += [flag, str(value)]
    for flag, value in (("--max-spend-usd", opts.max_spend_usd), ("--max-total-spend-usd", opts.max_total_spend_usd), ("--attempt-ceiling-usd", opts.attempt_ceiling_usd)):
        if value is not None:
            argv += [flag, str(value)]
    return argv


def coordinate(
    engine: Engine,
    campaign_id: int,
    inputs: CampaignInputs,
    schedule: Sequence[ScheduledTrial],
    opts: opt.CodingOptions,
    *,
    stream: TextIO | None,
    caps: SpendLimits | None,
    timer: Callable[[], float] = time.monotonic,
) -> CampaignResult:
    """Start the local workers, follow them through the store, close the campaign."""
    repository.set_campaign_state(engine, campaign_id, expected=("running", "interrupted", "stopped", "completed"), state="running")
    trials = repository.trials_in_order(engine, campaign_id)
    progress = open_progress(engine, campaign_id, inputs, trials, stream, caps)
    seen = {a.id for a in repository.attempts_for(engine, campaign_id)}
    before = set(seen)
    skipped = {t.id for t in trials if t.status == "not_attempted"}
    url = engine.url.render_as_string(hide_password=False)
    env = dict(os.environ)
    if engine.url.password:
        env["CAMPAIGN_DB"] = url  # never in the process list
    argv = worker_argv("" if engine.url.password else url, campaign_id, opts)
    if engine.url.password:
        argv = [a for a in argv if a not in ("--db", "")]
    procs: list[subprocess.Popen] = []
    proc_fs = ProcFS()
    started_at = {}
    try:
        with interruptible():
            for _ in range(opts.parallel_providers or 1):
                p = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
                procs.append(p)
                started_at[p.pid] = proc_fs.start_ticks(p.pid)
            # Workers are other processes, possibly on other machines: the store is the
            # only place their progress shows, so it is polled.
            while not _settled(engine, campaign_id, procs, started_at):
                _follow(engine, campaign_id, trials, progress, seen, skipped, caps)
                time.sleep(POLL_SECONDS)
            _follow(engine, campaign_id, trials, progress, seen, skipped, caps)
    except Interrupted:
        with critical():
            # First no worker anywhere admits more; the local ones got the same signal (one
            # process group) and stop their attempts; outside ones finish theirs.
            repository.set_campaign_state(engine, campaign_id, expected=("running", "stopped"), state="interrupted", stop_reason="interrupted")
            for p in procs:
                if p.poll() is None:
                    p.send_signal(signal.SIGINT)
            deadline = time.monotonic() + INTERRUPTED_WAIT_SECONDS
            while not _settled(engine, campaign_id, procs, started_at) and time.monotonic() < deadline:
                time.sleep(POLL_SECONDS)
            if _settled(engine, campaign_id, procs, started_at):
                write_reports(engine, campaign_id, inputs)
            if progress:
                progress.close()
        raise
    if progress:
        progress.close()
    halted = leases.halted(engine, campaign_id, "worker_lost")
    look = leases.outlook(engine, campaign_id)
    unavailable = leases.halted(engine, campaign_id, leases.UNAVAILABLE)
    stop_reason = look.stop_reason if look.state == "stopped" else ("worker_lost" if halted else None)
    if stop_reason is None and look.left and not unavailable:
        stop_reason = "engine_error"  # never `completed` with a trial left
    if stop_reason is not None:
        repository.close_campaign(engine, campaign_id, stop_reason, state="stopped")
    else:
        # Completed, or stopped: halted providers' trials wait for a resume, others have a reason.
        close_run(engine, campaign_id, None, ran_now=True)
    attempted = len({a.id for a in repository.attempts_for(engine, campaign_id) if a.status != "running"} - before)
    result = build_result(engine, campaign_id, inputs, schedule, attempted, stop_reason, caps)
    if halted:
        from campaign.store.engine import describe

        raise WorkerLost(campaign_id, halted, describe(engine.url))
    return result


def _settled(engine: Engine, campaign_id: int, procs: Sequence[subprocess.Popen], started_at: Mapping[int, int | None]) -> bool:
    """True once no local worker runs, no worker anywhere holds a lease, and nothing is left
    that a worker could take: only then may the campaign close and its reports be written.

    A local worker stays while a lease is held elsewhere (its holder may give trials back),
    so work left with no local worker alive means one failed: the campaign is stopped
    first, so that no worker admits anything after the check that lets it close."""
    alive = [p for p in procs if p.poll() is None]
    _settle_lost(engine, campaign_id, procs, started_at)
    if alive:
        return False
    look = leases.outlook(engine, campaign_id)
    if look.held:
        return False
    if look.claimable and look.state == "running":
        worker.request_stop(engine, campaign_id, "engine_error")
        return False
    return True


def _settle_lost(engine: Engine, campaign_id: int, procs: Sequence[subprocess.Popen], started_at: Mapping[int, int | None]) -> None:
    """Halt the leases of workers known lost: a local one seen dead at once, any other
    once its heartbeat is stale by the database's clock."""
    dead = {(p.pid, started_at.get(p.pid)) for p in procs if p.returncode is not None}
    for lease in leases.all_leases(engine, campaign_id):
        if lease.holder is not None and lease.halted_reason is None and (lease.holder.pid, lease.holder.start_ticks) in dead:
            leases.halt_lost(engine, campaign_id, lease)
    for lease in leases.lost(engine, campaign_id, worker.STALE_SECONDS, dead=holders.dead_here()):
        leases.halt_lost(engine, campaign_id, lease)


def _follow(engine: Engine, campaign_id: int, trials: Sequence[Trial], progress: Progress | None, seen: set[int], skipped: set[int], caps: SpendLimits | None) -> None:
    if progress is None:
        return
    by_pk = {t.id: t for t in trials}
    for a in repository.attempts_for(engine, campaign_id):
        if a.id in seen or a.status == "running":
            continue
        seen.add(a.id)
        # Interrupted too, as the sequential lanes show it: a worker's attempt its ceiling stopped.
        if a.status in ("finished", "faulted", "interrupted"):
            t = by_pk[a.trial_pk]
            progress.update(worker.attempt_event(t, a.outcome, a.failure_class, a.cost_usd, a.spend_complete, a.equivalent_spend_usd))
            if line := spend_watch.stored_ceiling_line(t, a, caps) or spend_watch.stored_gap_line(t, a, caps):
                progress.message(line)
    for t in repository.trials_in_order(engine, campaign_id):
        if t.status == "not_attempted" and t.id not in skipped:
            skipped.add(t.id)
            progress.update(TrialsNotAttempted(t.provider, 1, t.not_attempted_reason))


__all__ = ["WorkerLost", "coordinate", "worker_argv", "worker_inputs"]
