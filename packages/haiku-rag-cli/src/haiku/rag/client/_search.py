"""Where a search fans out over the federation (docs/client.md#how-results-from-several-databases-are-ranked).

Select, check, embed once, retrieve from every database together, fuse with
``haiku.core.fusion``. Each database answers with bare candidates; only the
fused survivors are enriched (document fields, orphans dropped), through the
database each came from (``haiku.core.fusion.survivors``). Context expansion
is the caller's, on the survivors (``client.expand_context``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING

from haiku.core import fusion
from haiku.core.embedders import check_selection_identities, get_embedder
from haiku.core.errors import EmptyQueryError, LimitTooLargeError, QueryTooLongError, SourceUnavailableError
from haiku.core.fusion import GlobalIdf, Ranked, fuse_and_enrich
from haiku.core.logs import get_logger
from haiku.core.models import SEARCH_TYPES, SearchResult, SearchType
from haiku.core.store.filters import check_document_filter
from haiku.core.store.fulltext import query_words

if TYPE_CHECKING:
    from haiku.core.config import AppConfig
    from haiku.core.store import Store
    from haiku.core.store.search import Boosts
    from haiku.rag.client._federation import Member, Reach
    from haiku.rag.rerankers import Reranker


log = get_logger("haiku.rag.client")


def _check_arguments(limit: int, search_type: str) -> None:
    if search_type not in SEARCH_TYPES:
        raise ValueError(f"search_type must be one of {', '.join(SEARCH_TYPES)}, got {search_type!r}")
    if limit < 1:
        raise ValueError(f"limit must be at least 1, got {limit}")


class SearchResults(list[SearchResult]):
    """A search's results, best first, and ``skipped``: each database left out, by name, with why.

    A database is left out only under ``search.on_unavailable: skip``, when it
    could not be opened or read (``SourceUnavailableError``) and others remain.
    """

    def __init__(self, results: Sequence[SearchResult] = (), skipped: dict[str, str] | None = None) -> None:
        super().__init__(results)
        self.skipped: dict[str, str] = dict(skipped or {})


async def search(
    reach: Reach,
    query: str,
    *,
    limit: int | None,
    search_type: SearchType | None,
    filter: str | None,
    sources: Sequence[str] | None,
) -> SearchResults:
    """The federated search; under ``on_unavailable: skip`` it reruns without a database that failed.

    The arguments are checked once, before any database opens or the model loads
    (a bad filter fails alike everywhere), and the query is embedded once, while
    the databases open: a fresh process loads the encoder in one thread while
    LanceDB opens in its own. A rerun reuses both.
    """
    config = reach.config
    EmptyQueryError.check(query)
    QueryTooLongError.check(query, config.search.max_query_chars)
    limit = config.search.limit if limit is None else limit
    LimitTooLargeError.check(limit, config.search.max_limit)
    search_type = search_type or "hybrid"
    _check_arguments(limit, search_type)
    await check_document_filter(filter)
    if sources is not None and len(sources) == 0:
        return SearchResults()
    embedding = None if search_type == "fts" else asyncio.ensure_future(get_embedder(config).embed_query(query))
    try:
        found, skipped = await skipping_unavailable(
            reach, sources, lambda names: _search_opened(reach, query, embedding, limit, search_type, filter, names)
        )
        return SearchResults(found, skipped)
    finally:
        if embedding is not None and not embedding.done():
            embedding.cancel()
            await asyncio.gather(embedding, return_exceptions=True)


async def skipping_unavailable(
    reach: Reach,
    sources: Sequence[str] | None,
    run: Callable[[Sequence[str] | None], Awaitable[list[SearchResult]]],
) -> tuple[list[SearchResult], dict[str, str]]:
    """``run`` over the selection; under ``search.on_unavailable: skip`` (several databases) it is
    rerun without each database that could not be opened or read, and those are returned by name
    with why. The one rule for every federated search (text or image)."""
    skip = reach.config.search.on_unavailable == "skip" and reach.covered.covers_multiple
    skipped: dict[str, str] = {}
    while True:
        try:
            return await run(sources), skipped
        except SourceUnavailableError as error:
            if not skip or error.database is None or error.database in skipped:
                raise
            names = sources or [ref.name for ref in reach.covered.databases if ref.name is not None]
            remaining = [name for name in names if name != error.database]
            if not remaining:
                raise
            skipped[error.database] = str(error)
            log.info("search.database_skipped", database=error.database, error=str(error))
            sources = remaining


async def _search_opened(
    reach: Reach,
    query: str,
    embedding: asyncio.Future[list[float]] | None,
    limit: int,
    search_type: str,
    filter: str | None,
    sources: Sequence[str] | None,
) -> list[SearchResult]:
    config = reach.config
    # Configured order, whatever order `sources` named them in: it breaks ties.
    stores = await reach.members(sources)
    if not stores:
        return []

    if len(stores) > 1 and search_type != "fts":
        check_selection_identities([(store.name, store.identity) for _, store in stores])
    # Full-text scores are merged across databases by fts, and by hybrid under
    # rrf; without a reranker they then use the federation's IDF, whose word
    # counts are gathered while the query is embedded.
    reranker = reach.federation().reranker()
    merges_bm25 = search_type == "fts" or (search_type == "hybrid" and config.search.fusion == "rrf")
    global_idf = merges_bm25 and config.search.fts_idf == "global" and reranker is None
    async with GlobalIdf(query_words(query), stores, enabled=global_idf) as idf:
        query_vector = None if embedding is None else await embedding
        return await _fuse(config, reranker, query, stores, search_type, query_vector, limit, filter, idf)


async def _fuse(
    config: AppConfig,
    reranker: Reranker | None,
    query: str,
    stores: list[Member],
    search_type: str,
    query_vector: Sequence[float] | None,
    limit: int,
    filter: str | None,
    idf: GlobalIdf,
) -> list[SearchResult]:

    if reranker is not None:
        pool = limit * config.search.rerank_pool_factor

        async def rerank(lists: dict[int, list[SearchResult]]) -> list[SearchResult]:
            union = [result for result, _, _ in fusion.interleave(_ranked(lists))]
            scored = await reranker.rerank(query, [result.content for result in union], limit)
            return fusion.order_by_reranker(union, scored, limit)

        return await fuse_and_enrich(
            stores, _native(query, query_vector, search_type, pool, filter, with_vectors=False), rerank
        )

    # Under the cosine metric a vector candidate's score already gives its cosine,
    # so stored vectors are read back only for the l2 metric or the cosine hybrid rule
    # (search.fusion: cosine; docs/fusion.md#the-rules).
    from_distance = config.search.vector_index_metric == "cosine"
    if search_type == "hybrid" and config.search.fusion == "rrf":
        # Over one database too, so a database searched alone ranks exactly as
        # it would inside a set: federation loses nothing.
        assert query_vector is not None
        vector = query_vector
        depth = fusion.hybrid_depth(limit)

        async def fetch_pair(store: Store, checked: bool) -> tuple[list[SearchResult], list[SearchResult]]:
            # Each database reads its two lists at one table version, so a document
            # being replaced never contributes chunks of two versions.
            return await store.hybrid_candidates(
                query,
                vector,
                limit=depth,
                filter=filter,
                with_vectors=not from_distance,
                enrich=checked,
                fts_boosts=idf.for_store(store),
            )

        async def fuse_pairs(
            pairs: dict[int, tuple[list[SearchResult], list[SearchResult]]],
        ) -> list[SearchResult]:
            vector_lists = _ranked({order: pair[0] for order, pair in pairs.items()})
            fts_lists = _ranked({order: pair[1] for order, pair in pairs.items()})
            return fusion.fuse_rrf(vector_lists, fts_lists, vector, limit, from_distance=from_distance)

        return await fuse_and_enrich(stores, fetch_pair, fuse_pairs)

    if len(stores) == 1:
        _, store = stores[0]
        return await store.search(
            query, query_vector=query_vector, search_type=search_type, limit=limit, filter=filter
        )

    if search_type == "fts":
        fetch = _native(query, None, "fts", limit, filter, with_vectors=False, boosts=idf.for_store)
        return await fuse_and_enrich(
            stores, fetch, _sync(lambda lists: fusion.fuse_by_score(_ranked(lists), limit))
        )
    assert query_vector is not None
    vector = query_vector
    if search_type == "vector":
        fetch = _native(query, vector, "vector", limit, filter, with_vectors=not from_distance)
        return await fuse_vector_lists(stores, fetch, vector, limit, from_distance=from_distance)
    fetch = _native(query, vector, search_type, limit, filter, with_vectors=True)
    return await fuse_and_enrich(
        stores, fetch, _sync(lambda lists: fusion.fuse_by_cosine(_ranked(lists), vector, limit))
    )


async def fuse_vector_lists(
    stores: list[Member],
    fetch: Callable[[Store, bool], Awaitable[list[SearchResult]]],
    vector: Sequence[float],
    limit: int,
    *,
    from_distance: bool,
) -> list[SearchResult]:
    """Each database's vector candidates, fused by cosine to ``vector`` (docs/fusion.md): the rule of a
    vector query, and of an image query over picture vectors."""
    return await fuse_and_enrich(
        stores,
        fetch,
        _sync(lambda lists: fusion.fuse_by_cosine(_ranked(lists), vector, limit, from_distance=from_distance)),
    )


def _ranked(lists: dict[int, list[SearchResult]]) -> list[Ranked]:
    """One database's candidates per entry, in configured order (the tie order)."""
    return [Ranked(order, lists[order]) for order in sorted(lists)]


