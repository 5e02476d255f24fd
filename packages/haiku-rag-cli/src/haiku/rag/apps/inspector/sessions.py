"""One inspector process per browser connection, bounded (docs/cli.md, "inspect in a browser").

This speaks textual-serve's protocol with the inspector process (its web
driver writes a ``__GANGLION__`` line, then packets: a type byte ``D`` data,
``M`` meta or ``P`` packed, a 4-byte length and the payload; it reads the
same framing on stdin) in place of textual-serve's ``AppService``, because the
served inspector has to hold bounds that one does not:

- the terminal size a browser asks for is clamped to ``MAX_COLUMNS`` x
  ``MAX_ROWS`` cells (a screen of 20000 x 20000 cells grew one process to
  gigabytes), on connecting and on every resize;
- at most ``max_sessions`` run at once; one more connection is told so on its
  screen and closed (code 1013, try again later);
- once the connection closes the process is asked to quit, its output is
  drained meanwhile (so a process blocked writing to its pipe can read the
  request), and it is killed with its process group if it has not ended
  within ``QUIT_GRACE_S``: it is gone within 5 s whatever it was doing.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
from collections.abc import Callable, Sequence
from importlib.metadata import version
from typing import Any

MAX_COLUMNS = 500
MAX_ROWS = 200
QUIT_GRACE_S = 2.0
KILL_GRACE_S = 1.0
# A screen of MAX_COLUMNS x MAX_ROWS cells in truecolor is well under this; more is not a screen.
MAX_PACKET = 16 * 1024 * 1024
BUSY_CLOSE_CODE = 1013


def clamp_size(width: Any, height: Any) -> tuple[int, int]:
    """The terminal size served for what a browser asked: whole cells, 1 to MAX_COLUMNS x MAX_ROWS."""

    def cells(value: Any, default: int, most: int) -> int:
        try:
            number = int(value)
        except (TypeError, ValueError):
            number = default
        return max(1, min(number, most))

    return cells(width, 80, MAX_COLUMNS), cells(height, 24, MAX_ROWS)


def _packet(kind: bytes, payload: bytes) -> bytes:
    return kind + len(payload).to_bytes(4, "big") + payload


def _environment(width: int, height: int) -> dict[str, str]:
    environment = dict(os.environ)
    environment.update({
        "TEXTUAL_DRIVER": "textual.drivers.web_driver:WebDriver",
        "TEXTUAL_FPS": "60",
        "TEXTUAL_COLOR_SYSTEM": "truecolor",
        "TERM_PROGRAM": "textual",
        "TERM_PROGRAM_VERSION": version("textual-serve"),
        "COLUMNS": str(width),
        "ROWS": str(height),
    })
    return environment


class Session:
    """One inspector process and the websocket it draws on."""

    def __init__(self, process: asyncio.subprocess.Process, websocket: Any) -> None:
        self.process = process
        self.websocket = websocket
        self.connected = True

    @classmethod
    async def start(cls, argv: Sequence[str], websocket: Any, width: int, height: int) -> Session:
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            env=_environment(width, height),
            start_new_session=True,  # its own group: ended with everything it started
        )
        return cls(process, websocket)

    async def send_meta(self, meta: dict[str, Any]) -> None:
        stdin = self.process.stdin
        assert stdin is not None
        if stdin.is_closing():
            return
        with contextlib.suppress(ConnectionError, RuntimeError):
            stdin.write(_packet(b"M", json.dumps(meta).encode()))
            await stdin.drain()

    async def pump_screen(self) -> None:
        """The process's output to the browser; drained (and dropped) once the browser has gone."""
        stdout = self.process.stdout
        assert stdout is not None
        try:
            for _ in range(10):  # the web driver's prelude comes first
                line = await stdout.readline()
                if not line or line == b"__GANGLION__\n":
                    break
            while True:
                kind = await stdout.readexactly(1)
                size = int.from_bytes(await stdout.readexactly(4), "big")
                if size > MAX_PACKET:
                    return
                payload = await stdout.readexactly(size)
                if self.connected:
                    await self._forward(kind, payload)
        except (asyncio.IncompleteReadError, ConnectionError):
            return

    async def _forward(self, kind: bytes, payload: bytes) -> None:
        try:
            if kind == b"D":
                await self.websocket.send_bytes(payload)
            elif kind == b"M":
                meta = json.loads(payload)
                if meta.get("type") == "exit":
                    await self.websocket.close()
                elif meta.get("type") == "open_url":
                    await self.websocket.send_str(
                        json.dumps(["open_url", {"url": meta.get("url"), "new_tab": meta.get("new_tab")}])
                    )
        except (ConnectionError, RuntimeError, ValueError):
            self.connected = False  # the browser has gone: keep draining so the process never blocks

    async def take_input(self) -> None:
        """The browser's messages to the process, until the connection closes."""
        from aiohttp import WSMsgType

        stdin = self.process.stdin
        assert stdin is not None
        async for message in self.websocket:
            if message.type != WSMsgType.TEXT:
                continue
            try:
                kind, data = json.loads(message.data)[:2]
            except (ValueError, TypeError):
                continue
            if kind == "stdin" and isinstance(data, str):
                with contextlib.suppress(ConnectionError, RuntimeError):
                    stdin.write(_packet(b"D", data.encode()))
                    await stdin.drain()
            elif kind == "resize" and isinstance(data, dict):
                width, height = clamp_size(data.get("width"), data.get("height"))
                await self.send_meta({"type": "resize", "width": width, "height": height})
            elif kind == "ping":
                await self.websocket.send_json(["pong", data])
            elif kind in ("blur", "focus"):
                await self.send_meta({"type": kind})

    async def end(self, screen: asyncio.Task[None]) -> None:
        """Ask the process to quit; kill its group when it has not ended in time."""
        self.connected = False
        try:
            await asyncio.wait_for(self._quit(), QUIT_GRACE_S)
        except TimeoutError:
            self.kill(signal.SIGTERM)
            try:
                await asyncio.wait_for(self.process.wait(), KILL_GRACE_S)
            except TimeoutError:
                self.kill(signal.SIGKILL)
                await self.process.wait()
        finally:
            screen.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await screen

    async def _quit(self) -> None:
        await self.send_meta({"type": "quit"})
        await self.process.wait()

    def kill(self, sig: int = signal.SIGKILL) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, sig)


