"""The tables of a database and how rows map to the shared models (docs/storage.md, "Tables").

* ``documents``: one row per document; ``metadata`` is a JSON object string.
* ``chunks``: one row per chunk; ``search_text`` (headings, then text) is what
  the full-text index covers; ``vector`` is a fixed-size float32 list of the
  database's recorded dimension.
* ``revision`` (documents and chunks): the token of the write that made the
  row. A chunk is current only while its revision equals its document row's:
  an update writes the new chunks beside the old ones, then the document row,
  then removes the old chunks, so a crash between any two commits leaves the
  old or the new version visible, never a mix (see ``writes``). Rows written
  before schema version 2 hold no revision (null on both sides: current).
* ``settings``: exactly one row: schema version, embedder identity (JSON),
  creation time, the marker an interrupted rebuild leaves, and the processing
  identity (JSON) the stored documents were converted and chunked with.
* Structure (schema version 3 on): the document row keeps the converted
  docling document (zlib-compressed JSON, ``docling_document``) with its
  ``docling_version``; ``document_items`` holds one row per item (pictures
  with their PNG bytes), ``page_images`` one row per rendered page; chunks
  keep the ``item_refs`` and ``boxes`` they were cut from. Items and pages are
  current while their ``revision`` equals the document row's
  ``structure_revision``: an update whose structure is unchanged (same
  ``structure_digest``) keeps the rows it has instead of rewriting them.
* Picture vectors (schema version 4 on): ``picture_vectors`` holds one row per
  stored picture embedded by a multimodal embedder (docs/pictures.md, "Image
  queries"), keyed like its item row and current by the same revision rule; a
  database written by a text-only embedder keeps it empty.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa

from haiku.core.embedders import EmbedderIdentity
from haiku.core.models import Box, Chunk, Document, SearchResult, as_utc, dumps_metadata, loads_metadata
from haiku.core.sql import sql_string

DOCUMENTS = "documents"
CHUNKS = "chunks"
DOCUMENT_ITEMS = "document_items"
PAGE_IMAGES = "page_images"
PICTURE_VECTORS = "picture_vectors"
SETTINGS = "settings"
# The creation order: settings last, its presence marks a complete database.
TABLES: tuple[str, ...] = (DOCUMENTS, CHUNKS, DOCUMENT_ITEMS, PAGE_IMAGES, PICTURE_VECTORS, SETTINGS)
# Every table holding a document's structure, and those of them schema version 3 added.
STRUCTURE_TABLES: tuple[str, ...] = (DOCUMENT_ITEMS, PAGE_IMAGES, PICTURE_VECTORS)
ADDED_IN_3: tuple[str, ...] = (DOCUMENT_ITEMS, PAGE_IMAGES)
STRUCTURE_TABLES_SINCE = 3  # the version that added the structure tables and columns
PICTURE_VECTORS_SINCE = 4  # the version that added the picture vectors table

TIMESTAMP = pa.timestamp("us", tz="UTC")
REVISION = "revision"

DOCUMENT_FIELDS = ("id", "uri", "title", "metadata", "created_at", "updated_at")
CHUNK_FIELDS = ("id", "document_id", "chunk_order", "content", "headings", "page_numbers", "metadata")
CHUNK_STRUCTURE_FIELDS = ("item_refs", "boxes")  # from schema version 3 on
# The document row's structure columns (schema version 3 on); read only when asked for.
DOCLING_DOCUMENT = "docling_document"
DOCLING_VERSION = "docling_version"
STRUCTURE_REVISION = "structure_revision"
STRUCTURE_DIGEST = "structure_digest"

# A region of a page, in page points with a top-left origin.
BOX_TYPE = pa.struct(
    [
        pa.field("page", pa.int32()),
        pa.field("left", pa.float64()),
        pa.field("top", pa.float64()),
        pa.field("right", pa.float64()),
        pa.field("bottom", pa.float64()),
    ]
)


def other_revision(revision: str) -> str:
    """The WHERE clause of rows holding any revision other than ``revision`` (none counts as other)."""
    return f"({REVISION} IS NULL OR {REVISION} != {sql_string(revision)})"


def tables_at(schema_version: int) -> tuple[str, ...]:
    """The tables a database at ``schema_version`` holds (the structure tables came with version 3)."""
    absent = set()
    if schema_version < PICTURE_VECTORS_SINCE:
        absent.add(PICTURE_VECTORS)
    if schema_version < STRUCTURE_TABLES_SINCE:
        absent.update(ADDED_IN_3)
    return tuple(name for name in TABLES if name not in absent)


def documents_schema() -> pa.Schema:
    return pa.schema(
        [
            pa.field("id", pa.string(), nullable=False),
            pa.field("uri", pa.string()),
            pa.field("title", pa.string()),
            pa.field("content", pa.string()),
            pa.field("metadata", pa.string()),
            pa.field("created_at", TIMESTAMP),
            pa.field("updated_at", TIMESTAMP),
            pa.field(REVISION, pa.string()),
            *document_structure_fields(),
        ]
    )


def document_structure_fields() -> list[pa.Field]:
    """The document row's columns of schema version 3, in the order migration 3 appends them."""
    return [
        pa.field(DOCLING_DOCUMENT, pa.large_binary()),
        pa.field(DOCLING_VERSION, pa.string()),
        pa.field(STRUCTURE_REVISION, pa.string()),
        pa.field(STRUCTURE_DIGEST, pa.string()),
    ]


