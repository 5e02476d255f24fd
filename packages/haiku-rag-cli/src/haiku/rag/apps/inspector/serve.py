"""The inspector in a web browser: textual-serve's page and files, haiku's sessions, behind an access check.

textual-serve draws the page and ships its script; haiku serves the page
itself (so it connects back to the address the browser loaded it from, by
whatever name or address that was), runs the sessions (``sessions.py``: one
bounded inspector process per connection) and checks every request first
(``access.py``); see docs/cli.md, "inspect in a browser".
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from haiku.rag.apps.inspector.access import WILDCARDS, Access, access_guard
from haiku.rag.apps.inspector.sessions import Sessions

TITLE = "haiku-rag inspect"


def public_address(host: str, port: int) -> str:
    """The address printed at start-up: the bound host, or this machine's name for a wildcard."""
    shown = socket.gethostname() if host in WILDCARDS else host
    if ":" in shown:
        shown = f"[{shown}]"
    return f"http://{shown}:{port}"


def _font_size(value: str | None) -> int:
    try:
        return max(6, min(int(value or 16), 64))
    except ValueError:
        return 16


def page_context(request: Any) -> dict[str, Any]:
    """The page's template values: its websocket is the address the page was loaded from."""
    scheme = "wss" if request.scheme == "https" else "ws"
    return {
        "font_size": _font_size(request.query.get("fontsize")),
        "app_websocket_url": f"{scheme}://{request.host}/ws",
        "config": {"static": {"url": "/static/"}},
        "application": {"name": TITLE},
    }


def make_app(argv: Sequence[str], access: Access, *, max_sessions: int, log: Callable[[str], None]):
    """textual-serve's page and static files, haiku's bounded sessions, every route guarded by ``access``."""
    import aiohttp_jinja2
    import jinja2
    from aiohttp import web
    from textual_serve.server import Server

    files = Server("", title=TITLE)  # only where textual-serve keeps its page and its files
    templates, statics = files.templates_path, files.statics_path
    sessions = Sessions(argv, max_sessions=max_sessions, log=log)

    async def index(request: web.Request) -> web.StreamResponse:
        return aiohttp_jinja2.render_template("app_index.html", request, page_context(request))

    app = web.Application(middlewares=[access_guard(access)])
    aiohttp_jinja2.setup(app, loader=jinja2.FileSystemLoader(templates))
    app.add_routes([
        web.get("/", index, name="index"),
        web.get("/ws", sessions.handle, name="websocket"),
        web.static("/static", statics, name="static"),
    ])
    app.on_shutdown.append(sessions.close_all)
    return app


def serve_inspector(
    argv: Sequence[str],
    *,
    host: str,
    port: int,
    token: str | None,
    allow_hosts: Iterable[str] = (),
    max_sessions: int = 4,
    log: Callable[[str], None],
) -> None:
    """Serve until interrupted; each browser connection runs ``argv`` (the inspector, read-only)."""
    from aiohttp import web

    access = Access.of(token, bound=host, allow_hosts=allow_hosts)
    address = public_address(host, port) + "/"
    if token is not None:
        address += f"?token={token}"
    log(f"Serving the inspector on {address} (Ctrl+C to stop)")
    app = make_app(argv, access, max_sessions=max_sessions, log=log)
    web.run_app(app, host=host, port=port, print=None)
