"""A document's stored structure, its pictures and its chunks drawn on their pages
(docs/client.md#pictures-and-pages).

A chunk or picture id carries no database identity, so on a client covering
several databases the two picture methods need ``source``; the items of a
document are a lookup by document id and answer from the first database
holding it, as the other lookups do.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from haiku.core.errors import AmbiguousDatabaseError, NoPageLayoutError, NotFoundError

if TYPE_CHECKING:
    from PIL.Image import Image

    from haiku.core.models import DocumentItem
    from haiku.core.store import Store
    from haiku.rag.client._federation import Reach


async def _store_for(reach: Reach, operation: str, source: str | None) -> Store:
    """The database ``source`` names; on a set, ``source`` is required."""
    if source is None and reach.covered.covers_multiple:
        reach.federation()  # a client that is not open says so first
        raise AmbiguousDatabaseError.needs_source(operation, reach.covered.names)
    return (await reach.member(source)).store


async def document_items(reach: Reach, document_id: str, source: str | None) -> list[DocumentItem]:
    """The items of a document in document order, from ``source`` or the first database holding it."""
    selected = await reach.members(None if source is None else [source])
    found = await asyncio.gather(*(member.store.reads.get_document_by_id(document_id) for member in selected))
    holder = next((member.store for member, document in zip(selected, found, strict=True) if document), None)
    if holder is None:
        raise NotFoundError.document(document_id, [member.store.name for member in selected])
    return await holder.structure.get_document_items(document_id)


async def picture_bytes(reach: Reach, document_id: str, picture_ref: str, source: str | None) -> bytes:
    """The PNG of one picture of a document."""
    store = await _store_for(reach, "get_picture_bytes", source)
    return await store.structure.get_picture_bytes(document_id, picture_ref)


async def visualize_chunk(reach: Reach, chunk_id: str, source: str | None) -> list[Image]:
    """Each page the chunk touches, in page order, with the chunk's boxes drawn on it.

    Every image's ``info["page"]`` is its page number.
    """
    store = await _store_for(reach, "visualize_chunk", source)
    chunk = await store.reads.get_chunk_by_id(chunk_id)
    if chunk is None or chunk.document_id is None:
        raise NotFoundError.chunk(chunk_id, store.name)
    if not chunk.boxes:
        raise NoPageLayoutError.no_boxes(chunk_id, store.name)
    pages = sorted({box.page for box in chunk.boxes})
    images = await store.structure.get_page_images(chunk.document_id, pages)
    missing = [page for page in pages if page not in images]
    if missing:
        document = await store.reads.get_document_by_id(chunk.document_id)
        kind = document.format_without_page_images() if document is not None else None
        raise NoPageLayoutError.no_images(chunk_id, store.name, missing, kind=kind)
    from haiku.rag.client._drawing import draw_boxes

    return [draw_boxes(images[page], [box for box in chunk.boxes if box.page == page]) for page in pages]
