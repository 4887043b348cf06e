"""A loopback stand-in for a paid model provider: canned bodies per wire format.

It runs an aiohttp server in a background thread on 127.0.0.1:0. Each request
is answered with fixed bytes for its format (streamed when the body asks for
``"stream": true``), so a test can compare what crossed the proxy with what the
stub sent. The ``x-stub-mode`` request header picks misbehaviour:
``cut`` (a stream that stops after its first event and drops the connection),
``500`` (an overloaded-style error), ``429`` (rate limited), ``reset`` (the
connection dropped before any response), ``hang`` (no byte, ever), ``stall``
(the first event, then silence), ``error-event`` (a 200 stream that ends on an
``overloaded_error`` event) and ``linger`` (trailing bytes after the terminal
event, as a client that hangs up right after it never reads).
"""

from __future__ import annotations

import asyncio
import json
import threading
from dataclasses import dataclass, field

from aiohttp import web

# Scripted usage per format; what the profiler must record.
ANTHROPIC_USAGE = {"input_tokens": 1200, "cache_read_input_tokens": 800, "cache_creation_input_tokens": 300, "output_tokens": 1}
ANTHROPIC_FINAL_OUTPUT = 77
CHAT_USAGE = {"prompt_tokens": 2000, "completion_tokens": 55, "total_tokens": 2055, "prompt_tokens_details": {"cached_tokens": 1500}}
RESPONSES_USAGE = {"input_tokens": 3000, "input_tokens_details": {"cached_tokens": 1024}, "output_tokens": 99, "output_tokens_details": {"reasoning_tokens": 40}, "total_tokens": 3099}


def sse(events: list[tuple[str | None, object]]) -> bytes:
    out = []
    for name, data in events:
        text = data if isinstance(data, str) else json.dumps(data)
        out.append((f"event: {name}\n" if name else "") + f"data: {text}\n\n")
    return "".join(out).encode()


def anthropic_body(n: int, stream: bool) -> bytes:
    rid = f"msg_stub_{n}"
    if not stream:
        usage = {**ANTHROPIC_USAGE, "output_tokens": ANTHROPIC_FINAL_OUTPUT}
        return json.dumps({"id": rid, "type": "message", "role": "assistant", "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn", "usage": usage}).encode()
    return sse([
        ("message_start", {"type": "message_start", "message": {"id": rid, "type": "message", "role": "assistant", "content": [], "usage": ANTHROPIC_USAGE}}),
        ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "ok"}}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        # Two deltas: cumulative figures, so the last one counts and they are never summed.
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": None}, "usage": {"output_tokens": 40}}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": ANTHROPIC_FINAL_OUTPUT}}),
        ("message_stop", {"type": "message_stop"}),
    ])


def chat_body(n: int, stream: bool) -> bytes:
    rid = f"chatcmpl-stub{n}"
    if not stream:
        return json.dumps({"id": rid, "object": "chat.completion", "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}], "usage": CHAT_USAGE}).encode()
    chunk = {"id": rid, "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": "ok"}, "finish_reason": None}]}
    last = {"id": rid, "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    usage = {"id": rid, "object": "chat.completion.chunk", "choices": [], "usage": CHAT_USAGE}
    return sse([(None, chunk), (None, last), (None, usage), (None, "[DONE]")])


def responses_body(n: int, stream: bool) -> bytes:
    rid = f"resp_stub_{n}"
    done = {"id": rid, "object": "response", "status": "completed", "output": [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "ok"}]}], "usage": RESPONSES_USAGE}
    if not stream:
        return json.dumps(done).encode()
    return sse([
        ("response.created", {"type": "response.created", "response": {"id": rid, "status": "in_progress"}}),
        ("response.output_text.delta", {"type": "response.output_text.delta", "delta": "ok"}),
        # Encrypted reasoning crosses the wire but is never counted as visible text.
        ("response.output_item.done", {"type": "response.output_item.done", "item": {"type": "reasoning", "encrypted_content": "gAAAA-opaque"}}),
        ("response.completed", {"type": "response.completed", "response": done}),
    ])


BODIES = {"/v1/messages": anthropic_body, "/v1/chat/completions": chat_body, "/v1/responses": responses_body}


@dataclass
class StubUpstream:
    port: int = 0
    requests: list[dict] = field(default_factory=list)
    # Streamed responses whose handler has run to its end (trailing bytes included).
    finished: int = 0
    _loop: asyncio.AbstractEventLoop | None = None
    _runner: web.AppRunner | None = None
    _thread: threading.Thread | None = None
    _stopping: bool = False

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.read()
        data = json.loads(body) if body else {}
        self.requests.append({"path": request.path, "headers": {k.lower(): v for k, v in request.headers.items()}, "body": data})
        n = len(self.requests)
        mode = request.headers.get("x-stub-mode", "")
        if request.method == "HEAD" or request.path == "/":
            return web.Response(status=200)
        make = BODIES.get(request.path)
        if make is None:
            return web.json_response({"data": []})
        if mode == "500":
            return web.json_response({"type": "error", "error": {"type": "overloaded_error"}}, status=529 if "messages" in request.path else 500)
        if mode == "429":
            return web.json_response({"type": "error", "error": {"type": "rate_limit_error"}}, status=429)
        if mode == "reset":
            request.transport.abort()
            return web.Response()
        if mode == "hang":
            await self._silence()
        stream = data.get("stream") is True
        payload = make(n, stream)
        if not stream:
            return web.Response(body=payload, content_type="application/json")
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        if mode in ("cut", "stall", "error-event"):
            first = payload.split(b"\n\n", 1)[0] + b"\n\n"
            await response.write(first)
            if mode == "stall":
                await self._silence()
            if mode == "error-event":
                await response.write(sse([("error", {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})]))
                await response.write_eof()
                return response
            request.transport.close()  # drop the connection mid-stream
            return response
        for part in payload.split(b"\n\n"):
            if part:
                await response.write(part + b"\n\n")
        if mode == "linger":
            # Trailing bytes after the terminal event, once the client has had time to hang up.
            await asyncio.sleep(0.3)
            for _ in range(20):
                await response.write(b": keep-alive\n\n")
                await asyncio.sleep(0.02)
        try:
            await response.write_eof()
        finally:
            self.finished += 1
        return response

    async def _silence(self) -> None:
        # Silent until the stub stops (never a fixed hour that would hold up its shutdown).
        while not self._stopping:
            await asyncio.sleep(0.05)

    def start(self) -> StubUpstream:
        ready = threading.Event()

        def serve() -> None:
            self._loop = asyncio.new_event_loop()
            asyncio.set_event_loop(self._loop)
            app = web.Application()
            app.router.add_route("*", "/{tail:.*}", self._handle)
            self._runner = web.AppRunner(app, access_log=None)
            self._loop.run_until_complete(self._runner.setup())
            site = web.TCPSite(self._runner, "127.0.0.1", 0)
            self._loop.run_until_complete(site.start())
            self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
            ready.set()
            self._loop.run_forever()

        self._thread = threading.Thread(target=serve, daemon=True)
        self._thread.start()
        if not ready.wait(10):
            raise RuntimeError("stub upstream did not start")
        return self

    def stop(self) -> None:
        if self._loop is None:
            return
        self._stopping = True
        asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(10)  # type: ignore[union-attr]
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)  # type: ignore[union-attr]
