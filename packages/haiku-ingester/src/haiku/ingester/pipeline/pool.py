"""Conversion worker processes, seen from the daemon.

Each worker converts one file at a time. The pool starts ``initial`` workers
and grows up to ``size`` only while conversion is the bottleneck (the encoder
waits for texts while files wait for a worker): a worker costs about 200 MB,
and on a CPU-bound machine one keeps up with the encoder on text formats.

A conversion that outlives
``processing.conversion_timeout_s`` gets its worker killed; a worker that dies
(docling crashing on a bad file) fails only the file it held. Either way a fresh
worker takes its place and the daemon carries on.

A worker that a file's OCR left more than ``retire_over_mib`` over its resting
size retires after that file (its reply says so, and it exits once the file's
last frame is sent): the pool starts a fresh worker in its place. Nothing is
lost or done twice: the file's reply is whole before the worker goes, and no
other file is in it.

The workers of one pool share one OCR slot (a lock file the pool makes and
removes): one page at a time is read by OCR across them, so OCR's working
memory is taken once, not once per worker (``haiku.core.convert.ocr_slot``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
import time
from collections.abc import Callable
from typing import Any

from haiku.core.convert import ConvertedDocument
from haiku.ingester.errors import ConversionCrashedError, ConversionError, ConversionTimeoutError
from haiku.ingester.logs import get_logger
from haiku.ingester.pipeline.protocol import body_size, decode_body, encode_frame, header_size, spawn_child
from haiku.ingester.pipeline.worker_output import WorkerOutput

_STARTUP_TIMEOUT_S = 300.0  # importing docling on a busy machine; only a broken install takes this long


class _Worker:
    def __init__(self, hello: dict[str, Any]) -> None:
        self._hello = hello
        self.proc: asyncio.subprocess.Process | None = None
        self._ready: asyncio.Task | None = None
        self._stderr_task: asyncio.Task | None = None
        self.log = get_logger()
        self.output = WorkerOutput(self.log, worker_pid=None)  # its stderr, one event per file

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    async def spawn(self) -> None:
        env = dict(os.environ)
        env.setdefault("TOKENIZERS_PARALLELISM", "false")
        env.setdefault("OMP_NUM_THREADS", "1")
        self.proc = await spawn_child("haiku.ingester.pipeline.worker", env)
        self.output = WorkerOutput(self.log, worker_pid=self.proc.pid)
        self._stderr_task = asyncio.create_task(self._forward_stderr())
        self._ready = asyncio.create_task(self._handshake())

    async def _forward_stderr(self) -> None:
        assert self.proc is not None and self.proc.stderr is not None
        try:
            while True:
                line = await self.proc.stderr.readline()
                if not line:
                    return
                text = line.decode("utf-8", "replace").rstrip()
                if text:
                    self.output.line(text)
        finally:
            self.output.flush()

    async def _send(self, payload: Any) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        self.proc.stdin.write(encode_frame(payload))
        await self.proc.stdin.drain()

    async def _receive(self) -> Any:
        assert self.proc is not None and self.proc.stdout is not None
        header = await self.proc.stdout.readexactly(header_size())
        body = await self.proc.stdout.readexactly(body_size(header))
        return decode_body(body)

    async def _handshake(self) -> None:
        await self._send(self._hello)
        reply = await self._receive()
        if not reply.get("ready"):
            raise ConversionError(f"a conversion worker could not start: {reply.get('kind')}: {reply.get('message')}")

    async def wait_ready(self) -> None:
        assert self._ready is not None
        try:
            await asyncio.wait_for(asyncio.shield(self._ready), _STARTUP_TIMEOUT_S)
        except (asyncio.IncompleteReadError, BrokenPipeError, ConnectionResetError):
            raise ConversionError(f"a conversion worker exited while starting ({self.exit_text()})") from None

    async def call(self, payload: dict[str, Any]) -> dict[str, Any]:
        """One conversion: the reply, with the page images that follow it in frames of their own."""
        self.output.begin(payload["name"])
        try:
            await self._send(payload)
            reply = await self._receive()
            if reply.get("ok") and reply.get("pages"):
                pages = reply["document"].structure.pages
                while (page := await self._receive()) is not None:
                    pages.append(page)
        finally:
            self.output.end()
        return reply

    def alive(self) -> bool:
        return self.proc is not None and self.proc.returncode is None

    def exit_text(self) -> str:
        code = self.proc.returncode if self.proc is not None else None
        if code is None:
            return "still running"
        if code < 0:
            return f"killed by signal {-code}"
        return f"exit code {code}"

    async def kill(self) -> None:
        if self.proc is None:
            return
        if self.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.kill()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.proc.wait(), 10)
        await self._drain_tasks()

    async def close(self) -> None:
        """Stop an idle worker: it holds no state, so SIGTERM, then SIGKILL if it lingers."""
        if self.proc is None:
            return
        if self.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.terminate()
            try:
                await asyncio.wait_for(self.proc.wait(), 2)
            except TimeoutError:
                pass
        await self.kill()

    async def _drain_tasks(self) -> None:
        for task in (self._ready, self._stderr_task):
            if task is not None and not task.done():
                task.cancel()
            if task is not None:
                with contextlib.suppress(BaseException):
                    await task


class ConversionPool:
    def __init__(
        self,
        *,
        size: int,
        tokenizer_dir: str,
        chunk_size: int,
        timeout_s: float,
        ocr: str = "auto",
        pdf_layout: str = "auto",
        structure: dict[str, Any] | None = None,
        initial: int | None = None,
        starving: Callable[[], bool] | None = None,
        retire_over_mib: float | None = None,
    ) -> None:
        """``retire_over_mib``: how far over its resting RSS OCR may leave a worker before it is
        replaced (None: the worker's own default, ``worker.RETIRE_OVER_MIB``)."""
        self.size = max(1, size)
        self.initial = self.size if initial is None else max(1, min(initial, self.size))
        self._starving = starving or (lambda: True)
        self._growing = False
        self.timeout_s = timeout_s
        slot_fd, self._ocr_slot = tempfile.mkstemp(prefix="haiku-ocr-slot-")
        os.close(slot_fd)
        self._hello = {
            "tokenizer_dir": tokenizer_dir, "chunk_size": chunk_size, "ocr": ocr,
            "pdf_layout": pdf_layout, "structure": structure, "ocr_slot": self._ocr_slot,
        }  # fmt: skip
        if retire_over_mib is not None:
            self._hello["retire_over_mib"] = retire_over_mib
        self._idle: asyncio.Queue[_Worker] = asyncio.Queue()
        self._workers: set[_Worker] = set()
        self._busy: set[_Worker] = set()
        self._closed = False
        self.replaced = 0  # workers retired and replaced so far (the ingester's metrics count them)
        self.log = get_logger()

    @property
    def pids(self) -> list[int]:
        return [w.pid for w in self._workers if w.pid is not None]

    @property
    def ocr_slot(self) -> str:
        """The lock file of the workers' OCR slot (removed when the pool closes)."""
        return self._ocr_slot

    @property
    def busy_pids(self) -> list[int]:
        """Workers converting a file right now."""
        return [w.pid for w in self._busy if w.pid is not None]

    async def start(self) -> None:
        """Spawn the first workers; they import docling in the background."""
        for _ in range(self.initial):
            await self._add_worker()

    async def _maybe_grow(self) -> None:
        if self._growing or self._closed or len(self._workers) >= self.size or not self._starving():
            return
        self._growing = True
        try:
            self.log.info(
                "conversion is the bottleneck; starting another conversion worker",
                workers=len(self._workers) + 1,
                limit=self.size,
            )
            await self._add_worker()
        finally:
            self._growing = False

    async def _add_worker(self) -> None:
        worker = _Worker(self._hello)
        await worker.spawn()
        self._workers.add(worker)
        self._idle.put_nowait(worker)

    async def _retire(self, worker: _Worker) -> None:
        self._workers.discard(worker)
        await worker.kill()
        if not self._closed:
            self.replaced += 1
            await self._add_worker()

    async def convert(self, *, name: str, fmt: str, data: bytes, timeout_s: float | None = None) -> ConvertedDocument:
        if self._closed:
            raise ConversionError("the conversion pool is closed")
        if self._idle.empty():
            await self._maybe_grow()
        worker = await self._idle.get()
        reusable = False
        try:
            await worker.wait_ready()
            self._busy.add(worker)
            started = time.monotonic()
            limit = self.timeout_s if timeout_s is None else timeout_s
            try:
                reply = await asyncio.wait_for(worker.call({"name": name, "format": fmt, "data": data}), limit)
            except TimeoutError:
                raise ConversionTimeoutError(
                    f"{name}: conversion took longer than processing.conversion_timeout_s ({limit:g} s); "
                    "the conversion worker was stopped"
                ) from None
            except (asyncio.IncompleteReadError, BrokenPipeError, ConnectionResetError):
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(worker.proc.wait(), 5)  # type: ignore[union-attr]
                raise ConversionCrashedError(
                    f"{name}: the conversion worker died while converting it ({worker.exit_text()})"
                ) from None
            reusable = not reply.get("retire")  # a worker that OCR left too large exits after the file
            seconds = round(time.monotonic() - started, 3)
            self.log.debug("converted", file=name, seconds=seconds, worker_pid=worker.pid, worker_retires=not reusable)
        finally:
            self._busy.discard(worker)
            if reusable and worker.alive():
                self._idle.put_nowait(worker)
            else:
                await self._retire(worker)
        if reply.get("ok"):
            return reply["document"]
        raise ConversionError(reply.get("message") or f"{name}: conversion failed ({reply.get('kind')})")

    async def close(self) -> None:
        self._closed = True
        workers, self._workers = list(self._workers), set()
        await asyncio.gather(*(w.close() for w in workers), return_exceptions=True)
        with contextlib.suppress(OSError):
            os.unlink(self._ocr_slot)
