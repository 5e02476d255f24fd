"""Embedding chunk texts in batches that span documents.

Jobs hand their chunk texts to one batcher and wait. The batcher runs the
encoder on one pool of texts at a time, off the event loop, while the
conversion workers keep producing the next pool: conversion, chunking and
writes overlap the encoder instead of taking turns with it.

A pool holds up to ``pool_size`` texts (a few encoder batches). The local
encoder sorts a call's texts by length before batching, so a pool several
batches deep pads far less than batches cut in arrival order would. The
batcher starts a pool as soon as the encoder is free and either the pool is
full, nothing else is being converted, or the oldest waiting text has waited
``linger_s``.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from haiku.core.embedders import Embedder
from haiku.ingester.logs import get_logger


@dataclass
class _Request:
    texts: Sequence[str]
    future: asyncio.Future
    at: float = field(default_factory=time.monotonic)


class EmbedBatcher:
    def __init__(self, embedder: Embedder, *, pool_size: int, linger_s: float = 1.0) -> None:
        self.embedder = embedder
        self.pool_size = max(1, pool_size)
        self.linger_s = linger_s
        self._pending: list[_Request] = []
        self._wake = asyncio.Event()
        self._producers = 0
        self._task: asyncio.Task | None = None
        # A local encoder always runs on this one thread: torch's activations then
        # come from one malloc arena instead of one per executor thread, which
        # kept the peak memory of every thread that ever encoded.
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="encoder")
        self.texts_embedded = 0
        self.pools_embedded = 0
        self.encode_seconds = 0.0
        self._encoding = False
        self._idle_since: float | None = None  # set once the first pool is done
        self.log = get_logger()

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="embed-batcher")

    async def close(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        for request in self._pending:
            if not request.future.done():
                request.future.cancel()
        self._pending.clear()
        self._thread.shutdown(wait=False, cancel_futures=True)

    async def _encode(self, texts: list[str]) -> list[list[float]]:
        encode = getattr(self.embedder, "encode", None)
        if encode is None:  # a remote embedder: nothing to keep on one thread
            return await self.embedder.embed_documents(texts)
        return await asyncio.get_running_loop().run_in_executor(self._thread, encode, texts)

    @contextlib.contextmanager
    def producing(self) -> Iterator[None]:
        """Held by a job while it converts: tells the batcher more texts are coming."""
        self._producers += 1
        try:
            yield
        finally:
            self._producers -= 1
            self._wake.set()

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        if self._task is None:
            return await self._encode(list(texts))
        future: asyncio.Future = asyncio.get_running_loop().create_future()
        self._pending.append(_Request(texts, future))
        self._wake.set()
        return await future

    def starving(self, after_s: float = 2.0) -> bool:
        """The encoder has been waiting for texts for ``after_s`` (never before its first pool)."""
        if self._encoding or self._idle_since is None or self._pending_texts() >= self.pool_size:
            return False
        return time.monotonic() - self._idle_since >= after_s

    def _pending_texts(self) -> int:
        return sum(len(r.texts) for r in self._pending)

    async def _run(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            self._pending = [r for r in self._pending if not r.future.done()]
            if not self._pending:
                continue
            waiting = self._pending_texts()
            age = time.monotonic() - self._pending[0].at
            if waiting < self.pool_size and self._producers > 0 and age < self.linger_s:
                with contextlib.suppress(TimeoutError, asyncio.TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), self.linger_s - age)
                self._wake.set()
                continue
            await self._encode_one_pool()
            self._wake.set()

    async def _encode_one_pool(self) -> None:
        pool: list[_Request] = []
        count = 0
        while self._pending and (not pool or count + len(self._pending[0].texts) <= self.pool_size):
            request = self._pending.pop(0)
            pool.append(request)
            count += len(request.texts)
        texts = [t for r in pool for t in r.texts]
        started = time.monotonic()
        self._encoding = True
        try:
            vectors = await self._encode(texts)
        except asyncio.CancelledError:
            for request in pool:
                if not request.future.done():
                    request.future.cancel()
            raise
        except Exception as exc:
            for request in pool:
                if not request.future.done():
                    request.future.set_exception(exc)
            return
        finally:
            self._encoding = False
            self._idle_since = time.monotonic()
        seconds = time.monotonic() - started
        self.encode_seconds += seconds
        self.texts_embedded += len(texts)
        self.pools_embedded += 1
        self.log.debug("embedded", texts=len(texts), documents=len(pool), seconds=round(seconds, 3))
        offset = 0
        for request in pool:
            part = vectors[offset : offset + len(request.texts)]
            offset += len(request.texts)
            if not request.future.done():
                request.future.set_result(part)
