"""What every command shares: the --db option, output directories and the error-to-exit-code mapping."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import click

from campaign.cli import EXIT_INTERRUPTED
from campaign.cli.rerun import rerun_command
from campaign.errors import CampaignError, Interrupted, RerunWith, UsageProblem

db_option = click.option(
    "--db",
    "db",
    envvar="CAMPAIGN_DB",
    metavar="URL|PATH",
    help="Store: a SQLAlchemy URL or a SQLite file path (default: $CAMPAIGN_DB, else ~/.local/share/campaign/campaign.db).",
)


class OutputDir(click.Path):
    """A directory the command creates or writes into, refused before anything runs when it cannot be.

    Permission bits stop nothing for root, so the nearest existing ancestor must
    be a directory this process may write into (a regular file or a read-only
    place such as /proc/self is refused).
    """

    def __init__(self) -> None:
        super().__init__(file_okay=False, path_type=Path)

    def convert(self, value, param, ctx):
        path = super().convert(value, param, ctx)
        probe = Path(path).expanduser().absolute()
        while not probe.exists() and probe != probe.parent:
            probe = probe.parent
        if not probe.is_dir():
            self.fail(f"{probe} is not a directory, so {path} cannot be created; choose a directory you can write to", param, ctx)
        if not os.access(probe, os.W_OK | os.X_OK):
            self.fail(f"{probe} is not writable; choose a directory you can write to", param, ctx)
        return path


@contextlib.contextmanager
def core_errors() -> Iterator[None]:
    """Turn the engine's exceptions into click's: usage problems exit 2, the rest 1."""
    try:
        yield
    except Interrupted as exc:
        click.echo(f"interrupted: {exc}", err=True)
        sys.exit(EXIT_INTERRUPTED)
    except RerunWith as exc:
        raise click.UsageError(f"{exc}: {rerun_command(*exc.add, drop=exc.drop)}") from None
    except UsageProblem as exc:
        raise click.UsageError(str(exc)) from None
    except CampaignError as exc:
        raise click.ClickException(str(exc)) from None
