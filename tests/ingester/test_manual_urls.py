"""Fetching a URL for `haiku-ingester add` (docs/ingester.md, "Adding documents"), against a real loopback server."""

from __future__ import annotations

import httpx
import pytest
from manual_support import Page, Site, serve_site

from haiku.ingester.manual.errors import UrlRefusedError
from haiku.ingester.manual.urls import check_address, fetch, pinned_request

PAGE = b"<html><head><title>Herons</title></head><body><h1>Herons</h1><p>They wait.</p></body></html>"


@pytest.fixture(scope="module")
def running_site():
    site = Site(
        pages={
            "/herons.html": Page(PAGE, etag='"v1"'),
            "/big.txt": Page(b"x" * 5000, "text/plain", declare_length=False),
            "/declared.txt": Page(b"y" * 5000, "text/plain"),
            "/setup.exe": Page(b"MZ\x90\x00", "application/x-msdownload"),
            "/report.pdf": Page(b"%PDF-1.4 tiny", "application/octet-stream"),
        },
        redirects={"/loop": "/loop", "/moved": "/herons.html", "/to-file": "file:///etc/passwd"},
    )
    server, url = serve_site(site)
    site.url = url  # type: ignore[attr-defined]
    yield site
    server.close()


@pytest.fixture
def site(running_site):
    running_site.requests.clear()
    running_site.hosts.clear()
    return running_site


async def test_a_page_is_fetched_with_its_etag_and_converted_as_its_content_type_says(site):
    answer = await fetch(site.url("/herons.html"), max_bytes=10_000, allow_private=True)
    assert (answer.data, answer.extension, answer.etag) == (PAGE, ".html", '"v1"')


async def test_a_conditional_request_for_an_unchanged_page_reads_no_body(site):
    answer = await fetch(site.url("/herons.html"), max_bytes=10_000, allow_private=True, etag='"v1"')
    assert answer.data is None
    assert site.requests == [("/herons.html", '"v1"', 304)]


async def test_a_redirect_is_followed_and_a_redirect_loop_is_refused(site):
    assert (await fetch(site.url("/moved"), max_bytes=10_000, allow_private=True)).data == PAGE
    with pytest.raises(UrlRefusedError, match="more than 5 redirects"):
        await fetch(site.url("/loop"), max_bytes=10_000, allow_private=True)
    assert sum(1 for path, _, _ in site.requests if path == "/loop") == 6


async def test_a_redirect_to_another_scheme_is_refused(site):
    with pytest.raises(UrlRefusedError, match="only http:// and https://"):
        await fetch(site.url("/to-file"), max_bytes=10_000, allow_private=True)


@pytest.mark.parametrize("path", ["/big.txt", "/declared.txt"])
async def test_a_body_over_the_size_limit_is_refused(site, path):
    with pytest.raises(UrlRefusedError, match="over the size limit"):
        await fetch(site.url(path), max_bytes=1000, allow_private=True)


async def test_a_content_type_the_ingester_does_not_convert_is_refused(site):
    with pytest.raises(UrlRefusedError, match="application/x-msdownload"):
        await fetch(site.url("/setup.exe"), max_bytes=10_000, allow_private=True)


async def test_a_generic_content_type_falls_back_on_the_urls_extension(site):
    assert (await fetch(site.url("/report.pdf"), max_bytes=10_000, allow_private=True)).extension == ".pdf"


async def test_a_loopback_address_is_refused_before_any_request_unless_allowed(site):
    with pytest.raises(UrlRefusedError, match="allow_private_urls"):
        await fetch(site.url("/herons.html"), max_bytes=10_000, allow_private=False)
    assert site.requests == []


@pytest.mark.parametrize(
    "url",
    [
        "http://10.1.2.3/a.html",
        "http://169.254.169.254/latest",
        "http://[::1]:8080/",
        "http://[::ffff:127.0.0.1]/",
    ],
)
async def test_private_link_local_and_loopback_addresses_are_refused(url):
    # The same check runs on the first request and on every redirect (``fetch`` calls it per hop).
    with pytest.raises(UrlRefusedError, match="private, loopback or link-local"):
        await check_address(url, allow_private=False)


async def test_other_schemes_are_refused():
    with pytest.raises(UrlRefusedError, match="ftp"):
        await fetch("ftp://example.org/file.txt", max_bytes=10, allow_private=False)


async def test_a_pinned_request_reaches_the_checked_address_and_names_the_host(site):
    # The request goes to the address that was checked; the server still sees the URL's host name.
    port = site.url("/").rsplit(":", 1)[1].split("/", 1)[0]
    async with httpx.AsyncClient() as client:
        request = pinned_request(client, f"http://herons.example:{port}/herons.html", "127.0.0.1", {})
        response = await client.send(request)
    assert response.content == PAGE
    assert site.hosts == [f"herons.example:{port}"]


class Rebinding:
    """A name server that answers a public address first and a loopback one afterwards: the DNS
    rebinding attack. Public DNS cannot run here, so the resolver and the far side of the connection
    are stand-ins (httpx's MockTransport records where the request was sent)."""

    def __init__(self, answers: dict[str, list[list[str]]]) -> None:
        self.answers = answers
        self.asked: list[str] = []

    def __call__(self, host: str, port: int) -> list[str]:
        self.asked.append(host)
        queue = self.answers[host]
        return queue.pop(0) if len(queue) > 1 else queue[0]


async def test_a_host_is_resolved_once_per_hop_and_the_request_goes_to_the_address_checked():
    sent: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(200, headers={"content-type": "text/html"}, content=PAGE)

    resolver = Rebinding({"herons.example": [["93.184.216.34"], ["127.0.0.1"]]})
    fetched = await fetch(
        "https://herons.example/birds.html",
        max_bytes=10_000,
        allow_private=False,
        transport=httpx.MockTransport(answer),
        resolver=resolver,
    )
    assert fetched.data == PAGE
    assert resolver.asked == ["herons.example"]
    (request,) = sent
    assert request.url.host == "93.184.216.34"
    assert request.headers["Host"] == "herons.example"
    assert request.extensions["sni_hostname"] == "herons.example"  # TLS verifies the certificate by name


async def test_a_redirect_to_a_host_resolving_privately_is_refused_before_it_is_requested():
    sent: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(302, headers={"location": "http://inside.example/admin"})

    resolver = Rebinding({"herons.example": [["93.184.216.34"]], "inside.example": [["10.0.0.7"]]})
    with pytest.raises(UrlRefusedError, match=r"inside\.example resolves to 10\.0\.0\.7"):
        await fetch(
            "http://herons.example/",
            max_bytes=10_000,
            allow_private=False,
            transport=httpx.MockTransport(answer),
            resolver=resolver,
        )
    assert [r.url.host for r in sent] == ["93.184.216.34"]
