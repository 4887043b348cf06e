"""Benchmark: the planner (`campaign power`) on a pilot of 500 tasks x 10 repetitions.

Generates a migrated SQLite store holding one paired campaign of 500 tasks x 10
repetitions x 2 variants (10,000 trials, with bench_report's generator: its rows,
its missing values, its interrupted attempts), then times, best of N each:

- baseline: one report interval, the bootstrap of 500 task clusters x 2,000
  resamples (``stats.summarize``): the unit of work the planner repeats;
- reading the pilot from the store (its pairs and its attempts' costs);
- the plan itself: fitting the spread, then 1,000 simulated campaigns through the
  report's interval for each of 1 to 10 repetitions, and the spend forecast;
- the report's smallest detectable effect at the run's own size (one row's work);
- ``campaign power`` end to end, as a separate process (interpreter start and imports
  included): the figure the issue bounds at 5 s;

and prints each as seconds and as a ratio to the baseline.

    python bench/bench_power.py [--tasks 500] [--repetitions 10] [--runs 3] [--keep DIR]

A benchmark script, not a test: it asserts nothing and makes no network calls.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from bench_report import best_of, generate

from campaign.power import forecast, planner
from campaign.power.pilot import read_pilot
from campaign.report import detectable, spread, stats
from campaign.store.engine import make_engine, resolve_url


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=500)
    parser.add_argument("--repetitions", type=int, default=10)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--keep", type=Path, help="Build the store here and keep it (reused when it already holds one).")
    args = parser.parse_args(argv)
    with contextlib.ExitStack() as stack:
        where = args.keep or Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="campaign-bench-power-")))
        where.mkdir(parents=True, exist_ok=True)
        measure(where / "pilot.db", args.tasks, args.repetitions, args.runs)
    return 0


def measure(db: Path, tasks: int, repetitions: int, runs: int) -> None:
    began = time.perf_counter()
    made = "reused" if db.exists() else None
    if made is None:
        generate(db, tasks, repetitions)
        made = f"generated in {time.perf_counter() - began:.1f} s"
    engine = make_engine(resolve_url(str(db)))
    try:
        pilot = read_pilot(engine, 1)
        request = planner.Request(repetitions=tuple(range(1, 11)), tasks=len(pilot.tasks), providers=1, seed=107, target=planner.Target(effect=0.05))
        means = np.random.default_rng(0).normal(size=tasks)
        base = best_of(runs, lambda: stats.summarize(means, 107, empty_reason="no_complete_pairs"))
        read = best_of(runs, lambda: read_pilot(engine, 1))
        plan = best_of(runs, lambda: planner.plan(spread.fit(pilot.tasks), forecast.cost_model(pilot.cells), request))
        own = best_of(runs, lambda: detectable.at_run_size(pilot.tasks, 107))
    finally:
        engine.dispose()
    command = [sys.executable, "-m", "campaign", "power", "--campaign", "1", "--effect", "0.05", "--db", str(db)]
    cli = best_of(runs, lambda: subprocess.run(command, check=True, capture_output=True))
    result = planner.plan(spread.fit(pilot.tasks), forecast.cost_model(pilot.cells), request)
    print(f"pilot: {pilot.pairs:,} complete pairs over {len(pilot.tasks)} tasks, {made} ({dt.date.today()})")
    print(f"baseline  (one report interval: {tasks} clusters x {stats.RESAMPLES} resamples): {base:8.3f} s     1.0x")
    print(f"read the pilot from the store (pairs + attempt costs):        {read:8.3f} s  {read / base:6.1f}x")
    print(f"plan: 10 rows x {planner.DEFAULT_SIMULATIONS} simulated campaigns + spend forecast:      {plan:8.3f} s  {plan / base:6.1f}x")
    print(f"report's detectable effect at the run's size (one row):      {own:8.3f} s  {own / base:6.1f}x")
    print(f"campaign power end to end (a process, imports included):     {cli:8.3f} s  {cli / base:6.1f}x")
    smallest = result.smallest
    print(f"plan: +0.05 detected with power 0.8 at {smallest.repetitions if smallest else 'no'} repetitions; half-width at 10: {result.rows[-1].half_width:.4f}")


if __name__ == "__main__":
    sys.exit(main())
