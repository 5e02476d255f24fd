"""`haiku-rag inspect --serve`: the inspector served to a browser by textual-serve (docs/cli.md).

The server runs as a real subprocess; the tests load its page over HTTP and
drive the inspector through its websocket as the page's script does: keys go
in as ``["stdin", …]`` messages, the screen comes back as terminal output.
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

DOWN = "\x1b[B"


@pytest.fixture
def two_db_file(built, tmp_path):
    return two_db_config(built, tmp_path)


async def test_serve_on_loopback_serves_the_page_and_its_websocket_drives_the_inspector(two_db_file):
    with serving(two_db_file) as served:
        port, lines = served.port, served.lines
        assert lines[-1] == f"Serving the inspector on http://127.0.0.1:{port}/ (Ctrl+C to stop)"
        async with aiohttp.ClientSession() as session:
            async with session.get(f"http://127.0.0.1:{port}/") as page:
                assert page.status == 200
                html = await page.text()
            assert f'data-session-websocket-url="ws://127.0.0.1:{port}/ws"' in html
            async with session.ws_connect(f"http://127.0.0.1:{port}/ws?width=140&height=40") as ws:
                await screen_until(ws, "Photosynthesis")  # papers, the first database, is open
                await ws.send_str(json.dumps(["stdin", DOWN]))  # down the databases pane, to wiki
                await screen_until(ws, "Machine learning")
                await ws.send_str(json.dumps(["stdin", "q"]))


async def test_serve_off_loopback_warns_and_wants_the_printed_token(two_db_file):
    with serving(two_db_file, "--host", "0.0.0.0") as served:
        port, lines = served.port, served.lines
        token = next(line for line in lines if line.startswith("Access token (generated): ")).split(": ")[1]
        assert (
            "Warning: --host 0.0.0.0 is not a loopback address: anyone who can reach it and has the token can "
            "read every document of papers, wiki"
        ) in lines
        assert lines[-1].endswith(f":{port}/?token={token} (Ctrl+C to stop)")
        base = f"http://127.0.0.1:{port}"
        # A browser keeps cookies of an address given by IP; aiohttp's jar does so when told to.
        async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as session:
            for path in ("/", "/ws", "/static/js/textual.js", f"/?token={token}x"):
                async with session.get(base + path) as refused:
                    assert refused.status == 401, path
            async with session.get(f"{base}/?token={token}") as page:
                assert page.status == 200
                assert page.cookies["haiku_inspect_token"].value == token
            # The page's own requests carry the cookie it set, as a browser's do.
            async with session.ws_connect(f"{base}/ws?width=140&height=40") as ws:
                await screen_until(ws, "Photosynthesis")
                await ws.send_str(json.dumps(["stdin", "q"]))


async def test_the_websocket_refuses_a_page_of_another_origin(two_db_file):
    with serving(two_db_file) as served:
        port = served.port
        async with aiohttp.ClientSession() as session:
            with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                await session.ws_connect(f"http://127.0.0.1:{port}/ws", headers={"Origin": "http://elsewhere.example"})
            assert refused.value.status == 403
            async with session.ws_connect(
                f"http://127.0.0.1:{port}/ws?width=100&height=30", headers={"Origin": f"http://127.0.0.1:{port}"}
            ) as ws:
                await screen_until(ws, "Photosynthesis")
                await ws.send_str(json.dumps(["stdin", "q"]))


def test_serve_with_an_unknown_database_fails_before_serving(two_db_file):
    done = subprocess.run(
        [str(HAIKU_RAG), "--config", str(two_db_file), "--db-name", "ghost", "inspect", "--serve"],
        capture_output=True, text=True, env=cli_env(), timeout=120,
    )
    assert done.returncode == 1
    assert done.stderr.startswith("Error: ") and "ghost" in done.stderr
    assert "Serving" not in done.stderr


async def test_a_token_given_on_loopback_is_required_there_too_and_warned_about_as_seen_in_ps(two_db_file):
    with serving(two_db_file, "--token", "correct-horse") as served:
        port, lines = served.port, served.lines
        assert lines[:-1] == [
            "Warning: --token shows in `ps` to every user of this machine; use --token-file or HAIKU_INSPECT_TOKEN"
        ]
        assert lines[-1] == f"Serving the inspector on http://127.0.0.1:{port}/?token=correct-horse (Ctrl+C to stop)"
        async with aiohttp.ClientSession() as session:
            async with session.get(f"http://127.0.0.1:{port}/") as refused:
                assert refused.status == 401
            async with session.get(f"http://127.0.0.1:{port}/?token=correct-horse") as page:
                assert page.status == 200
