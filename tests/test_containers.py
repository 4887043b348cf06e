"""campaign/containers.py against the real podman and the offline base image scripts/test.sh
made: a Harbor task whose Dockerfile needs an image build is built, its hidden verifier
runs in a fresh container of it (failing on the untouched fixture, passing after the
reference solution), and nothing of it is left behind; a build that fails is one line
naming the task and the step."""

from __future__ import annotations

from pathlib import Path

import pytest

from campaign import containers
from campaign.benchmark import load_suite
from campaign.errors import UsageProblem
from helpers.containers import base_image

LABEL = "campaign.test"

TEST_SH = """#!/bin/bash
# The hidden verifier: the sum of /app/numbers.txt, written by the agent to /app/sum.txt.
mkdir -p /logs/verifier
if [ "$(cat /app/sum.txt 2>/dev/null)" = "$(python3 -c 'print(sum(map(int, open("/app/numbers.txt").read().split())))')" ]; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
"""


@pytest.fixture(scope="module")
def runtime_and_base() -> tuple[containers.Runtime, str]:
    return base_image()


def harbor_image_task(root: Path, base: str, dockerfile_steps: str) -> Path:
    task = root / "suite" / "sum-in-image"
    (task / "environment").mkdir(parents=True)
    (task / "tests").mkdir()
    (task / "solution").mkdir()
    (task / "instruction.md").write_text("# Sum the numbers\nWrite the sum of /app/numbers.txt to /app/sum.txt.\n")
    (task / "task.toml").write_text("[verifier]\ntimeout_sec = 60\n[agent]\ntimeout_sec = 60\n")
    (task / "environment" / "Dockerfile").write_text(f"FROM {base}\nWORKDIR /app\n{dockerfile_steps}")
    (task / "environment" / "more.txt").write_text("4 5\n")
    (task / "tests" / "test.sh").write_text(TEST_SH)
    (task / "solution" / "solve.sh").write_text("#!/bin/bash\npython3 -c 'print(sum(map(int, open(\"/app/numbers.txt\").read().split())))' > /app/sum.txt\n")
    return task


def verdict(runtime: containers.Runtime, image: str, task_dir: Path, logs: Path, label: str, *, solve: bool) -> str:
    """The reward the task's own verifier writes, run in a fresh container of ``image``."""
    (task,) = load_suite(task_dir.parent).tasks
    container = containers.start(runtime, image, labels={LABEL: label})
    try:
        if solve:
            containers.copy_in(runtime, container, task_dir / "solution", "/solution")
            assert containers.exec_in(runtime, container, ["bash", "/solution/solve.sh"], timeout=120).returncode == 0
        containers.copy_in(runtime, container, task_dir / "tests", "/tests")
        done = containers.exec_in(runtime, container, list(task.verifier.argv), timeout=120)
        assert done.returncode == 0, done.stderr
        assert containers.copy_out(runtime, container, "/logs/verifier", logs / "verifier")
    finally:
        containers.remove(runtime, container)
    return (logs / "verifier" / "reward.txt").read_text().strip()


def test_an_image_task_is_built_and_its_verifier_runs_in_its_own_container(runtime_and_base, tmp_path: Path):
    runtime, base = runtime_and_base
    steps = 'RUN printf "1 2 3\\n" > /app/numbers.txt\nCOPY more.txt /tmp/more.txt\nRUN cat /tmp/more.txt >> /app/numbers.txt\n'
    task_dir = harbor_image_task(tmp_path, base, steps)
    (task,) = load_suite(task_dir.parent).tasks
    assert task.needs_image  # the host lane refuses it: only a container runs it
    context = task_dir / "environment"
    tag = containers.image_tag(task.name, context)
    assert tag == containers.image_tag(task.name, context) and tag.startswith("localhost/campaign-task-sum-in-image:")
    label = str(tmp_path)
    try:
        image = containers.build_image(runtime, context, tag, task=task.name)
        assert image == containers.image_id(runtime, tag)
        (tmp_path / "untouched").mkdir()
        assert verdict(runtime, image, task_dir, tmp_path / "untouched", label, solve=False) == "0"
        (tmp_path / "solved").mkdir()
        assert verdict(runtime, image, task_dir, tmp_path / "solved", label, solve=True) == "1"
        assert containers.containers_labelled(runtime, LABEL, label) == []  # each removed when it ended
        # The image is the context's: one byte more in it is another tag, never a rebuild of this one.
        (context / "more.txt").write_text("4 5 6\n")
        assert containers.image_tag(task.name, context) != tag
    finally:
        containers.remove_image(runtime, tag)
    with pytest.raises(containers.ContainerProblem, match="is not in podman's store"):
        containers.image_id(runtime, tag)


def test_a_build_that_fails_names_the_task_the_step_and_the_runtimes_line(runtime_and_base, tmp_path: Path):
    runtime, base = runtime_and_base
    task_dir = harbor_image_task(tmp_path, base, "RUN echo fine\nRUN exit 7\nRUN echo never\n")
    context = task_dir / "environment"
    tag = containers.image_tag("sum-in-image", context)
    with pytest.raises(containers.ContainerProblem) as raised:
        containers.build_image(runtime, context, tag, task="sum-in-image")
    message = str(raised.value)
    assert message.startswith("task sum-in-image: its image failed to build at RUN exit 7: ")
    assert "exit status 7" in message and "\n" not in message
    with pytest.raises(containers.ContainerProblem):
        containers.image_id(runtime, tag)  # nothing was tagged


def test_a_dockerfile_from_an_image_not_here_is_not_pulled(runtime_and_base, tmp_path: Path):
    runtime, _ = runtime_and_base
    context = tmp_path / "context"
    context.mkdir()
    (context / "Dockerfile").write_text("FROM localhost/campaign-no-such-image:1\nRUN true\n")
    with pytest.raises(containers.ContainerProblem, match=r"^task t: its image failed to build at FROM localhost/campaign-no-such-image:1: "):
        containers.build_image(runtime, context, containers.image_tag("t", context), task="t")


def test_podman_comes_first_and_docker_serves_where_it_is_all_there_is():
    both = {"podman": "/usr/bin/podman", "docker": "/usr/bin/docker"}
    assert containers.find_runtime(which=both.get) == containers.Runtime("podman", "/usr/bin/podman")
    assert containers.find_runtime("docker", which=both.get) == containers.Runtime("docker", "/usr/bin/docker")
    assert containers.find_runtime(which={"docker": "/usr/bin/docker"}.get).name == "docker"


@pytest.mark.parametrize(
    ("choice", "found", "says"),
    [
        (None, {}, "no container runtime (podman, docker) is on PATH; install podman"),
        ("podman", {"docker": "/usr/bin/docker"}, "podman is not installed here (not on PATH)"),
        ("lxc", {"podman": "/usr/bin/podman"}, "'lxc' is not a container runtime this engine drives; choose podman or docker"),
    ],
)
def test_no_runtime_or_an_unknown_one_is_one_line_naming_the_option(choice, found, says):
    with pytest.raises(UsageProblem) as raised:
        containers.find_runtime(choice, which=found.get)
    assert raised.value.option == "--container-runtime"
    assert says in str(raised.value) and "\n" not in str(raised.value)
