"""Private failure bundles: what a human needs to debug a failed attempt, locally.

Never uploaded, never committed, never inside the source tree, mode 0700, and
scrubbed of every approved credential's value before it is written.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from campaign.lanes.pinned_root import PinnedRoot
from campaign.supervise.pinned import NotOurs

CLEANUP_LOG = "cleanup.log"
BUNDLED = ("client.out", "client.err", "runtime.out", "runtime.err", "verifier.out", "verifier.err")
_SAFE = re.compile(r"[^A-Za-z0-9._-]+")
REDACTED = b"[redacted credential]"


def _scrub(data: bytes, secrets: list[bytes]) -> bytes:
    for value in secrets:
        data = data.replace(value, REDACTED)
    return data


def write_bundle(failure_dir: Path, trial_id: str, root: PinnedRoot, *, credential_names: tuple[str, ...]) -> Path:
    """Copy the attempt's captures and cleanup.log into ``failure_dir/<trial_id>/``.

    They are read through the root's pinned descriptors: a capture the agent
    swapped for a link, a FIFO or a device is left out, never followed or waited on.
    """
    failure_dir = Path(failure_dir)
    failure_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(failure_dir, 0o700)
    dest = failure_dir / _SAFE.sub("_", trial_id)
    dest.mkdir(mode=0o700, exist_ok=True)
    # Longest first, so a credential that contains another is replaced whole.
    secrets = sorted((os.environ[n].encode() for n in credential_names if os.environ.get(n)), key=len, reverse=True)
    readers = [(name, root.read) for name in BUNDLED if name in root.created()] + [(CLEANUP_LOG, root.read_root_file)]
    for name, read in readers:
        try:
            data = read(name)
        except NotOurs:
            continue
        fd = os.open(dest / name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(_scrub(data, secrets))
    return dest
