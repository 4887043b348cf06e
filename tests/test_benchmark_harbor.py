"""Harbor task folders: what makes the working copy (the Dockerfile's copies into /app),
what needs an image (listed, never run), the reward file's verdict, and bad folders
refused naming --task-suite."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from campaign.benchmark import copy_fixture, load_suite, read_reward, unrunnable
from campaign.errors import UsageProblem

HARBOR = Path(__file__).parent / "suites" / "harbor-example"


def harbor_task(root: Path, dockerfile: str | None, *, files: dict[str, str] | None = None, toml: str = "") -> Path:
    """A one-task Harbor suite at ``root``; returns the task's folder."""
    task = root / "t"
    (task / "tests").mkdir(parents=True)
    (task / "solution").mkdir()
    (task / "instruction.md").write_text("# Do the thing\n\nDo it well.\n")
    (task / "tests" / "test.sh").write_text("exit 0\n")
    (task / "solution" / "solve.sh").write_text("true\n")
    if toml:
        (task / "task.toml").write_text(toml)
    if dockerfile is not None:
        (task / "environment").mkdir()
        (task / "environment" / "Dockerfile").write_text(dockerfile)
    for rel, text in (files or {}).items():
        path = task / "environment" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return task


def loaded(root: Path):
    return load_suite(root).get("t")


@pytest.mark.parametrize(
    ("dockerfile", "files", "copied"),
    [
        ("FROM python:3.12\nWORKDIR /app\nCOPY a.py ./\n", {"a.py": "A"}, {"a.py": "A"}),
        ("FROM x\nCOPY src/ /app/src/\nLABEL k=v\nCMD [\"bash\"]\n", {"src/m.py": "M", "src/n/o.py": "O"}, {"src/m.py": "M", "src/n/o.py": "O"}),
        ("FROM x\nWORKDIR /app\nCOPY . .\n", {"a": "1", "d/b": "2"}, {"Dockerfile": None, "a": "1", "d/b": "2"}),
        ('FROM x\nCOPY ["a.txt", "/app/data/renamed.txt"]\n', {"a.txt": "T"}, {"data/renamed.txt": "T"}),
        ("FROM x\nWORKDIR /app\nCOPY a \\\n     b \\\n     sub/\n", {"a": "1", "b": "2"}, {"sub/a": "1", "sub/b": "2"}),
        (None, {}, {}),
    ],
)
def test_the_working_copy_is_what_the_dockerfile_copies_into_app(tmp_path, dockerfile, files, copied):
    task = loaded(harbor_task(tmp_path / "suite", dockerfile, files=files).parent)
    assert task.needs_image is None and unrunnable(task, can_map_roots=True) is None
    work = tmp_path / "work"
    copy_fixture(task, work)
    got = {p.relative_to(work).as_posix(): p.read_text() for p in work.rglob("*") if p.is_file()}
    assert got.keys() == copied.keys()
    assert all(got[k] == v for k, v in copied.items() if v is not None)


@pytest.mark.parametrize(
    ("dockerfile", "why"),
    [
        ("FROM ubuntu\nRUN apt-get install -y cowsay\n", "RUN in environment/Dockerfile needs an image build"),
        ("FROM x\nENV A=1\n", "ENV in environment/Dockerfile"),
        ("FROM x\nUSER nobody\n", "USER in environment/Dockerfile"),
        ("FROM x\nWORKDIR /srv\n", "WORKDIR /srv: the workspace is /app"),
        ("FROM x\nCOPY a /etc/a\n", "outside the workspace /app"),
        ("FROM x\nADD https://example.com/a.tgz /app/\n", "a URL or a pattern"),
        ("FROM x\nADD a.tar.gz /app/\n", "unpacks an archive"),
        ("FROM x\nCOPY --chown=1:1 a /app/\n", "with options (--chown=1:1)"),
        ("FROM x AS build\nFROM y\n", "multi-stage"),
    ],
)
def test_an_environment_that_needs_an_image_is_listed_with_its_reason_and_never_run(tmp_path, dockerfile, why):
    task = loaded(harbor_task(tmp_path / "suite", dockerfile, files={"a": "1", "a.tar.gz": "x"}).parent)
    assert why in task.needs_image
    assert unrunnable(task, can_map_roots=True) == ("needs_image", task.needs_image)


def test_a_compose_file_or_a_prebuilt_image_needs_one_too(tmp_path):
    compose = harbor_task(tmp_path / "a", "FROM x\n", files={"docker-compose.yaml": "services: {}\n"})
    assert "compose file" in loaded(compose.parent).needs_image
    prebuilt = harbor_task(tmp_path / "b", "FROM x\n", toml='[environment]\ndocker_image = "me/img:1"\n')
    task = loaded(prebuilt.parent)
    assert "docker_image" in task.needs_image
    # A check uses that image as it is here (never pulled, never built from environment/).
    assert (task.image_ref, task.image_context) == ("me/img:1", None)
    assert loaded(compose.parent).image_context is None  # services: no one image to build


