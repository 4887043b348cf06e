"""Task suites (``--task-suite DIR``): reading a directory of task folders in the engine's
format and Harbor's, refusing bad ones with one line naming the option, and the
identity that binds every file of every task into the experiment."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from campaign import benchmark
from campaign.experiment import suite_differences
from campaign.benchmark import (
    VERIFIER_DIRNAME,
    apply_solution,
    copy_fixture,
    install_verifier,
    load_suite,
    suite_identity,
    suite_of,
    task_digest,
    verifier_argv,
)
from campaign.errors import UnknownTask, UsageProblem

SUITES = Path(__file__).parent / "suites"
ENGINE = SUITES / "engine-example"
HARBOR = SUITES / "harbor-example"
UNSOUND = SUITES / "unsound"


@pytest.fixture
def suite_copy(tmp_path) -> Path:
    """A copy of the engine-format example suite, free to break."""
    return Path(shutil.copytree(ENGINE, tmp_path / "engine-example"))


def _task(root: Path, name: str, toml: str, *, verifier: dict[str, str] | None = None) -> Path:
    folder = root / name
    for part in ("fixture", "verifier", "solution"):
        (folder / part).mkdir(parents=True)
    (folder / "task.toml").write_text(toml)
    for rel, text in (verifier or {}).items():
        (folder / "verifier" / rel).write_text(text)
    return folder


# --- reading ---------------------------------------------------------------------------


def test_the_engine_example_reads_as_four_tasks_with_their_verifiers_and_timeouts():
    suite = load_suite(ENGINE)
    assert (suite.name, suite.builtin) == ("engine-example", False)
    assert suite.names() == ("node-slugify", "py-config-merge", "py-wordcount", "sh-csv-total")
    by = {t.name: t for t in suite.tasks}
    # A word naming a file of verifier/ points at the installed copy; the interpreter stays.
    assert by["node-slugify"].verifier.argv == ("node", f"{VERIFIER_DIRNAME}/check_slugify.js")
    assert by["node-slugify"].verifier.timeout_sec == 60
    assert by["py-wordcount"].verifier.kind == "unittest"
    assert by["sh-csv-total"].agent_timeout_sec == 300 and by["sh-csv-total"].requires_failed_tool_call
    assert all(t.suite_root == suite.root and t.layout == "engine" for t in suite.tasks)


def test_the_harbor_example_reads_as_three_harbor_tasks_mapped_onto_app():
    suite = load_suite(HARBOR)
    assert suite.names() == ("node-median", "python-roman", "shell-inventory")
    for task in suite.tasks:
        assert task.harbor and task.needs_image is None and task.verifier.argv == ("bash", "/tests/test.sh")
        assert task.prompt == (task.root / "instruction.md").read_text().strip() + "\n"
    node = suite.get("node-median")
    assert node.workspace == (("stats.js", "stats.js"), ("package.json", "package.json"))
    assert node.verifier.timeout_sec == 60.0


def test_a_command_verifier_decides_by_its_exit_status(tmp_path):
    task = load_suite(ENGINE).get("sh-csv-total")
    for solved in (False, True):
        work = tmp_path / f"work-{solved}"
        copy_fixture(task, work)
        if solved:
            assert apply_solution(task, work) == 0
        install_verifier(task, work)
        done = subprocess.run(verifier_argv(task, sys.executable), cwd=work, capture_output=True, timeout=60)
        assert (done.returncode == 0) is solved, done.stderr


def test_a_solve_script_runs_in_the_working_copy(tmp_path):
    task = load_suite(ENGINE).get("py-config-merge")
    assert task.solution_script is not None
    work = tmp_path / "work"
    copy_fixture(task, work)
    before = (work / "merge.py").read_bytes()
    assert apply_solution(task, work) == 0
    assert (work / "merge.py").read_bytes() != before
    assert not (work / "solve.sh").exists(), "the script is run, never left in the working copy"


def test_the_suites_tasks_are_unknown_to_the_builtin_selection():
    with pytest.raises(UnknownTask, match="known: "):
        benchmark.get_task("node-slugify")
    assert suite_of(None).builtin and suite_of(ENGINE).name == "engine-example"


def test_tasks_selects_within_the_suite_and_names_it_when_unknown():
    suite = load_suite(ENGINE)
    assert [t.name for t in suite.resolve("sh-csv-total,node-slugify")] == ["sh-csv-total", "node-slugify"]
    with pytest.raises(UnknownTask, match="unknown task 'semver-precedence' in task suite engine-example; known: node-slugify"):
        suite.resolve("semver-precedence")
    with pytest.raises(UsageProblem, match="every task of task suite engine-example"):
        suite.resolve(" ")


# --- bad suites: one line, naming --task-suite -----------------------------------------


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ('prompt = "x"\nname = "other"', "a task is named by its folder"),
        ('prompt = ""', "needs a prompt"),
        ('prompt = "x"\ncolour = "red"', "unknown key(s) colour"),
        ('prompt = "x"\n[verifier]\ncommand = "bash run.sh"', "non-empty list"),
        ('prompt = "x"\n[verifier]\ncommand = ["run.sh"]', "name its interpreter first"),
        ('prompt = "x"\n[verifier]\ntimeout_sec = -1', "positive number of seconds"),
        ('prompt = "x"\n[agent]\ntimeout_sec = 0', "positive number of seconds"),
        ('prompt = "x"\n[agent]\nmodel = "y"', "[agent] holds only timeout_sec"),
        ("prompt = ", "not valid TOML"),
        # exec would refuse it only once the attempt (perhaps a paid one) had run.
        ('prompt = "x"\n[verifier]\ncommand = ["bash", "a\\u0000b"]', "holds a NUL character"),
        # tomllib recurses, and so does every walk of what it returns.
        ('prompt = "x"\nx = ' + "[" * 3000 + "]" * 3000, "nested deeper than 64 levels"),
        ('prompt = "x"\nx = ' + "[" * 65 + "]" * 65, "nested deeper than 64 levels"),
    ],
)
def test_a_bad_task_definition_is_refused_naming_the_option(tmp_path, toml, message):
    _task(tmp_path / "suite", "bad-task", toml, verifier={"run.sh": "exit 0\n"})
    with pytest.raises(UsageProblem) as caught:
        load_suite(tmp_path / "suite")
    assert caught.value.option == "--task-suite" and message in str(caught.value)
    assert "bad-task" in str(caught.value)


def test_a_task_without_its_parts_or_a_suite_without_tasks_is_refused(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(UsageProblem, match="holds no task folder"):
        load_suite(tmp_path / "empty")
    with pytest.raises(UsageProblem, match="is not a directory"):
        load_suite(tmp_path / "missing")
    folder = _task(tmp_path / "suite", "no-solution", 'prompt = "x"')
    folder.joinpath("solution").rmdir()
    with pytest.raises(UsageProblem, match="has no solution/ directory"):
        load_suite(tmp_path / "suite")


def test_a_fifo_in_a_task_is_refused_before_anything_reads_it(suite_copy):
    os.mkfifo(suite_copy / "py-wordcount" / "fixture" / "pipe")
    with pytest.raises(UsageProblem, match="a task holds files, directories and links only"):
        load_suite(suite_copy)


def test_a_task_toml_that_is_a_fifo_is_a_bad_task_not_a_folder_left_out(suite_copy):
    task_toml = suite_copy / "py-wordcount" / "task.toml"
    task_toml.unlink()
    os.mkfifo(task_toml)
    with pytest.raises(UsageProblem, match="task.toml is a FIFO"):
        load_suite(suite_copy)


@pytest.mark.parametrize("target", ["outside", "nowhere", "inside"])
def test_a_link_the_verifier_is_read_through_must_lead_to_a_file_of_the_task(suite_copy, tmp_path, target):
    """Installed through the link, hashed as the link's text: a target outside the task (or
    none) could change what runs while the task's digest stays the same."""
    verifier = suite_copy / "py-wordcount" / "verifier"
    real = verifier / "test_wordcount_hidden.py"
    if target == "inside":
        real.rename(verifier / "kept.py")
        real.symlink_to("kept.py")
        assert load_suite(suite_copy).get("py-wordcount")  # a link within the task is fine
        return
    moved = tmp_path / "elsewhere.py"
    real.rename(moved)
    real.symlink_to(moved if target == "outside" else tmp_path / "missing.py")
    with pytest.raises(UsageProblem, match="which is not a file of the task") as refused:
        load_suite(suite_copy)
    assert refused.value.option == "--task-suite"


