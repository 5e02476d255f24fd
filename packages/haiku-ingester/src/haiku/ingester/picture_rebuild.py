"""The picture vectors of a rebuild (docs/pictures.md, "Image queries").

To a multimodal embedder: every stored picture is embedded again and the
picture vectors replaced in one commit. To a text-only one: they are removed,
since they came from the previous model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from haiku.core.embedders import Embedder, is_multimodal

if TYPE_CHECKING:
    from haiku.core.store import Store


async def rebuild_picture_vectors(store: Store, embedder: Embedder, vector_dim: int) -> int:
    """Replace the database's picture vectors with ``embedder``'s; returns how many it holds now."""
    vectors: dict[tuple[str, str], list[float]] = {}
    if is_multimodal(embedder):
        async for batch in store.writer().pictures.iter_pictures():
            embedded = await embedder.embed_images([png for _, png in batch])  # type: ignore[attr-defined]
            vectors.update((key, vector) for (key, _), vector in zip(batch, embedded, strict=True))
    return await store.writer().pictures.replace_picture_vectors(vectors, vector_dim)
