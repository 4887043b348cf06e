"""The README's set-up: two commands, the second the one CI runs; and every command has help.

The manual in docs/ (and the README's links into it, its size, the commands it shows and
the store page's schema) is checked in tests/test_docs.py."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def test_readme_shows_exactly_two_setup_commands():
    setup = README.split("## Set-up: two commands", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)```", setup, flags=re.S)
    assert len(blocks) == 2
    assert all(len(b.strip().splitlines()) == 1 for b in blocks)
    assert blocks[1].strip() == "bash scripts/test.sh"


def test_ci_runs_the_readme_test_command():
    assert "bash scripts/test.sh" in (ROOT / ".ci" / "run").read_text()


def test_every_command_has_help_text():
    from click.testing import CliRunner

    from campaign.cli import cli

    import click

    seen = []

    def walk(group, path):
        # list_commands/get_command, not .commands: the group imports a command on first use.
        ctx = click.Context(group, info_name=path[-1])
        for name in group.list_commands(ctx):
            command = group.get_command(ctx, name)
            seen.append(" ".join(path + [name]))
            assert command.help or command.short_help, f"{' '.join(path + [name])} has no help"
            if isinstance(command, click.Group):
                walk(command, path + [name])

    walk(cli, ["campaign"])
    assert {"campaign coding", "campaign db upgrade", "campaign tasks check"} <= set(seen), seen
    assert CliRunner().invoke(cli, ["--help"]).exit_code == 0
