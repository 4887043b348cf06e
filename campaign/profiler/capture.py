"""The profiler's private capture file: one JSON line per request, then a flush marker.

The proxy appends a line when a request's response has ended (or failed), and
on shutdown, after every in-flight request is recorded, a last line
``{"kind": "flush", "records": N}``. That marker, with N equal to the lines
before it, is ``flush_complete``: without it nothing proves the file holds
every request, and an incomplete flush is never read as zero activity.

Lines hold digests, counts, ids and status codes only: no prompt, output,
header or reasoning text ever reaches this file.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from campaign.canonical import spec_json

CAPTURE_NAME = "profiler.jsonl"
# A capture larger than this is not read: the profile is then unobserved, never a hang.
MAX_CAPTURE_BYTES = 256 * 1024 * 1024


def create_fresh(path: Path) -> int:
    """An append-only descriptor on a file created here: never follows or reuses a path."""
    return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)


class CaptureWriter:
    """Append-only, created fresh (never follows or reuses an existing path)."""

    def __init__(self, path: Path) -> None:
        self._fd = create_fresh(path)
        self.records = 0

    def write(self, record: dict[str, Any]) -> None:
        line = (spec_json(record) + "\n").encode("utf-8")
        os.write(self._fd, line)
        self.records += 1

    def close(self) -> None:
        """Write the flush marker, then make it durable."""
        marker = {"kind": "flush", "records": self.records}
        os.write(self._fd, (spec_json(marker) + "\n").encode("utf-8"))
        os.fsync(self._fd)
        os.close(self._fd)


@dataclass(frozen=True)
class Capture:
    records: tuple[dict[str, Any], ...]
    flush_complete: bool
    # Why the capture could not be read at all (None when it was read).
    problem: str | None = None

    @property
    def model_requests(self) -> tuple[dict[str, Any], ...]:
        return tuple(r for r in self.records if r.get("kind") == "model")


def read_capture(path: Path, *, dir_fd: int | None = None) -> Capture:
    """Read a capture without following links or blocking: only a regular file counts.

    ``path`` is a name inside ``dir_fd`` (the engine's pinned directory), or a full path.
    """
    # Engine side only: the proxy, which may run under another interpreter, never reads.
    from campaign.supervise.pinned import NotOurs, read_regular

    own = None
    if dir_fd is None:
        own = dir_fd = os.open(Path(path).parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        data = read_regular(dir_fd, Path(path).name, expected=None, limit=MAX_CAPTURE_BYTES)
    except NotOurs as exc:
        return Capture((), False, exc.reason)
    finally:
        if own is not None:
            os.close(own)
    return parse_capture(data)


def parse_capture(data: bytes) -> Capture:
    records: list[dict[str, Any]] = []
    flushed = False
    for line in data.split(b"\n"):
        if not line:
            continue
        try:
            value = json.loads(line)
        except ValueError:
            return Capture(tuple(records), False, "malformed")
        if not isinstance(value, dict) or flushed:
            # Anything after the marker means the marker did not close the file.
            return Capture(tuple(records), False, "malformed")
        if value.get("kind") == "flush":
            flushed = value.get("records") == len(records)
            if not flushed:
                return Capture(tuple(records), False, "flush_count_mismatch")
            continue
        records.append(value)
    return Capture(tuple(records), flushed)
