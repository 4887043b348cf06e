"""Running the replay: a loopback socket, the announce line, and the two ways to serve.

``run`` is the process (``python -m campaign.replay``): bind, print one line, serve
until SIGTERM/SIGINT. ``running_in_thread`` serves in-process for tests.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from aiohttp import web

from campaign import listeners
from campaign.benchmark import TaskSuite
from campaign.errors import CampaignError, UsageProblem
from campaign.isolation import as_loopback
from campaign.replay.app import build_app

ANNOUNCE_PREFIX = "replay listening on"
#: The one line the process prints once bound: ``replay listening on 127.0.0.1:PORT``.
ANNOUNCE_PATTERN = r"^replay listening on (\S+):(\d+)$"


def check_loopback(host: str) -> str:
    """The address to bind; anything that is not loopback is refused (the replay is a local fake)."""
    if (loopback := as_loopback(host)) is not None:
        return loopback
    raise UsageProblem(f"{host!r} is not a loopback address; the replay server only binds loopback (e.g. 127.0.0.1)", option="--host")


def bind(host: str = "127.0.0.1", port: int = 0) -> socket.socket:
    """A listening socket on a loopback address (port 0: the kernel picks a free one)."""
    host = check_loopback(host)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        return socket.create_server((host, port), family=family)
    except OSError as exc:
        raise CampaignError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None


def inherited(fd: int = 0) -> socket.socket:
    """The listening loopback socket handed over as ``fd`` (stdin, ``listeners.inherited``)."""
    sock = listeners.inherited(fd)
    try:
        check_loopback(sock.getsockname()[0])
    except UsageProblem:
        sock.close()
        raise
    return sock


def announce_line(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"{ANNOUNCE_PREFIX} {f'[{host}]' if ':' in host else host}:{port}"


async def start(app: web.Application, sock: socket.socket) -> web.AppRunner:
    """Serve ``app`` on an already bound socket; stop with ``await runner.cleanup()``."""
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.SockSite(runner, sock).start()
    return runner


async def serve_until_signal(app: web.Application, sock: socket.socket, announce: Callable[[str], None]) -> int:
    """Serve until SIGTERM or SIGINT; return the signal number that stopped it."""
    loop = asyncio.get_running_loop()
    stopped: asyncio.Future[int] = loop.create_future()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, lambda s=signum: stopped.done() or stopped.set_result(s))
    runner = await start(app, sock)
    try:
        announce(announce_line(sock))
        return await stopped
    finally:
        await runner.cleanup()


def _print_flushed(line: str) -> None:
    # Flushed at once: whoever started the process reads the port from this line.
    print(line, flush=True)


def run(
    task_name: str | None = None,
    host: str = "127.0.0.1",
    port: int = 0,
    faults: Iterable[str] = (),
    announce: Callable[[str], None] = _print_flushed,
    suite: TaskSuite | None = None,
    listen_stdin: bool = False,
) -> int:
    """The process entry point: validate, bind (or take the listening socket given as stdin),
    announce, serve until a signal; returns that signal."""
    app = build_app(task_name, faults, suite)
    sock = inherited(0) if listen_stdin else bind(host, port)
    return asyncio.run(serve_until_signal(app, sock, announce))


@dataclass(frozen=True)
class Running:
    host: str
    port: int

    @property
    def base_url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"


@contextlib.contextmanager
def running_in_thread(app: web.Application, host: str = "127.0.0.1", port: int = 0) -> Iterator[Running]:
    """Serve ``app`` from a background thread's event loop for the duration of the block."""
    sock = bind(host, port)
    loop = asyncio.new_event_loop()
    runner = loop.run_until_complete(start(app, sock))
    thread = threading.Thread(target=loop.run_forever, name="replay-server", daemon=True)
    thread.start()
    try:
        bound_host, bound_port = sock.getsockname()[:2]
        yield Running(bound_host, bound_port)
    finally:
        asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(timeout=10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        loop.close()
