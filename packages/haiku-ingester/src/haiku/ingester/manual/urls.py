"""Fetching a URL for ``add`` (docs/ingester.md, "Adding documents").

httpx with timeouts; at most ``MAX_REDIRECTS`` redirects, each followed here so
that every hop is checked: only ``http``/``https``, and (unless
``ingester.allow_private_urls``) no private, loopback, link-local or otherwise
reserved address among those the host name resolves to, and the request then
goes to the address checked (the name is resolved once per hop, so a DNS
answer that changes between the check and the connection cannot send it
elsewhere; TLS still verifies the certificate against the host name). The body is read up to
the size limit and refused beyond it (a declared ``Content-Length`` over it is
refused before reading). The content type picks the format from the format
table (``haiku-ingester formats``); a generic one (``application/octet-stream``)
falls back on the URL's extension; anything else is refused. A conditional
request (``ETag``/``Last-Modified`` of the last fetch) answered ``304`` reads no body.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

import httpx

from haiku.core.convert.formats import FORMATS, format_of
from haiku.ingester.manual.errors import UrlRefusedError

MAX_REDIRECTS = 5
TIMEOUT = httpx.Timeout(30.0, connect=10.0)
GENERIC_TYPES = {"application/octet-stream", "binary/octet-stream", ""}
REDIRECTS = {301, 302, 303, 307, 308}

# (host, port) -> the addresses the name resolves to; the system resolver unless a caller brings its own.
Resolver = Callable[[str, int], list[str]]


def system_resolver(host: str, port: int) -> list[str]:
    return [str(info[4][0]) for info in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)]


def _extension_by_type() -> dict[str, str]:
    table: dict[str, str] = {}
    for extension, spec in FORMATS.items():
        table.setdefault(spec.content_type, extension)
    table.setdefault("application/xml", ".xml")
    table.setdefault("text/xml", ".xml")
    return table


EXTENSION_BY_TYPE = _extension_by_type()


@dataclass(frozen=True)
class Fetched:
    """A URL's answer: its bytes (None when not modified), the extension they convert as, its validators."""

    url: str
    data: bytes | None
    extension: str
    etag: str | None = None
    last_modified: str | None = None


def is_web_url(argument: str) -> bool:
    return argument.lower().startswith(("http://", "https://"))


def check_scheme(url: str) -> None:
    scheme = urlsplit(url).scheme.lower()
    if scheme not in ("http", "https"):
        raise UrlRefusedError(
            f"{url}: only http:// and https:// URLs are fetched, not {scheme or 'this'}: URLs"
        )


