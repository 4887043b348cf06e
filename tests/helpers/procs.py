"""Process utilities for tests: wait on conditions, check birth-bound liveness, and a
safety net that kills (by proven identity only) whatever a failed test left behind."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import pytest

HELPERS = Path(__file__).resolve().parent
AGENT = [sys.executable, "-I", str(HELPERS / "agent.py")]
RUNNER = [sys.executable, "-I", str(HELPERS / "runner.py")]


def containment_modes() -> list[str]:
    """The containments this machine can test: cgroup2 only where a writable v2 with
    cgroup.kill exists (probed by creating and removing an empty cgroup)."""
    from campaign.supervise.cgroup import AttemptCgroup

    probe = AttemptCgroup.create(f"campaign-probe-{os.getpid()}")
    if probe is None:
        return ["subreaper-pidfd"]
    probe.remove()
    return ["subreaper-pidfd", "cgroup2"]


def reap_exited_children(seconds: float = 0.0) -> bool:
    """Reap the exited children earlier tests left unwaited (within ``seconds``, for ones
    still dying); whether live children remain.

    A Supervisor makes this test process a child subreaper, so what a test killed but
    did not start itself (an escaped chain's orphans) ends up a zombie child of this
    process. The fast path and the drain prove "no descendant left" by the kernel's word
    that the runner has no child at all: a stale zombie would deny them that proof."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            if os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG) is None:
                if time.monotonic() >= deadline:
                    return True  # children exist, none exited
                # No event tells this process a child died (it handles no SIGCHLD): poll.
                time.sleep(0.01)
        except ChildProcessError:
            return False


def wait_for(predicate, timeout: float = 10.0, interval: float = 0.01):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout}s")
        time.sleep(interval)


def start_ticks(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    return int(data.rsplit(b")", 1)[1].split()[19])


def state(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[0].decode()
    except OSError:
        return None


def alive(pid: int, ticks: int) -> bool:
    """The very process (same birth) still exists and has not exited."""
    return start_ticks(pid) == ticks and state(pid) not in ("Z", "X", None)


def read_pids(path: Path) -> list[tuple[str, int, int]]:
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        label, pid, ticks = line.split()
        out.append((label, int(pid), int(ticks)))
    return out


def wait_pids(path: Path, labels: list[str], timeout: float = 10.0) -> list[tuple[str, int, int]]:
    def ready():
        rows = read_pids(path)
        have = [r[0] for r in rows]
        return rows if all(have.count(l) >= labels.count(l) for l in set(labels)) else None

    return wait_for(ready, timeout)


def kill_if_same(pid: int, ticks: int) -> None:
    """SIGKILL only the process born at ``ticks`` (pidfd first, then re-check)."""
    try:
        fd = os.pidfd_open(pid)
    except OSError:
        return
    try:
        if start_ticks(pid) == ticks:
            signal.pidfd_send_signal(fd, signal.SIGKILL)
    except OSError:
        pass
    finally:
        os.close(fd)


@pytest.fixture
def pids_file(tmp_path: Path):
    """A file the stand-ins report into; anything still alive at the end is killed."""
    path = tmp_path / "pids.txt"
    yield path
    for _label, pid, ticks in read_pids(path):
        kill_if_same(pid, ticks)


@pytest.fixture
def tmp_base(tmp_path: Path) -> Path:
    base = tmp_path / "runner-tmp"
    base.mkdir()
    return base


def open_in_this_process(path: Path) -> list[str]:
    """Files of ``path``'s name (a store and its -wal and -shm) this process holds open."""
    held = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # the listing's own descriptor, closed by now
            continue
        if target.startswith(str(path)):
            held.append(target)
    return held
