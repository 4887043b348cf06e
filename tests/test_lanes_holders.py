"""Lease holders: proven dead on this machine at once, elsewhere only by the database's clock."""

from __future__ import annotations

import os
import subprocess
import sys

from helpers.procs import start_ticks, wait_for

from campaign.lanes import holders
from campaign.store import leases
from campaign.store.repository import RunnerIdentity
from campaign.supervise.procfs import ProcFS

PROC = ProcFS()


def here(pid: int, ticks: int, host: str | None = None, boot: str | None = None) -> leases.WorkerIdentity:
    return leases.WorkerIdentity(host or holders.this_host(), pid, ticks, boot or PROC.boot_id())


def test_a_live_process_is_not_gone_an_exited_or_zombie_one_is():
    live = subprocess.Popen(["sleep", "60"])
    try:
        ticks = wait_for(lambda: start_ticks(live.pid))
        assert not holders.gone(PROC, live.pid, ticks)
        assert holders.gone(PROC, live.pid, ticks - 1)  # the same pid, another birth
        assert holders.runner_alive(RunnerIdentity(live.pid, ticks, PROC.boot_id()), PROC)
        assert not holders.runner_alive(RunnerIdentity(live.pid, ticks, "another-boot"), PROC)
    finally:
        live.kill()
        live.wait()
    zombie = subprocess.Popen([sys.executable, "-c", "import sys, time; sys.stdin.read()"], stdin=subprocess.PIPE)
    ticks = wait_for(lambda: start_ticks(zombie.pid))
    zombie.stdin.close()  # it exits; unreaped, it stays a zombie with its birth time
    wait_for(lambda: PROC.stat(zombie.pid).exited)
    assert holders.gone(PROC, zombie.pid, ticks)
    zombie.wait()
    assert holders.gone(PROC, zombie.pid, ticks)


def test_dead_here_judges_only_holders_of_this_machine_and_boot():
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    ticks = wait_for(lambda: start_ticks(dead.pid))
    dead.wait()
    judge = holders.dead_here(PROC)
    assert judge(here(dead.pid, ticks))
    assert not judge(here(dead.pid, ticks, host="elsewhere"))  # only its own host can tell
    assert not judge(here(dead.pid, ticks, boot="another-boot"))
    assert not judge(here(os.getpid(), PROC.start_ticks(os.getpid())))


def test_a_holder_elsewhere_says_how_long_to_wait_and_what_to_run():
    elsewhere = holders.Held("anthropic", leases.WorkerIdentity("h2", 42, 7, "boot"), here=False, heartbeat_age=5.2)
    text = holders.LeaseHeld(3, [elsewhere], stale_seconds=20, db="store.db").describe(rerun="campaign coding --campaign --resume")
    assert "provider anthropic: held by pid 42 on host h2 (last heartbeat 5 s ago)" in text
    assert "its lease goes stale in 15 s" in text
    assert text.endswith("Next: wait 15 s (or for the holder to end), then run:\n  campaign coding --campaign --resume")


def test_a_halted_lease_names_the_recovery_and_the_continuation():
    halted = holders.Held("offline", leases.WorkerIdentity("h2", 42, 7, "boot"), here=False, heartbeat_age=90, halted_reason="worker_lost", halted_attempt_id=9)
    text = holders.LeaseHeld(3, [halted], stale_seconds=20, db="/x/campaign.db").describe(program="campaign", continue_blocked="campaign coding --resume --continue-blocked")
    assert "halted (worker_lost): worker pid 42 on host h2 was lost during attempt 9" in text
    assert "Next, on h2, prove the lost attempts' processes gone" in text
    assert text.endswith("  campaign recover 9 --db /x/campaign.db\n  campaign coding --resume --continue-blocked")
