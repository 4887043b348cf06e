"""A real runner for interruption and crash tests.

Usage: runner.py DB_URL ATTEMPT_ID TRIAL_PK TMP_BASE PIDS_FILE READY_FILE CONTAINMENT [SWEEP_SECONDS]

Starts a runtime and a double-forking fixture command under a Supervisor, writes
READY_FILE, then runs a long client. On SIGINT/SIGTERM it tears down, persists the
attempt as interrupted and exits 130 (the lanes' contract).
"""

import os
import sys

from campaign import isolation
from campaign.errors import Interrupted
from campaign.store import repository
from campaign.store.engine import make_engine, resolve_url
from campaign.supervise import Supervisor, TeardownBudget, interruptible

AGENT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "agent.py")


def main() -> int:
    db_url, attempt_id, trial_pk, tmp_base, pids, ready, containment = sys.argv[1:8]
    sweep = float(sys.argv[8]) if len(sys.argv) > 8 else 0.25
    engine = make_engine(resolve_url(db_url))
    agent = [sys.executable, "-I", AGENT]
    with interruptible() as intr:
        root = isolation.create_private_root(tmp_base)
        env = isolation.build_env(root, os.environ)
        try:
            with Supervisor(engine, int(attempt_id), root, budget=TeardownBudget(grace=1.0, kill_wait=5.0, sweep_interval=sweep), containment=containment) as sup:
                sup.start("runtime", [*agent, "sleep", pids], env=env)
                sup.start("fixture", [*agent, "double-fork", pids], env=env)
                with open(ready, "w") as fh:
                    fh.write(str(root.path))
                sup.run("client", [*agent, "ignore-term", pids], env=env, timeout=120)
        except Interrupted:
            with intr.shield():
                verdict = sup.teardown()
                repository.finish_attempt(engine, int(attempt_id), int(trial_pk), status="interrupted", outcome="interrupted")
            print(f"interrupted; teardown {verdict.outcome}", flush=True)
            return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
