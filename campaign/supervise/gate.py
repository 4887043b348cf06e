"""Gated spawn: the child exists, but cannot run its target until the parent says so.

``spawn_gated`` forks. The child makes itself a session and group leader
(sid = pgid = pid), resets signal dispositions and its mask, and blocks reading
a pipe. Meanwhile the parent calls ``on_forked(pid)``: it pins the child with a
pidfd, moves it into the attempt's cgroup, reads its start time and commits
the ledger row. Only after that returns does the parent write the go byte; the
child then sets up its cwd and stdio and execs. If ``on_forked`` fails, or the
parent dies, the child reads EOF and exits 125 without ever running the target.

Exec failures come back through a close-on-exec pipe, so ``spawn_gated``
returns only once the target is actually running.
"""

from __future__ import annotations

import os
import shutil
import signal
import stat
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from campaign.errors import CampaignError
from campaign.supervise.confine import CgroupMount, confine_self
from campaign.supervise.rootmap import RootMap

GATE_ABORTED = 125
EXEC_FAILED = 127
_GO = b"g"
_RESET = tuple(
    s for s in (signal.SIGINT, signal.SIGTERM, signal.SIGPIPE, signal.SIGCHLD, signal.SIGHUP, signal.SIGQUIT, getattr(signal, "SIGXFSZ", None)) if s is not None
)

Stdio = str | os.PathLike[str] | int | None


class SpawnError(CampaignError):
    """The target could not be started (not found, not executable, bad cwd).

    ``stage`` says where: "resolve" (not on PATH, not executable) and "exec" (the
    kernel refused it) mean the command itself is missing or broken; the others
    ("setup", "gate", "confine", "cwd", "stdio") mean the engine could not prepare it."""

    def __init__(self, message: str, stage: str = "setup") -> None:
        super().__init__(message)
        self.stage = stage

    @property
    def command_missing(self) -> bool:
        return self.stage in ("resolve", "exec")


def resolve_executable(name: str, env: Mapping[str, str]) -> str:
    if "/" in name:
        if os.access(name, os.X_OK) and not os.path.isdir(name):
            return name
        raise SpawnError(f"{name} is not an executable file", stage="resolve")
    found = shutil.which(name, path=env.get("PATH", os.defpath))
    if not found:
        raise SpawnError(f"{name} not found on the child's PATH", stage="resolve")
    return found


def _open_stdio(target: Stdio, *, write: bool) -> tuple[int, bool]:
    """(fd, owned): owned fds are closed by the parent after fork."""
    if isinstance(target, int):
        return target, False
    flags = os.O_CLOEXEC | (os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW if write else os.O_RDONLY)
    return os.open(os.fspath(target) if target is not None else os.devnull, flags, 0o600), True


def spawn_gated(
    argv: Sequence[str],
    *,
    cwd: str | os.PathLike[str] | None = None,
    cwd_fd: int | None = None,
    env: Mapping[str, str],
    on_forked: Callable[[int], None],
    stdout: Stdio = None,
    stderr: Stdio = None,
    stdin: Stdio = None,
    confine: Sequence[CgroupMount] | None = None,
    root_map: RootMap | None = None,
) -> int:
    """Fork, run ``on_forked(pid)`` while the child waits, then let it exec. Returns the pid.

    ``cwd_fd`` (instead of ``cwd``) is a directory descriptor the child ``fchdir``s
    to: the directory it was opened on, whatever its path names by now. With
    ``confine`` (the cgroup mounts to make read-only), the child confines itself
    after the gate opens, that is once it is in the attempt cgroup (see confine.py);
    with ``root_map`` too (it needs ``confine``) it then lives in a root of its own and
    starts in the map's cwd instead (see rootmap.py).
    """
    if not argv:
        raise SpawnError("empty command")
    if (cwd is None) == (cwd_fd is None):
        raise SpawnError("give exactly one of cwd and cwd_fd")
    if root_map is not None and confine is None:
        raise SpawnError("a root map needs a confined child (CAP_SYS_ADMIN)")
    exe = resolve_executable(argv[0], env)
    if cwd_fd is not None:
        if not stat.S_ISDIR(os.fstat(cwd_fd).st_mode):
            raise SpawnError("the working directory descriptor is not a directory")
        where: str | int = cwd_fd
    else:
        where = os.fspath(cwd)
        if not Path(where).is_dir():
            raise SpawnError(f"working directory {where} does not exist")
    args = [os.fsencode(a) for a in argv]
    envb = {os.fsencode(k): os.fsencode(v) for k, v in env.items()}
    exeb = os.fsencode(exe)
    opened: list[int] = []
    try:
        fds = []
        for target, write in ((stdin, False), (stdout, True), (stderr, True)):
            fd, owned = _open_stdio(target, write=write)
            fds.append(fd)
            if owned:
                opened.append(fd)
        gate_r, gate_w = os.pipe()
        err_r, err_w = os.pipe()
    except BaseException:
        for fd in opened:
            os.close(fd)
        raise
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child, reported through err_w
        _child(gate_r, gate_w, err_r, err_w, fds, where, exeb, args, envb, confine, root_map)
    os.close(gate_r)
    os.close(err_w)
    for fd in opened:
        os.close(fd)
    try:
        on_forked(pid)
    except BaseException:
        os.close(gate_w)
        os.close(err_r)
        _abort(pid)
        raise
    try:
        os.write(gate_w, _GO)
    finally:
        os.close(gate_w)
    failure = _read_all(err_r)
    if failure:
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass
        stage, _, code = failure.decode("ascii", "replace").partition(":")
        reason = os.strerror(int(code)) if code.isdigit() else code
        raise SpawnError(f"could not start {argv[0]} ({stage}: {reason})", stage=stage)
    return pid


def _read_all(fd: int) -> bytes:
    chunks = []
    try:
        while chunk := os.read(fd, 512):
            chunks.append(chunk)
    finally:
        os.close(fd)
    return b"".join(chunks)


def _abort(pid: int) -> None:
    """The child never passed the gate; it is our unreaped child, so its pid is ours."""
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass


def _child(gate_r, gate_w, err_r, err_w, fds, cwd, exe, args, env, confine, root_map) -> None:  # pragma: no cover - child side
    stage = "setup"
    try:
        for sig in _RESET:
            signal.signal(sig, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_SETMASK, ())
        os.close(gate_w)
        os.close(err_r)
        os.setsid()
        stage = "gate"
        if os.read(gate_r, 1) != _GO:
            os._exit(GATE_ABORTED)
        os.close(gate_r)
        if confine is not None:
            stage = "confine"
            confine_self(confine, root_map)
        stage = "cwd"  # before stdio: dup2 onto 0-2 must not clobber a low cwd descriptor
        if root_map is not None:
            pass  # the map's cwd, entered with the new root: the old root is out of reach
        elif isinstance(cwd, int):
            os.fchdir(cwd)
        else:
            os.chdir(cwd)
        stage = "stdio"
        for target, fd in enumerate(fds):
            if fd != target:
                os.dup2(fd, target)
            else:
                os.set_inheritable(fd, True)
        stage = "exec"
        os.closerange(3, err_w)
        os.closerange(err_w + 1, 1 << 16)
        os.execve(exe, args, env)
    except BaseException as exc:
        try:
            code = getattr(exc, "errno", None)
            os.write(err_w, f"{stage}:{code if code is not None else type(exc).__name__}".encode())
        finally:
            os._exit(GATE_ABORTED if stage in ("setup", "gate") else EXEC_FAILED)
    os._exit(EXEC_FAILED)
