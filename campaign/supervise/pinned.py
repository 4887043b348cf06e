"""Descriptor-relative, no-follow access to directories an agent can also change.

Once a client has run, any name inside its private root may have been swapped
for a symlink, a FIFO, a device or a mount point, and an escaped process may
keep swapping. So the engine opens what it needs (working copy, captures) as
directory descriptors *before* the client runs, and afterwards resolves names
only relative to them:

* ``open_beneath`` uses ``openat2`` with ``RESOLVE_BENEATH |
  RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV | RESOLVE_NO_MAGICLINKS`` where the
  kernel has it (Linux 5.6+), else walks component by component with
  ``O_NOFOLLOW`` and compares mount ids, which refuses the same things;
* ``read_regular`` pins a name with ``O_PATH`` (opening a FIFO or a device
  that way has no side effect and cannot block), checks that it is the very
  regular file the engine created, then reads it non-blocking, size-bounded;
* ``mount_id`` tells a bind mount on the same filesystem from a directory
  (``st_dev`` cannot), via ``statx(STATX_MNT_ID)`` or ``/proc/self/fdinfo``.
"""

from __future__ import annotations

import ctypes
import errno
import functools
import os
import platform
import stat
import sys

from campaign.supervise.procfs import IS_LINUX

RESOLVE_NO_XDEV = 0x01
RESOLVE_NO_MAGICLINKS = 0x02
RESOLVE_NO_SYMLINKS = 0x04
RESOLVE_BENEATH = 0x08
_RESOLVE = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV | RESOLVE_NO_MAGICLINKS
# openat2 came with the unified syscall table (the same number everywhere); statx did not.
_NR_OPENAT2 = {"x86_64": 437, "aarch64": 437}.get(platform.machine())
_NR_STATX = {"x86_64": 332, "aarch64": 291}.get(platform.machine())
_AT_EMPTY_PATH = 0x1000
_STATX_MNT_ID = 0x1000
_STATX_MASK_OFFSET, _STATX_MNT_ID_OFFSET, _STATX_SIZE = 0, 144, 256
O_PATH = getattr(os, "O_PATH", 0)
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC

_openat2_works: bool | None = None if IS_LINUX and _NR_OPENAT2 else False


