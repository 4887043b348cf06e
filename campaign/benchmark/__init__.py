"""The tasks every trial runs: the twelve built-in ones, or a suite of your own.

Tasks are data, not code. A task is a folder (``task.py`` documents the engine's
format, ``harbor.py`` Harbor's); a suite is a directory of them (``suite.py``); what
a task puts in an attempt's working copy, and how its verdict is reached, is
``workspace.py``; ``checks.py`` records which tasks `campaign tasks check` proved
sound. The twelve built-in tasks live in ``tasks/<name>/`` (each with ``task.toml``,
``fixture/``, ``verifier/`` and ``solution/``) and stay the default benchmark.

The task directories carry no ``__init__.py`` so a fixture can never become an
importable subpackage of ``campaign``; they ship as package data.
"""

from __future__ import annotations

from campaign.benchmark.suite import TASKS_DIR, TaskSuite, builtin_suite, load_suite, suite_identity, suite_of, task_digest
from campaign.benchmark.task import VERIFIER_DIRNAME, Task, Verifier, unrunnable
from campaign.benchmark.workspace import (
    HARBOR_LOGS,
    HARBOR_TESTS,
    RUNNER_NAME,
    VerifierRefused,
    apply_solution,
    copy_fixture,
    fixture_digest,
    fixture_files,
    install_harbor_tests,
    install_verifier,
    read_reward,
    verifier_argv,
)


def all_tasks() -> tuple[Task, ...]:
    """The built-in tasks, sorted by name."""
    return builtin_suite().tasks


def task_names() -> tuple[str, ...]:
    return builtin_suite().names()


def get_task(name: str) -> Task:
    """The built-in task called ``name``; the error lists the known names."""
    return builtin_suite().get(name)


def resolve_tasks(spec: str | None) -> tuple[Task, ...]:
    """Built-in tasks selected by ``--tasks NAME,NAME`` (``TaskSuite.resolve``)."""
    return builtin_suite().resolve(spec)


__all__ = [
    "HARBOR_LOGS",
    "HARBOR_TESTS",
    "RUNNER_NAME",
    "TASKS_DIR",
    "VERIFIER_DIRNAME",
    "Task",
    "TaskSuite",
    "Verifier",
    "VerifierRefused",
    "all_tasks",
    "apply_solution",
    "builtin_suite",
    "copy_fixture",
    "fixture_digest",
    "fixture_files",
    "get_task",
    "install_harbor_tests",
    "install_verifier",
    "load_suite",
    "read_reward",
    "resolve_tasks",
    "suite_identity",
    "suite_of",
    "task_digest",
    "task_names",
    "unrunnable",
    "verifier_argv",
]
