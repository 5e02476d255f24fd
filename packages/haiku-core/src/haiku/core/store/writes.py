"""Document writes, used by the ingester only (docs/storage.md, "Consistency"; docs/ingester.md).

A reader never sees half a document. Every write of a batch
(``upsert_documents``) stamps one fresh revision on its document rows and
chunks, and commits in three steps:
1. the new chunks are added beside the old ones;
2. the document rows are written: this one commit switches every reader from
   the old chunks to the new ones, since reads keep only chunks whose revision
   is their document row's (see ``reads``);
3. the documents' chunks of any other revision are deleted.
A document's items and page images ride on the same commits (``structure``).
A deleted document's row is removed before its chunks. A crash between two
commits therefore leaves only chunks no reader shows (orphans of an absent
row, or of another revision) beside a complete version; the first write of
each open store removes them (and ``remove_orphan_chunks`` does on demand),
and the next run of the interrupted update writes it once more, whole.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import pyarrow as pa

from haiku.core.logs import get_logger
from haiku.core.models import Chunk, Document, DocumentStructure, dumps_metadata, utcnow
from haiku.core.sql import sql_in, sql_string
from haiku.core.store.gate import WriteGate
from haiku.core.store.handles import Handles
from haiku.core.store.indexes import Indexes
from haiku.core.store.orphans import Orphans, other_revision
from haiku.core.store.reads import batches
from haiku.core.store.schema import (
    DOCUMENTS,
    chunk_row,
    chunks_schema,
    document_row,
    documents_schema,
    utc_or_now,
)
from haiku.core.store.structure import (
    StructurePlan,
    remove_document_structure,
    stored_structures,
)

log = get_logger("haiku.core.store")


def new_id() -> str:
    return str(uuid.uuid4())


# One document to write: the document, its chunks, one vector per chunk, and
# optionally the structure the converter found (items, pictures, page images).
DocumentWrite = (
    tuple[Document, Sequence[Chunk], Sequence[Sequence[float]]]
    | tuple[Document, Sequence[Chunk], Sequence[Sequence[float]], DocumentStructure | None]
)


def _parts(
    item: DocumentWrite,
) -> tuple[Document, Sequence[Chunk], Sequence[Sequence[float]], DocumentStructure | None]:
    document, chunks, vectors, *rest = item
    return document, chunks, vectors, (rest[0] if rest else None)


@dataclass
class _Known:
    by_id: dict[str, tuple[str, datetime]]
    by_uri: dict[str, tuple[str, datetime]]


class Writes:
    """The document writes of the ingester: upserts, bulk loads, metadata updates, deletes."""

    def __init__(self, handles: Handles, gate: WriteGate, indexes: Indexes, orphans: Orphans) -> None:
        self.handles = handles
        self.gate = gate
        self.indexes = indexes
        self.orphans = orphans

    def _check_vectors(self, vectors: Sequence[Sequence[float]]) -> None:
        want = self.handles.vector_dim
        for vector in vectors:
            if len(vector) != want:
                raise ValueError(
                    f"a vector has {len(vector)} dimensions, but {self.handles.label} stores "
                    f"{want}-dimensional vectors"
                )

    async def upsert_document(
        self, document: Document, chunks: Sequence[Chunk], vectors: Sequence[Sequence[float]]
    ) -> Document:
        """Write a document and replace its chunks; returns the stored document.

        The same id, else the same uri, keeps its id (and creation time); a new
        document gets a UUID4. Chunks without an id get one.
        """
        return (await self.upsert_documents([(document, chunks, vectors)]))[0]

    async def upsert_documents(self, items: Sequence[DocumentWrite]) -> list[Document]:
        """Write several documents and replace their chunks, in three commits for the lot.

        Each item is ``(document, chunks, vectors)`` and is treated as
        ``upsert_document`` treats one; the stored documents come back in the
        items' order. The commits are those of the module docstring, then the
        indexes are refreshed once: a batch costs about what one document does. Items naming the same document (same id, or same uri)
        are written once, the last one winning; each gets that stored document.
        """
        return await self._upsert(items, upkeep=True)

    async def load_documents(
        self,
        items: Iterable[DocumentWrite],
        *,
        batch_size: int = 1024,
        progress: Callable[[int], None] | None = None,
    ) -> int:
        """Write many documents fast; returns how many were written.

        ``upsert_documents`` in batches of ``batch_size`` items, under one hold
        of the writer lock, with the tables compacted and the indexes refreshed
        once at the end instead of after every batch (docs/storage.md, "Loading
        many documents"). Each batch is as safe as one ``upsert_documents``: a
        crash loses at most the batch in flight, and readers never see half a
        document. ``progress`` is called with the running count after each batch.
        """
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        written = 0
        async with self.gate.writing("loading documents"):
            batch: list[DocumentWrite] = []
            for item in items:
                batch.append(item)
                if len(batch) >= batch_size:
                    written += len(await self._upsert(batch, upkeep=False))
                    batch = []
                    if progress is not None:
                        progress(written)
            if batch:
                written += len(await self._upsert(batch, upkeep=False))
                if progress is not None:
                    progress(written)
            if written:
                await self.indexes.upkeep_after_write(load=True)
        if written:
            self.gate.written()
        return written

    async def _upsert(self, writes: Sequence[DocumentWrite], *, upkeep: bool) -> list[Document]:
        items = [_parts(item) for item in writes]
        for document, chunks, vectors, _ in items:
            if len(chunks) != len(vectors):
                raise ValueError(
                    f"{len(chunks)} chunks but {len(vectors)} vectors for {document.uri or 'a document'}; "
                    "each chunk needs one vector"
                )
            self._check_vectors(vectors)
        if not items:
            return []
        async with self.gate.writing("writing documents"):
            await self.orphans.remove_once()
            known = await self._existing_documents(items)
            now = utcnow()
            revision = new_id()
            by_id: dict[str, int] = {}  # document id -> index into ``stored`` (the last item wins)
            stored: list[Document] = []
            chunk_sets: list[list[dict[str, Any]]] = []
            structures: dict[str, DocumentStructure | None] = {}
            order: list[int] = []  # per item: its index into ``stored``
            for document, chunks, vectors, structure in items:
                existing = known.by_id.get(document.id) if document.id else None
                if existing is None and document.uri:
                    existing = known.by_uri.get(document.uri)
                if existing is not None:
                    doc_id, created_at = existing
                elif document.id:
                    doc_id, created_at = document.id, utc_or_now(document.created_at)
                else:
                    doc_id, created_at = new_id(), utc_or_now(document.created_at)
                # A later item naming the same document (by id or uri) resolves to this one.
                known.by_id.setdefault(doc_id, (doc_id, created_at))
                if document.uri:
                    known.by_uri.setdefault(document.uri, (doc_id, created_at))
                row = document.model_copy(
                    update={"id": doc_id, "created_at": created_at, "updated_at": now, "source": self.handles.name}
                )
                rows = [
                    chunk_row(chunk.model_copy(update={"id": chunk.id or new_id()}), doc_id, vector, revision)
                    for chunk, vector in zip(chunks, vectors, strict=True)
                ]
                structures[doc_id] = structure  # the last item naming the document wins
                if doc_id in by_id:  # an earlier item named the same document: this one replaces it
                    slot = by_id[doc_id]
                    stored[slot], chunk_sets[slot] = row, rows
                else:
                    slot = by_id[doc_id] = len(stored)
                    stored.append(row)
                    chunk_sets.append(rows)
                order.append(slot)
            chunk_rows = [row for rows in chunk_sets for row in rows]
            ids = list(by_id)
            mine = " OR ".join(sql_in("document_id", batch) for batch in batches(ids))
            # The three commits of the module docstring; their order is what keeps a crash harmless.
            chunks, documents = self.handles.chunks, self.handles.documents
            plan = await self._structure_plan(structures, revision)
            # The rows of both tables are built before the first commit: a value a table cannot
            # hold (text that is not UTF-8) fails the write with nothing committed, no chunk left behind.
            chunk_table = pa.Table.from_pylist(chunk_rows, schema=chunks_schema(self.handles.vector_dim))
            document_table = pa.Table.from_pylist(
                [document_row(d, revision, plan.columns.get(d.id or "")) for d in stored], schema=documents_schema()
            )
            if chunk_rows:
                await chunks.add(chunk_table)
            await plan.add_rows(self.handles)
            await (
                documents.merge_insert("id")
                .when_matched_update_all()
                .when_not_matched_insert_all()
                .execute(document_table)
            )
            await chunks.delete(f"({mine}) AND {other_revision(revision)}")
            await plan.remove_replaced(self.handles)
            if upkeep:
                await self.indexes.upkeep_after_write()
        if upkeep:
            self.gate.written()
        log.debug(
            "store.documents_written", database=self.handles.name, documents=len(stored), chunks=len(chunk_rows)
        )
        return [stored[slot] for slot in order]

    async def _structure_plan(self, structures: dict[str, DocumentStructure | None], revision: str) -> StructurePlan:
        if not self.handles.structured:  # a database before schema version 3 keeps no structure
            return StructurePlan(revision)
        return StructurePlan.of(structures, await stored_structures(self.handles, list(structures)), revision)

    async def _existing_documents(self, items: Sequence[tuple[Document, Any, Any, Any]]) -> _Known:
        """The stored id and creation time of every document the items name, by id and by uri."""
        ids = sorted({d.id for d, _, _, _ in items if d.id})
        uris = sorted({d.uri for d, _, _, _ in items if d.uri})
        known = _Known({}, {})
        wheres = [sql_in("id", batch) for batch in batches(ids)] + [sql_in("uri", b) for b in batches(uris)]
        if not wheres:
            return known
        rows = (
            await self.handles.documents.query()
            .where(" OR ".join(wheres))
            .select(["id", "uri", "created_at"])
            .to_list()
        )
        for row in rows:
            entry = (row["id"], utc_or_now(row["created_at"]))
            known.by_id[row["id"]] = entry
            if row["uri"]:
                known.by_uri.setdefault(row["uri"], entry)
        return known

    async def update_document_metadata(self, document_id: str, metadata: dict[str, Any]) -> bool:
        """Replace a document's metadata (content and chunks untouched); ``False`` if it is absent."""
        async with self.gate.writing("updating document metadata"):
            result = await self.handles.documents.update(
                {"metadata": dumps_metadata(metadata)}, where=f"id = {sql_string(document_id)}"
            )
            await self.indexes.upkeep_after_write((DOCUMENTS,))
        self.gate.written()
        return result.rows_updated > 0

    async def delete_document(self, document_id: str) -> int | None:
        """Remove the document row, then its chunks, items and page images: how many chunks went;
        ``None`` if it was absent."""
        async with self.gate.writing("deleting a document"):
            where = f"id = {sql_string(document_id)}"
            existed = await self.handles.documents.count_rows(where) > 0
            await self.handles.documents.delete(where)
            removed = await self.handles.chunks.delete(f"document_id = {sql_string(document_id)}")
            await remove_document_structure(self.handles, document_id)
        self.gate.written()
        return removed.num_deleted_rows if existed else None
