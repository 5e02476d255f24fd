"""The Ray engine, seen from the ingester (docs/scale-out.md).

Conversion runs as Ray tasks and embedding in Ray actors that load the model
once, through the ingester's Ray driver process (``engine_ray_driver``); this
module imports no Ray. A cluster that cannot be reached fails the job with
``EngineUnavailableError``, which puts it back in the queue uncounted, and the
next request starts a new driver. A file whose worker died on it
``max_task_retries + 1`` times, or that failed to convert, fails as on the
local engine.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import time
from collections.abc import Sequence
from typing import Any

from haiku.core.config import AppConfig
from haiku.core.config.engine import RayEngineConfig
from haiku.core.convert import ConvertedDocument
from haiku.core.embedders import EmbeddingError, get_embedder
from haiku.core.embedders.batching import document_batch_size
from haiku.ingester.errors import (
    ConversionCrashedError,
    ConversionError,
    ConversionTimeoutError,
    EngineUnavailableError,
    skipped_error,
)
from haiku.ingester.logs import get_logger
from haiku.ingester.pipeline.protocol import body_size, decode_body, encode_frame, header_size, spawn_child
from haiku.ingester.skips import SkipReason

_CONNECT_TIMEOUT_S = 180.0  # joining a cluster; Ray itself gives up sooner on a wrong address
_COOLDOWN_S = 5.0  # after a failed start, requests fail at once for this long instead of each trying


class RayDriver:
    """The driver process: started on the first request, started again after the cluster went away."""

    def __init__(self, hello: dict[str, Any]) -> None:
        self.address = hello["address"]
        self._hello = hello
        self._proc: asyncio.subprocess.Process | None = None
        self._reader: asyncio.Task | None = None
        self._stderr: asyncio.Task | None = None
        self._pending: dict[int, asyncio.Future] = {}
        self._ids = itertools.count(1)
        self._lock = asyncio.Lock()
        self._failure: EngineUnavailableError | None = None
        self._failed_at = 0.0
        self._closed = False
        self.log = get_logger()

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def _unavailable(self, why: str) -> EngineUnavailableError:
        return EngineUnavailableError(
            f"the Ray cluster at {self.address} is unavailable ({why}); the jobs stay queued"
        )

    async def ensure_started(self) -> None:
        if self._running():
            return
        async with self._lock:
            if self._running():
                return
            if self._closed:
                raise self._unavailable("the engine is closed")
            if self._failure is not None and time.monotonic() - self._failed_at < _COOLDOWN_S:
                raise self._failure
            try:
                await self._spawn()
            except EngineUnavailableError as exc:
                self._failure, self._failed_at = exc, time.monotonic()
                raise
            self._failure = None
            self.log.info("connected to the Ray cluster", address=self.address, driver_pid=self.pid)

    def _running(self) -> bool:
        return self._proc is not None and self._proc.returncode is None and self._reader is not None

    async def _spawn(self) -> None:
        proc = await spawn_child("haiku.ingester.pipeline.engine_ray_driver", dict(os.environ))
        self._proc = proc
        self._stderr = asyncio.create_task(self._log_output(proc))
        try:
            await self._send(self._hello)
            reply = await asyncio.wait_for(self._receive(proc), _CONNECT_TIMEOUT_S)
        except (TimeoutError, asyncio.IncompleteReadError, BrokenPipeError, ConnectionResetError):
            await self._stop(proc)
            raise self._unavailable("the Ray driver could not join it") from None
        if not reply.get("ready"):
            await self._stop(proc)
            raise self._unavailable(reply.get("message") or "the Ray driver could not join it")
        self._reader = asyncio.create_task(self._read_replies(proc))

    async def _log_output(self, proc: asyncio.subprocess.Process) -> None:
        assert proc.stderr is not None
        async for raw in proc.stderr:
            text = raw.decode("utf-8", "replace").rstrip()
            if text:
                self.log.info("ray driver output", driver_pid=proc.pid, output=text)

    async def _send(self, payload: Any) -> None:
        assert self._proc is not None and self._proc.stdin is not None
        self._proc.stdin.write(encode_frame(payload))
        await self._proc.stdin.drain()

    @staticmethod
    async def _receive(proc: asyncio.subprocess.Process) -> Any:
        assert proc.stdout is not None
        header = await proc.stdout.readexactly(header_size())
        return decode_body(await proc.stdout.readexactly(body_size(header)))

    async def _read_replies(self, proc: asyncio.subprocess.Process) -> None:
        try:
            while True:
                reply = await self._receive(proc)
                future = self._pending.pop(reply.pop("id"), None)
                if future is not None and not future.done():
                    future.set_result(reply)
        except (asyncio.IncompleteReadError, ConnectionResetError):
            pass
        with contextlib.suppress(Exception):
            await asyncio.wait_for(proc.wait(), 10)
        code = proc.returncode
        why = "the Ray driver exited" + (f" with code {code}" if code is not None else "")
        if not self._closed:
            self.log.error("lost the Ray cluster; jobs stay queued until it is back", address=self.address, reason=why)
        self._reader = None
        pending, self._pending = self._pending, {}
        for future in pending.values():
            if not future.done():
                future.set_exception(self._unavailable(why))

    async def call(self, payload: dict[str, Any]) -> dict[str, Any]:
        await self.ensure_started()
        request_id = next(self._ids)
        future: asyncio.Future = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        try:
            await self._send({"id": request_id, **payload})
        except (BrokenPipeError, ConnectionResetError):
            self._pending.pop(request_id, None)
            raise self._unavailable("the Ray driver exited") from None
        try:
            return await future
        finally:
            self._pending.pop(request_id, None)

    async def _stop(self, proc: asyncio.subprocess.Process) -> None:
        if proc.stdin is not None:
            with contextlib.suppress(Exception):
                proc.stdin.close()
        try:
            await asyncio.wait_for(proc.wait(), 10)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(proc.wait(), 10)

    async def close(self) -> None:
        self._closed = True
        proc = self._proc
        if proc is not None and proc.returncode is None:
            await self._stop(proc)
        for task in (self._reader, self._stderr):
            if task is not None and not task.done():
                task.cancel()
            if task is not None:
                with contextlib.suppress(BaseException):
                    await task


def _failed(name: str, reply: dict[str, Any], timeout_s: float) -> Exception:
    kind, message = reply.get("kind"), reply.get("message") or ""
    if kind == "timeout":
        return ConversionTimeoutError(
            f"{name}: conversion took longer than processing.conversion_timeout_s ({timeout_s:g} s); "
            "its Ray task was stopped"
        )
    if kind == "crashed":
        return ConversionCrashedError(
            f"{name}: the conversion worker died while converting it, on every try the Ray engine allowed "
            f"(ingester.engine.max_task_retries; {message})"
        )
    if kind == "unavailable":
        return EngineUnavailableError(message)
    return ConversionError(message or f"{name}: conversion failed")


class RayConverter:
    """Conversions as Ray tasks, ``size`` at once."""

    def __init__(self, driver: RayDriver, *, size: int, timeout_s: float) -> None:
        self.driver = driver
        self.size = size
        self.timeout_s = timeout_s
        self._slots = asyncio.Semaphore(size)

    async def start(self) -> None:
        try:
            await self.driver.ensure_started()
        except EngineUnavailableError as exc:  # the first job says so again, and waits for the cluster
            self.driver.log.error("the Ray cluster cannot be reached", error=str(exc))

    async def convert(self, *, name: str, fmt: str, data: bytes, timeout_s: float | None = None) -> ConvertedDocument:
        limit = self.timeout_s if timeout_s is None else timeout_s
        async with self._slots:
            reply = await self.driver.call(
                {"op": "convert", "name": name, "format": fmt, "data": data, "timeout_s": limit}
            )
        if reply.get("ok"):
            return reply["document"]
        raise _failed(name, reply, limit)

    async def convert_object(
        self, *, name: str, fmt: str, ref: dict[str, Any], max_file_size: int, known_hash: str | None
    ) -> tuple[str, ConvertedDocument | None]:
        """An object the worker reads itself (``reading``): its hash, and its document unless the hash is known."""
        request = {"name": name, "format": fmt, "ref": ref, "max_file_size": max_file_size, "known_hash": known_hash}
        async with self._slots:
            reply = await self.driver.call({"op": "convert_object", "timeout_s": self.timeout_s, **request})
        if reply.get("ok"):
            return reply["hash"], reply["document"]
        if reply.get("kind") == "read":
            raise OSError(reply.get("message"))  # transient, as a failed read is on the local engine
        if reply.get("kind") == "skipped":
            raise skipped_error(SkipReason(reply["reason"]), reply.get("message") or name)
        raise _failed(name, reply, self.timeout_s)

    async def close(self) -> None:
        await self.driver.close()


class RayEmbedder:
    """The configured local model in ``embedders`` Ray actors; a batch is split among them."""

    def __init__(self, driver: RayDriver, local: Any, *, embedders: int, per_actor: int) -> None:
        self.driver = driver
        self.identity = local.identity
        self.embedders = embedders
        self.per_actor = per_actor
        self.batch_size = per_actor * embedders
        self._placement: dict[str, Any] | None = None

    def describe_placement(self) -> dict[str, Any] | None:
        """Where the actors embed (device, precision, runtime), known from their first vectors."""
        return None if self._placement is None else {**self._placement, "engine": "ray"}

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        step = max(1, -(-len(texts) // self.embedders))
        parts = [list(texts[i : i + step]) for i in range(0, len(texts), step)]
        replies = await asyncio.gather(*(self.driver.call({"op": "embed", "texts": part}) for part in parts))
        vectors: list[list[float]] = []
        for reply in replies:
            if not reply.get("ok"):
                if reply.get("kind") == "unavailable":
                    raise EngineUnavailableError(reply.get("message") or "the Ray cluster is unavailable")
                raise EmbeddingError(f"embedding on the Ray cluster failed: {reply.get('message')}")
            vectors.extend(reply["vectors"])
            if self._placement is None and reply.get("placement"):
                self._placement = reply["placement"]
                self.driver.log.info("embedder.device", engine="ray", **self._placement)
        return vectors

    async def embed_query(self, text: str) -> list[float]:
        return (await self.embed_documents([text]))[0]


def build_ray_engine(config: AppConfig, converter_settings: dict[str, Any]) -> tuple[RayConverter, Any]:
    """The Ray engine's converter and embedder (a local model runs in actors, an endpoint is called from here)."""
    settings = config.ingester.engine
    assert isinstance(settings, RayEngineConfig)
    local = get_embedder(config)
    # A local model runs in the actors; an embedding endpoint is called from here, as on the local engine.
    on_cluster = config.embeddings.model.provider == "sentence-transformers"
    if settings.gpus_per_embedder > 0 and _embeds_on_cpu(config.embeddings):
        get_logger().warning(
            "embedder.gpu_reserved_unused", gpus_per_embedder=settings.gpus_per_embedder,
            reason="embeddings.document_device is cpu (or document_runtime is onnx): the reserved GPUs stay idle",
        )
    gpu = settings.gpus_per_embedder > 0
    hello = {
        "address": settings.address,
        "converter": converter_settings,
        "embedders": settings.embedders,
        "gpus_per_embedder": settings.gpus_per_embedder,
        "cpus_per_embedder": settings.embedder_cpus(),
        "max_task_retries": settings.max_task_retries,
        "embeddings": config.embeddings.model_dump(mode="json") if on_cluster else None,
    }
    driver = RayDriver(hello)
    converter = RayConverter(driver, size=settings.converters, timeout_s=config.processing.conversion_timeout_s)
    per_actor = document_batch_size(config.embeddings.batch_size, "cuda:0" if gpu else "cpu")
    embedder = RayEmbedder(driver, local, embedders=settings.embedders, per_actor=per_actor) if on_cluster else local
    return converter, embedder


def _embeds_on_cpu(embeddings: Any) -> bool:
    return embeddings.document_device == "cpu" or embeddings.document_runtime == "onnx"
