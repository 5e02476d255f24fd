"""The shared data model (docs/client.md).

``source`` is the configured database name: never stored, set on every read.
In memory a document or chunk is identified by ``(source, id)``.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import PurePosixPath
from typing import Any, Literal, get_args
from urllib.parse import urlparse

from pydantic import BaseModel, Field, PrivateAttr, field_validator

# How a search retrieves: nearest vectors, full text (BM25), or both fused (docs/fusion.md).
SearchType = Literal["vector", "fts", "hybrid"]
SEARCH_TYPES: tuple[SearchType, ...] = get_args(SearchType)


def utcnow() -> datetime:
    return datetime.now(UTC)


def as_utc(value: datetime, *, naive_is_local: bool = False) -> datetime:
    """The one rule for timestamps: UTC-aware.

    A naive one is taken as UTC (Arrow hands stored timestamps back naive), or as
    local time with ``naive_is_local`` (LanceDB's version timestamps are local).
    """
    if value.tzinfo is None and not naive_is_local:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


class Document(BaseModel):
    id: str | None = None
    uri: str | None = None
    title: str | None = None
    content: str = ""
    metadata: dict[str, Any] = Field(default_factory=dict)
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)
    source: str | None = None

    def as_json(self, *, content: bool = True) -> dict[str, Any]:
        """The document as JSON (`haiku-rag list/get --json`, the MCP tools); ``content=False`` leaves the text out."""
        data = self.model_dump(mode="json")
        if not content:
            data.pop("content", None)
        return data

    def format_without_page_images(self) -> str | None:
        """The document's format (``.pptx``) when it is not a PDF, None for a PDF: only PDF pages are
        stored as images (docs/ingester.md#structure-pictures-and-page-images). The ingester records
        the content type; a document without one goes by its uri."""
        content_type = str(self.metadata.get("content_type") or "")
        suffix = PurePosixPath(urlparse(self.uri or "").path).suffix.lower()
        if content_type == "application/pdf" or (not content_type and suffix == ".pdf"):
            return None
        return suffix or content_type or "non-PDF"

    @field_validator("created_at", "updated_at")
    @classmethod
    def _utc(cls, value: datetime) -> datetime:
        return as_utc(value)


class Box(BaseModel):
    """A region of one page: page points, top-left origin (docs/storage.md, "Tables")."""

    page: int
    left: float
    top: float
    right: float
    bottom: float


class DocumentItem(BaseModel):
    """One item of a document's converted structure: a heading, paragraph, table, picture, list item…"""

    document_id: str | None = None
    self_ref: str
    label: str
    order: int = 0
    page_numbers: list[int] = Field(default_factory=list)
    boxes: list[Box] = Field(default_factory=list)
    text: str = ""
    caption: str | None = None
    parent_ref: str | None = None
    has_image: bool = False


class PageImage(BaseModel):
    """One rendered page: PNG bytes; a pixel is a page point times ``scale``."""

    page: int
    width: int
    height: int
    scale: float
    png: bytes = Field(repr=False)


class DocumentStructure(BaseModel):
    """What a document keeps beside its text, as the converter hands it to the store.

    ``docling_document``: the docling document as zlib-compressed JSON, its
    pictures and page images left out (they are ``images`` by item ref, and
    ``pages``).
    """

    docling_document: bytes = Field(repr=False)
    docling_version: str
    items: list[DocumentItem] = Field(default_factory=list)
    images: dict[str, bytes] = Field(default_factory=dict, repr=False)
    pages: list[PageImage] = Field(default_factory=list, repr=False)
    # A multimodal embedder's vector of each stored picture, by item ref (docs/pictures.md).
    image_vectors: dict[str, list[float]] = Field(default_factory=dict, repr=False)


class Chunk(BaseModel):
    id: str | None = None
    document_id: str | None = None
    order: int = 0
    content: str = ""
    headings: list[str] = Field(default_factory=list)
    page_numbers: list[int] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)
    source: str | None = None
    item_refs: list[str] = Field(default_factory=list)  # the document items it was cut from
    boxes: list[Box] = Field(default_factory=list)  # where those items lie on their pages
    # Only filled when a caller asks for stored vectors (cosine fusion).
    vector: list[float] | None = Field(default=None, exclude=True, repr=False)


class SearchResult(BaseModel):
    content: str
    score: float
    source: str | None = None
    chunk_id: str | None = None
    chunk_ids: list[str] = Field(default_factory=list)
    document_id: str | None = None
    document_uri: str | None = None
    document_title: str | None = None
    document_meta: dict[str, Any] = Field(default_factory=dict)
    order: int = 0
    headings: list[str] = Field(default_factory=list)
    page_numbers: list[int] = Field(default_factory=list)
    item_refs: list[str] = Field(default_factory=list)
    boxes: list[Box] = Field(default_factory=list)
    # The picture an image query found (its item ref); the result is the chunk holding it.
    picture_ref: str | None = None
    # Stored vector, read back only for cosine fusion; never serialised.
    vector: list[float] | None = Field(default=None, exclude=True, repr=False)
    # The stored chunk's revision ("" for none), set when read from a store, which
    # drops a result whose document row carries another one (an update caught
    # between its commits); None for a result built elsewhere. Never serialised.
    _revision: str | None = PrivateAttr(default=None)

    @property
    def stored_revision(self) -> str | None:
        """The revision of the chunk this result was read from (see ``_revision``)."""
        return self._revision

    def read_at_revision(self, revision: str) -> SearchResult:
        """Record the revision of the stored chunk this result was read from; returns the result."""
        self._revision = revision
        return self

    def format_for_agent(
        self, rank: int | None = None, total: int | None = None, include_collection: bool = False, with_boxes: bool = False
    ) -> str:
        """The result as a model reads it; ``with_boxes`` adds where the chunk lies on its pages."""
        lines: list[str] = []
        if rank is not None:
            lines.append(f"[{rank}/{total}]" if total is not None else f"[{rank}]")
        lines.append(f"Chunk ID: {self.chunk_id}")
        if include_collection and self.source is not None:
            lines.append(f"Collection: {self.source}")
        if self.document_id:
            lines.append(f"Document ID: {self.document_id}")
        if self.document_title:
            lines.append(f"Title: {self.document_title}")
        if self.document_uri:
            lines.append(f"Source: {self.document_uri}")
        if self.headings:
            lines.append("Section: " + " > ".join(self.headings))
        if self.page_numbers:
            lines.append("Pages: " + ", ".join(str(p) for p in self.page_numbers))
        if self.picture_ref:
            lines.append(f"Picture: {self.picture_ref}")
        if with_boxes and self.boxes:
            lines.append("Boxes: " + "; ".join(box_text(box) for box in self.boxes))
        lines.append(f"Score: {self.score:.4f}")
        lines.append("Content:")
        lines.append(self.content)
        return "\n".join(lines)


class Citation(BaseModel):
    index: int
    source: str | None = None
    document_id: str
    chunk_id: str
    chunk_ids: list[str] = Field(default_factory=list)
    document_uri: str | None = None
    document_title: str | None = None
    document_meta: dict[str, Any] = Field(default_factory=dict)
    page_numbers: list[int] = Field(default_factory=list)
    boxes: list[Box] = Field(default_factory=list)
    """Where the cited chunk lies on its pages (page points, top-left origin); empty without layout."""
    headings: list[str] = Field(default_factory=list)
    content: str = ""
    """The cited chunk's own text."""
    context: str | None = None
    """The passage the model read around the chunk (it with its neighbours), when that was more."""

    def format_for_agent(self) -> str:
        """How a recorded citation is confirmed to the model: index, title, and the database it came from."""
        title = self.document_title or self.document_uri or self.document_id
        where = f" (database: {self.source})" if self.source is not None else ""
        return f"[{self.index}] {title}{where}"


def box_text(box: Box) -> str:
    """A box as text: ``p.2 (72,90)-(523,140)``, page points from the top left."""
    return f"p.{box.page} ({box.left:.0f},{box.top:.0f})-({box.right:.0f},{box.bottom:.0f})"


def dumps_metadata(metadata: dict[str, Any]) -> str:
    return json.dumps(metadata, ensure_ascii=False, sort_keys=True, default=str)


def loads_metadata(raw: str | None) -> dict[str, Any]:
    if not raw:
        return {}
    value = json.loads(raw)
    return value if isinstance(value, dict) else {}
