"""The daemon's HTTP endpoint: aiohttp's server on the daemon's own event loop (docs/operations.md).

The port is bound before the daemon starts anything (a taken port fails the
start, naming the key) and served once it is ready; the drain stops it first.
Nothing a client does can hold up ingestion: a connection that sends no
request within ``idle_timeout_s`` is closed, request lines and headers are
small, bodies are refused, an answer that takes over ``request_timeout_s`` is
cut off with 503, and connections past ``max_connections`` are answered 503
and closed at once, before any parsing.
"""

from __future__ import annotations

import asyncio
import errno
import hmac
import socket
from collections.abc import Awaitable, Callable

from aiohttp import web

from haiku.core.config.ingester_http import IngesterHttpConfig
from haiku.ingester.errors import HttpEndpointError
from haiku.ingester.logs import get_logger

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
OPEN_PATHS = frozenset({"/health/live"})  # what a load balancer that sends no header may ask
_BUSY = b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"


class _Busy(asyncio.Protocol):
    """A connection over the cap: answered 503 and closed, never parsed."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        if isinstance(transport, asyncio.WriteTransport):
            transport.write(_BUSY)
        transport.close()


def _guard(token: str | None, timeout_s: float):  # -> aiohttp middleware
    @web.middleware
    async def guard(request: web.Request, handler: Handler) -> web.StreamResponse:
        if token is not None and request.path not in OPEN_PATHS:
            given = request.headers.get("Authorization", "")
            if not hmac.compare_digest(given.encode(), f"Bearer {token}".encode()):
                raise web.HTTPUnauthorized(
                    text="haiku-ingester: send the token of ingester.http as 'Authorization: Bearer <token>'"
                )
        try:
            async with asyncio.timeout(timeout_s):
                return await handler(request)
        except TimeoutError:
            raise web.HTTPServiceUnavailable(text="haiku-ingester: the answer took too long") from None

    return guard


class HttpEndpoint:
    """Bind, serve, stop; the routes come from ``haiku.ingester.http.routes``."""

    def __init__(self, settings: IngesterHttpConfig) -> None:
        self.settings = settings
        self.token: str | None = None
        self._sock: socket.socket | None = None
        self._runner: web.AppRunner | None = None
        self._server: asyncio.Server | None = None
        self._accepting = 0  # accepted, not yet counted among the runner's connections
        self.log = get_logger()

    @property
    def address(self) -> tuple[str, int] | None:
        """The bound host and port (the port chosen when ``port`` is 0)."""
        return self._sock.getsockname()[:2] if self._sock is not None else None

    def bind(self) -> None:
        """Read the token and bind the port; ``HttpEndpointError`` naming the key when either fails."""
        settings = self.settings
        try:
            self.token = settings.read_token()
        except ValueError as exc:
            raise HttpEndpointError(str(exc)) from None
        try:
            infos = socket.getaddrinfo(settings.host, settings.port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        except OSError as exc:
            raise HttpEndpointError(f"ingester.http.host {settings.host}: {exc}") from None
        family, kind, proto, _, address = infos[0]
        sock = socket.socket(family, kind, proto)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(address)
        except OSError as exc:
            sock.close()
            if exc.errno == errno.EADDRINUSE:
                raise HttpEndpointError(
                    f"ingester.http.port {settings.port} on {settings.host} is taken by another process; "
                    "choose another port (ingester.http.port) or stop that process"
                ) from None
            raise HttpEndpointError(f"ingester.http {settings.host}:{settings.port}: {exc.strerror or exc}") from None
        sock.setblocking(False)
        self._sock = sock

    async def start(self, routes: list[web.RouteDef]) -> None:
        """Serve ``routes`` on the bound socket, on the running loop."""
        assert self._sock is not None, "bind() first"
        settings = self.settings
        application = web.Application(
            middlewares=[_guard(self.token, settings.request_timeout_s)], client_max_size=1024
        )
        application.add_routes(routes)
        self._runner = web.AppRunner(
            application,
            handle_signals=False,  # the daemon owns SIGTERM, SIGINT and SIGHUP
            access_log=None,
            keepalive_timeout=settings.idle_timeout_s,  # also the deadline of a new connection's first request
            max_line_size=2048,
            max_field_size=4096,
            max_headers=32,
        )
        await self._runner.setup()
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(self._protocol, sock=self._sock, backlog=settings.max_connections)
        host, port = self.address or (settings.host, settings.port)
        self.log.info("http endpoint serving", host=host, port=port, token=self.token is not None)

    def _protocol(self) -> asyncio.BaseProtocol:
        runner = self._runner
        assert runner is not None and runner.server is not None
        if len(runner.server.connections) + self._accepting >= self.settings.max_connections:
            return _Busy()
        # Counted here until the handler has its transport: the loop calls ``connection_made`` soon after
        # this factory returns, so two turns of the loop later it is among the runner's connections.
        self._accepting += 1
        loop = asyncio.get_running_loop()
        loop.call_soon(loop.call_soon, self._accepted)
        return runner.server()

    def _accepted(self) -> None:
        self._accepting -= 1

    async def stop(self) -> None:
        """Stop listening and close every connection (the drain calls it first)."""
        if self._server is not None:
            self._server.close()
            self._server = None
        if self._runner is not None:
            runner, self._runner = self._runner, None
            await runner.cleanup()
        self.close()

    def close(self) -> None:
        """Give the bound port back without having served (a start that failed)."""
        if self._sock is not None:
            self._sock.close()
            self._sock = None
