"""`campaign tasks check` on Harbor tasks that ship their own image: each built with the real
podman from the offline base image, checked in fresh containers of it (the untouched
fixture fails, the reference solution passes, the verifier agrees with itself), one line
per task, and nothing left in podman's store; with no runtime, one line and exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from campaign import containers
from campaign.benchmark import checks, load_suite, task_digest
from campaign.cli import cli
from campaign.lanes.image_check import LABEL
from helpers.containers import base_image

VERIFIER = """#!/bin/bash
# Passes when /app/sum.txt holds the sum of /app/numbers.txt, and the solution saw no tests.
want=$(python3 -c 'print(sum(map(int, open("/app/numbers.txt").read().split())))')
if [ "$(cat /app/sum.txt 2>/dev/null)" = "$want" ] && [ ! -e /app/saw-tests ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
"""
# The reference solution, which also says whether the hidden tests were there before it ended.
SOLVE = """#!/bin/bash
[ -e /tests ] && touch /app/saw-tests
python3 -c 'print(sum(map(int, open("/app/numbers.txt").read().split())))' > /app/sum.txt
"""


@pytest.fixture(scope="module")
def base() -> tuple[containers.Runtime, str]:
    return base_image()


def image_task(suite: Path, name: str, base: str, steps: str, verifier: str = VERIFIER) -> Path:
    task = suite / name
    for part in ("environment", "tests", "solution"):
        (task / part).mkdir(parents=True)
    (task / "instruction.md").write_text("# Sum the numbers\nWrite the sum of /app/numbers.txt to /app/sum.txt.\n")
    (task / "task.toml").write_text("[verifier]\ntimeout_sec = 60\n[agent]\ntimeout_sec = 60\n")
    (task / "environment" / "Dockerfile").write_text(f"FROM {base}\nWORKDIR /app\n{steps}")
    (task / "tests" / "test.sh").write_text(verifier)
    (task / "solution" / "solve.sh").write_text(SOLVE)
    return task


def lines(output: str) -> dict[str, str]:
    """Each task's line of the check, by task name."""
    return {line.split()[1].rstrip(":"): line for line in output.splitlines() if line.startswith(("sound ", "unsound "))}


def test_image_tasks_are_checked_in_their_own_containers_and_leave_nothing(base, runner, tmp_path, task_checks):
    runtime, image = base
    suite = tmp_path / "suite"
    image_task(suite, "sum-image-sound", image, 'RUN printf "1 2 3 4\\n" > /app/numbers.txt\n')
    # The fixture already holds the answer: the task measures nothing.
    image_task(suite, "sum-image-answered", image, 'RUN printf "5 5\\n" > /app/numbers.txt && echo 10 > /app/sum.txt\n')
    image_task(suite, "sum-image-broken", image, 'RUN printf "1\\n" > /app/numbers.txt\nRUN exit 3\n')
    # A verifier that never writes its reward: its exit status decides, and it fails.
    image_task(suite, "sum-image-strict", image, 'RUN printf "2 2\\n" > /app/numbers.txt\n', verifier="#!/bin/bash\nexit 1\n")
    result = runner.invoke(cli, ["tasks", "check", "--task-suite", str(suite), "--runs", "2"])
    assert result.exit_code == 1, result.output
    found = lines(result.output)
    assert found["sum-image-sound"] == "sound    sum-image-sound"
    assert found["sum-image-answered"] == "unsound  sum-image-answered: fixture_passes (the untouched fixture passed 2 of 2 runs)"
    assert found["sum-image-broken"].startswith("unsound  sum-image-broken: image_build_failed (its image failed to build at RUN exit 3: ")
    assert "exit status 3" in found["sum-image-broken"]
    assert found["sum-image-strict"] == "unsound  sum-image-strict: solution_fails (fixture plus solution failed 2 of 2 runs)"
    assert "1 of 4 tasks sound" in result.output
    # Only the sound task is recorded, under its digest.
    (sound,) = [t for t in load_suite(suite).tasks if t.name == "sum-image-sound"]
    assert checks.is_checked(task_digest(sound))
    assert sorted(p.name for p in task_checks.iterdir()) == [f"{task_digest(sound)}.json"]
    for task in load_suite(suite).tasks:
        assert containers.containers_labelled(runtime, LABEL, task.name) == []
        with pytest.raises(containers.ContainerProblem):
            containers.image_id(runtime, containers.image_tag(task.name, task.image_context))


def test_with_no_runtime_a_suite_of_image_tasks_is_refused_in_one_line(runner, tmp_path, task_checks):
    suite = tmp_path / "suite"
    image_task(suite, "sum-image", "localhost/campaign-base:any", 'RUN printf "1\\n" > /app/numbers.txt\n')
    empty = tmp_path / "bin"
    empty.mkdir()
    for args, says in (
        ([], "a selected task needs a container image, and no container runtime (podman, docker) is on PATH; install podman"),
        (["--container-runtime", "docker"], "docker is not installed here (not on PATH)"),
    ):
        result = runner.invoke(cli, ["tasks", "check", "--task-suite", str(suite), *args], env={"PATH": str(empty)})
        assert result.exit_code == 2, result.output
        (line,) = [line for line in result.output.splitlines() if line.startswith("Error:")]
        assert says in line and "--container-runtime" in line
        assert "checking" not in result.output and not any(task_checks.iterdir())


def test_a_prebuilt_image_is_used_as_it_is_here_and_a_missing_one_is_named(base, runner, tmp_path, task_checks):
    runtime, image = base
    context = tmp_path / "prebuilt"
    context.mkdir()
    (context / "Dockerfile").write_text(f'FROM {image}\nWORKDIR /app\nRUN printf "7 8\\n" > /app/numbers.txt\n')
    prebuilt = containers.image_tag("prebuilt-for-a-check", context)
    suite = tmp_path / "suite"
    for name, ref in (("sum-prebuilt", prebuilt), ("sum-prebuilt-missing", "localhost/campaign-no-such-image:1")):
        task = image_task(suite, name, image, "")
        (task / "task.toml").write_text(f'[verifier]\ntimeout_sec = 60\n[environment]\ndocker_image = "{ref}"\n')
    containers.build_image(runtime, context, prebuilt, task="prebuilt-for-a-check")
    try:
        result = runner.invoke(cli, ["tasks", "check", "--task-suite", str(suite), "--runs", "2"])
        assert result.exit_code == 1, result.output
        found = lines(result.output)
        assert found["sum-prebuilt"] == "sound    sum-prebuilt"
        assert found["sum-prebuilt-missing"] == (
            "unsound  sum-prebuilt-missing: image_missing (task.toml names localhost/campaign-no-such-image:1, "
            "which is not on this machine; nothing is pulled: load it here first)"
        )
        containers.image_id(runtime, prebuilt)  # not the check's to remove
        assert containers.containers_labelled(runtime, LABEL, "sum-prebuilt") == []
    finally:
        containers.remove_image(runtime, prebuilt)
