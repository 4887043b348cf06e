"""Which tasks `campaign tasks check` proved sound: one small file per task digest.

A task proven sound (its untouched fixture fails, fixture plus solution passes,
the verifier agrees with itself run after run) is recorded under its digest, so
any change to the task (a byte of its verifier) makes it unchecked again. Lanes
that plan or run trials on a suite say which selected tasks were never checked:
a warning, never a refusal. The records live beside the default store
(``$XDG_DATA_HOME/campaign/task-checks``), or in ``$CAMPAIGN_TASK_CHECKS``.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from campaign.benchmark.suite import task_digest
from campaign.benchmark.task import Task
from campaign.errors import UsageProblem

CHECKS_ENV = "CAMPAIGN_TASK_CHECKS"
# Runs of each condition a check makes by default: the verifier must agree with itself.
RUNS = 3


def checks_dir(environ: Mapping[str, str] = os.environ) -> Path:
    if environ.get(CHECKS_ENV):
        return Path(environ[CHECKS_ENV]).expanduser()
    base = environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "campaign" / "task-checks"


def check_place(environ: Mapping[str, str] = os.environ) -> None:
    """Where the records go is a directory, or nothing yet: checked before any task runs,
    not found when the first sound task is recorded (a traceback after minutes of checks)."""
    where = checks_dir(environ)
    probe = next((p for p in (where, *where.parents) if p.exists()), None)
    if probe is not None and not probe.is_dir():
        named = f"${CHECKS_ENV}" if environ.get(CHECKS_ENV) else "the task-checks directory"
        raise UsageProblem(f"{named} ({where}) needs {probe} to be a directory; point it at a directory", option=CHECKS_ENV if environ.get(CHECKS_ENV) else None)


def record_sound(task: Task, digest: str, checked_at: dt.datetime, environ: Mapping[str, str] = os.environ) -> Path:
    """Write the task's record (atomically: a half-written record never counts)."""
    where = checks_dir(environ)
    where.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{digest}.", dir=where)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump({"task": task.name, "digest": digest, "checked_at": checked_at.isoformat()}, fh)
    path = where / f"{digest}.json"
    os.replace(tmp, path)
    return path


def forget(digest: str, environ: Mapping[str, str] = os.environ) -> None:
    (checks_dir(environ) / f"{digest}.json").unlink(missing_ok=True)


def is_checked(digest: str, environ: Mapping[str, str] = os.environ) -> bool:
    return (checks_dir(environ) / f"{digest}.json").is_file()


def unchecked(tasks: Sequence[Task], environ: Mapping[str, str] = os.environ) -> tuple[str, ...]:
    """The names of the suite tasks never proven sound as they are now (the built-in
    tasks are proven by the engine's own tests)."""
    return tuple(t.name for t in tasks if t.suite_root is not None and not is_checked(task_digest(t), environ))
