"""The way forward after a runner was killed: continue the experiment in a new campaign.

The spec's rule stands: an attempt whose finalization never completed (its
runner was SIGKILLed) blocks resume into that campaign for good, and so does
cleanup or disposal the engine could not prove. What the operator gets instead
of a dead end is a precise next step:

1. Every blocking attempt's processes must be proven gone by the credential-free
   recovery (``campaign recover ATTEMPT``); the engine runs it itself first.
2. ``--resume --continue-blocked`` then starts a new campaign for the same
   experiment (``continues_campaign_id``) whose trials that the blocked campaign
   finished with a verified teardown are carried over by reference, never copied
   or edited. Everything else (the killed attempt's trial included) runs again.
   Spend gates count the whole lineage, so the operator's caps still hold.

Each blocking attempt's private root is named, with how to inspect and remove
it, wherever the operator is told what to do: in the refusal, and again as
``--continue-blocked`` continues (after a kill the operator may rerun that
command without ever seeing the refusal). A root that is no longer there is
never claimed as kept.

Resuming, too, lives here (``settle_resume``): the runner lease bound to a
process's birth, recovery of what a killed runner left running, and which of
the trials a stop held back a resume tries again.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TextIO

from sqlalchemy import Engine
from sqlalchemy.engine import URL

from campaign import containers
from campaign.errors import CampaignError, ConflictError
from campaign.lanes import holders
from campaign.lanes.campaign_inputs import CampaignInputs
from campaign.lanes.campaign_outputs import write_reports
from campaign.spend import ATTEMPT_EXCEEDED_CEILING
from campaign.store import leases, repository
from campaign.store.limits import SpendLimits
from campaign.store.engine import describe
from campaign.supervise import container_record, critical
from campaign.supervise.cgroup import attempt_cgroup_name
from campaign.supervise.procfs import ProcFS

# A blocking fact -> (the stop reason it records, words), most serious first.
BLOCKING = (
    ("cleanup_unverified", "cleanup unverified", lambda a: a.cleanup_complete is not True),
    ("finalization_failed", "finalization incomplete (its runner stopped before recording it: killed, or its store failed)", lambda a: a.finalization_failed is True),
    ("disposal_failed", "disposal failed", lambda a: a.disposal_complete is False),
)


@dataclass(frozen=True)
class Blocker:
    attempt_id: int
    facts: tuple[str, ...]  # stop reasons, most serious first
    words: tuple[str, ...]
    proven_gone: bool
    private_root: str | None  # only while the directory is there: a root that is gone is not kept
    # The attempt's container, while its runtime still keeps it (a task that ships an image),
    # and that runtime's command (podman or docker).
    container: str | None = None
    runtime: str = "podman"

    def line(self) -> str:
        proof = "processes proven gone" if self.proven_gone else "processes NOT proven gone"
        return f"attempt {self.attempt_id}: {', '.join(self.words)}; {proof}"

    def kept_line(self) -> str | None:
        lines = []
        if self.private_root:
            lines.append(f"  attempt {self.attempt_id} kept {self.private_root}: inspect it (ls -la), then remove it (rm -rf) once you no longer need it: a client killed there may have left its credential in it")
        if self.container:
            lines.append(f"  attempt {self.attempt_id} kept container {self.container}: inspect it ({self.runtime} inspect {self.container}), then remove it ({self.runtime} rm -f {self.container})")
        return "\n".join(lines) or None


def kept_container(attempt) -> tuple[str, str] | None:
    """(the attempt's container, its runtime's command), if the runtime still keeps it
    (None: it ran in none, or it is gone). Named from the row, as recovery names it; the
    root only says which runtime."""
    runtime = container_record.read_runtime(attempt.private_root)
    if runtime is None:
        return None
    name = containers.attempt_container_name(attempt_cgroup_name(attempt.id, attempt.campaign_id, attempt.started_at))
    command = os.path.basename(runtime)
    return None if containers.exists(containers.Runtime(command, runtime), name) is False else (name, command)


def kept(path: str | None) -> str | None:
    """The retained private root, if it is still there (a killed runner may have disposed
    of it before it could record that)."""
    return path if path and os.path.isdir(path) and not os.path.islink(path) else None


def blockers(engine: Engine, campaign_id: int) -> list[Blocker]:
    """Attempts (not running) whose cleanup, disposal or finalization is unproven."""
    found = []
    for a in repository.unresolved_attempts(engine, campaign_id):
        if a.status == "running":
            continue  # orphans are recovered first, then judged
        facts = [(reason, words) for reason, words, bad in BLOCKING if bad(a)]
        if facts:
            container, runtime = kept_container(a) or (None, "podman")
            found.append(Blocker(a.id, tuple(r for r, _ in facts), tuple(w for _, w in facts), a.cleanup_complete is True, kept(a.private_root), container, runtime))
    return found


def first_reason(found: Sequence[Blocker]) -> str | None:
    reasons = {r for b in found for r in b.facts}
    return next((reason for reason, _, _ in BLOCKING if reason in reasons), None)


def run_recovery(url: URL, attempt_id: int) -> bool:
    """``campaign recover ATTEMPT`` as its own credential-free process; True when it
    proved every ledger member gone (exit 0). A sealed row is never rewritten."""
    env = {k: os.environ[k] for k in ("PATH", "LANG", "LC_ALL") if k in os.environ}
    argv = [sys.executable, "-I", "-m", "campaign.supervise.recovery", str(attempt_id)]
    if url.password:
        env["CAMPAIGN_DB"] = url.render_as_string(hide_password=False)  # never in the process list
    else:
        argv += ["--db", url.render_as_string(hide_password=False)]
    # Its own session: a Ctrl-C at the terminal stops the runner (which waits for this), not the proof.
    done = subprocess.run(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120, check=False, start_new_session=True)
    return done.returncode == 0


def prove_gone(engine: Engine, found: Sequence[Blocker]) -> list[Blocker]:
    """Re-run recovery on each blocker not yet proven; the blockers with the new verdicts."""
    out = []
    for b in found:
        proven = b.proven_gone or run_recovery(engine.url, b.attempt_id)
        out.append(Blocker(b.attempt_id, b.facts, b.words, proven, b.private_root))
    return out


class CampaignBlocked(CampaignError):
    """Resume into this campaign is refused for good; ``next_steps`` say what to run."""

    def __init__(self, campaign_id: int, reason: str, found: Sequence[Blocker], *, carried: int, db: str, reports: Sequence[str]) -> None:
        self.campaign_id = campaign_id
        self.reason = reason
        self.blockers = tuple(found)
        self.carried = carried
        self.db = db
        self.reports = tuple(reports)
        super().__init__(self.describe())

    @property
    def unproven(self) -> list[int]:
        return [b.attempt_id for b in self.blockers if not b.proven_gone]

    def describe(self, rerun: str = "the same command, with --resume --continue-blocked added", program: str = "campaign") -> str:
        lines = [f"campaign {self.campaign_id} admits no more work ({self.reason}); its remaining trials are recorded not_attempted."]
        lines += [b.line() for b in self.blockers]
        lines.append("Retained private roots are evidence: resolve them independently (campaign recover), never by editing rows.")
        lines += [k for b in self.blockers if (k := b.kept_line())]
        if self.reports:
            lines.append(f"Reports: {', '.join(self.reports)}")
        if self.unproven:
            lines.append("Next: prove the blocking attempts' processes gone, then continue in a new campaign:")
            lines += [f"  {program} recover {i} --db {shlex.quote(self.db)}" for i in self.unproven]
        else:
            lines.append(f"Next: continue the experiment in a new campaign that carries over the {self.carried} finished, verified trials of campaign {self.campaign_id}:")
        lines.append(f"  {rerun}")
        return "\n".join(lines)


def continued(blocked_id: int, reason: str, found: Sequence[Blocker], *, carried: int) -> str:
    """What ``--continue-blocked`` says as it continues: the operator may never have seen
    the blocked campaign's message, so its evidence is named here."""
    lines = [f"campaign {blocked_id} admits no more work ({reason}); continuing the experiment in a new campaign that carries over its {carried} finished, verified trials."]
    lines += [b.line() for b in found]
    lines += [k for b in found if (k := b.kept_line())]
    return "\n".join(lines)


