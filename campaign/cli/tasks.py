"""`campaign tasks`: the benchmark's tasks (never the hidden verifiers' content)."""

from __future__ import annotations

import click

from campaign import benchmark
from campaign.cli.common import core_errors
from campaign.errors import UnknownTask


@click.group()
def tasks() -> None:
    """List and inspect the benchmark tasks.

    \b
    Examples:
      campaign tasks list
      campaign tasks show semver-precedence
    """


@tasks.command("list")
def list_() -> None:
    """One line per task: name, kind, fixture digest prefix, title.

    \b
    Example:
      campaign tasks list
    """
    rows = [(t.name, t.kind, benchmark.fixture_digest(t)[:12], t.title) for t in benchmark.all_tasks()]
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    for row in rows:
        marker = "  (recovery)" if benchmark.get_task(row[0]).requires_failed_tool_call else ""
        click.echo("  ".join(v.ljust(w) for v, w in zip(row, widths)) + "  " + row[3] + marker)


@tasks.command()
@click.argument("name")
def show(name: str) -> None:
    """The task's prompt, fixture files and fixture digest (NAME from `campaign tasks list`).

    \b
    Example:
      campaign tasks show semver-precedence
    """
    with core_errors():
        if name not in benchmark.task_names():
            raise UnknownTask(f"unknown task {name!r}; `campaign tasks list` shows every task name", option="NAME")
        task = benchmark.get_task(name)
    click.echo(f"name: {task.name}\ntitle: {task.title}\nkind: {task.kind}")
    click.echo(f"requires_failed_tool_call: {str(task.requires_failed_tool_call).lower()}")
    click.echo(f"fixture_digest: {benchmark.fixture_digest(task)}")
    click.echo("fixture files:")
    for rel in benchmark.fixture_files(task):
        click.echo(f"  {rel}")
    click.echo("prompt:")
    click.echo(task.prompt.rstrip())
