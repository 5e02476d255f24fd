"""What a rebuild writes of the picture vectors (docs/pictures.md, "Image queries"; docs/storage.md).

A rebuild to a multimodal embedder embeds every current stored picture again
(``iter_pictures``) and replaces the picture vectors table with the new
vectors in one commit (``replace_picture_vectors``), at the new vector
dimension; a rebuild to a text-only embedder empties it (its vectors came
from the previous model, and a text-only database keeps none).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence

import pyarrow as pa

from haiku.core.sql import sql_string
from haiku.core.store.gate import WriteGate
from haiku.core.store.handles import Handles
from haiku.core.store.reads import batches
from haiku.core.store.schema import DOCUMENT_ITEMS, PICTURE_VECTORS, REVISION, picture_vectors_schema
from haiku.core.store.structure import stored_structures

PictureKey = tuple[str, str]  # (document id, picture item ref)


class PictureRebuild:
    """The stored pictures to embed again, and the table of their vectors to replace."""

    def __init__(self, handles: Handles, gate: WriteGate) -> None:
        self.handles = handles
        self.gate = gate

    async def iter_pictures(self, batch_size: int = 16) -> AsyncIterator[list[tuple[PictureKey, bytes]]]:
        """Every current stored picture's PNG, by (document id, ref), in batches."""
        self.handles.require_open()
        if not self.handles.structured:
            return
        items = self.handles.tables[DOCUMENT_ITEMS]
        listing = await items.query().where("image IS NOT NULL").select(["document_id", "self_ref", REVISION]).to_list()
        stored = await stored_structures(self.handles, list({row["document_id"] for row in listing}))
        keys = sorted(
            (row["document_id"], row["self_ref"])
            for row in listing
            if row["document_id"] in stored and stored[row["document_id"]].revision == row.get(REVISION)
        )
        for batch in batches(keys, max(1, batch_size)):
            out = []
            for document_id, ref in batch:
                revision = stored[document_id].revision
                where = f"document_id = {sql_string(document_id)} AND self_ref = {sql_string(ref)}"
                where += f" AND {REVISION} = {sql_string(revision or '')}"
                rows = await items.query().where(where).select(["image"]).limit(1).to_list()
                if rows and rows[0].get("image"):
                    out.append(((document_id, ref), rows[0]["image"]))
            if out:
                yield out

    async def replace_picture_vectors(self, vectors: Mapping[PictureKey, Sequence[float]], vector_dim: int) -> int:
        """Replace every picture vector with ``vectors`` (none: empty the table), in one commit; how many."""
        if self.handles.picture_vectors is None:
            return 0
        ids = list({document_id for document_id, _ in vectors})
        stored = await stored_structures(self.handles, ids)
        rows = [
            {"document_id": d, "self_ref": ref, "vector": [float(x) for x in vector], REVISION: stored[d].revision}
            for (d, ref), vector in vectors.items()
            if d in stored
        ]
        table = pa.Table.from_pylist(rows, schema=picture_vectors_schema(vector_dim))
        async with self.gate.writing("replacing picture vectors"):
            await self.handles.tables[PICTURE_VECTORS].add(table, mode="overwrite")
        self.gate.written()
        return len(rows)


__all__ = ["PictureKey", "PictureRebuild"]
