"""Disposal of a private root through pinned descriptors.

The root is opened relative to its parent with ``O_NOFOLLOW|O_DIRECTORY`` and
must be the very directory created for the attempt (same ``st_dev``/``st_ino``),
else disposal is refused. Every entry is handled relative to its parent's
descriptor: symlinks are unlinked, never followed (their targets are not
touched); directories are opened ``O_NOFOLLOW`` and checked with
``os.path.samestat`` against the ``lstat`` taken just before; owned directories
without the needed permissions are repaired with ``fchmod`` on the held
descriptor (a directory we cannot even read is pinned with ``O_PATH`` first and
repaired through its ``/proc/self/fd`` link, which names that exact inode);
nothing on another filesystem or behind a mount point is entered or removed.
A bind mount on the same filesystem has the same ``st_dev``, so directories are
opened with ``openat2(RESOLVE_NO_XDEV)`` and their mount id is compared with
the root's (see ``pinned``): an agent running as root that mounts something
into its root gets the root retained, never the mounted directory emptied.

Disposal happens only after a verified cleanup *and* a successful profiling
finalization; otherwise the root is kept as evidence. ``disposal_complete`` and
``finalization_failed`` are recorded as separate facts.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from typing import TYPE_CHECKING

from campaign.vocabulary import DISPOSAL_REASONS
from campaign.isolation import PrivateRoot
from campaign.supervise import pinned
from campaign.supervise.procfs import IS_LINUX

if TYPE_CHECKING:
    from sqlalchemy import Engine

REASONS = DISPOSAL_REASONS
_DIR_FLAGS = pinned.DIR_FLAGS


@dataclass(frozen=True)
class DisposalResult:
    disposal_complete: bool
    reason: str
    finalization_failed: bool = False


class Refused(Exception):
    """Removal stopped before touching something it must not; ``reason`` is one of REASONS."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class _Fence:
    """What every directory entered must share with the root: its filesystem and its mount."""

    dev: int
    mount: int | None


def dispose(root: PrivateRoot, *, finalization_ok: bool, cleanup_complete: bool) -> DisposalResult:
    """Remove ``root`` when cleanup was verified and finalization succeeded; else keep it."""
    if not cleanup_complete:
        return DisposalResult(False, "cleanup_unverified", finalization_failed=not finalization_ok)
    if not finalization_ok:
        return DisposalResult(False, "finalization_failed", finalization_failed=True)
    try:
        remove_pinned(root)
    except Refused as exc:
        return DisposalResult(False, exc.reason)
    except OSError:
        return DisposalResult(False, "unremovable")
    return DisposalResult(True, "disposed")


def record(engine: Engine, attempt_id: int, result: DisposalResult) -> None:
    """Store ``disposal_complete`` and ``finalization_failed`` on the attempt row."""
    from campaign.store import repository  # disposal itself needs no store

    attempt = repository.get_attempt(engine, attempt_id)
    status = attempt.status if attempt is not None else "running"
    repository.update_attempt(engine, attempt_id, expected=status, disposal_complete=result.disposal_complete, finalization_failed=result.finalization_failed)


def remove_pinned(root: PrivateRoot) -> None:
    parent = os.open(root.path.parent, _DIR_FLAGS & ~os.O_NOFOLLOW)
    try:
        name = root.path.name
        try:
            before = os.stat(name, dir_fd=parent, follow_symlinks=False)
        except FileNotFoundError:
            raise Refused("root_missing") from None
        if not stat.S_ISDIR(before.st_mode) or (before.st_dev, before.st_ino) != (root.dev, root.ino):
            raise Refused("root_replaced")
        if before.st_uid != os.geteuid():
            raise Refused("root_replaced")
        fence = _Fence(root.dev, pinned.mount_id(parent))
        fd = _open_dir(parent, name, before, fence)
        try:
            _empty(fd, fence)
        finally:
            os.close(fd)
        again = os.stat(name, dir_fd=parent, follow_symlinks=False)
        if not os.path.samestat(again, before):
            raise Refused("root_replaced")
        os.rmdir(name, dir_fd=parent)
    finally:
        os.close(parent)


