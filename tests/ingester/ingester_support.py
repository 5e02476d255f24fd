"""Helpers for the ingester's tests: configs on disk, the CLI as a subprocess, database snapshots."""

from __future__ import annotations

import asyncio
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from support import cli_env, run_main_in_process, write_config

_SCRIPT = Path(sys.executable).parent / "haiku-ingester"
# The installed console script, as an operator runs it.
CLI = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "haiku.ingester.cli"]


def write_ingester_config(
    path: Path,
    *,
    data_dir: Path,
    databases: dict[str, Path | str],
    ingested: dict[str, list[dict[str, Any]]],
    workers: dict[str, Any] | None = None,
    **sections: Any,
) -> Path:
    """A config file with fast, test-sized worker settings (one conversion worker, quick retries)."""
    worker_settings = {
        "worker_count": 1,
        "lease_ttl_s": 30,
        "heartbeat_interval_s": 2,
        "reaper_interval_s": 5,
        "shutdown_grace_s": 20,
        "retry": {"max_attempts": 2, "base_delay_s": 0.1, "max_delay_s": 0.2, "jitter": 0.1},
    }
    worker_settings.update(workers or {})
    data: dict[str, Any] = {
        "storage": {"data_dir": str(data_dir)},
        "lancedb": {"databases": {name: str(loc) for name, loc in databases.items()}},
        "ingester": {
            "databases": {name: {"sources": sources} for name, sources in ingested.items()},
            "workers": worker_settings,
        },
    }
    data.update(sections)
    return write_config(path, data)


def fs_source(root: Path, **options: Any) -> dict[str, Any]:
    return {"type": "fs", "root": str(root), **options}


@dataclass
class CliResult:
    returncode: int
    stdout: str
    stderr: str
    seconds: float


def run_cli(args: list[str], *, config: Path | None = None, timeout: float = 180, **env: str) -> CliResult:
    cmd = [*CLI, *(["--config", str(config)] if config else []), "--log-format", "json", *args]
    started = time.monotonic()
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=cli_env(**env))
    return CliResult(done.returncode, done.stdout, done.stderr, time.monotonic() - started)


def invoke(args: list[str], *, config: Path | None = None, timeout: float = 180, **env: str) -> CliResult:
    """``run_cli`` in this process (``support.run_main_in_process``), for tests of what a command
    prints and its exit status before any work starts; runs, daemons and signals keep ``run_cli``.
    ``timeout`` is ``run_cli``'s; here pytest-timeout bounds the test."""
    from haiku.ingester.cli import main

    argv = [CLI[-1] if len(CLI) == 1 else "haiku-ingester", *(["--config", str(config)] if config else []),
            "--log-format", "json", *args]
    started = time.monotonic()
    done = run_main_in_process(main, argv, env=env)
    return CliResult(done.returncode, done.stdout, done.stderr, time.monotonic() - started)


def write_files(root: Path, files: dict[str, str | bytes]) -> None:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)


def tiny_markdown(i: int) -> str:
    return f"# Note {i}\n\nNote number {i} mentions topic{i} once. It is short.\n"


class EncoderCount:
    """Counts the texts that reach the session's encoder (the cached embedder's ``encode``), in process."""

    def __init__(self, embedder: Any) -> None:
        self.embedder = embedder
        self.texts = 0
        self._encode = embedder.encode

    def __enter__(self) -> EncoderCount:
        def counted(texts):
            self.texts += len(texts)
            return self._encode(texts)

        self.embedder.encode = counted
        return self

    def __exit__(self, *exc: object) -> None:
        del self.embedder.encode  # the class's own method again


# --- reading databases -------------------------------------------------------------------------


@dataclass(frozen=True)
class DocState:
    id: str
    title: str | None
    content_hash: str | None
    chunk_ids: tuple[str, ...]
    chunk_texts: tuple[str, ...]


