"""What schedlab adds to Streamlit's web server (serve.py mounts it with `st.App`, Streamlit's own way to add routes
and middleware): the route that sets a browser's token cookie, and a check of every websocket's origin.

The cookie: Streamlit cannot set one from Python, so the page sends the ticket its session was handed
(session/tokens.py) to `route_path()`, and the answer sets the token's cookie: HttpOnly (no page reads it, not even
this app's), SameSite=Strict (the cookie is only read by this app's own page: its websocket and this route),
Secure when the request came over HTTPS as uvicorn's trusted proxy says (`X-Forwarded-Proto` from an address in
its --forwarded-allow-ips, 127.0.0.1 by default). Only a request from the app's own origin is answered.

The origin: a browser sends its cookies to every port of a host, so a page on another port of the same host could
open the app's websocket with this browser's token (Streamlit compares the host only). Here a websocket, and the
route, are served only to a page of the very origin the request came to (scheme, host and port), or one the
operator lists in $SCHEDLAB_ALLOWED_ORIGINS (a proxy's public address whose Host it does not pass on). A client
that sends no Origin is no browser (it carries no browser's cookie) and is let through to Streamlit's own checks.
"""

from __future__ import annotations

import os
from urllib.parse import urlsplit

from starlette.concurrency import run_in_threadpool
from starlette.requests import HTTPConnection, Request
from starlette.responses import Response
from starlette.routing import Route
from streamlit import config

from session.classroom import classes

TOKEN_COOKIE = "schedlab_browser"
TOKEN_DAYS = 180
ROUTE = "_schedlab/token"
ORIGINS_ENV = "SCHEDLAB_ALLOWED_ORIGINS"  # e.g. "https://class.example.org,https://class.example.org:8443"
MAX_TICKET_BYTES = 64
DEFAULT_PORTS = {"http": 80, "https": 443}
_mounted = False  # whether this process serves the route (serve.py): `streamlit run app.py` does not


def base_path() -> str:
    """Streamlit's server.baseUrlPath as a path: "/", or "/p1/" (each process behind a path-routing proxy has its
    own, and its own cookie: its own classes and tokens)."""
    base = (config.get_option("server.baseUrlPath") or "").strip("/")
    return f"/{base}/" if base else "/"


def route_path() -> str:
    return base_path() + ROUTE


def origin_of(url: str) -> tuple[str, str, int] | None:
    """(scheme, host, port) of an http(s) origin, the port spelled out; None for anything else."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in DEFAULT_PORTS or not parts.hostname:
        return None
    return parts.scheme, parts.hostname.lower(), port or DEFAULT_PORTS[parts.scheme]


def allowed_origins() -> set[tuple[str, str, int]]:
    return {o for url in os.environ.get(ORIGINS_ENV, "").split(",") if url.strip() and (o := origin_of(url))}


def same_origin(connection: HTTPConnection) -> bool:
    """Whether the request's Origin is the origin it came to (its scheme as uvicorn's trusted proxy says, its Host
    with the port), or one of $SCHEDLAB_ALLOWED_ORIGINS. False without an Origin."""
    origin = connection.headers.get("origin")
    if origin is None:
        return False
    scheme = "https" if connection.url.scheme in ("https", "wss") else "http"
    claimed, here = origin_of(origin), origin_of(f"{scheme}://{connection.headers.get('host', '')}")
    return claimed is not None and (claimed == here or claimed in allowed_origins())


async def set_token_cookie(request: Request) -> Response:
    """POST a ticket: 204 with the token's cookie; 403 from another origin, 410 for a ticket not (or no longer)
    good."""
    if not same_origin(request):
        return Response(status_code=403)
    ticket = (await request.body())[:MAX_TICKET_BYTES].decode(errors="replace")
    token = await run_in_threadpool(classes().tokens.redeem, ticket)  # the store may be Redis: not on the loop
    if token is None:
        return Response(status_code=410)
    reply = Response(status_code=204, headers={"Cache-Control": "no-store"})
    reply.set_cookie(TOKEN_COOKIE, token, max_age=TOKEN_DAYS * 86400, path=base_path(), httponly=True,
                     samesite="strict", secure=request.url.scheme == "https")
    return reply


class WebsocketOrigin:
    """ASGI middleware: a websocket whose Origin is not `same_origin` is refused (HTTP 403) before Streamlit sees
    it; one without an Origin goes on to Streamlit's own checks."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] == "websocket":
            connection = HTTPConnection(scope)
            if "origin" in connection.headers and not same_origin(connection):
                await receive()  # websocket.connect
                await send({"type": "websocket.close", "code": 1008})
                return
        await self.app(scope, receive, send)


def routes() -> list[Route]:
    global _mounted
    _mounted = True
    return [Route(route_path(), set_token_cookie, methods=["POST"])]


def mounted() -> bool:
    """Whether this process serves the route (started by `streamlit run serve.py`)."""
    return _mounted
