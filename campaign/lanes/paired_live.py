"""Live paired runs: approval, exact binding, then the schedule under the stop rules.

Nothing here can spend past what the operator approved: before each attempt the
gates check the stop reason, the whole-run deadline, the attempt count and
measured spend plus the next per-attempt ceiling. A stop is recorded on the
campaign and every trial it prevents is recorded ``not_attempted`` with the
reason, never counted as an attempt or a success.

An approved plan bounds the experiment, not one invocation: the attempt count
and the spend are those of every live campaign of this store run under the same
approved digest (``repository.approval_use``), so running the command again (after
an interrupt, say) gets what the earlier runs left, and nothing once they used it
up, or once one of them left a spend unknown. Another store's runs of the same plan
are out of sight: the external provider cap the plan requires still bounds those.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from campaign.agents.profile_model import uses_wire
from campaign.agents.profiles import build_artifact_paths
from campaign.approval import Approval, authorize
from campaign.errors import Interrupted, UsageProblem
from campaign.experiment import PairedExperiment
from campaign.lanes.attempt import AttemptOutcome, run_attempt
from campaign.lanes.attempt_plan import AttemptSource
from campaign.lanes.breaker import MAX_FAULT_ATTEMPTS, Breaker, Halt
from campaign.lanes.options import CodingOptions
from campaign.lanes import task_images
from campaign.lanes.paired_plan import PairedInputs, compute_experiment, validate
from campaign.profiler.wire import bound_catalog_format
from campaign.plan import read_json_object
from campaign.report.outputs import check_report_output
from campaign.lanes.spend_watch import ceiling_line, gap_line
from campaign.spend import budget_allows_next, dollars, spend_stop
from campaign.store import repository
from campaign.store.engine import describe
from campaign.store.migrate import open_store
from campaign.supervise import critical, interruptible
from sqlalchemy import Engine

Progress = Callable[[str], None]


@dataclass(frozen=True)
class LiveResult:
    campaign_id: int
    output: Path
    store: str
    scheduled: int
    attempted: int
    passed: int
    stop_reason: str | None
    # Trials without a result (not attempted, or only attempts without a verdict).
    left: int = 0
    halts: tuple[Halt, ...] = ()
    # What stopped an engine_error attempt, for the operator (never stored).
    engine_error: str | None = None


def gate(*, stop_reason: str | None, now: float, deadline: float, attempted: int, approval: Approval, measured: Decimal) -> str | None:
    """Why the next attempt must not start, or None. Checked before every attempt."""
    if stop_reason is not None:
        return stop_reason
    if now >= deadline:
        return "run_deadline"
    if attempted >= approval.max_attempts:
        return "max_attempts"
    if not budget_allows_next(measured, approval.limits):
        return "spend_limit"
    return None


def approval_left(used: repository.ApprovalUse, approval: Approval) -> str | None:
    """Why a new run of an approved plan that earlier runs in this store used may not
    start (None: it may, with what they left)."""
    if not used.campaign_ids:
        return None
    ran = _ran(used, approval)
    if used.unknown:
        return (
            f"{ran} and the spend of {used.unknown} attempt(s) there is unknown, so what is left of its max_spend_usd cannot be bounded;"
            " approve a new plan (a new digest) to run again"
        )
    if used.attempts >= approval.max_attempts or not budget_allows_next(used.spent_usd, approval.limits):
        return f"{ran} and used it: {_used(used, approval)}; approve a new plan (a new digest) to run again"
    return None


def approval_line(used: repository.ApprovalUse, approval: Approval) -> str:
    """For the operator, when this run continues an approval earlier runs used."""
    return f"{_ran(used, approval)}: this run gets what is left of {_used(used, approval)}"


def _ran(used: repository.ApprovalUse, approval: Approval) -> str:
    return f"approved plan {approval.plan_digest[:12]} already ran in this store (campaign {', '.join(map(str, used.campaign_ids))})"


def _used(used: repository.ApprovalUse, approval: Approval) -> str:
    cap = approval.limits.max_spend_usd  # a paired plan always sets it
    return (
        f"{used.attempts} of max_attempts {approval.max_attempts} and ${dollars(used.spent_usd)} of max_spend_usd ${dollars(cap)}"  # type: ignore[arg-type]
        f" (an attempt starts while the spend plus its ${dollars(approval.limits.per_attempt_ceiling_usd)} ceiling fits)"
    )


def after_attempt(result: AttemptOutcome, approval: Approval) -> str | None:
    """Stops that an attempt's own outcome triggers for every later trial."""
    if result.stop_reason is not None:
        return result.stop_reason
    return spend_stop(result.failure_class, result.record.cost_usd, result.spend_complete, result.equivalent_spend_usd, approval.limits)


