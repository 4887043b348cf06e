"""An attempt's private root, held by descriptors opened before any agent code ran.

The agent owns its root: it can rename ``work``, swap ``captures`` for a link
to somewhere else, or plant a FIFO where a capture was. So the engine never
looks a root path up again once the agent has run. It pins the root, the
working copy and the captures directory here, creates every capture itself
(exclusively, beneath the pinned directory) and hands the child the open
descriptor, and later reads a capture only if its name still holds that very
regular file. ``changed`` says whether the layout the verifier relies on is
still the one that was pinned.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from campaign.isolation import PrivateRoot
from campaign.supervise import pinned
from campaign.supervise.pinned import NotOurs

# Larger captures are refused as unreadable, never read into memory.
MAX_CAPTURE_BYTES = 64 * 1024 * 1024


class Stdio:
    """A child's stdout and stderr, created by the engine; close once the child is started."""

    def __init__(self, out: int, err: int) -> None:
        self.out, self.err = out, err

    def __enter__(self) -> Stdio:
        return self

    def __exit__(self, *exc) -> None:
        for fd in (self.out, self.err):
            os.close(fd)


class Reader:
    """Reads one capture like ``Path.read_text``, for code that polls a file a child writes."""

    def __init__(self, owner: PinnedRoot, name: str) -> None:
        self._owner, self._name = owner, name

    def read_text(self, encoding: str = "utf-8", errors: str = "strict") -> str:
        try:
            return self._owner.read(self._name).decode(encoding, errors)
        except NotOurs as exc:
            raise OSError(f"capture {self._name}: {exc.reason}") from None


class PinnedRoot:
    """Descriptors on one private root, its working copy and its captures; close when done."""

    def __init__(self, root: PrivateRoot) -> None:
        self.root = root
        self._created: dict[str, tuple[int, int]] = {}
        self.root_fd = os.open(root.path, pinned.DIR_FLAGS)
        try:
            if pinned.identity(os.fstat(self.root_fd)) != (root.dev, root.ino):
                raise NotOurs("replaced")
            self.work_fd = pinned.open_dir(self.root_fd, root.cwd.name)
            self.captures_fd = pinned.open_dir(self.root_fd, root.captures.name)
        except BaseException:
            self.close()
            raise
        self._work = pinned.identity(os.fstat(self.work_fd))
        self._captures = pinned.identity(os.fstat(self.captures_fd))

    @property
    def work_identity(self) -> tuple[int, int]:
        """(st_dev, st_ino) of the working copy as pinned before any agent code ran."""
        return self._work

    def close(self) -> None:
        for name in ("captures_fd", "work_fd", "root_fd"):
            fd = getattr(self, name, -1)
            if fd >= 0:
                os.close(fd)
                setattr(self, name, -1)

    def stdio(self, stem: str) -> Stdio:
        """``stem.out`` and ``stem.err``, fresh; NotOurs("exists") when something holds either name."""
        fds: list[int] = []
        try:
            for name in (f"{stem}.out", f"{stem}.err"):
                fds.append(self._create(name))
        except BaseException:
            for fd in fds:
                os.close(fd)
            raise
        return Stdio(*fds)

    def _create(self, name: str) -> int:
        try:
            fd, ident = pinned.create_exclusive(self.captures_fd, name)
        except FileExistsError:
            raise NotOurs("exists") from None
        except OSError:
            raise NotOurs("unwritable") from None
        self._created[name] = ident
        return fd

    def fresh_dir(self, stem: str) -> Path:
        """A directory made now beneath the pinned root under an unguessable name, for a
        child that is handed it by path (the verifier's HOME): nothing the agent left can
        be in it, and the agent could not have planted anything at its name."""
        name = f"{stem}-{secrets.token_hex(8)}"
        try:
            os.mkdir(name, 0o700, dir_fd=self.root_fd)
        except OSError:
            raise NotOurs("unwritable") from None
        return self.root.path / name

    def read(self, name: str, limit: int = MAX_CAPTURE_BYTES) -> bytes:
        """A capture the engine created, if its name still holds that file; NotOurs otherwise."""
        if name not in self._created:
            raise NotOurs("missing")
        return pinned.read_regular(self.captures_fd, name, expected=self._created[name], limit=limit)

    def read_root_file(self, name: str, limit: int = MAX_CAPTURE_BYTES) -> bytes:
        """A regular file directly in the root (``cleanup.log``), whoever wrote it last."""
        return pinned.read_regular(self.root_fd, name, expected=None, limit=limit)

    def created(self) -> tuple[str, ...]:
        return tuple(self._created)

    def reader(self, name: str) -> Reader:
        return Reader(self, name)

    def changed(self) -> str | None:
        """The first part of the pinned layout that no longer holds, or None.

        The root and the working copy must still be the pinned inodes at their
        names; HOME and TMPDIR, which children reach by path, must be plain
        directories beneath the root (no link, no mount point).
        """
        try:
            st = os.lstat(self.root.path)
        except OSError:
            return "root"
        if pinned.identity(st) != (self.root.dev, self.root.ino):
            return "root"
        if not pinned.entry_is(self.root_fd, self.root.cwd.name, self._work):
            return "work"
        if not pinned.entry_is(self.root_fd, self.root.captures.name, self._captures):
            return "captures"
        # The verifier gets HOME and TMPDIR as paths: a link there would take its writes elsewhere.
        for name in (self.root.home.name, self.root.tmpdir.name):
            try:
                os.close(pinned.open_dir(self.root_fd, name))
            except OSError:
                return name
        return None
