"""Booting an agent's runtime: wait until it announces a loopback port and answers."""

from __future__ import annotations

import http.client
import re
import socket
import time
from collections.abc import Callable
from pathlib import Path

from campaign.agents.profile_model import RuntimeSpec
from campaign.errors import CampaignError
from campaign.isolation import LOOPBACK
from campaign.supervise.supervisor import Process

_POLL = 0.05


class RuntimeBootFailed(CampaignError):
    """The runtime exited, never announced its port, or never answered in time."""


def _announced_port(capture: Path, pattern: re.Pattern[str]) -> int | None:
    try:
        text = capture.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        match = pattern.search(line)
        if match:
            return int(match.group(1))
    return None


def _answers(port: int, spec: RuntimeSpec) -> bool:
    if spec.health.kind == "announced":
        return True
    try:
        if spec.health.kind == "http":
            conn = http.client.HTTPConnection(LOOPBACK, port, timeout=1)
            try:
                conn.request("GET", spec.health.path or "/")
                return 200 <= conn.getresponse().status < 300
            finally:
                conn.close()
        with socket.create_connection((LOOPBACK, port), timeout=1):
            return True
    except OSError:
        return False


def wait_healthy(process: Process, capture: Path, spec: RuntimeSpec, *, timer: Callable[[], float] = time.monotonic, deadline: float) -> int:
    """The runtime's port once it answers on loopback; RuntimeBootFailed otherwise.

    Bounded by the runtime's own boot deadline and by the attempt's deadline,
    whichever comes first.
    """
    pattern = re.compile(spec.health.port_pattern)
    limit = min(deadline, timer() + spec.deadline_seconds)
    while timer() < limit:
        if process.poll() is not None:
            raise RuntimeBootFailed("the runtime exited during boot")
        port = _announced_port(capture, pattern)
        if port is not None and _answers(port, spec):
            return port
        # Polling a file the runtime writes: there is no event to wait on.
        time.sleep(_POLL)
    raise RuntimeBootFailed("the runtime did not become healthy before its deadline")
