"""Benchmark: the report generator on a store of 100,000 attempted trials over 500 tasks.

Generates a migrated SQLite store holding one campaign of 500 tasks x 100
repetitions x 2 variants (100,000 trials, each with one finished attempt; some
wall times, costs and spend flags missing, some tool errors, diagnostics on
half the rows), plus ``--interrupted`` (default 1%) of the trials with an extra
interrupted attempt before their finished one, written with bulk inserts and
sealed into the hash chain exactly as the engine seals them. Then it times,
best of N each:

- baseline: ``SELECT count(*), sum(cost_usd) FROM attempts`` plus reading every
  attempt row with the plain ``sqlite3`` module (the cheapest possible full read);
- the floor of any report written in this format with its chain checked: the same
  read in seq order plus the trials, each row's chain payload hashed, one JSON
  object per attempt encoded by orjson and written, and nothing else (no pairing,
  no allowlist, no counts, no statistics);
- ``build_report`` without the chain verification: SQL aggregates, the
  per-trial rows through the allowlist schema, the paired differences and the
  2,000-resample bootstrap;
- the chain verification every report runs (``campaign verify`` of the campaign);
- rendering the JSON, Markdown and SVG in memory;
- ``campaign report`` end to end (verify + build + write) and ``campaign
  export`` end to end (the same plus the allowlist re-check), as the CLI runs
  them: a process without threads, so the aggregates and the simulations run in a
  forked child (``store.snapshot.Readers.apart``) while this one reads, checks and
  cleans every row;
- the bootstrap alone (500 clusters x 2,000 resamples);
- a ``campaign view`` refresh of the campaign's page (its chain verified once before,
  as the view does per chain head, and the first page of its trial table rendered),
  from a worker thread as the view serves it (so no forked children): with the
  store unchanged (the view keeps the report it built), after a change (the
  report rebuilt), and after the chain head moved, as it does with every attempt of
  a running campaign (the rows verified too: by the report's own check, one read);
  after a change as `campaign view` serves a page (it waits ``PAGE_PATIENCE_S`` for
  the newer report, then shows the older one, marked, while the newer one builds);
  and the JSON endpoint (the whole report) with the store unchanged;

and prints each as seconds and as a ratio to the baseline.

    python bench/bench_report.py [--tasks 500] [--repetitions 100] [--runs 3] [--keep DIR] [--chain-format 2]

``--chain-format 1`` seals the rows as the engine did before chain format 2, to
time a store written then (its chain is verified the slower way, format 1).

A benchmark script, not a test: it asserts nothing and makes no network calls.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import operator
import random
import shutil
import sqlite3
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import orjson

from campaign.canonical import spec_digest
from campaign.report import build_report, export_report, render, write_report
from campaign.report import stats as report_stats
from campaign.report.integrity import NOT_CHECKED
from campaign.schedule import build_schedule
from campaign.store import chain
from campaign.store.engine import make_engine, resolve_url
from campaign.store.migrate import upgrade_engine
from campaign.view import pages, snapshot, source, trials
from campaign.view.app import PAGE_PATIENCE_S

T0 = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
T0_TEXT = "2026-01-01 00:00:00.000000"
DIGEST = "ab" * 32

# Attempt columns in insert order; the chain hashes chain.HASHED_COLUMNS of them.
_COLUMNS = (
    "campaign_id", "trial_pk", "seq", "status", "started_at", "ended_at", "outcome", "failure_class", "verified_pass", "verifier_exit_code",
    "wall_seconds", "completed_turns", "uncached_input_tokens", "cached_input_tokens", "cache_write_tokens", "output_tokens", "tool_calls", "tool_errors",
    "diagnostic_events_version", "discovery_failures", "incorrect_tool_calls", "cost_usd", "cost_reported", "equivalent_spend_usd", "spend_complete",
    "flush_complete", "cleanup_complete", "disposal_complete", "finalization_failed", "teardown_outcome", "containment", "config_digest", "fixture_digest",
    "agent_model", "applied_profiles", "schema_diagnostics", "private_root", "prev_hash", "row_hash",
)  # fmt: skip


def generate(db: Path, tasks: int, repetitions: int, *, interrupted: float = 0.01, seed: int = 500, chain_format: int = 2) -> int:
    engine = make_engine(resolve_url(str(db)))
    upgrade_engine(engine)
    engine.dispose()
    rng = random.Random(seed)
    names = [f"task-{i:03d}" for i in range(tasks)]
    # What the paired lane stores: the experiment, its digest (the chain's genesis) and the
    # schedule it rebuilds, so verification checks the trial rows as it does a real store's.
    experiment = {
        "tasks": names, "model": "openai-codex:gpt-6.1-sol", "repetitions": repetitions, "seed": 107, "agent": "claude-code",
        "variants": [{"name": "baseline"}, {"name": "coding"}],
    }  # fmt: skip
    genesis = spec_digest(experiment)
    schedule = build_schedule(names, repetitions, 107)
    conn = sqlite3.connect(db)
    try:
        with conn:
            cur = conn.execute(
                "INSERT INTO campaigns (kind, state, live, stop_reason, agent, seed, experiment_json, experiment_digest, plan_digest,"
                " approved_plan_digest, scheduled_count, created_at) VALUES ('paired', 'completed', 1, NULL, 'claude-code', 107, ?, ?, ?, ?, ?, ?)",
                (json.dumps(experiment, sort_keys=True), genesis, DIGEST, DIGEST, len(schedule), T0_TEXT),
            )
            campaign_id = cur.lastrowid
            trial_rows = [
                (campaign_id, t.pair_id, t.trial_id, "openai-codex", experiment["model"], t.task, t.variant, t.repetition, t.pair_order, t.position, "finished", T0_TEXT)
                for t in schedule
            ]
            conn.executemany(
                "INSERT INTO trials (campaign_id, pair_id, trial_id, provider, model, task, variant, repetition, pair_order, position, status, updated_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                trial_rows,
            )
            pks = conn.execute("SELECT id, variant FROM trials WHERE campaign_id = ? ORDER BY position", (campaign_id,)).fetchall()
            rows: list[dict] = []
            for pk, variant in pks:
                if rng.random() < interrupted:
                    rows.append(_interrupted(rng, campaign_id, pk, len(rows) + 1))
                rows.append(_finished(rng, campaign_id, pk, len(rows) + 1, variant))
            prev = genesis
            for row in rows:
                row["prev_hash"] = prev
                row["row_hash"] = prev = _sealed(prev, row, chain_format)
            conn.executemany(
                f"INSERT INTO attempts ({', '.join(_COLUMNS)}) VALUES ({', '.join('?' * len(_COLUMNS))})",
                [tuple(T0_TEXT if c in ("started_at", "ended_at") else row[c] for c in _COLUMNS) for row in rows],
            )
    finally:
        conn.close()
    return int(campaign_id)


def _sealed(prev: str, row: dict, chain_format: int) -> str:
    """The row_hash the engine gives the row: format 2 (this engine), or format 1 (a store
    written before format 2, to time how an old store verifies)."""
    if chain_format == 1:
        hashed = {name: row[name] for name in chain.HASHED_COLUMNS}
        hashed["started_at"] = hashed["ended_at"] = T0
        return chain.compute_hash(prev, chain.canonical_row(hashed))
    return chain.row_digest((prev, *(chain.stored_form(row[name]) for name in chain.HASHED_COLUMNS)))


def _finished(rng: random.Random, campaign_id: int, pk: int, seq: int, variant: str) -> dict:
    passed = rng.random() < (0.62 if variant == "coding" else 0.58)
    diagnostics = None
    if seq % 2:
        diagnostics = json.dumps(
            {
                "catalog_digests": [DIGEST],
                "request_count": rng.randint(1, 12),
                "visible_schema_tokens": rng.randint(500, 4000),
                "disclosure_measurements": [{"profile": "coding" if variant == "coding" else "legacy", "active": True, "estimated_tokens": rng.randint(100, 9000)}],
            }
        )
    return {
        "campaign_id": campaign_id, "trial_pk": pk, "seq": seq, "status": "finished", "started_at": T0, "ended_at": T0,
        "outcome": "passed" if passed else "failed", "failure_class": None if passed else "verifier_failed", "verified_pass": passed,
        "verifier_exit_code": 0 if passed else 1, "wall_seconds": None if rng.random() < 0.03 else rng.uniform(30, 600),
        "completed_turns": rng.randint(1, 12), "uncached_input_tokens": rng.randint(1000, 90000), "cached_input_tokens": rng.randint(0, 50000),
        "cache_write_tokens": rng.randint(0, 2000), "output_tokens": rng.randint(100, 9000), "tool_calls": rng.randint(1, 40),
        "tool_errors": None if rng.random() < 0.05 else rng.randint(0, 2), "diagnostic_events_version": 1,
        "discovery_failures": rng.randint(0, 2), "incorrect_tool_calls": rng.randint(0, 2),
        "cost_usd": None if rng.random() < 0.01 else rng.uniform(0.01, 0.9), "cost_reported": True, "equivalent_spend_usd": None,
        "spend_complete": rng.random() > 0.02, "flush_complete": True, "cleanup_complete": True, "disposal_complete": True,
        "finalization_failed": False, "teardown_outcome": "clean", "containment": None, "config_digest": DIGEST, "fixture_digest": DIGEST,
        "agent_model": "gpt-6.1-sol", "applied_profiles": json.dumps(["legacy" if variant == "baseline" else "coding"]),
        "schema_diagnostics": diagnostics, "private_root": f"/tmp/campaign-paired-runtime-{seq}",
    }  # fmt: skip


def _interrupted(rng: random.Random, campaign_id: int, pk: int, seq: int) -> dict:
    """Stopped on request: a row with its spend and teardown outcome and no verdict."""
    return {
        "campaign_id": campaign_id, "trial_pk": pk, "seq": seq, "status": "interrupted", "started_at": T0, "ended_at": T0,
        "outcome": "interrupted", "failure_class": "interrupted", "verified_pass": None, "verifier_exit_code": None, "wall_seconds": None,
        "completed_turns": rng.randint(0, 3), "uncached_input_tokens": rng.randint(0, 9000), "cached_input_tokens": None, "cache_write_tokens": None,
        "output_tokens": rng.randint(0, 900), "tool_calls": None, "tool_errors": None, "diagnostic_events_version": None,
        "discovery_failures": None, "incorrect_tool_calls": None, "cost_usd": rng.uniform(0.001, 0.2), "cost_reported": True,
        "equivalent_spend_usd": None, "spend_complete": False, "flush_complete": False, "cleanup_complete": True, "disposal_complete": True,
        "finalization_failed": False, "teardown_outcome": "clean", "containment": None, "config_digest": DIGEST, "fixture_digest": DIGEST,
        "agent_model": None, "applied_profiles": None, "schema_diagnostics": None, "private_root": f"/tmp/campaign-paired-runtime-i{seq}",
    }  # fmt: skip


def _served(answer):
    """``answer()`` from a worker thread, as the view serves it: a report is then built the
    way a process with threads builds it (no forked children)."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(answer).result()