def attempt_source(inputs: PairedInputs, experiment: PairedExperiment, approval: Approval, catalog_format: int, failure_dir: str | Path | None) -> AttemptSource:
    """What every attempt of an approved paired plan shares."""
    return AttemptSource(
        profile=inputs.profile,
        model=experiment.model,
        seed=experiment.seed,
        timeout_s=float(inputs.timeout),
        configs={v.variant: v.text for v in inputs.variants},
        credential_names=approval.credential_env,
        launcher=str(inputs.launcher) if inputs.launcher else None,
        failure_dir=Path(failure_dir).expanduser().resolve() if failure_dir else None,
        wire=inputs.wire,
        expected_catalogs=experiment.wire_catalogs,
        catalog_format=catalog_format,
        provider=inputs.provider,
        images=inputs.images,
    )


def run(
    opts: CodingOptions,
    db: str | None,
    *,
    cwd: Path | None = None,
    environ: Mapping[str, str] | None = None,
    progress: Progress = lambda line: None,
    timer: Callable[[], float] = time.monotonic,
    write_output: Callable | None = None,
) -> LiveResult:
    environ = os.environ if environ is None else environ
    inputs = validate(opts, db, Path(cwd or Path.cwd()))
    check_report_output(Path(opts.output).expanduser(), "--output")  # type: ignore[arg-type]
    plan = read_json_object(Path(opts.plan).expanduser(), "the plan", option="--plan")  # type: ignore[arg-type]
    if inputs.profile.build_artifacts and not build_artifact_paths(inputs.profile, inputs.source):
        raise UsageProblem(
            f"the agent profile {inputs.profile.name!r} declares build artifacts but none exist under {inputs.source}; build first, then plan and approve",
            option="--agent",
        )
    approved = plan["experiment"] if isinstance(plan.get("experiment"), dict) else {}
    rebuilt = task_images.rebuilt_since(approved.get("fixture_digests") or {}, inputs.tasks, inputs.images)
    if rebuilt is not None:
        raise UsageProblem(
            f"fixture_digests[{rebuilt}]: the image of task {rebuilt} is not the one the plan was approved with (its tag now names image "
            f"{inputs.images[rebuilt].image[:12]}); a rebuilt image is a different experiment: plan and approve again",
            option="--plan",
        )
    # Measured as the approved plan measured them: a plan bound before format 2 keeps format 1.
    catalog_format = bound_catalog_format(approved)
    experiment = compute_experiment(inputs, catalog_format)
    schedule = experiment.schedule()
    approval = authorize(plan, opts.approve_plan_digest or "", len(schedule), environ, experiment.as_dict())
    if not uses_wire(inputs.profile):
        raise UsageProblem(
            f"the {inputs.profile.name} agent does not reach its model through the recording proxy ({{proxy_url}}): without a profiler flush "
            "no attempt's spend could be complete, so the run would stop after its first attempt; use a profile that does (the offline agent's is offline-wire)",
            option="--agent",
        )

    engine = open_store(db)
    try:
        used = repository.approval_use(engine, approval.plan_digest)
        refusal = approval_left(used, approval)
        if refusal is not None:
            raise UsageProblem(refusal, option="--approve-plan-digest")
        if used.campaign_ids:
            progress(approval_line(used, approval))
        started = timer()
        deadline = started + inputs.run_timeout
        campaign_id = repository.create_campaign(
            engine,
            repository.NewCampaign(
                kind="paired",
                state="running",
                live=True,
                agent=experiment.agent,
                seed=experiment.seed,
                experiment=experiment.as_dict(),
                plan_digest=approval.plan_digest,
                approved_plan_digest=approval.plan_digest,
                deadline_at=repository.utcnow() + dt.timedelta(seconds=inputs.run_timeout),
            ),
            schedule,
            model=experiment.model,
            default_provider=inputs.model.provider,
        )
        repository.set_campaign_state(engine, campaign_id, expected=("running",), state="running")
        repository.record_spend_limits(engine, campaign_id, approval.limits)
        source = attempt_source(inputs, experiment, approval, catalog_format, opts.failure_dir)
        provider = inputs.model.provider
        for line in inputs.selection.lines():
            progress(line)
        breaker = Breaker()
        stop_reason: str | None = None
        engine_error: str | None = None
        attempted = passed = 0
        try:
            with interruptible():
                # Passes over the schedule: a trial the provider ended runs again in a later pass
                # (no verdict was given), until its bound of fault attempts or a stop.
                ran = True
                while ran and stop_reason is None:
                    ran = False
                    for trial in [t for t in repository.trials_in_order(engine, campaign_id) if t.status == "scheduled"]:
                        # This campaign's attempts and those of every other run of the same approval.
                        used = repository.approval_use(engine, approval.plan_digest)
                        stop_reason = gate(
                            stop_reason=stop_reason or ("spend_incomplete" if used.unknown else None),
                            now=timer(),
                            deadline=deadline,
                            attempted=used.attempts,
                            approval=approval,
                            measured=used.spent_usd,
                        )
                        if stop_reason is None and breaker.check(provider, inputs.wire.upstream if inputs.wire else None):
                            stop_reason = "provider_unavailable"
                        if stop_reason is not None:
                            break
                        if repository.fault_attempts(engine, [campaign_id], trial.trial_id) >= MAX_FAULT_ATTEMPTS:
                            repository.mark_not_attempted(engine, trial.id, "fault_attempts_exhausted")
                            continue
                        if not repository.admit_trial(engine, trial.id):
                            continue
                        attempt = source.plan(inputs.selection.task(trial.task), trial.variant)
                        result = run_attempt(engine, trial, attempt, timer=timer, runtime_deadline=deadline, spend_ceiling_usd=approval.limits.per_attempt_ceiling_usd)
                        attempted += 1
                        ran = True
                        passed += result.outcome == "passed"
                        engine_error = result.error or engine_error
                        halted = breaker.record(provider, result.outcome, result.provider_faults)
                        stop_reason = after_attempt(result, approval) or ("provider_unavailable" if halted else None)
                        if line := ceiling_line(trial, result, approval.limits) or gap_line(trial, result, approval.limits):
                            progress(line)
                        progress(
                            f"[{trial.position + 1}/{len(schedule)}] {trial.trial_id}: {result.outcome}"
                            f"{'' if result.failure_class in (None, result.outcome) else ' (' + result.failure_class + ')'}"
                            f", spend {_spend_text(engine, campaign_id)}/{approval.limits.max_spend_usd} USD"
                        )
            if stop_reason is None:  # trials whose fault attempts ran out stop the run's completion too
                stop_reason = next((t.not_attempted_reason for t in repository.trials_in_order(engine, campaign_id) if t.status == "not_attempted"), None)
            repository.close_campaign(engine, campaign_id, stop_reason, state="stopped" if stop_reason else "completed")
        except Interrupted:
            with critical():
                repository.close_campaign(engine, campaign_id, "interrupted", state="interrupted")
                if write_output is not None:
                    write_output(engine, campaign_id, inputs.output)
            raise
        if write_output is not None:
            write_output(engine, campaign_id, inputs.output)
        left = sum(t.status != "finished" for t in repository.trials_in_order(engine, campaign_id))
        return LiveResult(
            campaign_id, inputs.output, describe(engine.url), len(schedule), attempted, passed, stop_reason,
            left=left, halts=tuple(breaker.halted.values()), engine_error=engine_error,
        )
    finally:
        engine.dispose()  # now, not whenever the collector gets to it (see multi_provider.run)


def _spend_text(engine: Engine, campaign_id: int) -> str:
    """Measured spend so far: exact, ``+?`` when some attempts' cost is unknown, ``?`` when all are."""
    known, unknown = repository.measured_spend_parts(engine, campaign_id)
    if unknown and known is None:
        return "?"
    return f"{known or 0:.4f}{'+?' if unknown else ''}"



