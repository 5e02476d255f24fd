"""Document writes, used by the ingester only (docs/storage.md, docs/ingester.md).

A reader never sees half a document. Every write of a batch
(``upsert_documents``) stamps one fresh revision on its document rows and
chunks, and commits in three steps:
1. the new chunks are added beside the old ones;
2. the document rows are written: this one commit switches every reader from
   the old chunks to the new ones, since reads keep only chunks whose revision
   is their document row's (see ``reads``);
3. the documents' chunks of any other revision are deleted.
A deleted document's row is removed before its chunks. A crash between two
commits therefore leaves only chunks no reader shows (orphans of an absent
row, or of another revision) beside a complete version; the first write of
each open store removes them (and ``remove_orphan_chunks`` does on demand),
and the next run of the interrupted update writes it once more, whole.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

import pyarrow as pa

from haiku.core.embedders import EmbedderIdentity
from haiku.core.models import Chunk, Document, dumps_metadata, utcnow
from haiku.core.store._base import log
from haiku.core.store.indexes import IndexMixin
from haiku.core.store.reads import ReadsMixin, _batches
from haiku.core.store.schema import (
    CHUNKS,
    DOCUMENTS,
    REVISION,
    chunk_from_row,
    chunk_row,
    chunks_schema,
    document_row,
    documents_schema,
    sql_in,
    sql_string,
    utc_or_now,
)


def _new_id() -> str:
    return str(uuid.uuid4())


def _current_in(chunk: dict[str, Any], revisions: dict[str, str | None]) -> bool:
    """Whether a chunk row is current, given every document's revision (``_current_revisions``)."""
    return chunk["document_id"] in revisions and chunk.get(REVISION) == revisions[chunk["document_id"]]


# One document to write: the document, its chunks, and one vector per chunk.
DocumentWrite = tuple[Document, Sequence[Chunk], Sequence[Sequence[float]]]


@dataclass
class _Known:
    by_id: dict[str, tuple[str, datetime]]
    by_uri: dict[str, tuple[str, datetime]]


