"""What the wire adds to an attempt: a campaign of the offline agent through the recording
proxy (``offline-wire``: a replay provider and a proxy per attempt) against the same
campaign off the wire (``offline``), same run.

Each round runs the same small campaign (two tasks, two repetitions: 8 attempts, one
at a time) once each way, alternating, so machine noise falls on both alike; prints
the medians of wall and CPU seconds and the wire's added seconds per attempt. The
wire's share is what every live run pays per attempt before its client's own time
(its replay and proxy boot, the proxy's flush on stop, the capture read).

    python bench/bench_wire_attempt.py [--runs 3]

A benchmark script, not a test: it asserts nothing and makes no network calls.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from campaign.profiler.tokenizer import prepare_cache

TASKS = "semver-precedence,invoice-rounding"
ATTEMPTS = 8  # two tasks x two variants x two repetitions


def campaign(agent: str, where: Path, env: dict[str, str]) -> tuple[float, float]:
    """(wall, CPU of the run and everything it started) seconds of one campaign."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "campaign", "coding", "--campaign", "--providers", "offline", "--agent", agent, "--tasks", TASKS,
         "--repetitions", "2", "--live", "--output-dir", str(where)],
        env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="timed rounds of each; the median is printed")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-wire-"))
    env = {**os.environ, "CAMPAIGN_TOKENIZER_CACHE": str(prepare_cache(tmp / "cache").parent)}
    figures: dict[str, list[tuple[float, float]]] = {"offline": [], "offline-wire": []}
    try:
        for agent in figures:  # warm-up: page cache, the schema-token memo
            campaign(agent, Path(tempfile.mkdtemp(dir=tmp)), env)
        for _ in range(args.runs):
            for agent, rows in figures.items():
                rows.append(campaign(agent, Path(tempfile.mkdtemp(dir=tmp)), env))
    finally:
        if os.environ.get("KEEP_BENCH_TMP") is None:
            shutil.rmtree(tmp, ignore_errors=True)
    medians = {agent: (statistics.median(w for w, _ in rows), statistics.median(c for _, c in rows)) for agent, rows in figures.items()}
    for agent, (wall, cpu) in medians.items():
        print(f"{agent:12s} {ATTEMPTS} attempts: wall {wall:.2f} s, CPU {cpu:.2f} s (median of {args.runs})")
    (w0, c0), (w1, c1) = medians["offline"], medians["offline-wire"]
    print(f"wire/off: wall {w1 / w0:.2f}x, CPU {c1 / c0:.2f}x; the wire adds {(w1 - w0) / ATTEMPTS:.2f} s wall and {(c1 - c0) / ATTEMPTS:.2f} s CPU per attempt")


if __name__ == "__main__":
    main()
