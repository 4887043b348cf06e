"""The `campaign` command line: thin commands that parse, call the core, map errors.

``main`` installs the stop-signal handling before it imports a single command:
Ctrl-C, SIGTERM, SIGHUP and SIGQUIT then end every command the same way (what
was observed is persisted, one line says how to continue, exit 130), whether
they land at start-up, mid-run or while it shuts down. This package therefore
imports the commands only on first use (``from campaign.cli import cli``).
"""

from __future__ import annotations

import contextlib
import sys

EXIT_INTERRUPTED = 130


def main() -> None:
    from campaign import testhooks
    from campaign.errors import Interrupted
    from campaign.supervise.interrupt import hold

    intr = hold()
    try:
        try:
            testhooks.reached("start")
            from campaign.cli.commands import cli

            cli(prog_name="campaign")
        finally:
            intr.close()  # the command has said how it ended; a later signal changes nothing
    except Interrupted as exc:
        # Landed outside a command's own handling: while importing, parsing, or exiting.
        from campaign.cli.rerun import continue_command

        with contextlib.suppress(OSError):  # a closed terminal (SIGHUP) cannot show it
            print(f"interrupted: {exc}; to continue, run: {continue_command()}", file=sys.stderr)
        sys.exit(EXIT_INTERRUPTED)


def __getattr__(name: str):
    if name == "cli":
        from campaign.cli.commands import cli

        return cli
    raise AttributeError(f"module 'campaign.cli' has no attribute {name!r}")
