"""Federated search (SPEC §11): select, check, embed once, retrieve together, fuse.

Document fields come with each database's candidates (a store reads the
document rows anyway, to skip chunks whose document is gone); context
expansion is the caller's, on the survivors (``client.expand_context``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal, get_args

from haiku.core.embedders import check_selection_identities, get_embedder
from haiku.core.models import SearchResult
from haiku.rag.client import fusion
from haiku.rag.client.fusion import Ranked

if TYPE_CHECKING:
    from haiku.core.store import Store
    from haiku.rag.client._client import HaikuRAG

SearchType = Literal["vector", "fts", "hybrid"]
SEARCH_TYPES: tuple[str, ...] = get_args(SearchType)


def _check_arguments(limit: int, search_type: str) -> None:
    if search_type not in SEARCH_TYPES:
        raise ValueError(f"search_type must be one of {', '.join(SEARCH_TYPES)}, got {search_type!r}")
    if limit < 1:
        raise ValueError(f"limit must be at least 1, got {limit}")


async def search(
    client: HaikuRAG,
    query: str,
    *,
    limit: int | None,
    search_type: str | None,
    filter: str | None,
    sources: Sequence[str] | None,
) -> list[SearchResult]:
    config = client.config
    limit = config.search.limit if limit is None else limit
    search_type = search_type or "hybrid"
    _check_arguments(limit, search_type)
    if sources is not None and len(sources) == 0:
        return []
    selected = await client.clients_covering(sources)
    if not selected:
        return []
    # Configured order, whatever order `sources` named them in: it breaks ties.
    selected.sort(key=lambda c: c._order)
    stores = [(c._order, c._open_store()) for c in selected]

    if len(stores) > 1 and search_type != "fts":
        check_selection_identities([(store.name, store.identity) for _, store in stores])
    query_vector = None if search_type == "fts" else await get_embedder(config).embed_query(query)
    reranker = client._get_reranker()

    if reranker is not None:
        pool = limit * config.search.rerank_pool_factor
        lists = await _native(stores, query, query_vector, search_type, pool, filter, with_vectors=False)
        union = [result for result, _, _ in fusion.interleave(lists)]
        scored = await reranker.rerank(query, [result.content for result in union], limit)
        return fusion.order_by_reranker(union, scored, limit)

    # Under the cosine metric a vector candidate's score already gives its cosine,
    # so stored vectors are read back only for the l2 metric or the seeds' hybrid rule.
    from_distance = config.search.vector_index_metric == "cosine"
    if search_type == "hybrid" and config.search.fusion == "rrf":
        # Over one database too, so a database searched alone ranks exactly as
        # it would inside a set: federation loses nothing.
        assert query_vector is not None
        depth = fusion.hybrid_depth(limit)
        vector_lists, fts_lists = await _raw_lists(
            stores, query, query_vector, depth, filter, with_vectors=not from_distance
        )
        return fusion.fuse_rrf(vector_lists, fts_lists, query_vector, limit, from_distance=from_distance)

    if len(stores) == 1:
        _, store = stores[0]
        return await store.search(
            query, query_vector=query_vector, search_type=search_type, limit=limit, filter=filter
        )

    if search_type == "fts":
        lists = await _native(stores, query, None, "fts", limit, filter, with_vectors=False)
        return fusion.fuse_by_score(lists, limit)
    assert query_vector is not None
    if search_type == "vector":
        lists = await _native(stores, query, query_vector, "vector", limit, filter, with_vectors=not from_distance)
        return fusion.fuse_by_cosine(lists, query_vector, limit, from_distance=from_distance)
    lists = await _native(stores, query, query_vector, search_type, limit, filter, with_vectors=True)
    return fusion.fuse_by_cosine(lists, query_vector, limit)


async def _native(
    stores: Sequence[tuple[int, Store]],
    query: str,
    query_vector: Sequence[float] | None,
    search_type: str,
    limit: int,
    filter: str | None,
    *,
    with_vectors: bool,
) -> list[Ranked]:
    """Each database's own search, all at once."""
    lists = await asyncio.gather(
        *(
            store.search(
                query,
                query_vector=query_vector,
                search_type=search_type,  # type: ignore[arg-type]
                limit=limit,
                filter=filter,
                with_vectors=with_vectors,
            )
            for _, store in stores
        )
    )
    return [Ranked(order, results) for (order, _), results in zip(stores, lists, strict=True)]


async def _raw_lists(
    stores: Sequence[tuple[int, Store]],
    query: str,
    query_vector: Sequence[float],
    depth: int,
    filter: str | None,
    *,
    with_vectors: bool,
) -> tuple[list[Ranked], list[Ranked]]:
    """Every database's vector list (with stored vectors) and full-text list, all at once.

    Each database reads its two lists at one table version, so a document being
    replaced never contributes chunks of two versions.
    """
    pairs = await asyncio.gather(
        *(
            store.hybrid_candidates(query, query_vector, limit=depth, filter=filter, with_vectors=with_vectors)
            for _, store in stores
        )
    )
    vector_lists = [Ranked(order, vectors) for (order, _), (vectors, _) in zip(stores, pairs, strict=True)]
    fts_lists = [Ranked(order, texts) for (order, _), (_, texts) in zip(stores, pairs, strict=True)]
    return vector_lists, fts_lists
