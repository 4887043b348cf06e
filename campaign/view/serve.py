"""Running the view: check the host, open the store read-only, bind, announce, serve until a signal.

Bad input is refused before anything is opened or bound: a host that is not
loopback (unless the operator passed ``allow_remote``), a missing store, an
unknown campaign. SIGINT or SIGTERM stops the server, closes the store and
raises ``Interrupted`` (the CLI exits 130), as every command of the engine does.
"""

from __future__ import annotations

import asyncio
import signal
import socket
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from aiohttp import web
from sqlalchemy import Engine

from campaign.errors import CampaignError, Interrupted, UsageProblem
from campaign.isolation import as_loopback
from campaign.view import source
from campaign.view.app import PAGE_PATIENCE_S, build_app


@dataclass(frozen=True)
class ViewOptions:
    db: str | None = None
    output_dir: Path | None = None
    host: str = "127.0.0.1"
    port: int = 0
    campaign_id: int | None = None
    # Serve beyond loopback; the operator must ask for it by name.
    allow_remote: bool = False


def check_host(host: str, *, allow_remote: bool = False) -> str:
    """The address to bind: a loopback address, or anything when remote access was asked for."""
    if (loopback := as_loopback(host)) is not None:
        return loopback
    if allow_remote:
        return host
    raise UsageProblem(
        f"{host!r} is not a loopback address; the view serves 127.0.0.1 or ::1 only, unless you add --allow-remote "
        "(anyone who can reach that address could then read these pages)",
        option="--host",
    )


def bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        return socket.create_server((host, port), family=family)
    except OSError as exc:
        raise CampaignError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None


def page_url(sock: socket.socket, campaign_id: int | None) -> str:
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/" + (f"campaigns/{campaign_id}" if campaign_id is not None else "")


def serve(opts: ViewOptions, announce: Callable[[str], None]) -> None:
    """Serve until SIGINT/SIGTERM, then raise Interrupted; ``announce`` gets the URL once bound."""
    host = check_host(opts.host, allow_remote=opts.allow_remote)
    engine = source.open_readonly(source.store_target(opts.db, opts.output_dir))
    try:
        if opts.campaign_id is not None:
            source.get_summary(engine, opts.campaign_id)
        sock = bind(host, opts.port)
        signum = asyncio.run(_serve_until_signal(engine, sock, opts, announce))
    except KeyboardInterrupt:
        # Ctrl-C before the server's own handlers were installed (while opening the store).
        signum = signal.SIGINT
    finally:
        engine.dispose()
    raise Interrupted(f"campaign view stopped by {signal.Signals(signum).name}; the store was only read")


async def _serve_until_signal(engine: Engine, sock: socket.socket, opts: ViewOptions, announce: Callable[[str], None]) -> int:
    loop = asyncio.get_running_loop()
    stopped: asyncio.Future[int] = loop.create_future()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, lambda s=signum: stopped.done() or stopped.set_result(s))
    # Bound to loopback, --allow-remote opens nothing: the Host check (against DNS
    # rebinding) is dropped only when the server really listens beyond this machine.
    remote = opts.allow_remote and as_loopback(str(sock.getsockname()[0])) is None
    runner = web.AppRunner(build_app(engine, allow_remote=remote, report_patience=PAGE_PATIENCE_S), access_log=None, handle_signals=False)
    await runner.setup()
    try:
        await web.SockSite(runner, sock).start()
        announce(page_url(sock, opts.campaign_id))
        return await stopped
    finally:
        await runner.cleanup()