def _sync(
    fuse: Callable[[dict[int, list[SearchResult]]], list[SearchResult]],
) -> Callable[[dict[int, list[SearchResult]]], Awaitable[list[SearchResult]]]:
    async def run(lists: dict[int, list[SearchResult]]) -> list[SearchResult]:
        return fuse(lists)

    return run


def _native(
    query: str,
    query_vector: Sequence[float] | None,
    search_type: str,
    limit: int,
    filter: str | None,
    *,
    with_vectors: bool,
    boosts: Callable[[Store], Boosts | None] | None = None,
) -> Callable[[Store, bool], Awaitable[list[SearchResult]]]:
    """Fetching one database's own search: bare, or checked when it had an orphan among the survivors.

    ``boosts``: full-text only, the per-word factors of each database (``GlobalIdf``).
    """

    async def fetch(store: Store, checked: bool) -> list[SearchResult]:
        factors = boosts(store) if boosts is not None else None
        if factors is not None:
            return await store.fts_candidates(query, limit=limit, filter=filter, enrich=checked, boosts=factors)
        return await store.search(
            query,
            query_vector=query_vector,
            search_type=search_type,  # type: ignore[arg-type]
            limit=limit,
            filter=filter,
            with_vectors=with_vectors,
            enrich=checked,
        )

    return fetch
