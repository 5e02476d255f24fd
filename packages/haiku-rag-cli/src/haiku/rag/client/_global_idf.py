"""Full-text search over several databases with the federation's IDF (docs/fusion.md).

Each database's BM25 weighs a word by an IDF computed over its own chunks, so
merged scores carry each database's sampling error. With
``search.fts_idf: global`` (the default) the client first asks every selected
database for its chunk count and each query word's chunk frequency (cached by
the store per table version), sums them, and has each database run the query
with every word boosted by ``idf_global / idf_local``
(``fusion.global_idf_boosts``). One database needs none of this: its own
statistics are the global ones.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from haiku.core.store.fulltext import query_words
from haiku.rag.client import fusion

if TYPE_CHECKING:
    from haiku.core.store import Store


class GlobalIdf:
    """Per-database word factors, computed once per search in the background.

    ``for_store(store)`` is an awaitable that may be awaited more than once
    (a hybrid search's checked re-fetch awaits it again), or ``None`` when the
    databases keep their own statistics. Use as an async context manager so
    nothing is left running when the search fails.
    """

    def __init__(self, query: str, stores: Sequence[tuple[int, Store]], *, enabled: bool) -> None:
        self._stores = list(stores)
        self._enabled = enabled and len(self._stores) > 1
        self._query = query
        self._all: asyncio.Task[dict[int, dict[str, float]]] | None = None
        self._each: dict[int, asyncio.Task[Mapping[str, float]]] = {}  # by id() of the store

    async def __aenter__(self) -> GlobalIdf:
        if self._enabled:
            self._all = asyncio.ensure_future(self._compute())
            self._each = {id(store): asyncio.ensure_future(self._pick(order)) for order, store in self._stores}
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        tasks = [task for task in (self._all, *self._each.values()) if task is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def for_store(self, store: Store) -> asyncio.Task[Mapping[str, float]] | None:
        return self._each.get(id(store))

    async def _compute(self) -> dict[int, dict[str, float]]:
        words = query_words(self._query)
        statistics = await asyncio.gather(*(store.fts_statistics(words) for _, store in self._stores))
        boosts = fusion.global_idf_boosts(statistics)
        return {order: factors for (order, _), factors in zip(self._stores, boosts, strict=True)}

    async def _pick(self, order: int) -> Mapping[str, float]:
        assert self._all is not None
        return (await self._all)[order]
