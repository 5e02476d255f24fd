"""Fetching a URL for ``add`` (docs/ingester.md, "Adding documents").

httpx with timeouts; at most ``MAX_REDIRECTS`` redirects, each followed here so
that every hop is checked: only ``http``/``https``, and (unless
``ingester.allow_private_urls``) no private, loopback, link-local or otherwise
reserved address among those the host name resolves to. The body is read up to
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
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

import httpx

from haiku.core.convert.formats import FORMATS, format_of
from haiku.ingester.manual.errors import UrlRefusedError

MAX_REDIRECTS = 5
TIMEOUT = httpx.Timeout(30.0, connect=10.0)
GENERIC_TYPES = {"application/octet-stream", "binary/octet-stream", ""}
REDIRECTS = {301, 302, 303, 307, 308}


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


async def check_address(url: str, *, allow_private: bool) -> None:
    """Refuse a host that resolves to a private, loopback or link-local address (unless allowed)."""
    parts = urlsplit(url)
    host = parts.hostname
    if not host:
        raise UrlRefusedError(f"{url}: the URL names no host")
    if allow_private:
        return
    port = parts.port or (443 if parts.scheme.lower() == "https" else 80)
    try:
        infos = await asyncio.to_thread(socket.getaddrinfo, host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise UrlRefusedError(f"{url}: the host {host} cannot be resolved ({exc})") from None
    for info in infos:
        address = str(info[4][0])
        if _refused_address(address):
            raise UrlRefusedError(
                f"{url}: {host} resolves to {address}, a private, loopback or link-local address; "
                "set ingester.allow_private_urls: true to fetch from such addresses"
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
            await check_address(current, allow_private=allow_private)
            try:
                async with client.stream("GET", current, headers=headers) as response:
                    if response.status_code in REDIRECTS and "location" in response.headers:
                        current = urljoin(current, response.headers["location"])
                        continue
                    if response.status_code == 304 and (etag or last_modified):
                        return Fetched(url, None, "", etag, last_modified)
                    if response.status_code >= 400 or response.status_code < 200:
                        raise UrlRefusedError(f"{url}: the server answered HTTP {response.status_code}")
                    extension = extension_for(current, response.headers.get("content-type"))
                    data = await _read_limited(url, response, max_bytes)
                    return Fetched(
                        url,
                        data,
                        extension,
                        response.headers.get("etag"),
                        response.headers.get("last-modified"),
                    )
            except httpx.HTTPError as exc:
                raise UrlRefusedError(f"{url}: the request failed ({type(exc).__name__}: {exc})") from None
    raise UrlRefusedError(f"{url}: more than {MAX_REDIRECTS} redirects; nothing was fetched")


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
