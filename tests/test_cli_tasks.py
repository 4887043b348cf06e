"""`campaign tasks`: list and show; an unknown name blames the NAME argument."""

from __future__ import annotations

from campaign import benchmark
from campaign.cli import cli


def test_list_names_every_task(runner):
    result = runner.invoke(cli, ["tasks", "list"])
    assert result.exit_code == 0, result.output
    assert [line.split()[0] for line in result.output.splitlines()] == list(benchmark.task_names())


def test_show_prints_the_task(runner):
    name = benchmark.task_names()[0]
    result = runner.invoke(cli, ["tasks", "show", name])
    assert result.exit_code == 0, result.output
    assert f"name: {name}" in result.output and "fixture_digest: " in result.output


def test_show_of_an_unknown_name_blames_the_argument_and_points_at_the_list(runner):
    result = runner.invoke(cli, ["tasks", "show", "nope"])
    assert result.exit_code == 2, result.output
    (line,) = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert line.startswith("Error: NAME: unknown task 'nope'")
    assert "campaign tasks list" in line
    assert "--tasks" not in result.output
