"""Writing a document's structure: its items and page images (docs/storage.md, "Tables" and "Consistency").

Items and page images follow the revision rule of chunks, one level removed:
a row of ``document_items`` or ``page_images`` is current while its
``revision`` equals its document row's ``structure_revision``. A write whose
structure differs from the stored one (``structure_digest``) adds the new rows
under the write's revision before the document row is written (commit 1 of
``writes``) and removes the other revisions after it (commit 3); a write whose
structure is the stored one keeps the stored rows and revision, so re-chunking
or reprocessing a PDF does not rewrite its page images. A crash between two
commits leaves rows no reader shows, which the next write removes
(``remove_structure_orphans``).

Items and page images are handed to LanceDB as streams of record batches
(64 items, or one page, per batch), so a write holds no second copy of a
document's pictures or pages.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from haiku.core.logs import get_logger
from haiku.core.models import DocumentStructure
from haiku.core.sql import sql_in, sql_string
from haiku.core.store.handles import Handles
from haiku.core.store.reads import batches
from haiku.core.store.schema import (
    DOCLING_DOCUMENT,
    DOCLING_VERSION,
    DOCUMENT_ITEMS,
    PAGE_IMAGES,
    REVISION,
    STRUCTURE_DIGEST,
    STRUCTURE_REVISION,
    STRUCTURE_TABLES,
    document_items_schema,
    other_revision,
    page_images_schema,
    picture_vectors_schema,
)

log = get_logger("haiku.core.store")

ITEM_BATCH = 64  # item rows per Arrow batch written


def structure_digest(structure: DocumentStructure) -> str:
    """A hash of what the structure tables would hold: items, picture bytes and page images."""
    digest = hashlib.sha256()
    for item in structure.items:
        digest.update(item.model_dump_json(exclude={"document_id"}).encode())
    for ref in sorted(structure.images):
        digest.update(ref.encode())
        digest.update(structure.images[ref])
    for page in structure.pages:
        digest.update(f"{page.page}:{page.width}x{page.height}@{page.scale}".encode())
        digest.update(page.png)
    for ref in sorted(structure.image_vectors):  # none with a text-only embedder: the digest is as before
        digest.update(f"vector:{ref}".encode())
        digest.update(pa.array(structure.image_vectors[ref], type=pa.float32()).buffers()[1])
    return digest.hexdigest()


def structure_tables(handles: Handles) -> list[str]:
    """The structure tables this database (at its tag) has: the picture vectors one from schema version 4."""
    return [name for name in STRUCTURE_TABLES if name in handles.tables]


@dataclass
class StoredStructure:
    """What a document row says of its structure now: the revision and digest of its current rows."""

    revision: str | None
    digest: str | None


def item_rows(document_id: str, structure: DocumentStructure, revision: str) -> list[dict[str, Any]]:
    rows = []
    for item in structure.items:
        image = structure.images.get(item.self_ref)
        rows.append(
            {
                "document_id": document_id,
                "self_ref": item.self_ref,
                "item_order": item.order,
                "label": item.label,
                "page_numbers": list(item.page_numbers),
                "boxes": [box.model_dump() for box in item.boxes],
                "text": item.text,
                "caption": item.caption,
                "parent_ref": item.parent_ref,
                "has_image": image is not None,
                "image": image,
                REVISION: revision,
            }
        )
    return rows


@dataclass
class StructurePlan:
    """The structure part of one batch write: the rows to add, the columns of each row, what to remove."""

    revision: str
    columns: dict[str, dict[str, Any]] = field(default_factory=dict)  # document id -> its structure columns
    written: dict[str, DocumentStructure] = field(default_factory=dict)  # document id -> structure to add
    replaced: list[str] = field(default_factory=list)  # documents whose other revisions go after the write

    @classmethod
    def of(
        cls,
        structures: dict[str, DocumentStructure | None],
        stored: dict[str, StoredStructure],
        revision: str,
    ) -> StructurePlan:
        plan = cls(revision)
        for document_id, structure in structures.items():
            before = stored.get(document_id)
            if structure is None:
                plan.columns[document_id] = {}
                if before is not None and before.revision is not None:
                    plan.replaced.append(document_id)
                continue
            digest = structure_digest(structure)
            kept = before.revision if before is not None and before.digest == digest else None
            plan.columns[document_id] = {
                DOCLING_DOCUMENT: structure.docling_document,
                DOCLING_VERSION: structure.docling_version,
                STRUCTURE_REVISION: kept or revision,
                STRUCTURE_DIGEST: digest,
            }
            if kept is None:
                plan.written[document_id] = structure
                if before is not None:
                    plan.replaced.append(document_id)
        return plan

    async def add_rows(self, handles: Handles) -> None:
        """Commit 1: the new items and page images, beside the current ones."""
        if any(s.items for s in self.written.values()):
            schema = document_items_schema()
            await handles.tables[DOCUMENT_ITEMS].add(pa.RecordBatchReader.from_batches(schema, self._items(schema)))
        if any(s.pages for s in self.written.values()):
            schema = page_images_schema()
            await handles.tables[PAGE_IMAGES].add(pa.RecordBatchReader.from_batches(schema, self._pages(schema)))
        vectors = [row for row in self._picture_vectors() if len(row["vector"]) == handles.vector_dim]
        if vectors and handles.picture_vectors is not None:
            await handles.picture_vectors.add(pa.Table.from_pylist(vectors, schema=picture_vectors_schema(handles.vector_dim)))

    def _picture_vectors(self) -> Iterator[dict[str, Any]]:
        for document_id, structure in self.written.items():
            for ref, vector in structure.image_vectors.items():
                if ref in structure.images:
                    yield {"document_id": document_id, "self_ref": ref, "vector": vector, REVISION: self.revision}

    def _items(self, schema: pa.Schema) -> Iterator[pa.RecordBatch]:
        """Item rows in batches of ``ITEM_BATCH``: a document's pictures never become one Arrow table."""
        for document_id, structure in self.written.items():
            rows = item_rows(document_id, structure, self.revision)
            for start in range(0, len(rows), ITEM_BATCH):
                yield pa.RecordBatch.from_pylist(rows[start : start + ITEM_BATCH], schema=schema)

    def _pages(self, schema: pa.Schema) -> Iterator[pa.RecordBatch]:
        for document_id, structure in self.written.items():
            for page in structure.pages:
                row = {**page.model_dump(), "document_id": document_id, REVISION: self.revision}
                yield pa.RecordBatch.from_pylist([row], schema=schema)

    async def remove_replaced(self, handles: Handles) -> None:
        """Commit 3: the rows of the written documents that their rows no longer point at."""
        kept = {d: c.get(STRUCTURE_REVISION) for d, c in self.columns.items() if d in self.replaced}
        for name in structure_tables(handles):
            table = handles.tables[name]
            for document_id, revision in kept.items():
                where = f"document_id = {sql_string(document_id)}"
                await table.delete(f"{where} AND {other_revision(revision)}" if revision else where)


