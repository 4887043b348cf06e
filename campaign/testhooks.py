"""A test hook: stop this process at a named step boundary. Inert unless a test sets it.

The engine calls ``reached(BOUNDARY)`` at each step boundary of a run, so a
test can land a SIGKILL (or a stop signal) exactly there, instead of sleeping
and hoping. A test sets, for one process only::

    CAMPAIGN_TEST_STOP_AT=BOUNDARY[:N][:SIGNAL]

and the N-th time (default: the first) that process reaches BOUNDARY it sends
itself SIGNAL (``KILL``, the default, or ``TERM``, ``INT``, ``HUP``, ``QUIT``).
A stop signal behaves as one from outside arriving at that instant: inside a
critical section it waits for the section's end. The variable is read once, at
import; unset, ``reached`` returns at once, and a value that names no boundary
never fires. Stores, reports and exit codes never depend on it. Processes that
inherit the runner's environment (local ``campaign worker`` processes) act on
it too; agents and recovery get an allowlisted environment and never see it.

The boundaries, in the order a run passes them:

====================  ==========================================================
``start``             the CLI entry, signal handling installed, nothing imported
``leased``            the store open and the campaign's runner lease taken
``admitted``          a trial admitted, before its attempt row exists
``attempt-row``       the attempt row committed (status running)
``contained``         the supervisor entered: its cgroup made and recorded
``ledger``            a ledger row committed, its process still held at the gate
``ledger-read``       the supervisor reading its ledger back (first: verifying it
                      before the client runs; then at teardown)
``client``            the client returned (its counters recorded)
``verifier``          the hidden verifier returned
``teardown``          every process stopped and the verdict recorded
``finalized``         the attempt row sealed (finished or interrupted)
``between``           after one trial, before the next is admitted
``last``              after the last trial, before the campaign is closed
``exit``              the command's last line printed
``report``            a report's aggregates handed to a child (``campaign report``,
                      ``export``), before its rows are read
``recovering``        ``campaign recover`` reading an attempt's ledger
====================  ==========================================================
"""

from __future__ import annotations

import os
import signal

ENV = "CAMPAIGN_TEST_STOP_AT"
BOUNDARIES = ("start", "leased", "admitted", "attempt-row", "contained", "ledger", "ledger-read", "client", "verifier", "teardown", "finalized", "between", "last", "exit", "report", "recovering")
SIGNALS = {"KILL": signal.SIGKILL, "TERM": signal.SIGTERM, "INT": signal.SIGINT, "HUP": signal.SIGHUP, "QUIT": signal.SIGQUIT}


def parse(value: str | None) -> tuple[str, int, int] | None:
    """(boundary, n, signal) from the variable's value, or None when it names nothing."""
    if not value:
        return None
    name, _, rest = value.partition(":")
    count, _, sig = rest.partition(":")
    if name not in BOUNDARIES or (count and not count.isdigit()) or (sig and sig not in SIGNALS):
        return None
    return name, max(int(count or 1), 1), SIGNALS[sig or "KILL"]


_TARGET = parse(os.environ.get(ENV))
_seen = 0


def reached(boundary: str) -> None:
    """Called at each step boundary; signals this process when the test asked for it."""
    global _seen
    if _TARGET is None or boundary != _TARGET[0]:
        return
    _seen += 1
    if _seen == _TARGET[1]:
        os.kill(os.getpid(), _TARGET[2])
