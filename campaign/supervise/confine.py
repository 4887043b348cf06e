"""Confinement of an attempt's processes: they cannot leave their cgroup or mount over the host.

The attempt cgroup is only proof of cleanup while its members stay in it, and
a root agent can move itself out by writing its pid into another cgroup's
``cgroup.procs``. A cgroup namespace alone does not stop that (without the
host-wide ``nsdelegate`` mount option the kernel still allows migrating to any
cgroup the writer can reach), so the child, after the parent has placed it in
the attempt cgroup and before it execs, also:

1. enters new cgroup and mount namespaces (``unshare``); its cgroup root is
   now the attempt cgroup, and mounts it makes never reach the host;
2. makes its mount tree private and remounts every cgroup filesystem it can
   see read-only, so no ``cgroup.procs`` is writable from inside;
3. drops ``CAP_SYS_ADMIN`` (no mount, remount, unshare or setns to undo 1-2)
   and ``CAP_SYS_PTRACE`` (no reaching the host's mounts through another
   process's ``/proc/PID/root``) from its bounding, inheritable and ambient
   sets, so nothing it execs gets them back.

This needs ``CAP_SYS_ADMIN`` in the runner; without it (an unprivileged run)
there is nothing to confine and an escape stays detectable as a breach. A
failure in any step aborts the child before exec: an attempt that asked for
confinement never runs unconfined.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
from collections.abc import Sequence
from dataclasses import dataclass

from campaign.supervise import rootmap

CLONE_NEWNS = 0x00020000
CLONE_NEWCGROUP = 0x02000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_NOATIME, MS_NODIRATIME, MS_BIND = 32, 1024, 2048, 4096
MS_REC, MS_PRIVATE, MS_RELATIME, MS_STRICTATIME = 16384, 1 << 18, 1 << 21, 1 << 24
PR_CAPBSET_DROP, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 24, 47, 4
CAP_SYS_PTRACE, CAP_SYS_ADMIN = 19, 21
DROPPED_CAPS = (CAP_SYS_ADMIN, CAP_SYS_PTRACE)
_CAP_VERSION_3 = 0x20080522
_OPTION_FLAGS = {"nosuid": MS_NOSUID, "nodev": MS_NODEV, "noexec": MS_NOEXEC, "noatime": MS_NOATIME, "nodiratime": MS_NODIRATIME, "relatime": MS_RELATIME, "strictatime": MS_STRICTATIME}


@dataclass(frozen=True)
class CgroupMount:
    path: bytes
    flags: int  # the per-mount flags to keep on the read-only remount


def cgroup_mounts(mountinfo: str = "/proc/self/mountinfo") -> tuple[CgroupMount, ...]:
    """Every cgroup (v1) and cgroup2 mount this process sees, with its mount flags."""
    found = []
    with open(mountinfo, "rb") as fh:
        for line in fh.read().splitlines():
            left, _, right = line.partition(b" - ")
            if right.split(b" ", 1)[0] not in (b"cgroup", b"cgroup2"):
                continue
            fields = left.split(b" ")
            path = fields[4].replace(b"\\040", b" ")
            flags = 0
            for option in fields[5].decode("ascii", "replace").split(","):
                flags |= _OPTION_FLAGS.get(option, 0)
            found.append(CgroupMount(path, flags))
    return tuple(found)


def _capabilities() -> int | None:
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("CapEff:"):
                    return int(line.split()[1], 16)
    except OSError:
        return None
    return None


def available() -> bool:
    """Whether this runner can confine its children (it holds CAP_SYS_ADMIN)."""
    caps = _capabilities()
    return caps is not None and bool(caps >> CAP_SYS_ADMIN & 1) and hasattr(ctypes, "CDLL") and _libc() is not None


def can_map_roots() -> bool:
    """Whether confined children can also get a root of their own (``rootmap``)."""
    return available() and rootmap.available()


_LIBC: ctypes.CDLL | None = None


def _libc() -> ctypes.CDLL | None:
    global _LIBC
    if _LIBC is None:
        name = ctypes.util.find_library("c")
        if name is None:
            return None
        _LIBC = ctypes.CDLL(name, use_errno=True)
    return _LIBC


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def _check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def confine_self(mounts: Sequence[CgroupMount], root_map: rootmap.RootMap | None = None) -> None:
    """In the gated child, before exec: namespaces, the root map if any (``rootmap``),
    read-only cgroupfs, capabilities dropped.

    ``mounts`` and ``root_map`` come from the parent (``cgroup_mounts()`` and
    ``rootmap.plan`` before the fork), so the child does no parsing between fork and exec."""
    libc = _libc()
    if libc is None:
        raise OSError(0, "no C library to confine with")
    _check(libc.unshare(CLONE_NEWNS | CLONE_NEWCGROUP), "unshare")
    _check(libc.mount(None, b"/", None, ctypes.c_ulong(MS_REC | MS_PRIVATE), None), "mount --make-rprivate /")
    if root_map is not None:
        # Before the cgroupfs is made read-only: the new root's cgroupfs is bound from the
        # host's, and the old root, where the originals are, is detached from this namespace.
        rootmap.enter(libc, root_map)
    for m in mounts:
        _check(libc.mount(None, m.path, None, ctypes.c_ulong(MS_REMOUNT | MS_BIND | MS_RDONLY | m.flags), None), "read-only cgroupfs")
    for cap in DROPPED_CAPS:
        _check(libc.prctl(PR_CAPBSET_DROP, ctypes.c_ulong(cap), 0, 0, 0), "drop from the bounding set")
    # Raising an ambient capability later needs it permitted and inheritable: clear both.
    libc.prctl(PR_CAP_AMBIENT, ctypes.c_ulong(PR_CAP_AMBIENT_CLEAR_ALL), 0, 0, 0)
    header = _CapHeader(_CAP_VERSION_3, 0)
    data = (_CapData * 2)()
    _check(libc.capget(ctypes.byref(header), data), "capget")
    mask = ~sum(1 << cap for cap in DROPPED_CAPS) & 0xFFFFFFFF
    data[0].effective &= mask
    data[0].permitted &= mask
    data[0].inheritable &= mask
    _check(libc.capset(ctypes.byref(header), data), "capset")