async def stored_structures(handles: Handles, document_ids: Sequence[str]) -> dict[str, StoredStructure]:
    """The structure revision and digest of each of ``document_ids`` that has a row."""
    out: dict[str, StoredStructure] = {}
    for batch in batches(list(document_ids)):
        rows = (
            await handles.documents.query()
            .where(sql_in("id", batch))
            .select(["id", STRUCTURE_REVISION, STRUCTURE_DIGEST])
            .to_list()
        )
        for row in rows:
            out[row["id"]] = StoredStructure(row.get(STRUCTURE_REVISION), row.get(STRUCTURE_DIGEST))
    return out


async def remove_document_structure(handles: Handles, document_id: str) -> None:
    """Remove every item and page image of a document whose row is gone (caller holds the writer lock)."""
    if not handles.structured:
        return
    for name in structure_tables(handles):
        await handles.tables[name].delete(f"document_id = {sql_string(document_id)}")


async def remove_structure_orphans(handles: Handles) -> int:
    """Delete item and page rows no document row points at (a crash mid-write); returns how many."""
    if not handles.structured:
        return 0
    rows = await handles.documents.query().select(["id", STRUCTURE_REVISION]).to_list()
    present = {row["id"]: row.get(STRUCTURE_REVISION) for row in rows}
    removed = 0
    for name in structure_tables(handles):
        table = handles.tables[name]
        pairs = (await table.query().select(["document_id", REVISION]).to_arrow()).group_by(
            ["document_id", REVISION]
        ).aggregate([]).to_pylist()
        stale = [
            (row["document_id"], row[REVISION])
            for row in pairs
            if row["document_id"] not in present or present[row["document_id"]] != row[REVISION]
        ]
        for document_id, revision in stale:
            where = f"document_id = {sql_string(document_id)} AND " + (
                f"{REVISION} IS NULL" if revision is None else f"{REVISION} = {sql_string(revision)}"
            )
            removed += await table.count_rows(where)
            await table.delete(where)
    if removed:
        log.warning("store.structure_orphans_removed", database=handles.name, rows=removed)
    return removed