class Sessions:
    """The served inspector's websocket handler: one bounded ``Session`` per connection."""

    def __init__(self, argv: Sequence[str], *, max_sessions: int, log: Callable[[str], None]) -> None:
        self.argv = list(argv)
        self.max_sessions = max_sessions
        self.log = log
        self.live: set[Session] = set()
        self.starting = 0

    def refusal(self) -> str:
        return (
            f"haiku-rag inspect: {self.max_sessions} session(s) already open (--max-sessions "
            f"{self.max_sessions}); close one, then reload this page"
        )

    async def handle(self, request: Any) -> Any:
        from aiohttp import web

        websocket = web.WebSocketResponse(heartbeat=15)
        width, height = clamp_size(request.query.get("width"), request.query.get("height"))
        await websocket.prepare(request)
        if len(self.live) + self.starting >= self.max_sessions:
            self.log(f"Refused a browser session: {self.max_sessions} already open (--max-sessions)")
            with contextlib.suppress(ConnectionError, RuntimeError):
                await websocket.send_bytes(f"\r\n{self.refusal()}\r\n".encode())
                await websocket.close(code=BUSY_CLOSE_CODE, message=b"too many inspector sessions")
            return websocket
        self.starting += 1
        try:
            session = await Session.start(self.argv, websocket, width, height)
        finally:
            self.starting -= 1
        self.live.add(session)
        screen = asyncio.create_task(session.pump_screen())
        try:
            await session.take_input()
        finally:
            try:
                await session.end(screen)
            finally:
                if session.process.returncode is None:
                    session.kill()  # cancelled while ending (the server stopping): no process outlives it
                self.live.discard(session)
        return websocket

    async def close_all(self, _app: Any = None) -> None:
        """On the server's shutdown: every session's process group, killed."""
        for session in list(self.live):
            session.kill()
