"""What one job does (docs/ingester.md): the upsert and delete steps, as plain async functions.

Upsert: (1) the stored revision equals the file's → nothing to do; (2) else read
and hash the bytes (``reading``: here, or on the Ray worker that converts
them); an unchanged hash only rolls the revision forward (document id, chunks
and vectors kept); (3) else convert and chunk (in a worker process),
embed (batched across documents) the chunks whose text the stored version
lacks, reusing the stored vectors of the others (``reuse``), and write (batched
with other jobs' documents of the same database): the same uri keeps its
document id. A forced upsert (re-processing) skips (1) and (2): its file is
converted and chunked again, and vectors of unchanged chunk texts are reused.

A file the ingester does not take (empty, over ``max_file_size``, not text,
an unknown type: ``haiku.ingester.skips``) ends the job ``skipped``, never
dead, and the document an earlier version of it left is deleted.

Delete: skipped when the file is back; otherwise the document with that uri is
deleted only if it came from the job's source.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from haiku.core.convert.ocr import UNREADABLE_PAGES
from haiku.core.models import Chunk, Document
from haiku.ingester.errors import SkippedFileError, SymlinkOutsideRootError
from haiku.ingester.manual.source import given_fields
from haiku.ingester.metrics import IngesterMetrics
from haiku.ingester.pipeline.describe import PictureDescriber
from haiku.ingester.pipeline.embed import EmbedBatcher
from haiku.ingester.pipeline.engine import FileConverter
from haiku.ingester.pipeline.picture_vectors import embed_pictures
from haiku.ingester.pipeline.pictures import describe_pictures
from haiku.ingester.pipeline.reading import read_and_convert
from haiku.ingester.pipeline.reuse import plan_embedding, stored_vectors
from haiku.ingester.pipeline.writer import DocumentWriter
from haiku.ingester.queue import Job, SyncState, SyncUpdate, unreadable_json
from haiku.ingester.skips import SkipReason
from haiku.ingester.sources import Source

if TYPE_CHECKING:
    from haiku.core.store.reads import Reads
    from haiku.core.store.writer import StoreWriter

# Metadata keys the pipeline owns on every document it writes.
SOURCE_ID = "source_id"
CONTENT_TYPE = "content_type"
CONTENT_HASH = "content_hash"
SOURCE_REVISION = "source_revision"
LANGUAGE = "language"  # code and data files: the language the format table names


class WritableStore(Protocol):
    reads: Reads

    def writer(self) -> StoreWriter: ...


class JobReleased(Exception):
    """The daemon is stopping and this job had not started converting: give it back untouched."""


@dataclass(frozen=True)
class Outcome:
    """What a job did, for logs and counts."""

    action: str  # unchanged | revision | written | deleted | skipped
    sync: SyncUpdate | None
    document_id: str | None = None
    chunks: int = 0
    embedded: int = 0  # chunk texts sent to the encoder
    reused: int = 0  # chunks that kept the stored version's vector
    size: int = 0  # bytes of the source file written
    skip: SkipReason | None = None  # why the file was skipped (action "skipped")

    @property
    def counts(self) -> dict[str, int]:
        return {"chunks": self.chunks, "embedded": self.embedded, "reused": self.reused}


class JobProcessor:
    def __init__(
        self,
        *,
        sync: SyncState,
        pool: FileConverter,
        batcher: EmbedBatcher,
        describer: PictureDescriber | None = None,
        metrics: IngesterMetrics | None = None,
    ) -> None:
        self.sync = sync
        self.pool = pool
        self.batcher = batcher
        self.describer = describer  # processing.pictures: description (docs/pictures.md)
        # Files held in memory at once: enough to keep every conversion worker fed.
        self._reading = asyncio.Semaphore(2 * pool.size)
        self.stopping = False
        self.metrics = metrics  # conversion durations by format (docs/operations.md)
        self._write_locks: dict[str, asyncio.Lock] = {}
        self.writer = DocumentWriter(self._writing)

    async def run(self, job: Job, source: Source, store: WritableStore) -> Outcome:
        if job.op == "delete":
            return await self.delete(job, source, store)
        return await self.upsert(job, source, store)

    async def close(self) -> None:
        await self.writer.close()
        if self.describer is not None:
            await self.describer.aclose()

    def _writing(self, database: str) -> asyncio.Lock:
        """One write at a time per database from this process.

        Jobs finish in bursts (a pool of embeddings completes many documents at
        once); queueing them here, without a deadline, keeps them from timing out
        on the store's writer lock, whose timeout is meant for other writers.
        Document writes take it once per batch (``DocumentWriter``).
        """
        lock = self._write_locks.get(database)
        if lock is None:
            lock = self._write_locks[database] = asyncio.Lock()
        return lock

    async def upsert(self, job: Job, source: Source, store: WritableStore) -> Outcome:
        path = source.path_for(job.uri)
        max_size = source.config.max_file_size
        with self.batcher.producing():
            try:
                source.check_link(path)
            except SymlinkOutsideRootError:
                await self._drop_own_document(job, store)  # ingested before the rule, or while allowed
                raise
            try:
                facts = await asyncio.to_thread(source.inspect, path, max_file_size=max_size)
            except SkippedFileError as exc:
                return await self._skipped(job, store, exc.reason, None)
            state = self.sync.get(job.database, job.source_id, job.uri)
            if not job.forced and state is not None and state.revision == facts.revision and state.document_id:
                return Outcome("unchanged", None, state.document_id)
            # Same bytes as the stored document: only its revision rolls forward, unless that
            # document is gone from the database or the job is forced (re-processing): converted again.
            reuse = not job.forced and state is not None and bool(state.document_id)
            while True:
                async with self._reading:
                    if self.stopping:
                        raise JobReleased()
                    started = time.monotonic()
                    try:
                        digest, converted = await read_and_convert(
                            self.pool, source, facts, max_file_size=max_size,
                            known_hash=state.content_hash if reuse else None,
                        )  # fmt: skip
                    except SkippedFileError as exc:
                        return await self._skipped(job, store, exc.reason, facts.revision)
                    # Pages OCR could not read, named by the converter (docs/ingester.md, "Scanned pages (OCR)").
                    unreadable = ((converted.metadata or {}).get(UNREADABLE_PAGES) or []) if converted else []
                    if converted is not None and self.metrics is not None:
                        self.metrics.converted(facts.format, time.monotonic() - started)
                        self.metrics.count_unreadable_pages(job.database, len(unreadable))
                    metadata = {
                        SOURCE_ID: job.source_id,
                        CONTENT_TYPE: facts.content_type,
                        CONTENT_HASH: digest,
                        SOURCE_REVISION: facts.revision,
                    }
                if converted is not None:
                    break
                async with self._writing(job.database):
                    updated = await self._roll_revision(store, state.document_id, metadata)
                if updated is not False:  # the same bytes: the pages OCR could not read are the same
                    update = SyncUpdate(facts.revision, digest, state.document_id, unreadable=state.unreadable)
                    return Outcome("revision", update, state.document_id)
                reuse = False
            if self.describer is not None:
                await describe_pictures(self.describer, converted, database=job.database, source=job.source_id, uri=job.uri)
            await embed_pictures(self.batcher.embedder, converted, database=job.database, source=job.source_id, uri=job.uri)
            # Read while the batcher still counts this job as producing: its texts are on their way.
            known = await stored_vectors(store, state.document_id if state else None, self.batcher.embedder.identity)
        texts = [c.embed_text for c in converted.chunks]
        plan = plan_embedding(texts, known)
        del known
        vectors = plan.complete(await self.batcher.embed([texts[i] for i in plan.to_embed]))
        chunks = [
            Chunk(
                order=i, content=c.content, headings=c.headings, page_numbers=c.page_numbers,
                item_refs=c.item_refs, boxes=c.boxes,
            )
            for i, c in enumerate(converted.chunks)
        ]  # fmt: skip
        if converted.language:
            metadata = {**metadata, LANGUAGE: converted.language}
        title, given = given_fields(source, job.uri)  # what `add` was told (--title, --meta)
        metadata = {**converted.metadata, **given, **metadata}  # what the converter says of it (a picture cap hit)
        document = Document(uri=job.uri, title=title or converted.title, content=converted.content, metadata=metadata)
        stored = await self.writer.write(job.database, store, document, chunks, vectors, converted.structure)
        return Outcome(
            "written",
            SyncUpdate(facts.revision, digest, stored.id, unreadable=unreadable_json(unreadable)),
            stored.id,
            chunks=len(chunks),
            embedded=len(plan.to_embed),
            reused=plan.reused,
            size=facts.size,
        )

    @staticmethod
    async def _roll_revision(store: WritableStore, document_id: str, source_fields: dict[str, str]) -> bool:
        """The same bytes under a new revision: the document keeps what else its metadata says (its
        language, the pages OCR could not read, what `add` was told) and takes the new source fields.
        False when the document is gone, so the file is converted again."""
        stored = await store.reads.get_document_by_id(document_id)
        if stored is None:
            return False
        return await store.writer().documents.update_document_metadata(
            document_id, {**stored.metadata, **source_fields}
        )

    async def _skipped(self, job: Job, store: WritableStore, reason: SkipReason, revision: str | None) -> Outcome:
        """The file is not taken: the document an earlier version left goes, and the skip is remembered
        at the revision read (so sweeps count it and leave it until it changes)."""
        await self._drop_own_document(job, store)
        update = SyncUpdate(revision=revision, skipped=reason.value) if revision else SyncUpdate(delete=True)
        return Outcome("skipped", update, skip=reason)

    async def _drop_own_document(self, job: Job, store: WritableStore) -> None:
        document = await store.reads.get_document_by_uri(job.uri)
        if document is not None and document.id is not None and document.metadata.get(SOURCE_ID) == job.source_id:
            async with self._writing(job.database):
                await store.writer().documents.delete_document(document.id)

    async def delete(self, job: Job, source: Source, store: WritableStore) -> Outcome:
        path = source.path_for(job.uri)
        if await asyncio.to_thread(source.present, path):
            return Outcome("skipped", None)  # the file is back; its upsert keeps the document
        document = await store.reads.get_document_by_uri(job.uri)
        if document is None or document.id is None:
            return Outcome("deleted", SyncUpdate(delete=True))
        if document.metadata.get(SOURCE_ID) != job.source_id:
            return Outcome("skipped", SyncUpdate(delete=True))  # another source's document: not ours to delete
        async with self._writing(job.database):
            removed = await store.writer().documents.delete_document(document.id)
        return Outcome("deleted", SyncUpdate(delete=True), document.id, removed or 0)
