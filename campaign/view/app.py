"""The aiohttp application: GET-only routes over one read-only engine.

Routes::

    /                                  campaigns list
    /campaigns/{id}                    one campaign (?variant= &outcome= &provider= &page= for its trial table)
    /api/campaigns                     the list as JSON
    /api/campaigns/{id}                one campaign as JSON (the sanitized report and the page's figures)
    /api/campaigns/{id}/status         what the auto-refresh polls
    /static/view.js, /static/view.css  the page's only script and style
    /favicon.ico                       204, so browsers stop asking

Store reads block, so each runs in the default thread pool. Every answer
carries a Content-Security-Policy that allows only this origin's static files,
and unless the operator allowed remote access, a request whose Host header is
not a loopback name is refused (a web page elsewhere cannot reach the view
through DNS rebinding). An unexpected error answers a fixed message, never the
exception's text.
"""

from __future__ import annotations

import asyncio
import functools
import ipaddress
import json
import re
import sys
from collections.abc import Awaitable, Callable
from importlib import resources
from typing import Any

from aiohttp import hdrs, web
from sqlalchemy import Engine

from campaign.errors import UsageProblem
from campaign.store import MAX_INTEGER
from campaign.view import pages, snapshot, source, trials

ENGINE = web.AppKey("engine", Engine)
CHECKS = web.AppKey("chain_checks", source.ChainChecks)
REPORTS = web.AppKey("reports", snapshot.Reports)
ALLOW_REMOTE = web.AppKey("allow_remote", bool)
PATIENCE: web.AppKey[float | None] = web.AppKey("report_patience")
STATIC = web.AppKey("static", dict)

STATIC_FILES = {"view.js": "text/javascript", "view.css": "text/css"}
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
        "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

# How long `campaign view` waits for a newer report before a page shows the one it has,
# marked as older (``snapshot.Reports``): a report that builds within it is always
# shown current; one of 100,000 attempts takes about 3 s.
PAGE_PATIENCE_S = 0.5


def build_app(engine: Engine, *, allow_remote: bool = False, report_patience: float | None = None, reports: snapshot.Reports | None = None) -> web.Application:
    """``report_patience``: see ``PAGE_PATIENCE_S`` (None: a page waits for the report
    of the store as it is, as the JSON endpoint always does)."""
    app = web.Application(middlewares=[guard])
    app[ENGINE] = engine
    app[CHECKS] = source.ChainChecks()
    app[REPORTS] = reports or snapshot.Reports()
    app[ALLOW_REMOTE] = allow_remote
    app[PATIENCE] = report_patience
    app[STATIC] = {name: (resources.files("campaign.view") / "static" / name).read_bytes() for name in STATIC_FILES}
    app.add_routes(
        [
            web.get("/", campaigns_page),
            web.get(r"/campaigns/{campaign_id:[0-9]+}", campaign_page),
            web.get("/api/campaigns", campaigns_json),
            web.get(r"/api/campaigns/{campaign_id:[0-9]+}", campaign_json),
            web.get(r"/api/campaigns/{campaign_id:[0-9]+}/status", campaign_status),
            web.get("/static/{name}", static_file),
            # Browsers ask for it unprompted; an empty answer keeps their consoles clean.
            web.get("/favicon.ico", no_content),
        ]
    )
    return app


_HOST = re.compile(r"(?:\[(?P<v6>[0-9a-fA-F:.]+)\]|(?P<name>[0-9A-Za-z.-]+))(?::[0-9]{1,5})?")


def loopback_host(header: str | None) -> bool:
    """Whether a Host header names this machine: ``localhost``, a loopback IPv4 address or a
    bracketed loopback IPv6 one, with an optional port. Parsed here, whole, so nothing a
    URL parser would read another way (``a:b``, ``evil.example#@127.0.0.1``, an
    unbracketed IPv6 address) gets through, or makes the request fail."""
    match = _HOST.fullmatch(header or "")
    if match is None:
        return False
    if match["name"] is not None and match["name"].lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(match["v6"] or match["name"]).is_loopback
    except ValueError:
        return False


