"""Reading a document's structure: items, pictures and page images (docs/storage.md, "Tables").

Reads take no lock. Only the rows of the document row's current
``structure_revision`` are read (see ``structure``), so a read during an
update sees the old structure or the new one, never a mix. A database before
schema version 3, or read at a tag taken before it, has no structure tables:
every document reports no structure there.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Sequence
from typing import Any

from haiku.core.errors import PictureNotFoundError
from haiku.core.models import DocumentItem, PageImage
from haiku.core.sql import sql_string
from haiku.core.store._failures import names_read_failures
from haiku.core.store.handles import Handles
from haiku.core.store.schema import (
    DOCLING_DOCUMENT,
    DOCLING_VERSION,
    DOCUMENT_ITEMS,
    PAGE_IMAGES,
    REVISION,
    STRUCTURE_REVISION,
    boxes_from,
)

ITEM_COLUMNS = [
    "document_id", "self_ref", "item_order", "label", "page_numbers", "boxes", "text", "caption", "parent_ref",
    "has_image",
]  # fmt: skip


def item_from_row(row: dict[str, Any]) -> DocumentItem:
    return DocumentItem(
        document_id=row["document_id"],
        self_ref=row["self_ref"],
        label=row.get("label") or "",
        order=int(row.get("item_order") or 0),
        page_numbers=[int(p) for p in row.get("page_numbers") or []],
        boxes=boxes_from(row.get("boxes")),
        text=row.get("text") or "",
        caption=row.get("caption"),
        parent_ref=row.get("parent_ref"),
        has_image=bool(row.get("has_image")),
    )


class StructureReads:
    """The structure reads of one database: items, picture bytes, page images, the docling document."""

    def __init__(self, handles: Handles) -> None:
        self.handles = handles

    async def _structure_revision(self, document_id: str) -> tuple[bool, str | None]:
        """Whether the document row exists, and the revision of its current structure (``None``: none)."""
        if not self.handles.structured:
            exists = await self.handles.documents.count_rows(f"id = {sql_string(document_id)}") > 0
            return exists, None
        rows = (
            await self.handles.documents.query()
            .where(f"id = {sql_string(document_id)}")
            .select([STRUCTURE_REVISION])
            .limit(1)
            .to_list()
        )
        return (True, rows[0].get(STRUCTURE_REVISION)) if rows else (False, None)

    async def _current_rows(
        self, table: str, document_id: str, columns: list[str], where: str | None = None, limit: int | None = None
    ) -> tuple[bool, str | None, list[dict[str, Any]]]:
        """Whether the document exists, its structure revision, and its current rows of ``table``.

        Finding none while the row names a revision means the read caught an
        update between its commits on a stale handle: read once more at the
        latest version (a live store only).
        """
        for attempt in range(2):
            exists, revision = await self._structure_revision(document_id)
            if revision is None:
                return exists, None, []
            clause = f"document_id = {sql_string(document_id)} AND {REVISION} = {sql_string(revision)}"
            query = self.handles.tables[table].query().where(f"{clause} AND ({where})" if where else clause)
            query = query.select(columns)
            rows = await (query.limit(limit) if limit is not None else query).to_list()
            if rows or attempt or self.handles.tag is not None:
                return exists, revision, rows
            await self.handles.refresh_to_latest()
        return exists, revision, rows

    @names_read_failures
    async def has_structure(self, document_id: str) -> bool:
        """Whether the document has stored structure: items ``get_document_items`` returns, in any
        format (PDF, Word, markdown, HTML…), which section expansion reads.

        False for documents written before schema version 3 (or read at a tag
        taken before it) and for those converted without structure (plain text, code).
        """
        _, _, rows = await self._current_rows(DOCUMENT_ITEMS, document_id, ["self_ref"], None, limit=1)
        return bool(rows)

    @names_read_failures
    async def has_page_layout(self, document_id: str) -> bool:
        """Whether the document's items are placed on pages (boxes: a PDF), which ``visualize`` needs.
        Implies ``has_structure``; false for formats with no pages (markdown, HTML, Word…)."""
        where = "array_length(boxes) > 0"
        _, _, rows = await self._current_rows(DOCUMENT_ITEMS, document_id, ["self_ref"], where, limit=1)
        return bool(rows)

    @names_read_failures
    async def get_document_items(self, document_id: str) -> list[DocumentItem]:
        """The document's items in document order; none for a document without stored structure."""
        _, _, rows = await self._current_rows(DOCUMENT_ITEMS, document_id, ITEM_COLUMNS)
        return sorted((item_from_row(row) for row in rows), key=lambda item: item.order)

    @names_read_failures
    async def get_picture_bytes(self, document_id: str, self_ref: str) -> bytes:
        """The PNG of one picture item; ``PictureNotFoundError`` when the document or picture is not there."""
        where = f"self_ref = {sql_string(self_ref)} AND image IS NOT NULL"
        exists, _, rows = await self._current_rows(DOCUMENT_ITEMS, document_id, ["image"], where)
        if not rows:
            raise PictureNotFoundError.of(self.handles.label, document_id, self_ref, document_exists=exists)
        return bytes(rows[0]["image"])

    @names_read_failures
    async def get_page_images(self, document_id: str, pages: Sequence[int]) -> dict[int, PageImage]:
        """The stored images of ``pages`` (1-based) by page number; pages without one are left out."""
        wanted = sorted({int(p) for p in pages})
        if not wanted:
            return {}
        where = f"page IN ({', '.join(str(p) for p in wanted)})"
        columns = ["page", "width", "height", "scale", "png"]
        _, _, rows = await self._current_rows(PAGE_IMAGES, document_id, columns, where)
        return {
            int(row["page"]): PageImage(
                page=int(row["page"]),
                width=int(row["width"]),
                height=int(row["height"]),
                scale=float(row["scale"]),
                png=bytes(row["png"]),
            )
            for row in rows
        }

    @names_read_failures
    async def get_docling_document(self, document_id: str) -> tuple[dict[str, Any], str] | None:
        """The stored docling document as its JSON object, with the docling version that made it; or ``None``."""
        if not self.handles.structured:
            return None
        rows = (
            await self.handles.documents.query()
            .where(f"id = {sql_string(document_id)}")
            .select([DOCLING_DOCUMENT, DOCLING_VERSION])
            .limit(1)
            .to_list()
        )
        if not rows or rows[0].get(DOCLING_DOCUMENT) is None:
            return None
        return json.loads(zlib.decompress(rows[0][DOCLING_DOCUMENT])), rows[0].get(DOCLING_VERSION) or ""
