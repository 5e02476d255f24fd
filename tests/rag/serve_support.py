"""Helpers for the served inspector's tests: the server as a real subprocess, its session processes,
and the screen a websocket draws."""

from __future__ import annotations

import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp
from inspector_support import screen_text
from rag_support import HAIKU_RAG, config_data

from support import cli_env, write_config


def two_db_config(built: dict, tmp_path: Path) -> Path:
    return write_config(
        tmp_path / "haiku.rag.yaml",
        config_data(tmp_path / "data", {"papers": str(built["papers"]), "wiki": str(built["wiki"])}),
    )


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclass
class Served:
    port: int
    lines: list[str]
    process: subprocess.Popen
    later: list[str] = field(default_factory=list)

    def session_pids(self) -> list[int]:
        """The inspector processes the server runs now, one per browser session."""
        pids: list[int] = []
        for task in Path(f"/proc/{self.process.pid}/task").iterdir():
            try:
                pids += [int(p) for p in (task / "children").read_text().split()]
            except OSError:
                continue
        return pids


@contextmanager
def serving(config: Path, *options: str, env: dict[str, str] | None = None) -> Iterator[Served]:
    """The server started with ``options``; the lines it printed up to "Serving …" are ``lines``."""
    port = free_port()
    environment = cli_env()
    environment.pop("HAIKU_INSPECT_TOKEN", None)  # a developer's own token stays out
    environment.update(env or {})
    process = subprocess.Popen(
        [str(HAIKU_RAG), "--config", str(config), "inspect", "--serve", "--port", str(port), *options],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=environment,
    )
    served = Served(port, [], process)
    try:
        assert process.stderr is not None
        for line in process.stderr:
            served.lines.append(line.rstrip("\n"))
            if line.startswith("Serving the inspector on "):
                break
        else:
            raise AssertionError(f"the server exited {process.wait()}: {served.lines}")
        stderr = process.stderr

        def keep_reading() -> None:  # whatever else it logs
            for line in stderr:
                served.later.append(line.rstrip("\n"))

        threading.Thread(target=keep_reading, daemon=True).start()
        deadline = time.monotonic() + 30
        while True:  # the line is printed just before the socket is bound
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        yield served
    finally:
        process.terminate()
        process.wait(timeout=30)


async def screen_until(ws: aiohttp.ClientWebSocketResponse, text: str, seconds: float = 90.0) -> str:
    """Read the inspector's output from the websocket until the screen shows ``text``."""
    shown = ""
    deadline = time.monotonic() + seconds
    while text not in shown:
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError(f"{text!r} never arrived; the screen showed: {shown[-600:]}")
        message = await ws.receive(timeout=left)
        if message.type == aiohttp.WSMsgType.BINARY:
            shown += screen_text(message.data)
        elif message.type != aiohttp.WSMsgType.TEXT:
            raise AssertionError(f"the websocket closed ({message.type}) before {text!r} arrived: {shown[-600:]}")
    return shown


def rss_bytes(pid: int) -> int:
    """Resident memory of one process, from /proc."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmRSS for pid {pid}")


def environment_of(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return dict(item.decode(errors="replace").split("=", 1) for item in raw if b"=" in item)


def running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def wait_gone(pid: int, seconds: float) -> float | None:
    """Seconds until ``pid`` has ended, or None when it still runs after ``seconds``."""
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        if not running(pid):
            return time.monotonic() - start
        time.sleep(0.05)
    return None


__all__ = ["environment_of", "free_port", "rss_bytes", "screen_until", "serving", "two_db_config", "wait_gone"]