def _view_json(engine, checks: source.ChainChecks, campaign_id: int, reports: snapshot.Reports) -> bytes:
    """The JSON endpoint's answer."""
    return _served(lambda: snapshot.campaign_snapshot(engine, checks, campaign_id, reports).json_bytes())


def _view_page(engine, checks: source.ChainChecks, campaign_id: int, reports: snapshot.Reports | None, patience: float | None = None) -> str:
    """The page."""

    def page() -> str:
        snap = snapshot.campaign_snapshot(engine, checks, campaign_id, reports, patience)
        return pages.campaign_page(snap.summary, snap.verdict, snap.report, snap.providers, snap.total_cap_usd, None, None, trials.ALL, snap.building)

    return _served(page)


def _patient_refreshes(db: Path, viewer, checks: source.ChainChecks, campaign_id: int, runs: int) -> tuple[float, bool]:
    """The page right after the store changed, as `campaign view` serves it: it waits
    ``PAGE_PATIENCE_S`` for the newer report, then shows the one it has while the newer one
    builds (not timed: it is waited for before the next run). Best of ``runs``, and whether
    every timed page showed the older report. The change moves the latest ``updated_at``
    of the trials (one of the report's inputs, not a value it shows), put back at the end."""
    reports = snapshot.Reports()
    _view_page(viewer, checks, campaign_id, reports)
    with sqlite3.connect(db) as conn:
        (pk, was) = conn.execute("SELECT id, updated_at FROM trials WHERE campaign_id = ? ORDER BY id LIMIT 1", (campaign_id,)).fetchone()
    times, older = [], True
    try:
        for n in range(runs + 1):
            with sqlite3.connect(db) as conn:
                conn.execute("UPDATE trials SET updated_at = ? WHERE id = ?", (f"2999-01-01 00:00:{n:02d}.000000", pk))
            start = time.perf_counter()
            text = _view_page(viewer, checks, campaign_id, reports, PAGE_PATIENCE_S)
            times.append(time.perf_counter() - start)
            older = older and 'id="building"' in text
            _view_page(viewer, checks, campaign_id, reports)
    finally:
        with sqlite3.connect(db) as conn:
            conn.execute("UPDATE trials SET updated_at = ? WHERE id = ?", (was, pk))
    return min(times[1:]), older


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
    parser.add_argument("--interrupted", type=float, default=0.01, help="Share of trials with an extra interrupted attempt.")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--chain-format", type=int, choices=(1, 2), default=2, help="Seal the rows as this engine does (2) or as before format 2 existed (1).")
    parser.add_argument("--keep", type=Path, help="Build the store here and keep it (reused when it already holds one).")
    args = parser.parse_args(argv)

    workdir = args.keep or Path(tempfile.mkdtemp(prefix="campaign-bench-report-"))
    workdir.mkdir(parents=True, exist_ok=True)
    db = workdir / "bench.db"
    try:
        start = time.perf_counter()
        if db.exists():
            campaign_id, generated = 1, None
        else:
            campaign_id = generate(db, args.tasks, args.repetitions, interrupted=args.interrupted, chain_format=args.chain_format)
            generated = time.perf_counter() - start

        def baseline() -> None:
            conn = sqlite3.connect(db)
            try:
                conn.execute("SELECT count(*), sum(cost_usd) FROM attempts").fetchone()
                conn.execute("SELECT * FROM attempts").fetchall()
            finally:
                conn.close()

        def floor() -> None:
            conn = sqlite3.connect(db)
            try:
                cur = conn.execute("SELECT * FROM attempts ORDER BY seq")
                names = [d[0] for d in cur.description]
                rows = cur.fetchall()
                conn.execute("SELECT * FROM trials").fetchall()
                payload = operator.itemgetter(*(names.index(n) for n in ("prev_hash", *chain.HASHED_COLUMNS)))
                for row in rows:
                    hashlib.sha256(orjson.dumps(payload(row))).hexdigest()
                with open(workdir / "floor.json", "wb") as fh:
                    for start in range(0, len(rows), 256):
                        fh.write(b",\n    ".join(orjson.dumps(dict(zip(names, row))) for row in rows[start : start + 256]))
            finally:
                conn.close()

        engine = make_engine(resolve_url(str(db)))
        try:
            with sqlite3.connect(db) as conn:
                n_attempts = conn.execute("SELECT count(*) FROM attempts").fetchone()[0]
            report = build_report(engine, campaign_id)
            base = best_of(args.runs, baseline)
            least = best_of(args.runs, floor)
            build = best_of(args.runs, lambda: build_report(engine, campaign_id, integrity=NOT_CHECKED))
            verify = best_of(args.runs, lambda: chain.verify_chain(engine, campaign_id))
            rendering = best_of(args.runs, lambda: render(report, "bench.svg"))
            written = best_of(args.runs, lambda: write_report(engine, campaign_id, workdir / "bench.json"))
            exported = best_of(args.runs, lambda: export_report(engine, campaign_id, workdir / "share"))
            means = np.random.default_rng(0).normal(size=args.tasks)
            boot = best_of(args.runs, lambda: report_stats.summarize(means, 107, empty_reason="no_complete_pairs"))
            viewer, checks = source.open_readonly(str(db)), source.ChainChecks()
            try:
                checks.problems(viewer, campaign_id)
                rebuilt = best_of(args.runs, lambda: _view_page(viewer, checks, campaign_id, None))
                # A running campaign's head moves with every attempt: nothing is verified at the new head.
                moved = best_of(args.runs, lambda: _view_page(viewer, source.ChainChecks(), campaign_id, None))
                reports = snapshot.Reports()
                kept = best_of(args.runs, lambda: _view_page(viewer, checks, campaign_id, reports))
                page_mb = len(_view_page(viewer, checks, campaign_id, reports).encode()) / 1e6
                kept_json = best_of(args.runs, lambda: _view_json(viewer, checks, campaign_id, reports))
                patient, shown_older = _patient_refreshes(db, viewer, checks, campaign_id, args.runs)
            finally:
                viewer.dispose()
        finally:
            engine.dispose()
        size = (workdir / "bench.json").stat().st_size
        made = f"generated in {generated:.1f} s" if generated is not None else "reused"
        print(f"store: {n_attempts:,} attempt rows, {args.tasks} tasks, {made} ({dt.date.today()})")
        print(f"baseline  (count+sum, read all attempt rows with sqlite3):  {base:8.3f} s  1.00x")
        print(f"floor: read + trials + hash + encode + write, nothing else: {least:8.3f} s  {least / base:5.2f}x")
        print(f"build_report, no chain check (SQL + allowlisted trials + bootstrap): {build:8.3f} s  {build / base:5.2f}x")
        print(f"chain verification (campaign verify of this campaign):     {verify:8.3f} s  {verify / base:5.2f}x")
        print(f"render JSON + Markdown + SVG (in memory):                  {rendering:8.3f} s  {rendering / base:5.2f}x")
        print(f"campaign report end to end (verify + build + write):       {written:8.3f} s  {written / base:5.2f}x  (JSON {size / 1e6:.0f} MB)")
        print(f"campaign export end to end (+ allowlist re-check):         {exported:8.3f} s  {exported / base:5.2f}x")
        print(f"bootstrap alone ({args.tasks} clusters x {report_stats.RESAMPLES} resamples):           {boot * 1000:8.1f} ms")
        print(f"campaign view refresh, store unchanged (kept report):     {kept:8.3f} s  {kept / base:5.2f}x  (page {page_mb:.2f} MB)")
        print(f"  its JSON endpoint (the whole report), store unchanged:    {kept_json:8.3f} s  {kept_json / base:5.2f}x")
        print(f"campaign view refresh after a change (report rebuilt):     {rebuilt:8.3f} s  {rebuilt / base:5.2f}x")
        print(
            f"  as served: waits {PAGE_PATIENCE_S} s, then the older report:        {patient:8.3f} s  {patient / base:5.2f}x  "
            f"({'every page showed the older report' if shown_older else 'some page showed the newer report'})"
        )
        print(f"  the same after the chain head moved (rows verified too):  {moved:8.3f} s  {moved / base:5.2f}x")
        vs = report["paired_differences"]["verified_success"]
        print(f"report: success difference {vs['estimate']:+.4f} [{vs['ci_low']:+.4f}, {vs['ci_high']:+.4f}]")
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
