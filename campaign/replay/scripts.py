"""One replay script per task, generated from the task's own files.

A script makes the client apply the task's reference solution the way an agent
would: look at a file the fix touches, (for a recovery task) run a command that
fails on the unfixed code, write every file of ``solution/``, regenerate what the
task says is generated, run the visible tests, and say it is done. Nothing is
copied by hand: the files come from ``solution/`` at run time, so a changed
reference solution changes the script with it.

Any task of a suite gets one the same way, so an unknown task needs no script
written for it: an overlay solution is written file by file; a ``solve.sh``
solution is one shell command that puts ``solution/`` in place (``/solution`` for
a Harbor task, as Harbor's oracle has it, else a fresh temporary directory) and
runs it in the working copy.
"""

from __future__ import annotations

import base64
import functools
import posixpath
import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

from campaign import benchmark
from campaign.errors import CampaignError
from campaign.replay.steps import (
    ZERO,
    Finish,
    ReadFile,
    Run,
    Step,
    Usage,
    WriteFile,
    total_usage,
    usage_for_step,
)

#: The interpreter name scripts use: Debian-like systems have no bare ``python``.
PYTHON = "python3"

#: The fixture's own tests, stdlib only (the client's environment may lack pytest).
VISIBLE_TESTS = f"{PYTHON} -m unittest -q"

NO_SCRIPT_TEXT = (
    "I have no replay script for this conversation (no benchmark task prompt found), "
    "so I am stopping here without changing anything."
)


@dataclass(frozen=True)
class Generator:
    """A task artifact that its fixture regenerates with a command, not by hand."""

    command: str
    output: str


#: Commands that must fail on the unfixed fixture, for tasks that require the
#: client to observe a failed tool call (``requires_failed_tool_call``).
FAILING_PROBES: dict[str, str] = {
    "unit-table-regen": f"{PYTHON} -c \"from unitconv import convert; print(convert(1, 'nmi', 'm'))\"",
}
#: A suite task's failed tool call: reading notes no earlier attempt left.
SUITE_FAILING_PROBE = "cat NOTES_FROM_PREVIOUS_ATTEMPT.md"

#: The prompt of unit-table-regen says the table is generated; the script runs the
#: generator instead of writing the file when the generator reproduces it exactly.
GENERATORS: dict[str, Generator] = {
    "unit-table-regen": Generator(f"{PYTHON} scripts/gen_table.py --out unitconv/table.py", "unitconv/table.py"),
}


def solution_files(task: benchmark.Task) -> list[str]:
    """Relative posix paths under ``solution/``, as ``benchmark.apply_solution`` overlays them."""
    root = task.solution_dir
    return sorted(
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
    )


def generator_reproduces(task: benchmark.Task, generator: Generator) -> bool:
    """Does running the generator on fixture + solution give the solution's file byte for byte?

    Checked in a scratch copy with this interpreter, so the script only relies on
    the generator when that is provably the same as writing the reference file.
    """
    with tempfile.TemporaryDirectory(prefix="replay-gen-") as scratch:
        work = Path(scratch) / "work"
        benchmark.copy_fixture(task, work)
        for rel in solution_files(task):
            if rel != generator.output:
                (work / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(task.solution_dir / rel, work / rel)
        argv = shlex.split(generator.command)
        if argv[0] == PYTHON:
            argv[0] = sys.executable
        done = subprocess.run(argv, cwd=work, capture_output=True, timeout=60, check=False)
        produced = work / generator.output
        return done.returncode == 0 and produced.is_file() and produced.read_bytes() == (task.solution_dir / generator.output).read_bytes()


def _draft(task: benchmark.Task) -> list[Step]:
    """The script's steps in order, before usage is numbered in."""
    if task.solution_script is not None:
        return _script_draft(task)
    files = solution_files(task)
    changed = [rel for rel in files if (task.fixture_dir / rel).is_file()]
    generator = GENERATORS.get(task.name) if task.suite_root is None else None
    if generator is not None and not generator_reproduces(task, generator):
        generator = None
    steps: list[Step] = []
    read: set[str] = set()
    if changed:
        steps.append(ReadFile(changed[0], ZERO))
        read.add(changed[0])
    steps += _failing_probe(task)
    for rel in files:
        if generator is not None and rel == generator.output:
            continue
        # Claude Code's Write refuses an existing file it has not read first.
        if rel in changed and rel not in read:
            steps.append(ReadFile(rel, ZERO))
            read.add(rel)
        steps.append(WriteFile(rel, (task.solution_dir / rel).read_text(encoding="utf-8"), ZERO))
    if generator is not None:
        steps.append(Run(generator.command, ZERO))
    if task.verifier.kind == "unittest" and (task.fixture_dir / "tests").is_dir():
        steps.append(Run(VISIBLE_TESTS, ZERO))
    steps.append(Finish(f"Done: {task.title}. I changed {', '.join(files)} and the visible tests pass.", ZERO))
    return steps


def _failing_probe(task: benchmark.Task) -> list[Step]:
    if not task.requires_failed_tool_call:
        return []
    probe = FAILING_PROBES.get(task.name) if task.suite_root is None else SUITE_FAILING_PROBE
    if probe is None:
        raise CampaignError(f"replay: task {task.name} requires a failed tool call but has no failing probe")
    return [Run(probe, ZERO, expect_failure=True)]


def _script_draft(task: benchmark.Task) -> list[Step]:
    """A ``solve.sh`` solution: put ``solution/`` in place, run the script in the working copy."""
    where = "/solution" if task.harbor else '"$(mktemp -d)"'
    parts = [f"d={where}", 'mkdir -p "$d"']
    for rel in solution_files(task):
        parent = posixpath.dirname(rel)
        if parent:
            parts.append(f'mkdir -p "$d"/{shlex.quote(parent)}')
        data = base64.b64encode((task.solution_dir / rel).read_bytes()).decode("ascii")
        parts.append(f'printf %s {data} | base64 -d > "$d"/{shlex.quote(rel)}')
    parts.append('bash "$d"/solve.sh')
    return [*_failing_probe(task), Run(" && ".join(parts), ZERO), Finish(f"Done: {task.title}. I ran the fix and it is in place.", ZERO)]


def _numbered(steps: list[Step]) -> tuple[Step, ...]:
    return tuple(replace(step, usage=usage_for_step(index)) for index, step in enumerate(steps))


@functools.cache
def script_for(task_name: str, suite_root: str | None = None) -> tuple[Step, ...]:
    """The script of a task of the suite at ``suite_root`` (None: a built-in task); built
    once per process: it reads files and may run the generator."""
    return _numbered(_draft(benchmark.suite_of(None if suite_root is None else Path(suite_root)).get(task_name, option="--task")))


@functools.cache
def no_script() -> tuple[Step, ...]:
    """What an unrecognised conversation gets: one final answer, usage still scripted."""
    return _numbered([Finish(NO_SCRIPT_TEXT, ZERO)])


def scripted_total_usage(task_name: str | None, suite_root: str | None = None) -> Usage:
    """The sum of every step's usage: what a full conversation through the script reports.

    ``None`` stands for an unrecognised conversation (the no-script answer).
    """
    return total_usage(script_for(task_name, suite_root) if task_name is not None else no_script())
