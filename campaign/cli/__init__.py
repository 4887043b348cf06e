"""The `campaign` command line: thin commands that parse, call the core, map errors."""

from __future__ import annotations

import click

from campaign import __version__
from campaign.cli.db import db
from campaign.cli.sql import sql
from campaign.cli.tasks import tasks


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="campaign")
def cli() -> None:
    """Run repeated, paired A/B trials of coding agents and report the difference."""


for command in (db, sql, tasks):
    cli.add_command(command)


def main() -> None:
    cli(prog_name="campaign")
