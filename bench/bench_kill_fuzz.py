"""Kill fuzzing (issue 27): the main job disrupted at random, then the printed lines followed literally.

Each round runs the offline main job (``python -m campaign coding --campaign
--providers offline --tasks T --repetitions R --live --resume --output-dir
DIR``, a fresh DIR and TMPDIR per round) and disrupts up to ``--max-kills``
(3) of its runs, each disruption drawn from the round's seeded generator:

- ``instant`` (``--instant-share``, 0.7): a signal sent from outside at a
  random instant, uniform over the uninterrupted run's wall time measured at
  the start of this run: SIGKILL (weight 6), SIGTERM, SIGINT, SIGHUP, SIGQUIT
  (1 each), as an operator or a crash would;
- otherwise the same signals at a random step boundary of a random attempt,
  by the engine's test hook (``CAMPAIGN_TEST_STOP_AT``, campaign.testhooks).

Then an operator (tests/helpers/literal.py) follows the printed lines
literally until a command says every trial has a result. Per round it checks
what the tests check: the report equals the uninterrupted run's (wall times,
ids, run order, interrupted attempts and carried trials aside), one verdict
per trial across the continuation lineage, ``campaign verify`` passes, no
process of any attempt is alive, no attempt cgroup is left, every private root
left on disk was named, no named root was missing, no traceback or "Aborted!",
every stop signal ended in exit 130 with the line to continue.

Printed: rounds, disruptions by kind, exits, dead ends (the lines did not
finish the experiment), failed checks, commands per round, and the wall time
per round as a ratio to the uninterrupted run measured in the same run. A stop
signal that lands before the interpreter could install any handler (its first
few milliseconds) kills the process by default; such "early deaths" are
counted, and the operator reruns what it ran.

    python bench/bench_kill_fuzz.py [--rounds 30] [--seed 27] [--tasks a,b,c] [--repetitions 2]
                                    [--max-kills 3] [--instant-share 0.7]

A benchmark script, not a test: it asserts nothing, spends nothing and makes no network calls.
It shares the tests' operator (tests/helpers), so run it with the test environment's
Python (``.venv-test/bin/python``).
"""

from __future__ import annotations

import argparse
import collections
import json
import random
import signal
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from helpers.literal import DeadEnd, experiment_problems, main_job, operator_in, random_disruption  # noqa: E402
from helpers.procs import containment_modes  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--seed", type=int, default=27)
    parser.add_argument("--tasks", default="semver-precedence,invoice-rounding,unit-table-regen")
    parser.add_argument("--repetitions", type=int, default=2)
    parser.add_argument("--max-kills", type=int, default=3)
    parser.add_argument("--instant-share", type=float, default=0.7)
    args = parser.parse_args()
    trials = len(args.tasks.split(",")) * 2 * args.repetitions
    cgroup = "cgroup2" in containment_modes()

    with tempfile.TemporaryDirectory(prefix="bench-kill-fuzz-") as scratch:
        base = Path(scratch)
        t0 = time.monotonic()
        straight_out = base / "straight" / "out"
        done = operator_in(straight_out.parent).run(main_job(straight_out, args.tasks, args.repetitions))
        wall = time.monotonic() - t0
        if not done.finished:
            raise SystemExit(f"the uninterrupted run did not finish:\n{done.output}")
        straight = json.loads((straight_out / "report.json").read_text())

        counts: collections.Counter[str] = collections.Counter()
        failures: list[str] = []
        seconds: list[float] = []
        commands: list[int] = []
        for n in range(args.rounds):
            rng = random.Random(args.seed * 1000 + n)
            disruptions = [random_disruption(rng, attempts=trials, cgroup=cgroup, wall=wall, instant_share=args.instant_share) for _ in range(rng.randint(1, args.max_kills))]
            root = base / f"round-{n}"
            out = root / "out"
            op = operator_in(root, tolerate_early_deaths=True)
            start = time.monotonic()
            try:
                op.follow(main_job(out, args.tasks, args.repetitions), disruptions)
                problems = experiment_problems(op, out, root / "runner-tmp", straight, trials)
            except DeadEnd as exc:
                counts["dead ends"] += 1
                problems = [f"dead end: {str(exc).splitlines()[0]}"]
            except AssertionError as exc:  # a traceback, a missing root, a stop without its line
                problems = [f"check: {str(exc).splitlines()[0]}"]
            seconds.append(time.monotonic() - start)
            commands.append(len(op.runs))
            counts["early deaths"] += op.early_deaths
            for r in op.runs:
                if r.disruption is not None:
                    kind = "hook" if r.disruption.at else "instant"
                    sig = r.disruption.at.rsplit(":", 1)[-1] if r.disruption.at else signal.Signals(r.disruption.sig).name.removeprefix("SIG")
                    counts[f"{kind} {sig}"] += 1
                counts[f"exit {r.returncode}"] += 1
            counts["kept roots named"] += len(op.kept)
            if problems:
                failures.append(f"round {n} ({', '.join(map(str, disruptions))}): {'; '.join(problems)}")
            print(f"round {n:2d}: {', '.join(map(str, disruptions)):60s} {len(op.runs):2d} commands {seconds[-1]:6.1f} s  {'OK' if not problems else 'FAIL'}", flush=True)

    print()
    print(f"experiment: {args.tasks} x {args.repetitions} repetitions = {trials} trials; containment {'cgroup2' if cgroup else 'subreaper-pidfd'}")
    print(f"uninterrupted run (same-run baseline): {wall:.1f} s")
    print(f"rounds: {args.rounds}; finished with every check passing: {args.rounds - len(failures)}; dead ends: {counts['dead ends']}")
    print("disruptions sent (an instant after the run ended lands nowhere): " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()) if k.startswith(("hook", "instant"))))
    print("exits: " + ", ".join(f"{k.removeprefix('exit ')}: {v}" for k, v in sorted(counts.items()) if k.startswith("exit ")))
    print(f"early deaths (a stop before any handler could exist): {counts['early deaths']}; kept roots named: {counts['kept roots named']}")
    print(f"commands per round: mean {sum(commands) / len(commands):.1f}, max {max(commands)}")
    print(f"wall per round: mean {sum(seconds) / len(seconds):.1f} s = {sum(seconds) / len(seconds) / wall:.2f}x the uninterrupted run")
    for line in failures:
        print(f"FAILED {line}")


if __name__ == "__main__":
    main()
