"""An image as the query (docs/pictures.md, "Image queries").

The image is embedded once by the configured multimodal embedder, then each
selected database answers with the chunks holding its nearest stored
pictures (``Store.picture_candidates``): vector-only, no full text, no
reranker (which reads a text query). The lists are fused like a vector
query's (``haiku.core.fusion.plan.VECTOR_BY_COSINE``, its step the pictures'). With a text-only embedder the query
is refused before any database opens or the image is read.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from haiku.core.embedders import EmbedderIdentity, check_selection_identities, get_embedder, is_multimodal
from haiku.core.errors import ImageQueryError, LimitTooLargeError
from haiku.core.fusion.plan import VECTOR_BY_COSINE, Request
from haiku.rag.client._search import SearchResults, skipping_unavailable

if TYPE_CHECKING:
    from haiku.core.store import Store
    from haiku.rag.client._federation import Member, Reach

ImageQuery = bytes | str | Path  # the image's bytes, or the path of its file


class ImageSearchResults(SearchResults):
    """``SearchResults`` plus ``without_pictures``: each database searched that holds no picture
    vector, by name, with what to do about it."""

    def __init__(
        self,
        results: Sequence,
        without_pictures: dict[str, str] | None = None,
        skipped: dict[str, str] | None = None,
    ) -> None:
        super().__init__(results, skipped)
        self.without_pictures: dict[str, str] = dict(without_pictures or {})


def check_image_queries(reach: Reach) -> None:
    """Refuse an image query when the configured embedder is text-only (opens nothing)."""
    identity = EmbedderIdentity.from_config(reach.config.embeddings.model)
    if not identity.multimodal:
        raise ImageQueryError.text_only(identity.describe())


async def search_by_image(
    reach: Reach, image: ImageQuery, *, limit: int | None, sources: Sequence[str] | None
) -> ImageSearchResults:
    config = reach.config
    check_image_queries(reach)
    limit = config.search.limit if limit is None else limit
    LimitTooLargeError.check(limit, config.search.max_limit)
    if limit < 1:
        raise ValueError(f"limit must be at least 1, got {limit}")
    from haiku.core.embedders.multimodal import read_image

    data = read_image(image)
    if sources is not None and len(sources) == 0:
        return ImageSearchResults([])
    embedder = get_embedder(config)
    assert is_multimodal(embedder)
    vector = await embedder.embed_image(data)  # type: ignore[attr-defined]
    request = Request("", vector, limit, from_distance=config.search.vector_index_metric == "cosine")
    plan = dataclasses.replace(VECTOR_BY_COSINE, step=_pictures)
    searched: list[Store] = []

    async def run(members: list[Member]) -> list:
        if len(members) > 1:
            check_selection_identities([(store.name, store.identity) for _, store in members])
        searched[:] = [store for _, store in members]
        return await plan.run(request, members)

    found, skipped = await skipping_unavailable(reach, sources, run)
    return ImageSearchResults(found, await _without_pictures(searched), skipped)


async def _pictures(request: Request, store: Store, checked: bool) -> list:
    """One database's step: the chunks holding its pictures nearest the image (enriched by the plan)."""
    return await store.picture_candidates(
        request.query_vector, limit=request.limit, with_vectors=request.read_vectors, enrich=False
    )


async def _without_pictures(stores: Sequence[Store]) -> dict[str, str]:
    out: dict[str, str] = {}
    for store in stores:
        if await store.count_picture_vectors() == 0:
            name = store.name or "the database"
            out[name] = (
                "holds no picture vectors: it has no stored pictures, or they were stored before "
                f"a multimodal embedder was configured (`haiku-ingester reprocess --db-name {name}` embeds them)"
            )
    return out
