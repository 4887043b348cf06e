"""Harbor (Terminal-Bench) task folders, read into the engine's ``Task``.

A Harbor task is ``instruction.md`` (the prompt), ``task.toml`` (``[verifier]`` and
``[agent]`` ``timeout_sec``, ``[verifier] env``), ``tests/test.sh`` (the hidden
verifier: its reward file ``/logs/verifier/reward.txt`` or ``reward.json`` decides,
else its exit code), ``solution/solve.sh`` and ``environment/`` (a Dockerfile).

An attempt runs on the host, with no image: the attempt's private mount namespace
shows the working copy at ``/app``, the tests at ``/tests`` and the logs at
``/logs/verifier`` (``campaign.supervise.rootmap``), on the machine's own tools.
The Dockerfile may therefore only copy files of ``environment/`` into ``/app``
(``FROM`` is not pulled, metadata such as ``CMD`` or ``LABEL`` is ignored);
anything else it would do (``RUN``, ``ENV``, a ``USER``, another ``WORKDIR``, an
``ADD`` from a URL, a compose file, a prebuilt image) makes the task ``needs_image``:
listed, never run on the host. Where a container runtime can build its Dockerfile
(``image_context``), ``campaign tasks check`` checks it in its own container.
"""

from __future__ import annotations

import json
import posixpath
import re
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from campaign import inputs
from campaign.benchmark.task import SOLVE_SCRIPT, SUITE_OPTION, Problem, Task, Verifier, checked_name, env_table, read_toml, seconds, suite_problem

