"""The `campaign` command group: every command, each imported when it is used.

Importing every command costs a second at start-up (the campaign runner, the
replay server, the view's web framework); `campaign --help`, `campaign report`
or a usage error needs none of that. So the group knows each command by where
it lives and by its one-line help, and imports a command's module only when
that command runs. The one-liners here are checked against each command's own
docstring by tests/test_cli_help.py, so they cannot drift.
"""

from __future__ import annotations

import importlib
from typing import NamedTuple

import click

from campaign import __version__


class Entry(NamedTuple):
    where: str  # "module:attribute" of its click command
    summary: str  # the docstring's first sentence, which `campaign --help` shortens to fit


COMMANDS = {
    "coding": Entry(
        "campaign.cli.coding:coding",
        "Run the benchmark: nonpaired, paired (plan, then --live), or as a --campaign.",
    ),
    "db": Entry(
        "campaign.cli.db:db",
        "Manage the store's schema and backups, and look at its tables.",
    ),
    "export": Entry(
        "campaign.cli.report:export",
        "Write the sanitized report pair for sharing; refuses a plan-only campaign.",
    ),
    "plan": Entry(
        "campaign.cli.plan:plan",
        "Work with paired plan templates and approved plans (no model calls).",
    ),
    "power": Entry(
        "campaign.cli.power:power",
        "Plan repetitions and spend from a pilot (or stated assumptions) before paying.",
    ),
    "probe": Entry(
        "campaign.cli.probe:probe",
        "Run the client once per variant against the replay provider and show what each sends.",
    ),
    "profiler": Entry(
        "campaign.cli.profiler:profiler",
        "Profile model-request payloads offline.",
    ),
    "recover": Entry(
        "campaign.cli.recover:recover",
        "Signal only ledger members whose birth-bound identity still matches, and prove them gone.",
    ),
    "replay-server": Entry(
        "campaign.cli.replay:replay_server",
        "Serve scripted model replies on loopback until SIGTERM; prints 'replay listening on HOST:PORT'.",
    ),
    "report": Entry(
        "campaign.cli.report:report",
        "Write a campaign's sanitized JSON report with its Markdown summary and forest plot (default: the latest campaign).",
    ),
    "sql": Entry(
        "campaign.cli.sql:sql",
        "Run one read-only SQL statement against the store and print the rows.",
    ),
    "tasks": Entry(
        "campaign.cli.tasks:tasks",
        "List, inspect and check the tasks: the built-in twelve, or a --task-suite DIR.",
    ),
    "verify": Entry(
        "campaign.cli.verify:verify",
        "Check that no attempt row was edited, deleted or reordered.",
    ),
    "view": Entry(
        "campaign.cli.view:view",
        "Serve a read-only page of the campaigns on loopback and print its URL; Ctrl-C stops it.",
    ),
    "worker": Entry(
        "campaign.cli.worker:worker",
        "Claim a provider's lease, run its trials in schedule order, and repeat until none is left.",
    ),
}


class CommandsOnUse(click.Group):
    """A group whose commands (``COMMANDS``) are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in COMMANDS and cmd_name not in self.commands:
            module, _, attribute = COMMANDS[cmd_name].where.partition(":")
            self.add_command(getattr(importlib.import_module(module), attribute), cmd_name)
        return super().get_command(ctx, cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # click's own listing imports every command to read its docstring.
        names = self.list_commands(ctx)
        limit = formatter.width - 6 - max(map(len, names), default=0)
        rows = [(name, short_help(self, name, limit)) for name in names]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


def short_help(group: click.Group, name: str, limit: int) -> str:
    """A command's line in the listing: its own when it is loaded, else from ``COMMANDS``."""
    if name in group.commands:
        return group.commands[name].get_short_help_str(limit)
    # An empty command with the same help shortens it exactly as the real one would.
    return click.Command(name, help=COMMANDS[name].summary).get_short_help_str(limit)


@click.group(cls=CommandsOnUse, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="campaign")
def cli() -> None:
    """Run repeated, paired A/B trials of coding agents and report the difference."""
