"""Document writes gathered into batches, one writer per database.

Each LanceDB write is a commit of its own (a new version, a data fragment per
table, an index refresh), costing about as much CPU for one document as for
fifty. Jobs finish in bursts (one encoder pool completes a hundred documents
at once), so jobs hand their document to this writer and wait: it writes
whatever has gathered for a database in one ``upsert_documents`` call, as soon
as the previous write of that database is done (no waiting for more), and only
then resolves each job's future. A job is acknowledged in the queue after its
future resolves, so nothing is acknowledged before it is durably written.

When a batch fails, its documents are written again one by one, so a job
fails for its own document's error only.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from haiku.core.models import Chunk, Document, DocumentStructure
from haiku.ingester.logs import get_logger

if TYPE_CHECKING:
    from haiku.core.store.writer import StoreWriter

MAX_BATCH_DOCUMENTS = 64


WriteItem = tuple[Document, Sequence[Chunk], Sequence[Sequence[float]], DocumentStructure | None]


class BatchWritableStore(Protocol):
    def writer(self) -> StoreWriter: ...


@dataclass
class _Write:
    document: Document
    chunks: list[Chunk]
    vectors: list[list[float]]
    future: asyncio.Future
    structure: DocumentStructure | None = None  # items, pictures and page images, stored with the document

    @property
    def item(self) -> WriteItem:
        return self.document, self.chunks, self.vectors, self.structure


class _DatabaseWriter:
    """The pending writes of one open store and the task writing them."""

    def __init__(
        self, store: BatchWritableStore, lock: asyncio.Lock, max_batch: int, on_idle: Callable[[], None]
    ) -> None:
        self.store = store
        self.lock = lock
        self.max_batch = max_batch
        self.on_idle = on_idle
        self.pending: list[_Write] = []
        self.task: asyncio.Task | None = None
        self.log = get_logger()

    def submit(self, write: _Write, name: str) -> None:
        self.pending.append(write)
        if self.task is None or self.task.done():
            # Started, not run: the jobs woken with this one hand their writes first.
            self.task = asyncio.create_task(self._run(), name=f"writer-{name}")

    async def _run(self) -> None:
        try:
            while True:
                self.pending = [w for w in self.pending if not w.future.done()]  # cancelled jobs
                if not self.pending:
                    self.on_idle()
                    return
                batch, self.pending = self.pending[: self.max_batch], self.pending[self.max_batch :]
                async with self.lock:
                    await self._write(batch)
        except BaseException as exc:
            # Cancelled (the app is closing) or broken: no job may wait forever.
            for write in self.pending:
                if write.future.done():
                    continue
                if isinstance(exc, Exception):
                    write.future.set_exception(exc)
                else:
                    write.future.cancel()
            self.pending = []
            self.on_idle()
            raise

    async def _write(self, batch: list[_Write]) -> None:
        try:
            stored = await self.store.writer().documents.upsert_documents([w.item for w in batch])
        except asyncio.CancelledError:
            for write in batch:
                if not write.future.done():
                    write.future.cancel()
            raise
        except Exception as exc:
            if len(batch) == 1:
                if not batch[0].future.done():
                    batch[0].future.set_exception(exc)
                return
            self.log.warning(
                "batch write failed; writing its documents one by one", documents=len(batch), error=str(exc)
            )
            for write in batch:
                await self._write([write])
            return
        for write, document in zip(batch, stored, strict=True):
            if not write.future.done():
                write.future.set_result(document)


class DocumentWriter:
    """Per-database batching of document writes (see the module docstring)."""

    def __init__(
        self, lock_for: Callable[[str], asyncio.Lock], *, max_batch: int = MAX_BATCH_DOCUMENTS
    ) -> None:
        self._lock_for = lock_for
        self.max_batch = max(1, max_batch)
        self._writers: dict[int, _DatabaseWriter] = {}  # by id(store): a reloaded database gets a new one

    async def write(
        self,
        database: str,
        store: Any,
        document: Document,
        chunks: list[Chunk],
        vectors: list[list[float]],
        structure: DocumentStructure | None = None,
    ) -> Document:
        """Write one document with its chunks (and structure), batched with others; returns the stored document."""
        writer = self._writers.get(id(store))
        if writer is None or writer.store is not store:
            writer = _DatabaseWriter(
                store, self._lock_for(database), self.max_batch, lambda: self._forget(store, writer)
            )
            self._writers[id(store)] = writer
        future: asyncio.Future = asyncio.get_running_loop().create_future()
        writer.submit(_Write(document, chunks, vectors, future, structure), database)
        return await future

    def _forget(self, store: Any, writer: _DatabaseWriter | None) -> None:
        """A writer with nothing left to write is dropped, so it keeps no closed store alive."""
        if self._writers.get(id(store)) is writer:
            del self._writers[id(store)]

    async def close(self) -> None:
        writers, self._writers = list(self._writers.values()), {}
        for writer in writers:
            if writer.task is not None and not writer.task.done():
                writer.task.cancel()
                with contextlib.suppress(BaseException):
                    await writer.task
