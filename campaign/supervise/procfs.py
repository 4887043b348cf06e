"""Kernel facts about processes: birth-bound identity, parentage, groups.

A process is identified by (pid, start time, boot id, pid namespace). On Linux
the start time is field 22 of ``/proc/<pid>/stat`` in clock ticks since boot
(parsed after the *last* ``)`` because the command name may contain spaces
and parentheses); the boot id is ``/proc/sys/kernel/random/boot_id``; the pid
namespace is the one in which the pid number is meaningful (the observer's).

On macOS the start time comes from ``sysctl(KERN_PROC_PID)`` in microseconds
and the boot id from ``kern.bootsessionuuid``; there is no process-table scan.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

IS_LINUX = sys.platform.startswith("linux")
IS_DARWIN = sys.platform == "darwin"


@dataclass(frozen=True)
class Stat:
    """The parts of ``/proc/<pid>/stat`` the supervisor uses."""

    pid: int
    state: str
    ppid: int
    pgrp: int
    session: int
    start_ticks: int

    @property
    def exited(self) -> bool:
        """Zombie or dead: the process runs no more code."""
        return self.state in ("Z", "X", "x")


def parse_stat(pid: int, data: bytes) -> Stat:
    rparen = data.rindex(b")")
    fields = data[rparen + 2 :].split()
    # fields[0] is field 3 (state); field 22 (starttime) is fields[19].
    return Stat(
        pid=pid,
        state=fields[0].decode("ascii", "replace"),
        ppid=int(fields[1]),
        pgrp=int(fields[2]),
        session=int(fields[3]),
        start_ticks=int(fields[19]),
    )


class ProcFS:
    """Reads ``/proc`` (Linux). ``root`` is injectable for tests of the parser."""

    def __init__(self, root: str = "/proc") -> None:
        self.root = root
        self._boot_id: str | None = None
        self._pid_ns: str | None = None

    @property
    def available(self) -> bool:
        return IS_LINUX and os.path.exists(os.path.join(self.root, "self", "stat"))

    def stat(self, pid: int) -> Stat | None:
        """None when the pid does not exist (any more)."""
        try:
            with open(f"{self.root}/{pid}/stat", "rb") as fh:
                data = fh.read()
        except (FileNotFoundError, ProcessLookupError):
            return None
        except OSError:
            return None
        try:
            return parse_stat(pid, data)
        except (ValueError, IndexError):
            return None

    def start_ticks(self, pid: int) -> int | None:
        st = self.stat(pid)
        return st.start_ticks if st else None

    def cgroup2_path(self, pid: int) -> str | None:
        """The process's cgroup v2 path (the ``0::`` line), or None when unreadable or absent."""
        try:
            with open(f"{self.root}/{pid}/cgroup", encoding="utf-8", errors="replace") as fh:
                for line in fh:
                    if line.startswith("0::"):
                        return line[3:].rstrip("\n")
        except OSError:
            return None
        return None

    def boot_id(self) -> str:
        if self._boot_id is None:
            with open(f"{self.root}/sys/kernel/random/boot_id", encoding="ascii") as fh:
                self._boot_id = fh.read().strip()
        return self._boot_id

    def pid_ns(self) -> str | None:
        """The pid namespace this process's pid numbers belong to."""
        if self._pid_ns is None:
            try:
                self._pid_ns = os.readlink(f"{self.root}/self/ns/pid")
            except OSError:
                return None
        return self._pid_ns

    def scan(self) -> dict[int, Stat]:
        """Every visible process. Used only by a live supervisor to follow its own
        subtree and owned groups; recovery never calls it."""
        out: dict[int, Stat] = {}
        try:
            names = os.listdir(self.root)
        except OSError:
            return out
        for name in names:
            if name.isdigit():
                st = self.stat(int(name))
                if st is not None:
                    out[st.pid] = st
        return out


class DarwinProc:
    """Identity facts on macOS through sysctl; no scan, no parentage."""

    available = IS_DARWIN

    def __init__(self) -> None:
        self._boot_id: str | None = None

    def _kinfo(self, pid: int) -> bytes | None:  # pragma: no cover - macOS only
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        mib = (ctypes.c_int * 4)(1, 14, 1, pid)  # CTL_KERN, KERN_PROC, KERN_PROC_PID
        buf = ctypes.create_string_buffer(1024)
        size = ctypes.c_size_t(len(buf))
        if libc.sysctl(mib, 4, buf, ctypes.byref(size), None, ctypes.c_size_t(0)) != 0 or size.value == 0:
            return None
        return buf.raw[: size.value]

    def start_ticks(self, pid: int) -> int | None:  # pragma: no cover - macOS only
        raw = self._kinfo(pid)
        if raw is None:
            return None
        # struct kinfo_proc starts with extern_proc, whose first member is the
        # union holding p_starttime (struct timeval: int64 sec, int32 usec).
        sec = int.from_bytes(raw[0:8], sys.byteorder, signed=True)
        usec = int.from_bytes(raw[8:12], sys.byteorder, signed=True)
        return sec * 1_000_000 + usec

    def stat(self, pid: int) -> Stat | None:  # pragma: no cover - macOS only
        ticks = self.start_ticks(pid)
        if ticks is None:
            return None
        try:
            pgrp = os.getpgid(pid)
            session = os.getsid(pid)
        except OSError:
            return None
        return Stat(pid=pid, state="?", ppid=-1, pgrp=pgrp, session=session, start_ticks=ticks)

    def boot_id(self) -> str:  # pragma: no cover - macOS only
        if self._boot_id is None:
            import subprocess

            out = subprocess.run(["/usr/sbin/sysctl", "-n", "kern.bootsessionuuid"], capture_output=True, text=True, check=False)
            self._boot_id = out.stdout.strip() or "unknown"
        return self._boot_id

    def pid_ns(self) -> str | None:
        return None

    def scan(self) -> dict[int, Stat]:
        return {}


def default_proc() -> ProcFS | DarwinProc:
    return DarwinProc() if IS_DARWIN else ProcFS()
