"""Process supervision for one attempt: gated spawn with ledger, containment,
provable teardown, offline recovery and pinned disposal.

The lanes use it like this::

    from campaign import isolation
    from campaign.supervise import Supervisor, disposal, interruptible

    with interruptible() as intr:                       # SIGINT/SIGTERM -> Interrupted at a safe point
        root = isolation.create_private_root()          # campaign-paired-runtime-* (0700) under $TMPDIR
        env = isolation.build_env(root, os.environ, sdk_path_vars={"MIX_HOME": ".mix"},
                                  credential_names=("OPENAI_API_KEY",), extra={...})
        try:
            with Supervisor(engine, attempt_id, root) as sup:
                rt = sup.start("runtime", argv, env=env, stdout=root.capture("runtime.out"))
                sup.verify_ledger()                     # rows intact in the store, before any paid call
                res = sup.run("client", argv, env=env, timeout=660, stdout=root.capture("client.out"))
                ...                                    # RunResult(exit_code|None, timed_out, wall_seconds)
            verdict = sup.teardown()                    # already run by __exit__; cached
            result = sup.dispose(finalization_ok=flushed)  # or disposal.dispose(root, finalization_ok=..., cleanup_complete=...)
        except Interrupted:
            with intr.shield():                         # persist without being interrupted again
                repository.finish_attempt(engine, attempt_id, trial.id, status="interrupted")
            sys.exit(130)
        if verdict.stop_reason:                         # "cleanup_unverified": stop later trials
            ...

What each piece guarantees (Linux):

* ``Supervisor.__enter__`` makes the runner a child subreaper, takes an
  exclusive lock in the root, and picks containment: a per-attempt cgroup v2
  with ``cgroup.kill`` when one is writable ("cgroup2"), else
  "subreaper-pidfd". It records ``containment`` and ``private_root`` on the
  attempt row. Non-Linux is "pgid-only" and never claims a proof it cannot
  make.
* ``start``/``run`` spawn behind an exec gate: the ledger row (pid, start
  ticks, boot id, pid namespace, pgid) is committed before the target may
  run. Each command leads its own session and group. ``run`` enforces the
  deadline (TERM, ``budget.run_grace``, KILL) and always stops what is left in
  the command's group.
* ``teardown`` (also run by ``__exit__``): TERM to the runtime and owned groups
  with ``budget.grace`` (5 s; not waited when all have exited), SIGKILL and
  ``cgroup.kill`` with a bounded wait, then offline recovery as a separate
  process with only PATH/LANG/LC_ALL (``python -I -m campaign.supervise.recovery``:
  the code of ``campaign recover`` without loading the rest of the CLI), all
  within ``budget.total`` (35 s). When the agent left nothing behind (every
  member exited, the cgroup reports ``populated 0``, and with our exited
  children reaped the kernel reports no child at all) the proof is immediate:
  no signal, no grace, no recovery process (``TeardownVerdict.phases`` empty).
  Descendants found on the way are recorded as role "descendant" and must be
  proven gone too. Returns ``TeardownVerdict(cleanup_complete, outcome,
  containment, survivors, ...)``; outcome is one of "clean", "forced",
  "recovered", "unverified". It records ``cleanup_complete`` and
  ``teardown_outcome`` on the attempt and writes ``cleanup.log`` in the root.
* ``disposal.dispose`` removes the root only after a verified cleanup and a
  successful finalization, through pinned descriptors; ``disposal.record``
  stores ``disposal_complete`` and ``finalization_failed`` separately.
* ``campaign recover`` after a crashed runner signals only ledger members whose
  (pid, start ticks, boot id) still match, and completes an attempt only with
  a containment witness (its cgroup, emptied and removed). Without a cgroup it
  proves the recorded members gone but leaves the attempt ``cleanup_unverified``:
  a descendant born after the dead supervisor's last sweep cannot be excluded.

Contract: while a Supervisor is active the runner starts no child processes of
its own outside it (in subreaper mode, any new child of the runner counts as
the attempt's), and only one Supervisor is active per process.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from campaign.supervise.interrupt import critical, interruptible
    from campaign.supervise.supervisor import Process, Supervisor, SupervisorError
    from campaign.supervise.teardown import RunResult, TeardownBudget, TeardownVerdict

# Imported on first use, so a submodule (recovery, disposal) loads without the rest.
_EXPORTS = {
    "Process": "supervisor",
    "Supervisor": "supervisor",
    "SupervisorError": "supervisor",
    "RunResult": "teardown",
    "TeardownBudget": "teardown",
    "TeardownVerdict": "teardown",
    "critical": "interrupt",
    "interruptible": "interrupt",
}

__all__ = [
    "Process",
    "RunResult",
    "Supervisor",
    "SupervisorError",
    "TeardownBudget",
    "TeardownVerdict",
    "critical",
    "interruptible",
]


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'campaign.supervise' has no attribute {name!r}")
    return getattr(importlib.import_module(f"campaign.supervise.{module}"), name)