def chunk_structure_fields() -> list[pa.Field]:
    """The chunk row's columns of schema version 3, in the order migration 3 appends them."""
    return [pa.field("item_refs", pa.list_(pa.string())), pa.field("boxes", pa.list_(BOX_TYPE))]


def document_items_schema() -> pa.Schema:
    return pa.schema(
        [
            pa.field("document_id", pa.string(), nullable=False),
            pa.field("self_ref", pa.string(), nullable=False),
            pa.field("item_order", pa.int32()),
            pa.field("label", pa.string()),
            pa.field("page_numbers", pa.list_(pa.int32())),
            pa.field("boxes", pa.list_(BOX_TYPE)),
            pa.field("text", pa.string()),
            pa.field("caption", pa.string()),
            pa.field("parent_ref", pa.string()),
            pa.field("has_image", pa.bool_()),
            pa.field("image", pa.large_binary()),  # PNG, pictures only
            pa.field(REVISION, pa.string()),
        ]
    )


def picture_vectors_schema(vector_dim: int) -> pa.Schema:
    """One stored picture's vector from a multimodal embedder, keyed and revisioned like its item row."""
    return pa.schema(
        [
            pa.field("document_id", pa.string(), nullable=False),
            pa.field("self_ref", pa.string(), nullable=False),
            pa.field("vector", pa.list_(pa.float32(), vector_dim)),
            pa.field(REVISION, pa.string()),
        ]
    )


def page_images_schema() -> pa.Schema:
    return pa.schema(
        [
            pa.field("document_id", pa.string(), nullable=False),
            pa.field("page", pa.int32(), nullable=False),
            pa.field("width", pa.int32()),
            pa.field("height", pa.int32()),
            pa.field("scale", pa.float32()),
            pa.field("png", pa.large_binary()),
            pa.field(REVISION, pa.string()),
        ]
    )


def chunks_schema(vector_dim: int) -> pa.Schema:
    return pa.schema(
        [
            pa.field("id", pa.string(), nullable=False),
            pa.field("document_id", pa.string(), nullable=False),
            # "order" is an SQL keyword; the column is chunk_order, the model field `order`.
            pa.field("chunk_order", pa.int32()),
            pa.field("content", pa.string()),
            pa.field("search_text", pa.string()),
            pa.field("headings", pa.list_(pa.string())),
            pa.field("page_numbers", pa.list_(pa.int32())),
            pa.field("metadata", pa.string()),
            pa.field("vector", pa.list_(pa.float32(), vector_dim)),
            pa.field(REVISION, pa.string()),  # the column migration 2 appends
            *chunk_structure_fields(),
        ]
    )


def data_table_schemas(vector_dim: int) -> dict[str, pa.Schema]:
    """Every table but the settings, with its schema, in the order a new database creates them."""
    return {
        DOCUMENTS: documents_schema(),
        CHUNKS: chunks_schema(vector_dim),
        DOCUMENT_ITEMS: document_items_schema(),
        PAGE_IMAGES: page_images_schema(),
        PICTURE_VECTORS: picture_vectors_schema(vector_dim),
    }


def settings_schema() -> pa.Schema:
    return pa.schema(
        [
            pa.field("schema_version", pa.int64(), nullable=False),
            pa.field("embedder", pa.string()),
            pa.field("created_at", TIMESTAMP),
            pa.field("rebuild_marker", pa.string()),
            pa.field("processing", pa.string()),  # schema version 3 on
        ]
    )


def vector_dim_of(schema: pa.Schema) -> int:
    vector_type = schema.field("vector").type
    return int(vector_type.list_size)


