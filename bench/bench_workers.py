"""Workers (issue 15): admission throughput with racing worker processes, and the offline main job with providers in parallel.

(a) Admission throughput. One campaign of ``--claim-providers`` (4) providers x
``--claim-trials`` (500) scheduled trials each, in a fresh migrated store: a
SQLite file in a temp dir (WAL, the engine's own pragmas) and, with
``--postgres URL``, a scratch PostgreSQL database ``bench_<hex>`` created on
that server and dropped afterwards. ``--workers`` (4) worker PROCESSES
(multiprocessing, spawn; each its own engine and connections) wait on a
barrier, then call ``leases.admit`` -- campaign state, lease re-check and the
per-attempt ceiling reserved against the caps, in one transaction -- with caps
that never bind (ceiling 0.001 USD, campaign cap 1,000,000 USD). Only
admission is timed: process start, engine connect, reading the schedule and
taking leases happen before the barrier.

- ``--mode provider`` (default, what ``campaign worker`` does): each process
  takes the lease of its own provider(s) (providers dealt round-robin) and
  admits that provider's trials in schedule order, ``me=`` its identity.
- ``--mode race``: every process walks ALL trials in schedule order with no
  lease (``me=None``), so most calls lose the compare-and-set ("taken").

Baseline, measured in the same run: the same admissions done by ONE process
(holding every lease in provider mode). Runs of 1 and N processes are
interleaved, a fresh campaign each, best of ``--runs``. Claims/s = trials
admitted / (last process done - first process off the barrier). A sanity line
per backend checks that no trial was admitted twice (successful admit calls =
trials in state admitted = reservation rows = distinct reserved trials, none
left scheduled) and that the reservations sum to admitted x ceiling.

(b) Wall time of the offline main job, 3 providers (alpha, beta, gamma: three
copies of the shipped offline provider) run one after another vs
``--parallel-providers 3``: ``python -m campaign coding --campaign --providers
alpha,beta,gamma --providers-catalog CAT --tasks T --repetitions 1 --live
--output-dir DIR --db DIR/store.db`` as a subprocess, a fresh DIR (and TMPDIR
inside it) per run, arms interleaved (their order alternating), best of
``--runs``; printed as seconds and the ratio parallel / sequential, with a
sanity line (exit code, campaign state, attempts per trial, most attempts
running at once).

    python bench/bench_workers.py [--tasks a,b] [--runs 2] [--postgres postgresql+psycopg://USER@HOST:PORT/DB]
                                  [--workers 4] [--claim-providers 4] [--claim-trials 500] [--mode provider|race]
                                  [--skip-claims] [--skip-wall]

A benchmark script, not a test: it asserts nothing and makes no network calls
(beyond the PostgreSQL server named by ``--postgres``).
"""

from __future__ import annotations

import argparse
import collections
import datetime as dt
import multiprocessing
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from decimal import Decimal
from pathlib import Path

from sqlalchemy import create_engine, func, select
from sqlalchemy.engine import make_url

from campaign.benchmark import task_names
from campaign.schedule import build_schedule
from campaign.store import leases, money, repository
from campaign.store.engine import make_engine, resolve_url
from campaign.store.limits import SpendLimits
from campaign.store.migrate import open_store
from campaign.store.models import Attempt, Campaign, SpendReservation, Trial

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from helpers.catalogs import offline_copies  # noqa: E402

CEILING = Decimal("0.001")
NEVER_BINDS = Decimal("1000000")
WALL_PROVIDERS = ("alpha", "beta", "gamma")


# --- (a) admission throughput ----------------------------------------------------------


