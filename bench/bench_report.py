"""Benchmark: the report generator on a store of 100,000 attempt rows over 500 tasks.

Generates a migrated SQLite store holding one campaign of 500 tasks x 100
repetitions x 2 variants (100,000 attempted trials; some wall times, costs and
spend flags missing, some tool errors, diagnostics on half the rows), written
with bulk inserts. Then it times, best of N each:

- baseline: ``SELECT count(*), sum(cost_usd) FROM attempts`` plus reading every
  attempt row with the plain ``sqlite3`` module (the cheapest possible full read);
- ``build_report``: SQL aggregates, the per-trial rows through the allowlist
  schema, the paired differences and the 2,000-resample bootstrap;
- rendering and writing the JSON, Markdown and SVG;
- the bootstrap alone (500 clusters x 2,000 resamples);

and prints each as seconds and as a ratio to the baseline.

    python bench/bench_report.py [--tasks 500] [--repetitions 100] [--runs 3] [--keep DIR]

A benchmark script, not a test: it asserts nothing and makes no network calls.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import shutil
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from campaign.report import build_report, render
from campaign.report import stats as report_stats
from campaign.report.export import write_report
from campaign.store.engine import make_engine, resolve_url
from campaign.store.migrate import upgrade_engine

T0 = "2026-01-01 00:00:00.000000"
DIGEST = "ab" * 32


def generate(db: Path, tasks: int, repetitions: int, seed: int = 500) -> int:
    engine = make_engine(resolve_url(str(db)))
    upgrade_engine(engine)
    engine.dispose()
    rng = random.Random(seed)
    names = [f"task-{i:03d}" for i in range(tasks)]
    experiment = {"tasks": names, "model": "offline:sim", "repetitions": repetitions, "seed": 107, "agent": "claude-code"}
    conn = sqlite3.connect(db)
    try:
        with conn:
            cur = conn.execute(
                "INSERT INTO campaigns (kind, state, live, stop_reason, agent, seed, experiment_json, experiment_digest, plan_digest,"
                " approved_plan_digest, scheduled_count, created_at) VALUES ('paired', 'completed', 1, 'completed', 'claude-code', 107, ?, ?, ?, ?, ?, ?)",
                (json.dumps(experiment), DIGEST, DIGEST, DIGEST, tasks * repetitions * 2, T0),
            )
            campaign_id = cur.lastrowid
            trial_rows = []
            for rep in range(1, repetitions + 1):
                for task in names:
                    pair = f"{task}/r{rep}"
                    order = ("baseline", "coding") if rep % 2 else ("coding", "baseline")
                    for k, variant in enumerate(order):
                        trial_rows.append((campaign_id, pair, f"{pair}/{variant}", "openai-codex", "openai-codex:gpt-6.1-sol", task, variant, rep, k, len(trial_rows), "finished", T0))
            conn.executemany(
                "INSERT INTO trials (campaign_id, pair_id, trial_id, provider, model, task, variant, repetition, pair_order, position, status, updated_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                trial_rows,
            )
            pks = conn.execute("SELECT id, variant FROM trials WHERE campaign_id = ? ORDER BY position", (campaign_id,)).fetchall()
            diagnostics = json.dumps({"catalog_digests": [DIGEST], "request_count": 4, "disclosure_measurements": {"profile": "coding", "estimated_tokens": 900}})
            attempt_rows = []
            for seq, (pk, variant) in enumerate(pks, start=1):
                passed = rng.random() < (0.62 if variant == "coding" else 0.58)
                tool_errors = None if rng.random() < 0.05 else rng.randint(0, 2)
                attempt_rows.append(
                    (
                        campaign_id, pk, seq, "finished", T0, T0, "passed" if passed else "failed", None if passed else "verifier_failed", passed, 0 if passed else 1,
                        None if rng.random() < 0.03 else rng.uniform(30, 600),
                        rng.randint(1, 12), rng.randint(1000, 90000), rng.randint(0, 50000), rng.randint(0, 2000), rng.randint(100, 9000), rng.randint(1, 40), tool_errors,
                        1, rng.randint(0, 2), rng.randint(0, 2),
                        None if rng.random() < 0.01 else rng.uniform(0.01, 0.9), True, rng.random() > 0.02, True, True, True, False, "clean",
                        DIGEST, DIGEST, "gpt-6.1-sol", json.dumps(["legacy" if variant == "baseline" else "coding"]), diagnostics if seq % 2 else None,
                        f"/tmp/campaign-paired-runtime-{seq}",
                    )
                )
            conn.executemany(
                "INSERT INTO attempts (campaign_id, trial_pk, seq, status, started_at, ended_at, outcome, failure_class, verified_pass, verifier_exit_code,"
                " wall_seconds, completed_turns, uncached_input_tokens, cached_input_tokens, cache_write_tokens, output_tokens, tool_calls, tool_errors,"
                " diagnostic_events_version, discovery_failures, incorrect_tool_calls, cost_usd, cost_reported, spend_complete, flush_complete,"
                " cleanup_complete, disposal_complete, finalization_failed, teardown_outcome, config_digest, fixture_digest, agent_model,"
                " applied_profiles, schema_diagnostics, private_root)"
                " VALUES (" + ", ".join("?" * 35) + ")",
                attempt_rows,
            )
    finally:
        conn.close()
    return int(campaign_id)


def best_of(runs: int, fn) -> float:
    fn()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=500)
    parser.add_argument("--repetitions", type=int, default=100)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--keep", type=Path, help="Build the store here and keep it.")
    args = parser.parse_args(argv)

    workdir = args.keep or Path(tempfile.mkdtemp(prefix="campaign-bench-report-"))
    workdir.mkdir(parents=True, exist_ok=True)
    db = workdir / "bench.db"
    try:
        start = time.perf_counter()
        campaign_id = generate(db, args.tasks, args.repetitions)
        generated = time.perf_counter() - start

        def baseline() -> None:
            conn = sqlite3.connect(db)
            try:
                conn.execute("SELECT count(*), sum(cost_usd) FROM attempts").fetchone()
                conn.execute("SELECT * FROM attempts").fetchall()
            finally:
                conn.close()

        engine = make_engine(resolve_url(str(db)))
        try:
            with sqlite3.connect(db) as conn:
                n_attempts = conn.execute("SELECT count(*) FROM attempts").fetchone()[0]
            report = build_report(engine, campaign_id)
            base = best_of(args.runs, baseline)
            build = best_of(args.runs, lambda: build_report(engine, campaign_id))
            rendering = best_of(args.runs, lambda: render(report, "bench.svg"))
            written = best_of(args.runs, lambda: write_report(engine, campaign_id, workdir / "bench.json"))
            means = np.random.default_rng(0).normal(size=args.tasks)
            boot = best_of(args.runs, lambda: report_stats.summarize(means, 107, empty_reason="no_complete_pairs"))
        finally:
            engine.dispose()
        size = (workdir / "bench.json").stat().st_size
        print(f"store: {n_attempts:,} attempt rows, {args.tasks} tasks, generated in {generated:.1f} s ({dt.date.today()})")
        print(f"baseline  (count+sum, read all attempt rows with sqlite3): {base:8.3f} s  1.00x")
        print(f"build_report (SQL aggregates + allowlisted trials + bootstrap): {build:8.3f} s  {build / base:5.2f}x")
        print(f"render JSON + Markdown + SVG (in memory):                {rendering:8.3f} s  {rendering / base:5.2f}x")
        print(f"campaign report end to end (build + render + write):     {written:8.3f} s  {written / base:5.2f}x  (JSON {size / 1e6:.0f} MB)")
        print(f"bootstrap alone ({args.tasks} clusters x {report_stats.RESAMPLES} resamples):         {boot * 1000:8.1f} ms")
        print(f"report: success difference {report['paired_differences']['verified_success']['estimate']:+.4f} "
              f"[{report['paired_differences']['verified_success']['ci_low']:+.4f}, {report['paired_differences']['verified_success']['ci_high']:+.4f}]")
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
