"""Per-attempt overhead of the supervisor, as a ratio to a bare spawn-and-delete loop.

Supervised attempt: what ``campaign.lanes.attempt.run_attempt`` (the CLI
runner's path) does around an agent, with the same calls and arguments: a
private root under the runner's temp dir, the root pinned (``PinnedRoot``),
``Supervisor(engine, attempt, root, clock=, budget=, python=)`` with its
defaults (containment "auto", members confined), a copy of a 200-file
fixture, the client run with its output captured through the pinned root,
``quiesce`` before the verifier, the verifier run the same way, teardown
(``__exit__``), and ``disposal.dispose`` of the root. The client and the
verifier are ``true``; with ``--leave-child`` the client leaves a ``setsid``
background child behind, which (as in the runner) ``quiesce`` finds and stops
before the verifier runs.

Bare loop: copy the same fixture, spawn the client and the verifier commands,
``rm -rf`` the copy.

Each figure is the median over ``-n`` attempts per arm (interleaved); the
teardown line says which path teardown took (its ``phases``: none is the
immediate proof, else some of term, kill, recovery) and under which containment.

    python bench/bench_supervisor.py [-n 10] [--leave-child] [--no-recovery]
"""

from __future__ import annotations

import argparse
import collections
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from campaign import isolation
from campaign.lanes.pinned_root import PinnedRoot
from campaign.schedule import build_schedule
from campaign.store import repository
from campaign.store.engine import make_engine, resolve_url
from campaign.store.migrate import upgrade_engine
from campaign.supervise import Supervisor, TeardownBudget, disposal

FILES = 200
EXITS = ["true"]
LEAVES_CHILD = ["sh", "-c", "setsid sleep 30 >/dev/null 2>&1 < /dev/null & exit 0"]


def make_fixture(base: Path) -> Path:
    fixture = base / "fixture"
    for i in range(FILES):
        d = fixture / f"pkg{i % 10}" / f"mod{i % 3}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"file{i}.py").write_text(f"# fixture file {i}\n" + "x = 1\n" * 40)
    return fixture


def new_attempt(engine) -> int:
    schedule = [t for t in build_schedule(["task-a"], 1, seed=1) if t.variant == "baseline"]
    new = repository.NewCampaign(kind="paired", state="running", live=False, agent="offline", seed=1, experiment={})
    campaign_id = repository.create_campaign(engine, new, schedule, model="offline:sim", default_provider="offline")
    trial = repository.trials_in_order(engine, campaign_id)[0]
    repository.admit_trial(engine, trial.id)
    return repository.start_attempt(engine, trial)


def supervised(engine, base: Path, fixture: Path, budget: TeardownBudget, client: list[str]) -> dict:
    attempt_id = new_attempt(engine)  # the lane's cost, not the supervisor's
    t0 = time.perf_counter()
    root = isolation.create_private_root(base)
    held = PinnedRoot(root)
    sup = Supervisor(engine, attempt_id, root, clock=repository.utcnow, budget=budget, python=sys.executable)
    with sup:
        shutil.copytree(fixture, root.cwd, symlinks=True, dirs_exist_ok=True)  # benchmark.copy_fixture
        env = isolation.build_env(root, os.environ)
        t1 = time.perf_counter()
        with held.stdio("client") as io:
            res = sup.run("client", client, timeout=30, cwd_fd=held.work_fd, env=env, stdout=io.out, stderr=io.err)
        quiet = sup.quiesce()
        with held.stdio("verifier") as io:
            checked = sup.run("verifier", EXITS, timeout=30, cwd_fd=held.work_fd, env=env, stdout=io.out, stderr=io.err)
        t2 = time.perf_counter()
    verdict = sup.teardown()
    t3 = time.perf_counter()
    result = disposal.dispose(root, finalization_ok=True, cleanup_complete=verdict.cleanup_complete)
    held.close()
    t4 = time.perf_counter()
    assert res.exit_code == 0 and checked.exit_code == 0 and verdict.cleanup_complete and result.disposal_complete, (res, checked, verdict, result)
    return {
        "setup": t1 - t0,
        "spawn+ledger+run": t2 - t1,
        "teardown+verify": t3 - t2,
        "disposal": t4 - t3,
        "total": t4 - t0,
        "path": _path(engine, attempt_id, verdict, quiet),
    }


def _path(engine, attempt_id: int, verdict, quiet: bool) -> str:
    found = sum(row.role == "descendant" for row in repository.ledger_for(engine, attempt_id))
    stopped = f", {found} left-behind process(es) found and stopped" if found else ""
    return f"{'+'.join(verdict.phases) or 'immediate proof'} ({verdict.containment}{stopped}{'' if quiet else ', quiesce failed'})"


def bare(base: Path, fixture: Path, client: list[str]) -> float:
    t0 = time.perf_counter()
    copy = base / "bare-copy"
    shutil.copytree(fixture, copy, symlinks=True)
    subprocess.run(client, check=True, cwd=copy)
    subprocess.run(EXITS, check=True, cwd=copy)
    subprocess.run(["rm", "-rf", str(copy)], check=True)
    return time.perf_counter() - t0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=10, help="attempts per arm (default 10)")
    parser.add_argument("--leave-child", action="store_true", help="the client leaves a background child behind (teardown must stop it)")
    parser.add_argument("--no-recovery", action="store_true", help="skip the offline recovery process (not spec-compliant; shows its share)")
    args = parser.parse_args()
    budget = TeardownBudget(recovery=not args.no_recovery)
    client = LEAVES_CHILD if args.leave_child else EXITS
    with tempfile.TemporaryDirectory(prefix="campaign-bench-") as tmp:
        base = Path(tmp)
        fixture = make_fixture(base)
        engine = make_engine(resolve_url(str(base / "bench.db")))
        upgrade_engine(engine)
        supervised(engine, base, fixture, budget, client)  # warm-up
        bare(base, fixture, EXITS)
        sup_runs, bare_runs = [], []
        for _ in range(args.n):  # interleaved, so background load hits both arms alike
            sup_runs.append(supervised(engine, base, fixture, budget, client))
            bare_runs.append(bare(base, fixture, EXITS))
        engine.dispose()
    med = lambda xs: statistics.median(xs)  # noqa: E731
    sup_total, bare_total = med([r["total"] for r in sup_runs]), med(bare_runs)
    agent = "leaves a setsid child behind" if args.leave_child else "exits by itself, leaving nothing"
    print(f"{FILES}-file fixture, client that {agent}, {args.n} attempts per arm, median seconds per attempt ({sys.platform})")
    for key in ("setup", "spawn+ledger+run", "teardown+verify", "disposal"):
        print(f"  supervised {key:<18} {med([r[key] for r in sup_runs]):8.4f}")
    paths = collections.Counter(r["path"] for r in sup_runs)
    print("  teardown path: " + "; ".join(f"{path} in {n} of {args.n}" for path, n in paths.most_common()))
    print(f"  supervised total              {sup_total:8.4f}")
    print(f"  bare spawn + rm -rf           {bare_total:8.4f}")
    print(f"overhead ratio (supervised / bare): {sup_total / bare_total:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
