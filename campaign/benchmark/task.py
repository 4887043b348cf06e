"""One task as the engine holds it, and the engine's own task format.

A task is a folder. In the engine's format (the twelve built-in tasks, and any
suite written by hand) it holds:

- ``task.toml``: the prompt, and optionally its name (the folder's), title, kind,
  ``requires_failed_tool_call``, a ``[verifier]`` table (``command``, an argv run
  in the working copy once the agent ended, exit 0 a pass; ``timeout_sec``) and an
  ``[agent]`` table (``timeout_sec``, the client's own deadline);
- ``fixture/``: the project the agent starts from (a fresh copy per attempt);
- ``verifier/``: the hidden verifier, installed beneath the working copy only after
  the agent ended (without ``command``: a ``unittest`` suite of ``test_*.py``);
- ``solution/``: the reference solution, files overlaid on the fixture, or a
  ``solve.sh`` run in the working copy; it proves the task solvable.

Harbor task folders are read by ``harbor.py`` into the same ``Task``. A shipped
task that does not parse is an engine bug (CampaignError); an operator's is bad
input naming ``--task-suite`` (UsageProblem).
"""

from __future__ import annotations

import math
import re
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from campaign import inputs
from campaign.errors import CampaignError, UsageProblem

#: Where an engine-format verifier lands in the working copy: a name no agent would create.
VERIFIER_DIRNAME = "_campaign_verifier"
#: A task's (and a suite's) name: it becomes part of trial ids and report keys.
NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
SOLVE_SCRIPT = "solve.sh"
SUITE_OPTION = "--task-suite"

_ENGINE_KEYS = {"name", "title", "kind", "prompt", "requires_failed_tool_call", "verifier", "agent"}
_BUILTIN_KEYS = {"name": str, "title": str, "kind": str, "prompt": str, "requires_failed_tool_call": bool}


@dataclass(frozen=True)
class Verifier:
    """How a task's verdict is reached once the agent ended.

    ``unittest``: the engine's runner over ``verifier/test_*.py``; ``command``: ``argv``
    in the working copy (a word naming a file of ``verifier/`` already points at the
    installed copy); ``harbor``: ``bash /tests/test.sh`` in ``/app``, its reward file
    deciding when it writes one. ``env`` adds variables to the verifier's environment.
    """

    kind: str = "unittest"
    argv: tuple[str, ...] = ()
    timeout_sec: float | None = None
    env: tuple[tuple[str, str], ...] = ()


UNITTEST = Verifier()


@dataclass(frozen=True)
class Task:
    """One task; ``root`` is its folder. ``suite_root`` is None for the built-in tasks.

    ``layout`` is "engine" or "harbor". For a Harbor task ``workspace`` lists the
    copies (source under ``environment/``, destination under ``/app``) that make its
    working copy, and ``needs_image`` says why its environment cannot be made without
    building an image (such a task is never run on the host). ``image_context`` is
    its ``environment/`` when a container runtime can build that image from it (a
    Dockerfile, no compose file, no prebuilt image): ``campaign tasks check`` checks
    such a task in its own container."""

    name: str
    title: str
    kind: str
    prompt: str
    root: Path
    requires_failed_tool_call: bool
    suite_root: Path | None = None
    layout: str = "engine"
    verifier: Verifier = UNITTEST
    agent_timeout_sec: float | None = None
    workspace: tuple[tuple[str, str], ...] = ()
    needs_image: str | None = None
    image_context: Path | None = None
    # A prebuilt image ``task.toml`` names (``[environment] docker_image``): used as it is
    # on this machine, never pulled.
    image_ref: str | None = None

    @property
    def harbor(self) -> bool:
        return self.layout == "harbor"

    @property
    def ships_image(self) -> bool:
        """Its environment is an image to build (``image_context``) or a prebuilt one."""
        return self.image_context is not None or self.image_ref is not None

    @property
    def fixture_dir(self) -> Path:
        return self.root / ("environment" if self.harbor else "fixture")

    @property
    def verifier_dir(self) -> Path:
        return self.root / ("tests" if self.harbor else "verifier")

    @property
    def solution_dir(self) -> Path:
        return self.root / "solution"

    @property
    def solution_script(self) -> Path | None:
        """``solution/solve.sh`` when the solution is a script (Harbor's always is)."""
        script = self.solution_dir / SOLVE_SCRIPT
        return script if self.harbor or script.is_file() else None


Problem = Callable[[str], Exception]


def unrunnable(task: Task, can_map_roots: bool) -> tuple[str, str] | None:
    """(reason, detail) when no attempt can run the task here: its Harbor environment
    needs an image built, or its paths need a mount namespace this runner cannot make."""
    if task.needs_image is not None:
        return "needs_image", task.needs_image
    if task.harbor and not can_map_roots:
        return "needs_privilege", "mapping /app, /tests and /logs needs a runner holding CAP_SYS_ADMIN"
    return None


def builtin_problem(root: Path) -> Problem:
    return lambda why: CampaignError(f"benchmark task {root.name}: {why}")


def suite_problem(root: Path) -> Problem:
    return lambda why: UsageProblem(f"task {root}: {why}", option=SUITE_OPTION)


