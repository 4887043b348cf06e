"""The shipped benchmark: twelve solvable tasks whose hidden verifiers tell a fixture
from its reference solution, with stable fixture digests and strict task selection."""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from campaign import benchmark
from campaign.benchmark import (
    RUNNER_NAME,
    TASKS_DIR,
    VERIFIER_DIRNAME,
    Task,
    all_tasks,
    apply_solution,
    copy_fixture,
    fixture_digest,
    fixture_files,
    get_task,
    install_verifier,
    resolve_tasks,
    task_names,
    verifier_argv,
)
from campaign.digests import tree_digest
from campaign.errors import UnknownTask, UsageProblem

TASKS = all_tasks()
BY_NAME = {task.name: task for task in TASKS}
VERIFIER_TIMEOUT = 120


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _prepare(task: Task, workdir: Path, *, solved: bool) -> Path:
    copy_fixture(task, workdir)
    if solved:
        apply_solution(task, workdir)
    return workdir


def _verify(task: Task, workdir: Path) -> subprocess.CompletedProcess[str]:
    install_verifier(task, workdir)
    return subprocess.run(
        verifier_argv(task, sys.executable, workdir),
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=VERIFIER_TIMEOUT,
    )


def _tests_ran(proc: subprocess.CompletedProcess[str]) -> int:
    match = re.search(r"^Ran (\d+) tests?", proc.stderr, re.MULTILINE)
    return int(match.group(1)) if match else 0


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory) -> dict[tuple[str, bool], subprocess.CompletedProcess[str]]:
    """Every task's verifier run on the untouched fixture and on fixture + solution.

    The 24 runs are independent subprocesses, so a few run side by side.
    """
    root = tmp_path_factory.mktemp("verdicts")

    def job(task: Task, solved: bool) -> subprocess.CompletedProcess[str]:
        workdir = _prepare(task, root / f"{task.name}-{'solution' if solved else 'fixture'}", solved=solved)
        return _verify(task, workdir)

    jobs = [(task, solved) for task in TASKS for solved in (False, True)]
    with ThreadPoolExecutor(max_workers=min(4, (os.cpu_count() or 1) + 1)) as pool:
        results = list(pool.map(lambda args: job(*args), jobs))
    return {(task.name, solved): result for (task, solved), result in zip(jobs, results)}


# --- the set of tasks ---------------------------------------------------------------


def test_exactly_twelve_tasks_with_unique_names_and_one_recovery_task():
    assert len(TASKS) == 12
    assert len(set(task_names())) == 12
    assert list(task_names()) == sorted(task_names())
    assert sum(task.requires_failed_tool_call for task in TASKS) == 1
    assert all_tasks() is all_tasks()


def test_kinds_of_work_vary():
    assert len({task.kind for task in TASKS}) == 12


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.name)
def test_task_metadata(task: Task):
    assert task.root == TASKS_DIR / task.name
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", task.name)
    assert task.title.strip() and task.kind.strip()
    assert len(task.prompt) > 200
    assert VERIFIER_DIRNAME not in task.prompt
    for hidden in task.verifier_dir.iterdir():
        assert hidden.stem not in task.prompt


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.name)
def test_task_layout(task: Task):
    """Tasks never become importable subpackages of campaign, and ship whole as package data."""
    assert not (TASKS_DIR / "__init__.py").exists()
    assert not (task.root / "__init__.py").exists()
    assert sorted(p.name for p in task.root.iterdir()) == ["fixture", "solution", "task.toml", "verifier"]
    for path in task.root.rglob("*"):
        assert path.name != "__pycache__" and path.suffix != ".pyc", path
        # setuptools' "tasks/**/*" glob skips dotfiles, and a wheel holds no empty directory.
        assert not path.name.startswith("."), path
        if path.is_dir():
            assert any(p.is_file() for p in path.rglob("*")), path
        assert not path.is_symlink(), path
    assert 2 <= len(fixture_files(task)) <= 6
    hidden = sorted(p.name for p in task.verifier_dir.iterdir())
    assert hidden and all(re.fullmatch(r"test_\w+\.py", name) for name in hidden)
    assert _files(task.solution_dir)