async def snapshot(location: Path, name: str = "db") -> dict[str, DocState]:
    """uri -> the document and its chunks, read through the store's API."""
    from haiku.core.config import AppConfig
    from haiku.core.scope import DatabaseRef
    from haiku.core.store import Store

    store = await Store.open(DatabaseRef.configured(name, location), AppConfig(), read_only=True)
    try:
        out: dict[str, DocState] = {}
        for document in await store.reads.list_documents():
            chunks = await store.reads.get_chunks(document.id)
            out[document.uri] = DocState(
                id=document.id,
                title=document.title,
                content_hash=document.metadata.get("content_hash"),
                chunk_ids=tuple(c.id for c in chunks),
                chunk_texts=tuple(c.content for c in chunks),
            )
        return out
    finally:
        await store.close()


async def remove_document(location: Path, name: str, uri: str) -> None:
    """Delete one document through the store, as another writer would."""
    from haiku.core.config import AppConfig
    from haiku.core.scope import DatabaseRef
    from haiku.core.store import Store

    store = await Store.open(DatabaseRef.configured(name, location), AppConfig())
    try:
        document = await store.reads.get_document_by_uri(uri)
        assert document is not None, uri
        await store.writer().documents.delete_document(document.id)
    finally:
        await store.close()


async def chunk_document_ids(location: Path) -> list[str]:
    """The document id of every chunk row, orphans included (read below the store's filtering)."""
    import lancedb

    db = await lancedb.connect_async(str(location))
    table = await db.open_table("chunks")
    rows = await table.query().select(["document_id"]).to_list()
    return [r["document_id"] for r in rows]


def queue_rows(queue_path: Path, sql: str, params: tuple = ()) -> list[tuple]:
    import sqlite3

    conn = sqlite3.connect(queue_path)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


# --- the daemon ---------------------------------------------------------------------------------


class ServeProcess:
    """``haiku-ingester serve`` in a subprocess, with a NOTIFY_SOCKET the test reads."""

    def __init__(self, config: Path, workdir: Path, *, name: str = "serve", extra_env: dict[str, str] | None = None):
        self.config = config
        self.notify_path = workdir / f"{name}.notify"
        self.log_path = workdir / f"{name}.log"
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        if self.notify_path.exists():
            self.notify_path.unlink()
        self.sock.bind(str(self.notify_path))
        self.messages: list[str] = []
        self._log = open(self.log_path, "w")
        env = cli_env(NOTIFY_SOCKET=str(self.notify_path), **(extra_env or {}))
        self.proc = subprocess.Popen(
            [*CLI, "--config", str(config), "--log-format", "json", "serve"],
            stdout=self._log,
            stderr=subprocess.STDOUT,
            env=env,
        )

    def wait_for_message(self, wanted: str, timeout: float = 120) -> bool:
        """Wait until a notify datagram containing ``wanted`` arrives (READY=1, STOPPING=1, ...)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(wanted in m for m in self.messages):
                return True
            if self.proc.poll() is not None:
                self._drain(0.1)
                return any(wanted in m for m in self.messages)
            self._drain(min(0.5, max(deadline - time.monotonic(), 0.01)))
        return False

    def _drain(self, timeout: float) -> None:
        self.sock.settimeout(timeout)
        try:
            while True:
                self.messages.append(self.sock.recv(4096).decode())
                self.sock.settimeout(0.01)
        except (TimeoutError, BlockingIOError, OSError):
            return

    def signal(self, sig: signal.Signals) -> None:
        self.proc.send_signal(sig)

    def log_text(self) -> str:
        if not self._log.closed:
            self._log.flush()
        return self.log_path.read_text()

    def stop(self, timeout: float = 60) -> int:
        if self._log.closed:  # stopped already
            return self.proc.returncode
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._drain(0.05)
        self.sock.close()
        self._log.close()
        return self.proc.returncode


def wait_until(predicate: Callable[[], Any], timeout: float, interval: float = 0.25) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            return value
        time.sleep(interval)


async def async_wait_until(predicate: Callable[[], Any], timeout: float, interval: float = 0.25) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = await predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            return value
        await asyncio.sleep(interval)
