"""The replay's aiohttp application: routes, the generation handler, injected faults.

Every model endpoint is accepted with and without the ``/v1`` prefix, because
clients disagree on whether the base URL includes it. ``server.py`` runs it.
"""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import Iterable
from dataclasses import dataclass
from types import ModuleType

from aiohttp import web

from campaign import benchmark
from campaign.errors import UnknownTask, UsageProblem
from campaign.replay.faults import SLOW_S, FaultPlan, parse_faults
from campaign.replay.scripts import script_for
from campaign.replay.turns import next_reply
from campaign.replay.wire import anthropic, chat, gemini, responses

_SSE_HEADERS = {"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
# Injected HTTP faults: (status, the error type the providers' own bodies carry).
# None: the wire's own server-error type.
_HTTP_FAULTS = {"http-429": (429, "rate_limit_error"), "http-500": (500, None), "http-529": (529, "overloaded_error")}
# The operator's to fix, in the words real providers use: (status, error type, message).
_OPERATOR_FAULTS = {
    "http-402": (402, "billing_error", "Insufficient credits. Add more using https://example.invalid/credits"),
    "credit-400": (400, "invalid_request_error", "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."),
    "model-404": (404, "not_found_error", "model: {model}"),
}
# OpenRouter's answer when its upstream failed: a 200 whose body is only an error.
_ERROR_200 = {"error": {"code": 502, "message": "Provider returned error"}}
_MODELS = ("replay", "claude-replay", "gpt-replay")


@dataclass
class _State:
    """Per-process state: the pinned task and fault plan, and a request counter for faults only."""

    task_name: str | None
    faults: FaultPlan
    suite: benchmark.TaskSuite
    requests: int = 0

    def next_number(self) -> int:
        # Handlers run on the one event loop thread, so no lock is needed.
        self.requests += 1
        return self.requests


_STATE = web.AppKey("replay_state", _State)
# Set when the server shuts down, so a request left hanging lets it stop at once.
_CLOSING = web.AppKey("replay_closing", asyncio.Event)


def check_task(task_name: str | None, suite: benchmark.TaskSuite) -> str | None:
    if task_name is None:
        return None
    try:
        return suite.get(task_name).name
    except UnknownTask:
        raise UsageProblem(f"unknown task {task_name!r}; known: {', '.join(suite.names())}", option="--task") from None


async def _generate(wire: ModuleType, request: web.Request) -> web.StreamResponse:
    state = request.app[_STATE]
    number = state.next_number()
    try:
        body = await request.json()
    except ValueError:  # bad JSON or bad UTF-8
        body = None
    if not isinstance(body, dict):
        return web.json_response(wire.error("request body is not a JSON object", "invalid_request_error"), status=400)
    fault = state.faults.get(number)
    if fault in _HTTP_FAULTS:
        status, kind = _HTTP_FAULTS[fault]
        # A short retry-after, as providers send with these, keeps a retrying client quick.
        body = wire.error(f"injected fault {fault} on request {number}", *((kind,) if kind else ()))
        return web.json_response(body, status=status, headers={"retry-after": "1"})
    if fault in _OPERATOR_FAULTS:
        status, kind, message = _OPERATOR_FAULTS[fault]
        return web.json_response(wire.error(message.format(model=body.get("model")), kind), status=status)
    if fault == "error-200":
        if body.get("stream") is True:
            response = web.StreamResponse(headers=_SSE_HEADERS)
            await response.prepare(request)
            await response.write(b"data: " + json.dumps(_ERROR_200).encode() + b"\n\n")
            await response.write_eof()
            return response
        return web.json_response(_ERROR_200)
    if fault == "hang":
        # Never answered: the connection is dropped only when the server shuts down.
        await request.app[_CLOSING].wait()
        if request.transport is not None:
            request.transport.abort()
        return web.Response(status=503)
    if fault == "slow":
        await asyncio.sleep(SLOW_S)
    conversation = wire.parse(body, request.path)
    payload = wire.render(next_reply(conversation, state.task_name, state.suite), conversation)
    if not conversation.stream:
        if fault == "cut-stream":
            # A non-streamed reply is cut too: a prefix of its JSON, never a parseable body.
            head = json.dumps(payload).encode()[:40]
            return await _cut(request, web.StreamResponse(headers={"Content-Type": "application/json"}), head)
        return web.json_response(payload)
    frames = wire.stream(payload, conversation)
    if fault == "cut-stream":
        return await _cut(request, web.StreamResponse(headers=_SSE_HEADERS), frames[0])
    response = web.StreamResponse(headers=_SSE_HEADERS)
    await response.prepare(request)
    for chunk in frames:
        await response.write(chunk)
    await response.write_eof()
    return response


async def _cut(request: web.Request, response: web.StreamResponse, first: bytes) -> web.StreamResponse:
    """Send the start of a response, then drop the connection mid-body."""
    await response.prepare(request)
    await response.write(first)
    if request.transport is not None:
        request.transport.abort()
    return response


async def _count_tokens(request: web.Request) -> web.Response:
    # A rough, deterministic estimate: some clients ask before sending, none bill by it.
    raw = await request.read()
    return web.json_response({"input_tokens": max(1, len(raw) // 4)})


async def _models(request: web.Request) -> web.Response:
    del request
    # One list both SDKs accept: OpenAI's "object"/"owned_by" and Anthropic's "type"/"display_name".
    data = [
        {"id": m, "object": "model", "type": "model", "created": 0, "created_at": "2025-01-01T00:00:00Z", "owned_by": "campaign", "display_name": m}
        for m in _MODELS
    ]
    return web.json_response({"object": "list", "data": data, "has_more": False, "first_id": data[0]["id"], "last_id": data[-1]["id"]})


async def _health(request: web.Request) -> web.Response:
    del request
    return web.Response(text="replay ok\n")


def build_app(task_name: str | None = None, faults: Iterable[str] = (), suite: benchmark.TaskSuite | None = None) -> web.Application:
    """The replay application; ``task_name`` pins the script, else each request's prompt picks it.

    ``faults`` are ``KIND:N`` specs (see ``faults.py``); ``suite`` holds the tasks (by
    default the built-in ones). Raises ``UsageProblem`` for an unknown task or a
    malformed fault.
    """
    suite = suite or benchmark.builtin_suite()
    app = web.Application()
    app[_STATE] = _State(check_task(task_name, suite), parse_faults(faults), suite)

    async def on_startup(app: web.Application) -> None:
        app[_CLOSING] = asyncio.Event()  # made on the serving loop

    async def on_shutdown(app: web.Application) -> None:
        app[_CLOSING].set()

    app.on_startup.append(on_startup)
    app.on_shutdown.append(on_shutdown)
    if task_name is not None:
        # Built now, so a broken script fails at start, not mid-conversation.
        script_for(task_name, None if suite.builtin else str(suite.root))
    app.router.add_get("/", _health)  # GET also answers HEAD
    for prefix in ("", "/v1"):
        for path, wire in (("/messages", anthropic), ("/chat/completions", chat), ("/responses", responses)):
            app.router.add_post(prefix + path, functools.partial(_generate, wire))
        app.router.add_post(prefix + "/messages/count_tokens", _count_tokens)
        app.router.add_get(prefix + "/models", _models)
    # Gemini puts the model and the method in the path: /v1beta/models/MODEL:METHOD.
    for prefix in ("/v1beta", "/v1"):
        app.router.add_post(prefix + "/models/{target}", _gemini)
    return app


async def _gemini(request: web.Request) -> web.StreamResponse:
    method = request.match_info["target"].rsplit(":", 1)[-1]
    if method in ("generateContent", "streamGenerateContent"):
        return await _generate(gemini, request)
    if method == "countTokens":
        raw = await request.read()
        return web.json_response({"totalTokens": max(1, len(raw) // 4)})
    return web.json_response(gemini.error(f"no method {method!r} here", "invalid_request_error"), status=404)
