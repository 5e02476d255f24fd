"""Who may use the served inspector: the names it answers to, its token, and its websocket's origin.

textual-serve has no authentication of its own, so every request passes this
check first (docs/cli.md, "inspect in a browser"):

- without a token, only the names the server answers to are served: loopback
  names and addresses, the bound address and the ``--allow-host`` additions.
  A web site that points its own name at 127.0.0.1 (DNS rebinding) sends its
  own name as ``Host`` and is refused, page, files and websocket alike;
- with a token (required off loopback), any name may be used, and every
  request must carry the token, as ``?token=…`` or as the cookie the page sets
  when it is opened with the token;
- the websocket is refused to a page whose origin is not the address it asks
  (a site the browser happens to visit cannot drive the inspector).
"""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

COOKIE = "haiku_inspect_token"
UNAUTHORIZED = "haiku-rag inspect: open the address printed at start-up, with its ?token=…"
WILDCARDS = ("", "0.0.0.0", "::")


def host_name(host: str | None) -> str | None:
    """The name part of a ``Host`` header (``[::1]:8765`` → ``::1``), lower-cased; None when unreadable."""
    if not host:
        return None
    try:
        name = urlsplit(f"//{host}").hostname
    except ValueError:
        return None
    return name.rstrip(".").lower() if name else None


def _is_loopback(name: str) -> bool:
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name.split("%")[0]).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class Access:
    """The access rule of one served inspector."""

    token: str | None
    bound: str
    allowed_hosts: tuple[str, ...] = ()

    @classmethod
    def of(cls, token: str | None, *, bound: str, allow_hosts: Iterable[str] = ()) -> Access:
        names = tuple(n for n in (host_name(h) or h.strip().lower() for h in allow_hosts) if n)
        return cls(token, bound, names)

    def answers_to(self, host: str | None) -> bool:
        """Whether a request naming ``host`` is served; with a token every name is."""
        if self.token is not None:
            return True
        name = host_name(host)
        if name is None:
            return False
        bound = host_name(self.bound) or self.bound.strip("[]").lower()
        return _is_loopback(name) or (bound not in WILDCARDS and name == bound) or name in self.allowed_hosts

    def has_token(self, given: str) -> bool:
        return self.token is None or hmac.compare_digest(given.encode(), self.token.encode())


def same_origin(origin: str | None, host: str | None) -> bool:
    """A browser always sends ``Origin`` on a websocket; a client that sends none is no web page."""
    if origin is None:
        return True
    try:
        return bool(host) and urlsplit(origin).netloc.lower() == (host or "").lower()
    except ValueError:
        return False


def access_guard(access: Access):  # -> aiohttp middleware
    from aiohttp import web

    @web.middleware
    async def guard(request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]):
        host = request.headers.get("Host")
        if not access.answers_to(host):
            raise web.HTTPForbidden(
                text=f"haiku-rag inspect: this server does not answer to the name {host_name(host) or host!r} "
                "(start it with --allow-host NAME to add one)"
            )
        given = request.query.get("token") or request.cookies.get(COOKIE) or ""
        if not access.has_token(given):
            raise web.HTTPUnauthorized(text=UNAUTHORIZED)
        if request.path == "/ws" and not same_origin(request.headers.get("Origin"), host):
            raise web.HTTPForbidden(text="haiku-rag inspect: the websocket serves pages of this address only")
        response = await handler(request)
        if access.token is not None and request.query.get("token") and isinstance(response, web.Response):
            response.set_cookie(COOKIE, access.token, httponly=True, samesite="Strict")
        return response

    return guard