def new_campaign(engine, providers: list[str], per_provider: int) -> int:
    """A running campaign with ``per_provider`` scheduled trials (x/2 tasks x 2 variants) per provider."""
    tasks = [f"task-{i:04d}" for i in range(max(1, per_provider // 2))]
    schedule = build_schedule(tasks, 1, seed=1, providers=providers)
    new = repository.NewCampaign(kind="campaign", state="running", live=True, agent="offline", seed=1, experiment={})
    campaign_id = repository.create_campaign(engine, new, schedule, model="offline:sim", default_provider=providers[0])
    leases.ensure_leases(engine, campaign_id, providers)
    return campaign_id


def admitter(url: str, campaign_id: int, providers: list[str], mode: str, barrier, results) -> None:
    """One worker process: its own engine; leases and schedule before the barrier, then admit."""
    engine = make_engine(resolve_url(url))
    me = leases.WorkerIdentity(socket.gethostname()[:128], os.getpid(), 0, "bench-workers")
    caps = SpendLimits(NEVER_BINDS, CEILING)
    outcomes: collections.Counter = collections.Counter()
    trials = repository.trials_in_order(engine, campaign_id)
    if mode == "provider":
        trials = [t for t in trials if t.provider in providers]
        for provider in providers:
            if leases.claim_provider(engine, campaign_id, me, [provider]) != provider:
                outcomes[f"lease of {provider} not taken"] += 1
    lineage = repository.lineage(engine, campaign_id)
    holder = me if mode == "provider" else None
    try:
        barrier.wait(timeout=600)
    except Exception:  # a sibling failed to start; report nothing timed
        results.put((os.getpid(), 0.0, 0.0, {"barrier broken": 1}))
        engine.dispose()
        return
    start = time.monotonic()  # CLOCK_MONOTONIC: one clock for every process on this machine
    for trial in trials:
        outcomes[leases.admit(engine, trial, me=holder, caps=caps, lineage=lineage) or "admitted"] += 1
    end = time.monotonic()
    if mode == "provider":
        leases.release(engine, campaign_id, me)
    engine.dispose()
    results.put((os.getpid(), start, end, dict(outcomes)))


def admission_run(url: str, engine, workers: int, providers: list[str], per_provider: int, mode: str) -> dict:
    campaign_id = new_campaign(engine, providers, per_provider)
    ctx = multiprocessing.get_context("spawn")
    barrier, results = ctx.Barrier(workers), ctx.Queue()
    shares = [providers[i::workers] for i in range(workers)]
    procs = [ctx.Process(target=admitter, args=(url, campaign_id, shares[i], mode, barrier, results)) for i in range(workers)]
    for p in procs:
        p.start()
    reports = []
    for _ in procs:
        try:
            reports.append(results.get(timeout=900))
        except Exception:
            break
    for p in procs:
        p.join(timeout=60)
    outcomes: collections.Counter = collections.Counter()
    for *_, counts in reports:
        outcomes.update(counts)
    failed = [p.exitcode for p in procs if p.exitcode != 0]
    started = [r[1] for r in reports if r[2] > 0]
    wall = (max(r[2] for r in reports) - min(started)) if started and len(reports) == workers else float("nan")
    return {"campaign_id": campaign_id, "wall": wall, "outcomes": outcomes, "failed": failed, **check(engine, campaign_id)}


def check(engine, campaign_id: int) -> dict:
    with engine.connect() as conn:
        by_status = dict(conn.execute(select(Trial.status, func.count()).where(Trial.campaign_id == campaign_id).group_by(Trial.status)).all())
        rows, distinct, nano = conn.execute(
            select(func.count(), func.count(func.distinct(SpendReservation.trial_pk)), func.coalesce(func.sum(SpendReservation.nano_usd), 0)).where(
                SpendReservation.campaign_id == campaign_id
            )
        ).one()
    return {"trials": sum(by_status.values()), "by_status": by_status, "reservations": int(rows), "reserved_trials": int(distinct), "nano": int(nano)}


def sane(run: dict) -> tuple[bool, str]:
    admitted_calls = run["outcomes"].get("admitted", 0)
    admitted_rows = run["by_status"].get("admitted", 0)
    ceiling_nano = int(CEILING * money.NANO_PER_USD)
    twice = admitted_calls != admitted_rows or run["reservations"] != run["reserved_trials"] or run["reserved_trials"] != admitted_rows
    sums = run["nano"] == admitted_rows * ceiling_nano
    complete = admitted_rows == run["trials"] and not run["failed"]
    other = {k: v for k, v in run["outcomes"].items() if k not in ("admitted", "taken")}
    text = (
        f"{admitted_calls} successful admit calls, {admitted_rows} of {run['trials']} trials admitted, "
        f"{run['reservations']} reservations on {run['reserved_trials']} trials summing {run['nano'] / 1e9:.6f} USD "
        f"(= {admitted_rows} x {CEILING}: {'yes' if sums else 'NO'}); taken {run['outcomes'].get('taken', 0)}"
        + (f"; other outcomes {other}" if other else "")
        + (f"; worker exit codes {run['failed']}" if run["failed"] else "")
    )
    return (not twice and sums and complete and not other), text


def scratch_postgres(admin_url: str):
    name = f"bench_{uuid.uuid4().hex[:12]}"
    admin = create_engine(admin_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
    url = make_url(admin_url).set(database=name).render_as_string(hide_password=False)

    def drop() -> None:
        with admin.connect() as conn:
            conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.dispose()

    return name, url, drop


def bench_claims(args, base: Path) -> None:
    providers = [f"p{i}" for i in range(args.claim_providers)]
    per_provider = max(2, args.claim_trials - args.claim_trials % 2)
    total = per_provider * len(providers)
    backends = [("sqlite", None)]
    if args.postgres:
        backends.append(("postgresql", args.postgres))
    print(
        f"(a) admission throughput: {len(providers)} providers x {per_provider} trials = {total} admissions per run, mode {args.mode}, "
        f"caps that never bind (ceiling {CEILING} USD), best of {args.runs}, process start excluded"
    )
    for backend, admin_url in backends:
        drop = None
        try:
            if backend == "sqlite":
                url, where = f"sqlite:///{base / 'claims.db'}", "SQLite file in a temp dir, WAL"
            else:
                name, url, drop = scratch_postgres(admin_url)
                where = f"PostgreSQL scratch database {name}"
            engine = open_store(url)
            best: dict[int, dict] = {}
            runs: dict[int, list[dict]] = {1: [], args.workers: []}
            for i in range(args.runs):  # interleaved; the order alternates
                for n in (1, args.workers) if i % 2 == 0 else (args.workers, 1):
                    run = admission_run(url, engine, n, providers, per_provider, args.mode)
                    runs[n].append(run)
                    if n not in best or run["wall"] < best[n]["wall"]:
                        best[n] = run
            engine.dispose()
        finally:
            if drop is not None:
                drop()
        one, many = best[1], best[args.workers]
        rate1 = one["outcomes"].get("admitted", 0) / one["wall"]
        rate_n = many["outcomes"].get("admitted", 0) / many["wall"]
        print(f"  {backend} ({where}):")
        print(f"    1 process (baseline):   {rate1:8.1f} claims/s  ({one['wall']:.2f} s for {one['outcomes'].get('admitted', 0)})  1.00x")
        print(
            f"    {args.workers} processes:            {rate_n:8.1f} claims/s  ({many['wall']:.2f} s for {many['outcomes'].get('admitted', 0)})  "
            f"{rate_n / rate1:.2f}x  (ratio {args.workers}/1)"
        )
        for n in (1, args.workers):
            verdicts = [sane(run) for run in runs[n]]
            ok = all(v for v, _ in verdicts)
            print(f"    sanity, {n} process{'es' if n > 1 else ''}, every run: {'ok' if ok else 'NOT OK'} -- no trial admitted twice; last run: {verdicts[-1][1]}")
            for good, text in verdicts[:-1]:
                if not good:
                    print(f"      earlier run: {text}")


# --- (b) wall time of the offline main job ---------------------------------------------


def write_catalog(path: Path) -> Path:
    """The shipped offline provider three times over, as tests/test_workers.py builds two."""
    path.write_text(offline_copies(WALL_PROVIDERS))
    return path


def wall_run(base: Path, label: str, catalog: Path, tasks: str, parallel: bool) -> dict:
    run_dir = base / label
    runner_tmp = run_dir / "tmp"
    runner_tmp.mkdir(parents=True)
    db = run_dir / "store.db"
    argv = [sys.executable, "-m", "campaign", "coding", "--campaign", "--providers", ",".join(WALL_PROVIDERS), "--providers-catalog", str(catalog),
            "--tasks", tasks, "--repetitions", "1", "--live", "--output-dir", str(run_dir / "out"), "--db", str(db)]  # fmt: skip
    if parallel:
        argv += ["--parallel-providers", str(len(WALL_PROVIDERS))]
    start = time.perf_counter()
    done = subprocess.run(argv, env={**os.environ, "TMPDIR": str(runner_tmp)}, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    result = {"seconds": seconds, "returncode": done.returncode, "stderr": done.stderr}
    if db.exists():
        engine = make_engine(resolve_url(str(db)))
        try:
            with engine.connect() as conn:
                result["campaign"] = conn.execute(select(Campaign.state, Campaign.stop_reason)).all()
                spans = conn.execute(select(Attempt.trial_pk, Attempt.status, Attempt.started_at, Attempt.ended_at)).all()
                result["trials"] = conn.execute(select(func.count()).select_from(Trial)).scalar_one()
        finally:
            engine.dispose()
        result["attempts"] = len(spans)
        result["finished"] = sum(1 for s in spans if s.status == "finished")
        result["max_per_trial"] = max(collections.Counter(s.trial_pk for s in spans).values(), default=0)
        result["max_running"] = most_at_once([(s.started_at, s.ended_at) for s in spans if s.started_at and s.ended_at])
    shutil.rmtree(run_dir, ignore_errors=True)
    return result


def most_at_once(spans: list[tuple[dt.datetime, dt.datetime]]) -> int:
    events = sorted([(s, 1) for s, _ in spans] + [(e, -1) for _, e in spans])  # an end sorts before a start at the same instant
    level = peak = 0
    for _, delta in events:
        level += delta
        peak = max(peak, level)
    return peak


def bench_wall(args, base: Path) -> None:
    tasks = args.tasks or ",".join(task_names())
    n_tasks = len(tasks.split(","))
    catalog = write_catalog(base / "providers.toml")
    arms = {"sequential": False, "parallel": True}
    runs: dict[str, list[dict]] = {arm: [] for arm in arms}
    for i in range(args.runs):  # interleaved; the order alternates
        for arm in ("sequential", "parallel") if i % 2 == 0 else ("parallel", "sequential"):
            runs[arm].append(wall_run(base, f"wall-{arm}-{i}", catalog, tasks, arms[arm]))
    print(
        f"(b) offline main job: {len(WALL_PROVIDERS)} providers x {n_tasks} tasks x 2 variants x 1 repetition = "
        f"{len(WALL_PROVIDERS) * n_tasks * 2} attempts on SQLite (WAL), best of {args.runs}"
    )
    best = {arm: min(r["seconds"] for r in results) for arm, results in runs.items()}
    print(f"  providers one after another:      {best['sequential']:8.1f} s  1.00x")
    print(f"  --parallel-providers {len(WALL_PROVIDERS)}:           {best['parallel']:8.1f} s  {best['parallel'] / best['sequential']:.2f}x  (ratio parallel/sequential)")
    for arm, results in runs.items():
        r = results[-1]
        ok = all(x["returncode"] == 0 and x.get("campaign") == [("completed", None)] and x.get("finished") == x.get("trials") == x.get("attempts") for x in results)
        print(
            f"  sanity, {arm}, every run: {'ok' if ok else 'NOT OK'}; last run: exit {r['returncode']}, campaign {r.get('campaign')}, "
            f"{r.get('finished')} of {r.get('trials')} trials finished, attempts per trial at most {r.get('max_per_trial')}, "
            f"attempts running at once at most {r.get('max_running')}; runs {', '.join(format(x['seconds'], '.1f') for x in results)} s"
        )
        for x in results:
            if x["returncode"] != 0:
                print("    stderr tail: " + " | ".join(x["stderr"].strip().splitlines()[-5:]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", help="(b) comma-separated task names (default: all twelve)")
    parser.add_argument("--runs", type=int, default=2, help="best of N, for (a) and (b) (default 2)")
    parser.add_argument(
        "--postgres", metavar="URL", help="(a) also on PostgreSQL: a server URL such as postgresql+psycopg://USER@HOST:PORT/DB; a scratch database is created and dropped"
    )
    parser.add_argument("--workers", type=int, default=4, help="(a) worker processes racing (default 4)")
    parser.add_argument("--claim-providers", type=int, default=4, help="(a) providers in the campaign (default 4)")
    parser.add_argument("--claim-trials", type=int, default=500, help="(a) scheduled trials per provider (default 500)")
    parser.add_argument(
        "--mode",
        choices=("provider", "race"),
        default="provider",
        help="(a) provider: each process admits its own provider's trials under its lease (default); race: all processes race on all trials, no lease",
    )
    parser.add_argument("--skip-claims", action="store_true", help="skip (a)")
    parser.add_argument("--skip-wall", action="store_true", help="skip (b)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="campaign-bench-workers-") as tmp:
        base = Path(tmp)
        load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
        print(f"bench_workers ({dt.date.today()}, {sys.platform}, python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {load} at start)")
        if not args.skip_claims:
            bench_claims(args, base)
        if not args.skip_wall:
            bench_wall(args, base)
    return 0


if __name__ == "__main__":
    sys.exit(main())