def read_toml(path: Path, problem: Problem) -> dict[str, Any]:
    """A task's TOML, read as an operator's file: a FIFO or a binary file is refused."""
    try:
        return inputs.toml_loads(inputs.read_text(path, SUITE_OPTION, "task file"))
    except tomllib.TOMLDecodeError as exc:
        raise problem(f"{path.name} is not valid TOML ({exc})") from None


def seconds(value: Any, where: str, problem: Problem) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise problem(f"{where} must be a positive number of seconds")
    return float(value)


_ENV_NAME = re.compile(r"[A-Z][A-Z0-9_]*")


def env_table(value: Any, where: str, problem: Problem) -> tuple[tuple[str, str], ...]:
    """A table of environment variables: upper-case names, string values."""
    if value is None:
        return ()
    if not isinstance(value, Mapping) or not all(isinstance(k, str) and _ENV_NAME.fullmatch(k) and isinstance(v, str) for k, v in value.items()):
        raise problem(f"{where} must be a table of upper-case variable names to strings")
    return tuple(sorted(value.items()))


def checked_name(name: Any, root: Path, problem: Problem) -> str:
    if name is None:
        name = root.name
    if not isinstance(name, str) or name != root.name:
        raise problem(f"task.toml names it {name!r}; a task is named by its folder")
    if not NAME_RE.fullmatch(name):
        raise problem("a task's name is letters, digits, '.', '_' and '-' (at most 64), starting with a letter or digit")
    return name


def load_engine_task(root: Path, suite_root: Path | None) -> Task:
    """Read one engine-format task folder (``suite_root`` None: a shipped task, strictly)."""
    problem = builtin_problem(root) if suite_root is None else suite_problem(root)
    data = read_toml(root / "task.toml", problem)
    if suite_root is None:
        for key, kind in _BUILTIN_KEYS.items():
            if not isinstance(data.get(key), kind):
                raise problem(f"task.toml needs {key} ({kind.__name__})")
    unknown = sorted(set(data) - _ENGINE_KEYS)
    if unknown:
        raise problem(f"task.toml has unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(_ENGINE_KEYS))}")
    name = checked_name(data.get("name"), root, problem)
    for key in ("title", "kind", "prompt"):
        if key in data and not isinstance(data[key], str):
            raise problem(f"task.toml: {key} must be a string")
    if not isinstance(data.get("prompt"), str) or not data["prompt"].strip():
        raise problem("task.toml needs a prompt (the text the agent gets)")
    if not isinstance(data.get("requires_failed_tool_call", False), bool):
        raise problem("task.toml: requires_failed_tool_call must be true or false")
    for part in ("fixture", "verifier", "solution"):
        if not (root / part).is_dir():
            raise problem(f"has no {part}/ directory")
    return Task(
        name=name,
        title=data.get("title") or name,
        kind=data.get("kind") or "custom",
        prompt=data["prompt"].strip() + "\n",
        root=root,
        requires_failed_tool_call=data.get("requires_failed_tool_call", False),
        suite_root=suite_root,
        verifier=_engine_verifier(data.get("verifier"), root / "verifier", problem),
        agent_timeout_sec=_agent_timeout(data.get("agent"), problem),
    )


def _agent_timeout(table: Any, problem: Problem) -> float | None:
    if table is None:
        return None
    if not isinstance(table, Mapping) or set(table) - {"timeout_sec"}:
        raise problem("[agent] holds only timeout_sec")
    return seconds(table.get("timeout_sec"), "[agent] timeout_sec", problem)


def _engine_verifier(table: Any, verifier_dir: Path, problem: Problem) -> Verifier:
    if table is None:
        return UNITTEST
    if not isinstance(table, Mapping) or set(table) - {"command", "timeout_sec"}:
        raise problem("[verifier] holds command (an argv list) and timeout_sec")
    timeout = seconds(table.get("timeout_sec"), "[verifier] timeout_sec", problem)
    command = table.get("command")
    if command is None:
        return Verifier(timeout_sec=timeout)
    if not isinstance(command, list) or not command or not all(isinstance(w, str) and w for w in command):
        raise problem("[verifier] command must be a non-empty list of non-empty strings, e.g. [\"bash\", \"run_tests.sh\"]")
    if any("\0" in w for w in command):
        raise problem("[verifier] command holds a NUL character, which no process argument can carry")
    if _names_verifier_file(command[0], verifier_dir):
        raise problem(f"[verifier] command starts with {command[0]!r}, a file of verifier/: name its interpreter first, e.g. [\"bash\", {command[0]!r}]")
    argv = (command[0], *(f"{VERIFIER_DIRNAME}/{w}" if _names_verifier_file(w, verifier_dir) else w for w in command[1:]))
    return Verifier(kind="command", argv=argv, timeout_sec=timeout)


def _names_verifier_file(word: str, verifier_dir: Path) -> bool:
    """A relative word that names a file of ``verifier/`` (``run_tests.sh``, ``t/main.js``)."""
    if word.startswith(("-", "/")) or ".." in Path(word).parts:
        return False
    return (verifier_dir / word).is_file()
