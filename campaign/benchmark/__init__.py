"""The twelve-task benchmark every trial runs: fixture, prompt, hidden verifier, reference.

Tasks are data, not code. Each lives in ``tasks/<name>/``:

- ``task.toml``: name, title, kind, the prompt the agent gets, and whether solving
  it requires recovering from a failed tool call (the engine checks that separately);
- ``fixture/``: the small project the agent works on (a fresh copy per attempt);
- ``verifier/``: the hidden ``unittest`` suite, copied in only after the agent ends;
- ``solution/``: the reference solution, an overlay of files over the fixture, which
  exists so the benchmark itself can be proven solvable (fixture fails, overlay passes).

The task directories carry no ``__init__.py`` so a fixture can never become an
importable subpackage of ``campaign``; they ship as package data.
"""

from __future__ import annotations

import functools
import os
import shutil
import tomllib
from dataclasses import dataclass
from pathlib import Path

from campaign.digests import tree_digest
from campaign.errors import CampaignError, UnknownTask, UsageProblem

TASKS_DIR = Path(__file__).resolve().parent / "tasks"

#: Where the hidden suite lands in the working copy: a name no agent would create.
VERIFIER_DIRNAME = "_campaign_verifier"

#: The runner installed next to the hidden tests (not matched by ``test_*.py``).
RUNNER_NAME = "_run_hidden_suite.py"
_RUNNER_SOURCE = Path(__file__).resolve().parent / "verifier_runner.py"

_TASKS_OPTION = "--tasks"
_IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc")


@dataclass(frozen=True)
class Task:
    """One benchmark task as shipped; ``root`` is its directory under ``tasks/``."""

    name: str
    title: str
    kind: str
    prompt: str
    root: Path
    requires_failed_tool_call: bool

    @property
    def fixture_dir(self) -> Path:
        return self.root / "fixture"

    @property
    def verifier_dir(self) -> Path:
        return self.root / "verifier"

    @property
    def solution_dir(self) -> Path:
        return self.root / "solution"


def _load_task(root: Path) -> Task:
    """Read one ``task.toml``; a malformed shipped task is an engine bug, so fail loudly."""
    with open(root / "task.toml", "rb") as fh:
        data = tomllib.load(fh)
    expected = {"name": str, "title": str, "kind": str, "prompt": str, "requires_failed_tool_call": bool}
    for key, kind in expected.items():
        if not isinstance(data.get(key), kind):
            raise CampaignError(f"benchmark task {root.name}: task.toml needs {key} ({kind.__name__})")
    if data["name"] != root.name:
        raise CampaignError(f"benchmark task {root.name}: task.toml names it {data['name']!r}")
    return Task(
        name=data["name"],
        title=data["title"],
        kind=data["kind"],
        prompt=data["prompt"].strip() + "\n",
        root=root,
        requires_failed_tool_call=data["requires_failed_tool_call"],
    )


@functools.cache
def all_tasks() -> tuple[Task, ...]:
    """Every shipped task, sorted by name; read once because the set is fixed at install."""
    roots = sorted(p for p in TASKS_DIR.iterdir() if (p / "task.toml").is_file())
    return tuple(_load_task(root) for root in roots)


def task_names() -> tuple[str, ...]:
    return tuple(task.name for task in all_tasks())


def get_task(name: str) -> Task:
    """The task called ``name``; the error lists the known names so the operator can fix ``--tasks``."""
    for task in all_tasks():
        if task.name == name:
            return task
    known = ", ".join(task_names())
    raise UnknownTask(f"unknown task {name!r}; known: {known}", option=_TASKS_OPTION)


def resolve_tasks(spec: str | None) -> tuple[Task, ...]:
    """Tasks selected by a ``--tasks NAME,NAME`` value: omitted means all twelve, empty is refused.

    The given order is kept (it is part of the experiment's identity) and a name
    given twice is rejected rather than silently weighting that task double.
    """
    if spec is None:
        return all_tasks()
    if not spec.strip():
        raise UsageProblem("--tasks is empty; give NAME,NAME (`campaign tasks list`) or leave it out for all twelve", option=_TASKS_OPTION)
    names = [part.strip() for part in spec.split(",")]
    if any(not name for name in names):
        raise UsageProblem(f"empty task name in {spec!r}", option=_TASKS_OPTION)
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise UsageProblem(f"task {name!r} is listed more than once", option=_TASKS_OPTION)
        seen.add(name)
    return tuple(get_task(name) for name in names)


def fixture_digest(task: Task) -> str:
    """Content identity of the fixture, bound into the experiment before any paid call."""
    return tree_digest(task.fixture_dir)


def fixture_files(task: Task) -> list[str]:
    """The fixture's files as sorted relative posix paths (caches excluded, like the digest)."""
    found = []
    for dirpath, dirnames, filenames in os.walk(task.fixture_dir):
        dirnames[:] = [d for d in dirnames if d != "__pycache__"]
        for name in filenames:
            if not name.endswith(".pyc"):
                found.append((Path(dirpath) / name).relative_to(task.fixture_dir).as_posix())
    return sorted(found)


