"""Which container an attempt ran in, for a recovery that has only the store and the root.

An attempt whose task ships an image runs in a container named from its stored row (as
its cgroup is: ``campaign-<cgroup name>``). Before the container is started the runner
writes, into the attempt's private root, which runtime starts it; a recovery after a
killed runner reads that file, and, once the attempt's processes are proven gone (the
ledger and the cgroup witness), removes the container the runtime still keeps (a killed
conmon leaves it listed, its filesystem mounted) and asks the runtime that it is gone.
Nothing here trusts the file for the name: it is derived from the row again.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Mapping

from campaign.containers import Runtime, cli_env, exists_argv, rm_argv

RECORD = "container.json"
_RUNTIMES = ("podman", "docker")
_TIMEOUT_S = 60.0


def write(root: str, runtime: str) -> None:
    """Record the runtime that is about to start this attempt's container."""
    fd = os.open(os.path.join(root, RECORD), os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w") as fh:
        json.dump({"runtime": runtime}, fh)


def read_runtime(root: str | None) -> str | None:
    """The recorded runtime executable (an absolute path to podman or docker), or None:
    no container was started for the attempt, or the record is not one we wrote."""
    if not root:
        return None
    try:
        fd = os.open(os.path.join(root, RECORD), os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        with os.fdopen(fd) as fh:
            data = json.loads(fh.read(4096))
    except (OSError, ValueError):
        return None
    runtime = data.get("runtime") if isinstance(data, dict) else None
    if not isinstance(runtime, str) or not os.path.isabs(runtime) or os.path.basename(runtime) not in _RUNTIMES:
        return None
    return runtime


def remove(runtime: str, name: str, environ: Mapping[str, str] = os.environ) -> bool:
    """Remove the container (once more if the first try fails) and prove with the runtime
    that it is gone; False when that cannot be shown (it is then kept for inspection)."""
    client, env = Runtime(os.path.basename(runtime), runtime), cli_env(environ)
    for _ in range(2):
        if _call(rm_argv(client, name), env) == 0:
            break
    return _call(exists_argv(client, name), env) == 1


def _call(argv: list[str], env: Mapping[str, str]) -> int | None:
    try:
        return subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, env=dict(env), timeout=_TIMEOUT_S).returncode
    except (OSError, subprocess.TimeoutExpired):
        return None
