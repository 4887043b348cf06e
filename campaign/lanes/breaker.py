"""The circuit breaker: on a provider's bad day, stop paying for attempts it will fail.

An attempt the provider ended (``provider_error``) has no verdict and its trial
runs again, so a failing provider would otherwise be retried forever, or burn
every trial's whole deadline when it is down. The breaker, one per run, halts a
provider when

* its upstream does not accept a TCP connection, checked before each attempt
  (a dead upstream costs a connect timeout, not a deadline per trial), or
* ``IN_A_ROW`` of its attempts in a row ended on provider faults.

A halted provider admits nothing more in this run; its trials stay scheduled,
so ``--resume`` once the provider recovers finishes them. Other providers go
on. Every trial also has a bound: after ``MAX_FAULT_ATTEMPTS`` provider-fault
attempts it gets no more and is recorded ``not_attempted``
(``fault_attempts_exhausted``). The counts of consecutive faults live in the run,
not the store, so a resume after recovery starts with a clean slate.
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from campaign.profiler.faults import describe
from campaign.providers import REPLAY

IN_A_ROW = 3
MAX_FAULT_ATTEMPTS = 3
CONNECT_TIMEOUT_S = 5.0

Connect = Callable[[str, int, float], None]


def _connect(host: str, port: int, timeout: float) -> None:
    socket.create_connection((host, port), timeout=timeout).close()


def unreachable(upstream: str | None, connect: Connect = _connect, timeout: float = CONNECT_TIMEOUT_S) -> str | None:
    """Why ``upstream`` (a base URL) accepts no connection, or None when it does. The
    replay provider and a route without an upstream have nothing to check."""
    if upstream is None or upstream == REPLAY:
        return None
    parts = urlsplit(upstream)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        connect(parts.hostname or "", port, timeout)
    except socket.gaierror:
        return f"its upstream {parts.hostname} has no address"
    except TimeoutError:
        return f"its upstream {parts.hostname}:{port} did not accept a connection within {timeout:g} s"
    except OSError as exc:
        return f"its upstream {parts.hostname}:{port} refused the connection ({exc.strerror or type(exc).__name__})"
    return None


@dataclass(frozen=True)
class Halt:
    """A provider the breaker halted, and what the engine saw."""

    provider: str
    why: str

    def line(self) -> str:
        return f"{self.provider}: {self.why}"


@dataclass
class Breaker:
    in_a_row: int = IN_A_ROW
    connect: Connect = _connect
    halted: dict[str, Halt] = field(default_factory=dict)
    _faults: dict[str, list[Mapping[str, int]]] = field(default_factory=dict)

    def check(self, name: str, upstream: str | None) -> Halt | None:
        """Before an attempt: the provider's halt, if it is (or now becomes) halted."""
        if name in self.halted:
            return self.halted[name]
        why = unreachable(upstream, self.connect)
        if why is not None:
            self.halted[name] = Halt(name, why)
        return self.halted.get(name)

    def record(self, name: str, outcome: str, faults: Mapping[str, int] | None) -> Halt | None:
        """After an attempt: a provider fault extends the run of faults, anything the agent
        or the operator ended breaks it; ``in_a_row`` of them halt the provider."""
        if outcome == "interrupted":
            return None
        if outcome != "provider_error":
            self._faults.pop(name, None)
            return None
        run = self._faults.setdefault(name, [])
        run.append(dict(faults or {}))
        if len(run) >= self.in_a_row:
            seen: dict[str, int] = {}
            for counts in run:
                for fault, n in counts.items():
                    seen[fault] = seen.get(fault, 0) + n
            self.halted[name] = Halt(name, f"{len(run)} attempts in a row ended on provider errors ({describe(seen)})")
        return self.halted.get(name)
