"""A search result's pictures as MCP content: a label and an image each (docs/mcp.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcp.server.mcpserver.utilities.types import Image
from mcp_types import TextContent

from haiku.core.errors import NotFoundError
from haiku.rag.capability.pictures import load_picture, pictures_of

if TYPE_CHECKING:
    from haiku.rag.client import HaikuRAG


async def result_pictures(
    client: HaikuRAG, chunk_id: str, source: str | None, *, include_collection: bool
) -> list[TextContent | Image]:
    """The pictures chunk ``chunk_id`` (from ``source``, or the first database holding it) holds."""
    chunk = await client.get_chunk_by_id(chunk_id, source=source)
    if chunk is None or chunk.document_id is None:
        raise NotFoundError.chunk(chunk_id, source)
    holder = chunk.source if chunk.source is not None else source
    items = await client.get_document_items(chunk.document_id, source=holder)
    content: list[TextContent | Image] = []
    for item in pictures_of(chunk.item_refs, items):
        picture = await load_picture(client, holder, chunk.document_id, chunk_id, item, with_png=True)
        if picture is None or picture.png is None:
            continue
        content.append(TextContent(type="text", text=picture.label(include_collection=include_collection)))
        content.append(Image(data=picture.png, format="png"))
    if not content:
        content.append(TextContent(type="text", text=f"Chunk {chunk_id} holds no pictures."))
    return content