class NotOurs(Exception):
    """A name no longer refers to what the engine put there; ``reason`` is a bounded word."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class _OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]


@functools.cache
def _libc():
    return ctypes.CDLL(None, use_errno=True)


def _openat2(dir_fd: int, path: str, flags: int, mode: int) -> int:
    tmpfile = getattr(os, "O_TMPFILE", 0)  # includes O_DIRECTORY's bit, so test it whole
    creates = flags & os.O_CREAT or (tmpfile and flags & tmpfile == tmpfile)
    how = _OpenHow(flags, mode if creates else 0, _RESOLVE)  # openat2 refuses a mode it would not use
    fd = _libc().syscall(ctypes.c_long(_NR_OPENAT2), ctypes.c_int(dir_fd), os.fsencode(path), ctypes.byref(how), ctypes.c_size_t(ctypes.sizeof(how)))
    if fd < 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err), path)
    return fd


def _walk(dir_fd: int, path: str, flags: int, mode: int) -> int:
    """What openat2 refuses, refused by hand: '..', absolute paths, any symlink, any mount crossing."""
    parts = path.split("/")
    if path.startswith("/") or any(p in ("", ".", "..") for p in parts):
        raise OSError(errno.EXDEV, "path escapes its directory", path)
    start = mount_id(dir_fd)
    current = dir_fd
    try:
        for part in parts[:-1]:
            nxt = os.open(part, (O_PATH or os.O_RDONLY) | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=current)
            if current != dir_fd:
                os.close(current)
            current = nxt
            _same_mount(current, start, path)
        fd = os.open(parts[-1], flags | os.O_NOFOLLOW, mode, dir_fd=current)
        try:
            _same_mount(fd, start, path)
        except BaseException:
            os.close(fd)
            raise
        return fd
    finally:
        if current != dir_fd:
            os.close(current)


def _same_mount(fd: int, expected: int | None, path: str) -> None:
    if expected is not None and mount_id(fd) != expected:
        raise OSError(errno.EXDEV, "refusing to cross a mount point", path)


def open_beneath(dir_fd: int, path: str, flags: int, mode: int = 0o600) -> int:
    """Open ``path`` strictly beneath ``dir_fd``: no symlink, no magic link, no mount crossing.

    ELOOP means a symlink was in the way, EXDEV a mount point or an escape. The
    trailing component is never followed either, whatever ``flags`` says.
    """
    global _openat2_works
    flags |= os.O_CLOEXEC | os.O_NOFOLLOW
    if _openat2_works is not False:
        try:
            fd = _openat2(dir_fd, path, flags, mode)
            _openat2_works = True
            return fd
        except OSError as exc:
            if exc.errno not in (errno.ENOSYS, errno.EPERM) or _openat2_works:
                raise
            _openat2_works = False  # no openat2 here (old kernel, or a seccomp filter that refuses it)
    return _walk(dir_fd, path, flags, mode)


def open_dir(dir_fd: int, path: str) -> int:
    return open_beneath(dir_fd, path, DIR_FLAGS)


def mount_id(fd: int) -> int | None:
    """The id of the mount ``fd`` lives on, or None where the platform cannot say."""
    if not IS_LINUX:
        return None
    found = _statx_mount_id(fd)
    return found if found is not None else _fdinfo_mount_id(fd)


def _statx_mount_id(fd: int) -> int | None:
    if _NR_STATX is None:
        return None
    buf = ctypes.create_string_buffer(_STATX_SIZE)
    rc = _libc().syscall(ctypes.c_long(_NR_STATX), ctypes.c_int(fd), b"", ctypes.c_int(_AT_EMPTY_PATH), ctypes.c_uint(_STATX_MNT_ID), buf)
    if rc != 0:
        return None
    mask = int.from_bytes(buf.raw[_STATX_MASK_OFFSET : _STATX_MASK_OFFSET + 4], sys.byteorder)
    if not mask & _STATX_MNT_ID:
        return None  # before Linux 5.8
    return int.from_bytes(buf.raw[_STATX_MNT_ID_OFFSET : _STATX_MNT_ID_OFFSET + 8], sys.byteorder)


def _fdinfo_mount_id(fd: int) -> int | None:
    try:
        with open(f"/proc/self/fdinfo/{fd}", encoding="ascii") as fh:
            for line in fh:
                key, _, value = line.partition(":")
                if key == "mnt_id":
                    return int(value)
    except (OSError, ValueError):
        pass
    return None


def identity(st: os.stat_result) -> tuple[int, int]:
    return st.st_dev, st.st_ino


def entry_is(dir_fd: int, name: str, expected: tuple[int, int]) -> bool:
    """Whether ``name`` in ``dir_fd`` is still, without following it, the inode ``expected``."""
    try:
        return identity(os.stat(name, dir_fd=dir_fd, follow_symlinks=False)) == expected
    except OSError:
        return False


def create_exclusive(dir_fd: int, name: str) -> tuple[int, tuple[int, int]]:
    """A fresh 0600 file for a child's output: (write fd, its identity). FileExistsError when
    anything already holds the name: the engine never writes into something it did not create."""
    fd = open_beneath(dir_fd, name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    return fd, identity(os.fstat(fd))


def read_regular(dir_fd: int, name: str, *, expected: tuple[int, int] | None, limit: int) -> bytes:
    """The bytes of ``name``, which must be a regular file (the inode ``expected`` when given)
    of at most ``limit`` bytes; NotOurs otherwise. Never blocks, never follows a link."""
    try:
        pin = open_beneath(dir_fd, name, O_PATH if O_PATH else os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except FileNotFoundError:
        raise NotOurs("missing") from None
    except OSError as exc:
        raise NotOurs("not_a_regular_file" if exc.errno in (errno.ELOOP, errno.EXDEV, errno.ENXIO, errno.ENOTDIR) else "unreadable") from None
    try:
        st = os.fstat(pin)
        if not stat.S_ISREG(st.st_mode):
            raise NotOurs("not_a_regular_file")
        if expected is not None and identity(st) != expected:
            raise NotOurs("replaced")
        fd = _reopen(pin) if O_PATH else pin
        try:
            return _bounded(fd, limit)
        finally:
            if fd != pin:
                os.close(fd)
    finally:
        os.close(pin)


def _reopen(pin: int) -> int:
    # The /proc link names the pinned inode itself, so no second lookup by name happens.
    try:
        return os.open(f"/proc/self/fd/{pin}", os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        raise NotOurs("unreadable") from None


def _bounded(fd: int, limit: int) -> bytes:
    chunks: list[bytes] = []
    left = limit + 1
    while left > 0:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    if left <= 0:
        raise NotOurs("too_large")
    return b"".join(chunks)
