"""The `campaign` command line: thin commands that parse, call the core, map errors.

``main`` installs the stop-signal handling before it imports a single command:
Ctrl-C, SIGTERM, SIGHUP and SIGQUIT then end every command the same way (what
was observed is persisted, one line says how to continue, exit 130), whether
they land at start-up, mid-run or while it shuts down. This package therefore
imports the commands only on first use (``from campaign.cli import cli``).
"""

from __future__ import annotations

import contextlib
import signal
import sys

EXIT_INTERRUPTED = 130


def main() -> None:
    from campaign import testhooks
    from campaign.errors import Interrupted
    from campaign.supervise.interrupt import SIGNALS, hold

    intr = hold()
    for stream in (sys.stdout, sys.stderr):
        # A path whose name is not UTF-8 (os.fsdecode's surrogates) is printed as its own
        # bytes, as ls would, instead of failing the line that names it.
        with contextlib.suppress(AttributeError, ValueError):
            stream.reconfigure(errors="surrogateescape")
    try:
        try:
            testhooks.reached("start")
            from campaign.cli.commands import cli

            cli(prog_name="campaign")
        finally:
            intr.close()  # the command has said how it ended; a later signal changes nothing
            # Python's own shutdown puts the default handlers back a moment before the
            # process ends, and a stop signal then would kill it (-15) after it said how
            # it ended. Blocked from here on, such a signal dies with the process.
            signal.pthread_sigmask(signal.SIG_BLOCK, SIGNALS)
    except Interrupted as exc:
        # Landed outside a command's own handling: while importing, parsing, or exiting.
        _interrupted(str(exc))
    except Exception:
        if intr.signal is None:
            raise
        # The stop landed inside code that wrapped it in an error of its own (an import
        # half done, a class being made): it is still the operator's stop.
        _interrupted(f"received {signal.Signals(intr.signal).name}")


def _interrupted(why: str) -> None:
    from campaign.cli.rerun import continue_command

    with contextlib.suppress(OSError):  # a closed terminal (SIGHUP) cannot show it
        print(f"interrupted: {why}; to continue, run: {continue_command()}", file=sys.stderr)
    sys.exit(EXIT_INTERRUPTED)


def __getattr__(name: str):
    if name == "cli":
        from campaign.cli.commands import cli

        return cli
    raise AttributeError(f"module 'campaign.cli' has no attribute {name!r}")
