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
  creation time, and the marker an interrupted rebuild leaves.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa

from haiku.core.embedders import EmbedderIdentity
from haiku.core.models import Chunk, Document, SearchResult, as_utc, dumps_metadata, loads_metadata

DOCUMENTS = "documents"
CHUNKS = "chunks"
SETTINGS = "settings"
TABLES: tuple[str, ...] = (DOCUMENTS, CHUNKS, SETTINGS)  # the creation order: settings last

TIMESTAMP = pa.timestamp("us", tz="UTC")
REVISION = "revision"

DOCUMENT_FIELDS = ("id", "uri", "title", "metadata", "created_at", "updated_at")
CHUNK_FIELDS = ("id", "document_id", "chunk_order", "content", "headings", "page_numbers", "metadata")


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
            pa.field(REVISION, pa.string()),  # last: the column migration 2 appends
        ]
    )


def settings_schema() -> pa.Schema:
    return pa.schema(
        [
            pa.field("schema_version", pa.int64(), nullable=False),
            pa.field("embedder", pa.string()),
            pa.field("created_at", TIMESTAMP),
            pa.field("rebuild_marker", pa.string()),
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

    def to_row(self) -> dict[str, Any]:
        return {
            "schema_version": self.schema_version,
            "embedder": json.dumps(self.identity.to_dict()) if self.identity else None,
            "created_at": self.created_at,
            "rebuild_marker": json.dumps(self.rebuild_marker) if self.rebuild_marker is not None else None,
        }

    def to_table(self) -> pa.Table:
        return pa.Table.from_pylist([self.to_row()], schema=settings_schema())

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> StoreSettings:
        raw_identity = row.get("embedder")
        raw_marker = row.get("rebuild_marker")
        return cls(
            schema_version=int(row["schema_version"]),
            identity=EmbedderIdentity.from_dict(json.loads(raw_identity)) if raw_identity else None,
            created_at=row.get("created_at"),
            rebuild_marker=json.loads(raw_marker) if raw_marker else None,
        )


def utc_or_now(value: datetime | None) -> datetime:
    """A stored or given timestamp as UTC (``haiku.core.models.as_utc``); none means now."""
    return as_utc(value) if value is not None else datetime.now(UTC)


def search_text(headings: Sequence[str], content: str) -> str:
    return "\n".join([*headings, content]) if headings else content


def document_row(document: Document, revision: str | None = None) -> dict[str, Any]:
    return {
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
    }


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
        vector=list(vector) if vector is not None else None,
    ).read_at_revision(row.get(REVISION) or "")  # checked against the document row by ``enrich``
