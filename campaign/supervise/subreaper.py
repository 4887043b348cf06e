"""The runner as a child subreaper: the kernel calls behind two facts teardown relies on.

While a Supervisor is active, a descendant of the attempt whose parent dies is
re-parented to the runner instead of escaping to init. That makes two facts
checkable with one syscall each, which no /proc scan can give atomically:

* A child's exit is read with ``WNOWAIT`` (``peek_child``), so it stays an
  unreaped zombie until teardown ends: its pid, and with it the number of the
  process group it leads, cannot be reused meanwhile.
* Once every exited child is reaped, "the runner has no child at all"
  (``has_children`` false) proves "the attempt left no descendant".

Linux only; elsewhere ``set_subreaper`` answers False and the supervisor falls
back to process groups, claiming no proof it cannot make.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Callable
from dataclasses import dataclass

from campaign.supervise.procfs import IS_LINUX

PR_SET_CHILD_SUBREAPER = 36
PR_GET_CHILD_SUBREAPER = 37


def _prctl() -> Callable[..., int]:
    libc = ctypes.CDLL(None, use_errno=True)
    return libc.prctl


def get_subreaper() -> bool:
    if not IS_LINUX:
        return False
    value = ctypes.c_int(0)
    _prctl()(PR_GET_CHILD_SUBREAPER, ctypes.byref(value), 0, 0, 0)
    return bool(value.value)


def set_subreaper(on: bool) -> bool:
    if not IS_LINUX:
        return False
    return _prctl()(PR_SET_CHILD_SUBREAPER, 1 if on else 0, 0, 0, 0) == 0


class Subreaper:
    """The runner's subreaper flag for one Supervisor: set on entry, and put back as it
    was found on release."""

    def __init__(self) -> None:
        self.active = False
        self._previous = False

    def become(self) -> bool:
        """Make the runner a child subreaper; whether the kernel agreed."""
        self._previous = get_subreaper()
        self.active = set_subreaper(True)
        return self.active

    def restore(self) -> None:
        if self.active:
            set_subreaper(self._previous)
            self.active = False


@dataclass(frozen=True)
class ChildExit:
    """How a child of ours ended. ``code`` is negative for the signal that ended it and
    None when the child was already reaped elsewhere (the gate, or a platform without
    ``WNOWAIT``) and its status is gone; ``reaped`` says its pid is free again."""

    code: int | None
    reaped: bool


def peek_child(pid: int) -> ChildExit | None:
    """The exit of our child ``pid``, read without reaping it; None while it runs."""
    if not hasattr(os, "waitid"):  # pragma: no cover - no WNOWAIT: reap now
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            done, status = pid, 0
        if done == 0:
            return None
        return ChildExit(os.waitstatus_to_exitcode(status), reaped=True)
    try:
        res = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return ChildExit(None, reaped=True)
    if res is None:
        return None
    return ChildExit(res.si_status if res.si_code == os.CLD_EXITED else -res.si_status, reaped=False)


def reap(pid: int, *, block: bool = False) -> None:
    """Reap our exited child ``pid`` (a child someone else reaped is no error)."""
    try:
        os.waitpid(pid, 0 if block else os.WNOHANG)
    except ChildProcessError:
        pass


def has_children() -> bool:
    """Whether this process has any child at all, live or zombie. One syscall, answered
    by the kernel atomically (ECHILD means none), unlike any /proc scan. As a child
    subreaper, every live descendant of the attempt hangs, through live processes only,
    from one of our children (an exiting process hands its children up before it
    becomes a zombie), so "no children" proves "no descendants"."""
    try:
        os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return False
    return True
