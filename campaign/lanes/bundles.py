"""Private failure bundles: what a human needs to debug a failed attempt, locally.

Never uploaded, never committed, never inside the source tree, mode 0700, and
scrubbed of every approved credential's value before it is written.
"""

from __future__ import annotations

import base64
import json
import os
import re
import urllib.parse
from pathlib import Path

from campaign.lanes.pinned_root import PinnedRoot
from campaign.supervise.pinned import NotOurs

CLEANUP_LOG = "cleanup.log"
BUNDLED = ("client.out", "client.err", "runtime.out", "runtime.err", "verifier.out", "verifier.err")
_SAFE = re.compile(r"[^A-Za-z0-9._-]+")
REDACTED = b"[redacted credential]"


# A base64 core shorter than this could match ordinary text by chance.
_MIN_ENCODED = 16


def secret_forms(value: str) -> list[bytes]:
    """Every form of a credential a client or a provider's echo may write: the value as
    set, without the whitespace an HTTP stack trims from a header, percent-encoded (upper
    and lower case hex), inside a JSON string (escaped as Python's and as encoders that
    also escape "/" write it), and base64 (standard and URL-safe) at each of the three
    alignments it can take inside a longer encoded text (the characters that also encode
    a neighbour left out)."""
    trimmed = value.strip()
    quoted = urllib.parse.quote(trimmed, safe="")
    in_json = json.dumps(trimmed)[1:-1]
    forms = {value.encode(), trimmed.encode(), quoted.encode(), re.sub(r"%[0-9A-F]{2}", lambda m: m[0].lower(), quoted).encode()}
    forms |= {in_json.encode(), in_json.replace("/", "\\/").encode()}
    raw = trimmed.encode()
    for shift in range(3):
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            encoded = encode(b"\0" * shift + raw)
            # The first block mixes in the neighbour before (when shifted); the last, the one after.
            core = encoded[4 if shift else 0 : len(encoded) - (4 if (shift + len(raw)) % 3 else 0)]
            if len(core) >= _MIN_ENCODED:
                forms.add(core)
    return sorted((f for f in forms if f), key=len, reverse=True)


def _scrub(data: bytes, secrets: list[bytes]) -> bytes:
    for value in secrets:
        data = data.replace(value, REDACTED)
    return data


def _free_dir(failure_dir: Path, name: str) -> Path:
    """``name``, or ``name.2``, ``name.3``...: a trial that runs again (or the same trial
    of another campaign) gets a bundle of its own, never one mixed into an earlier one."""
    for n in range(1, 10_000):
        dest = failure_dir / (name if n == 1 else f"{name}.{n}")
        try:
            dest.mkdir(mode=0o700)
        except FileExistsError:
            continue
        return dest
    raise FileExistsError(f"{failure_dir / name}: 10,000 bundles of one trial already")


def write_bundle(failure_dir: Path, trial_id: str, root: PinnedRoot, *, credential_names: tuple[str, ...]) -> Path:
    """Copy the attempt's captures and cleanup.log into ``failure_dir/<trial_id>/`` (or
``<trial_id>.N/`` when an earlier attempt's bundle holds that name).

    They are read through the root's pinned descriptors: a capture the agent
    swapped for a link, a FIFO or a device is left out, never followed or waited on.
    """
    failure_dir = Path(failure_dir)
    failure_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(failure_dir, 0o700)
    dest = _free_dir(failure_dir, _SAFE.sub("_", trial_id))
    # Longest first, so a credential that contains another is replaced whole.
    secrets = sorted({f for n in credential_names if os.environ.get(n, "").strip() for f in secret_forms(os.environ[n])}, key=len, reverse=True)
    readers = [(name, root.read) for name in BUNDLED if name in root.created()] + [(CLEANUP_LOG, root.read_root_file)]
    for name, read in readers:
        try:
            data = read(name)
        except NotOurs:
            continue
        fd = os.open(dest / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(_scrub(data, secrets))
    return dest
