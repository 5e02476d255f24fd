"""What a rebuild with another embedder writes (docs/storage.md, "The embedder identity").

``haiku-ingester rebuild`` reads every current chunk (``iter_chunk_batches``),
embeds it again and replaces the stored vectors (``replace_vectors``): vectors
of the stored dimension in place, vectors of another dimension by rewriting
the chunks table in one commit. It records the new embedder
(``record_identity``) and, while it runs, a marker in the settings record
(``set_rebuild_marker``) that ``info`` reports and opening warns about.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import replace
from typing import Any

import pyarrow as pa

from haiku.core.embedders import EmbedderIdentity
from haiku.core.logs import get_logger
from haiku.core.models import Chunk
from haiku.core.sql import sql_in
from haiku.core.store.gate import WriteGate
from haiku.core.store.handles import Handles
from haiku.core.store.indexes import Indexes
from haiku.core.store.orphans import Orphans, current_in
from haiku.core.store.reads import batches
from haiku.core.store.schema import CHUNKS, chunk_from_row, chunks_schema

log = get_logger("haiku.core.store")


class Rebuild:
    """Re-embedding support: chunk batches to read, vectors to replace, the identity and marker to record."""

    def __init__(self, handles: Handles, gate: WriteGate, indexes: Indexes, orphans: Orphans) -> None:
        self.handles = handles
        self.gate = gate
        self.indexes = indexes
        self.orphans = orphans

    async def iter_chunk_batches(
        self, batch_size: int = 256, *, with_vectors: bool = False
    ) -> AsyncIterator[list[Chunk]]:
        """Every chunk whose document exists, in batches, ordered by document then order.

        The chunk ids are listed up front and each batch is read by id, so
        writes made while iterating (``replace_vectors``) do not disturb it.
        """
        self.handles.require_open()
        chunks = self.handles.chunks
        columns = self.handles.with_revision(["id", "document_id", "chunk_order"])
        listing = await chunks.query().select(columns).to_list()
        present = await self.orphans.current_revisions()
        listing = [row for row in listing if current_in(row, present)]
        listing.sort(key=lambda r: (r["document_id"], r["chunk_order"] or 0, r["id"]))
        ids = [row["id"] for row in listing]
        columns = self.handles.chunk_columns(with_vectors)
        for batch in batches(ids, max(1, batch_size)):
            rows = await chunks.query().where(sql_in("id", batch)).select(columns).to_list()
            by_id = {row["id"]: row for row in rows if current_in(row, present)}
            found = [chunk_from_row(by_id[i], self.handles.name) for i in batch if i in by_id]
            if found:
                yield found

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
        async with self.gate.writing("replacing vectors"):
            if dim == self.handles.vector_dim:
                ids = list(vectors)
                flat = pa.array([float(x) for i in ids for x in vectors[i]], type=pa.float32())
                update = pa.table({"id": ids, "vector": pa.FixedSizeListArray.from_arrays(flat, dim)})
                await self.handles.chunks.merge_insert("id").when_matched_update_all().execute(update)
            else:
                await self._rewrite_chunks_with_dimension(vectors, dim)
            await self.indexes.upkeep_after_write((CHUNKS,))
        self.gate.written()

    async def _rewrite_chunks_with_dimension(self, vectors: dict[str, Sequence[float]], dim: int) -> None:
        had_vector_index = await self.indexes.has_vector_index()
        present = await self.orphans.current_revisions()
        rows = await self.handles.chunks.query().select([*self.handles.chunk_columns(), "search_text"]).to_list()
        rows = [row for row in rows if current_in(row, present)]  # orphans are dropped
        missing = [row["id"] for row in rows if row["id"] not in vectors]
        if missing:
            raise ValueError(
                f"{self.handles.label} stores {self.handles.vector_dim}-dimensional vectors; changing to {dim} dimensions "
                f"rewrites every chunk at once, but {len(missing)} chunk(s) have no new vector"
            )
        for row in rows:
            row["vector"] = [float(x) for x in vectors[row["id"]]]
        table = pa.Table.from_pylist(rows, schema=chunks_schema(dim))
        await self.handles.chunks.add(table, mode="overwrite")
        self.handles.vector_dim = dim
        if had_vector_index:
            await self.indexes.rebuild_vector_index()
        log.info("store.vector_dimension_changed", database=self.handles.name, vector_dim=dim, chunks=len(rows))

    async def record_identity(self, identity: EmbedderIdentity) -> None:
        """Record the embedder the stored vectors come from."""
        async with self.gate.writing("recording the embedder identity"):
            current = await self.handles.read_settings()
            await self.handles.write_settings(replace(current, identity=identity))
            if current.identity != identity and await self.indexes.has_vector_index():
                # The index's partitions were trained on the previous model's vectors.
                await self.indexes.rebuild_vector_index()
        self.gate.written()

    async def set_rebuild_marker(self, marker: dict[str, Any] | None) -> None:
        """Leave (a dict) or clear (``None``) the marker of a rebuild in progress.

        ``info`` reports it and opening warns about it, so an interrupted
        rebuild is noticed; rerunning the rebuild completes and clears it.
        """
        async with self.gate.writing("marking a rebuild"):
            current = await self.handles.read_settings()
            await self.handles.write_settings(replace(current, rebuild_marker=marker))
        self.gate.written()