@dataclass
class StoreSettings:
    """The settings record of one database."""

    schema_version: int
    identity: EmbedderIdentity | None
    created_at: datetime | None = None
    rebuild_marker: dict[str, Any] | None = field(default=None)
    processing: dict[str, Any] | None = field(default=None)  # the processing identity, as recorded

    def to_row(self) -> dict[str, Any]:
        return {
            "schema_version": self.schema_version,
            "embedder": json.dumps(self.identity.to_dict()) if self.identity else None,
            "created_at": self.created_at,
            "rebuild_marker": _json_or_none(self.rebuild_marker),
            "processing": _json_or_none(self.processing),
        }

    def to_table(self) -> pa.Table:
        return pa.Table.from_pylist([self.to_row()], schema=settings_schema())

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> StoreSettings:
        raw_identity = row.get("embedder")
        raw_marker = row.get("rebuild_marker")
        raw_processing = row.get("processing")  # absent before schema version 3
        return cls(
            schema_version=int(row["schema_version"]),
            identity=EmbedderIdentity.from_dict(json.loads(raw_identity)) if raw_identity else None,
            created_at=row.get("created_at"),
            rebuild_marker=json.loads(raw_marker) if raw_marker else None,
            processing=json.loads(raw_processing) if raw_processing else None,
        )


def _json_or_none(value: dict[str, Any] | None) -> str | None:
    return json.dumps(value, sort_keys=True) if value is not None else None


def utc_or_now(value: datetime | None) -> datetime:
    """A stored or given timestamp as UTC (``haiku.core.models.as_utc``); none means now."""
    return as_utc(value) if value is not None else datetime.now(UTC)


def search_text(headings: Sequence[str], content: str) -> str:
    return "\n".join([*headings, content]) if headings else content


def document_row(
    document: Document, revision: str | None = None, structure: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The row of ``document``; ``structure``: its structure columns (``structure.structure_columns``)."""
    return {
        **(structure or {}),
        REVISION: revision,
        "id": document.id,
        "uri": document.uri,
        "title": document.title,
        "content": document.content,
        "metadata": dumps_metadata(document.metadata),
        "created_at": utc_or_now(document.created_at),
        "updated_at": utc_or_now(document.updated_at),
    }


def chunk_row(
    chunk: Chunk, document_id: str, vector: Sequence[float], revision: str | None = None
) -> dict[str, Any]:
    return {
        REVISION: revision,
        "id": chunk.id,
        "document_id": document_id,
        "chunk_order": chunk.order,
        "content": chunk.content,
        "search_text": search_text(chunk.headings, chunk.content),
        "headings": list(chunk.headings),
        "page_numbers": list(chunk.page_numbers),
        "metadata": dumps_metadata(chunk.metadata),
        "vector": [float(x) for x in vector],
        "item_refs": list(chunk.item_refs),
        "boxes": [box.model_dump() for box in chunk.boxes],
    }


def boxes_from(value: Sequence[Mapping[str, Any]] | None) -> list[Box]:
    return [Box(**box) for box in value or []]


def document_from_row(row: Mapping[str, Any], source: str | None) -> Document:
    return Document(
        id=row["id"],
        uri=row.get("uri"),
        title=row.get("title"),
        content=row.get("content") or "",
        metadata=loads_metadata(row.get("metadata")),
        created_at=utc_or_now(row.get("created_at")),
        updated_at=utc_or_now(row.get("updated_at")),
        source=source,
    )


def chunk_from_row(row: Mapping[str, Any], source: str | None) -> Chunk:
    vector = row.get("vector")
    return Chunk(
        id=row["id"],
        document_id=row["document_id"],
        order=int(row.get("chunk_order") or 0),
        content=row.get("content") or "",
        headings=list(row.get("headings") or []),
        page_numbers=[int(p) for p in row.get("page_numbers") or []],
        metadata=loads_metadata(row.get("metadata")),
        source=source,
        item_refs=list(row.get("item_refs") or []),
        boxes=boxes_from(row.get("boxes")),
        vector=list(vector) if vector is not None else None,
    )


def result_from_row(row: Mapping[str, Any], score: float, source: str | None) -> SearchResult:
    vector = row.get("vector")
    return SearchResult(
        content=row.get("content") or "",
        score=float(score),
        source=source,
        chunk_id=row["id"],
        chunk_ids=[row["id"]],
        document_id=row["document_id"],
        order=int(row.get("chunk_order") or 0),
        headings=list(row.get("headings") or []),
        page_numbers=[int(p) for p in row.get("page_numbers") or []],
        item_refs=list(row.get("item_refs") or []),
        boxes=boxes_from(row.get("boxes")),
        vector=list(vector) if vector is not None else None,
    ).read_at_revision(row.get(REVISION) or "")  # checked against the document row by ``enrich``
