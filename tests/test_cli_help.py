"""What the commands say: examples in every --help, honest option help, true last lines."""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest

from campaign.cli import cli
from campaign.cli.coding import coding

ROOT = Path(__file__).resolve().parents[1]
# The README and the manual; docs/cli.md is generated from the commands themselves.
PAGES = [ROOT / "README.md", *sorted(p for p in (ROOT / "docs").glob("*.md") if p.name != "cli.md")]


def _commands(group: click.Group, path: list[str]):
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        yield [*path, name], command
        if isinstance(command, click.Group):
            yield from _commands(command, [*path, name])


COMMANDS = [path for path, _ in _commands(cli, [])]


@pytest.mark.parametrize("path", COMMANDS, ids=" ".join)
def test_every_command_help_shows_an_example(runner, path):
    result = runner.invoke(cli, [*path, "--help"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    header = next((i for i, line in enumerate(lines) if line.strip() in ("Example:", "Examples:")), None)
    assert header is not None, f"campaign {' '.join(path)} --help has no example"
    examples = []
    for line in lines[header + 1 :]:
        if not line.strip():
            break
        examples.append(line.strip())
    assert examples and all("campaign " in e for e in examples), examples
    # An example runs this very command (a group's may run any of its subcommands).
    assert any(f"campaign {' '.join(path)}" in e for e in examples), examples


def test_the_walk_sees_every_group_and_leaf():
    assert {"sql", "db tables", "db schema", "tasks show", "coding", "plan digest", "profiler check-cache"} <= {" ".join(p) for p in COMMANDS}


# --- coding --help: what each option applies to --------------------------------------


def _option_help(name: str) -> str:
    (option,) = [p for p in coding.params if p.name == name]
    return option.help


def test_coding_help_does_not_claim_output_is_always_required():
    text = _option_help("output")
    assert not text.startswith("Required.")
    assert "--campaign" in text and "--output-dir" in text


@pytest.mark.parametrize("name", ["repetitions", "seed", "config", "live"])
def test_coding_help_says_which_options_a_campaign_takes(name):
    text = _option_help(name)
    assert "Paired only" not in text
    assert "--campaign" in text


def test_coding_help_keeps_paired_only_where_true():
    for name in ("run_timeout", "profile_python"):
        assert _option_help(name).startswith("Paired only")


# --- README and docs/: where `campaign` comes from ---------------------------------------


def test_pages_say_to_activate_the_venv_before_bare_campaign_commands():
    """A page (README.md or docs/, but the generated reference) that shows a bare `campaign`
    in a command block says first where it comes from; the rest call .venv/bin/campaign."""
    shown = []
    for page in PAGES:
        text = page.read_text()
        fenced = re.finditer(r"```([a-z]*)\n(.*?)```", text, flags=re.S)
        blocks = [(m.start(), m.group(2)) for m in fenced if m.group(1) in ("", "sh")]  # commands, not text or toml
        bare = [start for start, body in blocks if re.search(r"(^|\s|\$\()campaign ", body, flags=re.M)]
        if bare:
            shown.append(page.name)
            activation = text.find(". .venv/bin/activate")
            assert 0 <= activation < bare[0], f"{page.name} shows a bare campaign command before saying to activate .venv"
    assert "paired-plans.md" in shown, shown
    text = (ROOT / "docs" / "paired-plans.md").read_text()
    demo = next(body for body in re.findall(r"```sh\n(.*?)```", text, flags=re.S) if "/tmp/demo" in body)
    assert demo.splitlines()[0] == ". .venv/bin/activate"


# --- what a --campaign run says at the end ----------------------------------------------


def _campaign(out: Path, *extra: str) -> list[str]:
    return ["coding", "--campaign", "--tasks", "semver-precedence", "--repetitions", "1", "--output-dir", str(out), *extra]


def test_a_dry_campaign_names_no_store_it_did_not_create(runner, tmp_path):
    out = tmp_path / "out"
    result = runner.invoke(cli, _campaign(out))
    assert result.exit_code == 0, result.output
    assert not out.exists()
    (store_line,) = [line for line in result.output.splitlines() if line.startswith("store:")]
    assert "nothing written" in store_line and "with --live" in store_line


def test_a_live_campaign_ends_naming_every_report_file(runner, tmp_path):
    out = tmp_path / "out"
    result = runner.invoke(cli, _campaign(out, "--live"))
    assert result.exit_code == 0, result.output
    (report_line,) = [line for line in result.stdout.splitlines() if line.startswith("report:")]
    for suffix in (".json", ".md", ".svg"):
        path = out / f"report{suffix}"
        assert str(path) in report_line and path.is_file()


def test_a_command_imports_only_what_it_uses():
    """`campaign report` (and a usage error) start without importing the campaign runner,
    the replay server or the view's web framework: each command is imported on use."""
    import subprocess
    import sys

    heavy = ("aiohttp", "campaign.lanes.multi_provider", "campaign.replay.app", "campaign.cli.coding")
    code = (
        "import sys\nfrom campaign.cli import cli\n"
        "for args in (['report', '--help'], ['verify', '--no-such-option']):\n"
        "    try:\n        cli(args, prog_name='campaign')\n    except SystemExit:\n        pass\n"
        f"print(sorted(m for m in {heavy!r} if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stdout + done.stderr
    # And every command is still there, in --help and by name.
    listed = subprocess.run([sys.executable, "-m", "campaign", "--help"], capture_output=True, text=True, timeout=60).stdout
    from campaign.cli.commands import COMMANDS

    assert all(re.search(rf"^  {re.escape(name)}\s", listed, flags=re.M) for name in COMMANDS), listed


def test_the_listing_of_commands_says_what_each_command_says_of_itself():
    """`campaign --help` lists commands without importing them: its lines must be theirs."""
    import importlib
    import os
    import subprocess
    import sys

    from campaign.cli.commands import COMMANDS

    for name, entry in COMMANDS.items():
        module, _, attribute = entry.where.partition(":")
        command = getattr(importlib.import_module(module), attribute)
        assert entry.summary == command.get_short_help_str(10_000), name
    # The very listing click writes once every command is loaded (its width is 78 off a terminal).
    ctx = click.Context(cli, info_name="campaign")
    for name in COMMANDS:
        cli.get_command(ctx, name)
    formatter = click.HelpFormatter(width=78)
    click.Group.format_commands(cli, ctx, formatter)
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    listed = subprocess.run([sys.executable, "-m", "campaign", "--help"], capture_output=True, text=True, timeout=60, env=env)
    assert listed.returncode == 0, listed.stderr
    assert formatter.getvalue() in listed.stdout, listed.stdout


# What only a command's callback needs; the four commands below run or list without any.
HEAVY_AT_START = ("sqlalchemy", "alembic", "aiohttp", "numpy", "campaign.lanes")


@pytest.mark.parametrize("argv", [["--help"], ["tasks", "list"], ["sql", "--help"], ["report", "--help"]], ids=" ".join)
def test_everyday_commands_start_without_the_runner_the_store_or_the_statistics(argv, tmp_path):
    """A later module-level import in cli/ (or below what these use) would bring back a second of start-up."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "CAMPAIGN_TASK_CHECKS": str(tmp_path)}
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "campaign", *argv], capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 0, done.stderr
    imported = {line.rsplit("|", 1)[1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert "click" in imported  # -X importtime did report
    assert sorted(m for m in imported if any(m == heavy or m.startswith(heavy + ".") for heavy in HEAVY_AT_START)) == []


def test_a_worker_starts_without_the_report_builder():
    """A `campaign worker` (one per provider in every parallel campaign) claims and runs
    attempts and writes no report: it checks where the report goes, but imports neither the
    report builder nor numpy, which cost it a fifth of its start-up."""
    import subprocess
    import sys

    heavy = ("numpy", "campaign.report.build", "campaign.report.export", "campaign.report.stats")
    code = f"import sys\nimport campaign.cli.worker\nprint(sorted(m for m in {heavy!r} if m in sys.modules))\n"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stdout + done.stderr
