"""SIGINT, SIGTERM, SIGHUP and SIGQUIT become ``Interrupted``, raised only at a safe point.

A closed terminal (SIGHUP) or Ctrl-\\ (SIGQUIT) is an operator stopping the run
like Ctrl-C: the attempt in flight is torn down and recorded, the run exits 130,
and ``--resume`` continues it. Only SIGKILL leaves work unfinalized.

``interruptible()`` installs the handlers (nesting is fine: only the outermost
installs and restores). The command line installs them with ``hold()`` first
thing, before it imports anything that can be interrupted, and keeps them until
the process exits: a stop at start-up or shut-down is an operator's stop too,
never a default death (-15), a ``KeyboardInterrupt`` traceback or click's
"Aborted!". ``close()`` at the very end turns later signals into no-ops, since
the command has already said how it ended. A signal raises ``Interrupted`` at once unless the
main thread is inside ``critical()``; there it is deferred until the outermost
critical section ends. Spawn-and-record, teardown and the caller's persisting
of the attempt row run inside critical sections, so an interruption can stop
waiting, but never half-record a ledger row or skip teardown. Only the first
signal is raised; later ones are remembered (``Interruption.signal``) but do
not abort the bounded teardown that is already running.

    with interruptible() as intr:
        try:
            with Supervisor(...) as sup:
                ...
        except Interrupted:
            with intr.shield():
                repository.finish_attempt(..., status="interrupted")
            sys.exit(130)
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from campaign.errors import Interrupted

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)


class Interruption:
    """Shared state of the active ``interruptible()`` (one per process)."""

    def __init__(self) -> None:
        self.depth = 0  # critical-section nesting
        self.installed = 0  # interruptible() nesting
        self.signal: int | None = None
        self.delivered = False
        self._saved: dict[int, object] = {}

    @property
    def interrupted(self) -> bool:
        return self.signal is not None

    def check(self) -> None:
        """A safe point: raise a pending interruption now."""
        if self.signal is not None and not self.delivered and self.depth == 0 and self.installed:
            self.delivered = True
            raise Interrupted(f"received {signal.Signals(self.signal).name}")

    def shield(self) -> _Critical:
        return critical()

    def close(self) -> None:
        """The command has ended and said so: a later signal is remembered, never raised."""
        self.delivered = True

    def _handle(self, signum: int, _frame) -> None:
        if self.signal is None:
            self.signal = signum
        if self.depth == 0 and not self.delivered:
            self.delivered = True
            raise Interrupted(f"received {signal.Signals(signum).name}")


_STATE = Interruption()


def state() -> Interruption:
    return _STATE


@contextmanager
def interruptible(signals: tuple[int, ...] = SIGNALS) -> Iterator[Interruption]:
    """Convert the stop signals into ``Interrupted`` for the duration (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield _STATE
        return
    if _STATE.installed == 0:
        _install(signals)
    _STATE.installed += 1
    try:
        yield _STATE
    finally:
        _STATE.installed -= 1
        if _STATE.installed == 0:
            for sig, old in _STATE._saved.items():
                signal.signal(sig, old)  # type: ignore[arg-type]
            _STATE._saved = {}


def hold(signals: tuple[int, ...] = SIGNALS) -> Interruption:
    """Install the handlers for the rest of the process's life (main thread only): the
    command line's entry calls it before anything else, so no later ``interruptible()``
    ever restores the defaults."""
    if threading.current_thread() is threading.main_thread() and _STATE.installed == 0:
        _install(signals)
        _STATE.installed = 1
    return _STATE


def _install(signals: tuple[int, ...]) -> None:
    _STATE.signal = None
    _STATE.delivered = False
    _STATE._saved = {sig: signal.signal(sig, _STATE._handle) for sig in signals}


class _Critical:
    """Defers ``Interrupted`` until the outermost critical section ends."""

    def __init__(self) -> None:
        # Signal handlers run in the main thread only; other threads never defer them.
        self._main = threading.current_thread() is threading.main_thread()

    def __enter__(self) -> None:
        if self._main:
            _STATE.depth += 1

    def __exit__(self, exc_type, exc, tb) -> bool:
        if self._main:
            _STATE.depth -= 1
            if exc_type is None:
                _STATE.check()
        return False


def critical() -> _Critical:
    return _Critical()
