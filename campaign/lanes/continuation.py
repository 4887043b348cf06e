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
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import Engine
from sqlalchemy.engine import URL

from campaign.errors import CampaignError
from campaign.store import repository

# A blocking fact -> (the stop reason it records, words), most serious first.
BLOCKING = (
    ("cleanup_unverified", "cleanup unverified", lambda a: a.cleanup_complete is not True),
    ("finalization_failed", "finalization incomplete (its runner was killed)", lambda a: a.finalization_failed is True),
    ("disposal_failed", "disposal failed", lambda a: a.disposal_complete is False),
)


@dataclass(frozen=True)
class Blocker:
    attempt_id: int
    facts: tuple[str, ...]  # stop reasons, most serious first
    words: tuple[str, ...]
    proven_gone: bool
    private_root: str | None

    def line(self) -> str:
        proof = "processes proven gone" if self.proven_gone else "processes NOT proven gone"
        return f"attempt {self.attempt_id}: {', '.join(self.words)}; {proof}"


def blockers(engine: Engine, campaign_id: int) -> list[Blocker]:
    """Attempts (not running) whose cleanup, disposal or finalization is unproven."""
    found = []
    for a in repository.unresolved_attempts(engine, campaign_id):
        if a.status == "running":
            continue  # orphans are recovered first, then judged
        facts = [(reason, words) for reason, words, bad in BLOCKING if bad(a)]
        if facts:
            found.append(Blocker(a.id, tuple(r for r, _ in facts), tuple(w for _, w in facts), a.cleanup_complete is True, a.private_root))
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
    done = subprocess.run(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120, check=False)
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
        for b in self.blockers:
            if b.private_root:
                lines.append(f"  attempt {b.attempt_id} kept {b.private_root}: inspect it (ls -la), then remove it (rm -rf) once you no longer need it")
        if self.reports:
            lines.append(f"Reports: {', '.join(self.reports)}")
        if self.unproven:
            lines.append("Next: prove the blocking attempts' processes gone, then continue in a new campaign:")
            lines += [f"  {program} recover {i} --db {shlex.quote(self.db)}" for i in self.unproven]
        else:
            lines.append(f"Next: continue the experiment in a new campaign that carries over the {self.carried} finished, verified trials of campaign {self.campaign_id}:")
        lines.append(f"  {rerun}")
        return "\n".join(lines)
