"""`campaign tasks`: list and show (the built-in tasks or a --task-suite), an unknown name
blames the NAME argument; `tasks check` proves each task sound or names its reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from campaign import benchmark
from campaign.cli import cli
from helpers.containers import base_image


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


# --- --task-suite and `campaign tasks check` -------------------------------------------

SUITES = Path(__file__).parent / "suites"


def _lines(output: str, prefix: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith(prefix)]


def test_list_and_show_a_suite_say_what_is_not_yet_checked(runner):
    result = runner.invoke(cli, ["tasks", "list", "--task-suite", str(SUITES / "harbor-example")])
    assert result.exit_code == 0, result.output
    rows = [line for line in result.output.splitlines() if not line.startswith("task suite")]
    assert [row.split()[0] for row in rows] == ["node-median", "python-roman", "shell-inventory"]
    assert all("(harbor)" in row and "(unchecked)" in row for row in rows)
    shown = runner.invoke(cli, ["tasks", "show", "sh-csv-total", "--task-suite", str(SUITES / "engine-example")])
    assert shown.exit_code == 0, shown.output
    assert "suite: engine-example" in shown.output and "verifier: command, timeout 60s; agent timeout 300s" in shown.output
    assert "checked: no" in shown.output
    assert "run_tests.sh" not in shown.output, "the hidden verifier's files are never listed"


def test_show_says_how_a_task_that_needs_an_image_gets_one(runner, tmp_path):
    shown = runner.invoke(cli, ["tasks", "show", "harbor-needs-image", "--task-suite", str(SUITES / "unsound")])
    assert shown.exit_code == 0, shown.output
    assert "needs_image: RUN in environment/Dockerfile needs an image build" in shown.output
    assert "image: built from environment/ (tasks check builds it with the container runtime and runs in it)" in shown.output
    task = tmp_path / "suite" / "prebuilt"
    for part in ("tests", "solution"):
        (task / part).mkdir(parents=True)
    (task / "instruction.md").write_text("Do it.\n")
    (task / "tests" / "test.sh").write_text("exit 0\n")
    (task / "solution" / "solve.sh").write_text("true\n")
    (task / "task.toml").write_text('[environment]\ndocker_image = "localhost/tools:1"\n')
    shown = runner.invoke(cli, ["tasks", "show", "prebuilt", "--task-suite", str(tmp_path / "suite")])
    assert shown.exit_code == 0, shown.output
    assert "image: localhost/tools:1, prebuilt (tasks check runs in it as it is here; nothing is pulled)" in shown.output


@pytest.mark.slow  # every example task run three times each way: 15 s
def test_the_example_suites_are_sound_and_then_recorded_as_checked(runner):
    for suite, names in (("engine-example", 4), ("harbor-example", 3)):
        result = runner.invoke(cli, ["tasks", "check", "--task-suite", str(SUITES / suite)])
        assert result.exit_code == 0, result.output
        assert len(_lines(result.output, "sound ")) == names
        assert f"{names} of {names} tasks sound" in result.output
    listed = runner.invoke(cli, ["tasks", "list", "--task-suite", str(SUITES / "engine-example")])
    assert "(unchecked)" not in listed.output


def test_each_unsound_task_is_reported_with_its_reason(runner):
    base_image()  # its Harbor task needs an image: checked only where a runtime can build one
    result = runner.invoke(cli, ["tasks", "check", "--task-suite", str(SUITES / "unsound")])
    assert result.exit_code == 1, result.output
    reasons = {line.split()[1].rstrip(":"): line.split()[2] for line in _lines(result.output, "unsound ")}
    assert reasons == {
        "fixture-passes": "fixture_passes",
        "flaky-verifier": "verifier_flaky",
        "missing-tool": "verifier_error",
        "solution-fails": "solution_fails",
        "harbor-needs-image": "image_build_failed",
    }
    (line,) = [line for line in _lines(result.output, "unsound ") if "harbor-needs-image" in line]
    assert "at FROM ubuntu:24.04" in line and "nothing is pulled" in line
    assert "0 of 5 tasks sound" in result.output


def test_check_takes_a_selection(runner):
    result = runner.invoke(cli, ["tasks", "check", "--task-suite", str(SUITES / "unsound"), "--tasks", "solution-fails", "--runs", "2"])
    assert result.exit_code == 1, result.output
    assert _lines(result.output, "unsound ") == ["unsound  solution-fails: solution_fails (fixture plus solution failed 2 of 2 runs)"]


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["--task-suite", "/nonexistent/suite"], "--task-suite"),
        (["--task-suite", str(SUITES / "unsound"), "--tasks", "nope"], "--tasks"),
        (["--task-suite", str(SUITES / "unsound"), "--runs", "1"], "--runs"),
    ],
)
def test_check_refuses_bad_input_naming_the_option_and_checks_nothing(runner, args, option, task_checks):
    result = runner.invoke(cli, ["tasks", "check", *args])
    assert result.exit_code == 2, result.output
    (line,) = _lines(result.output, "Error:")
    assert option in line
    assert "checking" not in result.output and not any(task_checks.iterdir())


def test_a_records_place_that_is_not_a_directory_is_refused_before_any_check(runner, tmp_path, monkeypatch):
    # It was found only when the first sound task was recorded: a traceback after the checks.
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("CAMPAIGN_TASK_CHECKS", str(tmp_path / "file"))
    result = runner.invoke(cli, ["tasks", "check", "--task-suite", str(SUITES / "engine-example"), "--runs", "2"])
    assert result.exit_code == 2 and "checking" not in result.output, result.output
    (line,) = _lines(result.output, "Error:")
    assert "CAMPAIGN_TASK_CHECKS" in line and "to be a directory" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]


def test_check_without_a_suite_checks_the_builtin_tasks_and_records_nothing(runner, task_checks):
    result = runner.invoke(cli, ["tasks", "check", "--tasks", "semver-precedence", "--runs", "2"])
    assert result.exit_code == 0, result.output
    assert _lines(result.output, "sound ") == ["sound    semver-precedence"]
    assert not any(task_checks.iterdir()), "the built-in tasks are proven by the engine's own tests"
