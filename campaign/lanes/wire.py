"""The wire layer of one attempt: the replay provider and the recording proxy.

When the agent profile routes its client through ``{proxy_url}``, the attempt
starts, as supervised members with ledger rows written before they run:

1. the replay provider (``provider`` role), when the route's upstream is
   ``replay``: a fresh scripted model server for this task on loopback;
2. the recording proxy (``profiler`` role) under the ``--profile-python``
   interpreter, forwarding to the upstream and writing the capture.

After the client ends the proxy is asked to stop (SIGTERM) so it writes its
flush marker; the capture is then read through a directory descriptor pinned
before the client ran, so a client that swaps ``profiler/`` for a link cannot
redirect the read. Anything still running is torn down with the attempt.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import campaign
from campaign import isolation
from campaign.agents.profile_model import AgentProfile, HealthCheck, RuntimeSpec, uses_wire
from campaign.benchmark import Task
from campaign.errors import CampaignError, UsageProblem
from campaign.lanes.pinned_root import PinnedRoot
from campaign.lanes.runtime import RuntimeBootFailed, wait_healthy
from campaign.profiler import catalogs, faults, tokenizer
from campaign.profiler.capture import CAPTURE_NAME, Capture, read_capture
from campaign.profiler.wire import DEFAULT_SILENCE_S
from campaign.providers import REPLAY, Provider
from campaign.spend import Overrun
from campaign.supervise import pinned
from campaign.supervise import Supervisor

PROFILER_DIR = "profiler"
_BOOT_S = 30.0
STOP_GRACE_S = 8.0
# The profiler may run under another interpreter: put this engine's package first on its path.
_BOOTSTRAP = "import sys; sys.path.insert(0, sys.argv.pop(1)); from campaign.profiler.proxy import main; sys.exit(main(sys.argv[1:]))"


class WireStartFailed(CampaignError):
    """The replay provider or the recording proxy did not come up."""


@dataclass(frozen=True)
class WireRoute:
    upstream: str  # a base URL, or REPLAY
    profile_python: str
    tokenizer_cache: Path
    # The provider's silence bound: an upstream quiet this long is given up on.
    silence_s: float = DEFAULT_SILENCE_S


def resolve_route(
    profile: AgentProfile,
    provider: Provider | None,
    *,
    profile_python: str,
    environ: Mapping[str, str],
    tokenizer_cache: Path | None = None,
    option: str = "--providers",
) -> WireRoute | None:
    """The wire route for a profile that uses ``{proxy_url}``, checked before anything runs.

    A missing upstream is bad input (exit 2); a missing or wrong tokenizer cache
    is refused with one line (TokenizerCacheError), never downloaded.
    """
    if not uses_wire(profile):
        return None
    if provider is None or provider.upstream is None:
        name = provider.name if provider else "this route"
        raise UsageProblem(
            f"the {profile.name} agent talks through the recording proxy, but provider {name} has no upstream in the providers catalog; "
            "add upstream = \"https://...\" (or \"replay\") to its table",
            option=option,
        )
    cache = tokenizer.resolve_cache_dir(tokenizer_cache, environ)
    tokenizer.verified_ranks(cache)
    return WireRoute(upstream=provider.upstream, profile_python=profile_python, tokenizer_cache=cache, silence_s=provider.silence_s)


@dataclass
class WireSession:
    proxy: object  # supervise.Process
    proxy_url: str
    dir_fd: int
    capture: Capture | None = None

    def close(self) -> None:
        if self.dir_fd >= 0:
            os.close(self.dir_fd)
            self.dir_fd = -1


def _announce_spec(pattern: str, kind: Literal["tcp", "announced"] = "tcp") -> RuntimeSpec:
    return RuntimeSpec(argv=("-",), health=HealthCheck(kind=kind, port_pattern=pattern), deadline_seconds=_BOOT_S)


def start(
    sup: Supervisor,
    held: PinnedRoot,
    route: WireRoute,
    task: Task,
    *,
    runner_python: str,
    deadline: float,
    timer: Callable[[], float],
    listener: socket.socket | None = None,
) -> WireSession:
    """Start the upstream (when replayed) and the proxy; WireStartFailed when either does not answer.

    Their outputs are created by the engine in the pinned captures directory and
    polled through it, like every other capture. ``listener``: the socket the proxy
    serves on, bound by the caller (a task container's loopback, ``listeners.loopback_in``);
    the proxy holds it once started (the caller closes its own copy)."""
    root = held.root
    env = isolation.build_env(root, os.environ)  # no credentials: they travel in the client's headers
    upstream, replay = route.upstream, None
    if upstream == REPLAY:
        # The engine binds the replay's socket and hands it over as stdin, so the proxy
        # (which must know the upstream's port) starts alongside instead of after it.
        replay_socket = socket.create_server((isolation.LOOPBACK, 0))
        try:
            with held.stdio("replay") as io:
                replay = sup.start(
                    "provider",
                    [runner_python, "-I", "-m", "campaign.replay", "--task", task.name, "--listen-stdin", *(("--task-suite", str(task.suite_root)) if task.suite_root else ())],
                    cwd_fd=held.work_fd, env=env, stdin=replay_socket.fileno(), stdout=io.out, stderr=io.err,
                )
            upstream = f"http://{isolation.LOOPBACK}:{replay_socket.getsockname()[1]}"
        finally:
            replay_socket.close()  # the replay holds it now
    os.mkdir(PROFILER_DIR, 0o700, dir_fd=held.root_fd)
    dir_fd = pinned.open_dir(held.root_fd, PROFILER_DIR)
    try:
        package_parent = str(Path(campaign.__file__).resolve().parent.parent)
        argv = [route.profile_python, "-I", "-c", _BOOTSTRAP, package_parent,
                "--upstream", upstream, "--capture", str(root.path / PROFILER_DIR / CAPTURE_NAME), "--catalogs", str(root.path / PROFILER_DIR / catalogs.CATALOGS_NAME),
                "--silence-s", repr(route.silence_s), "--attempt-root", str(root.path)]
        argv += ["--listen-stdin"] if listener is not None else []
        with held.stdio("profiler") as io:
            proxy = sup.start("profiler", argv, cwd_fd=held.work_fd, env=env, stdin=listener.fileno() if listener is not None else None, stdout=io.out, stderr=io.err)
        # Both boot at once; the client starts once both answer.
        if replay is not None:
            try:
                wait_healthy(replay, held.reader("replay.out"), _announce_spec(r"replay listening on 127\.0\.0\.1:(\d+)"), timer=timer, deadline=deadline)
            except RuntimeBootFailed as exc:
                raise WireStartFailed(f"replay provider: {exc}") from None
        try:
            # A socket in a container's namespace takes no connection from here: it was
            # listening before the proxy started, and its announcement says it serves.
            health = _announce_spec(r"profiler listening on 127\.0\.0\.1:(\d+)", "announced" if listener is not None else "tcp")
            port = wait_healthy(proxy, held.reader("profiler.out"), health, timer=timer, deadline=deadline)
        except RuntimeBootFailed as exc:
            raise WireStartFailed(f"recording proxy: {exc}") from None
    except BaseException:
        os.close(dir_fd)
        raise
    return WireSession(proxy=proxy, proxy_url=f"http://{isolation.LOOPBACK}:{port}", dir_fd=dir_fd)


class FaultWatch:
    """Asked by the supervisor while the client runs: has the client been retrying into a
    failing provider (``faults.gave_out``)? Then waiting out its deadline proves nothing,
    and the attempt is stopped as the provider's fault. With ``spend`` (a lane with spend
    limits, ``spend_watch``), also: has the spend the wire saw so far passed the attempt's
    ceiling? Then it is stopped for the operator's budget (``overrun``). The capture is
    read through the pinned directory, at most every ``every`` seconds, and only when it
    grew or changed since the last read (the proxy appends a line per request: between
    them, a read would parse the same lines again); once true, the answer stays true, and
    a fault seen in the same read is the one recorded."""

    def __init__(self, session: WireSession, timer: Callable[[], float], every: float = 1.0, *, spend: Callable[[Capture], Overrun | None] | None = None) -> None:
        self.session, self.timer, self.every, self.spend = session, timer, every, spend
        self.fault: str | None = None
        self.overrun: Overrun | None = None
        self._last = float("-inf")
        self._read: tuple[int, int, int] | None = None  # the capture's (inode, size, mtime) when last read

    def __call__(self) -> bool:
        if not self.tripped and self.timer() - self._last >= self.every:
            self._last = self.timer()
            try:
                st = os.stat(CAPTURE_NAME, dir_fd=self.session.dir_fd, follow_symlinks=False)
                seen: tuple[int, int, int] | None = (st.st_ino, st.st_size, st.st_mtime_ns)
            except OSError:
                seen = None
            if seen is not None and seen == self._read:
                return self.tripped
            self._read = seen
            capture = read_capture(Path(CAPTURE_NAME), dir_fd=self.session.dir_fd)
            self.fault = faults.gave_out(capture.model_requests)
            if self.fault is None and self.spend is not None:
                self.overrun = self.spend(capture)
        return self.tripped

    @property
    def tripped(self) -> bool:
        return self.fault is not None or self.overrun is not None


def schema_tokens(session: WireSession, route: WireRoute) -> dict[str, int]:
    """Each catalog the proxy handed over, counted here: this process builds its Encoding
    once for the whole run (after an attempt, never beside a request in flight), where a
    proxy would build one per attempt. The handed-over text is removed once read, so only
    digests stay with the attempt. Empty (every estimate unknown) when nothing was handed
    over or the cache no longer verifies."""
    found = catalogs.read(session.dir_fd)
    try:
        os.unlink(catalogs.CATALOGS_NAME, dir_fd=session.dir_fd)
    except OSError:
        pass
    if not found:
        return {}
    try:
        encoding = tokenizer.load_encoding(route.tokenizer_cache)
    except tokenizer.TokenizerCacheError:
        return {}
    return catalogs.count(found, lambda text: tokenizer.count_tokens(encoding, text))


def collect(session: WireSession, grace: float = STOP_GRACE_S) -> Capture:
    """Stop the proxy so it flushes, then read the capture through the pinned directory."""
    if session.capture is None:
        session.proxy.terminate(grace)  # type: ignore[attr-defined]
        session.capture = read_capture(Path(CAPTURE_NAME), dir_fd=session.dir_fd)
    return session.capture