# --- resuming a campaign ------------------------------------------------------------


class ResumeRefused(CampaignError):
    """Resume would admit work it must not (tampering, unproven cleanup, a changed experiment)."""


# Trials a stop left not_attempted that a resume tries again, under the same gates. Not
# reopened: unproven cleanup, disposal or finalization (they block: continue instead), a
# trial whose fault attempts are exhausted, and those an attempt past its ceiling held
# back unless the ceiling was raised (reopen_under_a_raised_ceiling).
REOPEN_ON_RESUME = ("spend_limit", "spend_incomplete", "run_deadline", "max_attempts", "engine_error", "interrupted", "provider_unavailable", "worker_lost", "lease_lost")


def reopen_under_a_raised_ceiling(engine: Engine, campaign_id: int, limits: SpendLimits | None) -> int:
    """A provider's trials held back by ``attempt_exceeded_ceiling`` run again on resume
    only under a ceiling above the most any of its attempts has spent: under the same
    ceiling the same attempt would be stopped at the same place, its spend paid again for
    no result. Without a ceiling nothing is reopened (no cap is not a raised one)."""
    raised = raised_ceiling_providers(engine, campaign_id, limits)
    return repository.reopen_trials(engine, campaign_id, (ATTEMPT_EXCEEDED_CEILING,), providers=raised) if raised else 0