def remove_entry(parent: int, name: str) -> None:
    """Remove ``name`` beneath the directory ``parent`` the way a root is disposed of:
    links unlinked, never followed; nothing on another filesystem or mount entered.
    Refused or OSError when that cannot be done."""
    st = os.stat(name, dir_fd=parent, follow_symlinks=False)
    if not stat.S_ISDIR(st.st_mode):
        os.unlink(name, dir_fd=parent)
        return
    fence = _Fence(os.fstat(parent).st_dev, pinned.mount_id(parent))
    fd = _open_dir(parent, name, st, fence)
    try:
        _empty(fd, fence)
    finally:
        os.close(fd)
    os.rmdir(name, dir_fd=parent)


def _open_dir(parent: int, name: str, expected: os.stat_result, fence: _Fence) -> int:
    """Open a directory entry pinned to ``expected``, repairing owned permissions."""
    if expected.st_dev != fence.dev:
        raise Refused("other_filesystem")
    owned = expected.st_uid == os.geteuid()
    try:
        fd = pinned.open_dir(parent, name)
    except PermissionError:
        if not owned:
            raise Refused("unremovable") from None
        fd = _open_unreadable(parent, name, expected, fence)
    except OSError as exc:
        raise Refused(_why(exc)) from None
    try:
        _check_mount(fd, fence)
        st = os.fstat(fd)
        if not os.path.samestat(st, expected):
            raise Refused("root_replaced")
        mode = stat.S_IMODE(st.st_mode)
        if mode & 0o700 != 0o700:
            if not owned:
                raise Refused("unremovable")
            os.fchmod(fd, mode | 0o700)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _why(exc: OSError) -> str:
    # EXDEV: a mount point (openat2 RESOLVE_NO_XDEV); ELOOP/ENOTDIR: swapped for a link since the stat.
    return {errno.EXDEV: "mount_point", errno.ELOOP: "root_replaced", errno.ENOTDIR: "root_replaced"}.get(exc.errno, "unremovable")


def _check_mount(fd: int, fence: _Fence) -> None:
    if fence.mount is not None and pinned.mount_id(fd) != fence.mount:
        raise Refused("mount_point")


def _open_unreadable(parent: int, name: str, expected: os.stat_result, fence: _Fence) -> int:
    """Pin a directory we may not read, repair it through that pin, then reopen it."""
    if not IS_LINUX or not pinned.O_PATH:
        # Without a search-only descriptor, a pathname chmod could be redirected: keep the root.
        raise Refused("unremovable")
    try:
        pin = pinned.open_beneath(parent, name, pinned.O_PATH | os.O_DIRECTORY)
    except OSError as exc:
        raise Refused(_why(exc)) from None
    try:
        # Checked before the chmod: a mounted directory must not even have its mode changed.
        _check_mount(pin, fence)
        if not os.path.samestat(os.fstat(pin), expected):
            raise Refused("root_replaced")
        os.chmod(f"/proc/self/fd/{pin}", stat.S_IMODE(expected.st_mode) | 0o700)
        return os.open(".", _DIR_FLAGS, dir_fd=pin)
    finally:
        os.close(pin)


def _empty(dfd: int, fence: _Fence) -> None:
    with os.scandir(dfd) as it:
        names = [entry.name for entry in it]
    for name in names:
        st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
        if st.st_dev != fence.dev:
            raise Refused("other_filesystem")
        if stat.S_ISDIR(st.st_mode):
            sub = _open_dir(dfd, name, st, fence)
            try:
                _empty(sub, fence)
            finally:
                os.close(sub)
            os.rmdir(name, dir_fd=dfd)
        else:
            os.unlink(name, dir_fd=dfd)  # files, symlinks, fifos, sockets: never followed; a mounted file is EBUSY