def copy_fixture(task: Task, dest: Path) -> None:
    """Put a fresh copy of the fixture at ``dest``, which must not exist or be empty.

    Refusing a non-empty ``dest`` guarantees no leftover from an earlier attempt can
    mix into this one. Symlinks are copied as links, never followed.
    """
    dest = Path(dest)
    if dest.is_symlink() or (dest.exists() and (not dest.is_dir() or any(dest.iterdir()))):
        raise FileExistsError(f"fixture destination is not empty: {dest}")
    shutil.copytree(task.fixture_dir, dest, symlinks=True, ignore=_IGNORED, dirs_exist_ok=True)


def apply_solution(task: Task, workdir: Path) -> None:
    """Overlay the reference solution onto a fixture copy (same relative paths)."""
    shutil.copytree(task.solution_dir, Path(workdir), symlinks=True, ignore=_IGNORED, dirs_exist_ok=True)


class VerifierRefused(CampaignError):
    """The hidden suite could not be installed without following or crossing something
    the agent left in the working copy (a link, a mount, an unremovable tree)."""


def install_verifier(task: Task, workdir: Path | int) -> Path:
    """Copy the hidden suite and its runner into ``workdir``; return that directory
    (relative to the descriptor when ``workdir`` is a directory descriptor).

    Whatever the agent left at that name is removed first, so the suite that runs is
    exactly the shipped one. Every step resolves beneath ``workdir`` without
    following a link or crossing a mount: pass the descriptor the engine pinned
    before the agent ran, and a working copy the agent swapped for a link cannot
    send a single write elsewhere. VerifierRefused when that cannot be done.
    """
    if isinstance(workdir, int):
        _install_at(task, workdir)
        return Path(VERIFIER_DIRNAME)
    fd = os.open(workdir, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        _install_at(task, fd)
    finally:
        os.close(fd)
    return Path(workdir) / VERIFIER_DIRNAME


def _install_at(task: Task, work_fd: int) -> None:
    from campaign.supervise import disposal, pinned  # process machinery, not needed to list tasks

    sources = _verifier_sources(task)
    try:
        try:
            disposal.remove_entry(work_fd, VERIFIER_DIRNAME)
        except FileNotFoundError:
            pass
        os.mkdir(VERIFIER_DIRNAME, 0o700, dir_fd=work_fd)
        dest = pinned.open_dir(work_fd, VERIFIER_DIRNAME)
        try:
            for relative, content in sources:
                if content is None:
                    parent, _, leaf = relative.rpartition("/")
                    where = pinned.open_dir(dest, parent) if parent else dest
                    try:
                        os.mkdir(leaf, 0o700, dir_fd=where)
                    finally:
                        if where != dest:
                            os.close(where)
                    continue
                fd = pinned.open_beneath(dest, relative, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                with os.fdopen(fd, "wb") as fh:
                    fh.write(content)
        finally:
            os.close(dest)
    except disposal.Refused as exc:
        raise VerifierRefused(f"the working copy's {VERIFIER_DIRNAME} cannot be replaced safely ({exc.reason})") from None
    except OSError as exc:
        raise VerifierRefused(f"the hidden suite cannot be installed in the working copy ({os.strerror(exc.errno or 0)})") from None


def _verifier_sources(task: Task) -> list[tuple[str, bytes | None]]:
    """(relative path, content, or None for a directory), parents first; read before
    anything in the working copy is touched, so a packaging problem is never blamed on the agent."""
    found: list[tuple[str, bytes | None]] = []
    for dirpath, dirnames, filenames in os.walk(task.verifier_dir):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        base = Path(dirpath).relative_to(task.verifier_dir)
        found += [((base / d).as_posix(), None) for d in dirnames]
        found += [((base / f).as_posix(), (Path(dirpath) / f).read_bytes()) for f in sorted(filenames) if not f.endswith(".pyc")]
    found.append((RUNNER_NAME, _RUNNER_SOURCE.read_bytes()))
    return found


def verifier_argv(task: Task, python: str, workdir: Path | None = None) -> list[str]:
    """The command, run with the working copy as cwd, whose exit status is the verdict (0 == pass).

    ``-I`` keeps the working copy, ``PYTHON*`` variables and user site out of the
    interpreter's startup (an agent's ``sitecustomize.py`` or ``json.py`` cannot
    shadow the standard library); the runner then puts the working copy on the path
    after the standard library. ``-B`` leaves no bytecode in the working copy.
    Without ``workdir`` the runner is named relative to the cwd, for a verifier
    started in a pinned directory whose path may no longer lead to it.
    ``task`` is accepted for symmetry with the other helpers; the command is the same
    for every task.
    """
    del task
    runner = Path(VERIFIER_DIRNAME) / RUNNER_NAME
    return [python, "-I", "-B", str(Path(workdir) / runner if workdir is not None else runner)]


__all__ = [
    "RUNNER_NAME",
    "TASKS_DIR",
    "VERIFIER_DIRNAME",
    "Task",
    "VerifierRefused",
    "all_tasks",
    "apply_solution",
    "copy_fixture",
    "fixture_digest",
    "fixture_files",
    "get_task",
    "install_verifier",
    "resolve_tasks",
    "task_names",
    "verifier_argv",
]
