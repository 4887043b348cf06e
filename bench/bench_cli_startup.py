"""Benchmark: how fast `campaign` starts, against a bare `python -c "import click"`.

Any click command line pays for the interpreter and click before it prints a
line; that is the floor. This times each command below as a fresh process and
prints the median seconds and its ratio to the floor's median. The floor and
every command are run in rounds, one of each per round after one warm-up round
(so the page cache holds the modules), so a burst of load on this noisy machine
falls on all of them alike; only the ratio means anything. Targets (issue 52):
`campaign --help`, `campaign sql --help` and `campaign report --help` under 3x,
`campaign tasks list` under 5x.

    python bench/bench_cli_startup.py [--runs 9]

A benchmark script, not a test: it asserts nothing and makes no network calls.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CAMPAIGN = [sys.executable, "-m", "campaign"]
FLOOR = "python -c 'import click' (floor)"


def seconds(argv: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9, help="timed rounds; the median of each is printed")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "campaign.db"
        # Every store and task-check record of this run lives in tmp, never the operator's.
        env = {**os.environ, "XDG_DATA_HOME": tmp, "CAMPAIGN_TASK_CHECKS": tmp}
        subprocess.run([*CAMPAIGN, "db", "upgrade", "--db", str(store)], env=env, check=True, stdout=subprocess.DEVNULL)
        commands = {
            FLOOR: [sys.executable, "-c", "import click"],
            "campaign --help": [*CAMPAIGN, "--help"],
            "campaign tasks list": [*CAMPAIGN, "tasks", "list"],
            "campaign sql --help": [*CAMPAIGN, "sql", "--help"],
            "campaign report --help": [*CAMPAIGN, "report", "--help"],
            "campaign sql 'SELECT count(*) FROM trials'": [*CAMPAIGN, "sql", "SELECT count(*) FROM trials", "--db", str(store)],
            "campaign coding --help": [*CAMPAIGN, "coding", "--help"],
        }
        times: dict[str, list[float]] = {label: [] for label in commands}
        for round_ in range(args.runs + 1):
            for label, argv in commands.items():
                took = seconds(argv, env)
                if round_:  # round 0 warms the page cache
                    times[label].append(took)
        floor = statistics.median(times[FLOOR])
        print(f"median of {args.runs} runs each, interleaved")
        for label, taken in times.items():
            median = statistics.median(taken)
            print(f"{label:<46} {median:7.3f} s {median / floor:6.2f}x")


if __name__ == "__main__":
    main()