def raised_ceiling_providers(engine: Engine, campaign_id: int, limits: SpendLimits | None) -> list[str]:
    """The providers whose every attempt so far spent less than ``limits``' ceiling."""
    if limits is None:
        return []
    return [provider for provider, spent in repository.largest_attempt_spend(engine, campaign_id).items() if limits.per_attempt_ceiling_usd > spent]


def blocking_attempts(engine: Engine, campaign_id: int) -> tuple[str | None, list[str]]:
    """(stop reason, one line per attempt) for finished attempts whose cleanup, disposal or
    finalization is unproven: while any exists, resume admits nothing."""
    found = blockers(engine, campaign_id)
    return first_reason(found), [b.line() for b in found]


def recover_orphans(engine: Engine, campaign_id: int, url: URL) -> list[int]:
    """Run the credential-free recovery on attempts a killed runner left running, then
    record them interrupted with their finalization incomplete. Returns their ids."""
    orphans = [a for a in repository.attempts_for(engine, campaign_id) if a.status == "running"]
    for attempt in orphans:
        # A stop waits for recovery (bounded): killing it halfway would prove nothing.
        with critical():
            run_recovery(url, attempt.id)
            fresh = repository.get_attempt(engine, attempt.id)
            repository.finish_attempt(
                engine,
                attempt.id,
                attempt.trial_pk,
                status="interrupted",
                outcome="interrupted",
                failure_class="interrupted",
                cleanup_complete=fresh.cleanup_complete is True,
                teardown_outcome=fresh.teardown_outcome or "unverified",
                disposal_complete=False,
                finalization_failed=True,
            )
    return [a.id for a in orphans]


def my_identity(proc: ProcFS | None = None) -> repository.RunnerIdentity:
    proc = proc or ProcFS()
    return repository.RunnerIdentity(os.getpid(), proc.start_ticks(os.getpid()), proc.boot_id())


class RunnerBusy(ConflictError):
    """Another live runner holds the campaign; ``describe`` says what to run once it ends."""

    def describe(self, rerun: str = "the same command") -> str:
        return f"{self.args[0]}\nNext: wait for it to end, then run:\n  {rerun}"


def take_lease(engine: Engine, campaign_id: int, me: repository.RunnerIdentity, proc: ProcFS) -> None:
    holder = repository.campaign_runner(engine, campaign_id)
    if holder is not None and holders.runner_alive(holder, proc):
        raise RunnerBusy(f"campaign {campaign_id} is being run by pid {holder.pid}; only one runner at a time, so this one exits without running anything")
    if not repository.acquire_campaign(engine, campaign_id, me, stale=holder):
        raise RunnerBusy(f"another runner took campaign {campaign_id} first; this one exits without running anything")


def settle_resume(engine: Engine, campaign_id: int, inputs: CampaignInputs, me: leases.WorkerIdentity, proc: ProcFS, *, continue_blocked: bool, stream: TextIO | None = None) -> int:
    """Make a resumed campaign safe to drive: requeue admissions no process ran for,
    recover what a killed runner left running, and refuse (or, with --continue-blocked
    and every blocker proven gone, continue in a new campaign) when work is unproven.
    A campaign that is not blocked is resumed, --continue-blocked or not: continuing the
    experiment is what was asked. Returns the campaign to drive, with this runner
    holding its lease."""
    repository.reset_admitted_without_attempt(engine, campaign_id)
    recover_orphans(engine, campaign_id, engine.url)
    found = blockers(engine, campaign_id)
    reason = first_reason(found)
    if reason is None:
        return campaign_id
    row = repository.get_campaign(engine, campaign_id)
    if row.state != "stopped" or row.stop_reason != reason:
        repository.close_campaign(engine, campaign_id, reason, state="stopped")
    reports = write_reports(engine, campaign_id, inputs)
    carried = repository.carryable_trials(engine, campaign_id)
    if continue_blocked:
        found = prove_gone(engine, found)
        if all(b.proven_gone for b in found):
            if stream is not None:  # before the continuation exists: a kill right after still named the evidence
                print(continued(campaign_id, reason, found, carried=len(carried)), file=stream, flush=True)
            successor = repository.create_continuation(engine, campaign_id, carried)
            repository.release_campaign(engine, campaign_id, me)
            take_lease(engine, successor, me, proc)
            return successor
    raise CampaignBlocked(campaign_id, reason, found, carried=len(carried), db=describe(engine.url), reports=[str(r) for r in reports])
