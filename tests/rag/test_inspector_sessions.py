"""The served inspector's sessions are bounded (docs/cli.md, "inspect in a browser"): the terminal
size a browser asks for is clamped, a session's process ends within 5 s of its connection closing,
and sessions past --max-sessions are refused with a message on the screen.

Real server subprocess, real websocket clients; the session processes are found and measured
through /proc.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal

import aiohttp
import pytest
from serve_support import (
    environment_of,
    rss_bytes,
    screen_until,
    serving,
    two_db_config,
    wait_gone,
)

pytestmark = pytest.mark.slow


@pytest.fixture
def two_db_file(built, tmp_path):
    return two_db_config(built, tmp_path)


async def test_a_huge_terminal_is_clamped_and_its_process_stays_under_300_mb(two_db_file):
    with serving(two_db_file) as served:
        async with aiohttp.ClientSession() as session:
            async with session.ws_connect(f"http://127.0.0.1:{served.port}/ws?width=20000&height=20000") as ws:
                await screen_until(ws, "Photosynthesis")
                [pid] = served.session_pids()
                env = environment_of(pid)
                assert (env["COLUMNS"], env["ROWS"]) == ("500", "200")
                await ws.send_str(json.dumps(["resize", {"width": 20000, "height": 20000}]))
                await ws.send_str(json.dumps(["stdin", "\x1b[B"]))  # wiki: a full repaint at the size served
                await screen_until(ws, "Machine learning")
                await asyncio.sleep(1)
                assert rss_bytes(pid) < 300 * 1024**2


async def test_a_session_process_that_cannot_act_on_the_quit_ends_within_5_s_of_its_connection_closing(
    two_db_file,
):
    # A process that cannot read the request to quit (in the field: blocked writing a huge screen
    # to its pipe; here: stopped, which is deterministic) is ended all the same.
    with serving(two_db_file) as served:
        async with aiohttp.ClientSession() as session:
            ws = await session.ws_connect(f"http://127.0.0.1:{served.port}/ws?width=3000&height=3000", max_msg_size=0)
            await screen_until(ws, "Photosynthesis")
            [pid] = served.session_pids()
            os.kill(pid, signal.SIGSTOP)
            try:
                await ws.close()
                ended = await asyncio.to_thread(wait_gone, pid, 15)
            finally:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGCONT)
        assert ended is not None and ended < 5, "the session's process still runs 15 s after its connection closed"


async def test_a_session_past_max_sessions_is_refused_on_its_screen_until_one_closes(two_db_file):
    with serving(two_db_file, "--max-sessions", "1") as served:
        url = f"http://127.0.0.1:{served.port}/ws?width=100&height=30"
        async with aiohttp.ClientSession() as session:
            first = await session.ws_connect(url)
            await screen_until(first, "Photosynthesis")
            async with session.ws_connect(url) as second:
                refusal = await second.receive(timeout=30)
                assert refusal.type == aiohttp.WSMsgType.BINARY
                assert b"1 session(s) already open (--max-sessions 1); close one, then reload this page" in refusal.data
                closed = await second.receive(timeout=30)
                assert closed.type == aiohttp.WSMsgType.CLOSE and closed.data == 1013
            [pid] = served.session_pids()
            await first.close()
            assert wait_gone(pid, 10) is not None
            await asyncio.sleep(0.5)  # the server counts the session out once its process is reaped
            async with session.ws_connect(url) as third:  # the first has closed: room again
                await screen_until(third, "Photosynthesis")
                await third.send_str(json.dumps(["stdin", "q"]))
