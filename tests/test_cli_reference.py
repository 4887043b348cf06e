"""docs/cli.md is the command-line reference generated from the commands themselves."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import click

from campaign.cli import cli

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "docs" / "cli.md"


def generator():
    spec = importlib.util.spec_from_file_location("cli_reference", ROOT / "scripts" / "cli_reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_checked_in_reference_is_the_commands_own():
    assert generator().render(cli) == REFERENCE.read_text(), "docs/cli.md is stale: run python scripts/cli_reference.py"


def test_every_command_and_option_is_in_it():
    reference = REFERENCE.read_text()
    for path, command in generator().walk(cli, ["campaign"]):
        assert f"\n## {' '.join(path)}\n" in reference, path
        for option in command.params:
            if isinstance(option, click.Option) and not option.hidden:
                assert f"`{option.opts[0]}`" in reference.split(f"\n## {' '.join(path)}\n", 1)[1].split("\n## ", 1)[0], (path, option.opts)


def test_a_changed_option_help_or_default_changes_the_reference(monkeypatch):
    module = generator()
    before = module.render(cli)
    probe = cli.get_command(click.Context(cli), "probe")
    task = next(p for p in probe.params if p.name == "task_name")
    monkeypatch.setattr(task, "help", "Another help text.")
    changed = module.render(cli)
    assert changed != before and "`--task` `TEXT` (default: `atomic-state-save`): Another help text." in changed
    monkeypatch.setattr(task, "default", "semver-precedence")
    assert "(default: `semver-precedence`)" in module.render(cli)
