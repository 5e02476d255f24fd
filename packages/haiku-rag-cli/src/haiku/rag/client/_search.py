"""Where a search fans out over the federation (docs/client.md#how-results-from-several-databases-are-ranked).

Select, check, embed once, then run the search's plan (``haiku.core.fusion.plan``,
chosen once by search type, fusion rule and reranker) over the selected
databases: each answers with bare candidates, all at once; only the fused
survivors are enriched (document fields, orphans dropped), through the
database each came from. Context expansion is the caller's, on the survivors
(``client.expand_context``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING

from haiku.core.embedders import check_selection_identities, get_embedder
from haiku.core.errors import EmptyQueryError, LimitTooLargeError, QueryTooLongError, SourceUnavailableError
from haiku.core.fusion import GlobalIdf
from haiku.core.fusion.plan import Request, choose
from haiku.core.logs import get_logger
from haiku.core.models import SEARCH_TYPES, SearchResult, SearchType
from haiku.core.store.filters import check_document_filter
from haiku.core.store.fulltext import query_words

if TYPE_CHECKING:
    from haiku.rag.client._federation import Member, Reach


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
    reranker = reach.federation().reranker()

    async def run(members: list[Member]) -> list[SearchResult]:
        if len(members) > 1 and search_type != "fts":
            check_selection_identities([(store.name, store.identity) for _, store in members])
        plan = choose(search_type, config.search.fusion, databases=len(members), reranked=reranker is not None)
        # Full-text scores merged across databases use the federation's IDF (unless a
        # reranker orders them), whose word counts are gathered while the query is embedded.
        global_idf = plan.merges_bm25 and config.search.fts_idf == "global"
        async with GlobalIdf(query_words(query), members, enabled=global_idf) as idf:
            vector = None if embedding is None else await embedding
            request = Request(
                query, vector, limit, filter, from_distance=config.search.vector_index_metric == "cosine",
                boosts=idf.for_store, reranker=reranker, pool=limit * config.search.rerank_pool_factor,
            )  # fmt: skip
            return await plan.run(request, members)

    try:
        found, skipped = await skipping_unavailable(reach, sources, run)
        return SearchResults(found, skipped)
    finally:
        if embedding is not None and not embedding.done():
            embedding.cancel()
            await asyncio.gather(embedding, return_exceptions=True)


async def skipping_unavailable(
    reach: Reach,
    sources: Sequence[str] | None,
    run: Callable[[list[Member]], Awaitable[list[SearchResult]]],
) -> tuple[list[SearchResult], dict[str, str]]:
    """``run`` over the selection's databases, opened, in configured order (the tie order).

    Under ``search.on_unavailable: skip`` (several databases) it is rerun
    without each database that could not be opened or read, and those are
    returned by name with why. The one rule for every federated search (text or image).
    """
    skip = reach.config.search.on_unavailable == "skip" and reach.covered.covers_multiple
    skipped: dict[str, str] = {}
    names = sources
    while True:
        try:
            members = await reach.members(names)
            return (await run(members) if members else []), skipped
        except SourceUnavailableError as error:
            if not skip or error.database is None or error.database in skipped:
                raise
            selected = names or [ref.name for ref in reach.covered.databases if ref.name is not None]
            remaining = [name for name in selected if name != error.database]
            if not remaining:
                raise
            skipped[error.database] = str(error)
            log.info("search.database_skipped", database=error.database, error=str(error))
            names = remaining
