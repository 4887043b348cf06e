"""The recording proxy: one per attempt, between the client and its model provider.

It binds 127.0.0.1 on an OS-chosen port (or serves on the socket the engine bound
and handed over: a task container's loopback, ``listeners.loopback_in``), announces ``profiler listening on
127.0.0.1:PORT`` on stdout, and forwards every request byte for byte to the
upstream (a provider's base URL, or the replay provider), streaming responses
back as they arrive so the client sees the provider's own pacing. For each
model request it appends one line to the capture (see ``capture``): route,
model, the tool catalog's digests and o200k_base schema-token estimate, the
upstream response id, status, terminal usage and how the stream ended, and how
long the upstream had left it without a byte when it ended (``idle_s``, beside
the ``silence_s`` bound), which the hang rule of ``faults`` reads. Run by the
engine (``--catalogs``), it leaves the schema-token estimate to the engine and
writes each distinct catalog's JSON to a file of its own instead (``catalogs``).

Credentials pass through in headers, as the client sent them; headers are
never recorded. On SIGTERM it stops accepting, lets in-flight requests finish
for a short grace, records what they showed, and writes the flush marker.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import itertools
import os
import signal
import socket
import sys
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import ClientConnectionResetError, ClientConnectorError, ClientError, ClientSession, ClientTimeout, TCPConnector, web

from campaign import listeners
from campaign.canonical import wire_json
from campaign.profiler import wire
from campaign.profiler.capture import CaptureWriter
from campaign.profiler.catalogs import CatalogWriter
from campaign.profiler.usage import StreamObserver, UsageObservation, observe_json

LOOPBACK = "127.0.0.1"
ANNOUNCE = "profiler listening on {host}:{port}"
# Hop-by-hop headers (RFC 9110 7.6.1) and those aiohttp recomputes for the new hop.
_DROP_REQUEST = {"host", "content-length", "transfer-encoding", "connection", "keep-alive", "te", "trailer", "upgrade", "proxy-authorization", "proxy-connection", "accept-encoding"}
_DROP_RESPONSE = {"content-length", "transfer-encoding", "connection", "keep-alive", "te", "trailer", "upgrade", "content-encoding"}
SHUTDOWN_GRACE_S = 3.0
DEFAULT_SILENCE_S = wire.DEFAULT_SILENCE_S
CONNECT_S = 30.0


class Recorder:
    """The per-attempt state: capture writer, sequence numbers, token estimates by catalog.

    Each catalog is either counted here (``count_tokens``: a proxy run on its own) or
    written to ``catalogs`` for the engine to count after the attempt (``catalogs``)."""

    def __init__(self, writer: CaptureWriter, count_tokens, catalogs: CatalogWriter | None = None) -> None:
        self.writer = writer
        self.catalogs = catalogs
        self._seq = itertools.count(1)
        self._count_tokens = count_tokens  # tools list -> int, or None when no tokenizer
        self._tokens: dict[str, int | None] = {}

    def next_seq(self) -> int:
        return next(self._seq)

    def schema_tokens(self, summary: wire.RequestSummary) -> int | None:
        # A client resends the same catalog every turn: tokenize (or hand over) each once.
        if summary.tools is None or summary.catalog_digest is None:
            return None
        if summary.catalog_digest not in self._tokens:
            if self.catalogs is not None:
                self.catalogs.write(summary.catalog_digest, wire_json(summary.tools))
            self._tokens[summary.catalog_digest] = None if self._count_tokens is None else self._count_tokens(summary.tools)
        return self._tokens[summary.catalog_digest]

    def close(self) -> None:
        self.writer.close()
        if self.catalogs is not None:
            self.catalogs.close()


@dataclasses.dataclass(frozen=True)
class Waited:
    """How long the upstream had left a request without a byte when it ended (from the last
    byte, or from sending it when none came), and the bound it was held to, in seconds."""

    idle_s: float
    silence_s: float


def model_record(
    seq: int,
    summary: wire.RequestSummary,
    schema_tokens: int | None,
    status: int | None,
    obs: UsageObservation | None,
    upstream_error: str | None = None,
    waited: Waited | None = None,
) -> dict[str, Any]:
    usage = None
    if obs is not None and obs.has_usage:
        # Kept whether terminal or not: a cut stream's message_start input was billed too.
        usage = {"uncached_input": obs.uncached_input, "cached_input": obs.cached_input, "cache_write": obs.cache_write, "output": obs.output}
        if obs.cache_write_1h is not None:  # only where the response broke its cache writes down
            usage["cache_write_1h"] = obs.cache_write_1h
    return {
        "kind": "model",
        "seq": seq,
        "format": summary.format,
        "path": summary.path,
        "model": summary.model,
        "stream": summary.stream,
        "tool_count": summary.tool_count,
        "catalog_digest": summary.catalog_digest,
        "catalog_set_digest": summary.catalog_set_digest,
        "tool_digests": None if summary.tool_digests is None else list(summary.tool_digests),
        "schema_tokens": schema_tokens,
        "failed_tool_results": summary.failed_tool_results,
        "reasoning": summary.reasoning,
        "fingerprint": None if summary.fingerprint is None else dict(summary.fingerprint),
        "fingerprint_digest": summary.fingerprint_digest,
        "status": status,
        "upstream_error": upstream_error,
        "error_event": obs.error_event if obs else None,
        "response_id": obs.response_id if obs else None,
        "usage": usage,
        "usage_complete": bool(obs and obs.complete),
        "usage_conflict": bool(obs and obs.usage_conflict),
        "cache_read_observable": bool(obs and obs.cache_read_observable),
        "cache_write_observable": bool(obs and obs.cache_write_observable),
        "terminal": bool(obs and obs.terminal),
        "clean_end": bool(obs and obs.clean_end),
        "idle_s": None if waited is None else round(waited.idle_s, 1),
        "silence_s": None if waited is None else waited.silence_s,
    }


# How a request to the upstream failed, as the capture's ``upstream_error``:
#   unreachable  no connection was made (refused, no route, no name, connect timeout)
#   reset        the connection dropped before the response began
#   silent       no byte within the silence bound (before or during the response)
#   cut          the response began, then ended (or dropped) without the format's end
#   aborted      the proxy itself stopped waiting (shutdown): not the upstream's doing
UPSTREAM_ERRORS = ("unreachable", "reset", "silent", "cut", "aborted")
# aiohttp >= 3.10 tells a connect timeout apart; the proxy may run under an older one.
_CONNECT_TIMEOUT: tuple[type[BaseException], ...] = tuple(t for t in (getattr(aiohttp, "ConnectionTimeoutError", None),) if t is not None)


def upstream_error(exc: BaseException, *, began: bool) -> str:
    """The capture's word for an exception from the upstream request."""
    if isinstance(exc, ClientConnectorError) or isinstance(exc, _CONNECT_TIMEOUT):
        return "unreachable"
    if isinstance(exc, asyncio.TimeoutError):
        return "silent"
    return "cut" if began else "reset"