@pytest.mark.parametrize("ref", ['"me/img:1; rm -rf /"', '"-v /:/host img"', "7", '""'])
def test_a_docker_image_that_is_no_image_reference_is_refused(tmp_path, ref):
    task = harbor_task(tmp_path / "suite", "FROM x\n", toml=f"[environment]\ndocker_image = {ref}\n")
    if ref == '""':  # empty: none named, as before
        assert loaded(task.parent).image_ref is None
        return
    with pytest.raises(UsageProblem, match="docker_image must be an image reference"):
        loaded(task.parent)


def test_without_the_privilege_a_harbor_task_cannot_run(tmp_path):
    task = loaded(harbor_task(tmp_path / "suite", None).parent)
    assert unrunnable(task, can_map_roots=False)[0] == "needs_privilege"


@pytest.mark.parametrize(
    ("remove", "message"),
    [("tests/test.sh", "has no tests/test.sh"), ("solution/solve.sh", "has no solution/solve.sh")],
)
def test_a_harbor_task_missing_its_verifier_or_solution_is_refused(tmp_path, remove, message):
    task = harbor_task(tmp_path / "suite", None)
    (task / remove).unlink()
    with pytest.raises(UsageProblem, match=message) as caught:
        load_suite(task.parent)
    assert caught.value.option == "--task-suite"


def test_a_copy_of_a_missing_file_or_from_outside_environment_is_refused(tmp_path):
    with pytest.raises(UsageProblem, match="no such file in environment/"):
        load_suite(harbor_task(tmp_path / "a", "FROM x\nCOPY nope /app/\n").parent)
    with pytest.raises(UsageProblem, match="outside environment/"):
        load_suite(harbor_task(tmp_path / "b", "FROM x\nCOPY ../tests/test.sh /app/\n").parent)


def test_a_copy_through_a_link_out_of_environment_is_refused(tmp_path):
    outside = tmp_path / "host"
    outside.mkdir()
    (outside / "secret.txt").write_text("not the task's\n")
    task = harbor_task(tmp_path / "suite", "FROM x\nCOPY host/secret.txt /app/\n")
    (task / "environment" / "host").symlink_to(outside)
    with pytest.raises(UsageProblem, match="COPY host/secret.txt goes through a link out of environment/"):
        load_suite(task.parent)


@pytest.mark.parametrize("link", ["environment/Dockerfile", "environment"])
@pytest.mark.parametrize("where", ["outside", "inside"])
def test_a_dockerfile_read_through_a_link_must_be_a_file_of_the_task(tmp_path, link, where):
    """The Dockerfile decides what the working copy holds, yet the task's digest holds only
    a link's text: through a link out of the task it could change unseen."""
    task = harbor_task(tmp_path / "suite", "FROM x\nCOPY a.txt /app/\n", files={"a.txt": "A"})
    moved = (tmp_path if where == "outside" else task) / "moved"
    (task / link).rename(moved)
    (task / link).symlink_to(moved)
    if where == "outside":
        with pytest.raises(UsageProblem, match="which is not a file of the task"):
            load_suite(task.parent)
    else:
        copy_fixture(loaded(task.parent), tmp_path / "work")
        assert (tmp_path / "work" / "a.txt").read_text() == "A"


def test_the_example_suite_takes_its_timeouts_and_title_from_its_files():
    suite = load_suite(HARBOR)
    for task in suite.tasks:
        assert task.title and len(task.title) <= 60 and not task.title.startswith("#")


@pytest.mark.parametrize(
    ("name", "content", "verdict"),
    [
        ("reward.txt", "1\n", True),
        ("reward.txt", "1.0", True),
        ("reward.txt", "0.5", False),
        ("reward.txt", "nan", False),
        ("reward.txt", "yes", False),
        ("reward.json", '{"reward": 1.0}', True),
        ("reward.json", '{"reward": 0}', False),
        ("reward.json", '{"reward": true}', False),
        ("reward.json", "[1]", False),
    ],
)
def test_the_reward_file_decides(tmp_path, name, content, verdict):
    (tmp_path / name).write_text(content)
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        assert read_reward(fd) is verdict
    finally:
        os.close(fd)


def test_no_reward_file_leaves_the_exit_code_to_decide_and_a_link_is_never_followed(tmp_path):
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        assert read_reward(fd) is None
        (tmp_path / "elsewhere.txt").write_text("1\n")
        (tmp_path / "reward.txt").symlink_to(tmp_path / "elsewhere.txt")
        assert read_reward(fd) is False
    finally:
        os.close(fd)
