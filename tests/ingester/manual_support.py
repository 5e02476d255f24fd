"""A loopback web server for the tests of adding URLs: pages with ETags, redirects, bodies of any size."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from support import LoopbackServer


@dataclass
class Page:
    body: bytes
    content_type: str = "text/html; charset=utf-8"
    etag: str | None = None
    declare_length: bool = True


@dataclass
class Site:
    """What the server answers, and what it was asked (path, If-None-Match, status sent)."""

    pages: dict[str, Page] = field(default_factory=dict)
    redirects: dict[str, str] = field(default_factory=dict)
    requests: list[tuple[str, str | None, int]] = field(default_factory=list)
    hosts: list[str | None] = field(default_factory=list)  # the Host header of each request

    def handler(self) -> type:
        site = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                conditional = self.headers.get("If-None-Match")
                site.hosts.append(self.headers.get("Host"))
                if self.path in site.redirects:
                    site.requests.append((self.path, conditional, 302))
                    self.send_response(302)
                    self.send_header("Location", site.redirects[self.path])
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                page = site.pages.get(self.path)
                if page is None:
                    site.requests.append((self.path, conditional, 404))
                    self.send_error(404)
                    return
                if page.etag is not None and conditional == page.etag:
                    site.requests.append((self.path, conditional, 304))
                    self.send_response(304)
                    self.send_header("ETag", page.etag)
                    self.end_headers()
                    return
                site.requests.append((self.path, conditional, 200))
                self.send_response(200)
                self.send_header("Content-Type", page.content_type)
                if page.etag is not None:
                    self.send_header("ETag", page.etag)
                if page.declare_length:
                    self.send_header("Content-Length", str(len(page.body)))
                self.end_headers()
                try:
                    self.wfile.write(page.body)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        return Handler


def serve_site(site: Site) -> tuple[LoopbackServer, Callable[[str], str]]:
    """The running server, and a function from a path to its URL."""
    server = LoopbackServer(site.handler())
    host, port = server.server.server_address[:2]
    return server, lambda path: f"http://{host}:{port}{path}"
