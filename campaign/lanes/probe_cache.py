"""A wire probe's measurement, reused where everything that decides it is the same.

Opt-in: ``CAMPAIGN_PROBE_CACHE=DIR``. The test suite sets it for its session, where
dozens of campaigns probe the same five clients; CI, or an operator planning one
experiment again and again, may too. Unset, every probe runs.

The measurement (``probe.measure``: each variant's wire diagnostics from one
replayed run) is a function of the engine's code, the agent profile, the installed
client, the seeds copied into its HOME, what its allowlisted environment takes from
ours (PATH, the locale), the model name and the task. The key holds each: the
engine as a digest of its own source files; the client as the version its profile's
command reports and the bytes of the executable it resolves to (npm stamps every
file it unpacks with one fixed mtime, so no stat would do). A stale entry still
could not change a verdict: every attempt confirms its own catalog on the wire, and
is ``profile_unconfirmed`` otherwise. Only whole measurements are kept; an entry
that does not read back is a miss, and entries are written by rename, so two runs
racing for one key at worst both probe.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import campaign
from campaign.agents import seeds
from campaign.agents.client_version import read_client_version
from campaign.agents.profile_model import AgentProfile
from campaign.benchmark import Task
from campaign.benchmark.suite import task_digest
from campaign.isolation import MINIMAL_VARS

ENV = "CAMPAIGN_PROBE_CACHE"
# Bumped when what an entry holds changes shape.
FORMAT = 1


@functools.cache
def engine_digest() -> str:
    """Every Python file of the installed engine, by path and content."""
    root = Path(campaign.__file__).parent
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        h.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def _file_digest(path: str | None) -> str | None:
    if path is None:
        return None
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def client_identity(profile: AgentProfile, environ: Mapping[str, str], version: str | None = None) -> dict[str, Any]:
    """The installed client as its profile's version command reports it (``version``, when
    the caller has just read it) and the bytes of the executable that command (or, without
    one, the client command) resolves to."""
    if version is None and profile.client_version is not None:
        version = read_client_version(profile, environ)
    command = profile.client_version or profile.client
    found = shutil.which(command[0], path=environ.get("PATH"))
    real = os.path.realpath(found) if found else None
    return {"version": version, "executable": real, "sha256": _file_digest(real)}


@dataclass(frozen=True)
class ProbeCache:
    directory: Path

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> ProbeCache | None:
        value = environ.get(ENV)
        return cls(Path(value).expanduser()) if value else None

    def key(
        self,
        profile: AgentProfile,
        *,
        model: str,
        task: Task,
        runner_python: str,
        environ: Mapping[str, str],
        client_version: str | None = None,
        configs: Mapping[str, str] | None = None,
        image: str | None = None,
    ) -> str:
        seed_root = seeds.seeds_dir(environ)
        parts = {
            "format": FORMAT,
            "engine": engine_digest(),
            # A frozen dataclass of plain values: its repr names every field.
            "profile": repr(profile),
            "client": client_identity(profile, environ, client_version),
            "seeds": [(name, str(seed_root / name)) for _, name in profile.home_seed],
            # What the client's allowlisted environment takes from this one.
            "environ": {name: environ.get(name) for name in (*MINIMAL_VARS, *(var for var, _ in profile.sdk_path_vars))},
            "model": model,
            "task": [task.name, task_digest(task)],
            "python": os.path.realpath(runner_python),
            # The variants run, in order, each with its config (None: the built-in pair's).
            "configs": None if configs is None else list(configs.items()),
        }
        if image is not None:
            parts["image"] = image  # measured in a container of the task's image (host keys unchanged)
        return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()

    def load(self, key: str) -> dict[str, dict] | None:
        try:
            entry = json.loads((self.directory / f"{key}.json").read_text())
        except (OSError, ValueError):
            return None
        measured = entry.get("measured") if isinstance(entry, dict) and entry.get("format") == FORMAT else None
        if not isinstance(measured, dict) or not all(isinstance(v, dict) for v in measured.values()):
            return None
        return measured

    def store(self, key: str, measured: Mapping[str, dict]) -> None:
        """Keep the measurement; a place that cannot take it (not a directory, full, read-only)
        only costs the next run its probe, so it never fails the campaign that measured it."""
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=f".{key}.", suffix=".tmp")
        except OSError:
            return
        try:
            with os.fdopen(fd, "w") as f:
                json.dump({"format": FORMAT, "measured": measured}, f, sort_keys=True)
            os.replace(tmp, self.directory / f"{key}.json")
        except OSError:
            Path(tmp).unlink(missing_ok=True)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
