"""An operator who follows the printed lines literally (kill-window and random-kill tests).

``Operator`` runs a campaign command as a subprocess, disrupted as asked: by the
engine's own test hook (``CAMPAIGN_TEST_STOP_AT``: a SIGKILL or a stop signal
at an exact step boundary) or by a signal sent from outside after a delay.
Then it does only what an operator reading the output would do: after a
SIGKILL it runs the command it ran last again (a killed process prints
nothing); otherwise it runs every command the output printed, in order, as
written (``shlex.split``, no shell). It stops when a command says every
scheduled trial has a result, and raises ``DeadEnd`` when an output names no
command to run, or the lines go round in circles.

It also keeps what a reader would check: every ``kept PATH`` line must name a
directory that is there, and every stop signal must end with exit 130 and a
line to continue, never a traceback, "Aborted!" or a default death; and on one
machine no line may tell it to wait for a holder (a dead one is released at once).
"""

from __future__ import annotations

import json
import os
import random
import re
import shlex
import signal
import sqlite3
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from helpers.procs import alive
from helpers.reports import results_only

from campaign.store import repository
from campaign.store.engine import make_engine, resolve_url
from campaign.supervise.cgroup import AttemptCgroup, attempt_cgroup_name

PROGRAM = shlex.join([sys.executable, "-m", "campaign"])
HOOK = "CAMPAIGN_TEST_STOP_AT"
FINISHED = "every scheduled trial has a result"
KEPT = re.compile(r"attempt (\d+) kept (\S+): inspect it")


class DeadEnd(AssertionError):
    """The printed lines do not finish the experiment."""


@dataclass(frozen=True)
class Disruption:
    """How one run is disrupted: at a hook boundary (``at`` = BOUNDARY[:N][:SIGNAL]), or
    by ``sig`` sent from outside ``after`` seconds into the run."""

    at: str | None = None
    sig: int | None = None
    after: float = 0.0

    def __str__(self) -> str:
        return self.at or f"{signal.Signals(self.sig).name}@{self.after:.2f}s"


@dataclass
class Run:
    argv: list[str]
    returncode: int
    stdout: str
    stderr: str
    disruption: Disruption | None = None

    @property
    def output(self) -> str:
        return self.stdout + self.stderr

    def commands(self) -> list[str]:
        """Every command line the output names, in the order printed."""
        return [line[line.index(PROGRAM) :] for line in self.output.splitlines() if PROGRAM in line]

    @property
    def finished(self) -> bool:
        return self.returncode == 0 and FINISHED in self.stdout


@dataclass
class Operator:
    env: dict[str, str]
    limit: int = 14  # commands run after the first before the lines count as going round
    # A stop signal sent from outside may land before the interpreter could install any
    # handler; the benchmark counts those (``early_deaths``) and reruns, the tests never send one.
    tolerate_early_deaths: bool = False
    runs: list[Run] = field(default_factory=list)
    kept: dict[str, int] = field(default_factory=dict)  # path -> times named
    early_deaths: int = 0

    def run(self, argv: list[str], disruption: Disruption | None = None, timeout: float = 300) -> Run:
        env = dict(self.env)
        env.pop(HOOK, None)
        if disruption is not None and disruption.at:
            env[HOOK] = disruption.at
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if disruption is not None and disruption.sig is not None:
            try:
                proc.wait(timeout=disruption.after)
            except subprocess.TimeoutExpired:
                proc.send_signal(disruption.sig)
        out, err = proc.communicate(timeout=timeout)
        done = Run(argv, proc.returncode, out, err, disruption)
        self.runs.append(done)
        self._check(done)
        return done

    def early_death(self, run: Run) -> bool:
        """Killed by a stop signal's default action before ``campaign.cli.main`` installed
        its handlers: nothing printed, or Python's own KeyboardInterrupt from start-up."""
        quiet = not run.output or run.output.rstrip().endswith("KeyboardInterrupt")
        return self.tolerate_early_deaths and run.returncode in (-signal.SIGTERM, -signal.SIGINT, -signal.SIGHUP, -signal.SIGQUIT) and quiet

    def _check(self, run: Run) -> None:
        if self.early_death(run):
            return
        assert "Traceback" not in run.output and "Aborted!" not in run.output, self.story()
        for _attempt, path in KEPT.findall(run.output):
            assert os.path.isdir(path), f"claimed as kept but not there: {path}\n{self.story()}"
            self.kept[path] = self.kept.get(path, 0) + 1
        if run.returncode == 130:
            assert "to continue, run:" in run.stderr, self.story()
        # One machine, one runner at a time: nothing it left behind is worth waiting for.
        assert "Next: wait" not in run.output, f"told to wait for a holder on this machine\n{self.story()}"

    def follow(self, first: list[str], disruptions: list[Disruption]) -> Run:
        """Run ``first`` under the disruptions (one per run, in order), then follow the lines."""
        pending = list(disruptions)
        current = first
        last: Run | None = None
        for _ in range(self.limit + len(disruptions)):
            last = self.run(current, pending.pop(0) if pending else None)
            if last.finished:
                return last
            if last.returncode == -signal.SIGKILL:
                continue  # nothing printed: the operator runs what they ran again
            if self.early_death(last):
                self.early_deaths += 1
                continue
            if last.returncode < 0:
                raise DeadEnd(f"a stop signal killed the runner ({last.returncode}) instead of ending it with 130\n{self.story()}")
            steps = last.commands()
            if not steps:
                raise DeadEnd(f"exit {last.returncode} and no command to run\n{self.story()}")
            for step in steps[:-1]:
                self.run(shlex.split(step))
            current = shlex.split(steps[-1])
        raise DeadEnd(f"not finished after {len(self.runs)} commands\n{self.story()}")

    def story(self) -> str:
        lines = []
        for r in self.runs:
            lines.append(f"$ {shlex.join(r.argv)}   [{r.disruption or 'undisturbed'}] -> {r.returncode}")
            lines += [f"    {line}" for line in r.output.splitlines() if not line.startswith("progress:")][-25:]
        return "\n".join(lines)