def test_a_file_name_that_is_not_utf8_is_one_line_naming_the_option(suite_copy):
    (suite_copy / "py-wordcount" / "fixture" / os.fsdecode(b"bad\xff")).write_text("x")
    with pytest.raises(UsageProblem, match=r"fixture/bad\\xff: a file name that is not UTF-8") as refused:
        load_suite(suite_copy)
    assert refused.value.option == "--task-suite"


def test_retargeting_a_link_to_a_directory_changes_the_tasks_digest(suite_copy):
    fixture = suite_copy / "py-wordcount" / "fixture"
    (fixture / "v1").mkdir()
    (fixture / "v2").mkdir()
    (fixture / "current").symlink_to("v1")
    before = task_digest(load_suite(suite_copy).get("py-wordcount"))
    (fixture / "current").unlink()
    (fixture / "current").symlink_to("v2")
    assert task_digest(load_suite(suite_copy).get("py-wordcount")) != before


def test_a_bad_suite_name_is_refused(suite_copy):
    (suite_copy / "suite.toml").write_text('name = "no spaces please"\n')
    with pytest.raises(UsageProblem, match="the suite's name"):
        load_suite(suite_copy)


# --- identity ---------------------------------------------------------------------------


def test_the_identity_binds_every_task_and_is_stable(suite_copy):
    suite = load_suite(suite_copy)
    first = suite_identity(suite, suite.tasks)
    assert first["name"] == "engine-example" and set(first["tasks"]) == set(suite.names())
    assert first == suite_identity(load_suite(suite_copy), load_suite(suite_copy).tasks)
    # The same tasks elsewhere are the same suite: no path enters the identity.
    moved = shutil.copytree(suite_copy, suite_copy.parent / "moved" / "engine-example")
    assert suite_identity(load_suite(moved), load_suite(moved).tasks) == first
    assert suite_identity(benchmark.builtin_suite(), benchmark.all_tasks()) is None


