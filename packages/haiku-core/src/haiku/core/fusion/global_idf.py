"""Full-text scores over several databases with the federation's IDF (docs/fusion.md#why-full-text-search-needs-global-statistics).

Each database's BM25 weighs a word by an IDF computed over its own chunks, so
merged scores carry each database's sampling error. With
``search.fts_idf: global`` (the default) the client first asks every selected
database for its chunk count and each query word's chunk frequency (cached by
the store per table version), sums them, and has each database run the query
with every word boosted by ``idf_global / idf_local`` (``global_idf_boosts``).
One database needs none of this: its own statistics are the global ones.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Mapping, Sequence
from typing import Any, Protocol


class TermCounts(Protocol):
    """One database's chunk count and its chunk frequency of each asked word (``Store.fts_statistics``)."""

    @property
    def chunks(self) -> int: ...

    @property
    def frequencies(self) -> Mapping[str, int]: ...


class CountingDatabase(Protocol):
    """A database that counts, per word, the chunks matching it."""

    async def fts_statistics(self, words: Sequence[str]) -> TermCounts: ...


def bm25_idf(document_frequency: int, documents: int) -> float:
    """LanceDB's BM25 IDF: ``ln(1 + (N - df + 0.5) / (df + 0.5))``; always positive for ``df <= N``."""
    df = min(max(document_frequency, 0), max(documents, 0))
    return math.log(1.0 + (documents - df + 0.5) / (df + 0.5))


def global_idf_boosts(statistics: Sequence[TermCounts]) -> list[dict[str, float]]:
    """Per database, the factor turning its BM25 of each query word into BM25 with the federation's IDF.

    BM25 scores a word ``idf * tf_part``; a database computes ``idf`` over its
    own chunks (N_db, df_db). Summed over the databases searched together,
    N and df give the IDF one database holding every chunk would use, so
    boosting the word by ``idf(df, N) / idf(df_db, N_db)`` makes each
    database's scores those of one database, up to each database's own
    average chunk length (docs/fusion.md#why-full-text-search-needs-global-statistics).
    A word a database does not hold gets no factor there: it matches nothing in it.
    """
    total = sum(stats.chunks for stats in statistics)
    frequency: dict[str, int] = {}
    for stats in statistics:
        for word, df in stats.frequencies.items():
            frequency[word] = frequency.get(word, 0) + df
    return [
        {
            word: bm25_idf(frequency[word], total) / bm25_idf(df, stats.chunks)
            for word, df in stats.frequencies.items()
            if df > 0
        }
        for stats in statistics
    ]


class GlobalIdf:
    """Per-database word factors for one search, computed in the background.

    ``for_store(database)`` is an awaitable that may be awaited more than once
    (a hybrid search's checked re-fetch awaits it again), or ``None`` when the
    databases keep their own statistics. Use as an async context manager so
    nothing is left running when the search fails.
    """

    def __init__(self, words: Sequence[str], databases: Sequence[tuple[int, CountingDatabase]], *, enabled: bool) -> None:
        self._databases = list(databases)
        self._enabled = enabled and len(self._databases) > 1
        self._words = list(words)
        self._all: asyncio.Task[None] | None = None
        # By id() of the database: futures, not tasks, so a search over many databases starts one task here.
        self._each: dict[int, asyncio.Future[Mapping[str, float]]] = {}

    async def __aenter__(self) -> GlobalIdf:
        if self._enabled:
            loop = asyncio.get_running_loop()
            self._each = {id(db): loop.create_future() for _, db in self._databases}
            self._all = asyncio.ensure_future(self._compute())
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        tasks: list[asyncio.Future[Any]] = [task for task in (self._all, *self._each.values()) if task is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def for_store(self, database: object) -> asyncio.Future[Mapping[str, float]] | None:
        return self._each.get(id(database))

    async def _compute(self) -> None:
        try:
            statistics = await asyncio.gather(*(db.fts_statistics(self._words) for _, db in self._databases))
            boosts = global_idf_boosts(statistics)
        except BaseException as error:
            for future in self._each.values():
                if not future.done():
                    if isinstance(error, asyncio.CancelledError):
                        future.cancel()
                    else:
                        future.set_exception(error)
            raise
        for (_, db), factors in zip(self._databases, boosts, strict=True):
            future = self._each[id(db)]
            if not future.done():
                future.set_result(factors)
