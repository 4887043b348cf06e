"""A root of the attempt's own, with fixed paths mapped into it: how a Harbor task's
``/app``, ``/tests`` and ``/logs/verifier`` exist without a container runtime.

A confined member (``confine.py``) already runs in its own mount namespace, with
``CAP_SYS_ADMIN`` until just before it execs. With a ``RootMap`` it also, in that
window, builds a new root and moves into it:

1. a tmpfs is mounted on ``scratch`` (an empty directory the engine made in the
   private root, checked to be that very directory first);
2. every entry of the host's ``/`` reappears in it (directories recursively bound,
   files bound, symlinks recreated), except the names the map provides;
3. each ``Bind`` (the pinned working copy at ``app``, the tests at ``tests``, the
   logs at ``logs/verifier``) is bound in and checked to be the directory the engine
   pinned (a path an agent swapped meanwhile aborts the spawn), read-only when asked;
4. ``pivot_root`` makes it ``/`` and the old root is detached, so nothing of the
   host's root remains reachable from the member but what was bound in; the
   member's cwd becomes ``cwd`` (``/app``).

Nothing of this reaches the host: the mounts live and die with the member's
namespace, and the host sees ``scratch`` as the empty directory it was. The cgroup
filesystems are then made read-only and the capabilities dropped, as for every
confined member.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

MS_RDONLY, MS_REMOUNT, MS_BIND, MS_REC = 1, 32, 4096, 16384
MNT_DETACH = 2
_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}.get(platform.machine())
_OLD_ROOT = b".old-root"


@dataclass(frozen=True)
class Bind:
    source: Path  # a directory in the runner's view
    target: str  # where it appears in the new root, relative: "app", "logs/verifier"
    identity: tuple[int, int]  # (st_dev, st_ino) the engine pinned: what must appear there
    readonly: bool = False


@dataclass(frozen=True)
class RootMap:
    scratch: bytes
    scratch_identity: tuple[int, int]
    binds: tuple[Bind, ...]
    cwd: bytes
    # The host's top-level entries: (name, symlink target or None, is a directory).
    top: tuple[tuple[bytes, bytes | None, bool], ...]


def available() -> bool:
    """Whether this machine's ``pivot_root`` can be called (the privilege is confine's to check)."""
    return _PIVOT_ROOT is not None


def plan(scratch: Path, scratch_identity: tuple[int, int], binds: Sequence[Bind], cwd: str) -> RootMap:
    """Everything the child needs, gathered in the parent: the child only mounts."""
    provided = {b.target.split("/", 1)[0] for b in binds}
    top = []
    for entry in sorted(os.scandir("/"), key=lambda e: e.name):
        if entry.name in provided:
            continue
        link = os.readlink(entry.path).encode() if entry.is_symlink() else None
        top.append((entry.name.encode(), link, link is None and entry.is_dir(follow_symlinks=False)))
    return RootMap(os.fsencode(scratch), scratch_identity, tuple(binds), cwd.encode(), tuple(top))


def _check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _identity(path: bytes) -> tuple[int, int]:
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode):
        raise OSError(0, f"{os.fsdecode(path)} is not a directory")
    return st.st_dev, st.st_ino


def enter(libc: ctypes.CDLL, rm: RootMap) -> None:
    """In the confined child, in its own mount namespace (made private): build the new
    root on ``rm.scratch``, bind the map in, pivot into it, detach the old root."""
    if _PIVOT_ROOT is None:
        raise OSError(0, "pivot_root is not known on this machine")
    if _identity(rm.scratch) != rm.scratch_identity:
        raise OSError(0, "the root map's scratch directory was replaced")
    _check(libc.mount(b"tmpfs", rm.scratch, b"tmpfs", ctypes.c_ulong(0), b"mode=0755"), "mount the new root")
    new = rm.scratch + b"/"
    for name, link, is_dir in rm.top:
        if link is not None:
            os.symlink(link, new + name)
            continue
        if is_dir:
            os.mkdir(new + name, 0o755)
        else:
            os.close(os.open(new + name, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o644))
        _check(libc.mount(b"/" + name, new + name, None, ctypes.c_ulong(MS_BIND | (MS_REC if is_dir else 0)), None), f"bind /{os.fsdecode(name)}")
    for bind in rm.binds:
        target = new + bind.target.encode()
        os.makedirs(target, 0o755, exist_ok=True)
        _check(libc.mount(os.fsencode(bind.source), target, None, ctypes.c_ulong(MS_BIND), None), f"bind /{bind.target}")
        if _identity(target) != bind.identity:
            raise OSError(0, f"/{bind.target} is not the directory the engine pinned")
        if bind.readonly:
            _check(libc.mount(None, target, None, ctypes.c_ulong(MS_REMOUNT | MS_BIND | MS_RDONLY), None), f"read-only /{bind.target}")
    os.mkdir(new + _OLD_ROOT, 0o700)
    os.chdir(rm.scratch)
    _check(libc.syscall(_PIVOT_ROOT, b".", _OLD_ROOT), "pivot_root")
    _check(libc.umount2(b"/" + _OLD_ROOT, MNT_DETACH), "detach the old root")
    os.rmdir(b"/" + _OLD_ROOT)
    # The host directory the new root was built on was bound in again with its parent:
    # there it would show the new root inside itself. Gone from this namespace.
    if libc.umount2(rm.scratch, MNT_DETACH) != 0 and ctypes.get_errno() not in (errno.EINVAL, errno.ENOENT):  # not there: fine
        _check(-1, "detach the scratch copy")
    os.chdir(rm.cwd)
