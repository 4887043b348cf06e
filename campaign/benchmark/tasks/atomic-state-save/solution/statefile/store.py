"""Read and write a JSON document kept in a single file.

Saving is atomic: the document is written to a new file in the same directory,
flushed to disk, then renamed over the old one. A rename within one file system
is atomic, so readers (and a restart after a crash) see the old file or the new
one, never a mix.
"""

from __future__ import annotations

import json
import os
import secrets
import stat
from typing import Any

StrPath = str | os.PathLike


def load_state(path: StrPath, default: Any = None) -> Any:
    """The JSON document stored at ``path``, or ``default`` if there is no file."""
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except FileNotFoundError:
        return default


def save_state(path: StrPath, state: Any) -> None:
    """Store ``state`` as JSON at ``path``, replacing the previous content atomically."""
    # Serialize first: an unserializable state fails before any file is touched.
    data = (json.dumps(state, indent=2, sort_keys=True) + "\n").encode("utf-8")
    path = os.fspath(path)
    directory, name = os.path.split(os.path.abspath(path))
    try:
        existing_mode: int | None = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        existing_mode = None

    # A unique name per save, so concurrent writers never share a temporary file.
    # Mode 0o666 lets the umask apply exactly as open() would for a new file.
    tmp = os.path.join(directory, f".{name}.{secrets.token_hex(6)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if existing_mode is not None:
            os.chmod(tmp, existing_mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    _fsync_directory(directory)


def _fsync_directory(directory: str) -> None:
    """Persist the rename itself (best effort where directories cannot be opened)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
