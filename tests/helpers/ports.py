"""Loopback ports for tests that run beside other tests (pytest-xdist workers).

A port taken from the OS and closed is anyone's again: another worker's server can
take the number before ours binds it, or start answering where a test meant nothing
to listen. So a test that needs a dead port holds it (the ``dead_port`` fixture).
"""

from __future__ import annotations

import socket


class DeadPort:
    """A loopback port that refuses every connection until released: bound (without
    SO_REUSEADDR, so no other socket can bind it) but never listening."""

    def __init__(self) -> None:
        self._held: socket.socket | None = socket.socket()
        self._held.bind(("127.0.0.1", 0))
        self.number: int = self._held.getsockname()[1]

    def release(self) -> None:
        """Let a server of the test's own bind the number (the provider comes back)."""
        if self._held is not None:
            self._held.close()
            self._held = None

    def __enter__(self) -> DeadPort:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
