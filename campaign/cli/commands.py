"""The `campaign` command group: every command, registered on one click group."""

from __future__ import annotations

import click

from campaign import __version__
from campaign.cli.coding import coding
from campaign.cli.db import db
from campaign.cli.plan import plan
from campaign.cli.power import power
from campaign.cli.probe import probe
from campaign.cli.profiler import profiler
from campaign.cli.recover import recover
from campaign.cli.replay import replay_server
from campaign.cli.report import export, report
from campaign.cli.sql import sql
from campaign.cli.tasks import tasks
from campaign.cli.verify import verify
from campaign.cli.worker import worker
from campaign.cli.view import view


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="campaign")
def cli() -> None:
    """Run repeated, paired A/B trials of coding agents and report the difference."""


for command in (db, sql, tasks):
    cli.add_command(command)
cli.add_command(coding)
cli.add_command(plan)
cli.add_command(power)
cli.add_command(report)
cli.add_command(export)
cli.add_command(recover)
cli.add_command(verify)
cli.add_command(replay_server)
cli.add_command(profiler)
cli.add_command(probe)
cli.add_command(worker)
cli.add_command(view)
