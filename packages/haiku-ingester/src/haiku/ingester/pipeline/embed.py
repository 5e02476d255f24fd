"""Embedding chunk texts in batches that span documents.

Jobs hand their chunk texts to one batcher and wait. The batcher runs the
encoder on one batch of texts at a time (``embedder.batch_size`` of them), off
the event loop, while the conversion workers keep producing more texts:
conversion, chunking and writes overlap the encoder instead of taking turns
with it. A job's vectors are handed back once all its texts are done.

The encoder pads a batch to its longest text, so a batch of texts of similar
length costs less. The batcher therefore chooses each batch from every text
waiting (up to ``pool_size`` are waited for, see below): the oldest waiting
text with the texts nearest to it in length. Taking the oldest text every
time keeps any document from waiting behind newer ones; taking its neighbours
in length cuts padding to about what sorting the whole corpus would (choosing
from pools of 256 texts in arrival order padded ~9% more tokens on SciFact).

The batcher starts a batch as soon as the encoder is free and either
``pool_size`` texts are waiting, nothing else is being converted, or the
oldest waiting text has waited ``linger_s``.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from haiku.core.embedders import Embedder
from haiku.core.memory import release_free_memory
from haiku.ingester.logs import get_logger


@dataclass(eq=False)
class _Request:
    texts: Sequence[str]
    future: asyncio.Future
    at: float = field(default_factory=time.monotonic)
    vectors: list = field(default_factory=list)
    left: int = 0

    def __post_init__(self) -> None:
        self.vectors = [None] * len(self.texts)
        self.left = len(self.texts)


@dataclass(eq=False)
class _Text:
    request: _Request
    index: int

    @property
    def text(self) -> str:
        return self.request.texts[self.index]


def _encode_and_trim(encode: Callable[[list[str]], list[list[float]]], texts: list[str]) -> list[list[float]]:
    try:
        return encode(texts)
    finally:
        release_free_memory()


def choose_batch(waiting: list[_Text], size: int) -> list[_Text]:
    """The oldest waiting text (the first) and the ``size - 1`` texts nearest to it in length."""
    if len(waiting) <= size:
        return list(waiting)
    ranked = sorted(range(len(waiting)), key=lambda i: (len(waiting[i].text), i))
    at = ranked.index(0)
    lengths = [len(waiting[i].text) for i in ranked]
    # Of the windows of ``size`` consecutive lengths holding the oldest text, the narrowest.
    first = max(0, at - size + 1)
    last = min(at, len(ranked) - size)
    start = min(range(first, last + 1), key=lambda s: lengths[s + size - 1] - lengths[s])
    return [waiting[i] for i in ranked[start : start + size]]


class EmbedBatcher:
    def __init__(
        self,
        embedder: Embedder,
        *,
        pool_size: int,
        linger_s: float = 1.0,
        observe: Callable[[float, int], None] | None = None,
    ) -> None:
        self.embedder = embedder
        self.observe = observe  # told (seconds, texts) of each encoder batch: the ingester's metrics
        self.batch_size = max(1, int(getattr(embedder, "batch_size", 0) or pool_size))
        self.pool_size = max(1, pool_size)
        self.linger_s = linger_s
        self._waiting: list[_Text] = []  # in arrival order
        self._wake = asyncio.Event()
        self._producers = 0
        self._task: asyncio.Task | None = None
        # A local encoder always runs on this one thread: torch's activations then
        # come from one malloc arena instead of one per executor thread, which
        # kept the peak memory of every thread that ever encoded.
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="encoder")
        self.texts_embedded = 0
        self.pools_embedded = 0  # encoder calls
        self.encode_seconds = 0.0
        self._encoding = False
        self._idle_since: float | None = None  # set once the first batch is done
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
        for item in self._waiting:
            if not item.request.future.done():
                item.request.future.cancel()
        self._waiting.clear()
        self._thread.shutdown(wait=False, cancel_futures=True)

    async def _encode(self, texts: list[str]) -> list[list[float]]:
        encode = getattr(self.embedder, "encode", None)
        if encode is None:  # a remote embedder: nothing to keep on one thread
            return await self.embedder.embed_documents(texts)
        return await asyncio.get_running_loop().run_in_executor(self._thread, _encode_and_trim, encode, texts)

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
        request = _Request(texts, future)
        self._waiting.extend(_Text(request, i) for i in range(len(texts)))
        self._wake.set()
        return await future

    def starving(self, after_s: float = 2.0) -> bool:
        """The encoder has been waiting for texts for ``after_s`` (never before its first batch)."""
        if self._encoding or self._idle_since is None or len(self._waiting) >= self.pool_size:
            return False
        return time.monotonic() - self._idle_since >= after_s

    async def _run(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            self._waiting = [t for t in self._waiting if not t.request.future.done()]
            if not self._waiting:
                continue
            age = time.monotonic() - self._waiting[0].request.at
            if len(self._waiting) < self.pool_size and self._producers > 0 and age < self.linger_s:
                with contextlib.suppress(TimeoutError, asyncio.TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), self.linger_s - age)
                self._wake.set()
                continue
            await self._encode_one_batch()
            self._wake.set()

    async def _encode_one_batch(self) -> None:
        batch = choose_batch(self._waiting, self.batch_size)
        chosen = {id(t) for t in batch}
        self._waiting = [t for t in self._waiting if id(t) not in chosen]
        started = time.monotonic()
        self._encoding = True
        try:
            vectors = await self._encode([t.text for t in batch])
        except asyncio.CancelledError:
            for item in batch:
                if not item.request.future.done():
                    item.request.future.cancel()
            raise
        except Exception as exc:
            failed = {id(t.request): t.request for t in batch}
            for request in failed.values():
                if not request.future.done():
                    request.future.set_exception(exc)
            return
        finally:
            self._encoding = False
            self._idle_since = time.monotonic()
        seconds = time.monotonic() - started
        self.encode_seconds += seconds
        self.texts_embedded += len(batch)
        self.pools_embedded += 1
        if self.observe is not None:
            self.observe(seconds, len(batch))
        finished = 0
        for item, vector in zip(batch, vectors, strict=True):
            request = item.request
            request.vectors[item.index] = vector
            request.left -= 1
            if request.left == 0:
                finished += 1
                if not request.future.done():
                    request.future.set_result(request.vectors)
        self.log.debug("embedded", texts=len(batch), documents=finished, seconds=round(seconds, 3))
