"""The inspector in a web browser: textual-serve's page and websocket behind an access check.

textual-serve runs one inspector process per browser connection and has no
authentication of its own, so its handlers are mounted here behind a guard
(docs/cli.md, "inspect in a browser"):

- with a token, every request must carry it, as ``?token=…`` or as the cookie
  the page sets when it is opened with the token (the page's own websocket and
  static files then carry the cookie);
- the websocket is refused to a page of another origin (a site the browser
  happens to visit cannot drive the inspector on this machine).
"""

from __future__ import annotations

import hmac
import socket
from collections.abc import Awaitable, Callable
from urllib.parse import urlsplit

COOKIE = "haiku_inspect_token"
UNAUTHORIZED = "haiku-rag inspect: open the address printed at start-up, with its ?token=…"


def public_address(host: str, port: int) -> str:
    """The address printed and written into the page: the bound host, or this machine's name for a wildcard."""
    shown = socket.gethostname() if host in ("", "0.0.0.0", "::") else host
    if ":" in shown:
        shown = f"[{shown}]"
    return f"http://{shown}:{port}"


def _same_origin(origin: str | None, host: str) -> bool:
    return origin is None or urlsplit(origin).netloc == host


def access_guard(token: str | None):  # -> aiohttp middleware
    from aiohttp import web

    @web.middleware
    async def guard(request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]):
        if request.path == "/ws" and not _same_origin(request.headers.get("Origin"), request.host):
            raise web.HTTPForbidden(text="haiku-rag inspect: the websocket serves pages of this address only")
        if token is None:
            return await handler(request)
        given = request.query.get("token") or request.cookies.get(COOKIE) or ""
        if not hmac.compare_digest(given.encode(), token.encode()):
            raise web.HTTPUnauthorized(text=UNAUTHORIZED)
        response = await handler(request)
        if request.query.get("token") and isinstance(response, web.Response):
            response.set_cookie(COOKIE, token, httponly=True, samesite="Strict")
        return response

    return guard


def make_app(command: str, *, host: str, port: int, token: str | None):  # -> aiohttp web.Application
    """textual-serve's routes (page, websocket, downloads, static files) for ``command``, guarded."""
    import aiohttp_jinja2
    import jinja2
    from aiohttp import web
    from textual_serve.server import Server

    server = Server(command, host=host, port=port, title="haiku-rag inspect", public_url=public_address(host, port))
    app = web.Application(middlewares=[access_guard(token)])
    aiohttp_jinja2.setup(app, loader=jinja2.FileSystemLoader(server.templates_path))
    app.add_routes([
        web.get("/", server.handle_index, name="index"),
        web.get("/ws", server.handle_websocket, name="websocket"),
        web.get("/download/{key}", server.handle_download, name="download"),
        web.static("/static", server.statics_path, name="static"),
    ])
    return app


def serve_inspector(command: str, *, host: str, port: int, token: str | None, log: Callable[[str], None]) -> None:
    """Serve until interrupted; each browser connection runs ``command`` (the inspector, read-only)."""
    from aiohttp import web

    address = public_address(host, port) + "/"
    if token is not None:
        address += f"?token={token}"
    log(f"Serving the inspector on {address} (Ctrl+C to stop)")
    web.run_app(make_app(command, host=host, port=port, token=token), host=host, port=port, print=None)
