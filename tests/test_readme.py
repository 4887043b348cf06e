"""The README documents the real schema and the real commands."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def test_schema_block_matches_a_freshly_migrated_store():
    import importlib.util

    spec = importlib.util.spec_from_file_location("readme_schema", ROOT / "scripts" / "readme_schema.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.render(README) == README, "README schema is stale: run python scripts/readme_schema.py"


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

    def walk(group, path):
        for name, command in group.commands.items():
            assert command.help or command.short_help, f"{' '.join(path + [name])} has no help"
            if hasattr(command, "commands"):
                walk(command, path + [name])

    walk(cli, ["campaign"])
    assert CliRunner().invoke(cli, ["--help"]).exit_code == 0