class WritesMixin(IndexMixin, ReadsMixin):
    _orphans_checked = False

    def _check_vectors(self, vectors: Sequence[Sequence[float]], dim: int | None = None) -> None:
        want = self.vector_dim if dim is None else dim
        for vector in vectors:
            if len(vector) != want:
                raise ValueError(
                    f"a vector has {len(vector)} dimensions, but {self.label} stores {want}-dimensional vectors"
                )

    async def _remove_orphans_once(self) -> None:
        if not self._orphans_checked:
            self._orphans_checked = True
            await self._remove_orphans_locked()

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
        async with self._writing("loading documents"):
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
                await self._upkeep_after_write()
        if written:
            self._after_write()
        return written

    async def _upsert(self, items: Sequence[DocumentWrite], *, upkeep: bool) -> list[Document]:
        for document, chunks, vectors in items:
            if len(chunks) != len(vectors):
                raise ValueError(
                    f"{len(chunks)} chunks but {len(vectors)} vectors for {document.uri or 'a document'}; "
                    "each chunk needs one vector"
                )
            self._check_vectors(vectors)
        if not items:
            return []
        async with self._writing("writing documents"):
            await self._remove_orphans_once()
            known = await self._existing_documents(items)
            now = utcnow()
            revision = _new_id()
            by_id: dict[str, int] = {}  # document id -> index into ``stored`` (the last item wins)
            stored: list[Document] = []
            chunk_sets: list[list[dict[str, Any]]] = []
            order: list[int] = []  # per item: its index into ``stored``
            for document, chunks, vectors in items:
                existing = known.by_id.get(document.id) if document.id else None
                if existing is None and document.uri:
                    existing = known.by_uri.get(document.uri)
                if existing is not None:
                    doc_id, created_at = existing
                elif document.id:
                    doc_id, created_at = document.id, utc_or_now(document.created_at)
                else:
                    doc_id, created_at = _new_id(), utc_or_now(document.created_at)
                # A later item naming the same document (by id or uri) resolves to this one.
                known.by_id.setdefault(doc_id, (doc_id, created_at))
                if document.uri:
                    known.by_uri.setdefault(document.uri, (doc_id, created_at))
                row = document.model_copy(
                    update={"id": doc_id, "created_at": created_at, "updated_at": now, "source": self.name}
                )
                rows = [
                    chunk_row(chunk.model_copy(update={"id": chunk.id or _new_id()}), doc_id, vector, revision)
                    for chunk, vector in zip(chunks, vectors, strict=True)
                ]
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
            mine = " OR ".join(sql_in("document_id", batch) for batch in _batches(ids))
            # The three commits of the module docstring; their order is what keeps a crash harmless.
            if chunk_rows:
                await self._chunks.add(pa.Table.from_pylist(chunk_rows, schema=chunks_schema(self.vector_dim)))
            await (
                self._documents.merge_insert("id")
                .when_matched_update_all()
                .when_not_matched_insert_all()
                .execute(
                    pa.Table.from_pylist([document_row(d, revision) for d in stored], schema=documents_schema())
                )
            )
            await self._chunks.delete(f"({mine}) AND ({REVISION} IS NULL OR {REVISION} != {sql_string(revision)})")
            if upkeep:
                await self._upkeep_after_write()
        if upkeep:
            self._after_write()
        log.debug(
            "store.documents_written", database=self.name, documents=len(stored), chunks=len(chunk_rows)
        )
        return [stored[slot] for slot in order]

    async def _existing_documents(self, items: Sequence[DocumentWrite]) -> _Known:
        """The stored id and creation time of every document the items name, by id and by uri."""
        ids = sorted({d.id for d, _, _ in items if d.id})
        uris = sorted({d.uri for d, _, _ in items if d.uri})
        known = _Known({}, {})
        wheres = [sql_in("id", batch) for batch in _batches(ids)] + [sql_in("uri", b) for b in _batches(uris)]
        if not wheres:
            return known
        rows = (
            await self._documents.query()
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
        async with self._writing("updating document metadata"):
            result = await self._documents.update(
                {"metadata": dumps_metadata(metadata)}, where=f"id = {sql_string(document_id)}"
            )
            await self._upkeep_after_write((DOCUMENTS,))
        self._after_write()
        return result.rows_updated > 0

    async def delete_document(self, document_id: str) -> int | None:
        """Remove the document row, then its chunks: how many chunks went; ``None`` if it was absent."""
        async with self._writing("deleting a document"):
            where = f"id = {sql_string(document_id)}"
            existed = await self._documents.count_rows(where) > 0
            await self._documents.delete(where)
            removed = await self._chunks.delete(f"document_id = {sql_string(document_id)}")
        self._after_write()
        return removed.num_deleted_rows if existed else None

    async def remove_orphan_chunks(self) -> int:
        """Delete chunks that are not current (see ``reads``); returns how many."""
        async with self._writing("removing orphan chunks"):
            removed = await self._remove_orphans_locked()
        if removed:
            self._after_write()
        return removed

    async def _current_revisions(self) -> dict[str, str | None]:
        """Each document's id and revision."""
        columns = ["id", REVISION] if self._revisioned else ["id"]
        rows = (await self._documents.query().select(columns).to_arrow()).to_pylist()
        return {row["id"]: row.get(REVISION) for row in rows}

    async def _remove_orphans_locked(self) -> int:
        self._orphans_checked = True
        columns = ["document_id", REVISION] if self._revisioned else ["document_id"]
        chunk_docs = await self._chunks.query().select(columns).to_arrow()
        if chunk_docs.num_rows == 0:
            return 0
        distinct = chunk_docs.group_by(columns).aggregate([]).to_pylist()  # one row per (document, revision)
        pairs = {(row["document_id"], row.get(REVISION)) for row in distinct}
        present = await self._current_revisions()
        orphans = sorted({doc for doc, _ in pairs if doc not in present})
        # Documents holding chunks of another revision than their row's: an update cut short.
        stale = sorted({doc for doc, rev in pairs if doc in present and rev != present[doc]})
        wheres = [sql_in("document_id", batch) for batch in _batches(orphans)]
        for doc in stale:
            keep = present[doc]
            other = f"{REVISION} IS NOT NULL" if keep is None else f"({REVISION} IS NULL OR {REVISION} != {sql_string(keep)})"
            wheres.append(f"document_id = {sql_string(doc)} AND {other}")
        removed = 0
        for where in wheres:
            removed += await self._chunks.count_rows(where)
            await self._chunks.delete(where)
        if removed:
            log.warning(
                "store.orphan_chunks_removed", database=self.name, chunks=removed, documents=len(orphans) + len(stale)
            )
        return removed

    # --- rebuild support ------------------------------------------------------------
    async def iter_chunk_batches(
        self, batch_size: int = 256, *, with_vectors: bool = False
    ) -> AsyncIterator[list[Chunk]]:
        """Every chunk whose document exists, in batches, ordered by document then order.

        The chunk ids are listed up front and each batch is read by id, so
        writes made while iterating (``replace_vectors``) do not disturb it.
        """
        self._require_open()
        columns = ["id", "document_id", "chunk_order", REVISION] if self._revisioned else ["id", "document_id", "chunk_order"]
        listing = await self._chunks.query().select(columns).to_list()
        present = await self._current_revisions()
        listing = [row for row in listing if _current_in(row, present)]
        listing.sort(key=lambda r: (r["document_id"], r["chunk_order"] or 0, r["id"]))
        ids = [row["id"] for row in listing]
        columns = self._chunk_columns(with_vectors)
        for batch in _batches(ids, max(1, batch_size)):
            rows = await self._chunks.query().where(sql_in("id", batch)).select(columns).to_list()
            by_id = {row["id"]: row for row in rows if _current_in(row, present)}
            chunks = [chunk_from_row(by_id[i], self.name) for i in batch if i in by_id]
            if chunks:
                yield chunks

    async def replace_vectors(self, vectors: dict[str, Sequence[float]]) -> None:
        """Replace stored vectors by chunk id (rebuild).

        Vectors of the stored dimension may replace any subset, in one commit.
        Vectors of another dimension change the chunk schema, so they must cover
        every chunk and replace them all in one commit.
        """
        if not vectors:
            return
        dims = {len(v) for v in vectors.values()}
        if len(dims) != 1:
            raise ValueError(f"vectors of several dimensions given: {sorted(dims)}")
        dim = dims.pop()
        async with self._writing("replacing vectors"):
            if dim == self.vector_dim:
                ids = list(vectors)
                flat = pa.array([float(x) for i in ids for x in vectors[i]], type=pa.float32())
                update = pa.table({"id": ids, "vector": pa.FixedSizeListArray.from_arrays(flat, dim)})
                await self._chunks.merge_insert("id").when_matched_update_all().execute(update)
            else:
                await self._rewrite_chunks_with_dimension(vectors, dim)
            await self._upkeep_after_write((CHUNKS,))
        self._after_write()

    async def _rewrite_chunks_with_dimension(self, vectors: dict[str, Sequence[float]], dim: int) -> None:
        had_vector_index = await self._has_vector_index()
        present = await self._current_revisions()
        rows = await self._chunks.query().select([*self._chunk_columns(), "search_text"]).to_list()
        rows = [row for row in rows if _current_in(row, present)]  # orphans are dropped
        missing = [row["id"] for row in rows if row["id"] not in vectors]
        if missing:
            raise ValueError(
                f"{self.label} stores {self.vector_dim}-dimensional vectors; changing to {dim} dimensions "
                f"rewrites every chunk at once, but {len(missing)} chunk(s) have no new vector"
            )
        for row in rows:
            row["vector"] = [float(x) for x in vectors[row["id"]]]
        table = pa.Table.from_pylist(rows, schema=chunks_schema(dim))
        await self._chunks.add(table, mode="overwrite")
        self._vector_dim = dim
        if had_vector_index:
            await self._rebuild_vector_index()
        log.info("store.vector_dimension_changed", database=self.name, vector_dim=dim, chunks=len(rows))

    async def record_identity(self, identity: EmbedderIdentity) -> None:
        """Record the embedder the stored vectors come from."""
        async with self._writing("recording the embedder identity"):
            current = await self._read_settings()
            await self._write_settings(replace(current, identity=identity))
            if current.identity != identity and await self._has_vector_index():
                # The index's partitions were trained on the previous model's vectors.
                await self._rebuild_vector_index()
        self._after_write()

    async def set_rebuild_marker(self, marker: dict[str, Any] | None) -> None:
        """Leave (a dict) or clear (``None``) the marker of a rebuild in progress.

        ``info`` reports it and opening warns about it, so an interrupted
        rebuild is noticed; rerunning the rebuild completes and clears it.
        """
        async with self._writing("marking a rebuild"):
            current = await self._read_settings()
            await self._write_settings(replace(current, rebuild_marker=marker))
        self._after_write()
