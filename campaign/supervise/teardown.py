"""Teardown vocabulary: budget, verdicts, outcomes and the private cleanup log.

The spec's shutdown: TERM to the runtime and the owned process groups with a
5 s grace (skipped as soon as everything has exited), then a bounded forced
exit, then credential-free offline recovery, all inside a 35 s allowance.
When the agent left nothing behind (every member exited, the attempt's cgroup
reports ``populated 0``, and the subreaper has no child at all) cleanup is
proven at once: no signal, no grace, no recovery process. The algorithm
that reaches a verdict is in ``shutdown``.
"""

from __future__ import annotations

import datetime as dt
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field

from campaign.isolation import PrivateRoot
from campaign.vocabulary import TEARDOWN_OUTCOMES, TEARDOWN_REASONS

# The bounded words of a teardown verdict (one source: campaign.vocabulary).
OUTCOMES = TEARDOWN_OUTCOMES
REASONS = TEARDOWN_REASONS


@dataclass(frozen=True)
class TeardownBudget:
    """Time bounds, injectable so tests run fast; the defaults are the spec's."""

    grace: float = 5.0  # TERM grace for the runtime and process groups
    kill_wait: float = 10.0  # bounded wait after SIGKILL / cgroup.kill
    total: float = 35.0  # whole cleanup allowance, recovery included
    poll: float = 0.02  # how often exits are checked while waiting
    run_grace: float = 2.0  # TERM -> KILL for a deadline-owned command that timed out
    sweep_interval: float = 0.25  # descendant discovery while waiting on a command
    recovery: bool = True  # run the offline recovery process (the spec requires it)


@dataclass(frozen=True)
class RunResult:
    """A deadline-owned command's result. ``exit_code`` is None when it was stopped at
    the deadline; negative values are the signal that ended it."""

    exit_code: int | None
    timed_out: bool
    wall_seconds: float
    # Stopped before its deadline because the caller's ``stop_when`` said so.
    stopped: bool = False


@dataclass(frozen=True)
class TeardownVerdict:
    cleanup_complete: bool
    outcome: str
    containment: str
    survivors: int
    members: int = 0
    seconds: float = 0.0
    reasons: tuple[str, ...] = field(default=())
    # What teardown had to do: "term", "kill", "recovery" in order; none when the proof
    # was immediate (every member exited, the cgroup empty, no child left).
    phases: tuple[str, ...] = field(default=())

    @property
    def stop_reason(self) -> str | None:
        """What the caller records when it must stop admitting later trials."""
        return None if self.cleanup_complete else "cleanup_unverified"


class CleanupLog:
    """``cleanup.log`` inside the private root, opened relative to a pinned root
    descriptor with O_NOFOLLOW. Local evidence only: never copied to a report,
    never given secrets or credentials."""

    def __init__(self, root: PrivateRoot, clock: Callable[[], object]) -> None:
        self.root = root
        self.clock = clock
        self.lines: list[str] = []

    def __call__(self, message: str) -> None:
        now = self.clock()
        stamp = now.isoformat(timespec="milliseconds") if isinstance(now, dt.datetime) else str(now)
        self.lines.append(f"{stamp} {message}")

    def flush(self) -> bool:
        if not self.lines:
            return True
        try:
            dfd = os.open(self.root.path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            return False
        try:
            st = os.fstat(dfd)
            if (st.st_dev, st.st_ino) != (self.root.dev, self.root.ino):
                return False
            # O_NONBLOCK: a FIFO the agent planted under this name must fail the open, not hang teardown.
            fd = os.open("cleanup.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o600, dir_fd=dfd)
            try:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    return False
                os.write(fd, ("\n".join(self.lines) + "\n").encode("utf-8", "replace"))
            finally:
                os.close(fd)
            self.lines.clear()
            return True
        except OSError:
            return False
        finally:
            os.close(dfd)