WORKSPACE = "/app"
TEST_SCRIPT = "test.sh"
VERIFIER_ARGV = ("bash", f"/tests/{TEST_SCRIPT}")
# Instructions that only describe an image (what it runs, exposes, is labelled): ignored.
_METADATA = {"LABEL", "CMD", "ENTRYPOINT", "EXPOSE", "MAINTAINER", "STOPSIGNAL", "HEALTHCHECK"}
# An image reference as runtimes read one: [REGISTRY/]NAME[:TAG][@sha256:DIGEST].
_IMAGE_REF = re.compile(r"[a-z0-9][A-Za-z0-9._/:-]{0,254}(?:@sha256:[0-9a-f]{64})?")
_ARCHIVES = (".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".zip")


def is_harbor_task(root: Path) -> bool:
    return (root / "instruction.md").is_file()


def load_harbor_task(root: Path, suite_root: Path) -> Task:
    problem = suite_problem(root)
    data = read_toml(root / "task.toml", problem) if (root / "task.toml").exists() else {}
    name = checked_name(None, root, problem)
    prompt = inputs.read_text(root / "instruction.md", SUITE_OPTION, "instruction").strip()
    if not prompt:
        raise problem("instruction.md is empty")
    if not (root / "tests" / TEST_SCRIPT).is_file():
        raise problem(f"has no tests/{TEST_SCRIPT} (the hidden verifier)")
    if not (root / "solution" / SOLVE_SCRIPT).is_file():
        raise problem(f"has no solution/{SOLVE_SCRIPT} (the reference solution that proves it solvable)")
    verifier, agent, environment = (_table(data, key, problem) for key in ("verifier", "agent", "environment"))
    copies, reason = workspace_plan(root / "environment", problem)
    buildable = reason is not None and (root / "environment" / "Dockerfile").is_file() and not _compose(root / "environment")
    prebuilt = environment.get("docker_image")
    if prebuilt:
        if not isinstance(prebuilt, str) or not _IMAGE_REF.fullmatch(prebuilt):
            raise problem("task.toml: [environment] docker_image must be an image reference (NAME[:TAG][@sha256:DIGEST])")
        reason, buildable = "task.toml names a prebuilt docker_image", False
    return Task(
        name=name,
        title=_title(prompt),
        kind="harbor",
        prompt=prompt + "\n",
        root=root,
        requires_failed_tool_call=False,
        suite_root=suite_root,
        layout="harbor",
        verifier=Verifier(
            kind="harbor",
            argv=VERIFIER_ARGV,
            timeout_sec=seconds(verifier.get("timeout_sec"), "[verifier] timeout_sec", problem),
            env=env_table(verifier.get("env"), "[verifier] env", problem),
        ),
        agent_timeout_sec=seconds(agent.get("timeout_sec"), "[agent] timeout_sec", problem),
        workspace=copies,
        needs_image=reason,
        image_context=root / "environment" if buildable else None,
        image_ref=prebuilt or None,
    )


def _title(prompt: str) -> str:
    """The instruction's first line, short: Harbor tasks have no title of their own."""
    first = prompt.splitlines()[0].lstrip("# ").strip()
    return first if len(first) <= 60 else first[:57].rstrip() + "..."


def _table(data: Mapping[str, Any], key: str, problem: Problem) -> Mapping[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, Mapping):
        raise problem(f"task.toml: [{key}] must be a table")
    return value


def workspace_plan(env_dir: Path, problem: Problem) -> tuple[tuple[tuple[str, str], ...], str | None]:
    """(copies, why an image is needed): each copy is (source under ``environment/``,
    destination under ``/app``); a source ending in ``/`` is a directory whose contents
    are copied, as Docker's ``COPY`` does. No ``environment/``: an empty workspace."""
    if not env_dir.is_dir():
        return (), None
    if _compose(env_dir):
        return (), "environment/ has a compose file (services need a container runtime)"
    if (env_dir / ".dockerignore").exists():
        return (), "environment/.dockerignore changes what a COPY takes"
    dockerfile = env_dir / "Dockerfile"
    if not dockerfile.is_file():
        return (), "environment/ has no Dockerfile"
    copies: list[tuple[str, str]] = []
    workdir, images = "/", 0
    for line in _instructions(inputs.read_text(dockerfile, SUITE_OPTION, "Dockerfile")):
        word, _, rest = line.partition(" ")
        word, rest = word.upper(), rest.strip()
        if word == "FROM":
            images += 1
            if images > 1:
                return (), "a multi-stage Dockerfile builds in containers"
        elif word == "WORKDIR":
            workdir = posixpath.normpath(posixpath.join(workdir, rest))
            if workdir != WORKSPACE:
                return (), f"WORKDIR {rest}: the workspace is {WORKSPACE}"
        elif word in ("COPY", "ADD"):
            found = _copies(word, rest, workdir, env_dir, problem)
            if isinstance(found, str):
                return (), found
            copies += found
        elif word not in _METADATA:
            return (), f"{word} in environment/Dockerfile needs an image build"
    return tuple(copies), None


def _compose(env_dir: Path) -> bool:
    return any((env_dir / name).exists() for name in ("docker-compose.yaml", "docker-compose.yml", "compose.yaml"))


def _instructions(text: str) -> list[str]:
    """The Dockerfile's instructions, comments dropped and continuation lines joined."""
    out, pending = [], ""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        out.append((pending + line).strip())
        pending = ""
    if pending.strip():
        out.append(pending.strip())
    return out


def _copies(word: str, rest: str, workdir: str, env_dir: Path, problem: Problem) -> list[tuple[str, str]] | str:
    """The copies of one COPY/ADD, or why it needs an image build."""
    try:
        parts = json.loads(rest) if rest.startswith("[") else shlex.split(rest)
    except ValueError:
        raise problem(f"environment/Dockerfile: cannot read {word} {rest}") from None
    if not isinstance(parts, list) or len(parts) < 2 or not all(isinstance(p, str) for p in parts):
        raise problem(f"environment/Dockerfile: {word} needs a source and a destination")
    if any(p.startswith("--") for p in parts):
        return f"{word} with options ({' '.join(p for p in parts if p.startswith('--'))})"
    *sources, dest = parts
    target = posixpath.normpath(posixpath.join(workdir, dest))
    if target != WORKSPACE and not target.startswith(WORKSPACE + "/"):
        return f"{word} into {dest}, outside the workspace {WORKSPACE}"
    where = posixpath.relpath(target, WORKSPACE)
    where = "" if where == "." else where
    into_dir = dest.endswith("/") or len(sources) > 1
    out = []
    for source in sources:
        if "://" in source or any(ch in source for ch in "*?["):
            return f"{word} {source}: a URL or a pattern"
        if word == "ADD" and source.endswith(_ARCHIVES):
            return f"ADD {source} unpacks an archive"
        rel = posixpath.normpath(source)
        if rel.startswith("../") or rel == ".." or posixpath.isabs(rel):
            raise problem(f"environment/Dockerfile: {word} {source} is outside environment/")
        path = env_dir / rel
        # Docker reads a source inside its build context; a link on the way there
        # (environment/etc -> /etc) would copy host files the task's digest never saw.
        if not (env_dir / posixpath.dirname(rel)).resolve().is_relative_to(env_dir.resolve()):
            raise problem(f"environment/Dockerfile: {word} {source} goes through a link out of environment/")
        if path.is_dir() and not path.is_symlink():
            out.append(("./" if rel == "." else rel.rstrip("/") + "/", where))
        elif path.is_file() or path.is_symlink():
            name = posixpath.basename(rel)
            out.append((rel, posixpath.join(where, name) if into_dir or not where else where))
        else:
            raise problem(f"environment/Dockerfile: {word} {source}: no such file in environment/")
    return out