def _forward_headers(headers, drop: set[str]) -> list[tuple[str, str]]:
    return [(k, v) for k, v in headers.items() if k.lower() not in drop]


def build_app(upstream: str, recorder: Recorder, *, silence_s: float = DEFAULT_SILENCE_S, attempt_roots: tuple[str, ...] = ()) -> web.Application:
    base = upstream.rstrip("/")
    app = web.Application(client_max_size=wire.MAX_PARSED_BODY)

    async def on_startup(app: web.Application) -> None:
        # No ambient proxy, no cookies: the proxy talks to exactly one upstream. An upstream
        # that sends nothing for silence_s (before or inside a response) is given up on.
        app["session"] = ClientSession(
            connector=TCPConnector(limit=0),
            timeout=ClientTimeout(total=None, sock_connect=min(CONNECT_S, silence_s), sock_read=silence_s),
            auto_decompress=False,
            trust_env=False,
            cookie_jar=None,
        )

    # Set once the proxy begins to stop: from then on it ends what is in flight itself (the
    # attempt is over), so a response it stops reading is aborted, never the upstream's cut.
    stopping = asyncio.Event()
    stopped_at: list[float] = []  # when it began to stop, on the loop's clock

    async def on_shutdown(app: web.Application) -> None:
        stopped_at.append(asyncio.get_running_loop().time())
        stopping.set()

    async def on_cleanup(app: web.Application) -> None:
        await app["session"].close()

    async def handle(request: web.Request) -> web.StreamResponse:
        seq = recorder.next_seq()
        app["in_flight"].add(asyncio.current_task())
        body = await request.read()
        summary = wire.summarize_request(request.path_qs, body, request.headers.get("Content-Encoding"), attempt_roots)
        headers = _forward_headers(request.headers, _DROP_REQUEST) + [("Accept-Encoding", "identity")]
        status: int | None = None
        failed: str | None = None
        observation: UsageObservation | None = None
        stream_observer: StreamObserver | None = None
        buffered: list[bytes] = []
        size = 0
        clock = asyncio.get_running_loop().time
        heard = clock()  # the last upstream byte; until one comes, when the request was sent
        try:
            async with app["session"].request(request.method, base + request.path_qs, headers=headers, data=body or None, allow_redirects=False) as up:
                heard = clock()
                status = up.status
                response = web.StreamResponse(status=up.status, reason=up.reason, headers=_forward_headers(up.headers, _DROP_RESPONSE))
                await response.prepare(request)
                if summary is not None and "text/event-stream" in up.headers.get("Content-Type", ""):
                    stream_observer = StreamObserver(summary.format)
                client_gone = False
                async for chunk in up.content.iter_any():
                    heard = clock()
                    # A client that hangs up does not stop the provider's billing: keep reading
                    # the upstream to its terminal usage, just stop writing.
                    if not client_gone:
                        try:
                            await response.write(chunk)
                        except (ConnectionError, ClientConnectionResetError):
                            client_gone = True
                    if stream_observer is not None:
                        stream_observer.feed(chunk)
                    elif summary is not None and size <= wire.MAX_PARSED_BODY:
                        buffered.append(chunk)
                        size += len(chunk)
                # The upstream has ended its response: that is what was billed, whether or not
                # the client stays to read the end of it (clients hang up right after the
                # terminal event), so the observation is taken before the last write.
                if summary is not None:
                    observation = stream_observer.finish() if stream_observer else observe_json(summary.format, b"".join(buffered))
                    stream_observer = None
                    if 200 <= status < 300 and not observation.clean_end and observation.error_event is None:
                        # Ended without the format's end: by the upstream, unless the proxy was stopping.
                        failed = "aborted" if stopping.is_set() else "cut"
                if not client_gone:
                    try:
                        await response.write_eof()
                    except (ConnectionError, ClientConnectionResetError):
                        pass
                return response
        except (ClientError, asyncio.TimeoutError, OSError) as exc:
            failed = "aborted" if stopping.is_set() else upstream_error(exc, began=status is not None)
            if status is None:
                # Nothing reached the client yet: answer like a gateway, so it sees an error, not a hang.
                code = 504 if failed == "silent" else 502
                return web.json_response({"error": {"type": f"upstream_{failed}"}}, status=code)
            raise
        except asyncio.CancelledError:
            failed = failed or "aborted"
            raise
        finally:
            app["in_flight"].discard(asyncio.current_task())
            # Also on cancellation (shutdown, client gone): what was seen is recorded, unfinished.
            if summary is not None:
                if stream_observer is not None:
                    partial = stream_observer.finish()
                    observation = dataclasses.replace(partial, clean_end=False)
                # The wait is measured to when the proxy began to stop (the attempt's end), not
                # to the end of the shutdown grace that follows.
                ended = min([clock(), *stopped_at])
                waited = Waited(max(0.0, ended - heard), silence_s)
                recorder.writer.write(model_record(seq, summary, recorder.schema_tokens(summary), status, observation, failed, waited))
            else:
                recorder.writer.write({"kind": "other", "seq": seq, "method": request.method, "status": status, "upstream_error": failed})

    # Handlers still running; the server ends only those whose client is still connected.
    app["in_flight"] = set()
    app.on_startup.append(on_startup)
    app.on_shutdown.append(on_shutdown)
    app.on_cleanup.append(on_cleanup)
    app.router.add_route("*", "/{tail:.*}", handle)
    return app


