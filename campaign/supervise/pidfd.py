"""Signals that can never hit a reused pid.

``verify`` opens a pidfd *first* and only then re-reads the start time: if the
time still matches the ledger, the descriptor refers to the recorded process,
and every later ``pidfd_send_signal`` either reaches that process or fails
with ESRCH. A pid whose start time differs is a different process and is never
signalled.
"""

from __future__ import annotations

import ctypes
import errno
import os
import select
import signal
from dataclasses import dataclass

from campaign.supervise.procfs import IS_LINUX

NR_PIDFD_SEND_SIGNAL = 424  # the same on x86_64 and aarch64 (unified syscall table)
PIDFD_SIGNAL_PROCESS_GROUP = 1 << 2  # Linux 6.9+

ALIVE, GONE, UNKNOWN = "alive", "gone", "unknown"

_group_flag_supported: bool | None = None


def available() -> bool:
    return IS_LINUX and hasattr(os, "pidfd_open")


def _raw_send(pidfd: int, sig: int, flags: int) -> None:
    """``signal.pidfd_send_signal`` (Python 3.9+), or the raw syscall through ctypes."""
    if hasattr(signal, "pidfd_send_signal"):
        signal.pidfd_send_signal(pidfd, sig, None, flags)
        return
    libc = ctypes.CDLL(None, use_errno=True)
    rc = libc.syscall(ctypes.c_long(NR_PIDFD_SEND_SIGNAL), ctypes.c_int(pidfd), ctypes.c_int(sig), None, ctypes.c_uint(flags))
    if rc != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


def send_signal(pidfd: int, sig: int, *, group: bool = False) -> bool:
    """Signal the process behind ``pidfd`` (or its process group). False if it is gone."""
    global _group_flag_supported
    flags = PIDFD_SIGNAL_PROCESS_GROUP if group else 0
    try:
        _raw_send(pidfd, sig, flags)
    except ProcessLookupError:
        return False
    except OSError as exc:
        if exc.errno == errno.EINVAL and group:
            _group_flag_supported = False
            raise NotImplementedError("pidfd_send_signal cannot signal a process group on this kernel") from None
        raise
    if group:
        _group_flag_supported = True
    return True


def group_signalling_supported() -> bool | None:
    return _group_flag_supported


def has_exited(pidfd: int) -> bool:
    """A pidfd becomes readable when its process has exited (zombie or reaped)."""
    poller = select.poll()
    poller.register(pidfd, select.POLLIN)
    return bool(poller.poll(0))


def wait_exit(pidfd: int, timeout: float) -> bool:
    poller = select.poll()
    poller.register(pidfd, select.POLLIN)
    return bool(poller.poll(max(0, int(timeout * 1000))))


@dataclass
class Probe:
    """Result of checking one recorded identity. ``pidfd`` is open only when ALIVE;
    the caller owns it and must close it."""

    status: str
    reason: str
    pidfd: int | None = None

    def close(self) -> None:
        if self.pidfd is not None:
            os.close(self.pidfd)
            self.pidfd = None


def verify(proc, pid: int, start_ticks: int, boot_id: str, pid_ns: str | None) -> Probe:
    """Is the recorded process still alive? Fails closed with UNKNOWN when unsure."""
    try:
        if boot_id != proc.boot_id():
            return Probe(GONE, "rebooted")
    except OSError:
        return Probe(UNKNOWN, "no_boot_id")
    if pid_ns is not None and proc.pid_ns() is not None and pid_ns != proc.pid_ns():
        return Probe(UNKNOWN, "other_pid_namespace")
    if not available():
        st = proc.stat(pid)
        if st is None:
            return Probe(GONE, "exited")
        if st.start_ticks != start_ticks:
            return Probe(GONE, "pid_reused")
        return Probe(UNKNOWN, "no_pidfd")
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return Probe(GONE, "exited")
    except OSError as exc:
        return Probe(UNKNOWN, f"pidfd_{errno.errorcode.get(exc.errno, exc.errno)}".lower()[:40])
    st = proc.stat(pid)
    if st is None:
        os.close(fd)
        return Probe(GONE, "exited")
    if st.start_ticks != start_ticks:
        os.close(fd)
        return Probe(GONE, "pid_reused")
    if has_exited(fd) or st.exited:
        os.close(fd)
        return Probe(GONE, "exited")
    return Probe(ALIVE, "alive", fd)


def signal_name(sig: int) -> str:
    try:
        return signal.Signals(sig).name
    except ValueError:
        return str(sig)