@pytest.mark.parametrize("part", ["verifier/check_slugify.js", "fixture/slugify.js", "solution/slugify.js", "task.toml"])
def test_one_changed_byte_in_any_part_names_that_task(suite_copy, part):
    before = suite_identity(load_suite(suite_copy), load_suite(suite_copy).tasks)
    path = suite_copy / "node-slugify" / part
    path.write_bytes(path.read_bytes() + b"\n")
    after = suite_identity(load_suite(suite_copy), load_suite(suite_copy).tasks)
    assert after["digest"] != before["digest"]
    assert suite_differences(before, after) == ["task_suite.tasks[node-slugify]"]


def test_differences_name_a_renamed_suite_and_added_or_removed_tasks():
    old = {"name": "a", "digest": "1", "tasks": {"x": "1", "y": "2"}, "unchecked": ["x"]}
    assert suite_differences(old, {**old, "unchecked": []}) == []
    assert suite_differences(old, {**old, "name": "b"}) == ["task_suite.name"]
    assert suite_differences(old, {**old, "tasks": {"x": "1"}}) == ["task_suite.tasks[y]"]
    assert suite_differences(old, None) == ["task_suite"]
    assert suite_differences(None, None) == []


def test_task_digest_covers_the_verifier(suite_copy):
    task = load_suite(suite_copy).get("py-wordcount")
    before = task_digest(task)
    (suite_copy / "py-wordcount" / "verifier" / "test_wordcount_hidden.py").write_text("# changed\n", encoding="utf-8")
    assert task_digest(task) != before
