"""A Harbor task's paths in one attempt: ``/app`` for the agent, ``/tests`` and
``/logs/verifier`` for the verifier, and the reward file it leaves there.

Every directory the maps bind is made by the engine in the private root and
pinned on creation: the scratch the new roots are built on and the agent's logs
before any agent code runs, the tests and the verifier's logs once the agent's
processes are gone (``install_harbor_tests`` replaces whatever the agent left at
those names). A member is started with a map only after the engine re-checked
that each bound path is still the directory it pinned (``rootmap.enter``), and
the reward is read through the logs directory's own descriptor.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from campaign import benchmark
from campaign.benchmark import Task
from campaign.lanes.pinned_root import PinnedRoot
from campaign.supervise import pinned, rootmap

APP = "/app"
SCRATCH = "rootmap"
AGENT_LOGS = "agent-logs"


@dataclass
class HarborPaths:
    """One attempt's pinned Harbor directories; ``close`` releases the logs descriptor."""

    held: PinnedRoot
    scratch: tuple[int, int]
    agent_logs: tuple[int, int]
    logs_fd: int = -1
    _maps: dict[str, rootmap.RootMap] = field(default_factory=dict)

    @classmethod
    def prepare(cls, held: PinnedRoot) -> HarborPaths:
        """Before any agent code runs: the scratch directory and the agent's logs."""
        return cls(held, _made(held, SCRATCH), _made(held, AGENT_LOGS))

    def client_map(self) -> rootmap.RootMap:
        """The agent's root: the working copy at /app, its own logs at /logs/agent."""
        if "client" not in self._maps:
            root = self.held.root
            binds = (rootmap.Bind(root.cwd, "app", self.held.work_identity), rootmap.Bind(root.path / AGENT_LOGS, "logs/agent", self.agent_logs))
            self._maps["client"] = rootmap.plan(root.path / SCRATCH, self.scratch, binds, APP)
        return self._maps["client"]

    def verifier_map(self, task: Task) -> rootmap.RootMap:
        """Install the tests and a fresh logs directory, pin them, and map them with /app."""
        held, root = self.held, self.held.root
        benchmark.install_harbor_tests(task, held.root_fd)
        tests = _pinned_identity(held, benchmark.HARBOR_TESTS)
        self.logs_fd = pinned.open_dir(held.root_fd, benchmark.HARBOR_LOGS)
        binds = (
            rootmap.Bind(root.cwd, "app", held.work_identity),
            rootmap.Bind(root.path / benchmark.HARBOR_TESTS, "tests", tests, readonly=True),
            rootmap.Bind(root.path / benchmark.HARBOR_LOGS, "logs/verifier", pinned.identity(os.fstat(self.logs_fd))),
        )
        return rootmap.plan(root.path / SCRATCH, self.scratch, binds, APP)

    def reward(self) -> bool | None:
        return benchmark.read_reward(self.logs_fd) if self.logs_fd >= 0 else None

    def close(self) -> None:
        if self.logs_fd >= 0:
            os.close(self.logs_fd)
            self.logs_fd = -1


def _made(held: PinnedRoot, name: str) -> tuple[int, int]:
    os.mkdir(name, 0o700, dir_fd=held.root_fd)
    return _pinned_identity(held, name)


def _pinned_identity(held: PinnedRoot, name: str) -> tuple[int, int]:
    fd = pinned.open_dir(held.root_fd, name)
    try:
        return pinned.identity(os.fstat(fd))
    finally:
        os.close(fd)
