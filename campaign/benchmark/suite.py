"""Task suites: the twelve built-in tasks, or a directory of task folders (``--task-suite DIR``).

A suite directory holds one folder per task, in the engine's format (``task.toml``
with its ``fixture/``, ``verifier/``, ``solution/``) or Harbor's (``instruction.md``,
``tests/``, ``solution/solve.sh``, ``environment/``); other entries are ignored. Its
name is ``name`` in an optional ``suite.toml``, else the directory's name.

A suite is part of an experiment's identity: ``suite_identity`` binds its name, each
selected task's digest (every file of the task folder: definition, fixture,
verifier, solution) and their digest together; ``campaign.experiment.differences`` names
the task whose digest changed, so a resume, a worker or an approved live run can say
which task is no longer the one that was run. The built-in suite has no such
entry: its tasks are bound as they always were (their fixtures, and the source).
"""

from __future__ import annotations

import functools
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from campaign import inputs
from campaign.benchmark.harbor import is_harbor_task, load_harbor_task
from campaign.benchmark.task import NAME_RE, SUITE_OPTION, Task, load_engine_task, read_toml
from campaign.canonical import spec_digest
from campaign.digests import tree_digest
from campaign.errors import UnknownTask, UsageProblem

TASKS_DIR = Path(__file__).resolve().parent / "tasks"
TASKS_OPTION = "--tasks"


@dataclass(frozen=True)
class TaskSuite:
    """A suite as loaded: ``builtin`` for the engine's twelve tasks."""

    name: str
    root: Path
    tasks: tuple[Task, ...]
    builtin: bool = False

    def names(self) -> tuple[str, ...]:
        return tuple(task.name for task in self.tasks)

    def describe(self) -> str:
        return "the built-in benchmark" if self.builtin else f"task suite {self.name}"

    def get(self, name: str, option: str = TASKS_OPTION) -> Task:
        """The task called ``name``; the error lists the known names so ``--tasks`` can be fixed."""
        for task in self.tasks:
            if task.name == name:
                return task
        raise UnknownTask(f"unknown task {name!r} in {self.describe()}; known: {', '.join(self.names())}", option=option)

    def resolve(self, spec: str | None) -> tuple[Task, ...]:
        """Tasks selected by ``--tasks NAME,NAME``: omitted means every task, empty is refused.

        The given order is kept (it is part of the experiment's identity) and a name
        given twice is rejected rather than silently weighting that task double.
        """
        if spec is None:
            return self.tasks
        if not spec.strip():
            every = "all twelve" if self.builtin else f"every task of {self.describe()}"
            raise UsageProblem(f"--tasks is empty; give NAME,NAME (`campaign tasks list`) or leave it out for {every}", option=TASKS_OPTION)
        names = [part.strip() for part in spec.split(",")]
        if any(not name for name in names):
            raise UsageProblem(f"empty task name in {spec!r}", option=TASKS_OPTION)
        seen: set[str] = set()
        for name in names:
            if name in seen:
                raise UsageProblem(f"task {name!r} is listed more than once", option=TASKS_OPTION)
            seen.add(name)
        return tuple(self.get(name) for name in names)


@functools.cache
def builtin_suite() -> TaskSuite:
    """The shipped tasks, sorted by name; read once because the set is fixed at install."""
    roots = sorted(p for p in TASKS_DIR.iterdir() if (p / "task.toml").is_file())
    return TaskSuite("builtin", TASKS_DIR, tuple(load_engine_task(root, None) for root in roots), builtin=True)


def suite_of(path: Path | None) -> TaskSuite:
    """``--task-suite DIR`` (None: the built-in tasks). Read afresh on every call, so a
    task changed since the last read is seen as changed."""
    return builtin_suite() if path is None else load_suite(path)


def load_suite(path: Path) -> TaskSuite:
    root = Path(path).expanduser().absolute()
    if not root.is_dir():
        raise UsageProblem(f"{path} is not a directory of task folders", option=SUITE_OPTION)
    # lexists: a task.toml that is a FIFO or a broken link is a bad task, not "no task here".
    folders = sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".") and (os.path.lexists(p / "task.toml") or is_harbor_task(p)))
    if not folders:
        raise UsageProblem(f"{path} holds no task folder (a folder with task.toml, or a Harbor task with instruction.md)", option=SUITE_OPTION)
    for folder in folders:
        _refuse_special_files(folder)
    tasks = tuple(load_harbor_task(f, root) if is_harbor_task(f) else load_engine_task(f, root) for f in folders)
    return TaskSuite(_suite_name(root), root, tasks)


def _suite_name(root: Path) -> str:
    config = root / "suite.toml"
    name: Any = root.name
    if config.exists():
        data = read_toml(config, lambda why: UsageProblem(f"{config}: {why}", option=SUITE_OPTION))
        if set(data) - {"name"}:
            raise UsageProblem(f"{config} holds only name", option=SUITE_OPTION)
        name = data.get("name", root.name)
    if not isinstance(name, str) or not NAME_RE.fullmatch(name):
        raise UsageProblem(
            f"the suite's name {name!r} must be letters, digits, '.', '_' and '-' (at most 64); set name in {root / 'suite.toml'}", option=SUITE_OPTION
        )
    return name


def _refuse_special_files(folder: Path) -> None:
    """A FIFO, device or socket in a task would block or never end when copied or hashed."""
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            full = Path(dirpath) / name
            try:
                name.encode()
            except UnicodeEncodeError:
                # A name is part of the task's identity and of the working copy; one that is
                # not UTF-8 can be neither hashed as text nor shown in a report.
                shown = os.fsencode(full).decode("utf-8", "backslashreplace")
                raise UsageProblem(f"{shown}: a file name that is not UTF-8; rename it", option=SUITE_OPTION) from None
            mode = full.lstat().st_mode
            if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode)):
                raise UsageProblem(f"{full} is {inputs.kind_of(mode)}; a task holds files, directories and links only", option=SUITE_OPTION)
            if stat.S_ISLNK(mode) and _read_through(full.relative_to(folder).parts) and not _leads_inside(full, folder):
                raise UsageProblem(
                    f"{full} is a link to {os.readlink(full)}, which is not a file of the task; the task's definition, verifier and "
                    "solution are read through links, and the task's identity holds only what is in its folder: copy the file in",
                    option=SUITE_OPTION,
                )


# The parts of a task read through a link (their content is what runs), unlike a fixture,
# whose links are copied as links: a link there must lead to a file of the task itself,
# or what runs could change while the task's digest (its files and link texts) does not.
READ_THROUGH = (("task.toml",), ("instruction.md",), ("verifier",), ("solution",), ("tests",), ("environment", "Dockerfile"))


def _read_through(parts: tuple[str, ...]) -> bool:
    """A part of the task read through a link, or a directory on the way to one."""
    return any(parts[: len(path)] == path or path[: len(parts)] == parts for path in READ_THROUGH)


def _leads_inside(link: Path, folder: Path) -> bool:
    try:
        return link.resolve(strict=True).is_relative_to(folder.resolve(strict=True))
    except (OSError, RuntimeError):  # broken, or a loop
        return False


def task_digest(task: Task) -> str:
    """Every file of the task's folder: its definition, fixture, verifier and solution."""
    return tree_digest(task.root)


def suite_identity(suite: TaskSuite, tasks: tuple[Task, ...]) -> dict[str, Any] | None:
    """The experiment's ``task_suite`` entry (None for the built-in tasks)."""
    if suite.builtin:
        return None
    digests = {task.name: task_digest(task) for task in tasks}
    return {"name": suite.name, "digest": spec_digest(dict(sorted(digests.items()))), "tasks": digests}