def main_job(out: Path, tasks: str, repetitions: int) -> list[str]:
    """The README's main-job command (the offline provider), at a given size."""
    return [sys.executable, "-m", "campaign", "coding", "--campaign", "--providers", "offline", "--tasks", tasks, "--repetitions", str(repetitions), "--live", "--resume", "--output-dir", str(out)]


def operator_in(root: Path, **options) -> Operator:
    """An operator whose runner's TMPDIR, where private roots land, is ``root/runner-tmp``."""
    tmp = root / "runner-tmp"
    tmp.mkdir(parents=True, exist_ok=True)
    return Operator(env={**os.environ, "TMPDIR": str(tmp)}, **options)


SIGNALS = [signal.SIGKILL, signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT]
ATTEMPT_BOUNDARIES = ["admitted", "attempt-row", "contained", "ledger", "client", "verifier", "teardown", "finalized", "between"]


def random_disruption(rng: random.Random, *, attempts: int, cgroup: bool, wall: float = 0.0, instant_share: float = 0.0) -> Disruption:
    """A SIGKILL mostly (6 in 10), else a stop signal: with ``instant_share`` from outside at a
    random instant of a ``wall``-second run, otherwise at a random boundary of a random
    attempt. Without a cgroup, an attempt killed after its first spawn cannot be proven
    clean (by design), so those boundaries are left out there."""
    sig = rng.choices(SIGNALS, weights=[6, 1, 1, 1, 1])[0]
    if rng.random() < instant_share:
        return Disruption(sig=sig, after=rng.uniform(0.0, wall))
    boundaries = [b for b in ATTEMPT_BOUNDARIES if cgroup or b not in ("ledger", "client", "verifier")]
    boundary = rng.choice([*boundaries, "start", "leased", "last", "exit"])
    n = rng.randint(1, 2 * attempts if boundary == "ledger" else attempts) if boundary in ATTEMPT_BOUNDARIES else 1
    return Disruption(at=f"{boundary}:{n}:{signal.Signals(sig).name.removeprefix('SIG')}")


def leftover_roots(tmp: Path) -> set[str]:
    return {str(p) for p in tmp.glob("campaign-paired-runtime-*") if p.is_dir()}


def experiment_problems(op: Operator, out: Path, runner_tmp: Path, straight: dict, trials: int) -> list[str]:
    """What is wrong with a finished experiment, compared with the uninterrupted run's
    report: results, one verdict per trial across the lineage, the hash chains, surviving
    processes, attempt cgroups left, and private roots left on disk but never named."""
    problems = []
    if results_only(json.loads((out / "report.json").read_text())) != results_only(straight):
        problems.append("the report differs from the uninterrupted run's")
    db = out / "campaign.db"
    with sqlite3.connect(db) as conn:
        (last,) = conn.execute("SELECT max(id) FROM campaigns").fetchone()
        # Each trial of the last campaign holds one verdict: its own finished attempt, or the one it carries.
        verdicts = conn.execute(
            "SELECT count(a.id) FROM trials t JOIN attempts a ON a.trial_pk = coalesce(t.carried_from_trial_pk, t.id) AND a.status = 'finished'"
            " WHERE t.campaign_id = ? GROUP BY t.trial_id",
            (last,),
        ).fetchall()
        members = conn.execute("SELECT pid, start_ticks FROM ledger").fetchall()
    if sorted(n for (n,) in verdicts) != [1] * trials:
        problems.append(f"verdicts per trial: {sorted(n for (n,) in verdicts)}")
    verify = subprocess.run([sys.executable, "-m", "campaign", "verify", "--db", str(db)], capture_output=True, text=True)
    if verify.returncode != 0:
        problems.append(f"campaign verify: {verify.stdout.strip()}")
    survivors = [m for m in members if alive(*m)]
    if survivors:
        problems.append(f"processes of attempts still alive: {survivors}")
    engine = make_engine(resolve_url(str(db)))
    try:
        attempts = [a for cid in repository.lineage(engine, last) for a in repository.attempts_for(engine, cid)]
    finally:
        engine.dispose()
    cgroups = [a.id for a in attempts if AttemptCgroup.locate(attempt_cgroup_name(a.id, a.campaign_id, a.started_at)) is not None]
    if cgroups:
        problems.append(f"attempt cgroups left: {cgroups}")
    unnamed = leftover_roots(runner_tmp) - set(op.kept)
    if unnamed:
        problems.append(f"private roots kept but never named: {sorted(unnamed)}")
    return problems
