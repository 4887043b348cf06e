"""What every command shares: the --db option and the error-to-exit-code mapping."""

from __future__ import annotations

import contextlib
import math
import sys
from collections.abc import Iterator

import click

from campaign.cli import EXIT_INTERRUPTED
from campaign.cli.paths import StoreTarget
from campaign.cli.rerun import rerun_command
from campaign.errors import CampaignError, Interrupted, RerunWith, UsageProblem
from campaign.store import MAX_INTEGER

# The run ended with trials left without a result (a stop rule, a halted provider,
# trials not attempted); stderr says why and how to continue.
EXIT_UNFINISHED = 3

class FiniteRange(click.FloatRange):
    """click's FloatRange, refusing NaN (which passes its bounds: no comparison with NaN holds)."""

    def convert(self, value, param, ctx):
        number = super().convert(value, param, ctx)
        if math.isnan(number):
            self.fail(f"{value!r} is not a number", param, ctx)
        return number


ROW_ID = click.IntRange(1, MAX_INTEGER)
SEED = click.IntRange(-MAX_INTEGER - 1, MAX_INTEGER)

db_option = click.option(
    "--db",
    "db",
    envvar="CAMPAIGN_DB",
    type=StoreTarget(),
    metavar="URL|PATH",
    help="Store: a SQLAlchemy URL or a SQLite file path (default: $CAMPAIGN_DB, else ~/.local/share/campaign/campaign.db).",
)


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
