"""The `campaign` command group: every command, each imported when it is used.

Importing every command costs a second at start-up (the campaign runner, the
replay server, the view's web framework); `campaign report` or a usage error
needs none of that. So the group knows each command by where it lives and
imports that module only when the command runs, or when ``--help`` lists them.
"""

from __future__ import annotations

import importlib

import click

from campaign import __version__

# name -> "module:attribute" of its click command.
COMMANDS = {
    "coding": "campaign.cli.coding:coding",
    "db": "campaign.cli.db:db",
    "export": "campaign.cli.report:export",
    "plan": "campaign.cli.plan:plan",
    "power": "campaign.cli.power:power",
    "probe": "campaign.cli.probe:probe",
    "profiler": "campaign.cli.profiler:profiler",
    "recover": "campaign.cli.recover:recover",
    "replay-server": "campaign.cli.replay:replay_server",
    "report": "campaign.cli.report:report",
    "sql": "campaign.cli.sql:sql",
    "tasks": "campaign.cli.tasks:tasks",
    "verify": "campaign.cli.verify:verify",
    "view": "campaign.cli.view:view",
    "worker": "campaign.cli.worker:worker",
}


class CommandsOnUse(click.Group):
    """A group whose commands (``COMMANDS``) are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in COMMANDS and cmd_name not in self.commands:
            module, _, attribute = COMMANDS[cmd_name].partition(":")
            self.add_command(getattr(importlib.import_module(module), attribute), cmd_name)
        return super().get_command(ctx, cmd_name)


@click.group(cls=CommandsOnUse, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="campaign")
def cli() -> None:
    """Run repeated, paired A/B trials of coding agents and report the difference."""
