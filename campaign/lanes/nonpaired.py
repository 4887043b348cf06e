"""The nonpaired lane: each selected task once, through the agent's own configuration.

No variants, no plan gate: this is the quick end-to-end run (and, with the
offline agent, the zero-cost main job). It still goes through the whole attempt
path (isolation, ledger, deadline, verifier, proven teardown) and stops at the
first attempt whose cleanup, disposal or finalization cannot be proven.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from campaign.vocabulary import WIRE_COUNTERS
from campaign.agents import seeds
from campaign.agents.profiles import AgentProfile, load_profile
from campaign.lanes.wire import resolve_route
from campaign.providers import REPLAY, Provider, load_catalog, provider_for_route
from campaign.errors import Interrupted, UsageProblem
from campaign.lanes import options as opt
from campaign.lanes import task_images
from campaign.lanes.attempt import AttemptPlan, run_attempt
from campaign.experiment import nonpaired as nonpaired_experiment
from campaign.schedule import single_run
from campaign.store import repository
from campaign.store.engine import describe
from campaign.store.migrate import open_store
from campaign.supervise import critical, interruptible
from sqlalchemy import Engine

OFFLINE_MODEL = "offline:synthetic"
KIND = "nonpaired_coding_run"
SCHEMA_VERSION = 3

Progress = Callable[[str], None]


@dataclass(frozen=True)
class NonpairedResult:
    campaign_id: int
    output: Path
    store: str
    attempted: int
    passed: int
    stop_reason: str | None
    # What stopped an engine_error attempt, for the operator (never stored).
    engine_error: str | None = None


def run(opts: opt.CodingOptions, db: str | None, *, progress: Progress = lambda line: None, timer: Callable[[], float] = time.monotonic) -> NonpairedResult:
    """Validate everything first (nothing written on bad input), then run each task once."""
    selection = opt.select_tasks(opts, images=True)
    tasks = selection.tasks
    source = opt.resolve_source(opts.source, Path.cwd()) if (opts.source or opts.launcher) else None
    launcher = opt.resolve_launcher(opts.launcher, source) if source else None
    profile = load_profile(opt.or_default(opts.agent, opt.DEFAULT_AGENT), source)
    seeds.check(profile, os.environ)
    model = str(opt.parse_model(opts.model)) if opts.model or profile.paid else OFFLINE_MODEL
    timeout = opt.or_default(opts.timeout, opt.DEFAULT_TIMEOUT)
    route = opts.model.partition(":")[0] if opts.model else model.partition(":")[0]
    provider = provider_for_route(load_catalog(), route)
    wire = resolve_route(profile, provider, profile_python=sys.executable, environ=os.environ, option="--model")
    credentials = _credentials(profile, provider if wire is not None else None)
    missing = [name for name in credentials if not os.environ.get(name)]
    if missing:
        whose = f"the {profile.name} agent" if wire is None else f"provider {provider.name} (the --model route's upstream)"  # type: ignore[union-attr]
        raise UsageProblem(f"{whose} needs {', '.join(missing)} in the environment", option="--agent" if wire is None else "--model")
    output = Path(opts.output).expanduser().resolve()
    if output.is_dir():
        raise UsageProblem(f"{opts.output} is a directory; give a file path", option="--output")
    # Last of the checks: it may build images (each task that ships one runs in a container of it).
    images = task_images.prepare(tasks, [profile], opts.container_runtime, live=profile.paid)

    engine = open_store(db)
    try:
        trials = single_run([t.name for t in tasks])
        experiment = nonpaired_experiment(profile.name, model, [t.name for t in tasks], timeout, selection.identity())
        campaign_id = repository.create_campaign(
            engine,
            repository.NewCampaign(kind="nonpaired", state="running", live=profile.paid, agent=profile.name, seed=0, experiment=experiment),
            trials,
            model=model,
            default_provider=model.partition(":")[0],
        )
        stop_reason = None
        engine_error: str | None = None
        passed = attempted = 0
        started = timer()
        for line in selection.lines():
            progress(line)
        try:
            with interruptible():
                for index, trial in enumerate(repository.trials_in_order(engine, campaign_id), start=1):
                    if stop_reason is not None:
                        break
                    if not repository.admit_trial(engine, trial.id):
                        continue
                    plan = AttemptPlan(task=selection.task(trial.task), profile=profile, model=model, seed=0, timeout_s=timeout, credential_names=credentials, launcher=str(launcher) if launcher else None, failure_dir=opts.failure_dir, wire=wire, container=images.get(trial.task))
                    result = run_attempt(engine, trial, plan)
                    attempted += 1
                    passed += result.outcome == "passed"
                    stop_reason = result.stop_reason
                    engine_error = result.error or engine_error
                    wall = "?" if result.wall_seconds is None else f"{result.wall_seconds:.1f}s"
                    progress(f"[{index}/{len(trials)}] {trial.task}: {result.outcome}{'' if result.failure_class is None else ' (' + result.failure_class + ')'} wall {wall}, elapsed {timer() - started:.0f}s")
            if stop_reason is None and any(t.status == "scheduled" for t in repository.trials_in_order(engine, campaign_id)):
                # A trial the provider ended has no result, and this diagnostic lane runs each task once.
                stop_reason = "provider_unavailable"
            repository.close_campaign(engine, campaign_id, stop_reason, state="stopped" if stop_reason else "completed")
        except Interrupted:
            with critical():
                repository.close_campaign(engine, campaign_id, "interrupted", state="interrupted")
                write_report(engine, campaign_id, output)
            raise
        write_report(engine, campaign_id, output)
        return NonpairedResult(campaign_id, output, describe(engine.url), attempted, passed, stop_reason, engine_error)
    finally:
        engine.dispose()  # now, not whenever the collector gets to it (see multi_provider.run)


def _credentials(profile: AgentProfile, provider: Provider | None) -> tuple[str, ...]:
    """The one credential the client is given. Through the recording proxy (``provider``)
    it talks to the --model route's upstream, so it gets that provider's own key (under
    the name the client reads), never the key of the provider the profile defaults to:
    codex routed to anthropic would have sent the OpenAI key to Anthropic. The replay
    upstream takes none (the attempt gives the client a placeholder)."""
    if provider is None:
        return (profile.credential_env_default,) if profile.credential_env_default else ()
    if provider.upstream == REPLAY or provider.credential_env is None:
        return ()
    return (provider.credential_env,)


_TRIAL_FIELDS = (
    "outcome",
    "failure_class",
    "verified_pass",
    "wall_seconds",
    *WIRE_COUNTERS,
    "tool_calls",
    "tool_errors",
    "cost_usd",
    "spend_complete",
    "cleanup_complete",
    "disposal_complete",
    "finalization_failed",
    "teardown_outcome",
    "fixture_digest",
)


def build_report(engine: Engine, campaign_id: int) -> dict[str, Any]:
    """The nonpaired report, from the store only, with allowlisted fields."""
    campaign = repository.get_campaign(engine, campaign_id)
    trials = {t.id: t for t in repository.trials_in_order(engine, campaign_id)}
    attempts = repository.attempts_for(engine, campaign_id)
    rows = []
    for a in attempts:
        t = trials[a.trial_pk]
        rows.append({"task": t.task, "trial_id": t.trial_id, **{f: getattr(a, f) for f in _TRIAL_FIELDS}})
    costs = [r["cost_usd"] for r in rows]
    synthetic = campaign.agent == "offline"
    return {
        "schema_version": SCHEMA_VERSION,
        "kind": KIND,
        "campaign_id": campaign_id,
        "agent": campaign.agent,
        "model": json.loads(campaign.experiment_json)["model"],
        "synthetic": synthetic,
        "note": "offline agent: every figure is synthetic test data, not evidence about any model" if synthetic else None,
        "state": campaign.state,
        "stop_reason": campaign.stop_reason,
        "scheduled": len(trials),
        "attempts": len(rows),
        "verified_passes": sum(1 for r in rows if r["verified_pass"]),
        "not_attempted": [{"task": t.task, "reason": t.not_attempted_reason} for t in trials.values() if t.status == "not_attempted"],
        "measured_spend_usd": sum(c for c in costs if c is not None) if any(c is not None for c in costs) else None,
        "spend_complete": bool(rows) and all(r["spend_complete"] for r in rows),
        "trials": rows,
    }


def write_report(engine: Engine, campaign_id: int, output: Path) -> None:
    output.parent.mkdir(parents=True, exist_ok=True)
    data = json.dumps(build_report(engine, campaign_id), indent=2, sort_keys=True) + "\n"
    fd, tmp = tempfile.mkstemp(prefix=".report-", dir=output.parent)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(data)
    os.replace(tmp, output)