async def serve(
    upstream: str,
    recorder: Recorder,
    sock: socket.socket,
    *,
    announce=print,
    stop: asyncio.Event | None = None,
    silence_s: float = DEFAULT_SILENCE_S,
    attempt_roots: tuple[str, ...] = (),
) -> None:
    """Serve on an already bound socket until ``stop`` is set (or SIGTERM/SIGINT), then flush."""
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        try:
            loop.add_signal_handler(sig, stop.set)
        except (RuntimeError, ValueError):  # not the main thread (in-process tests)
            pass
    app = build_app(upstream, recorder, silence_s=silence_s, attempt_roots=attempt_roots)
    runner = web.AppRunner(app, shutdown_timeout=SHUTDOWN_GRACE_S, access_log=None, handle_signals=False)
    await runner.setup()
    try:
        await web.SockSite(runner, sock).start()
        host, port = sock.getsockname()[:2]
        announce(ANNOUNCE.format(host=host, port=port))
        await stop.wait()
    finally:
        await runner.cleanup()
        await _end_in_flight(app)
        recorder.close()


async def _end_in_flight(app: web.Application) -> None:
    """End the handlers the server left running: one whose client hung up while its upstream
    still owes bytes is no connection of the server's any more, and would otherwise be
    cancelled only after the capture is closed, losing its line from a capture whose
    flush marker then says it is whole."""
    left = [task for task in app["in_flight"] if not task.done()]
    for task in left:
        task.cancel()
    await asyncio.gather(*left, return_exceptions=True)