# --- verifiers tell fixture from solution ---------------------------------------------


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.name)
def test_untouched_fixture_fails_its_verifier(task: Task, verdicts):
    proc = verdicts[(task.name, False)]
    assert proc.returncode != 0, proc.stderr[-3000:]
    # It failed because tests failed, not because the suite could not load.
    assert _tests_ran(proc) > 0, proc.stderr[-3000:]
    assert not re.search(r"^(SyntaxError|ImportError|ModuleNotFoundError): ", proc.stderr, re.MULTILINE), proc.stderr[-3000:]


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.name)
def test_fixture_plus_reference_solution_passes(task: Task, verdicts):
    proc = verdicts[(task.name, True)]
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert _tests_ran(proc) > 0


def test_recovery_task_prompted_command_fails_with_an_explanation(tmp_path):
    """The command the recovery prompt says to run fails first, and says how to fix it."""
    (task,) = [task for task in TASKS if task.requires_failed_tool_call]
    commands = re.findall(r"`python ([^`]+)`", task.prompt)
    assert commands, "the recovery prompt names the command to run"
    workdir = _prepare(task, tmp_path / "w", solved=False)
    proc = subprocess.run([sys.executable, *commands[0].split()], cwd=workdir, capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0
    assert "required" in proc.stderr and "--" in proc.stderr


# --- fixture identity ---------------------------------------------------------------


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.name)
def test_fixture_digest_is_stable_across_computations_and_copies(task: Task, tmp_path):
    digest = fixture_digest(task)
    assert re.fullmatch(r"[0-9a-f]{64}", digest)
    assert fixture_digest(task) == digest
    for name in ("one", "two"):
        copy_fixture(task, tmp_path / name)
        assert tree_digest(tmp_path / name) == digest
        assert sorted(_files(tmp_path / name)) == fixture_files(task)


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.name)
def test_fixture_digest_changes_when_any_byte_changes(task: Task, tmp_path):
    copy = tmp_path / "copy"
    copy_fixture(task, copy)
    digest = tree_digest(copy)
    for rel in fixture_files(task):
        path = copy / rel
        original = path.read_bytes()
        variants = [original + b"\n"] if not original else [
            original[:i] + bytes([original[i] ^ 0x01]) + original[i + 1 :]
            for i in sorted({0, len(original) // 2, len(original) - 1})
        ]
        for changed in variants:
            path.write_bytes(changed)
            assert tree_digest(copy) != digest, f"{rel} changed but the digest did not"
        path.write_bytes(original)
        assert tree_digest(copy) == digest
    first = copy / fixture_files(task)[0]
    first.rename(first.with_name(first.name + "x"))
    assert tree_digest(copy) != digest


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.name)
def test_fixture_contains_no_verifier_or_solution(task: Task):
    fixture = _files(task.fixture_dir)
    hidden = _files(task.verifier_dir)
    solution = _files(task.solution_dir)
    fixture_names = {Path(rel).name for rel in fixture}
    assert not fixture_names & {Path(rel).name for rel in hidden}
    assert not any(rel.split("/")[0] == VERIFIER_DIRNAME for rel in fixture)
    assert not set(fixture.values()) & set(hidden.values())
    for rel, content in solution.items():
        assert fixture.get(rel) != content, f"solution file {rel} is identical to the fixture's"
        if content:
            assert content not in fixture.values(), f"solution content of {rel} already in the fixture"


# --- working-copy helpers -----------------------------------------------------------


def test_copy_fixture_needs_a_fresh_destination(tmp_path):
    task = TASKS[0]
    empty = tmp_path / "empty"
    empty.mkdir()
    copy_fixture(task, empty)
    assert tree_digest(empty) == fixture_digest(task)
    with pytest.raises(FileExistsError):
        copy_fixture(task, empty)
    (tmp_path / "file").write_text("x")
    with pytest.raises(FileExistsError):
        copy_fixture(task, tmp_path / "file")


def test_install_verifier_replaces_whatever_the_agent_left(tmp_path):
    task = BY_NAME["lru-cache-eviction"]
    workdir = _prepare(task, tmp_path / "w", solved=False)
    planted = workdir / VERIFIER_DIRNAME
    planted.mkdir()
    (planted / "test_planted.py").write_text("import unittest\nclass T(unittest.TestCase):\n    def test_ok(self): pass\n")
    dest = install_verifier(task, workdir)
    assert dest == planted
    assert sorted(p.name for p in dest.iterdir()) == sorted([RUNNER_NAME, *(p.name for p in task.verifier_dir.iterdir())])
    assert _verify(task, workdir).returncode != 0


def test_verdict_is_not_swayed_by_files_in_the_working_copy(tmp_path):
    """An unsolved fixture still fails with look-alike modules planted next to it, and
    a solved one still passes when the working copy shadows standard modules."""
    task = BY_NAME["lru-cache-eviction"]
    hidden_names = [p.name for p in task.verifier_dir.iterdir()]
    passing = "import unittest\nclass Planted(unittest.TestCase):\n    def test_ok(self): pass\n"
    exit_zero = "import os\nos._exit(0)\n"

    unsolved = _prepare(task, tmp_path / "unsolved", solved=False)
    for name in hidden_names:
        (unsolved / name).write_text(passing)
    for name in ("sitecustomize.py", "usercustomize.py", "unittest.py", "random.py", "collections.py"):
        (unsolved / name).write_text(exit_zero)
    assert _verify(task, unsolved).returncode != 0

    solved = _prepare(task, tmp_path / "solved", solved=True)
    for name in ("random.py", "json.py", "collections.py"):
        (solved / name).write_text("raise ImportError('planted module must never be imported')\n")
    proc = _verify(task, solved)
    assert proc.returncode == 0, proc.stderr[-3000:]


def test_a_suite_without_tests_fails(tmp_path):
    root = tmp_path / "task"
    shutil.copytree(BY_NAME["lru-cache-eviction"].root, root)
    for path in (root / "verifier").iterdir():
        path.write_text("# no tests here\n")
    task = dataclasses.replace(BY_NAME["lru-cache-eviction"], root=root)
    workdir = _prepare(task, tmp_path / "w", solved=True)
    assert _verify(task, workdir).returncode != 0


def test_verifier_argv_runs_isolated_from_the_environment(tmp_path):
    task = TASKS[0]
    argv = verifier_argv(task, "/usr/bin/python3", tmp_path)
    assert argv[0] == "/usr/bin/python3"
    assert "-I" in argv
    assert argv[-1] == str(tmp_path / VERIFIER_DIRNAME / RUNNER_NAME)


# --- selecting tasks ----------------------------------------------------------------


def test_get_task_by_name_and_unknown_names():
    for task in TASKS:
        assert get_task(task.name) is task
    with pytest.raises(UnknownTask) as caught:
        get_task("no-such-task")
    assert caught.value.option == "--tasks"
    assert "--tasks" in str(caught.value)
    assert "no-such-task" in str(caught.value)
    assert TASKS[0].name in str(caught.value)


def test_resolve_tasks_selection():
    assert resolve_tasks(None) == TASKS
    a, b = TASKS[5].name, TASKS[2].name
    assert [t.name for t in resolve_tasks(f"{a},{b}")] == [a, b]
    assert [t.name for t in resolve_tasks(f" {b} , {a} ")] == [b, a]
    assert resolve_tasks(",".join(task_names())) == TASKS


@pytest.mark.parametrize(
    "spec, error",
    [
        ("lru-cache-eviction,nope", UnknownTask),
        ("LRU-CACHE-EVICTION", UnknownTask),
        ("lru-cache-eviction,lru-cache-eviction", UsageProblem),
        ("lru-cache-eviction,,slug-unicode", UsageProblem),
        ("lru-cache-eviction,", UsageProblem),
        # An empty list is a mistake, not "all twelve" (that is --tasks left out).
        ("", UsageProblem),
        ("  ", UsageProblem),
    ],
)
def test_resolve_tasks_rejects_bad_specs(spec, error):
    with pytest.raises(error) as caught:
        resolve_tasks(spec)
    assert isinstance(caught.value, UsageProblem)
    assert caught.value.option == "--tasks"
    assert "--tasks" in str(caught.value)


def test_public_api_names():
    for name in ("Task", "all_tasks", "task_names", "get_task", "resolve_tasks", "fixture_digest",
                 "fixture_files", "copy_fixture", "apply_solution", "install_verifier", "verifier_argv"):
        assert name in benchmark.__all__
    with pytest.raises(dataclasses.FrozenInstanceError):
        TASKS[0].name = "x"  # type: ignore[misc]
