"""`campaign tasks`: a suite's tasks (never the hidden verifiers' content), and their check."""

from __future__ import annotations

import sys

import click

from campaign import benchmark, containers
from campaign.benchmark import checks
from campaign.cli.common import core_errors
from campaign.cli.paths import InputDir
from campaign.errors import UnknownTask

suite_option = click.option(
    "--task-suite",
    "task_suite",
    type=InputDir(),
    metavar="DIR",
    help="A directory of task folders (the engine's format or Harbor's) [default: the twelve built-in tasks].",
)


@click.group()
def tasks() -> None:
    """List, inspect and check the tasks: the built-in twelve, or a --task-suite DIR.

    \b
    Examples:
      campaign tasks list
      campaign tasks show semver-precedence
      campaign tasks check --task-suite ~/my-tasks
    """


def _markers(task: benchmark.Task) -> str:
    words = ["recovery"] if task.requires_failed_tool_call else []
    words += ["harbor"] if task.harbor else []
    words += ["needs_image"] if task.needs_image else []
    if task.suite_root is not None and not checks.is_checked(benchmark.task_digest(task)):
        words.append("unchecked")
    return "".join(f"  ({w})" for w in words)


@tasks.command("list")
@suite_option
def list_(task_suite) -> None:
    """One line per task: name, kind, fixture digest prefix, title (and what to know about it).

    \b
    Examples:
      campaign tasks list
      campaign tasks list --task-suite ~/my-tasks
    """
    with core_errors():
        suite = benchmark.suite_of(task_suite)
    if not suite.builtin:
        click.echo(f"task suite {suite.name}: {len(suite.tasks)} tasks", err=True)
    rows = [(t.name, t.kind, benchmark.fixture_digest(t)[:12], t.title) for t in suite.tasks]
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    for task, row in zip(suite.tasks, rows):
        click.echo("  ".join(v.ljust(w) for v, w in zip(row, widths)) + "  " + row[3] + _markers(task))


@tasks.command()
@click.argument("name")
@suite_option
def show(name: str, task_suite) -> None:
    """The task's prompt, fixture files and digests (NAME from `campaign tasks list`).

    \b
    Examples:
      campaign tasks show semver-precedence
      campaign tasks show node-median --task-suite ~/my-tasks
    """
    with core_errors():
        suite = benchmark.suite_of(task_suite)
        if name not in suite.names():
            raise UnknownTask(f"unknown task {name!r} in {suite.describe()}; `campaign tasks list` shows every task name", option="NAME")
        task = suite.get(name)
    click.echo(f"name: {task.name}\ntitle: {task.title}\nkind: {task.kind}")
    click.echo(f"requires_failed_tool_call: {str(task.requires_failed_tool_call).lower()}")
    click.echo(f"fixture_digest: {benchmark.fixture_digest(task)}")
    if not suite.builtin:
        digest = benchmark.task_digest(task)
        click.echo(f"suite: {suite.name}\nformat: {task.layout}\ntask_digest: {digest}")
        click.echo(f"verifier: {task.verifier.kind}, timeout {_seconds(task.verifier.timeout_sec)}; agent timeout {_seconds(task.agent_timeout_sec)}")
        click.echo(f"checked: {'yes' if checks.is_checked(digest) else 'no (run campaign tasks check)'}")
        if task.needs_image:
            click.echo(f"needs_image: {task.needs_image}")
        if task.image_ref:
            click.echo(f"image: {task.image_ref}, prebuilt (tasks check runs in it as it is here; nothing is pulled)")
        elif task.image_context:
            click.echo("image: built from environment/ (tasks check builds it with the container runtime and runs in it)")
    click.echo("fixture files:")
    for rel in benchmark.fixture_files(task):
        click.echo(f"  {rel}")
    click.echo("prompt:")
    click.echo(task.prompt.rstrip())


def _seconds(value: float | None) -> str:
    return "the attempt's" if value is None else f"{value:g}s"


@tasks.command()
@suite_option
@click.option("--tasks", "names", metavar="NAME,NAME", help="Only these tasks [default: every task of the suite].")
@click.option("--runs", type=click.IntRange(2, 20), default=checks.RUNS, show_default=True, help="Runs of each condition: the verifier must agree with itself over all of them.")
@click.option(
    "--container-runtime",
    "container_runtime",
    type=click.Choice(["podman", "docker"]),
    help="Build and run the tasks that ship their own image with this runtime [default: podman, else docker].",
)
def check(task_suite, names: str | None, runs: int, container_runtime: str | None) -> None:
    """Prove each task sound: its untouched fixture fails, fixture plus solution passes,
    and the verifier is deterministic over --runs runs of each.

    Every run is a real attempt (private root, supervisor, hidden verifier, proven
    teardown) by the offline agent, told to do nothing or to apply the reference
    solution; a task whose Dockerfile needs an image build runs in fresh containers
    of its image, built with the machine's container runtime (nothing pulled, the
    image removed after its check). One line per task, with the reason when it is unsound; exits 1 if
    any task is unsound. Sound tasks are recorded, so a run on the suite knows
    which of its tasks were never checked as they are now.

    \b
    Examples:
      campaign tasks check --task-suite ~/my-tasks
      campaign tasks check --task-suite ~/my-tasks --tasks fizzbuzz,median
    """
    with core_errors():
        suite = benchmark.suite_of(task_suite)
        selected = suite.resolve(names)
        checks.check_place()
        # The attempt machinery is a third of a second to import: only a check needs it.
        from campaign.lanes import task_check

        runtime = containers.find_runtime(container_runtime) if task_check.needs_runtime(selected) else None
        click.echo(f"checking {len(selected)} task(s) of {suite.describe()}, {runs} runs each of the fixture and of the solution", err=True)
        found = task_check.check_tasks(suite, selected, runs=runs, progress=lambda result: click.echo(result.line()), runtime=runtime)
    unsound = [r for r in found if not r.sound]
    click.echo(f"{len(found) - len(unsound)} of {len(found)} tasks sound")
    if unsound:
        sys.exit(1)
