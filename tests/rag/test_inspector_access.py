"""Who the served inspector answers (docs/cli.md, "inspect in a browser"): the names it serves
without a token (DNS rebinding refused), the token from a file or the environment, and the page
connecting back to the address it was loaded from.

The server runs as a real subprocess; requests name a ``Host`` and an ``Origin`` as a browser
does, sent to 127.0.0.1 (a browser tricked by DNS rebinding does exactly that).
"""

from __future__ import annotations

import json
import subprocess

import aiohttp
import pytest
from rag_support import HAIKU_RAG
from serve_support import screen_until, serving, two_db_config

from support import cli_env

pytestmark = pytest.mark.slow


@pytest.fixture
def two_db_file(built, tmp_path):
    return two_db_config(built, tmp_path)


def as_named(name: str, port: int, *, origin: bool = False) -> dict[str, str]:
    headers = {"Host": f"{name}:{port}"}
    if origin:
        headers["Origin"] = f"http://{name}:{port}"
    return headers


async def test_without_a_token_a_foreign_host_name_is_refused_on_the_page_files_and_websocket(two_db_file):
    with serving(two_db_file) as served:
        base, port = f"http://127.0.0.1:{served.port}", served.port
        async with aiohttp.ClientSession() as session:
            for path in ("/", "/static/js/textual.js"):
                async with session.get(base + path, headers=as_named("evil.example", port)) as refused:
                    assert refused.status == 403, path
                    assert "does not answer to the name 'evil.example'" in await refused.text()
            with pytest.raises(aiohttp.WSServerHandshakeError) as refused_ws:
                await session.ws_connect(f"{base}/ws", headers=as_named("evil.example", port, origin=True))
            assert refused_ws.value.status == 403
            for name in ("localhost", "127.0.0.1"):  # the loopback names stay served
                async with session.get(base + "/", headers=as_named(name, port)) as page:
                    assert page.status == 200, name


async def test_allow_host_adds_a_name_served_without_a_token(two_db_file):
    with serving(two_db_file, "--allow-host", "inspector.lan") as served:
        base, port = f"http://127.0.0.1:{served.port}", served.port
        async with aiohttp.ClientSession() as session:
            async with session.get(base + "/", headers=as_named("inspector.lan", port)) as page:
                assert page.status == 200
                assert f'data-session-websocket-url="ws://inspector.lan:{port}/ws"' in await page.text()
            async with session.get(base + "/", headers=as_named("other.lan", port)) as refused:
                assert refused.status == 403
            async with session.ws_connect(
                f"{base}/ws?width=100&height=30", headers=as_named("inspector.lan", port, origin=True)
            ) as ws:
                await screen_until(ws, "Photosynthesis")
                await ws.send_str(json.dumps(["stdin", "q"]))


async def test_with_a_token_the_page_connects_back_to_the_address_it_was_loaded_from(two_db_file, tmp_path):
    token_file = tmp_path / "token"
    token_file.write_text("s3cret-token\n")
    with serving(two_db_file, "--host", "0.0.0.0", "--token-file", str(token_file)) as served:
        base, port = f"http://127.0.0.1:{served.port}", served.port
        async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as session:
            # Opened by an address the server was never told of: served, and its websocket points there.
            async with session.get(f"{base}/?token=s3cret-token", headers=as_named("192.0.2.7", port)) as page:
                assert page.status == 200
                assert f'data-session-websocket-url="ws://192.0.2.7:{port}/ws"' in await page.text()
            # The websocket's Origin must equal the Host it asks.
            with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                await session.ws_connect(
                    f"{base}/ws", headers={**as_named("192.0.2.7", port), "Origin": "http://evil.example"}
                )
            assert refused.value.status == 403
            async with session.ws_connect(
                f"{base}/ws?width=100&height=30", headers=as_named("192.0.2.7", port, origin=True)
            ) as ws:
                await screen_until(ws, "Photosynthesis")
                await ws.send_str(json.dumps(["stdin", "q"]))


async def test_a_token_from_a_file_or_the_environment_is_required_and_not_warned_about(two_db_file, tmp_path):
    token_file = tmp_path / "token"
    token_file.write_text("from-the-file\n")
    for options, env, token in (
        (("--token-file", str(token_file)), None, "from-the-file"),
        ((), {"HAIKU_INSPECT_TOKEN": "from-the-env"}, "from-the-env"),
    ):
        with serving(two_db_file, *options, env=env) as served:
            assert not any(line.startswith("Warning:") for line in served.lines)
            assert served.lines[-1].endswith(f":{served.port}/?token={token} (Ctrl+C to stop)")
            async with aiohttp.ClientSession() as session:
                async with session.get(f"http://127.0.0.1:{served.port}/") as refused:
                    assert refused.status == 401
                async with session.get(f"http://127.0.0.1:{served.port}/?token={token}") as page:
                    assert page.status == 200


def test_a_token_given_twice_or_an_empty_token_file_fails_before_serving(two_db_file, tmp_path):
    empty = tmp_path / "empty-token"
    empty.write_text("\n")
    for options, says in (
        (("--token", "a", "--token-file", str(empty)), "Error: give the token once: --token or --token-file, not both"),
        (("--token-file", str(empty)), f"Error: the token file {empty} holds no token"),
    ):
        done = subprocess.run(
            [str(HAIKU_RAG), "--config", str(two_db_file), "inspect", "--serve", *options],
            capture_output=True, text=True, env=cli_env(), timeout=120,
        )
        assert (done.returncode, says in done.stderr, "Serving" in done.stderr) == (1, True, False), done.stderr
