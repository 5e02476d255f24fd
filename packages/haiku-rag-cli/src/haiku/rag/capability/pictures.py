"""The pictures of what a question retrieved, shown to the model (docs/pictures.md).

A picture belongs to a search result when the result's chunk was cut from it
(the picture's item ref is among the chunk's) or from its caption. A model
that reads images (``qa.model.images``) is sent each picture as an image with
a label; any other model reads the pictures' captions as text. At most
``qa.max_images`` pictures are shown per answer, each once; over several
databases every label names the picture's collection.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from haiku.core.errors import HaikuError
from haiku.core.models import DocumentItem, SearchResult

PICTURE_LABELS = frozenset({"picture", "chart"})


class PictureReader(Protocol):
    """What pictures are read through: a client (``HaikuRAG``)."""

    async def get_document_items(self, document_id: str, source: str | None = None) -> list[DocumentItem]: ...

    async def get_picture_bytes(self, document_id: str, picture_ref: str, source: str | None = None) -> bytes: ...


@dataclass(frozen=True)
class Picture:
    """One picture of a result: where it is, the chunk that holds it, and its caption."""

    source: str | None
    document_id: str
    self_ref: str
    chunk_id: str | None
    caption: str | None
    png: bytes | None = None

    def label(self, *, include_collection: bool) -> str:
        """``Picture #/pictures/0 of Chunk ID c7 (Collection: wiki): Figure 1: a map``."""
        text = f"Picture {self.self_ref} of Chunk ID {self.chunk_id}"
        if include_collection and self.source is not None:
            text += f" (Collection: {self.source})"
        return f"{text}: {self.caption}" if self.caption else text

    def data_url(self) -> str:
        assert self.png is not None
        return "data:image/png;base64," + base64.b64encode(self.png).decode("ascii")


def pictures_of(item_refs: Sequence[str], items: Sequence[DocumentItem]) -> list[DocumentItem]:
    """The pictures a chunk cut from ``item_refs`` was cut from, or whose captions it holds,
    in document order."""
    refs = set(item_refs)
    if not refs:
        return []
    parents = {item.parent_ref for item in items if item.self_ref in refs and item.parent_ref}
    return [
        item
        for item in items
        if item.label in PICTURE_LABELS and item.has_image and (item.self_ref in refs or item.self_ref in parents)
    ]


async def load_picture(
    client: PictureReader, source: str | None, document_id: str, chunk_id: str | None, item: DocumentItem,
    *, with_png: bool,
) -> Picture | None:
    """The picture ``item`` of a document, as shown beside chunk ``chunk_id``; None when its image is not kept."""
    png = None
    if with_png:
        try:
            png = await client.get_picture_bytes(document_id, item.self_ref, source=source)
        except HaikuError:  # listed but not kept (a picture over the stored bounds)
            return None
    caption = (item.caption or item.text or "").strip() or None
    return Picture(source, document_id, item.self_ref, chunk_id, caption, png)


class PictureDesk:
    """The pictures shown in one answer: each once, at most ``limit`` of them."""

    def __init__(self, client: PictureReader, *, limit: int, images: bool, multi: bool) -> None:
        self.client = client
        self.limit = limit
        self.images = images
        self.multi = multi
        self.shown: set[tuple[str | None, str, str]] = set()
        self._items: dict[tuple[str | None, str], list[DocumentItem]] = {}

    async def _document_items(self, source: str | None, document_id: str) -> list[DocumentItem]:
        key = (source, document_id)
        if key not in self._items:
            try:
                self._items[key] = await self.client.get_document_items(document_id, source=source)
            except HaikuError:  # a database without stored structure has no pictures to show
                self._items[key] = []
        return self._items[key]

    async def gather(self, results: Sequence[SearchResult]) -> list[Picture]:
        """The pictures of ``results`` not shown yet, in result order, within what is left of the limit."""
        found: list[Picture] = []
        for result in results:
            if not result.item_refs or result.document_id is None:
                continue
            for item in pictures_of(result.item_refs, await self._document_items(result.source, result.document_id)):
                key = (result.source, result.document_id, item.self_ref)
                if key in self.shown or len(self.shown) >= self.limit:
                    continue
                picture = await load_picture(
                    self.client, result.source, result.document_id, result.chunk_id, item, with_png=self.images
                )
                if picture is not None:
                    self.shown.add(key)
                    found.append(picture)
        return found

    def as_text(self, pictures: Sequence[Picture]) -> str:
        """The lines a text-only model reads after the results: each picture's label and caption."""
        described = [p for p in pictures if p.caption]
        if not described:
            return ""
        return "\n".join(["Pictures:", *(f"- {p.label(include_collection=self.multi)}" for p in described)])

    def as_parts(self, pictures: Sequence[Picture]) -> list[dict[str, Any]]:
        """The content parts a model that reads images is shown: a label, then the image, per picture."""
        parts: list[dict[str, Any]] = []
        for picture in pictures:
            parts.append({"type": "text", "text": picture.label(include_collection=self.multi)})
            parts.append({"type": "image_url", "image_url": {"url": picture.data_url()}})
        return parts