@web.middleware
async def guard(request: web.Request, handler: Handler) -> web.StreamResponse:
    if not request.app[ALLOW_REMOTE] and not loopback_host(request.headers.get(hdrs.HOST)):
        response: web.StreamResponse = html_response(pages.error_page(403, "This view answers requests addressed to a loopback name only."), 403)
    else:
        try:
            response = await handler(request)
        except web.HTTPException as exc:
            response = html_response(pages.error_page(exc.status, exc.reason), exc.status)
            if exc.status == 405:
                response.headers["Allow"] = "GET, HEAD"
        except UsageProblem:
            # The only one a page can raise: the store has no such campaign.
            response = html_response(pages.error_page(404, "No such campaign in this store."), 404)
        except Exception as exc:  # noqa: BLE001 - the page must not show exception text
            print(f"campaign view: {request.method} {request.path}: internal error ({exc.__class__.__name__})", file=sys.stderr, flush=True)
            response = html_response(pages.error_page(500, "Internal error; the terminal running `campaign view` names its class."), 500)
    response.headers.update(SECURITY_HEADERS)
    return response


def html_response(body: str, status: int = 200) -> web.Response:
    return web.Response(text=body, status=status, content_type="text/html", charset="utf-8")


def json_response(data: Any) -> web.Response:
    return web.json_response(data, dumps=functools.partial(json.dumps, allow_nan=False))


async def blocking(request: web.Request, fn: Callable[..., Any], *args: Any) -> Any:
    return await asyncio.get_running_loop().run_in_executor(None, fn, request.app[ENGINE], *args)


def _campaign_id(request: web.Request) -> int:
    digits = request.match_info["campaign_id"].lstrip("0")
    # Past 19 digits it names no campaign; past 4,300 int() itself refuses it (a 500).
    if len(digits) > len(str(MAX_INTEGER)) or int(digits or "0") > MAX_INTEGER:
        raise web.HTTPNotFound()
    return int(digits or "0")


# --- handlers ---------------------------------------------------------------------


async def campaigns_page(request: web.Request) -> web.Response:
    snap = await blocking(request, snapshot.list_snapshot, request.app[CHECKS])
    refresh = pages.Refresh("/api/campaigns", snap.fingerprint()) if snap.running else None
    return html_response(pages.list_page(snap.campaigns, snap.verdict, refresh))


async def campaign_page(request: web.Request) -> web.Response:
    cid = _campaign_id(request)
    snap: snapshot.CampaignSnapshot = await blocking(request, snapshot.campaign_snapshot, request.app[CHECKS], cid, request.app[REPORTS], request.app[PATIENCE])
    refresh = None
    if snap.summary.state == "running" or snap.building is not None:
        # A page showing an older report differs from every status answer: it reloads at
        # the next poll, and shows the newer report once that is built.
        fingerprint = snap.summary.fingerprint() + (" (older report)" if snap.building is not None else "")
        refresh = pages.Refresh(f"/api/campaigns/{cid}/status", fingerprint)
    no_report = snapshot.NO_REPORT.get(snap.no_report) if snap.no_report else None
    query = trials.TrialQuery.parse(request.query)
    # Filtering 100,000 trials takes a tenth of a second: not on the loop serving the others.
    render = functools.partial(pages.campaign_page, snap.summary, snap.verdict, snap.report, snap.providers, snap.total_cap_usd, refresh, no_report, query, snap.building)
    return html_response(await asyncio.get_running_loop().run_in_executor(None, render))


async def campaigns_json(request: web.Request) -> web.Response:
    snap = await blocking(request, snapshot.list_snapshot, request.app[CHECKS])
    return json_response(snap.as_json())


async def campaign_json(request: web.Request) -> web.Response:
    snap = await blocking(request, snapshot.campaign_snapshot, request.app[CHECKS], _campaign_id(request), request.app[REPORTS])
    # The whole report, every trial in it (157 MB at 100,000 trials): encoded in a worker thread.
    body = await asyncio.get_running_loop().run_in_executor(None, snap.json_bytes)
    return web.Response(body=body, content_type="application/json")


async def campaign_status(request: web.Request) -> web.Response:
    return json_response(await blocking(request, snapshot.status, _campaign_id(request)))


async def no_content(_request: web.Request) -> web.Response:
    return web.Response(status=204)


async def static_file(request: web.Request) -> web.Response:
    name = request.match_info["name"]
    if name not in STATIC_FILES:
        raise web.HTTPNotFound()
    return web.Response(body=request.app[STATIC][name], content_type=STATIC_FILES[name], charset="utf-8")