def _refused_address(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return (
        ip.is_private or ip.is_loopback or ip.is_link_local or ip.is_reserved or ip.is_multicast
        or ip.is_unspecified
    )  # fmt: skip


async def check_address(url: str, *, allow_private: bool, resolver: Resolver = system_resolver) -> str | None:
    """The address to connect to for ``url``: every address its host resolves to is checked, and a
    private, loopback or link-local one is refused (unless allowed: then None, and the request resolves
    the name itself)."""
    parts = urlsplit(url)
    host = parts.hostname
    if not host:
        raise UrlRefusedError(f"{url}: the URL names no host")
    if allow_private:
        return None
    port = parts.port or (443 if parts.scheme.lower() == "https" else 80)
    try:
        addresses = await asyncio.to_thread(resolver, host, port)
    except OSError as exc:
        raise UrlRefusedError(f"{url}: the host {host} cannot be resolved ({exc})") from None
    if not addresses:
        raise UrlRefusedError(f"{url}: the host {host} resolves to no address")
    for address in addresses:
        if _refused_address(address):
            raise UrlRefusedError(
                f"{url}: {host} resolves to {address}, a private, loopback or link-local address; "
                "set ingester.allow_private_urls: true to fetch from such addresses"
            )
    return addresses[0]


def pinned_request(
    client: httpx.AsyncClient, url: str, address: str | None, headers: dict[str, str]
) -> httpx.Request:
    """A GET of ``url`` sent to ``address`` (when given) with the URL's host in ``Host`` and in TLS's SNI."""
    if address is None:
        return client.build_request("GET", url, headers=headers)
    target = httpx.URL(url)
    host_header = target.host if target.port is None else f"{target.host}:{target.port}"
    extensions = {"sni_hostname": target.host} if target.scheme == "https" else {}
    return client.build_request(
        "GET",
        target.copy_with(host=address),
        headers={**headers, "Host": host_header},
        extensions=extensions,
    )


def extension_for(url: str, content_type: str | None) -> str:
    """The extension the answer converts as, from its content type (or, when generic, the URL's name)."""
    kind = (content_type or "").split(";", 1)[0].strip().lower()
    extension = EXTENSION_BY_TYPE.get(kind)
    if extension is not None:
        return extension
    name = urlsplit(url).path.rsplit("/", 1)[-1]
    if kind in GENERIC_TYPES and format_of(name) is not None:
        return "." + name.rsplit(".", 1)[-1].lower()
    raise UrlRefusedError(
        f"{url}: the server answered content type {kind or '(none)'}, which the ingester does not convert; "
        "`haiku-ingester formats` lists the content types it takes"
    )


async def fetch(
    url: str,
    *,
    max_bytes: int,
    allow_private: bool,
    etag: str | None = None,
    last_modified: str | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
    resolver: Resolver = system_resolver,
) -> Fetched:
    """Fetch ``url`` under the rules of the module docstring; ``UrlRefusedError`` says why not."""
    headers: dict[str, str] = {}
    if etag:
        headers["If-None-Match"] = etag
    if last_modified:
        headers["If-Modified-Since"] = last_modified
    async with httpx.AsyncClient(timeout=TIMEOUT, follow_redirects=False, transport=transport) as client:
        current = url
        for _hop in range(MAX_REDIRECTS + 1):
            check_scheme(current)
            address = await check_address(current, allow_private=allow_private, resolver=resolver)
            try:
                response = await client.send(pinned_request(client, current, address, headers), stream=True)
            except httpx.HTTPError as exc:
                raise UrlRefusedError(f"{url}: the request failed ({type(exc).__name__}: {exc})") from None
            try:
                if response.status_code in REDIRECTS and "location" in response.headers:
                    current = urljoin(current, response.headers["location"])
                    continue
                return await _answer(url, current, response, max_bytes, etag, last_modified)
            except httpx.HTTPError as exc:
                raise UrlRefusedError(f"{url}: the request failed ({type(exc).__name__}: {exc})") from None
            finally:
                await response.aclose()
    raise UrlRefusedError(f"{url}: more than {MAX_REDIRECTS} redirects; nothing was fetched")


async def _answer(
    url: str,
    current: str,
    response: httpx.Response,
    max_bytes: int,
    etag: str | None,
    last_modified: str | None,
) -> Fetched:
    if response.status_code == 304 and (etag or last_modified):
        return Fetched(url, None, "", etag, last_modified)
    if response.status_code >= 400 or response.status_code < 200:
        raise UrlRefusedError(f"{url}: the server answered HTTP {response.status_code}")
    extension = extension_for(current, response.headers.get("content-type"))
    data = await _read_limited(url, response, max_bytes)
    return Fetched(url, data, extension, response.headers.get("etag"), response.headers.get("last-modified"))


async def _read_limited(url: str, response: httpx.Response, max_bytes: int) -> bytes:
    declared = response.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > max_bytes:
        raise UrlRefusedError(
            f"{url}: the body of {declared} bytes is over the size limit ({max_bytes} bytes)"
        )
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > max_bytes:
            raise UrlRefusedError(
                f"{url}: the body is over the size limit ({max_bytes} bytes); nothing was kept"
            )
        chunks.append(chunk)
    data = b"".join(chunks)
    if not data:
        raise UrlRefusedError(f"{url}: the server answered an empty body")
    return data
