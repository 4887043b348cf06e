"""One attempt, start to end (DESIGN.md §5), shared by every lane.

Private root, fresh fixture, the variant's config, an allowlisted environment,
an optional runtime, the profile gate, the client under the per-attempt
deadline, the external verifier, teardown with proof, finalization, disposal,
and one attempt row that keeps every observed counter whatever failed.

The agent owns its root and may rename, relink or remount anything in it, so
once agent code may run the engine reaches the root only through descriptors
pinned at creation (``pinned_root``): captures are its own files, the verifier
is installed and started in the pinned working copy, and a layout that changed
under it (``workspace_tampered``) or a capture that is not its file
(``unparseable_output``) is a recorded failure, never a write elsewhere or a hang.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from dataclasses import replace
from decimal import Decimal
from pathlib import Path

from sqlalchemy import Engine

from campaign import benchmark, isolation, testhooks
from campaign.agents import profiles, seeds
from campaign.agents.record import AgentRecord
from campaign.errors import Interrupted
from campaign.lanes import attempt_container, bundles, spend_watch
from campaign.lanes import wire as lanes_wire
from campaign.lanes.attempt_plan import AttemptOutcome, AttemptPlan, Verdict, attempt_status, config_text_digest
from campaign.lanes.attempt_state import REPLAY_PLACEHOLDER_CREDENTIAL, AttemptRun, Observed, client_ended, oracle_args, placeholder_values, tampered, with_wire, within
from campaign.lanes.harbor import APP, HarborPaths
from campaign.lanes.pinned_root import PinnedRoot
from campaign.lanes.runtime import RuntimeBootFailed, wait_healthy
from campaign.lanes.verdict import classify, counter_fields, priced, profile_gate, provider_fault_of
from campaign.providers import REPLAY
from campaign.spend import ATTEMPT_EXCEEDED_CEILING
from campaign.store import repository
from campaign.store.models import Trial
from campaign.supervise import Supervisor, TeardownVerdict, critical
from campaign.supervise import disposal
from campaign.supervise.gate import SpawnError
from campaign.supervise.pinned import NotOurs
from campaign.vocabulary import VERIFIER_KILLED

__all__ = ["AttemptOutcome", "AttemptPlan", "classify", "counter_fields", "profile_gate", "run_attempt"]


NOTHING_SPAWNED = TeardownVerdict(cleanup_complete=True, outcome="clean", containment="pgid-only", survivors=0)


def run_attempt(
    engine: Engine,
    trial: Trial,
    plan: AttemptPlan,
    *,
    clock: Callable = repository.utcnow,
    timer: Callable[[], float] = time.monotonic,
    runtime_deadline: float | None = None,
    spend_ceiling_usd: Decimal | None = None,
) -> AttemptOutcome:
    """Run one admitted trial. Raises Interrupted only after the row is persisted; any
    other failure is recorded as an engine_error, whose stop reason ends the lane.
    With ``spend_ceiling_usd`` (a lane with spend limits) the client is stopped once the
    spend its wire has seen passes it (``spend_watch``)."""
    deadline = timer() + plan.timeout_s
    if runtime_deadline is not None:
        deadline = min(deadline, runtime_deadline)
    run = AttemptRun(engine, trial, plan, deadline, timer, spend_ceiling_usd)
    stopped_by: BaseException | None = None
    testhooks.reached("admitted")
    try:
        # An interruption during either block is deferred to its end, inside this try:
        # once the attempt row exists it is always finished, never left running. The row
        # names the private root before it exists, so a killed runner's root is never unnamed.
        where = isolation.new_root_path(plan.tmp_base)
        with critical():
            run.attempt_id = attempt_id = repository.start_attempt(
                engine, trial, clock, config_digest=config_text_digest(plan.config_text), fixture_digest=plan.fixture_digest, private_root=str(where)
            )
        testhooks.reached("attempt-row")
        with critical():
            run.root = isolation.create_private_root(path=where)
            run.held = held = PinnedRoot(run.root)
            # A container attempt's members run the container runtime, which a confined
            # member cannot (it must join the runtime's user namespace): the container confines the agent.
            confine = plan.container is None
            run.sup = sup = Supervisor(engine, attempt_id, run.root, clock=clock, budget=plan.teardown_budget, python=plan.python, confine_members=confine)
        with sup:
            testhooks.reached("contained")
            if plan.container is not None:
                attempt_container.drive(run, held, sup)
            else:
                _drive(run, held, sup)
    except Exception as exc:  # Interrupted included: the row is written before it propagates
        if run.attempt_id is None:
            raise  # no row was started: nothing to finish
        stopped_by = interruption_in(exc) or exc
    with critical():
        try:
            return _finish(run, run.attempt_id, stopped_by)
        finally:
            if run.harbor is not None:
                run.harbor.close()
            if run.held is not None:
                run.held.close()


def _drive(run: AttemptRun, held: PinnedRoot, sup: Supervisor) -> None:
    """Everything between containment and the verifier's verdict; it returns early where
    the attempt cannot go on, leaving what it saw in ``run.state`` for ``_finish``."""
    trial, plan, state, deadline, timer = run.trial, run.plan, run.state, run.deadline, run.timer
    root = held.root
    benchmark.copy_fixture(plan.task, root.cwd)
    prompt_file = root.path / "prompt.md"
    prompt_file.write_text(plan.task.prompt, encoding="utf-8")
    config_path = None
    if plan.config_text is not None:
        config_path = root.path / "agent-config.toml"
        config_path.write_text(plan.config_text, encoding="utf-8")
    sdk = dict(plan.profile.sdk_path_vars)
    values = placeholder_values(plan, trial, root, prompt_file, config_path)
    if plan.task.harbor:
        # Before any agent code runs; the agent then works in /app, its own root.
        run.harbor = HarborPaths.prepare(held)
        values["cwd"] = APP
    client_map = run.harbor.client_map() if run.harbor is not None else None

    state.gate_ok = profile_gate(plan, config_path)
    if not state.gate_ok:
        return
    # From here on agent code may run: the root is reached only through `held`.
    if plan.wire is not None:
        try:
            state.wire = lanes_wire.start(sup, held, plan.wire, plan.task, runner_python=plan.python, deadline=deadline, timer=timer)
        except lanes_wire.WireStartFailed:
            state.wire_ok = False
            return
        values["proxy_url"] = state.wire.proxy_url
    extra = dict(plan.extra_env) | profiles.client_env(plan.profile, config_path, values, plan.variant)
    credential = plan.profile.credential_env_default
    if plan.wire is not None and plan.wire.upstream == REPLAY and credential and credential not in plan.credential_names:
        # The replay provider takes any key; clients refuse to start without one.
        extra[credential] = REPLAY_PLACEHOLDER_CREDENTIAL
    env = _as_client_reads(isolation.build_env(root, os.environ, sdk_path_vars=sdk, credential_names=plan.credential_names, extra=extra), plan)
    # What the client reads from its HOME (settings, a seeded plugin), before anything of it runs.
    seeds.write_home_files(profiles.home_files(plan.profile, values, plan.variant), root.home)
    seeds.plant(plan.profile, root.home, os.environ)
    if plan.profile.runtime is not None:
        with held.stdio("runtime") as io:
            runtime = sup.start("runtime", profiles.render(plan.profile.runtime.argv, values), cwd_fd=held.work_fd, env=env, stdout=io.out, stderr=io.err, root_map=client_map)
        try:
            values["runtime_port"] = str(wait_healthy(runtime, held.reader("runtime.out"), plan.profile.runtime, timer=timer, deadline=deadline))
        except RuntimeBootFailed:
            state.boot_ok = False
            return
    # The ledger must be intact before any paid call (a SupervisorError here is an engine_error).
    sup.verify_ledger()
    argv = profiles.client_argv(plan.profile, values, plan.variant) + list(plan.extra_client_args) + oracle_args(plan)
    try:
        client_io = held.stdio("client")
    except NotOurs as exc:  # the runtime, agent code too, took the name first
        tampered(sup, state, f"client capture {exc.reason}")
        return
    watch = spend_watch.watch(state.wire, plan, run.ceiling, timer) if state.wire is not None else None
    with client_io as io:
        timeout = within(deadline - timer(), plan.task.agent_timeout_sec)
        result = sup.run("client", argv, timeout=timeout, cwd_fd=held.work_fd, env=env, stdout=io.out, stderr=io.err, stop_when=watch, root_map=client_map)
    if not client_ended(run, held, sup, result, watch):
        return
    if not sup.quiesce():
        tampered(sup, state, "processes the agent left running could not be stopped before verification")
        return
    changed = held.changed()
    if changed is not None:
        tampered(sup, state, f"the root's {changed} is not the directory pinned before the client ran")
        return
    try:
        verifier_map = run.harbor.verifier_map(plan.task) if run.harbor is not None else None
        if verifier_map is None:
            benchmark.install_verifier(plan.task, held.work_fd)
        # Its own HOME, as it gets its own tests: what the client left in its HOME (a
        # user site-packages, a tool's config) must not reach the verdict.
        verifier_home = held.fresh_dir("verifier-home")
        verifier_io = held.stdio("verifier")
    except (benchmark.VerifierRefused, NotOurs) as exc:
        tampered(sup, state, f"verifier not installed: {getattr(exc, 'reason', exc)}")
        return
    try:
        with verifier_io as io:
            verdict = sup.run(
                "verifier",
                benchmark.verifier_argv(plan.task, plan.python),
                cwd_fd=held.work_fd,
                timeout=within(deadline - timer(), plan.task.verifier.timeout_sec),
                env=isolation.build_env(root, os.environ, extra=dict(plan.task.verifier.env), home=verifier_home),
                stdout=io.out,
                stderr=io.err,
                root_map=verifier_map,
            )
    except SpawnError as exc:
        if not exc.command_missing:
            raise
        state.verifier_error = str(exc)
        sup.log(f"the verifier could not start: {exc}")
        return
    state.verifier_exit = verdict.exit_code
    state.verifier_timed_out = verdict.timed_out
    if run.harbor is not None and not verdict.timed_out:
        state.reward = run.harbor.reward()
    testhooks.reached("verifier")


def _as_client_reads(env: dict[str, str], plan: AttemptPlan) -> dict[str, str]:
    """The provider's one credential under the name the client reads (the profile's
    ``credential_env_default``): a catalog may keep it as MY_ANTHROPIC_API_KEY, while
    Claude Code reads ANTHROPIC_API_KEY. Only that name carries it into the client."""
    target = plan.profile.credential_env_default
    if target and len(plan.credential_names) == 1 and plan.credential_names[0] != target:
        env[target] = env.pop(plan.credential_names[0])
    return env


# Signals that end a process on request (an operator, a shutdown), never on its own fault.
# The engine sends the verifier none of them except at its deadline, which reads as a timeout.
_ASKED_TO_END = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


def _killed_from_outside(state: Observed) -> str | None:
    """The signal's name when the verifier was ended by a request to end that the engine
    did not send; None otherwise (SIGKILL and crash signals are the code's own failure)."""
    code = state.verifier_exit
    if code is None or code >= 0 or state.verifier_timed_out:
        return None
    return next((s.name for s in _ASKED_TO_END if -code == s), None)


def _profiling_finalization(plan: AttemptPlan, state: Observed) -> tuple[bool | None, bool]:
    """(flush_complete, finalization_ok) once every member is down.

    A capture that cannot be read (missing, not a regular file, malformed) is a
    finalization failure: the root is kept as evidence. A readable capture
    without its flush marker is an incomplete flush, never zero activity.
    """
    if plan.wire is None:
        return None, True
    session = state.wire
    if session is None:  # the proxy never ran: nothing was flushed, nothing is left to read
        return None, True
    try:
        if session.capture is None:
            # Interrupted or failed before collection: teardown already sent TERM, so read what was flushed.
            session.capture = lanes_wire.read_capture(Path(lanes_wire.CAPTURE_NAME), dir_fd=session.dir_fd)
            state.record = with_wire(state.record, session.capture, plan, session)
    finally:
        session.close()
    return session.capture.flush_complete, session.capture.problem is None


def interruption_in(exc: BaseException) -> Interrupted | None:
    """The operator's stop behind ``exc``, if one is in its chain: a failure raised while
    an interrupt unwound (a cleanup that met a half-done step) is that interrupt's, and
    the attempt is interrupted, never an engine error."""
    seen: set[int] = set()
    found: BaseException | None = exc
    while found is not None and id(found) not in seen:
        if isinstance(found, Interrupted):
            return found
        seen.add(id(found))
        found = found.__cause__ or found.__context__
    return None


def _finish(run: AttemptRun, attempt_id: int, stopped_by: BaseException | None) -> AttemptOutcome:
    engine, trial, plan, state, root, held, sup = run.engine, run.trial, run.plan, run.state, run.root, run.held, run.sup
    error = None if stopped_by is None or isinstance(stopped_by, Interrupted) else f"{type(stopped_by).__name__}: {stopped_by}"
    if error is not None and sup is not None and sup.entered:
        sup.log(f"engine error: {type(stopped_by).__name__}")
    # A supervisor that never entered spawned nothing: there is nothing left to prove.
    verdict = sup.teardown() if sup is not None and sup.entered else NOTHING_SPAWNED
    if run.container is not None and run.container.gone() is not True:
        # Every process may be proven gone while the runtime still keeps the container (and
        # its filesystem): that is no proven cleanup. It is kept for inspection, and named.
        sup.log(f"container {run.container.name} kept for inspection: the runtime still has it (remove it with {run.container.runtime.name} rm -f {run.container.name})")
        verdict = replace(verdict, cleanup_complete=False, outcome="unverified", reasons=(*verdict.reasons, "container_kept"))
    testhooks.reached("teardown")
    flush_complete, finalization_ok = _profiling_finalization(plan, state)
    record: AgentRecord = state.record
    outcome, failure_class, verified_pass = classify(
        plan,
        gate_ok=state.gate_ok,
        boot_ok=state.boot_ok,
        wire_ok=state.wire_ok,
        client_timed_out=state.client_timed_out,
        output_ok=state.output_ok,
        workspace_ok=state.workspace_ok,
        record=record,
        verifier_exit=state.verifier_exit,
        verifier_timed_out=state.verifier_timed_out,
        reward=state.reward,
    )
    fault = provider_fault_of(record) or state.gave_out
    if isinstance(stopped_by, Interrupted):
        outcome, failure_class, verified_pass = "interrupted", "interrupted", None
    elif stopped_by is not None:
        outcome, failure_class, verified_pass = "engine_error", "engine_error", None
    elif state.verifier_error is not None:
        # A missing interpreter or tool is the machine's, never the agent's failure.
        outcome, failure_class, verified_pass = "engine_error", "verifier_error", None
        error = f"the verifier could not start: {state.verifier_error}"
    elif (signal_name := _killed_from_outside(state)) is not None:
        outcome, failure_class, verified_pass = "engine_error", VERIFIER_KILLED, None
        error = f"the verifier was ended by {signal_name}, which the engine did not send"
    elif state.overrun is not None:
        # The operator's budget ended it, not the agent: no verdict, and like an interrupted
        # attempt its trial may run again (under a raised ceiling); no provider fault either.
        outcome, failure_class, verified_pass = "interrupted", ATTEMPT_EXCEEDED_CEILING, None
    elif fault is not None:
        # The provider ended it (DESIGN.md §9): no verdict, whatever the verifier said.
        outcome, failure_class, verified_pass = "provider_error", fault, None
    if plan.failure_dir is not None and outcome != "passed" and held is not None:
        try:
            bundles.write_bundle(plan.failure_dir, trial.trial_id, held, credential_names=plan.credential_names)
        except OSError:
            pass  # a debugging aid: an unwritable --failure-dir must not leave the row unfinished
    if root is None:
        disposed = disposal.DisposalResult(True, "disposed")
    else:
        disposed = disposal.dispose(root, finalization_ok=finalization_ok, cleanup_complete=verdict.cleanup_complete)
    record, gap, equivalent = priced(record, plan, flush_complete)
    repository.finish_attempt(
        engine,
        attempt_id,
        trial.id,
        status=attempt_status(outcome),
        outcome=outcome,
        failure_class=failure_class,
        verified_pass=verified_pass,
        verifier_exit_code=state.verifier_exit,
        wall_seconds=state.wall,
        spend_complete=gap is None,
        flush_complete=flush_complete,
        cleanup_complete=verdict.cleanup_complete,
        teardown_outcome=verdict.outcome,
        disposal_complete=disposed.disposal_complete,
        finalization_failed=disposed.finalization_failed,
        private_root=None if disposed.disposal_complete or root is None else str(root.path),
        equivalent_spend_usd=equivalent,
        **counter_fields(record),
    )
    testhooks.reached("finalized")
    result = AttemptOutcome(
        attempt_id=attempt_id,
        outcome=outcome,
        failure_class=failure_class,
        verified_pass=verified_pass,
        wall_seconds=state.wall,
        record=record,
        spend_complete=gap is None,
        spend_gap=gap,
        cleanup_complete=verdict.cleanup_complete,
        disposal_complete=disposed.disposal_complete,
        finalization_failed=disposed.finalization_failed,
        error=error,
        equivalent_spend_usd=equivalent,
        provider_faults=(record.schema_diagnostics or {}).get("provider_faults") if outcome == "provider_error" else None,
        verifier=Verdict(state.verifier_exit, state.reward, state.verifier_timed_out, state.verifier_error is not None),
    )
    if isinstance(stopped_by, Interrupted):
        raise stopped_by
    return result