def bind_loopback(port: int = 0) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((LOOPBACK, port))
    sock.listen(128)
    sock.setblocking(False)
    return sock


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="campaign-profiler", description="Per-attempt recording proxy.")
    parser.add_argument("--upstream", required=True, help="base URL requests are forwarded to")
    parser.add_argument("--capture", required=True, type=Path, help="capture file to create (must not exist)")
    parser.add_argument("--tokenizer-cache", type=Path, help="verified o200k_base cache directory")
    parser.add_argument("--no-tokenizer", action="store_true", help="record no schema-token estimates")
    parser.add_argument("--catalogs", type=Path, help="file to create with each catalog's JSON, for the engine to count (implies --no-tokenizer)")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--listen-stdin", action="store_true", help="serve on the listening socket given as stdin (a task container's loopback) instead of binding")
    parser.add_argument("--silence-s", type=float, default=DEFAULT_SILENCE_S, help="give up on an upstream silent this long")
    parser.add_argument("--attempt-root", action="append", default=[], help="a path of the attempt's own, digested as a fixed token")
    args = parser.parse_args(argv)
    count_tokens = None
    if not (args.no_tokenizer or args.catalogs):
        from campaign.profiler import tokenizer

        # Built before the proxy announces itself, never while it serves: building holds the
        # GIL (tiktoken's Rust half included) for up to a second, which would stall every
        # request in flight and skew the waits the capture measures.
        try:
            encoding = tokenizer.load_encoding(tokenizer.resolve_cache_dir(args.tokenizer_cache, os.environ))
        except tokenizer.TokenizerCacheError as exc:
            print(f"profiler: {exc}", file=sys.stderr)
            return 2
        count_tokens = lambda tools: tokenizer.tool_schema_tokens(encoding, tools)  # noqa: E731
    if args.listen_stdin:
        sock = listeners.inherited(0)
        sock.setblocking(False)
    else:
        sock = bind_loopback(args.port)
    recorder = Recorder(CaptureWriter(args.capture), count_tokens, CatalogWriter(args.catalogs) if args.catalogs else None)
    asyncio.run(serve(args.upstream, recorder, sock, announce=lambda line: print(line, flush=True), silence_s=args.silence_s, attempt_roots=tuple(args.attempt_root)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
