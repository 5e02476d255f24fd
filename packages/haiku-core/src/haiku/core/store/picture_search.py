"""One database's image query: nearest stored pictures, answered as the chunks holding them
(docs/pictures.md, "Image queries").

The picture vectors table (schema version 4 on) holds one vector per stored
picture of a document written by a multimodal embedder. An image query is a
vector query over it alone: no full text, no reranker. A picture row is
current while its revision is its document row's ``structure_revision`` (the
rule of the item rows, see ``structure``); stale rows are skipped and the
list re-fetched longer when that left it short. Each picture found answers
with the chunk that holds it (``haiku.core.picture_holder``), scored
``1 / (1 + distance)`` like a vector candidate; several pictures of one chunk
answer once, with the best score. Results carry no document fields: the
caller enriches them (``Search.enrich``), as it does any bare candidate list.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from haiku.core.models import Chunk, SearchResult
from haiku.core.picture_holder import holding_chunk
from haiku.core.store.handles import Handles
from haiku.core.store.reads import Reads
from haiku.core.store.schema import REVISION
from haiku.core.store.structure import stored_structures
from haiku.core.store.structure_reads import StructureReads

_MAX_REFETCH = 3


class PictureSearch:
    """Image queries over one database's picture vectors."""

    def __init__(self, handles: Handles, reads: Reads, structure: StructureReads) -> None:
        self.handles = handles
        self.reads = reads
        self.structure = structure

    async def count_picture_vectors(self) -> int:
        """How many picture vectors are stored (stale ones included); 0 before schema version 4."""
        self.handles.require_open()
        table = self.handles.picture_vectors
        return 0 if table is None else await table.count_rows()

    async def picture_candidates(
        self, image_vector: Sequence[float], *, limit: int, with_vectors: bool = False
    ) -> list[SearchResult]:
        """The chunks holding the pictures nearest ``image_vector``, best first (see the module docstring).

        ``with_vectors``: each result carries its picture's vector (fusion by cosine under the l2 metric).
        """
        self.handles.require_open()
        if len(image_vector) != self.handles.vector_dim:
            raise ValueError(
                f"the image vector has {len(image_vector)} dimensions, but {self.handles.label} stores "
                f"{self.handles.vector_dim}-dimensional vectors"
            )
        if limit <= 0 or self.handles.picture_vectors is None:
            return []
        want = 2 * limit  # pictures sharing a chunk answer once
        results: list[SearchResult] = []
        read: dict[str, tuple[list[Chunk], list]] = {}  # each document's chunks and items, read once per query
        for _ in range(_MAX_REFETCH):
            rows = await self._nearest(image_vector, want, with_vectors)
            current = await self._current(rows)
            results = await self._answers(current, read)
            if len(rows) < want or len(results) >= limit:
                break
            want *= 2
        return results[:limit]

    async def _nearest(self, vector: Sequence[float], limit: int, with_vectors: bool) -> list[dict[str, Any]]:
        table = self.handles.picture_vectors
        assert table is not None
        columns = ["document_id", "self_ref", REVISION, "_distance", *(["vector"] if with_vectors else [])]
        return await (
            table.query()
            .nearest_to([float(x) for x in vector])
            .distance_type(self.handles.config.search.vector_index_metric)
            .select(columns)
            .limit(limit)
            .to_list()
        )

    async def _current(self, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        stored = await stored_structures(self.handles, list({row["document_id"] for row in rows}))
        return [
            row
            for row in rows
            if row["document_id"] in stored and stored[row["document_id"]].revision == row.get(REVISION)
        ]

    async def _answers(
        self, rows: list[dict[str, Any]], read: dict[str, tuple[list[Chunk], list]]
    ) -> list[SearchResult]:
        out: list[SearchResult] = []
        seen: set[str] = set()
        for row in rows:
            document_id, ref = row["document_id"], row["self_ref"]
            if document_id not in read:
                read[document_id] = (
                    await self.reads.get_chunks(document_id),
                    await self.structure.get_document_items(document_id),
                )
            chunks, items = read[document_id]
            chunk = holding_chunk(chunks, items, ref)
            key = chunk.id if chunk is not None and chunk.id else f"{document_id}\0{ref}"
            if key in seen:
                continue
            seen.add(key)
            score = 1.0 / (1.0 + max(0.0, float(row["_distance"])))
            out.append(_result(chunk, document_id, ref, score, self.handles.name, row.get("vector")))
        return out


def _result(
    chunk: Chunk | None, document_id: str, ref: str, score: float, source: str | None, vector: Any
) -> SearchResult:
    fields: dict[str, Any] = {"content": "", "item_refs": [ref]}
    if chunk is not None:
        fields = {
            "content": chunk.content,
            "chunk_id": chunk.id,
            "chunk_ids": [chunk.id] if chunk.id else [],
            "order": chunk.order,
            "headings": chunk.headings,
            "page_numbers": chunk.page_numbers,
            "item_refs": chunk.item_refs,
            "boxes": chunk.boxes,
        }
    return SearchResult(
        score=score,
        source=source,
        document_id=document_id,
        picture_ref=ref,
        vector=list(vector) if vector is not None else None,
        **fields,
    )
