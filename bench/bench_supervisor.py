"""Per-attempt overhead of the supervisor, as a ratio to a bare spawn-and-delete loop.

Supervised attempt: private root, copy of a 200-file fixture, Supervisor enter
(subreaper, containment, lock), gated spawn of `true` with its ledger row,
teardown (sweep, proof, the separate offline recovery process, verdict rows),
and pinned disposal of the root.

Bare loop: copy the same fixture, spawn `true`, `rm -rf` the copy.

    python bench/bench_supervisor.py [-n 10] [--no-recovery]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from campaign import isolation
from campaign.schedule import build_schedule
from campaign.store import repository
from campaign.store.engine import make_engine, resolve_url
from campaign.store.migrate import upgrade_engine
from campaign.supervise import Supervisor, TeardownBudget

FILES = 200


def make_fixture(base: Path) -> Path:
    fixture = base / "fixture"
    for i in range(FILES):
        d = fixture / f"pkg{i % 10}" / f"mod{i % 3}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"file{i}.py").write_text(f"# fixture file {i}\n" + "x = 1\n" * 40)
    return fixture


def new_attempt(engine) -> int:
    schedule = [t for t in build_schedule(["task-a"], 1, seed=1) if t.variant == "baseline"]
    new = repository.NewCampaign(kind="paired", state="running", live=False, agent="offline", seed=1, experiment={}, experiment_digest="0" * 64)
    campaign_id = repository.create_campaign(engine, new, schedule, model="offline:sim", default_provider="offline")
    trial = repository.trials_in_order(engine, campaign_id)[0]
    repository.admit_trial(engine, trial.id)
    return repository.start_attempt(engine, trial)


def supervised(engine, base: Path, fixture: Path, budget: TeardownBudget) -> dict[str, float]:
    attempt_id = new_attempt(engine)  # the lane's cost, not the supervisor's
    t0 = time.perf_counter()
    root = isolation.create_private_root(base)
    shutil.copytree(fixture, root.cwd / "fixture", symlinks=True)
    env = isolation.build_env(root, os.environ)
    with Supervisor(engine, attempt_id, root, budget=budget) as sup:
        t1 = time.perf_counter()
        res = sup.run("client", ["true"], env=env, timeout=30)
        t2 = time.perf_counter()
    verdict = sup.teardown()
    t3 = time.perf_counter()
    result = sup.dispose(finalization_ok=True)
    t4 = time.perf_counter()
    assert res.exit_code == 0 and verdict.cleanup_complete and result.disposal_complete, (res, verdict, result)
    return {"setup": t1 - t0, "spawn+ledger+run": t2 - t1, "teardown+verify": t3 - t2, "disposal": t4 - t3, "total": t4 - t0}


def bare(base: Path, fixture: Path) -> float:
    t0 = time.perf_counter()
    copy = base / "bare-copy"
    shutil.copytree(fixture, copy, symlinks=True)
    subprocess.run(["true"], check=True)
    subprocess.run(["rm", "-rf", str(copy)], check=True)
    return time.perf_counter() - t0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=10, help="attempts per arm (default 10)")
    parser.add_argument("--no-recovery", action="store_true", help="skip the offline recovery process (not spec-compliant; shows its share)")
    args = parser.parse_args()
    budget = TeardownBudget(recovery=not args.no_recovery)
    with tempfile.TemporaryDirectory(prefix="campaign-bench-") as tmp:
        base = Path(tmp)
        fixture = make_fixture(base)
        engine = make_engine(resolve_url(str(base / "bench.db")))
        upgrade_engine(engine)
        supervised(engine, base, fixture, budget)  # warm-up
        bare(base, fixture)
        sup_runs, bare_runs = [], []
        for _ in range(args.n):  # interleaved, so background load hits both arms alike
            sup_runs.append(supervised(engine, base, fixture, budget))
            bare_runs.append(bare(base, fixture))
        engine.dispose()
    med = lambda xs: statistics.median(xs)  # noqa: E731
    sup_total, bare_total = med([r["total"] for r in sup_runs]), med(bare_runs)
    print(f"{FILES}-file fixture, {args.n} attempts per arm, median seconds per attempt ({sys.platform})")
    for key in ("setup", "spawn+ledger+run", "teardown+verify", "disposal"):
        print(f"  supervised {key:<18} {med([r[key] for r in sup_runs]):8.4f}")
    print(f"  supervised total              {sup_total:8.4f}")
    print(f"  bare spawn + rm -rf           {bare_total:8.4f}")
    print(f"overhead ratio (supervised / bare): {sup_total / bare_total:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
